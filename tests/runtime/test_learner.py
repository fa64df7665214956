"""The learner's guard against non-finite updates: a NaN loss (or gradient) is reported with its
step and skipped, and never reaches the parameters or AdamW's moments."""

import dataclasses

import numpy as np
import pytest
import torch

from gdi.envs import resolve_env
from gdi.policy_space import get_policy_space
from gdi.runtime.acting.actor import Actor
from gdi.runtime.components import (
    build_collector,
    build_controller,
    build_learner,
    build_network,
    env_shapes,
)
from gdi.runtime.errors import LearnerDiverged
from gdi.runtime.progress import Warnings
from gdi.runtime.run_folder.run_dir import MetricsWriter
from gdi.runtime.storage.sequences import SequenceBatch
from gdi.runtime.training.learner import Learner
from gdi.runtime.training.log import TrainingLog, log_interval
from gdi.runtime.training.parameter_server import InlineParameterServer
from gdi.runtime.training.updates import DivergenceWatch, LearnerUpdates
from gdi.runtime_config import ActorsConfig, ReplayConfig
from tests.nets.helpers import summed_terms
from tests.runtime.cutting import actor_window
from tests.runtime.helpers import tiny_config
from tests.tolerance import assert_close


def setup(seed: int = 0, **extra):
    config = tiny_config(seed=seed, **extra)
    env_config = resolve_env(config.env)
    shapes = env_shapes(env_config, seed)
    torch.manual_seed(seed)
    learner = build_learner(config, build_network(config, shapes), device="cpu")
    actor = new_actor(config, env_config, build_network(config, shapes), seed)
    return config, env_config, learner, actor


def new_actor(config, env_config, net: torch.nn.Module, seed: int) -> Actor:
    """Actor 0 of ``config``, with ``net`` and a fresh E seeded with ``seed``."""
    return Actor(0, config.layer(ActorsConfig), config.layer(ReplayConfig), config.policy_space,
                 env_config, net, build_controller(config, seed), seed)


def next_window(actor: Actor) -> SequenceBatch:
    return actor_window(actor)


def poisoned(window):
    rewards = window.rewards.copy()
    rewards[-1, :] = np.nan  # the last reward of every sequence: each batch's loss is NaN
    return window.replace(rewards=rewards)


def parameters(net: torch.nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in net.parameters()]


def test_nan_loss_is_skipped_and_leaves_parameters_and_optimizer_untouched():
    _, _, learner, actor = setup()
    window = next_window(actor)
    before = parameters(learner.net)

    metrics = learner.step(poisoned(window), progress=0.1)

    assert metrics["losses/skipped_nonfinite"] == 1.0
    assert "losses/grad_norm" not in metrics  # caught before the backward pass
    assert learner.steps == 0 and learner.skipped == 1
    assert all(torch.equal(a, b) for a, b in zip(before, parameters(learner.net), strict=True))
    assert all(p.grad is None for p in learner.net.parameters())
    assert not learner.optimizer.state  # no moment was created from the bad batch

    # The next finite batch trains as usual, with finite parameters.
    metrics = learner.step(window, progress=0.1)
    assert "losses/skipped_nonfinite" not in metrics
    assert learner.steps == 1 and learner.skipped == 1
    after = parameters(learner.net)
    assert any(not torch.equal(a, b) for a, b in zip(before, after, strict=True))
    assert all(torch.isfinite(p).all() for p in after)


def test_non_finite_gradient_with_a_finite_loss_is_skipped():
    # A finite loss whose gradient is not: a hook scales one weight's gradient by inf.
    _, _, learner, actor = setup()
    window = next_window(actor)
    first = next(learner.net.parameters())
    first.register_hook(lambda grad: grad * float("inf"))
    before = parameters(learner.net)

    metrics = learner.step(window, progress=0.1)

    assert metrics["losses/skipped_nonfinite"] == 1.0
    assert np.isfinite(metrics["losses/total"])
    assert learner.steps == 0 and learner.skipped == 1
    assert all(torch.equal(a, b) for a, b in zip(before, parameters(learner.net), strict=True))
    assert not learner.optimizer.state


def learner_updates(tmp_path, config, env_config, learner):
    """The learner side's updates (``LearnerUpdates``) with their collector and warnings."""
    writer = MetricsWriter(tmp_path, tensorboard=False)
    log = TrainingLog(log_interval(config.frames, config.log_every), writer,
                      get_policy_space(config.policy_space).index_names)
    warnings = Warnings()
    watch = DivergenceWatch(learner, warnings, config.env, config.skipped_updates_max)
    collector = build_collector(config, config.seed, env_config.stacked_frames)
    updates = LearnerUpdates(collector, learner, InlineParameterServer(learner.net), log,
                             watch, config.burn_in, config.push_every)
    return updates, collector, warnings


def test_trainer_reports_a_streak_of_skipped_steps_once(tmp_path):
    config, env_config, learner, actor = setup()
    updates, collector, warnings = learner_updates(tmp_path, config, env_config, learner)
    before = parameters(learner.net)
    for _ in range(2):  # min_replay = 8 sequences, 4 per window
        collector.add(poisoned(next_window(actor)))
    attempted = updates.while_ready(frames=0, progress=0.0)

    assert attempted >= 2
    # The batch's NaN rewards are named with the environment (issue 45 item 11: the run
    # blamed learning_rate for what the environment gave).
    assert warnings.take() == [
        "learner step 0: non-finite loss or gradient, update skipped (parameters unchanged; "
        f"in the batch from gym:CartPole-v1: {config.batch_size} of "  # each last reward
        f"{(config.burn_in + config.seq_len) * config.batch_size} reward values are NaN); "
        "the run stops after "
        f"skipped_updates_max={config.skipped_updates_max} in a row"
    ]
    assert learner.steps == 0 and learner.skipped == attempted
    assert all(torch.equal(a, b) for a, b in zip(before, parameters(learner.net), strict=True))


def test_a_learner_that_skips_every_update_stops_the_run(tmp_path):
    config, env_config, learner, actor = setup()
    config = config.replace(skipped_updates_max=3)
    updates, collector, _ = learner_updates(tmp_path, config, env_config, learner)
    for _ in range(4):
        collector.add(poisoned(next_window(actor)))
    with pytest.raises(LearnerDiverged, match="skipped 3 consecutive updates") as stopped:
        updates.while_ready(frames=0, progress=0.0)
    assert "the environment gym:CartPole-v1 gives non-finite data" in str(stopped.value)
    assert "learning rate is not the cause" in str(stopped.value)
    assert learner.skipped == 3 and updates.intact  # resumable: checkpoint allowed


def test_a_finite_update_ends_the_streak(tmp_path):
    _, _, learner, _ = setup()
    warnings = Warnings()
    watch = DivergenceWatch(learner, warnings, "gym:CartPole-v1", skipped_updates_max=3)
    for skipped in (True, True, False, True, True, False):
        watch.check(skipped, frames=0)  # never three in a row: no error
    assert len(warnings.take()) == 2  # one warning per streak


def assert_same_step(got: dict, want: dict, learner: Learner, reference: Learner,
                     config) -> None:
    """The metrics and the parameters after a step of both learners of ``config``, by
    tests.tolerance's rule. The loss is a
    float32 mean over the seq_len × batch_size learning steps of terms from the network
    unrolled over burn-in and sequence (``summed_terms``). AdamW moves a parameter by about
    the learning rate per step, a few 1e-4 of its magnitude, and the gradient's rounding
    cancels to first order in m̂/√v̂: the parameters differ by their own rounding only, with
    no terms to count."""
    assert learner.burn_in == reference.burn_in == config.burn_in
    steps = summed_terms(reference.net, config.burn_in + config.seq_len)
    assert_close(got["losses/total"], want["losses/total"], dtype=torch.float32,
                 terms=steps * config.seq_len * config.batch_size)
    for (name, p), q in zip(learner.net.named_parameters(), reference.net.parameters(),
                            strict=True):
        assert_close(p, q, msg=name)


@pytest.mark.slow
def test_a_compiled_learner_applies_the_same_updates_as_the_eager_one():
    # learner_compile=true compiles each family's torso and heads (torch.compile, inductor on
    # CPU): the same losses and, step after step, the same parameters to float tolerance.
    config = tiny_config(env="minatar:breakout", seed=2)
    env_config = resolve_env(config.env)
    shapes = env_shapes(env_config, 2)
    torch.manual_seed(2)
    eager = build_learner(config, build_network(config, shapes), device="cpu")
    compiled_config = dataclasses.replace(config, learner_compile=True)
    compiled = build_learner(compiled_config, build_network(compiled_config, shapes),
                             device="cpu")
    compiled.net.load_state_dict(eager.net.state_dict())
    actor = new_actor(config, env_config, build_network(config, shapes), 2)
    for _ in range(3):
        batch = next_window(actor)
        assert_same_step(compiled.step(batch, 0.5), eager.step(batch, 0.5), compiled, eager,
                         config)
    assert compiled.steps == eager.steps == 3
    # Same parameter names: checkpoints and pushes are those of the eager network.
    assert list(compiled.net.state_dict()) == list(eager.net.state_dict())


@pytest.mark.parametrize(("capability", "machine", "simdlen"), [
    (None, "x86_64", 256), ("avx2", "x86_64", 256), ("avx512", "AMD64", 256),
    ("default", "x86_64", 1), (None, "aarch64", None)])
def test_compiled_code_is_held_to_avx2_on_x86(monkeypatch, capability, machine, simdlen):
    # Issue 72: on an AVX-512 CPU Inductor's 8-wide transpose tiles met 16-float stores (NaN
    # from the compiled learner under ATEN_CPU_CAPABILITY=avx2, wrong values natively).
    import platform

    import torch._inductor.config as inductor_config

    from gdi.runtime.training.learner import compile_feedforward

    if capability is None:
        monkeypatch.delenv("ATEN_CPU_CAPABILITY", raising=False)
    else:
        monkeypatch.setenv("ATEN_CPU_CAPABILITY", capability)
    monkeypatch.setattr(platform, "machine", lambda: machine)
    config = tiny_config(env="minatar:breakout")
    net = build_network(config, env_shapes(resolve_env(config.env), 0))
    with inductor_config.patch({"cpp.simdlen": None}):  # undone on the way out
        compile_feedforward(net)
        assert inductor_config.cpp.simdlen == simdlen


def test_the_learner_folds_every_4th_step_into_the_input_statistics_at_a_turning_phase():
    """input_norm=running: each step takes in every 4th observation of the learning part
    (sequence 4 + bootstrap 1 = 5 steps after the burn-in) starting at phase steps % 4: 2, 1,
    1, 1 per sequence over four steps, × the batch's sequences; the statistics are those of
    exactly those observations (CartPole's floats: the network's scale is 1)."""
    config, _, learner, actor = setup(input_norm="running")
    taken = []
    for step in range(4):
        batch = next_window(actor)
        learning = torch.from_numpy(batch.obs[config.burn_in:])
        taken.append(learning[step % 4::4].reshape(-1, *learning.shape[2:]))
        learner.step(batch, 0.5)
    seen = torch.cat(taken).double()
    stats = learner.net.input_norm
    assert stats.count.item() == len(seen) == (2 + 1 + 1 + 1) * batch.obs.shape[1]  # counts
    assert_close(stats.mean, seen.mean(0), terms=len(seen), dtype=torch.float32)
    assert_close(stats.var, seen.var(0, unbiased=False), terms=len(seen), dtype=torch.float32,
                 magnitude=float(seen.square().max()))


def test_a_cpu_learner_lets_the_collector_allocate_its_batches():
    _, _, learner, actor = setup()
    learner.step(next_window(actor), 0.5)
    assert learner.staging is None


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_a_cuda_learner_steps_the_same_from_its_pinned_staging():
    # From its second step a CUDA learner has the collector assemble batches in page-locked
    # buffers and copies them without a pageable bounce: the same update as from a fresh array.
    config, env_config, _, actor = setup()
    shapes = env_shapes(env_config, 0)
    torch.manual_seed(0)
    pinned = build_learner(config, build_network(config, shapes), device="cuda")
    plain = build_learner(config, build_network(config, shapes), device="cuda")
    plain.net.load_state_dict(pinned.net.state_dict())
    first = next_window(actor)
    pinned.step(first, 0.5)
    plain.step(first, 0.5)
    assert pinned.staging is not None and pinned.staging.obs.shape == first.obs.shape
    second = next_window(actor)
    staged = SequenceBatch.concatenate([second], out=pinned.staging)
    assert staged is pinned.staging
    assert_same_step(pinned.step(staged, 0.5), plain.step(second, 0.5), pinned, plain, config)


def test_a_run_config_is_its_loss_config_field_for_field():
    # Config is composed of the loss's own LossConfig (and the other layers' configs): every
    # loss field is the run's, declared once, with LossConfig's default and check.
    from gdi.config import Config
    from gdi.learning import LossConfig

    config = tiny_config(entropy_scale=0.25, pg_clip=0.1, clip_pg_rho=0.5,
                         clip_c=float("inf"))
    assert isinstance(config, LossConfig)
    loss_fields = {f.name: f.default for f in dataclasses.fields(LossConfig)}
    run_fields = {f.name: f.default for f in dataclasses.fields(Config)}
    assert {name: run_fields[name] for name in loss_fields} == loss_fields
    assert (config.clip_pg_rho, config.clip_c, config.entropy_scale) == (0.5, float("inf"), 0.25)
    with pytest.raises(ValueError, match="clip_c: must be a number >= 0"):
        tiny_config(clip_c=-1.0)


