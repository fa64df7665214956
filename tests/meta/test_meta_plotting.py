"""What the user sees of E: plot_meta_history and `gdi meta-demo`."""

import numpy as np
import pytest

from gdi.cli import main
from gdi.meta import demo_summary, plot_meta_history, run_demo
from tests.tolerance import assert_close

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_plot_meta_history_writes_a_png(tmp_path):
    rng = np.random.default_rng(0)
    n = 400
    lam = np.column_stack([rng.uniform(0, 50, n), rng.uniform(0, 50, n), rng.uniform(0, 1, n)])
    path = plot_meta_history(
        np.arange(n) * 1000.0,
        lam,
        rng.normal(size=n),
        ("inv_tau1", "inv_tau2", "eps"),
        ((0, 50), (0, 50), (0, 1)),
        tmp_path / "sub" / "meta.png",
        optimum=(10.0, 20.0, 0.5),
        max_points=100,
    )
    assert path == tmp_path / "sub" / "meta.png"
    assert path.read_bytes()[:8] == PNG_MAGIC and path.stat().st_size > 10_000


def test_plot_meta_history_handles_a_fixed_index_and_few_points(tmp_path):
    # FixedIndex: every λ equal, range degenerate; 3 episodes: no rolling band.
    path = plot_meta_history(
        [0, 1, 2],
        np.ones((3, 1)),
        [1.0, 1.0, 1.0],
        ("inv_tau",),
        ((1.0, 1.0),),
        tmp_path / "fixed.png",
    )
    assert path.read_bytes()[:8] == PNG_MAGIC


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(lambdas=np.zeros((0, 1)), frames=[], returns=[]), "no episodes"),
        (dict(lambdas=np.zeros(5)), r"shape \[N, k\]"),
        (dict(frames=np.zeros(4)), "frames and returns"),
        (dict(index_names=("a", "b")), "index_names"),
        (dict(ranges=((0, 1), (0, 1))), "ranges"),
        (dict(returns=[0, 0, 0, 0, np.nan]), "finite"),
        (dict(optimum=(1.0, 2.0)), "optimum"),
    ],
)
def test_plot_meta_history_bad_arguments(tmp_path, kwargs, match):
    args = dict(
        frames=np.arange(5),
        lambdas=np.zeros((5, 1)),
        returns=np.zeros(5),
        index_names=("x",),
        ranges=((0, 1),),
        path=tmp_path / "x.png",
    )
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        plot_meta_history(**args)


def test_run_demo_summary():
    result = run_demo("uniform", dims=1, episodes=50, seed=0, tail=20)
    assert result.lambdas.shape == (50, 1) and result.tail == 20
    assert_close(result.uniform_near_probability, 0.2)  # ±5 around 13.3 of [0, 50]
    assert "uniform sampling" in demo_summary(result)
    with pytest.raises(ValueError, match="dims must be 1 or 3"):
        run_demo("bandit", dims=2)
    with pytest.raises(ValueError, match="allowed: bandit"):
        run_demo("bandits", dims=1)


def test_meta_demo_command_writes_a_png(tmp_path, capsys):
    out = tmp_path / "demo.png"
    main(["meta-demo", "--dims", "1", "--episodes", "80", "--seed", "1", "--out", str(out)])
    printed = capsys.readouterr().out
    assert "of the last 80 samples" in printed and "uniform sampling" in printed
    assert out.read_bytes()[:8] == PNG_MAGIC and out.stat().st_size > 10_000


def test_meta_demo_command_rejects_bad_input(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["meta-demo", "--episodes", "0", "--out", str(tmp_path / "x.png")])
    assert exit_info.value.code == 2
    assert "episodes must be an integer >= 1" in capsys.readouterr().err
