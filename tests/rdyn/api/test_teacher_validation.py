"""Issue 41: the cross-option checks of ``rdyn teacher`` and ``rdyn crosscheck`` are one place in
the options layer (rdyn/options/model_a_checks.py, the commands' ``Command.check``), run by the
shared validation after the checks of each option; ``teacher_request`` only maps the checked
options into the frozen request."""
from __future__ import annotations

import ast
import inspect
import json
import pathlib
import textwrap

import pytest

from cli_runs import run_main
from rdyn.api import _teacher
from rdyn.options import COMMANDS, model_a_checks, typed_options, validate
from rdyn.output import UsageError

ROOT = pathlib.Path(__file__).resolve().parents[3]


def refusal(command: str, given: dict) -> str:
    with pytest.raises(UsageError) as info:
        validate(command, given, api=True)
    return str(info.value)


def test_the_model_a_commands_have_their_check_in_the_options_layer():
    assert COMMANDS["teacher"].check is model_a_checks.check_teacher
    assert COMMANDS["crosscheck"].check is model_a_checks.check_crosscheck


@pytest.mark.parametrize("given,message", [
    ({"D": 5, "K": 5}, "need K < D, got K=5, D=5"),
    ({"task": "gcn", "K": 4}, "task gcn has K = 3; --K cannot change it"),
    ({"groups": [[0], [1]], "task": "cnn"}, "--groups and --task are exclusive"),
    ({"groups": [[0], [1]], "D": 3}, "--groups has 2 groups but --D is 3"),
    ({"groups": [[1], [0]], "K": 2}, "--groups have size 1 but --K is 2"),
    ({"activation": "expr"}, "--activation expr needs --activation-expr EXPR"),
    ({"record": "2000"}, "--record: step 2000 needs --steps (the default run may stop at step 1000)"),
    ({"tstar_attention": 0.9}, "T* is never reached when --tstar-attention >= 1/K; give --steps"),
    ({"precision": "float64", "dps": 20}, "--precision float64 takes no --dps"),
    ({"method": "flow", "steps": 10}, "--steps applies to --method map only"),
    ({"method": "slow", "dps": 150}, "--dps must be at most 100 with --method slow"),
    ({"activation": "erf", "precision": "dd"}, "--precision is not available with --activation erf"),
])
def test_teacher_refusals_come_from_the_validation(given, message):
    """The API keyword, the CLI flag and ``validate`` itself refuse with one message."""
    assert refusal("teacher", given).startswith(message)


def test_the_cli_reports_the_same_line(capsys):
    rc, out, err = run_main(capsys, ["teacher", "--D", "5", "--K", "5"])
    assert (rc, out) == (2, "") and err == "rdyn teacher: error: need K < D, got K=5, D=5\n"


def test_the_options_own_checks_come_first():
    """Two problems: an option's own refusal (applicability, range) before the cross check."""
    assert refusal("teacher", {"D": 5, "K": 5, "kappa": 0.5}) == \
        "--kappa applies to --activation leaky only"
    # within the cross check, the model's size before the run's options
    assert refusal("teacher", {"D": 5, "K": 5, "record": "x"}) == "need K < D, got K=5, D=5"
    assert refusal("teacher", {"record": "2000", "method": "flow"}).startswith(
        "--record: step 2000 needs --steps")
    assert refusal("teacher", {"method": "flow", "record": "3", "steps": 5}) == \
        "--record applies to --method map only"


def test_crosscheck_refusals_come_from_the_validation(tmp_path):
    assert refusal("crosscheck", {"activation": "erf", "vstar_row_norms": "1,2"}) == \
        "--vstar-row-norms: 2 norms for --M 4 rows"
    assert refusal("crosscheck", {"activation": "erf", "mode": "sgd"}).startswith(
        "--mode sgd is not available for the smooth activations")
    assert refusal("crosscheck", {"D": 10**7, "K": 2}).startswith("--D 10000000: this job needs")
    groups = tmp_path / "g.json"
    groups.write_text(json.dumps([[0, 1], [1, 2], [2, 0]]))
    assert refusal("crosscheck", {"groups": str(groups), "K": 1}) == \
        "--groups have size 2 but --K is 1"


def test_checked_options_map_into_a_request_without_checks():
    """teacher_request calls no require and raises nothing of its own: it maps."""
    source = textwrap.dedent(inspect.getsource(_teacher.teacher_request))
    tree = ast.parse(source)
    names = {n.func.id for n in ast.walk(tree)
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert "require" not in names and not any(isinstance(n, ast.Raise) for n in ast.walk(tree))
    v = typed_options("teacher", validate("teacher", {"D": 12, "K": 3, "steps": 10,
                                                      "record": "3,1", "quiet": True}))
    request = _teacher.teacher_request(v)
    assert request.control.record == (1, 3) and request.model.config.D == 12


def test_the_options_layer_imports_neither_the_api_nor_the_cli():
    for path in sorted((ROOT / "rdyn" / "options").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(("rdyn.api", "rdyn.cli")), path.name
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith(("rdyn.api", "rdyn.cli")) for a in node.names)
