"""TrainingEvaluation, the run's evaluations as a part of their own: due every eval_every
frames, each recorded in eval/ and as a metrics row, the next one due eval_every frames after
it; one a stop interrupted records nothing and stays due."""

import json

from gdi.envs import resolve_env
from gdi.meta.config import MetaConfig
from gdi.runtime.components import build_network, env_shapes
from gdi.runtime.run_folder.run_dir import MetricsWriter
from gdi.runtime.training.periodic_evaluation import TrainingEvaluation
from gdi.runtime_config import OutputConfig
from tests.runtime.helpers import tiny_config


def parts(tmp_path):
    config = tiny_config(eval_every=400, eval_episodes=2)
    env_config = resolve_env(config.env)
    net = build_network(config, env_shapes(env_config, config.seed))
    writer = MetricsWriter(tmp_path, tensorboard=False)
    evaluation = TrainingEvaluation(config.layer(OutputConfig), config.layer(MetaConfig),
                                    config.policy_space, env_config, config.env, config.seed,
                                    tmp_path, writer)
    return config, evaluation, net, writer


def test_due_every_eval_every_frames_and_recorded(tmp_path):
    _, evaluation, net, writer = parts(tmp_path)
    assert not evaluation.due(399) and evaluation.due(400)
    record = evaluation.play(net, 830, None, lambda: False)
    writer.close()
    assert record["frames"] == 830 and len(record["episodes"]) == 2
    assert evaluation.latest is record
    assert evaluation.next_due == 1200 and not evaluation.due(1199)  # past 830, on the grid
    (written,) = (tmp_path / "eval").iterdir()
    assert written.name == "frames_000000000830.json"
    saved = json.loads(written.read_text())
    assert [e["return"] for e in saved["episodes"]] == [e["return"] for e in record["episodes"]]
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert rows == [{"frames": 830, "eval/mean_return": record["mean_return"],
                     "eval/episodes": 2}]


def test_an_interrupted_evaluation_records_nothing_and_stays_due(tmp_path):
    _, evaluation, net, writer = parts(tmp_path)
    assert evaluation.play(net, 400, None, lambda: True) is None
    writer.close()
    assert evaluation.latest is None and evaluation.due(400)
    assert not (tmp_path / "eval").exists() or not any((tmp_path / "eval").iterdir())
