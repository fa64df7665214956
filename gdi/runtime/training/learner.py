"""The learner: operator T applied to batches from the data collector.

It owns the parameters θ (one or two families), the AdamW optimizer and its schedule; the loss
itself is the pure function ``gdi.learning.loss``. One step: burn the LSTM in from the stored
state without gradient, run the learning part (plus the bootstrap observation) with gradient,
compute the loss, clip the global gradient norm, step AdamW.
"""

from __future__ import annotations

import math
import os
import platform

import numpy as np
import torch

from gdi.learning import LossBatch, LossOutputs, dynamics_losses
from gdi.learning import loss as gdi_loss
from gdi.learning.loss import LossConfig, vtrace_target_moments
from gdi.learning.optimizer import OptimizerConfig
from gdi.learning.schedule import optimizer_schedule
from gdi.nets.config import NetworkConfig
from gdi.runtime.storage.sequences import SequenceBatch
from gdi.runtime.storage.steps import FrameBatch, stacked_tensors
from gdi.runtime_config import ReplayConfig

#: The step stride at which the learner samples a batch's observations for the running input
#: statistics (``input_norm="running"``): the ALE's frame stack.
INPUT_STATS_STRIDE = 4


def batch_to_tensors(batch: SequenceBatch | FrameBatch, device: torch.device
                     ) -> dict[str, torch.Tensor]:
    """The tensors the learner trains on (``SequenceBatch``'s fields), on ``device``: a
    ``FrameBatch``'s frames are copied there and stacked there (``stacked_tensors``)."""
    return stacked_tensors({name: torch.from_numpy(np.ascontiguousarray(array)).to(device)
                            for name, array in batch.as_dict().items()})


class PinnedStaging:
    """Page-locked host buffers of one batch's shapes and form (a ``FrameBatch``'s unstacked
    frames when observations stack frames), for a CUDA learner: the data collector assembles
    each batch into them (``ReplayCollector.sample(out=...)``) and the learner copies them to
    the GPU without a pageable bounce, a large part of a GPU step at the paper's batch
    otherwise (docs/benchmarks.md, "Levers measured"), then rebuilds the stacks there as a CPU
    learner does (``stacked_tensors``). A buffer is reused only after the step that read it has
    synchronized (it reads the gradient norm), so no copy is in flight when the collector
    writes the next batch."""

    def __init__(self, like: SequenceBatch | FrameBatch):
        self.tensors = {name: torch.empty(array.shape, dtype=torch.from_numpy(array[:0]).dtype,
                                          pin_memory=True)
                        for name, array in like.as_dict().items()}
        self.batch = type(like)(**{name: t.numpy() for name, t in self.tensors.items()})

    def to(self, device: torch.device) -> dict[str, torch.Tensor]:
        return stacked_tensors({name: t.to(device, non_blocking=True)
                                for name, t in self.tensors.items()})


#: ``platform.machine()`` of the CPUs whose Inductor code is held to AVX2 (compile_feedforward).
X86_MACHINES = ("x86_64", "amd64", "i686", "i386")


def compile_feedforward(net: torch.nn.Module) -> None:
    """torch.compile, in place, the feed-forward parts of every family (torso, A and V heads,
    dynamics heads): their layers and activations fuse. The LSTM core stays eager (it cuts its
    sequence at resets, a different graph for each reset pattern) and so does the loss (its
    checks read values). Parameters and their names are unchanged, so checkpoints, pushes and
    state dicts are those of the eager network.

    Under ``ATEN_CPU_CAPABILITY=default`` (ATen's scalar kernels, as ``make test-kernels``
    runs them) Inductor's vectorized C++ does not build: it uses ``at::vec`` helpers that the
    scalar headers leave out. There the generated code is scalar too (``simdlen = 1``), which
    is what the setting asks for.

    Elsewhere on x86 the generated code is held to 256-bit vectors (AVX2, ``simdlen = 256``):
    on an AVX-512 CPU, torch 2.13's Inductor tiles the channels-last transposes of the torso 8
    floats wide but stores 16-float vectors, which gives the compiled learner wrong values.
    AVX2 code is what an AVX2-only CPU runs anyway. docs/reliability.md, "The kernel check",
    has both failures as they were seen."""
    import torch._inductor.config as inductor_config

    if os.environ.get("ATEN_CPU_CAPABILITY") == "default":
        inductor_config.cpp.simdlen = 1
    elif platform.machine().lower() in X86_MACHINES:
        inductor_config.cpp.simdlen = 256
    for family in net.family_nets:
        for name in ("torso", "adv_head", "value_head", "inverse_dynamics", "forward_dynamics"):
            part = getattr(family, name, None)
            if part is not None:
                part.compile(dynamic=False)


def nonfinite_inputs(tensors: dict[str, torch.Tensor]) -> str | None:
    """What in a batch is not finite (observations, rewards), said for a user, or None: a NaN
    the environment gave makes every loss non-finite, whatever the learning rate."""
    found = []
    for name, what in (("obs", "observation"), ("rewards", "reward")):
        values = tensors[name]
        if values.is_floating_point():
            bad = ~torch.isfinite(values)
            if bad.any():
                kinds = sorted({"NaN" if math.isnan(v) else f"{v:+}"
                                for v in values[bad].flatten()[:1000].tolist()})
                found.append(f"{int(bad.sum()):,} of {values.numel():,} {what} values are "
                             f"{' or '.join(kinds)}")
    return "; ".join(found) or None


class Learner:
    """Operator T on ``net``: the loss of ``loss`` stepped by AdamW as ``optimizer`` says, on
    sequences of ``replay``'s burn-in, discounted by its γ, through the heads ``network``
    describes (its dynamics heads, its separate policy head); ``compile``: torch.compile the
    feed-forward parts (``learner_compile``)."""

    def __init__(self, net: torch.nn.Module, loss: LossConfig, optimizer: OptimizerConfig,
                 replay: ReplayConfig, network: NetworkConfig, *, compile: bool = False,
                 device: torch.device | str = "cpu"):
        self.loss_config, self.optimizer_config = loss, optimizer
        self.burn_in, self.discount = replay.burn_in, replay.discount
        self.aux_tasks = network.aux_tasks
        self.separate_policy_head = network.policy_head == "separate"
        self.device = torch.device(device)
        self.net = net.to(self.device)
        self.optimizer = torch.optim.AdamW(
            self.net.parameters(),
            lr=optimizer.learning_rate,
            betas=(optimizer.adam_beta1, optimizer.adam_beta2),
            eps=optimizer.adam_eps,
            weight_decay=optimizer.weight_decay,
            # One fused kernel for all parameters instead of a few per tensor: several times
            # faster for the small MinAtar network (docs/benchmarks.md, "Overhead against
            # plain loops").
            fused=self.device.type in ("cpu", "cuda"),
        )
        if compile:
            compile_feedforward(self.net)
        self.steps = 0  # updates applied
        self.skipped = 0  # updates skipped because the loss or gradient was not finite
        self.skip_cause: str | None = None  # non-finite inputs behind the last skipped update
        self._staging: PinnedStaging | None = None  # CUDA only, made at the first step

    @property
    def staging(self) -> SequenceBatch | FrameBatch | None:
        """Where the data collector should assemble the next batch (pinned buffers of a CUDA
        learner, from its second step on, of the form of its first batch), or None to let it
        allocate one."""
        return None if self._staging is None else self._staging.batch

    def _to_device(self, batch: SequenceBatch | FrameBatch) -> dict[str, torch.Tensor]:
        if self._staging is not None and batch is self._staging.batch:
            return self._staging.to(self.device)
        tensors = batch_to_tensors(batch, self.device)
        if self.device.type == "cuda" and self._staging is None:
            self._staging = PinnedStaging(batch)
        return tensors

    def step(self, batch: SequenceBatch | FrameBatch, progress: float) -> dict[str, float]:
        """One update from ``batch`` (a ``FrameBatch``'s stacks rebuilt on the learner's
        device); ``progress`` is frames seen / frames budgeted."""
        opt = self.optimizer_config
        t = self._to_device(batch)
        schedule = optimizer_schedule(
            self.steps, progress, learning_rate=opt.learning_rate,
            weight_decay=opt.weight_decay, warmup_steps=opt.warmup_steps,
        )
        for group in self.optimizer.param_groups:
            group["lr"] = schedule.learning_rate
            group["weight_decay"] = schedule.weight_decay

        burn = self.burn_in
        # The running input statistics (input_norm="running") take in the batch before it is
        # read, as Sample Factory's learner does: every INPUT_STATS_STRIDE-th step of the
        # learning part (the burn-in is the previous sequence's learning part), a quarter of
        # the cost of all (all: a third of a step's time on 2 cores). Consecutive ALE
        # observations stack 3 of the same 4 frames, so every 4th step still sees each frame;
        # the phase turns with the step count, so over 4 steps every position in a sequence
        # is seen (environments without a stack included).
        offset = burn + self.steps % INPUT_STATS_STRIDE
        self.net.update_input_stats(t["obs"][offset::INPUT_STATS_STRIDE])
        state = t["initial_state"]
        if burn > 0:
            with torch.no_grad():  # burn-in: refresh the stored state, no gradient (R2D2)
                _, state = self.net(
                    t["obs"][:burn], t["prev_actions"][:burn], t["prev_rewards"][:burn],
                    t["resets"][:burn], state,
                )
        # Learning part plus the bootstrap observation: seq_len + 1 observations.
        outputs, _ = self.net(
            t["obs"][burn:], t["prev_actions"][burn:], t["prev_rewards"][burn:],
            t["resets"][burn:], state,
        )
        actions = t["actions"][burn:]
        not_done = 1.0 - t["dones"][burn:].float()
        predictions = self.net.dynamics_predictions(outputs, actions, not_done) \
            if self.aux_tasks else None
        aux_losses = {} if predictions is None else dynamics_losses(*predictions, actions, not_done)
        value_norm = self.net.value_norm  # None unless value_norm="running"
        loss, metrics = gdi_loss(
            LossOutputs(adv=outputs.adv, value=outputs.value, aux_losses=aux_losses,
                        logits=outputs.logits if self.separate_policy_head else None,
                        value_scale=None if value_norm is None
                        else value_norm.std.to(outputs.value.dtype)),
            LossBatch(
                actions=actions,
                rewards=t["rewards"][burn:],
                discounts=self.discount * not_done,
                behavior_log_probs=t["behavior_log_probs"][burn:],
                lambdas=t["lambdas"][burn:],
                truncation_bootstrap=self.discount
                * t["truncation_values"][burn:].permute(2, 0, 1),
            ),
            self.loss_config,
        )
        metrics = dict(metrics)
        metrics["schedule/learning_rate"] = schedule.learning_rate
        metrics["schedule/weight_decay"] = schedule.weight_decay
        if not torch.isfinite(loss):
            self.skipped += 1
            self.skip_cause = nonfinite_inputs(t)
            metrics["losses/skipped_nonfinite"] = 1.0
            return metrics
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(self.net.parameters(), opt.max_grad_norm)
        metrics["losses/grad_norm"] = float(grad_norm)
        if not math.isfinite(float(grad_norm)):
            self.skipped += 1
            self.skip_cause = nonfinite_inputs(t)
            metrics["losses/skipped_nonfinite"] = 1.0
            self.optimizer.zero_grad(set_to_none=True)
            return metrics
        self.optimizer.step()
        if value_norm is not None:
            # This step's V-trace targets join the return statistics the next step reads
            # (Sample Factory folds them in before its step; here the loss makes them).
            value_norm.update(actions.numel(),
                              *vtrace_target_moments(metrics, outputs.value.shape[0]))
            metrics["stats/value_norm_std"] = float(value_norm.std.mean())
        self.steps += 1
        return metrics

    def state_dict(self) -> dict:
        return {
            "net": self.net.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "steps": self.steps,
            "skipped": self.skipped,
        }

    def load_state_dict(self, state: dict) -> None:
        self.net.load_state_dict(state["net"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.steps, self.skipped = state["steps"], state["skipped"]
