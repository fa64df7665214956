"""The shared parameter server: a pull returns one version's parameters whole, waits out a
push under way, and no reader (dead or alive) can block the learner's push."""

import multiprocessing
import os
import signal
import threading
import time

import torch

import gdi.runtime.training.parameter_server as parameter_server
from gdi.runtime.training.parameter_server import SharedParameterServer

CONTEXT = multiprocessing.get_context("spawn")


def net(fill: float) -> torch.nn.Module:
    module = torch.nn.Linear(3, 2)
    with torch.no_grad():
        for p in module.parameters():
            p.fill_(fill)
    return module


def values(module: torch.nn.Module) -> set[float]:
    return {float(v) for v in torch.cat([p.detach().reshape(-1) for p in module.parameters()])}


def test_pull_copies_the_newest_version_and_skips_the_copy_when_current():
    server = SharedParameterServer(net(0.0), CONTEXT)
    server.push(net(1.0), version=7)
    reader = net(-1.0)
    assert server.pull(reader, have_version=0) == 7
    assert values(reader) == {1.0}
    with torch.no_grad():
        reader.weight.fill_(5.0)
    assert server.pull(reader, have_version=7) == 7  # already current: nothing copied
    assert 5.0 in values(reader)


def test_a_copy_that_overlapped_a_push_is_taken_again(monkeypatch):
    server = SharedParameterServer(net(0.0), CONTEXT)
    server.push(net(1.0), version=1)
    copy = parameter_server.unflatten_parameters_into
    calls = []

    def copy_while_the_learner_pushes(flat, module):
        copy(flat, module)
        if not calls:  # the first copy is overtaken by a push of version 2
            server.push(net(2.0), version=2)
        calls.append(1)

    monkeypatch.setattr(parameter_server, "unflatten_parameters_into",
                        copy_while_the_learner_pushes)
    reader = net(-1.0)
    assert server.pull(reader, have_version=0) == 2
    assert values(reader) == {2.0} and len(calls) == 2


def test_a_pull_waits_while_a_push_is_under_way():
    server = SharedParameterServer(net(0.0), CONTEXT)
    server._version.value = 3
    server._sequence.value = 1  # the learner is writing
    reader, result = net(-1.0), []
    thread = threading.Thread(target=lambda: result.append(server.pull(reader, 0)))
    thread.start()
    time.sleep(0.3)
    assert not result, "a pull returned in the middle of a push"
    server._sequence.value = 2
    thread.join(timeout=10)
    assert result == [3]


def pull_and_hang(server, inside) -> None:
    """A reader process that stops for good in the middle of its copy."""

    def hang(flat, module):
        inside.set()
        time.sleep(3600)

    parameter_server.unflatten_parameters_into = hang
    server.pull(net(0.0), have_version=-1)


def test_a_reader_killed_mid_pull_does_not_block_the_next_push():
    server = SharedParameterServer(net(0.0), CONTEXT)
    inside = CONTEXT.Event()
    reader = CONTEXT.Process(target=pull_and_hang, args=(server, inside), daemon=True)
    reader.start()
    try:
        assert inside.wait(timeout=120), "the reader never started its copy"
    finally:
        os.kill(reader.pid, signal.SIGKILL)
        reader.join()
    pusher = threading.Thread(target=server.push, args=(net(4.0), 1), daemon=True)
    pusher.start()
    pusher.join(timeout=10)
    assert not pusher.is_alive(), "the push waits for a reader that died mid-pull"
    assert server.pull(net(0.0), have_version=0) == 1


