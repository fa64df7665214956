"""gdi.runtime"""
