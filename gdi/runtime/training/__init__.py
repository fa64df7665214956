"""Training: operator T's update (``learner``), the parameter server (``parameter_server``),
and the learner side of a run (``trainer``) with its parts ``log`` (metrics rows) and
``periodic_evaluation`` (evaluations while training). The math itself is ``gdi.learning``'s."""
