"""Commands that say what gdi can run before anything is trained: ``gdi config`` (a resolved
config, field by field), ``gdi scales``, ``gdi presets`` (the paper's table of algorithms and
the readings of T), and ``gdi meta-demo`` (operator E against a synthetic return surface)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from gdi.cli.options import defaults_of
from gdi.cli.tables import fitted_table
from gdi.meta.registry import CONTROLLERS
from gdi.meta.synthetic import run_demo
from gdi.run_spec import RunSpec

_DEMO = defaults_of(run_demo)


def config(preset: str = RunSpec.preset, env: str = RunSpec.env, scale: str | None = None,
           learning: str | None = None, search: str | None = None, set: tuple[str, ...] = (),
           json: bool = False) -> None:
    """Print the fully resolved config of a preset on an environment, every field with its
    value and meaning (what `gdi train --set field=value` can change), and what a named scale
    changes from its kind's default.

    Args:
        preset: Preset name.
        env: Environment spec.
        scale: Scale knobs (`gdi scales`); default: the environment kind's.
        learning: How T steps the network (paper, policy-head; `gdi presets`), as
            `gdi train --learning`; default: the scale's.
        search: How E searches each inverse temperature (table, log1p-50, log1p-1000), in
            place of the scale's, as `gdi train --search`.
        set: Overrides field=value, applied as `gdi train` would.
        json: Print the config as JSON instead, as a run's config.json holds it.
    """
    from rich.console import Console

    from gdi.config import apply_overrides, field_docs
    from gdi.presets import (
        LEARNING_NOTES,
        SCALE_KINDS,
        SCALE_NOTES,
        resolve_config,
        scale_differences,
    )

    resolved = apply_overrides(resolve_config(preset, env, scale, search, learning), set)
    if json:
        import json as json_module

        print(json_module.dumps(resolved.to_dict(), indent=2, ensure_ascii=False))
        return
    docs = field_docs()
    rows = [{"field": name, "value": repr(value), "meaning": docs.get(name, "")}
            for name, value in resolved.to_dict().items()]
    console = Console()
    console.print(fitted_table(
        console, rows, title=f"{preset} on {env}, scale {resolved.scale}: "
                             f"{SCALE_NOTES[resolved.scale]}; learning {resolved.learning}: "
                             f"{LEARNING_NOTES[resolved.learning]}"))
    changed = scale_differences(resolved.scale)
    if changed:
        console.print(f"Scale {resolved.scale} changes from {SCALE_KINDS[resolved.scale]}: "
                      + "; ".join(f"{k} {a!r} → {b!r}" for k, (a, b) in changed.items()))


def scales() -> None:
    """List the scales (`gdi train --scale NAME`): the knobs a preset takes from where it runs
    (torso, LSTM, batch, sequences, actors), never the algorithm; what each changes from its
    environment kind's default."""
    from rich.console import Console

    from gdi.presets import SCALE_KINDS, SCALE_NOTES, scale_differences

    rows = [{"scale": name, "for": f"{kind}:", "what it is": SCALE_NOTES[name],
             "changes from the kind's default": ", ".join(
                 f"{k}={b!r}" for k, (_, b) in scale_differences(name).items()) or "—"}
            for name, kind in SCALE_KINDS.items()]
    console = Console()
    console.print(fitted_table(console, rows, title="gdi scales"))


def presets() -> None:
    """List the presets as the paper's Tab. "Summary of Algorithms of Ablation Study" does:
    category, π_λ, Λ, P_Λ⁽⁰⁾, E and T; then the readings of T a preset can run with
    (`gdi train --learning NAME`) and the scales that take each by default."""
    from rich.console import Console

    from gdi.presets import index_set_note, learning_table, preset_table

    console = Console()
    console.print(fitted_table(
        console, preset_table(),
        title="gdi presets (paper Tab. \"Summary of Algorithms of Ablation Study\")",
        caption=index_set_note()))
    console.print(fitted_table(console, learning_table(),
                               title="readings of T (gdi train --learning NAME)"))


def meta_demo(
    controller: Literal[tuple(CONTROLLERS)] = _DEMO.controller,
    dims: Literal[1, 3] = _DEMO.dims,
    episodes: int = _DEMO.episodes,
    noise: float = _DEMO.noise,
    seed: int = _DEMO.seed,
    out: Path = Path("meta-demo.png"),
) -> None:
    """Watch operator E at work without an environment: a controller samples λ against a
    synthetic return surface (smooth, one optimum λ*, a lower decoy bump, Gaussian noise);
    writes a PNG of the sampled λ over episodes and prints how many of the last 500 samples
    are near λ* next to uniform sampling's share.

    Args:
        controller: Operator E, by its name in gdi.meta.CONTROLLERS (bandit: the paper's).
        dims: 1 (λ = 1/τ, GDI-I¹) or 3 (λ = (1/τ₁, 1/τ₂, ε), GDI-I³/H³).
        episodes: Episodes (sample → return → update rounds).
        noise: Standard deviation of the return noise (the peak return is 1).
        seed: Seed of the controller and of the noise.
        out: Where to write the PNG.
    """
    from gdi.meta.synthetic import demo_summary, save_demo_plot

    result = run_demo(controller, dims=dims, episodes=episodes, noise=noise, seed=seed)
    print(demo_summary(result))
    print(f"wrote {save_demo_plot(result, out)}")
