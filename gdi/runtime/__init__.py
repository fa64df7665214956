"""gdi.runtime: the paper's Algorithm 1 as a running system, one folder per role.

- ``acting/``: the actors. ``step`` (the acting step π_λ, shared with ``gdi.agent``),
  ``actor`` (environments, E, recording windows of steps), ``evaluator`` (evaluation episodes).
- ``storage/``: the data between actors and learner. ``sequences`` (the one schema of a
  recorded step, and the learner's batches), ``steps`` (the actor's recorder and the chunks
  it hands over), ``collector`` (the data collector: sequences to train on), ``reservoir``
  (visited states kept for analysis).
- ``learning/``: operator T and what the learner side calls. ``learner`` (one update of θ),
  ``parameter_server`` (θ to the actors), ``trainer`` (the learner side of a run) and its
  parts ``log`` (metrics rows) and ``evaluation`` (evaluations while training).
- ``backends/``: the seam where actors are placed: ``base`` (the Backend interface and the
  registry's loader), ``inline``, ``local``, ``ray_backend``.
- ``run_folder/``: what a run writes: ``run_dir`` (the folder, config, metrics rows, locks),
  ``checkpoint`` (atomic checkpoints, when they are due), ``meta_log`` (E's records).

At the top: ``wiring`` (``train``: the one function that connects the roles), ``driver`` (the
learner-side loop every backend feeds), ``components`` (each part built from the config),
``seeds``, ``stop`` (signals and callbacks' requests into a checkpoint), ``callbacks`` (the
user's code at each episode end, metrics row, evaluation and checkpoint), ``progress`` and
``errors``. The data flow from an environment step to a learner update and back to E:
docs/architecture.md.
"""
