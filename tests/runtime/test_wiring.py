"""A run is built in one function that reads as its data flow (``wiring.build_run``):
environments → actors with E → collector → learner → parameter server → actors, each part
built from what it needs and handed to the next; docs/architecture.md shows that function's
own lines."""

import inspect
from pathlib import Path

import torch

from gdi.runtime import wiring
from gdi.runtime.components import resolve_run_env
from gdi.runtime.stop import StopRequest
from tests.runtime.helpers import tiny_config

PAGE = Path(__file__).parents[2] / "docs" / "architecture.md"


def test_the_architecture_page_shows_build_run_line_for_line_in_its_order():
    listing = PAGE.read_text(encoding="utf-8").split("```python\n", 1)[1].split("```", 1)[0]
    code = [line for line in listing.splitlines() if line and not line.startswith("#")]
    source = inspect.getsource(wiring.build_run)
    assert len(code) >= 7 and all(line in source for line in code)
    positions = [source.index(line) for line in code]
    assert positions == sorted(positions)


def test_the_backend_receives_the_parameter_server_holding_the_learners_theta():
    config = tiny_config()
    torch.manual_seed(config.seed)
    parts = wiring.build_run(config, resolve_run_env(config), StopRequest())
    try:
        assert parts.actors.server is parts.server
        actor = parts.actors.actors[0]
        actor.pull(parts.server)
        for pulled, learned in zip(actor.net.state_dict().values(),
                                   parts.learner.net.state_dict().values(), strict=True):
            assert torch.equal(pulled, learned)
    finally:
        parts.actors.close()
