"""Acting: the acting step π_λ (``step``), the actors that gather training data (``actor``)
and the evaluation episodes (``evaluator``)."""
