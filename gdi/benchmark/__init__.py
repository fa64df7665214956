"""`gdi benchmark`: a grid of runs (environments × seeds × settings) as a resumable queue, and
one report of the grid with its peers beside it (docs/benchmark-grids.md)."""
