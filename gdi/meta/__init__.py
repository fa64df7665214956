"""gdi.meta"""
