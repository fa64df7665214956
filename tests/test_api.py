"""The public Python API: ``import gdi`` names it without importing torch; ``gdi.train`` trains
the run ``gdi train`` would (same config, same folder) and returns its agent, which predicts,
evaluates and saves; callbacks hear each episode end, metrics row, evaluation and checkpoint,
in the order the run records them, and one of them stops the run; bad input is one line."""

import inspect
import json
import multiprocessing
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch

import gdi
import gdi.api
from gdi.agent import evaluate_checkpoint
from gdi.run_spec import RunSpec
from gdi.runtime.callbacks import Callbacks
from gdi.runtime.run_folder.checkpoint import latest_checkpoint, list_checkpoints
from gdi.runtime.run_folder.run_dir import read_config
from tests.runtime.helpers import TINY, tiny_config
from tests.tolerance import assert_close

#: ``tests.runtime.helpers.TINY`` (a run of a second or two on CartPole) as gdi.train's
#: keywords, typed as Python values: gdi.train turns them back into --set's text.
TINY_FIELDS = {name: json.loads(value) for name, value in
               (assignment.split("=", 1) for assignment in TINY)}
BUDGET = 800


class Recorder(gdi.Callback):
    """Every event with its arguments, in the order heard."""

    def __init__(self) -> None:
        self.events: list[tuple] = []

    def on_log(self, row):
        self.events.append(("log", row["frames"], row))

    def on_evaluation(self, evaluation):
        self.events.append(("evaluation", evaluation.frames, evaluation))

    def on_checkpoint(self, path, frames):
        self.events.append(("checkpoint", frames, path))

    def on_episode_end(self, episode, frames):
        self.events.append(("episode", frames, episode))

    def of(self, kind: str) -> list[tuple]:
        return [event for event in self.events if event[0] == kind]


def tiny_train(run_dir, frames=BUDGET, **options):
    return gdi.train("gdi-i3", env="gym:CartPole-v1", frames=frames, seed=3, backend="inline",
                     run_dir=run_dir, progress=False, tensorboard=False,
                     **{**TINY_FIELDS, **options})


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    recorder = Recorder()
    agent = tiny_train(tmp_path_factory.mktemp("api") / "run", callbacks=[recorder])
    return agent, recorder


def test_import_gdi_names_the_public_api_without_importing_torch():
    code = ("import sys, gdi; print(json.dumps([sorted(n for n in dir(gdi) if not "
            "n.startswith('_')), 'torch' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", "import json; " + code], capture_output=True,
                         text=True, check=True).stdout
    names, torch_imported = json.loads(out)
    assert names == ["Agent", "Callback", "Config", "envs", "load_agent", "presets", "read_run",
                     "resume", "train"]
    assert not torch_imported
    import gdi.agent
    import gdi.config
    import gdi.envs
    import gdi.presets
    import gdi.runtime.callbacks

    assert gdi.train is gdi.api.train and gdi.load_agent is gdi.api.load_agent
    assert gdi.resume is gdi.api.resume
    import gdi.run_records

    assert gdi.read_run is gdi.run_records.read_run
    assert gdi.Agent is gdi.api.Agent and issubclass(gdi.Agent, gdi.agent.Agent)
    assert gdi.Config is gdi.config.Config
    assert gdi.Callback is gdi.runtime.callbacks.Callback
    assert gdi.presets is sys.modules["gdi.presets"] and gdi.envs is sys.modules["gdi.envs"]
    assert set(gdi.__all__) == {*names, "__version__"}
    with pytest.raises(AttributeError, match="no attribute 'trian'"):
        gdi.trian  # noqa: B018


@pytest.mark.parametrize("function", [gdi.api.train, gdi.api.resolve_run_config])
def test_the_defaults_are_gdi_trains(function):
    defaults = {name: parameter.default for name, parameter in
                inspect.signature(function).parameters.items()}
    for name in ("preset", "env", "seed"):
        assert defaults[name] == getattr(RunSpec, name), name


def test_train_writes_the_run_gdi_train_writes_and_returns_its_agent(trained):
    agent, _ = trained
    run = agent.run_dir
    config, _ = read_config(run)
    # The keywords as Python values make the config that --set's text makes.
    assert config == tiny_config(frames=BUDGET, seed=3)
    assert isinstance(agent, gdi.Agent) and agent.frames >= BUDGET
    assert agent.checkpoint == latest_checkpoint(run)
    assert (run / "metrics.jsonl").is_file() and (run / "meta.jsonl").is_file()
    # The line, on a budget a test affords: an evaluation that prints its returns.
    evaluation = agent.evaluate(episodes=2)
    assert len(evaluation.returns) == 2 and all(r >= 1 for r in evaluation.returns)
    assert_close(evaluation.mean_return, float(np.mean(evaluation.returns)))
    assert str(evaluation).startswith(f"mean return {evaluation.mean_return:.2f} over 2 "
                                      "episodes: ")
    assert f"at {agent.frames:,} frames" in str(evaluation)
    assert "gdi-i3 on gym:CartPole-v1" in repr(agent)


def test_callbacks_hear_every_event_with_its_arguments_in_the_order_recorded(trained):
    agent, recorder = trained
    run = agent.run_dir
    # Each event carries the run's frames when it happened; they never go back.
    frames = [event[1] for event in recorder.events]
    assert frames == sorted(frames) and frames[-1] == agent.frames
    # Episodes: the rows of meta.jsonl, one call each, in order.
    episodes = [json.loads(line) for line in (run / "meta.jsonl").read_text().splitlines()]
    heard = recorder.of("episode")
    assert [(f, e.episode_return, e.length, list(e.lam)) for _, f, e in heard] == [
        (row["frames"], row["return"], row["length"], row["lambda"]) for row in episodes]
    # Metrics rows: metrics.jsonl's training rows (its evaluation rows are on_evaluation's).
    written = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    training_rows = [row for row in written if "learner_steps" in row]
    assert [row for _, _, row in recorder.of("log")] == training_rows
    # Evaluations: the eval/ files, the periodic one and the final one.
    evaluations = [e for _, _, e in recorder.of("evaluation")]
    assert [e.frames for e in evaluations] == [
        json.loads(p.read_text())["frames"] for p in sorted((run / "eval").glob("*.json"))]
    assert len(evaluations) == 2 and evaluations[-1].frames == agent.frames
    final = json.loads(sorted((run / "eval").glob("*.json"))[-1].read_text())
    assert list(evaluations[-1].returns) == [e["return"] for e in final["episodes"]]
    # The run ends with its last row, its final evaluation, then its checkpoint.
    assert [event[0] for event in recorder.events[-3:]] == ["log", "evaluation", "checkpoint"]
    assert recorder.events[-1][1:] == (agent.frames, latest_checkpoint(run))


class StopAfterEpisodes(gdi.Callback):
    def __init__(self, episodes: int) -> None:
        self.episodes = episodes
        self.seen = 0

    def on_episode_end(self, episode, frames):
        self.seen += 1
        if self.seen == self.episodes:
            self.stop_training(f"{self.seen} episodes")


def test_a_callback_stops_the_run_early_with_a_checkpoint(tmp_path):
    budget = 20_000
    stopper, recorder = StopAfterEpisodes(5), Recorder()
    agent = tiny_train(tmp_path / "run", frames=budget, callbacks=[stopper, recorder])
    assert stopper.stop_reason == "5 episodes"
    assert agent.frames < budget // 20  # CartPole's first episodes end within ~100 frames
    # The checkpoint of the stop is the newest, the run's last event; no final evaluation.
    assert [p.name for p in list_checkpoints(tmp_path / "run")] == [agent.checkpoint.name]
    assert recorder.events[-1] == ("checkpoint", agent.frames, agent.checkpoint)
    assert not recorder.of("evaluation") and not list((tmp_path / "run" / "eval").iterdir())
    # Nothing was heard after the window the stop came in.
    assert max(event[1] for event in recorder.events) == agent.frames


def test_a_run_clears_the_stop_a_reused_callback_asked_for_before():
    stopper = StopAfterEpisodes(1)
    stopper.stop_training()
    assert stopper.stop_reason == "StopAfterEpisodes asked to stop"
    Callbacks([stopper])
    assert stopper.stop_reason is None


class StopAfterRows(gdi.Callback):
    def __init__(self, rows: int) -> None:
        self.rows = rows
        self.seen = 0

    def on_log(self, row):
        self.seen += 1
        if self.seen == self.rows:
            self.stop_training(f"{self.seen} rows")


def metrics_rows(run) -> list[dict]:
    """metrics.jsonl's rows without their timings (``perf/``), which no two runs share."""
    return [{k: v for k, v in json.loads(line).items() if not k.startswith("perf/")}
            for line in (run / "metrics.jsonl").read_text().splitlines()]


def test_resume_continues_a_stopped_run_to_its_budget_as_if_it_had_not_stopped(tmp_path):
    budget = 2 * BUDGET
    whole = tiny_train(tmp_path / "whole", frames=budget)
    stopped = tiny_train(tmp_path / "stopped", frames=budget, callbacks=[StopAfterRows(3)])
    before = metrics_rows(stopped.run_dir)
    assert stopped.frames < budget and [row["frames"] for row in before][-1] == stopped.frames
    recorder = Recorder()
    resumed = gdi.resume(stopped.run_dir, callbacks=[recorder], progress=False,
                         tensorboard=False)
    assert isinstance(resumed, gdi.Agent) and resumed.run_dir == stopped.run_dir
    assert resumed.frames == whole.frames >= budget
    assert resumed.checkpoint == latest_checkpoint(stopped.run_dir)
    after = metrics_rows(stopped.run_dir)
    # The rows before the stop are kept; the new ones continue from the checkpoint's frames
    # and learner steps, on the schedule of the run that never stopped, to the same numbers
    # (the inline backend repeats the same computations).
    assert after[:len(before)] == before and after[len(before)]["frames"] > stopped.frames
    assert after == metrics_rows(whole.run_dir)
    # The callbacks hear the resumed part alone: from past the checkpoint to the end.
    assert min(event[1] for event in recorder.events) > stopped.frames
    assert recorder.events[-1] == ("checkpoint", resumed.frames, resumed.checkpoint)
    # A finished run has nothing to resume without a larger budget; with one it trains on.
    with pytest.raises(ValueError, match="already finished at"):
        gdi.resume(stopped.run_dir, progress=False, tensorboard=False)
    # The run's own values are accepted: a script may repeat its gdi.train arguments.
    further = gdi.resume(stopped.run_dir, frames=budget + 160, preset="gdi-i3",
                         env="gym:CartPole-v1", seed=3, progress=False, tensorboard=False,
                         **TINY_FIELDS)
    assert further.frames >= budget + 160 > resumed.frames


@pytest.fixture(scope="module")
def stopped_run(tmp_path_factory):
    """A run a callback stopped early: what resumes refuse leaves it as it is."""
    run = tmp_path_factory.mktemp("stopped") / "run"
    tiny_train(run, frames=20_000, callbacks=[StopAfterEpisodes(3)])
    return run


@pytest.mark.parametrize("arguments, message", [
    ({"preset": "gdi-h3"}, "conflicting options: {'preset': ('gdi-i3', 'gdi-h3')}"),
    ({"env": "gym:Acrobot-v1", "seed": 4},
     "conflicting options: {'env': ('gym:CartPole-v1', 'gym:Acrobot-v1'), 'seed': (3, 4)}"),
    ({"learning": "policy-head"}, "conflicting options: {'learning': ('paper', 'policy-head')}"),
    ({"search": "table"}, "conflicting options: {'search': ('its meta_kwargs', 'table')}"),
    ({"torso": "nature"}, "differs from its checkpoint's in torso ('mlp' → 'nature')"),
    ({"frames": 1.5}, "frames=1.5 is not a whole number; allowed: an integer"),
    ({"batchsize": 4}, "batchsize: unknown config field; did you mean batch_size?"),
])
def test_a_resume_that_would_change_what_the_run_learns_is_one_line(stopped_run, arguments,
                                                                   message):
    run = stopped_run
    files = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    with pytest.raises(ValueError) as error:
        gdi.resume(run, progress=False, tensorboard=False, **arguments)
    assert message in str(error.value) and "\n" not in str(error.value)
    if "conflicting" in message:
        assert str(error.value).startswith(f"gdi.resume continues {run} with its saved config; ")
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == files


def test_predict_gives_pi_lambdas_actions_for_one_observation_or_a_batch(trained):
    agent = gdi.load_agent(trained[0].run_dir)
    obs = np.random.default_rng(0).normal(size=(6, 4)).astype(np.float32)
    single = agent.predict(obs[0])
    assert isinstance(single, int) and 0 <= single < agent.num_actions
    batch = agent.predict(obs)
    assert batch.dtype == np.int64 and batch.shape == (6,)
    assert ((batch >= 0) & (batch < agent.num_actions)).all()
    # Deterministic: π_λ's most probable action, for GDI-I³ (one family, π_λ a mixture of
    # softmaxes of A at positive inverse temperatures) A's argmax, at an episode's first step.
    net = agent.net
    with torch.no_grad():
        out, _ = net(torch.from_numpy(obs)[None], torch.zeros(1, 6, dtype=torch.long),
                     torch.zeros(1, 6), torch.ones(1, 6, dtype=torch.bool),
                     net.initial_state(6))
    np.testing.assert_array_equal(agent.predict(obs, deterministic=True),
                                  out.logits[0, 0].argmax(-1).numpy())
    # A loop of act and observe carries on as if predict had not been called.
    agent.reset(6)
    agent.act(obs)
    carried, pending = agent.carried(), agent.pending
    agent.predict(obs)
    assert agent.pending is pending
    for name, value in agent.carried().items():  # copies of what the loop carries: equal
        assert (torch.equal(value, carried[name]) if isinstance(value, torch.Tensor)
                else np.array_equal(value, carried[name])), name
    agent.observe(np.ones(6), np.zeros(6, bool), np.zeros(6, bool))
    with pytest.raises(ValueError, match=r"shape \(6, 5\); predict takes one observation of "
                                         r"shape \(4,\) or a batch"):
        agent.predict(np.zeros((6, 5)))


def test_evaluate_plays_what_gdi_evaluate_plays(trained, tmp_path):
    run = shutil.copytree(trained[0].run_dir, tmp_path / "run")
    evaluation = gdi.load_agent(run).evaluate(episodes=3)
    _, results = evaluate_checkpoint(run, episodes=3)
    # The same network, seeds and generators in one process: the same episodes exactly.
    assert list(evaluation.episodes) == results
    with pytest.raises(ValueError, match="episodes=0; allowed: a whole number of at least 1"):
        gdi.load_agent(run).evaluate(episodes=0)


def test_save_writes_a_bundle_that_load_agent_loads_and_that_acts_the_same(trained, tmp_path):
    agent = trained[0]
    bundle = agent.save(tmp_path / "bundle")
    assert bundle.path == tmp_path / "bundle" and bundle.card.is_file() and bundle.video is None
    loaded, original = gdi.load_agent(bundle.path, seed=5), gdi.load_agent(agent.run_dir, seed=5)
    for name, value in original.net.state_dict().items():
        assert torch.equal(loaded.net.state_dict()[name], value), name  # a copy
    obs = np.random.default_rng(1).normal(size=(16, 4)).astype(np.float32)
    # Same network, same E's state, same seed: the same draws.
    np.testing.assert_array_equal(loaded.predict(obs), original.predict(obs))
    np.testing.assert_array_equal(loaded.predict(obs, deterministic=True),
                                  original.predict(obs, deterministic=True))
    with pytest.raises(FileExistsError, match="not an empty folder"):
        agent.save(tmp_path / "bundle")


def test_save_evaluates_a_run_stopped_before_its_final_evaluation(tmp_path):
    agent = tiny_train(tmp_path / "run", frames=20_000, callbacks=[StopAfterEpisodes(3)])
    bundle = agent.save(tmp_path / "bundle")
    evaluation = json.loads(next((bundle.path / "eval").glob("*.json")).read_text())
    assert evaluation["frames"] == agent.frames
    assert len(evaluation["episodes"]) == TINY_FIELDS["eval_episodes"]


def test_train_refuses_in_a_spawned_process_that_imports_the_script(monkeypatch, tmp_path):
    """A script without ``if __name__ == "__main__":`` runs gdi.train again in each actor the
    local backend spawns, while multiprocessing imports it there (``_inheriting``, what
    multiprocessing's own check reads): refused there at once, with the fix."""
    monkeypatch.setattr(multiprocessing.current_process(), "_inheriting", True, raising=False)
    with pytest.raises(RuntimeError,
                       match=re.escape('call gdi.train under if __name__ == "__main__":')):
        tiny_train(tmp_path / "run")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("arguments, message", [
    ({"preset": "gdi-i4"}, "unknown preset 'gdi-i4' (did you mean 'gdi-i3'"),
    ({"env": "gym:CartPol-v1"}, "unknown Gymnasium id 'CartPol-v1'"),
    ({"batchsize": 4}, "batchsize: unknown config field; did you mean batch_size?"),
    ({"envs_per_actor": 1.5}, "envs_per_actor=1.5: envs_per_actor takes an integer"),
    ({"frames": 1.5}, "frames=1.5 is not a whole number; allowed: an integer"),
    ({"frames": 20}, "frames=20 ends before the first learner step"),
    ({"backend": "threads"}, "backend must be one of inline, local, ray, got 'threads'"),
    ({"learning": "policyhead"}, "learning: unknown value 'policyhead'; allowed: paper, "),
    ({"torso": object()}, "not a value a config field takes; allowed: a number, a string"),
    ({"callbacks": [print]}, "is not a gdi.Callback; allowed: instances of a subclass"),
])
def test_bad_input_is_one_line_naming_it_before_anything_is_written(tmp_path, arguments,
                                                                     message):
    options = {"preset": "gdi-i3", "env": "gym:CartPole-v1", "frames": BUDGET, **arguments}
    with pytest.raises(ValueError) as error:
        gdi.train(options.pop("preset"), options.pop("env"), backend=options.pop("backend",
                  "inline"), run_dir=tmp_path / "run", progress=False, tensorboard=False,
                  **{**TINY_FIELDS, **options})
    assert message in str(error.value) and "\n" not in str(error.value)
    assert not (tmp_path / "run").exists()
