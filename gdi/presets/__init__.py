"""gdi.presets"""
