"""The site's worked examples (docs/examples/*.py, included in the pages by pymdownx.snippets)
do what their pages say: a new Λ, a new E and a new backend each train a short run end to end,
the "From Python" agent loop plays a trained run, and the Python API's example trains, stops,
evaluates, predicts and saves."""

import json
import runpy
from pathlib import Path

import numpy as np
import pytest
import torch

import gdi
import gdi.backend_registry
from gdi.meta.registry import CONTROLLERS
from gdi.policy_space import get_policy_space
from gdi.presets import resolve_config
from gdi.runtime.run_folder.checkpoint import latest_checkpoint, load_checkpoint
from gdi.runtime.wiring import train
from tests.runtime.helpers import TINY, tiny_config

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


def run_example(name: str) -> dict:
    return runpy.run_path(str(EXAMPLES / name))


def meta_rows(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "meta.jsonl").read_text().splitlines()]


def test_a_new_policy_space_trains_through_its_preset(registries, tmp_path):
    example = run_example("normalized_boltzmann.py")
    space = get_policy_space("normalized_boltzmann")
    assert isinstance(space, example["NormalizedBoltzmann"])

    # The torch target policy and the NumPy acting policy are the same π_λ; on one state's
    # advantages, λ = 0 is uniform and a larger λ is sharper.
    advs = torch.randn(1, 1, 6, dtype=torch.float64).expand(1, 5, 6)
    lam = torch.tensor([[0.0], [0.5], [1.0], [4.0], [10.0]], dtype=torch.float64)
    probs = space.log_probs(advs, lam).exp()
    np.testing.assert_allclose(probs.numpy(), space.acting_probs(advs.numpy(), lam.numpy()),
                               rtol=1e-10)
    np.testing.assert_allclose(probs[0].numpy(), np.full(6, 1 / 6))
    assert (probs.max(-1).values.diff() >= 0).all()
    # A new space with the same name is refused, and λ out of its bounds is one clear error.
    with pytest.raises(TypeError, match="registered twice"):
        run_example("normalized_boltzmann.py")
    with pytest.raises(ValueError, match="inv_tau must be >= 0"):
        space.log_probs(advs, -lam)

    run_example("normalized_boltzmann_preset.py")
    config = tiny_config(preset="gdi-i1-normalized")
    assert config.policy_space == "normalized_boltzmann" and config.meta_controller == "bandit"
    result = train(config, tmp_path / "run", show_progress=False, tensorboard=False)
    assert result.frames >= config.frames and np.isfinite(result.final_eval_return)
    assert {len(row["lambda"]) for row in meta_rows(result.run_dir)} == {1}


def test_a_new_meta_controller_trains_and_resumes_its_state(registries, tmp_path):
    example = run_example("thompson.py")
    ThompsonArms = example["ThompsonArms"]
    arms = [[0.5], [1.0], [2.0], [5.0]]

    # Every arm is played once before any is preferred; then the best arm takes most draws.
    controller = ThompsonArms(arms, seed=0)
    first = controller.sample_many(4)
    assert sorted(first[:, 0].tolist()) == [0.5, 1.0, 2.0, 5.0]
    for lam in first:
        controller.update(lam, 10.0 if lam[0] == 2.0 else 0.0)
    for _ in range(50):
        lam = controller.sample()
        controller.update(lam, 10.0 if lam[0] == 2.0 else 0.0)
    np.testing.assert_array_equal(controller.greedy(), [2.0])
    assert (controller.sample_many(100)[:, 0] == 2.0).mean() > 0.8
    copy = ThompsonArms(arms, seed=1)
    copy.load_state_dict(controller.state_dict())
    np.testing.assert_array_equal(copy.sample_many(20), controller.sample_many(20))
    with pytest.raises(ValueError, match="saved with arms"):
        ThompsonArms([[1.0], [3.0]]).load_state_dict(controller.state_dict())

    assert CONTROLLERS["thompson"] is ThompsonArms  # @register_controller, nothing else
    config = tiny_config(preset="gdi-i1", meta_controller="thompson",
                         meta_kwargs=json.dumps({"arms": arms, "index_names": ["inv_tau"]}))
    result = train(config, tmp_path / "run", show_progress=False, tensorboard=False)
    played = {row["lambda"][0] for row in meta_rows(result.run_dir)}
    assert played and played <= {0.5, 1.0, 2.0, 5.0}
    saved = load_checkpoint(latest_checkpoint(result.run_dir))["controllers"][0]
    assert saved["controller"] == "thompson" and sum(saved["counts"]) == len(
        [row for row in meta_rows(result.run_dir)])
    # A λ dimension that does not fit Λ is refused when the config is built.
    with pytest.raises(ValueError, match="dimension 2"):
        tiny_config(preset="gdi-i1", meta_controller="thompson",
                    meta_kwargs=json.dumps({"arms": [[1.0, 0.0]]}))


def test_a_new_backend_trains_a_run_that_another_backend_resumes(tmp_path, monkeypatch):
    # The registry line of gdi/backend_registry.py, and nothing else.
    monkeypatch.setitem(gdi.backend_registry.BACKENDS, "thread", "docs_thread_backend:ThreadBackend")
    monkeypatch.syspath_prepend(str(tmp_path / "modules"))
    (tmp_path / "modules").mkdir()
    (tmp_path / "modules" / "docs_thread_backend.py").write_text(
        (EXAMPLES / "thread_backend.py").read_text())

    config = tiny_config(backend="thread", num_actors=2, frames=1200)
    result = train(config, tmp_path / "run", show_progress=False, tensorboard=False)
    assert result.frames >= 1200 and np.isfinite(result.final_eval_return)
    payload = load_checkpoint(latest_checkpoint(result.run_dir))
    assert len(payload["controllers"]) == 2 and payload["config"]["backend"] == "thread"

    resumed = train(config.replace(frames=2000, backend="inline"), result.run_dir, resume=True,
                    show_progress=False, tensorboard=False)
    assert resumed.frames >= 2000


def test_the_load_agent_example_plays_a_trained_run(tmp_path):
    run = train(tiny_config(frames=800), tmp_path / "run", show_progress=False,
                tensorboard=False).run_dir
    code = (EXAMPLES / "load_agent.py").read_text()
    assert 'gdi.load_agent("runs/<run>"' in code
    namespace: dict = {}
    exec(code.replace("runs/<run>", str(run)), namespace)
    assert namespace["agent"].num_envs == 8
    assert isinstance(namespace["agent"], gdi.Agent)


def test_the_python_api_example_trains_stops_evaluates_predicts_and_saves(tmp_path,
                                                                          monkeypatch):
    """docs/examples/python_api.py on a budget a test affords: the tiny config's fields as
    keywords beside the example's own, and a target every run reaches, so its callback stops
    the run at its first row with episodes."""
    code = (EXAMPLES / "python_api.py").read_text()
    budget, target = 'frames=20_000, backend="inline",', "Curve(target=100.0)"
    assert budget in code and target in code
    tiny = ", ".join(field for field in TINY if not field.startswith("eval_every="))
    code = code.replace(budget, f'frames=4_000, {tiny}, backend="inline",').replace(
        target, "Curve(target=0.0)")
    monkeypatch.chdir(tmp_path)  # its runs/ and bundles/
    namespace: dict = {}
    exec(code, namespace)
    agent, curve, bundle = namespace["agent"], namespace["curve"], namespace["bundle"]
    assert len(curve.rows) == 1 and curve.rows[0][0] == agent.frames < 4_000
    assert agent.run_dir.parent == Path("runs") and (tmp_path / agent.run_dir).is_dir()
    loaded = gdi.load_agent(bundle.path, seed=1)
    assert loaded.frames == agent.frames
    obs = np.random.default_rng(0).normal(size=(8, 4)).astype(np.float32)
    np.testing.assert_array_equal(loaded.predict(obs),
                                  gdi.load_agent(agent.run_dir, seed=1).predict(obs))
    assert isinstance(namespace["action"], int) and namespace["actions"].shape == (2,)


def test_the_presets_in_the_examples_resolve_on_every_kind_of_environment(registries):
    run_example("normalized_boltzmann.py")
    run_example("normalized_boltzmann_preset.py")
    for env in ("ale:Breakout", "minatar:breakout", "gym:CartPole-v1"):
        assert resolve_config("gdi-i1-normalized", env).policy_space == "normalized_boltzmann"


def test_a_grids_results_read_from_python_as_its_page_shows(tmp_path, capsys):
    """docs/examples/grid_results.py on the records the repository keeps: the scores at 1.5M
    frames per setting (the control's two seeds, APPO's two) and the figure of the curves."""
    example = runpy.run_path(str(EXAMPLES / "grid_results.py"))
    out = example["main"](tmp_path / "curves.png")
    printed = capsys.readouterr().out
    assert out.stat().st_size > 10_000
    rows = {line.split()[0]: line.split() for line in printed.splitlines()[3:]}
    assert {"control", "lr-2.5e-4", "APPO"} <= rows.keys()
    assert rows["control"][2] == rows["APPO"][2] == "2"  # runs per system at 1.5M
