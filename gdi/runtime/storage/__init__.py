"""Storage: the recorded steps between actors and learner. The one step schema and the
learner's batches (``sequences``), the actor's recorder (``steps``), the data collector
(``collector``) and the visited-state reservoir (``reservoir``)."""
