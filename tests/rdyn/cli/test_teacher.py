"""rdyn teacher: the interface contract of docs/interface.md."""
import json
import subprocess
import sys

import pytest


def rdyn(*args):
    return subprocess.run([sys.executable, "-m", "rdyn", *args], capture_output=True, text=True)


def test_json_contract_float64():
    out = rdyn("teacher", "--task", "sts", "--steps", "500", "--record", "0,1,500", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert {"t1", "T_star", "final", "record", "stability"} <= data.keys()
    assert set(data["final"]) == {"t", "C1", "C2", "C3", "p", "C1_star", "loss"}
    assert set(data["record"]) == {"0", "1", "500"}
    assert data["final"]["t"] == 500 and data["T_star"] is None
    assert data["stability"]["eta_limit"] == 0.8 and data["stability"]["lost_at_step"] is None
    assert data["record"]["1"]["C1"] == 0.2  # eta D s0 p / 2 with eta = 0.4, p = 1/20


def test_json_dps_strings():
    out = rdyn("teacher", "--D", "10", "--K", "2", "--steps", "50", "--dps", "25", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    c1 = data["final"]["C1"]
    assert isinstance(c1, str) and len(c1.split("e")[0].replace(".", "").lstrip("-")) == 25
    assert isinstance(data["final"]["t"], int)
    assert data["stability"]["eta_limit"].startswith("8.000000000000000000000000e-1")


@pytest.mark.parametrize("args, message", [
    (["--D", "20", "--K", "20"], "K < D"),
    (["--D", "20", "--K", "0"], "--K must be in 1..999999999999999999, got 0"),
    (["--eta", "0"], "eta must be > 0"),
    (["--activation", "leaky", "--kappa", "1"], "kappa"),
    (["--kappa", "0.2"], "leaky only"),
    (["--task", "cnn", "--D", "30", "--K", "4"], "multiple"),
    (["--steps", "5", "--record", "6"], "outside"),
    (["--task", "gslp", "--K", "2"], "K = 1"),
    (["--tstar-attention", "0.25"], "never reached"),
    (["--sigma-prime-zero", "0"], "nothing moves"),
])
def test_bad_input_one_line_exit_2(args, message):
    out = rdyn("teacher", *args)
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in out.stderr


def test_groups_file(tmp_path):
    groups = [[(i - 1) % 6, i, (i + 1) % 6] for i in range(6)]
    path = tmp_path / "g.json"
    path.write_text(json.dumps(groups))
    out = rdyn("teacher", "--groups", str(path), "--steps", "10", "--json")
    assert out.returncode == 0, out.stderr
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([[0, 1], [1], [2, 3], [0, 3]]))
    out = rdyn("teacher", "--groups", str(bad))
    assert out.returncode == 2 and "same size" in out.stderr


def test_default_run_text_summary():
    out = rdyn("teacher", "--task", "gslp", "--D", "8", "--quiet")
    assert out.returncode == 0, out.stderr
    assert "T* =" in out.stdout and "t1 =" in out.stdout


def test_sigma_prime_zero_enters_first_step_only():
    out = rdyn("teacher", "--task", "sts", "--steps", "3", "--record", "1",
               "--sigma-prime-zero", "0.5", "--json")
    data = json.loads(out.stdout)
    assert data["record"]["1"]["C1"] == 0.1  # eta D s0 p / 2 = 0.4 * 20 * 0.5 / 20 / 2
    frozen = json.loads(rdyn("teacher", "--steps", "5", "--sigma-prime-zero", "0", "--json").stdout)
    assert frozen["final"]["C1"] == 0.0 and frozen["final"]["C2"] == 0.0
