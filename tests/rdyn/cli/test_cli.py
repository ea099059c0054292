"""rdyn/cli: one module per subcommand (rdyn/cli/NAME.py, ``NAME`` and ``run``), loaded by name;
the text output of a subcommand states the values of its ``--json`` object."""
from __future__ import annotations

import csv
import io
import json

import pytest

from rdyn import cli
from rdyn.cli import (asymptotics, claims, crosscheck, figures, ln, prove, scaling, sweep, teacher,
                      verify)
from cli_runs import run_main

MODULES = (asymptotics, claims, crosscheck, figures, ln, prove, scaling, sweep, teacher, verify)


def test_each_subcommand_module_is_named_as_its_subcommand_and_loaded_by_name():
    assert {m.NAME for m in MODULES} == set(cli.SUBCOMMANDS)
    for module in MODULES:
        assert module.__name__ == f"rdyn.cli.{module.NAME}"
        assert cli._load(module.NAME) is module and callable(module.run)
    assert cli._load("no_such_subcommand") is None


def test_ln_text_states_the_json_values(capsys):
    argv = ["ln", "--data", "spectrum", "--d", "3", "--spectrum", "4,1,1", "--steps", "50", "--quiet"]
    rc, text, _ = run_main(capsys, argv)
    rc_json, out, _ = run_main(capsys, [*argv, "--json"])
    assert rc == rc_json == 0
    values = json.loads(out)
    lines = dict(line.split(None, 1) for line in text.splitlines()[1:] if len(line.split()) == 2)
    assert float(lines["alpha"]) == pytest.approx(values["alpha"], rel=1e-9)
    assert float(lines["loss"]) == pytest.approx(values["loss"], rel=1e-9)
    assert lines["kappa2"] == "6" and values["kappa2"] == 6.0


def test_sweep_csv_equals_the_json_rows(capsys):
    argv = ["sweep", "--grid", "D=20,24;K=2", "--steps", "100", "--quiet"]
    _, text, _ = run_main(capsys, argv)
    _, out, _ = run_main(capsys, [*argv, "--json"])
    rows = json.loads(out)["rows"]
    table = list(csv.DictReader(io.StringIO(text)))
    assert [int(r["t1"]) for r in table] == [r["t1"] for r in rows] == [29, 35]
    assert [float(r["C1"]) for r in table] == [r["C1"] for r in rows]      # every digit of a float64


def test_crosscheck_text_states_the_deviation(capsys):
    rc, text, _ = run_main(capsys, ["crosscheck", "--D", "8", "--K", "2", "--steps", "50", "--quiet"])
    assert rc == 0 and "Model A crosscheck (population): D=8, K=2" in text
    deviation = float(text.split("max_rel_dev = ")[1].split()[0])
    assert 0 <= deviation < 1e-14


def test_verify_prints_one_line_per_check_and_counts_them(capsys):
    rc, out, err = run_main(capsys, ["verify", "--only", "A.precision.*", "--quick"])
    lines = out.splitlines()
    assert rc == 0 and lines and all(line.startswith("[pass       ] A.precision.") for line in lines)
    assert f"rdyn verify: {len(lines)} pass, 0 fail, 0 discrepancy, 0 info ({len(lines)} checks)" in err


def test_prove_resume_command_and_figure_numbers():
    assert prove.grid_resume_command(["--grid", "D=5;K=1", "--out", "r.json", "--json"], "r.json") \
        == "rdyn prove ... --resume r.json"
    assert figures._fmt(None) == "n/a" and figures._fmt(0.125) == "0.12"
