"""gdi.runtime: the paper's Algorithm 1 as a running system, one folder per role.

- ``acting/``: the actors. ``step`` (the acting step π_λ, shared with ``gdi.agent``),
  ``actor`` (environments, E, recording windows of steps), ``evaluator`` (evaluation episodes).
- ``storage/``: the data between actors and learner. ``sequences`` (the one schema of a
  recorded step, and the learner's batches), ``steps`` (the actor's recorder and the chunks
  it hands over), ``collector`` (the data collector: sequences to train on), ``reservoir``
  (visited states kept for analysis).
- ``training/``: operator T and the learner side of a run. ``learner`` (one update of θ),
  ``parameter_server`` (θ to the actors), ``trainer`` (the learner side the driver loop calls)
  and its parts, one job each: ``episodes`` (ended episodes to meta.jsonl and the callbacks),
  ``roster`` (each actor's E as last reported, turns, restarts), ``updates`` (learner steps,
  θ pushed, skipped updates watched), ``log`` (metrics rows), ``periodic_evaluation``
  (evaluations while training), ``checkpointing`` (what a checkpoint holds, written and restored).
- ``backends/``: the seam where actors are placed: ``base`` (the Backend interface and the
  registry's loader), ``inline``, ``local``, ``ray_backend``.
- ``run_folder/``: what a run writes: ``run_dir`` (the folder, config, metrics rows, locks),
  ``checkpoint`` (atomic checkpoints, when they are due), ``meta_log`` (E's records).

At the top: ``wiring`` (``build_run``: the parts in the order experience flows, environments
→ actors with E → collector → learner → parameter server → actors; ``build_trainer``: the
learner side around them; ``train``), ``lifecycle`` (the checks before a run, resuming, the
start-up lines, the run's end and closing), ``driver`` (the learner-side loop every backend
feeds), ``components`` (each part built from the config), ``seeds``, ``stop`` (signals and
callbacks' requests into a checkpoint), ``callbacks`` (the user's code at each episode end,
metrics row, evaluation and checkpoint), ``progress`` and ``errors``. The data flow from an
environment step to a learner update and back to E: docs/architecture.md.
"""
