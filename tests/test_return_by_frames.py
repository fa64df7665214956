"""benchmarks.return_by_frames: the training episodes' mean return per block of frames, for a
gdi run and a peer's run side by side."""

import json
from itertools import pairwise

import pytest

from benchmarks.return_by_frames import main

# (frames, return); the means of each block are exact in binary, so the printed cells are
# compared as text with the naive means formatted the same way
GDI_EPISODES = [(40_000, 1.0), (90_000, 3.0), (100_000, 5.0), (180_000, 7.0), (260_000, 2.0),
                (300_000, 9.0)]  # the last ends past the blocks: in none
PEER_EPISODES = [(10_000, -1.0), (150_000, 4.0), (199_999, 6.0)]


def write_runs(tmp_path):
    gdi = tmp_path / "gdi"
    gdi.mkdir()
    (gdi / "meta.jsonl").write_text("".join(
        json.dumps({"frames": f, "actor": 0, "lambda": [1.0, 1.0, 0.5], "return": r,
                    "length": 10}) + "\n" for f, r in reversed(GDI_EPISODES)))
    peer = tmp_path / "peer"
    peer.mkdir()
    (peer / "curve_episodes.csv").write_text("wall_s,frames,return,length_frames\n" + "".join(
        f"1.0,{f},{r},40\n" for f, r in PEER_EPISODES))
    return gdi, peer


def naive(episodes, low, high):
    """The mean return of the episodes that ended in [low, high), and how many."""
    inside = [r for f, r in episodes if low <= f < high]
    return (sum(inside) / len(inside) if inside else None), len(inside)


def test_each_block_is_the_mean_of_the_episodes_that_ended_in_it(tmp_path, capsys):
    gdi, peer = write_runs(tmp_path)
    edges = [0, 100_000, 200_000, 300_000]
    main(["--edges", *map(str, edges), "--run", f"gdi={gdi}", "--run", f"peer={peer}"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert rows[0] == "| run | 0-0.1M | 0.1-0.2M | 0.2-0.3M |"
    for row, episodes in zip(rows[2:], (GDI_EPISODES, PEER_EPISODES), strict=True):
        cells = [c.strip() for c in row.strip("|").split("|")][1:]
        for cell, (low, high) in zip(cells, pairwise(edges), strict=True):
            mean, count = naive(episodes, low, high)
            assert cell == ("—" if count == 0 else f"{mean:,.2f} ({count})")


def test_edges_must_increase(tmp_path, capsys):
    gdi, _ = write_runs(tmp_path)
    with pytest.raises(SystemExit):
        main(["--edges", "0", "5e5", "5e5", "--run", f"gdi={gdi}"])
    assert "--edges 0 500000 500000: allowed: two or more frame counts" in capsys.readouterr().err


def test_a_learner_statistic_per_block_is_the_mean_of_the_rows_logged_in_it(tmp_path, capsys):
    gdi, peer = write_runs(tmp_path)
    # (frames, entropy); clip is logged on two rows only: a block with none shows "—"
    rows = [(50_000, 2.5, 0.00025), (150_000, 2.0, None), (180_000, 1.5, 0.5), (250_000, 1.0, None)]
    (gdi / "metrics.jsonl").write_text("".join(json.dumps(
        {"frames": f, "losses/entropy": e} | ({} if c is None else {"stats/clip": c})) + "\n"
        for f, e, c in rows))
    main(["--edges", "0", "1e5", "2e5", "3e5", "--run", f"gdi={gdi}",
          "--metric", "losses/entropy", "--metric", "stats/clip"])
    lines = capsys.readouterr().out.splitlines()
    # by hand: entropy 2.5 | (2.0 + 1.5) / 2 | 1.0; clip 0.00025 | 0.5 | none (four significant
    # digits, whatever the magnitude)
    assert lines[3] == "| gdi: losses/entropy | 2.5 (1) | 1.75 (2) | 1 (1) |"
    assert lines[4] == "| gdi: stats/clip | 0.00025 (1) | 0.5 (1) | — |"
    with pytest.raises(SystemExit):
        main(["--edges", "0", "1e5", "--run", f"peer={peer}", "--metric", "losses/entropy"])
    err = capsys.readouterr().err
    assert "--metric losses/entropy: no run logged it" in err
    assert "peer: none (no metrics.jsonl or learner.csv)" in err
    with pytest.raises(SystemExit):
        main(["--edges", "0", "1e5", "--run", f"gdi={gdi}", "--metric", "losses/nope"])
    assert "--metric losses/nope: no run logged it; allowed, per run: gdi: losses/entropy, " \
        "stats/clip" in capsys.readouterr().err


def test_a_peers_statistics_come_from_its_learner_csv_beside_a_gdi_runs(tmp_path, capsys):
    gdi, peer = write_runs(tmp_path)
    (gdi / "metrics.jsonl").write_text(json.dumps({"frames": 50_000, "losses/entropy": 2.5}) + "\n")
    # Sample Factory's names; a cell left empty where it did not log that statistic
    (peer / "learner.csv").write_text("frames,train/entropy,train/fraction_clipped\n"
                                      "4096,2.75,0.25\n120000,2.25,\n160000,1.75,0.5\n")
    main(["--edges", "0", "1e5", "2e5", "--run", f"gdi={gdi}", "--run", f"peer={peer}",
          "--metric", "losses/entropy", "train/entropy", "train/fraction_clipped"])
    lines = capsys.readouterr().out.splitlines()
    # each key on the runs that logged it: the gdi run's entropy, then the peer's two, by hand
    assert lines[3] == "| gdi: losses/entropy | 2.5 (1) | — |"
    assert lines[5] == "| peer: train/entropy | 2.75 (1) | 2 (2) |"
    assert lines[6] == "| peer: train/fraction_clipped | 0.25 (1) | 0.5 (1) |"
    assert len(lines) == 7
