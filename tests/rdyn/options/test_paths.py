"""rdyn/options/paths.py: output paths checked before any work; outputs distinct from each other
and from the inputs."""
from __future__ import annotations

import os

import pytest

from rdyn.options import paths
from rdyn.options.table import COMMANDS
from rdyn.output import UsageError


def test_output_file_and_folder_checks(tmp_path):
    paths.check_output_path("--out", str(tmp_path / "rows.csv"))
    assert not os.listdir(tmp_path)                                 # the probe leaves nothing behind
    with pytest.raises(UsageError, match=r"--out: .* is a directory, not a file"):
        paths.check_output_path("--out", str(tmp_path))
    with pytest.raises(UsageError, match=r"--out: folder .*missing does not exist"):
        paths.check_output_path("--out", str(tmp_path / "missing" / "rows.csv"))
    with pytest.raises(UsageError, match="names a file descriptor"):
        paths.check_output_path("--out", "/dev/stdout")
    paths.check_output_path("--out", str(tmp_path / "new" / "deeper"), kind="dir")   # created later
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="is not a directory"):
        paths.check_output_path("--out", str(tmp_path / "file"), kind="dir")


def test_outputs_are_distinct_and_never_an_input(tmp_path):
    claims, teacher = COMMANDS["claims"], COMMANDS["teacher"]
    same = str(tmp_path / "same.md")
    with pytest.raises(UsageError, match="names the same file as --report"):
        paths.check_distinct_outputs(claims, {"report": same, "errata": same})
    groups = tmp_path / "g.json"
    groups.write_text("[]")
    with pytest.raises(UsageError, match="names the input file of --groups"):
        paths.check_distinct_outputs(teacher, {"groups": str(groups), "checkpoint": str(groups)})
    ck = str(tmp_path / "c.npz")
    paths.check_distinct_outputs(teacher, {"checkpoint": ck, "resume": ck})    # the one allowed pair
    assert ("checkpoint", "resume") in paths.OUTPUT_MAY_BE_INPUT
