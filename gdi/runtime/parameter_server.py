"""The parameter server (PS of the paper's Algorithms GDI-I³/H³): versioned parameters.

The learner pushes every ``push_every`` steps; actors pull every ``pull_every`` steps and tag
what they record with the version they acted with, so the learner can log the policy lag.
Two implementations of one interface: ``InlineParameterServer`` (a dict in the same process)
and ``SharedParameterServer`` (one flat float32 tensor in shared memory, a version counter and
a lock, readable by actor processes without copying through a pipe).
"""

from __future__ import annotations

import multiprocessing as mp

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
    """Shared-memory parameters for actor processes (picklable to ``spawn``-ed children)."""

    def __init__(self, module: torch.nn.Module, context: mp.context.BaseContext) -> None:
        self._flat = flatten_parameters(module).share_memory_()
        self._version = context.Value("q", 0, lock=False)
        self._lock = context.Lock()

    @property
    def version(self) -> int:
        return int(self._version.value)

    def push(self, module: torch.nn.Module, version: int) -> None:
        flat = flatten_parameters(module)
        with self._lock:
            self._flat.copy_(flat)
            self._version.value = version

    def pull(self, module: torch.nn.Module, have_version: int) -> int:
        if self.version == have_version:
            return have_version
        with self._lock:
            version = int(self._version.value)
            unflatten_parameters_into(self._flat, module)
        return version
