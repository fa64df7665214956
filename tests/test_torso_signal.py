"""benchmarks/torso_signal.py: the signal it reports, by hand and on Breakout frames."""

import torch

from benchmarks import torso_signal
from tests.tolerance import assert_close


def test_the_signal_of_a_hand_made_embedding():
    class Fixed(torch.nn.Module):
        def forward(self, frames):  # two frames, three units; the last unit is dead
            return torch.tensor([[1.0, 2.0, 0.0], [3.0, 2.0, 0.0]])

    magnitude, frame_part, dead = torso_signal.signal(Fixed(), torch.zeros(2, 1))
    # Means of six float32 values: a few float32 ulps, with six terms.
    assert_close(magnitude, (1 + 2 + 3 + 2) / 6, dtype=torch.float32, terms=6)
    # |x − x̄| with x̄ = (2, 2, 0): (1, 0, 0) and (1, 0, 0).
    assert_close(frame_part, (1 + 0 + 0 + 1 + 0 + 0) / 6, dtype=torch.float32, terms=6)
    assert_close(dead, 1 / 3, dtype=torch.float32, terms=3)


def test_on_breakout_he_gives_the_nature_torso_a_larger_embedding_than_the_default(capsys):
    assert torso_signal.main(["--frames", "4", "--nets", "1"]) == 0
    rows = {tuple(line.split()[:2]): [float(v) for v in line.split()[2:]]
            for line in capsys.readouterr().out.splitlines()[2:]}
    assert set(rows) == {("nature", "pytorch"), ("nature", "he"), ("impala_deep", "pytorch"),
                         ("impala_deep", "he"), ("impala_deep", "he_zero_residual")}
    assert rows[("nature", "he")][0] > 10 * rows[("nature", "pytorch")][0]
