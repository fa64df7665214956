"""gdi: Generalized Data Distribution Iteration (Fan & Xiao, ICML 2022).

GDI is generalized policy iteration plus an operator E that improves the distribution P_Λ from
which behavior policies π_λ are drawn. Layout follows the paper's Algorithm 1: the policy space
in ``gdi.policy_space``, operator T in ``gdi.learning``, operator E in ``gdi.meta``, the
networks in ``gdi.nets``, environments in ``gdi.envs``, and the actor–learner loop in
``gdi.runtime``.

The public surface is what this package names (``__all__``):

    agent = gdi.train("gdi-i3", env="gym:CartPole-v1", frames=20_000, callbacks=[...])
    agent.evaluate(episodes=10); agent.predict(obs); agent.save("bundle")
    agent = gdi.load_agent("runs/<run>")
    agent = gdi.resume("runs/<run>")               # a stopped run, on to its budget
    run = gdi.read_run("runs/<run>")               # its records as pandas DataFrames

``train``, ``resume``, ``load_agent`` and ``Agent`` (``gdi.api``), ``read_run``
(``gdi.run_records``), ``Callback`` (``gdi.runtime.callbacks``), ``Config`` (``gdi.config``),
and the ``presets`` and ``envs`` packages. Each is imported when first used, so ``import gdi`` stays light (no torch): the
command line's ``--version`` and ``--help`` answer at once.
"""

from importlib import import_module as _import_module

__version__ = "0.2.0"

__all__ = ["Agent", "Callback", "Config", "__version__", "envs", "load_agent", "presets",
           "read_run", "resume", "train"]

#: Public names and the module each comes from, imported on first use.
_FROM_MODULE = {
    "train": "gdi.api",
    "resume": "gdi.api",
    "load_agent": "gdi.api",
    "Agent": "gdi.api",
    "read_run": "gdi.run_records",
    "Callback": "gdi.runtime.callbacks",
    "Config": "gdi.config",
}
#: Public subpackages, imported on first use.
_PACKAGES = ("envs", "presets")


def __getattr__(name: str):
    if name in _FROM_MODULE:
        return getattr(_import_module(_FROM_MODULE[name]), name)
    if name in _PACKAGES:
        return _import_module(f"gdi.{name}")
    raise AttributeError(f"module 'gdi' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
