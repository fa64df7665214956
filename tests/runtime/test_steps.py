"""Each step stored once: the batches the learner receives are, element for element, those of
the old path that stored every window's stacked observations whole
(``tests.runtime.cutting.StackedSequenceBuilder``), with episode starts inside sequences, the
stacks of an episode's first steps, sequences that straddle windows, ALE's real frame stacks,
and observations that are not stacked (MinAtar, Gymnasium); so are the tensors the learner
trains on when it rebuilds the stacks itself from a batch of frames (``FrameBatch``), and
the updates it applies."""

import numpy as np
import pytest
import torch

from gdi.runtime.acting.step import compress_reward
from gdi.runtime.storage.collector import ReplayCollector
from gdi.runtime.storage.sequences import FIELDS, SequenceBatch
from gdi.runtime.storage.steps import FrameBatch, StepChunk, StepRecorder, rebuild_stacks
from gdi.runtime.training.learner import batch_to_tensors
from tests.runtime.cutting import StackedSequenceBuilder, numpy_rebuild_stacks

STATE = (1, 2, 3)  # [F, 2, H] of a tiny recurrent state


def stacked(frames: list[np.ndarray], episode_start: int, t: int, stack: int) -> np.ndarray:
    """ALE's stack at step t: the last ``stack`` frames, zero before the episode's start."""
    out = np.zeros((stack, *frames[0].shape), dtype=frames[0].dtype)
    for c in range(stack):
        i = t - (stack - 1) + c
        if i >= episode_start:
            out[c] = frames[i]
    return out


class SyntheticStream:
    """N environments whose frames are random images and whose episodes end at random,
    observed as ALE stacks them (or unstacked with ``stack=1``)."""

    def __init__(self, num_envs: int, stack: int, frame_shape=(5, 4), end_rate=0.08, seed=0,
                 dtype=np.uint8, state_shape=STATE, num_actions=4):
        self.rng = np.random.default_rng(seed)
        self.n, self.stack, self.frame_shape, self.end_rate = num_envs, stack, frame_shape, end_rate
        self.dtype, self.state_shape, self.num_actions = dtype, state_shape, num_actions
        self.frames = [[self._frame()] for _ in range(num_envs)]
        self.starts = [0] * num_envs
        self.t = 0
        self.resets = np.ones(num_envs, dtype=bool)
        self.prev_actions = np.zeros(num_envs, dtype=np.int64)
        self.prev_rewards = np.zeros(num_envs, dtype=np.float32)

    def _frame(self) -> np.ndarray:
        return self.rng.integers(1, 256, self.frame_shape).astype(self.dtype)

    def obs(self) -> np.ndarray:
        if self.stack == 1:
            return np.stack([f[self.t] for f in self.frames])
        return np.stack([stacked(f, s, self.t, self.stack)
                         for f, s in zip(self.frames, self.starts, strict=True)])

    def step(self, recorders) -> list:
        """One step of every environment, recorded by every recorder; their emits."""
        obs = self.obs()
        actions = self.rng.integers(0, self.num_actions, self.n)
        rewards = self.rng.integers(-1, 3, self.n).astype(np.float64)
        dones = self.rng.random(self.n) < self.end_rate
        families = self.state_shape[0]
        truncation = np.where(dones[:, None] & (self.rng.random((self.n, families)) < 0.5),
                              self.rng.random((self.n, families)), 0.0).astype(np.float32)
        row = dict(obs=obs, resets=self.resets, prev_actions=self.prev_actions,
                   prev_rewards=self.prev_rewards,
                   state=self.rng.random((self.n, *self.state_shape)).astype(np.float32),
                   actions=actions, behavior_log_probs=-self.rng.random(self.n),
                   lambdas=self.rng.random((self.n, 3)).astype(np.float32),
                   versions=self.t // 3, rewards=rewards, dones=dones,
                   truncation_values=truncation)
        for recorder in recorders:
            recorder.record(**row)
        self.t += 1
        for i in range(self.n):
            self.frames[i].append(self._frame())
            if dones[i]:
                self.starts[i] = self.t
        self.resets = dones
        self.prev_actions = np.where(dones, 0, actions)
        self.prev_rewards = np.where(dones, 0.0, compress_reward(rewards)).astype(np.float32)
        after = dict(obs=self.obs(), resets=self.resets, prev_actions=self.prev_actions,
                     prev_rewards=self.prev_rewards)
        return [recorder.emit(**after) for recorder in recorders]


def assert_same_batch(got: SequenceBatch, want: SequenceBatch) -> None:
    for name, value in want.as_dict().items():
        # Exact: both paths copy the same numbers; none is computed.
        np.testing.assert_array_equal(getattr(got, name), value, err_msg=name)
        assert getattr(got, name).dtype == value.dtype, name


def assert_same_tensors(got: dict[str, torch.Tensor], want: SequenceBatch) -> None:
    """The tensors a learner trains on against the stacked batch's arrays."""
    assert sorted(got) == sorted(FIELDS)
    for name, value in want.as_dict().items():
        # Exact: a rebuilt stack holds copied frames and zeros, nothing computed.
        expected = torch.from_numpy(value)
        assert got[name].dtype == expected.dtype, name
        assert torch.equal(got[name], expected), name


def learner_tensors(batch: SequenceBatch | FrameBatch) -> dict[str, torch.Tensor]:
    return batch_to_tensors(batch, torch.device("cpu"))


def recorders(stream: SyntheticStream, length: int, stride: int):
    obs = stream.obs()
    old = StackedSequenceBuilder(stream.n, length, stride, obs.shape[1:], obs.dtype, 3,
                                 stream.state_shape)
    new = StepRecorder(stream.n, length, stride, obs.shape[1:], obs.dtype, stream.stack, 3,
                       stream.state_shape)
    return old, new


@pytest.mark.parametrize("stack,length,stride", [(4, 12, 4), (4, 7, 3), (4, 5, 5), (1, 12, 4),
                                                 (2, 6, 1)])
def test_every_window_is_the_old_stacked_window(stack, length, stride):
    stream = SyntheticStream(num_envs=5, stack=stack, end_rate=0.15)
    old, new = recorders(stream, length, stride)
    collector = ReplayCollector(1, 1, 10_000, 1, seed=0, frame_stack=stack)
    windows, starts_inside = 0, 0
    for _ in range(120):
        want, chunk = stream.step([old, new])
        assert (want is None) == (chunk is None)
        if chunk is None:
            continue
        collector.add(chunk, actor=3)
        assert_same_batch(collector.newest(stream.n), want)
        frames = collector.newest(stream.n, stacked=False)
        assert isinstance(frames, FrameBatch) == (stack > 1)
        assert_same_tensors(learner_tensors(frames), want)
        windows += 1
        starts_inside += int(want.resets[1:].sum())
    assert windows >= 20 and starts_inside >= 20  # episode starts inside sequences, covered


@pytest.mark.parametrize("stack", [4, 2, 1])
@pytest.mark.parametrize("stacked", [True, False])
def test_sampled_batches_are_the_old_collectors_batches(stack, stacked):
    """The collector's batches (sampled, each sequence used ``replay`` times) against the old
    windows' columns picked by the same draws: stacked on the host, or left as frames and
    stacked by the learner (``stacked=False``, as training samples them)."""
    length, stride, replay, batch = 9, 3, 2, 6
    stream = SyntheticStream(num_envs=4, stack=stack, end_rate=0.1, seed=1)
    old, new = recorders(stream, length, stride)
    collector = ReplayCollector(batch, replay, 64, batch, seed=7, frame_stack=stack)
    rng = np.random.default_rng(7)  # the collector's draws
    held: list[SequenceBatch] = []
    uses: list[int] = []
    batches = 0
    for _ in range(150):
        want, chunk = stream.step([old, new])
        if chunk is not None and collector.free_slots >= stream.n:
            collector.add(chunk, actor=0)
            held += [want.column(i) for i in range(stream.n)]
            uses += [replay] * stream.n
        while collector.ready():
            picked = np.sort(rng.choice(len(held), batch, replace=False))
            reference = SequenceBatch.concatenate([held[i] for i in picked])
            if stacked:
                assert_same_batch(collector.sample(), reference)
            else:
                assert_same_tensors(learner_tensors(collector.sample(stacked=False)), reference)
            batches += 1
            for i in picked[::-1]:
                uses[i] -= 1
                if uses[i] == 0:
                    del held[i], uses[i]
    assert batches >= 30


def test_a_checkpointed_collector_cuts_the_same_sequences_and_stores_each_chunk_once():
    stack, length, stride = 4, 8, 4
    stream = SyntheticStream(num_envs=3, stack=stack, end_rate=0.1, seed=2)
    old, new = recorders(stream, length, stride)
    collector = ReplayCollector(1, 1, 10_000, 1, seed=0, frame_stack=stack)
    for _ in range(40):
        _, chunk = stream.step([old, new])
        if chunk is not None:
            collector.add(chunk, actor=0)
    state = collector.state_dict()
    assert len(state["chunks"]) == len({id(c) for c in collector._streams[0]} |
                                       {id(p[0]) for s in collector._items for p in s.pieces})
    restored = ReplayCollector(1, 1, 10_000, 1, seed=0, frame_stack=stack)
    restored.load_state_dict(state)
    for _ in range(40):  # windows that straddle the checkpoint, then later ones
        want, chunk = stream.step([old, new])
        if chunk is not None:
            restored.add(chunk, actor=0)
            assert_same_batch(restored.newest(stream.n), want)


def test_a_new_stream_starts_afresh_and_a_gap_is_refused():
    stream = SyntheticStream(num_envs=2, stack=4, seed=4)
    old, new = recorders(stream, 6, 3)
    chunks = [c for _ in range(20) for _, c in [stream.step([old, new])] if c is not None]
    collector = ReplayCollector(1, 1, 10_000, 1, seed=0, frame_stack=4)
    collector.add(chunks[0], actor=1)
    with pytest.raises(ValueError, match="actor 1's window starts at step 9 of its stream, but "
                                         "the collector holds steps up to 6 of it"):
        collector.add(chunks[2], actor=1)
    collector.add(chunks[0], actor=1)  # start 0: a restarted actor's new stream
    collector.add(chunks[1], actor=1)


def test_real_ale_stacks_are_rebuilt_exactly():
    """ale-py's own frame stacks, random play across several episode ends."""
    from gdi.envs import make_vector_env, resolve_env

    env = make_vector_env(resolve_env("ale:Breakout", max_episode_frames=400), 2, seed=0)
    rng = np.random.default_rng(0)
    try:
        obs, _ = env.reset(seed=0)
        old = StackedSequenceBuilder(2, 20, 10, obs.shape[1:], obs.dtype, 3, STATE)
        new = StepRecorder(2, 20, 10, obs.shape[1:], obs.dtype, 4, 3, STATE)
        collector = ReplayCollector(1, 1, 10_000, 1, seed=0, frame_stack=4)
        resets = np.ones(2, dtype=bool)
        zeros = np.zeros(2)
        starts = windows = 0
        for _ in range(400):
            actions = rng.integers(0, env.single_action_space.n, 2)
            row = dict(obs=obs, resets=resets, prev_actions=zeros.astype(np.int64),
                       prev_rewards=zeros.astype(np.float32),
                       state=np.zeros((2, *STATE), np.float32), actions=actions,
                       behavior_log_probs=zeros, lambdas=np.zeros((2, 3), np.float32),
                       versions=0, rewards=zeros, dones=resets,
                       truncation_values=None)
            old.record(**row)
            new.record(**row)
            obs, _, terminated, truncated, _ = env.step(actions)
            resets = terminated | truncated
            starts += int(resets.sum())
            after = dict(obs=obs, resets=resets, prev_actions=zeros.astype(np.int64),
                         prev_rewards=zeros.astype(np.float32))
            want, chunk = old.emit(**after), new.emit(**after)
            if chunk is not None:
                collector.add(chunk, actor=0)
                assert_same_batch(collector.newest(2), want)
                assert_same_tensors(learner_tensors(collector.newest(2, stacked=False)), want)
                windows += 1
        assert starts >= 2 and windows >= 30
    finally:
        env.close()


def test_rebuild_stacks_by_hand():
    # Steps -2 … 3 of two environments; frame value = i + 1, negative for the second.
    frames = torch.tensor([[i + 1, -(i + 1)] for i in range(6)])[:, :, None]
    # The first environment's episode starts at step 1, the second's at steps -1 and 3.
    resets = torch.tensor([[False, False], [False, True], [False, False], [True, False],
                           [False, False], [False, True]])
    got = rebuild_stacks(frames, resets, stack=3)
    want = [[[1, 2, 3], [0, -2, -3]], [[0, 0, 4], [-2, -3, -4]], [[0, 4, 5], [-3, -4, -5]],
            [[4, 5, 6], [0, 0, -6]]]
    assert torch.equal(got[..., 0], torch.tensor(want))  # exact: copies and zeros


@pytest.mark.parametrize("stack", [1, 2, 4, 5])
@pytest.mark.parametrize("reset_rate", [0.0, 0.15, 0.6])
def test_rebuild_stacks_is_the_per_environment_rule(stack, reset_rate):
    """Batched over environments, on torch, against the numpy rule the collector applied to
    one environment at a time: resets anywhere (the stack's history rows, the first and last
    observation, several in a row), and environments with none."""
    rng = np.random.default_rng(stack)
    rows, n = stack - 1 + 30, 7
    frames = rng.integers(1, 256, (rows, n, 3, 2), dtype=np.uint8)
    resets = rng.random((rows, n)) < reset_rate
    resets[:, 0] = False  # an environment in one episode throughout
    resets[[0, stack - 1, -1], 1] = True  # a start at the oldest frame, the first observation,
    resets[stack : stack + 3, 2] = True  # and the last; starts in a row
    got = rebuild_stacks(torch.from_numpy(frames), torch.from_numpy(resets), stack)
    assert got.shape == (30, n, stack, 3, 2) and got.dtype == torch.uint8
    for env in range(n):
        want = numpy_rebuild_stacks(frames[:, env], resets[:, env], stack)
        # Exact: both copy the same frames and zero the same ones.
        np.testing.assert_array_equal(got[:, env].numpy(), want, err_msg=f"environment {env}")
    if reset_rate and stack > 1:
        assert (got == 0).any() and (got != 0).any()  # zeroed frames and kept ones, covered


# The environments' observations: ALE's stacked 84 × 84 frames, MinAtar's channels, a
# Gymnasium vector; their config overrides for a learner small enough for a CPU test.
LEARNER_ENVS = {
    "ale:Breakout": (4, (84, 84), np.uint8, 18, {"torso": "nature"}),
    "minatar:breakout": (1, (4, 10, 10), np.uint8, 6, {}),
    "gym:CartPole-v1": (1, (4,), np.float32, 2, {}),
}


def learner_batches(env: str):
    """A tiny learner config for ``env``, its shapes, and the last window of a synthetic stream
    of that env's observations: the old stacked batch and the batch training now samples."""
    from gdi.envs import resolve_env
    from gdi.runtime.components import env_shapes
    from tests.runtime.helpers import tiny_config

    stack, frame_shape, dtype, actions, extra = LEARNER_ENVS[env]
    config = tiny_config(env=env, **extra)
    shapes = env_shapes(resolve_env(env), 0)
    stream = SyntheticStream(config.batch_size, stack, frame_shape, end_rate=0.2, seed=5,
                             dtype=dtype, state_shape=(config.families, 2, config.lstm_units),
                             num_actions=actions)
    assert stream.obs().shape[1:] == shapes.obs_shape
    old, new = recorders(stream, config.burn_in + config.seq_len, config.seq_stride)
    collector = ReplayCollector(1, 1, 10_000, 1, seed=0, frame_stack=stack)
    windows = 0
    while windows < 3:  # sequences that straddle windows, with episode starts inside
        want, chunk = stream.step([old, new])
        if chunk is not None:
            collector.add(chunk, actor=0)
            windows += 1
    assert want.resets[1:].any()
    batch = collector.newest(stream.n, stacked=False)
    assert isinstance(batch, FrameBatch) == (stack > 1)
    return config, shapes, want, batch


@pytest.mark.parametrize("env", list(LEARNER_ENVS))
def test_the_learner_trains_on_the_old_tensors_and_applies_the_same_update(env):
    """What the learner trains on from a batch sampled as training samples it (frames, for
    stacked observations) is, tensor for tensor, what it trained on from the old stacked
    batch; and one update from each gives the same parameters."""
    from gdi.runtime.components import build_learner, build_network

    config, shapes, want, batch = learner_batches(env)
    learners = []
    for _ in range(2):
        torch.manual_seed(0)
        learners.append(build_learner(config, build_network(config, shapes), device="cpu"))
    # Before, the learner trained on the stacked batch's arrays as they were.
    assert_same_tensors(learners[1]._to_device(batch), want)
    # Exact: the same kernels on the same inputs in one process.
    assert learners[0].step(want, 0.5) == learners[1].step(batch, 0.5)
    for p, q in zip(learners[0].net.parameters(), learners[1].net.parameters(), strict=True):
        assert torch.equal(p, q)


def test_training_hands_the_learner_frames_of_stacked_observations(tmp_path):
    """The learner side samples its batches as frames (``stacked=False``): the stacks are rebuilt
    by the learner, on its device, and the host never writes them."""
    from gdi.envs import resolve_env
    from gdi.runtime.components import build_learner, build_network
    from tests.runtime.test_learner import learner_updates

    config, shapes, want, _ = learner_batches("ale:Breakout")
    learner = build_learner(config, build_network(config, shapes), device="cpu")
    updates, collector, _ = learner_updates(tmp_path, config, resolve_env(config.env), learner)
    received = []
    learner.step = lambda batch, progress: received.append(batch) or {}
    while not collector.ready():
        collector.add(want)
    assert updates.while_ready(frames=0, progress=0.0) == len(received) > 0
    assert all(isinstance(batch, FrameBatch) for batch in received)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("env", ["ale:Breakout", "minatar:breakout"])
def test_a_cuda_learner_stacks_its_pinned_frames_on_the_gpu(env):
    """A CUDA learner's pinned staging takes the form of the batches it is given (frames, for
    stacked observations), and the stacks it rebuilds on the GPU, by the CPU's code, are the
    old stacked batch's."""
    from gdi.runtime.components import build_learner, build_network

    config, shapes, want, batch = learner_batches(env)
    learner = build_learner(config, build_network(config, shapes), device="cuda")
    first = learner._to_device(batch)  # pageable; makes the staging buffers
    staging = learner.staging
    assert type(staging) is type(batch)
    for name, array in batch.as_dict().items():  # as the collector assembles into them
        getattr(staging, name)[...] = array
    for tensors in (first, learner._to_device(staging)):
        assert all(t.device.type == "cuda" for t in tensors.values())
        assert_same_tensors({name: t.cpu() for name, t in tensors.items()}, want)


def test_a_window_of_ale_frames_is_at_least_eight_times_smaller():
    """Bytes shipped per new step at the paper's ALE shapes (84×84 frames, stack 4, sequences
    of 120 steps every 40): the old window against the chunk."""
    n, length, stride = 2, 120, 40
    obs_shape = (4, 84, 84)
    old = StackedSequenceBuilder(n, length, stride, obs_shape, np.uint8, 3, (1, 2, 512))
    new = StepRecorder(n, length, stride, obs_shape, np.uint8, 4, 3, (1, 2, 512))
    obs = np.zeros((n, *obs_shape), np.uint8)
    row = dict(obs=obs, resets=np.zeros(n, bool), prev_actions=np.zeros(n, np.int64),
               prev_rewards=np.zeros(n, np.float32), state=np.zeros((n, 1, 2, 512), np.float32),
               actions=np.zeros(n, np.int64), behavior_log_probs=np.zeros(n),
               lambdas=np.zeros((n, 3), np.float32), versions=0, rewards=np.zeros(n),
               dones=np.zeros(n, bool), truncation_values=None)
    row["resets"] = np.ones(n, bool)
    sizes = []
    for t in range(length + stride):
        old.record(**row)
        new.record(**row)
        row["resets"] = np.zeros(n, bool)
        after = dict(obs=obs, resets=row["resets"], prev_actions=row["prev_actions"],
                     prev_rewards=row["prev_rewards"])
        want, chunk = old.emit(**after), new.emit(**after)
        if t == length + stride - 1:  # a window after the first: `stride` new steps
            sizes = (sum(a.nbytes for a in want.as_dict().values()), chunk.nbytes())
    assert sizes[0] / sizes[1] >= 8, sizes
    assert isinstance(chunk, StepChunk)


# A subprocess: gdi.runtime.storage.sequences with one more field in its SCHEMA (the one edit),
# then the recorder (producer) records it and a learner's batch (consumer) reads it back.
THROWAWAY = '''
import importlib.util, sys
import numpy as np
name = "gdi.runtime.storage.sequences"
spec = importlib.util.find_spec(name)
source = spec.loader.get_source(name)
edited = source.replace(
    '    StepField("truncation_values", "transition", np.float32, "families"),\\n',
    '    StepField("truncation_values", "transition", np.float32, "families"),\\n'
    '    StepField("throwaway", "transition", np.float32, "index"),\\n')
assert edited != source
module = importlib.util.module_from_spec(spec)
sys.modules[name] = module
exec(compile(edited, spec.origin, "exec"), module.__dict__)

from gdi.runtime.storage.collector import ReplayCollector
from gdi.runtime.storage.steps import StepRecorder

n, length = 2, 4
recorder = StepRecorder(n, length, length, (3,), np.float32, 1, 2, (1, 2, 8))
collector = ReplayCollector(n, 1, 16, n, seed=0)
for t in range(length):
    recorder.record(
        np.zeros((n, 1, 2, 8), np.float32), obs=np.full((n, 3), t, np.float32),
        resets=np.full(n, t == 0), prev_actions=np.zeros(n, np.int64),
        prev_rewards=np.zeros(n, np.float32), actions=np.zeros(n, np.int64),
        rewards=np.ones(n), dones=np.zeros(n, bool), behavior_log_probs=np.zeros(n),
        lambdas=np.ones((n, 2)), versions=0, truncation_values=None,
        throwaway=np.stack([np.full(2, 10 * t + env) for env in range(n)]))
chunk = recorder.emit(obs=np.zeros((n, 3), np.float32), resets=np.zeros(n, bool),
                      prev_actions=np.zeros(n, np.int64), prev_rewards=np.zeros(n, np.float32))
collector.add(chunk, actor=0)
batch = collector.sample()
expected = np.array([[[10 * t + env] * 2 for env in range(n)] for t in range(length)])
assert batch.throwaway.shape == (length, n, 2) and batch.throwaway.dtype == np.float32
assert np.array_equal(np.sort(batch.throwaway, axis=1), expected), batch.throwaway
assert "throwaway" in batch.as_dict()
print("ok")
'''


def test_a_new_per_step_field_is_one_edit_to_the_schema():
    """Issue 43: the recorder's buffers, the window's chunk, the collector's batches and their
    dict are built from gdi.runtime.storage.sequences.SCHEMA; with one more field there (and nothing
    else edited) a value recorded per step reaches the learner's batch."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", THROWAWAY], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
