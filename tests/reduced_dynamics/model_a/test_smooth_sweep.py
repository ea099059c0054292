"""rdyn sweep with a smooth activation (reduced_dynamics/model_a/smooth_sweep.py): rows equal single
rdyn.teacher runs exactly; checkpoint/resume; refusals."""
from __future__ import annotations

import csv

import pytest

import rdyn
from rdyn.cli import main
from rdyn.reduced_dynamics.model_a.batch import ROW_FIELDS

GRID = "D=6,8;K=2;eta=0.3,0.4"     # 2 x 2: D = 6 reaches T* (~1e3 steps), D = 8 does not
STEPS = 3000


def interrupt_second_run(monkeypatch) -> None:
    """Make the second model_a.smooth.run of a sweep raise KeyboardInterrupt (Ctrl-C)."""
    from rdyn.reduced_dynamics.model_a import smooth as model_a_smooth

    real, calls = model_a_smooth.run, []

    def interrupt_second(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(model_a_smooth, "run", interrupt_second)


@pytest.mark.parametrize("activation", ["erf", "tanh"])
def test_sweep_rows_equal_teacher_runs(activation):
    rows = rdyn.sweep(grid=GRID, steps=STEPS, activation=activation, quiet=True).rows
    assert [(r["D"], r["eta"]) for r in rows] == [(6, 0.3), (6, 0.4), (8, 0.3), (8, 0.4)]
    for row in rows:
        single = rdyn.teacher(D=row["D"], K=2, activation=activation, eta=row["eta"],
                              steps=STEPS, quiet=True).to_dict()
        final = single["final"]
        assert row["steps"] == final["t"] == STEPS
        assert (row["t1"], row["T_star"]) == (single["t1"], single["T_star"])
        for key in ("C1", "C2", "C3", "p", "C1_star", "loss"):
            assert row[key] == final[key], (activation, row["D"], row["eta"], key)
        assert row["loss_slope"] == single["loss_slope"]
        assert row["diverged_at_step"] is None and single["diverged_at_step"] is None
        assert (row["activation"], row["M"], row["kappa"], row["sigma_prime_zero"]) == (
            activation, 1, None, None)
    # the phases are inside the run for D = 6 only, and a larger eta reaches them sooner
    assert rows[0]["T_star"] > rows[1]["T_star"] > 0 and rows[1]["loss_slope"] < -1
    assert rows[2]["T_star"] is None and rows[3]["T_star"] is None


def test_smooth_sweep_resumes_after_interrupt(tmp_path, monkeypatch):
    from rdyn.reduced_dynamics.runs.checkpoint import CheckpointError, Interrupted
    from rdyn.reduced_dynamics.model_a.grid import parse_grid, smooth_config
    from rdyn.derivations.activations import Activation

    from rdyn.reduced_dynamics.model_a.smooth_sweep import run_smooth_batch

    configs = [smooth_config(p, Activation("erf"), 2) for p in parse_grid("D=6;K=2;eta=0.2,0.4")]
    whole = run_smooth_batch(configs, 500).rows

    path = tmp_path / "s.npz"
    interrupt_second_run(monkeypatch)
    with pytest.raises(Interrupted) as info:
        run_smooth_batch(configs, 500, checkpoint=str(path))
    assert info.value.step == 500 and path.exists()
    monkeypatch.undo()
    assert run_smooth_batch(configs, 500, resume=str(path)).rows == whole
    assert whole[0]["M"] == 2 and whole[0]["C1"] != whole[1]["C1"]
    with pytest.raises(CheckpointError, match="steps"):
        run_smooth_batch(configs, 400, resume=str(path))


def test_smooth_sweep_csv_has_every_field(tmp_path, capsys):
    out = tmp_path / "rows.csv"
    assert main(["sweep", "--grid", "D=6;K=2;eta=0.4", "--steps", "50", "--activation",
                 "expr", "--activation-expr", "x*exp(-x**2/8)", "--M", "3", "--quiet",
                 "--out", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert tuple(rows[0]) == ROW_FIELDS
    assert (rows[0]["activation"], rows[0]["M"], rows[0]["kappa"]) == ("expr:x*exp(-x**2/8)",
                                                                      "3", "")


@pytest.mark.parametrize("args, message", [
    (["--activation", "erf", "--fast"], "--fast is not supported with --scheduler or a smooth"),
    (["--activation", "tanh", "--scheduler", "tcp://x:1"], "--scheduler is not supported"),
    (["--M", "2"], "--M applies to a smooth --activation only"),
    (["--activation", "expr"], "--activation expr needs --activation-expr EXPR"),
    (["--activation-expr", "x**2"], "sigma'(0) = 0"),
])
def test_smooth_sweep_refusals(capsys, args, message):
    rc = main(["sweep", "--grid", "D=6;K=2", "--steps", "5", "--quiet", *args])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and message in err, err


def test_smooth_sweep_refuses_unused_grid_keys(capsys):
    for key in ("kappa=0.2", "sigma_prime_zero=2", "activation=relu"):
        rc = main(["sweep", "--grid", f"D=6;K=2;{key}", "--steps", "5", "--activation", "gelu"])
        err = capsys.readouterr().err.strip()
        assert rc == 2 and "does not apply with --activation gelu" in err, err


def test_cli_smooth_sweep_interrupt_and_resume(tmp_path, monkeypatch, capsys):
    import json
    import sys

    args = ["sweep", "--grid", "D=6;K=2;eta=0.2,0.4", "--steps", "300", "--activation", "erf",
            "--json", "--quiet"]
    assert main(args) == 0
    whole = json.loads(capsys.readouterr().out)
    path = tmp_path / "c.npz"
    interrupt_second_run(monkeypatch)
    monkeypatch.setattr(sys, "argv", ["rdyn", *args, "--checkpoint", str(path)])
    assert main(args + ["--checkpoint", str(path)]) == 130
    line, = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("rdyn sweep: interrupted at ") and line.endswith(f"--resume {path}")
    monkeypatch.undo()
    assert main(args + ["--resume", str(path)]) == 0
    assert json.loads(capsys.readouterr().out) == whole
    # the checkpoint of an erf sweep does not resume a tanh sweep
    args[args.index("erf")] = "tanh"
    assert main(args + ["--resume", str(path)]) == 2
    assert "different configs" in capsys.readouterr().err
