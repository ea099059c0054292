"""Typed options (issue 29, item 2): one frozen dataclass per subcommand, generated from the
option table into rdyn/option_types.py, built by the shared validation and passed from the API
(and the CLI) to the drivers, which read attributes; a type checker (mypy) names a misspelt
option in the API layer."""
import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rdyn import option_types, options as opt
from rdyn.output import UsageError

from checkout import ROOT
REGENERATE = "python -c 'from rdyn.options import write_option_types; write_option_types()'"


def test_generated_module_is_current():
    text = (ROOT / "rdyn" / "option_types.py").read_text()
    assert text == opt.option_types_source(), f"rdyn/option_types.py is out of date: {REGENERATE}"


def test_writer_writes_what_the_source_says(tmp_path):
    path = opt.write_option_types(str(tmp_path / "option_types.py"))
    assert Path(path).read_text() == opt.option_types_source()
    assert os.listdir(tmp_path) == ["option_types.py"]   # no temporary sibling left behind


def test_one_frozen_class_per_command_with_every_option_in_table_order():
    assert list(option_types.CLASSES) == list(opt.COMMANDS)
    for name, command in opt.COMMANDS.items():
        cls = option_types.CLASSES[name]
        assert cls.__name__ == opt.option_class_name(name)
        assert [f.name for f in dataclasses.fields(cls)] == [o.name for o in command.options]
        assert cls.__dataclass_params__.frozen


def test_field_types_follow_the_option_kinds():
    fields = {f.name: f.type for f in dataclasses.fields(option_types.TeacherOptions)}
    assert fields["steps"] == "int | None"                          # int, not given -> None
    assert fields["vstar_norm2"] == "float"                         # float with a default
    assert fields["method"] == "Literal['map', 'flow', 'slow']"     # choice with a default
    assert fields["precision"] == "Literal['float64', 'dd', 'arb'] | None"
    assert fields["certify"] == "bool"                              # flag
    assert fields["checkpoint"] == "str | os.PathLike[str] | None"  # output file
    assert fields["groups"] == "str | os.PathLike[str] | list[Any] | tuple[Any, ...] | None"
    only = {f.name: f.type for f in dataclasses.fields(option_types.VerifyOptions)}["only"]
    assert only == "list[str] | None"                               # repeatable str
    sweep = {f.name: f.type for f in dataclasses.fields(option_types.SweepOptions)}
    assert (sweep["grid"], sweep["steps"]) == ("str", "int")        # required: never None


def test_validation_builds_the_typed_object_with_the_same_checks():
    from rdyn.api._common import options

    v = options("teacher", {"D": 20.0, "K": 4, "steps": 1e3})
    assert type(v) is option_types.TeacherOptions
    assert (v.D, v.K, v.steps, v.eta, v.vstar_norm2, v.method) == (20, 4, 1000, None, 1.0, "map")
    assert type(v.D) is int and type(v.steps) is int
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.steps = 5
    with pytest.raises(UsageError, match="^unknown option 'stpes' for rdyn teacher"):
        options("teacher", {"stpes": 5})
    with pytest.raises(UsageError, match=r"^--kappa applies to --activation leaky only$"):
        options("teacher", {"kappa": 0.2})


class _Reached(Exception):
    pass


def _capture(monkeypatch, module: str) -> list:
    seen = []

    def fake_run(v, *args, **kwargs):
        seen.append(v)
        raise _Reached

    monkeypatch.setattr(f"rdyn.api._{module}.run", fake_run)
    return seen


@pytest.mark.parametrize("name, kwargs, argv, field, value", [
    ("teacher", {"steps": 10}, ["--steps", "10"], "steps", 10),
    ("ln", {"steps": 7, "model": "noln"}, ["--steps", "7", "--model", "noln"], "model", "noln"),
    ("sweep", {"grid": "D=8;K=2", "steps": 10}, ["--grid", "D=8;K=2", "--steps", "10"], "grid",
     "D=8;K=2"),
])
def test_api_and_cli_pass_the_typed_object_to_the_driver(monkeypatch, name, kwargs, argv, field,
                                                          value):
    import rdyn
    from rdyn.cli import main

    seen = _capture(monkeypatch, name)
    with pytest.raises(_Reached):
        getattr(rdyn, name)(**kwargs)
    with pytest.raises(_Reached):
        main([name, *argv])
    api, cli = seen
    assert type(api) is type(cli) is option_types.CLASSES[name]
    assert getattr(api, field) == getattr(cli, field) == value
    assert cli.json is False and api == cli   # the API and the CLI build the same object


# ---------------------------------------------------------------------------------------------
# The type checker
# ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def mypy(tmp_path_factory):
    pytest.importorskip("mypy")
    cache = tmp_path_factory.mktemp("mypy-cache")

    def run(*paths) -> subprocess.CompletedProcess:
        # the API layer alone: imported modules are read (silently) for their types, missing
        # ones (the checkout's mapped subpackages, untyped libraries) are Any
        return subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=silent",
                               "--ignore-missing-imports", "--cache-dir", str(cache),
                               "--no-color-output", *map(str, paths)], cwd=ROOT,
                              env=dict(os.environ, MYPYPATH=str(ROOT)),
                              capture_output=True, text=True, timeout=600)
    return run


# the layer that handles options: the API, the CLI, the option table and the generated types
API_LAYER = ("rdyn/api", "rdyn/cli", "rdyn/options", "rdyn/option_types.py")


def test_mypy_finds_no_error_in_the_api_layer(mypy):
    out = mypy(*API_LAYER)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith("Success: no issues found")


def test_mypy_reports_a_misspelt_option(mypy, tmp_path):
    snippet = tmp_path / "snippet.py"
    snippet.write_text(
        "from rdyn.option_types import LnOptions, TeacherOptions\n"
        "\n"
        "\n"
        "def right(v: TeacherOptions) -> object:\n"
        "    return v.steps, v.activation_expr\n"
        "\n"
        "\n"
        "def misspelt(v: TeacherOptions) -> object:\n"
        "    return v.stpes\n"
        "\n"
        "\n"
        "def other_command(v: LnOptions) -> object:\n"
        "    return v.task\n")   # a teacher option, not one of rdyn ln
    out = mypy(snippet)
    errors = [line for line in out.stdout.splitlines() if ": error:" in line]
    assert out.returncode == 1, out.stdout + out.stderr
    assert len(errors) == 2, out.stdout
    assert 'snippet.py:9: error: "TeacherOptions" has no attribute "stpes"' in errors[0]
    assert 'snippet.py:13: error: "LnOptions" has no attribute "task"' in errors[1]
