"""The parameter server (PS of the paper's Algorithms GDI-I³/H³): versioned parameters.

The learner pushes every ``push_every`` steps; actors pull every ``pull_every`` steps and tag
what they record with the version they acted with, so the learner can log the policy lag.
Two implementations of one interface: ``InlineParameterServer`` (a dict in the same process)
and ``SharedParameterServer`` (one flat float32 tensor in shared memory with a version and a
sequence counter, readable by actor processes without copying through a pipe or taking a lock).
"""

from __future__ import annotations

import multiprocessing as mp
import time

import torch


def flatten_parameters(module: torch.nn.Module) -> torch.Tensor:
    """The module's state (parameters and buffers) as one flat float32 CPU tensor."""
    return torch.cat([v.detach().reshape(-1).float().cpu() for v in module.state_dict().values()])


def unflatten_parameters_into(flat: torch.Tensor, module: torch.nn.Module) -> None:
    """Copy a ``flatten_parameters`` tensor back into a module of the same architecture."""
    offset = 0
    with torch.no_grad():
        for tensor in module.state_dict().values():
            n = tensor.numel()
            tensor.copy_(flat[offset : offset + n].view_as(tensor))
            offset += n


class InlineParameterServer:
    def __init__(self, module: torch.nn.Module) -> None:
        self.version = 0
        self._flat = flatten_parameters(module)

    def push(self, module: torch.nn.Module, version: int) -> None:
        self._flat = flatten_parameters(module)
        self.version = version

    def pull(self, module: torch.nn.Module, have_version: int) -> int:
        """Copy the parameters into ``module`` if newer than ``have_version``; returns the
        version ``module`` now holds."""
        if self.version != have_version:
            unflatten_parameters_into(self._flat, module)
        return self.version


class SharedParameterServer:
    """Shared-memory parameters for actor processes (picklable to ``spawn``-ed children).

    One writer (the learner), many readers (actors), and no lock: a sequence counter (a
    seqlock). The learner makes the counter odd while it writes and even again when done; a
    reader keeps what it copied only if the counter was even before and unchanged after, and
    copies again otherwise. A lock would be held by whoever dies holding it: an actor killed
    mid-pull would block the learner's next push forever, a learner killed mid-push every
    actor's next pull. Readers never block the learner.

    Exact on x86-64, which orders stores with stores and loads with loads. On a weakly ordered
    CPU (ARM) a reader could in principle miss a write that overlapped its copy and act one
    window with a mix of two consecutive versions; what it records is still the policy it
    acted with (its behaviour probabilities), which is all V-trace and Retrace need.
    """

    #: How long (seconds) a reader waits before it looks again while the learner writes.
    RETRY_S = 1e-4

    def __init__(self, module: torch.nn.Module, context: mp.context.BaseContext) -> None:
        self._flat = flatten_parameters(module).share_memory_()
        self._version = context.Value("q", 0, lock=False)
        self._sequence = context.Value("q", 0, lock=False)  # odd while the learner writes

    @property
    def version(self) -> int:
        return int(self._version.value)

    def push(self, module: torch.nn.Module, version: int) -> None:
        flat = flatten_parameters(module)
        self._sequence.value += 1
        self._flat.copy_(flat)
        self._version.value = version
        self._sequence.value += 1

    def pull(self, module: torch.nn.Module, have_version: int) -> int:
        """Copy the parameters into ``module`` if newer than ``have_version``; returns the
        version ``module`` now holds."""
        if self.version == have_version:
            return have_version
        while True:
            sequence = self._sequence.value
            if sequence % 2:  # a push under way
                time.sleep(self.RETRY_S)
                continue
            version = int(self._version.value)
            unflatten_parameters_into(self._flat, module)
            if self._sequence.value == sequence:
                return version
