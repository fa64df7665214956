"""The run folder: its layout and files (``run_dir``: config, metrics rows, episodes, locks),
atomic checkpoints and when they are due (``checkpoint``), E's records (``meta_log``). The
file names are ``gdi.run_files``', which reports read without the runtime."""
