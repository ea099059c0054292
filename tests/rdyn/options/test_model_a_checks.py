"""The cross-option checks of Model A's commands read every input file once."""
import json

import pytest

import rdyn
from rdyn.options import model_a_checks


@pytest.mark.parametrize("command", ["teacher", "crosscheck"])
def test_the_groups_file_is_read_once_per_run(tmp_path, monkeypatch, command):
    path = tmp_path / "groups.json"
    path.write_text(json.dumps([[0, 1], [1, 2], [2, 3], [3, 0]]))
    reads = []
    real = model_a_checks.read_groups_file
    monkeypatch.setattr(model_a_checks, "read_groups_file", lambda p: reads.append(p) or real(p))
    options = {"groups": str(path), "steps": 5}
    if command == "crosscheck":
        options.update(M=1, d=4)
    getattr(rdyn, command)(**options)
    assert reads == [str(path)]


def test_the_checks_return_the_groups_they_read_in_place_of_the_path(tmp_path):
    from rdyn.options.validation import validate

    path = tmp_path / "groups.json"
    path.write_text(json.dumps([[0, 1], [1, 2], [2, 0]]))
    values = validate("teacher", {"groups": str(path), "steps": 5})
    assert values["groups"] == [[0, 1], [1, 2], [2, 0]]
    assert validate("teacher", {"steps": 5})["groups"] is None
