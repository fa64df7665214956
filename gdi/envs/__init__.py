"""gdi.envs"""
