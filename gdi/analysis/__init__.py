"""gdi.analysis: analyses of finished runs beyond their scores.

- ``richness``: ``gdi analyze richness``, the data richness of two runs' visited states by
  t-SNE and by two embedding-free measures (paper App. "Ablation Study", subsection "t-SNE");
  ``richness_report`` writes its figure and files. Imported on first use: they load
  scikit-learn and matplotlib.
"""
