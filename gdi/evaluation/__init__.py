"""gdi.evaluation"""
