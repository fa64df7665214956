"""`gdi benchmark`: a grid of runs (environments × seeds × settings) as a resumable queue, and
one report of the grid with its peers beside it (docs/benchmark-grids.md).

The same from Python (docs/benchmark-grids.md, "From Python"):

    import gdi.benchmark as bench

    grid = bench.load_grid("benchmarks/grids/atari10.toml")
    bench.run_grid(grid.select(envs=["ale:Boxing"]), peers=["APPO"])   # gdi benchmark run
    bench.grid_status(grid)            # DataFrames: where each run stands,
    bench.grid_curves(grid)            # every training episode,
    bench.grid_scores(grid)            # each run at the target (the report's runs.csv),
    bench.grid_aggregates(grid)        # IQM, median and P(improvement) with 95 % CIs
    bench.grid_remaining(grid)         # per system: runs and frames left, frames/s, hours
    bench.write_grid_report(grid)      # gdi benchmark report: report.md, benchmark.png

Each name is imported on first use, so importing the package loads neither torch nor pandas.
"""

from importlib import import_module as _import_module

__all__ = ["grid_aggregates", "grid_curves", "grid_remaining", "grid_scores",
           "grid_status", "load_grid", "run_grid", "write_grid_report"]

#: Public names and the module each comes from.
_FROM_MODULE = {
    "load_grid": "gdi.benchmark.grid",
    "run_grid": "gdi.benchmark.queue",
    "write_grid_report": "gdi.benchmark.report",
    "grid_status": "gdi.benchmark.results",
    "grid_curves": "gdi.benchmark.results",
    "grid_scores": "gdi.benchmark.results",
    "grid_aggregates": "gdi.benchmark.results",
    "grid_remaining": "gdi.benchmark.remaining",
}


def __getattr__(name: str):
    if name in _FROM_MODULE:
        return getattr(_import_module(_FROM_MODULE[name]), name)
    raise AttributeError(f"module 'gdi.benchmark' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
