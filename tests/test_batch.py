"""Batched float64 sweeps: reduced_dynamics/batch.py and rdyn sweep."""
from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rdyn.cmd_sweep import parse_grid
from rdyn.output import UsageError
from reduced_dynamics.batch import run_batch
from reduced_dynamics.model_a import TeacherConfig, run

ROOT = Path(__file__).resolve().parents[1]

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
        with pytest.raises(UsageError):
            parse_grid(bad)


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


@pytest.mark.slow  # ~15 s: cluster start-up plus a CLI subprocess
def test_dask_local_cluster_same_rows():
    distributed = pytest.importorskip("distributed")
    from reduced_dynamics.batch import run_batch_distributed

    configs = [TeacherConfig(D=8, K=2, eta=eta) for eta in (0.1, 0.3, 0.5)] + [CONFIGS[3]]
    local = run_batch(configs, 5000).rows
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  protocol="tcp://", host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        remote = run_batch_distributed(configs, 5000, cluster.scheduler_address, per_task=3).rows
        # the CLI against the same scheduler (tasks run in this process's worker)
        out = rdyn("--grid", "D=8;K=2;eta=0.1,0.3,0.5", "--steps", "5000", "--json",
                   "--quiet", "--scheduler", cluster.scheduler_address)
    assert remote == local
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["rows"] == json.loads(json.dumps(local[:3]))
