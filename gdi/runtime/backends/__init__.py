"""Backends: the seam where actors run. ``base`` (the ``Backend`` interface, actor turns, the
registry's loader); ``inline`` (one process, exactly reproducible), ``local`` (processes),
``ray_backend`` (a Ray cluster). The registry of names is ``gdi.backend_registry``."""
