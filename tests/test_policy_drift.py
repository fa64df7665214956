"""benchmarks.policy_drift: how far the learner's steps move π_λ from actors held still."""

import torch

from benchmarks.policy_drift import drift
from benchmarks.policy_drift import main as policy_drift
from gdi.cli import main
from tests.runtime.helpers import TINY
from tests.tolerance import assert_close


def cartpole_run(tmp_path):
    run = tmp_path / "run"
    main(["train", "--env", "gym:CartPole-v1", "--frames", "800", "--stop-at", "400", "--seed", "1",
          "--backend", "inline", "--run-dir", str(run), "--no-report",
          "--learning", "policy-head", "--set", *TINY, "eval_every=0"])
    return run


def test_at_lag_0_the_learner_reads_the_actors_policy_and_later_it_has_moved(tmp_path, capsys):
    run = cartpole_run(tmp_path)
    capsys.readouterr()
    # A learning rate large enough that one Adam step moves π past PPO's clip somewhere.
    rows = drift(run, lags=2, repeats=2, overrides=["learning_rate=0.05"])
    # Lag 0: the learner's π_λ (stored recurrent state, burn-in, the same network) is the
    # actors' μ on every step: ρ = 1 exactly, none past ρ̄, none clipped.
    # (ρ = exp(log π − log μ) in float32, averaged over the batch's 4 × 4 steps.)
    assert_close(rows[0]["stats/rho_mean"], 1.0, dtype=torch.float32, terms=16)
    assert rows[0]["stats/rho_clipped_frac"] == 0 and rows[0]["stats/pg_clipped_frac"] == 0
    # After updates of the learner's copy (the actors' network is never touched), π has
    # moved: some steps past ρ̄ and past the clip.
    assert rows[2]["stats/rho_clipped_frac"] > 0 and rows[2]["stats/pg_clipped_frac"] > 0
    assert policy_drift(["--run", str(run), "--lags", "1", "--repeats", "1"]) == 0
    printed = capsys.readouterr().out
    assert "| 0 | 1.000 | 0.000 | 0.000 |" in printed and "| 1 |" in printed


def test_bad_arguments_and_folders_are_one_line(tmp_path, capsys):
    assert policy_drift(["--run", str(tmp_path), "--lags", "-1"]) == 1
    assert "--lags must be >= 0" in capsys.readouterr().err
    assert policy_drift(["--run", str(tmp_path / "none")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error:") and len(err.strip().splitlines()) == 1
