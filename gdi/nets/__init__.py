"""gdi.nets"""
