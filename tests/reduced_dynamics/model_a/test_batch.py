"""Batched float64 sweeps: reduced_dynamics/model_a/batch.py and rdyn sweep."""
from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rdyn.derivations.fields import FieldError
from rdyn.reduced_dynamics.model_a.grid import parse_grid
from rdyn.reduced_dynamics.model_a.batch import run_batch
from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, run

from checkout import ROOT

CONFIGS = [
    TeacherConfig(D=8, K=2, eta=0.5),                 # T* = 4610 inside the run
    TeacherConfig(D=8, K=4),                          # p(0) = 1/8 = 1/(2K): T* = 0
    TeacherConfig(D=20, K=4, eta=0.5),                # T* not reached
    TeacherConfig(D=12, K=3, eta=0.1, vstar_norm2=2.0),
    TeacherConfig(D=12, K=3, activation="leaky", kappa=0.2),
    TeacherConfig(D=10, K=2, activation="identity", eta=0.2, logit_scale="sqrtD"),
]
STEPS = 12000


def test_batch_equals_single_runs_bit_for_bit():
    rows = run_batch(CONFIGS, STEPS, chunk=777).rows   # chunking must not matter
    assert [r["D"] for r in rows] == [c.D for c in CONFIGS]
    for cfg, row in zip(CONFIGS, rows):
        single = run(cfg, steps=STEPS)
        assert row["steps"] == single.steps == STEPS
        assert (row["t1"], row["T_star"]) == (single.t1, single.T_star)
        for key in ("C1", "C2", "C3", "p", "C1_star", "loss"):
            assert row[key] == float(getattr(single.final, key)), (cfg, key)
        assert row["loss_slope"] == single.loss_slope
        assert row["eta"] == single.eta
    assert rows[0]["T_star"] == 4610 and rows[1]["T_star"] == 0 and rows[2]["T_star"] is None


def test_parse_grid_product_ranges_and_kappa():
    points = parse_grid("D=20,36;K=2,4;eta=0.1:0.3:3")
    assert len(points) == 12
    assert [(p["D"], p["K"], p["eta"]) for p in points[:4]] == [
        (20, 2, 0.1), (20, 2, 0.2), (20, 2, 0.3), (20, 4, 0.1)]
    assert points[0]["activation"] == "relu" and points[0]["vstar_norm2"] == 1.0
    # kappa multiplies leaky rows only
    points = parse_grid("D=8;K=2;activation=relu,leaky;kappa=0,0.5;eta=auto")
    assert [(p["activation"], p["kappa"]) for p in points] == [
        ("relu", 0.1), ("leaky", 0.0), ("leaky", 0.5)]
    assert points[0]["eta"] is None
    for bad in ("D=", "Q=3", "D=20;D=36", "eta=0.1:0.2", "K=x", ""):
        with pytest.raises(FieldError, match="^grid") as info:   # the field, not the option (--grid)
            parse_grid(bad)
        assert info.value.field == "grid" and info.value.message(lambda f: "--" + f).startswith("--grid")
    # a configuration refused at one point keeps the field it names, behind the grid point
    from rdyn.reduced_dynamics.model_a.grid import config
    with pytest.raises(FieldError) as info:
        config(parse_grid("D=4;K=4")[0])
    assert info.value.fields[-1] == "grid" and str(info.value).startswith("grid point (D=4, K=4): ")


def rdyn(*args):
    return subprocess.run([sys.executable, "-m", "rdyn", "sweep", *args], cwd=ROOT,
                          capture_output=True, text=True)


def test_cli_sweep_csv_and_json(tmp_path):
    grid = "D=8,12;K=2,3;eta=0.1,0.5"
    out_csv = tmp_path / "rows.csv"
    out = rdyn("--grid", grid, "--steps", "3000", "--out", str(out_csv), "--json")
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(io.StringIO(out_csv.read_text())))
    assert len(rows) == 8
    data = json.loads(out.stdout)          # exactly one JSON object on stdout
    assert data["steps"] == 3000 and len(data["rows"]) == 8
    for r_csv, r_json in zip(rows, data["rows"]):
        assert float(r_csv["C1"]) == r_json["C1"] and float(r_csv["loss"]) == r_json["loss"]
        assert (r_csv["T_star"] or None) == (None if r_json["T_star"] is None
                                             else str(r_json["T_star"]))
    first = data["rows"][0]
    single = run(TeacherConfig(D=8, K=2, eta=0.1), steps=3000)
    assert first["C2"] == single.final.C2 and first["t1"] == single.t1


@pytest.mark.parametrize("args, message", [
    (["--grid", "D=4,8;K=4", "--steps", "10"], "K < D"),
    (["--grid", "D=8;Q=1", "--steps", "10"], "unknown key"),
    (["--grid", "D=8", "--steps", "10", "--dps", "20"], "float64 only"),
    (["--grid", "D=8;K=2;eta=-1", "--steps", "10"], "eta must be > 0"),
    (["--grid", "D=8;K=2;activation=tanh", "--steps", "10"], "activation"),
])
def test_bad_input_one_line_exit_2(args, message):
    out = rdyn(*args)
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]


def test_skip_invalid():
    out = rdyn("--grid", "D=4,8;K=4", "--steps", "10", "--skip-invalid", "--json", "--quiet")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["rows"]
    assert [(r["D"], r["K"]) for r in rows] == [(8, 4)]


def test_dask_local_cluster_same_rows():   # ~4 s: cluster start-up plus a CLI subprocess
    distributed = pytest.importorskip("distributed")
    from rdyn.reduced_dynamics.model_a.batch import run_batch_distributed

    configs = [TeacherConfig(D=8, K=2, eta=eta) for eta in (0.1, 0.3, 0.5)] + [CONFIGS[3]]
    local = run_batch(configs, 5000).rows
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  protocol="tcp://", host="127.0.0.1",
                                  dashboard_address=":0") as cluster:
        remote = run_batch_distributed(configs, 5000, cluster.scheduler_address, per_task=3).rows
        # the CLI against the same scheduler (tasks run in this process's worker)
        out = rdyn("--grid", "D=8;K=2;eta=0.1,0.3,0.5", "--steps", "5000", "--json",
                   "--quiet", "--scheduler", cluster.scheduler_address)
    assert remote == local
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["rows"] == json.loads(json.dumps(local[:3]))


def test_block_size_and_threads_do_not_change_rows():
    import numba

    configs = CONFIGS[:4]  # one group (relu, D): compiled already by the test above
    rows = run_batch(configs, 3000).rows
    assert run_batch(configs, 3000, block=1, chunk=500).rows == rows
    assert run_batch(configs, 3000, block=3).rows == rows
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        assert run_batch(configs, 3000).rows == rows
    finally:
        numba.set_num_threads(threads)


# --- fast mode (vectorised exp/atan) --------------------------------------------------------

FAST_CONFIGS = [TeacherConfig(D=8, K=2, eta=0.5), TeacherConfig(D=20, K=4, eta=0.5),
                TeacherConfig(D=12, K=3, eta=0.1, vstar_norm2=2.0),
                TeacherConfig(D=10, K=2, eta=0.3, sigma_prime_zero=-1.0)]  # C1 < 0 first


def test_fast_mode_agrees_with_single_runs_to_stated_tolerance():
    """--fast is not bit-identical; the README states relative 1e-12 and events within a step."""
    rows = run_batch(FAST_CONFIGS, STEPS, fast=True, chunk=5000).rows
    for cfg, row in zip(FAST_CONFIGS, rows):
        single = run(cfg, steps=STEPS)
        for key in ("C1", "C2", "C3", "p", "C1_star", "loss"):
            want = float(getattr(single.final, key))
            assert abs(row[key] - want) <= 1e-12 * abs(want), (cfg, key, row[key], want)
        for event in ("t1", "T_star"):
            got, want = row[event], getattr(single, event)
            assert (got is None) == (want is None) and abs((got or 0) - (want or 0)) <= 1, cfg
    assert rows[0]["T_star"] == 4610


def test_fast_mode_lanes_are_independent():
    """The fast kernel's vector loop (AVX2 lanes, interleaved) computes each configuration as
    the scalar loop does: rows do not depend on the block size (block=1: no vectorisation)."""
    configs = FAST_CONFIGS * 3
    rows = run_batch(configs, 3000, fast=True).rows
    assert run_batch(configs, 3000, fast=True, block=1).rows == rows
    assert rows[:4] == rows[4:8] == rows[8:]


def test_fast_exp_atan_accuracy():
    import math

    import numba
    import numpy as np

    from rdyn.reduced_dynamics.model_a.kernels import fast_math_namespace

    F = fast_math_namespace()
    exp, atan = numba.njit(lambda x: F.exp(x)), numba.njit(lambda x: F.atan(x))
    rng = np.random.default_rng(1)
    for x in np.concatenate([-rng.uniform(0, 700, 2000), rng.uniform(-3, 3, 500)]):
        assert abs(exp(x) - math.exp(x)) <= 4.5e-16 * math.exp(x)
    for x in np.concatenate([rng.uniform(-8, 8, 2000), [0.0, 0.66, 2.4142135623730951, 1e300]]):
        assert abs(atan(x) - math.atan(x)) <= 4.5e-16 * abs(math.atan(x))
    assert exp(-800.0) == 0.0 and exp(-745.0) == math.exp(-745.0)


# --- checkpoints ----------------------------------------------------------------------------

CKPT_CONFIGS = [TeacherConfig(D=8, K=2, eta=0.5), TeacherConfig(D=12, K=3, eta=0.1),
                TeacherConfig(D=10, K=2, activation="identity", eta=0.2, logit_scale="sqrtD")]


def interrupt_after_first_chunk(monkeypatch):
    """Make the batch kernels raise KeyboardInterrupt right after their first chunk returns
    (as a Ctrl-C arriving then would)."""
    import rdyn.reduced_dynamics.model_a.batch as batch

    real = batch.compiled_batch_advance
    calls = []

    def patched(*key):
        advance = real(*key)

        def interrupted(*args):
            advance(*args)
            calls.append(1)
            raise KeyboardInterrupt

        return interrupted

    monkeypatch.setattr(batch, "compiled_batch_advance", patched)
    return calls


def test_interrupted_sweep_resumes_bit_identically(tmp_path, monkeypatch):
    from rdyn.reduced_dynamics.runs.checkpoint import Interrupted

    whole = run_batch(CKPT_CONFIGS, 6000).rows
    path = tmp_path / "sweep.npz"
    calls = interrupt_after_first_chunk(monkeypatch)
    with pytest.raises(Interrupted) as info:
        run_batch(CKPT_CONFIGS, 6000, chunk=1000, checkpoint=str(path))
    assert calls == [1] and path.exists() and info.value.step == 1000 * 2
    monkeypatch.undo()
    resumed = run_batch(CKPT_CONFIGS, 6000, chunk=1000, resume=str(path)).rows
    assert resumed == whole


def test_periodic_checkpoints_and_resume_from_finished_and_mismatch(tmp_path):
    from rdyn.reduced_dynamics.runs.checkpoint import CheckpointError

    path = tmp_path / "sweep.npz"
    whole = run_batch(CKPT_CONFIGS, 6000, chunk=700, checkpoint=str(path),
                      checkpoint_every=0.0).rows
    assert run_batch(CKPT_CONFIGS, 6000, resume=str(path)).rows == whole  # finished state
    for configs, steps, kwargs, word in ((CKPT_CONFIGS, 5000, {}, "steps"),
                                         (CKPT_CONFIGS[:2], 6000, {}, "configs"),
                                         (CKPT_CONFIGS, 6000, {"fast": True}, "fast")):
        with pytest.raises(CheckpointError, match=word):
            run_batch(configs, steps, resume=str(path), **kwargs)
    with pytest.raises(CheckpointError):
        run_batch(CKPT_CONFIGS, 6000, resume=str(tmp_path / "missing.npz"))


def test_cli_interrupt_message_exit_130_and_resume(tmp_path, monkeypatch, capsys):
    from rdyn.cli import main

    grid = "D=8,12;K=2,3;eta=0.1,0.5"
    path = tmp_path / "c.npz"
    args = ["sweep", "--grid", grid, "--steps", "4000", "--json", "--quiet"]
    assert main(args) == 0
    whole = json.loads(capsys.readouterr().out)
    interrupt_after_first_chunk(monkeypatch)
    monkeypatch.setattr(sys, "argv", ["rdyn", *args, "--checkpoint", str(path)])
    assert main(args + ["--checkpoint", str(path)]) == 130
    out = capsys.readouterr()
    assert out.out == ""
    line, = out.err.strip().splitlines()
    assert line.startswith("rdyn sweep: interrupted at ") and line.endswith(
        f"resume with: rdyn sweep --grid '{grid}' --steps 4000 --json --quiet "
        f"--checkpoint {path} --resume {path}")
    monkeypatch.undo()
    assert main(args + ["--resume", str(path)]) == 0
    assert json.loads(capsys.readouterr().out) == whole
    # a different grid or option: one line, exit 2
    assert main(["sweep", "--grid", grid, "--steps", "3000", "--quiet", "--resume", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "different steps" in err[0]
    assert main(["sweep", "--grid", grid, "--steps", "10", "--scheduler", "tcp://x:1",
                 "--checkpoint", str(path)]) == 2
    assert "not supported with --scheduler" in capsys.readouterr().err
