"""gdi: Generalized Data Distribution Iteration (Fan & Xiao, ICML 2022).

GDI is generalized policy iteration plus an operator E that improves the distribution P_Λ from
which behavior policies π_λ are drawn. Layout follows the paper's Algorithm 1: the policy space
in ``gdi.policy_space``, operator T in ``gdi.learning``, operator E in ``gdi.meta``, the
networks in ``gdi.nets``, environments in ``gdi.envs``, and the actor–learner loop in
``gdi.runtime``.
"""

__version__ = "0.2.0"


def __getattr__(name: str):
    # ``gdi.load_agent`` without importing torch on ``import gdi`` (the CLI's --version and
    # --help stay fast).
    if name in ("load_agent", "Agent"):
        from gdi import agent

        return getattr(agent, name)
    if name == "envs":
        import importlib

        return importlib.import_module("gdi.envs")
    raise AttributeError(f"module 'gdi' has no attribute {name!r}")
