"""gdi.learning"""
