"""Parts ask for their own config (issue 70): under ``gdi/runtime/``, only the composition root
takes a whole ``Config``; every other part's signature names the layer it reads
(``Config.layer``) or the values it reads. docs/architecture.md, "How the config reaches the
parts", states the rule this test holds the code to."""

import ast
from pathlib import Path

import pytest

from gdi.config import LAYERS, Config
from gdi.runtime_config import ActorsConfig, ReplayConfig

RUNTIME = Path(__file__).parents[2] / "gdi" / "runtime"

#: The composition root (it builds the parts from the Config) and the run folder's record of
#: the config: the only runtime modules allowed a parameter or attribute of type Config.
READS_WHOLE_CONFIG = {"wiring.py", "lifecycle.py", "components.py", "run_folder/run_dir.py"}


def config_annotations(path: Path) -> list[str]:
    """``name:line`` of every parameter or attribute annotated ``Config`` in a module
    (``Config``, ``Config | None``, ``"Config"``, ``gdi.config.Config``), and of every
    parameter named ``config`` with no annotation."""

    def names_config(node) -> bool:
        if node is None:
            return False
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return "Config" in {part.strip() for part in node.value.replace("|", " ").split()}
        return any((isinstance(sub, ast.Name) and sub.id == "Config")
                   or (isinstance(sub, ast.Attribute) and sub.attr == "Config")
                   for sub in ast.walk(node))

    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
            # An unannotated parameter named config is taken to be one too.
            found += [f"{node.name}({arg.arg}):{node.lineno}" for arg in args
                      if names_config(arg.annotation)
                      or (arg.arg == "config" and arg.annotation is None)]
        elif isinstance(node, ast.AnnAssign) and names_config(node.annotation):
            found.append(f"{ast.unparse(node.target)}:{node.lineno}")
    return found


def test_only_the_composition_root_takes_a_whole_config():
    offenders = {}
    for path in sorted(RUNTIME.rglob("*.py")):
        relative = path.relative_to(RUNTIME).as_posix()
        if relative not in READS_WHOLE_CONFIG and (found := config_annotations(path)):
            offenders[relative] = found
    assert offenders == {}, ("runtime parts that take the whole Config (hand them "
                             f"config.layer(...) or the values they read): {offenders}")


def test_the_check_finds_a_config_parameter_and_attribute(tmp_path):
    part = tmp_path / "part.py"
    part.write_text("class Part:\n    config: Config\n\n"
                    "def build(config: 'Config | None', replay: ReplayConfig): ...\n"
                    "def make(config, replay: ReplayConfig): ...\n")
    assert sorted(config_annotations(part)) == ["build(config):4", "config:2", "make(config):5"]


def test_a_layer_is_the_configs_fields_of_that_layer_and_nothing_else():
    config = Config(burn_in=7, seq_len=9, seq_stride=3, num_actors=3, envs_per_actor=5,
                    replay_capacity=4096)
    replay = config.layer(ReplayConfig)
    assert type(replay) is ReplayConfig
    assert (replay.burn_in, replay.seq_len, replay.sequence_length) == (7, 9, 16)
    assert not hasattr(replay, "num_actors")
    assert config.layer(ActorsConfig) == ActorsConfig(num_actors=3, envs_per_actor=5,
                                                       pull_every=config.pull_every)
    with pytest.raises(TypeError, match="not one of Config's layers"):
        config.layer(Config)


def test_every_field_of_config_belongs_to_exactly_one_layer():
    import dataclasses

    owners: dict[str, list[str]] = {}
    for layer in LAYERS:
        for field in dataclasses.fields(layer):
            owners.setdefault(field.name, []).append(layer.__name__)
    assert set(owners) == {f.name for f in dataclasses.fields(Config)}
    shared = {name: layers for name, layers in owners.items() if len(layers) > 1}
    assert shared == {}, f"fields declared by two layers: {shared}"
