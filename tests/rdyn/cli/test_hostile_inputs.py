"""Hostile inputs over every subcommand (issue 20): each bad or extreme value is refused before
any work with one line on stderr, exit status 2 and no traceback; overflowing runs report their
divergence (exit 3) instead of garbage; sizes are checked before anything is allocated; output
files are probed first; SIGTERM and repeated SIGINTs cannot lose a checkpointed run.

The default battery runs in-process (``rdyn.cli.main``); the signal tests use real
subprocesses. A larger battery (every option with several values) is marked slow.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import warnings

import numpy as np
import pytest

import rdyn
from cli_runs import assert_refused, run_main
from rdyn.options import COMMANDS, integral
from signal_runs import signal_when_checkpointed
from checkout import ROOT

NOT_WRITABLE = "/proc/rdyn-hostile/x"   # /proc refuses new files, even for root


REFUSED = [
    # teacher
    (["teacher", "--eta", "-inf"], "--eta"),
    (["teacher", "--eta", "nan"], "--eta"),
    (["teacher", "--eta", "0"], "--eta"),
    (["teacher", "--D", "1"], "--D"),
    (["teacher", "--D", "2.5"], "--D"),
    (["teacher", "--K", "0"], "--K"),
    (["teacher", "--steps", "-1"], "--steps"),
    (["teacher", "--steps", "1e13"], "--steps"),
    (["teacher", "--dps", "4"], "--dps"),
    (["teacher", "--dps", "5000"], "--dps"),
    (["teacher", "--vstar-norm2", "1e300"], "--vstar-norm2"),
    (["teacher", "--kappa", "0.5"], "--kappa"),
    (["teacher", "--groups", "/nonexistent/g.json"], "--groups"),
    (["teacher", "--groups", "/"], "--groups"),
    (["teacher", "--checkpoint", NOT_WRITABLE], "--checkpoint"),
    (["teacher", "--checkpoint", "/nonexistent/c.npz"], "--checkpoint"),
    (["teacher", "--resume", "/nonexistent/c.npz"], "--resume"),
    (["teacher", "--record", "abc", "--steps", "5"], "--record"),
    (["teacher", "--tstar-attention", "2"], "--tstar-attention"),
    (["teacher", "--method", "flow", "--steps", "5"], "--steps"),
    (["teacher", "--precision", "dd", "--dps", "40"], "--dps"),
    (["teacher", "--activation", "erf", "--M", "2", "--dps", "330"], "at most --dps 300"),
    (["teacher", "--task", "gcn", "--K", "5"], "K"),
    (["teacher", "--task", "cnn", "--D", "37"], "multiple"),
    (["teacher", "--nosuch"], "--nosuch"),
    # crosscheck
    (["crosscheck", "--dps", "20"], "--dps"),
    (["crosscheck", "--batch", "5"], "--batch"),
    (["crosscheck", "--mode", "sgd", "--batch", "1e12"], "--batch 1000000000000"),
    (["crosscheck", "--M", "1e9"], "--M 1000000000"),
    (["crosscheck", "--D", "1e9"], "--D 1000000000"),
    (["crosscheck", "--seed", "-1"], "--seed"),
    (["crosscheck", "--P", "foo"], "--P"),
    (["crosscheck", "--vstar-norm2", "inf"], "--vstar-norm2"),
    # ln
    (["ln", "--dps", "4000", "--data", "spectrum", "--d", "3", "--spectrum", "4,1,1"], "--dps"),
    # the Gaussian route at dps beyond its limit (once: float underflow tracebacks at 320 and 500,
    # 2 GB and an MPFR abort at 200-ish): refused before any grid is built
    (["ln", "--dps", "320", "--data", "spectrum", "--d", "5", "--spectrum", "4,3,2,1,1"], "--dps 320"),
    (["ln", "--dps", "500", "--data", "spectrum", "--d", "5", "--spectrum", "5,4,3,2,1"], "--dps 500"),
    (["ln", "--dps", "201", "--model", "looped", "--data", "spectrum", "--d", "3", "--spectrum",
      "4,3,2"], "at most --dps 200"),
    (["ln", "--alpha0", "1e300"], "--alpha0"),
    (["ln", "--beta0", "-1e300"], "--beta0"),
    (["ln", "--data", "spectrum", "--d", "3", "--spectrum", "1,2"], "--spectrum"),
    (["ln", "--data", "spectrum", "--d", "3", "--spectrum", "4.5,1,1"], "--spectrum"),
    (["ln", "--data", "spectrum"], "--spectrum"),
    (["ln", "--L", "3"], "--L"),
    (["ln", "--replicas", "1"], "--replicas"),
    (["ln", "--eta", "-inf"], "--eta"),
    (["ln", "--d", "1000", "--n", "1000"], "Sobol dimensions"),
    (["ln", "--d", "300", "--n", "20000", "--expectation", "monte_carlo"], "--d 300 with --n 20000"),
    (["ln", "--checkpoint", NOT_WRITABLE, "--data", "spectrum", "--d", "3", "--spectrum", "4,1,1"],
     "--checkpoint"),
    # sweep
    (["sweep", "--grid", "eta=0.1:0.3:100000000", "--steps", "10"], "--grid"),
    (["sweep", "--grid", "eta=0.1:0.3:1000;D=20:1020:1001", "--steps", "10"], "--grid"),
    (["sweep", "--grid", "Q=1", "--steps", "10"], "--grid"),
    (["sweep", "--grid", "D=20", "--steps", "-1"], "--steps"),
    (["sweep", "--grid", "D=20"], "--steps"),
    (["sweep", "--grid", "D=20", "--steps", "10", "--out", NOT_WRITABLE], "--out"),
    # figures
    (["figures", "--batch", "1e12"], "--batch 1000000000000"),
    (["figures", "--out", NOT_WRITABLE], "--out"),
    (["figures", "--paper", "C"], "--paper"),
    (["figures", "--paper", "B", "--batch", "5"], "--batch"),
    # claims, verify, scaling, asymptotics
    (["claims", "--report", NOT_WRITABLE + ".md"], "--report"),
    (["claims", "--report", "x.txt"], "--report"),
    (["claims", "--errata", "x.doc"], "--errata"),
    (["claims", "--dps", "20"], "--dps"),
    (["verify", "--model", "C"], "--model"),
    (["scaling", "--out", NOT_WRITABLE + ".json"], "--out"),
    (["asymptotics", "--K", "0"], "--K"),
    (["asymptotics", "--kappa", "0.5"], "--kappa"),
    (["asymptotics", "--vstar-norm2", "0"], "--vstar-norm2"),
    # prove: sizes, budgets, instances outside the papers' hypotheses (named)
    (["prove", "--D", "3", "--K", "3"], "1 <= K < D"),
    (["prove", "--D", "8", "--K", "4"], "exceed 2K"),
    (["prove", "--eta", "5"], "eta_limit"),
    (["prove", "--max-steps", "0"], "--max-steps"),
    (["prove", "--max-boxes", "1e9"], "--max-boxes"),
    (["prove", "--D", "1e6"], "--D"),
    (["nosuch"], "nosuch"),
]


@pytest.mark.parametrize("argv,needle", REFUSED, ids=[" ".join(a) for a, _ in REFUSED])
def test_hostile_option_is_refused_in_one_line(capsys, argv, needle):
    assert_refused(*run_main(capsys, argv), needle)


HOSTILE_FILES = {  # name: (content, the command that reads it, the refusal's key words)
    "groups-not-json": (b"[[0, 1], [1,", "--groups", "cannot read --groups"),
    "groups-not-a-list": (b'{"a": 1}', "--groups", "--groups"),
    "groups-floats": (b"[[0.5, 1], [1, 2], [2, 0]]", "--groups", "integers"),
    "groups-binary": (b"\x00\xff\xfe" * 100, "--groups", "cannot read --groups"),
    "resume-empty": (b"", "--resume", "checkpoint"),
    "resume-text": (b"not a checkpoint", "--resume", "not an .npz archive"),
    "resume-zip-garbage": (b"PK\x03\x04" + b"\x00" * 200, "--resume", "checkpoint"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_FILES))
def test_hostile_file_is_refused_in_one_line(tmp_path, capsys, case):
    content, flag, needle = HOSTILE_FILES[case]
    path = tmp_path / "hostile"
    path.write_bytes(content)
    argv = ["teacher", "--steps", "5", flag, str(path)]
    assert_refused(*run_main(capsys, argv), needle)
    if flag == "--resume":
        argv = ["ln", "--data", "spectrum", "--d", "3", "--spectrum", "4,1,1", flag, str(path)]
        assert_refused(*run_main(capsys, argv), needle)


def test_ln_quiet_silences_progress(capsys):
    argv = ["ln", "--data", "spectrum", "--d", "3", "--spectrum", "4,1,1", "--steps", "400",
            "--json"]
    loud = run_main(capsys, argv)
    quiet = run_main(capsys, argv + ["--quiet"])
    assert loud[0] == quiet[0] == 0 and loud[1] == quiet[1]
    assert "rdyn ln: step 200/400" in loud[2] and quiet[2] == ""


def test_every_subcommand_is_in_the_battery():
    assert {argv[0] for argv, _ in REFUSED} >= set(COMMANDS)


def test_bare_rdyn_prints_usage(capsys):
    rc, out, err = run_main(capsys, [])
    assert rc == 2 and out == "" and err.startswith("usage: rdyn") and "teacher" in err


# ------------------------------------------------------------------ overflow and divergence

def valid(name: str, data: dict) -> dict:
    """``data`` validated against the JSON Schema of ``rdyn NAME --json``."""
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator(rdyn.schema(name)).validate(data)
    return data


def _no_warnings(capsys, argv):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a leaked numpy RuntimeWarning would raise here
        return run_main(capsys, argv)


def test_teacher_divergence_is_reported_not_answered(capsys):
    rc, out, err = _no_warnings(capsys, ["teacher", "--eta", "1e300", "--steps", "1000",
                                         "--json"])
    assert rc == 3 and "diverged at step 1" in err and "RuntimeWarning" not in err
    data = valid("teacher", json.loads(out))
    assert data["diverged_at_step"] == 1 and data["t1"] is None and data["T_star"] is None
    assert data["loss_slope"] is None and data["final"]["t"] == 0
    assert data["final"]["loss"] == 2.25 and "float64-safe" in data["divergence_reason"]
    rc, out, _ = _no_warnings(capsys, ["teacher", "--sigma-prime-zero", "1e300", "--steps",
                                       "100", "--json"])
    assert rc == 3 and json.loads(out)["diverged_at_step"] == 1


def test_divergence_step_is_the_first_out_of_range_step():
    """eta = 5 (D = 20, K = 4; eta_limit = 0.8): C1 oscillates with growing amplitude and
    leaves the float64-safe range at step 11165, found by bisection inside a 2e6-step chunk.
    The same step is found stepping one step per chunk, and a run that stops at the step
    before does not diverge."""
    from rdyn.reduced_dynamics.runs.divergence import STATE_BOUND
    from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, run

    cfg = TeacherConfig(D=20, K=4, eta=5.0)
    r = run(cfg, steps=100000)
    s = r.diverged_at_step
    assert s == 11165 and r.steps == s - 1 and r.t1 is None and r.T_star is None
    assert r.loss_slope is None and abs(r.final.C1) <= STATE_BOUND
    assert run(cfg, steps=s, chunk=1).diverged_at_step == s
    assert run(cfg, steps=s - 1).diverged_at_step is None


def test_crosscheck_and_ln_divergence(capsys):
    rc, out, err = _no_warnings(capsys, ["crosscheck", "--eta", "1e300", "--json"])
    data = valid("crosscheck", json.loads(out))
    assert rc == 3 and data["diverged_at_step"] == 1 and data["max_rel_dev"] is None
    assert data["structure_residual"] is None
    rc, out, err = _no_warnings(capsys, ["ln", "--eta", "1e300", "--steps", "50", "--json",
                                         "--data", "spectrum", "--d", "3", "--spectrum", "4,1,1"])
    data = valid("ln", json.loads(out))
    assert rc == 3 and data["diverged_at_step"] == 1 and data["steps"] == 0
    assert "contraction" not in data and "growth" not in data


def test_sweep_marks_diverged_rows(capsys):
    rc, out, err = _no_warnings(capsys, ["sweep", "--grid", "D=20;eta=1e300,0.1", "--steps",
                                         "100", "--json", "--quiet"])
    rows = valid("sweep", json.loads(out))["rows"]
    assert rc == 0 and "1 of 2 rows diverged" in err
    assert rows[0]["diverged_at_step"] == 1 and rows[0]["t1"] is None
    assert rows[1]["diverged_at_step"] is None and rows[1]["t1"] == 59


def test_short_runs_have_no_late_slope():
    r = rdyn.teacher(D=20, K=4, steps=10, quiet=True)
    assert r.T_star is None and r.loss_slope is None


# ------------------------------------------------------------------ sizes

def test_presets_do_not_build_d_groups():
    """D = 1e9 and, for the eta -> 0 limits, D = 1e10: nothing of size D is built."""
    r = rdyn.teacher(D=10**9, K=4, steps=10, quiet=True)
    assert r.final.t == 10 and r.t1 is None
    slow = rdyn.teacher(D=10**10, K=4, method="slow")
    assert 5.99 < slow.tau1 < 6.0   # relu: 5.9914... at D = 1e6 and 1e10 (large-D limit)


# ------------------------------------------------------------------ integers and arrays

@pytest.mark.parametrize("value,expected", [
    (20, 20), (20.0, 20), (1e3, 1000), ("1e3", 1000), ("20.0", 20), (" 7 ", 7),
    ("12345678901234567890", 12345678901234567890), (np.int64(5), 5),
    (2.5, None), ("2.5", None), (float("nan"), None), ("inf", None), (True, None), ("x", None),
])
def test_one_integer_rule(value, expected):
    assert integral(value) == expected


def test_api_integer_rule_and_array_message():
    a = rdyn.ln(data="spectrum", spectrum=[4.0, 1, 1], d=3, steps=5)
    b = rdyn.ln(data="spectrum", spectrum=(4, 1, 1), d=3, steps=5)
    assert a.gamma == b.gamma
    with pytest.raises(ValueError, match="--spectrum must be integers"):
        rdyn.ln(data="spectrum", spectrum=[4.5, 1, 1], d=3, steps=5)
    with pytest.raises(ValueError) as info:
        rdyn.teacher(groups=np.array([[0, 1], [1, 2], [2, 0]]), steps=5)
    assert "\n" not in str(info.value) and "numpy array of shape (3, 2)" in str(info.value)


# ------------------------------------------------------------------ output files

def test_late_write_failure_is_rescued(tmp_path, capsys):
    from rdyn.output import write_rescued

    def failing_then_ok(path):
        if path == "/wanted.csv":
            raise OSError(28, "No space left on device")
        with open(path, "w") as fh:
            fh.write("rows\n")

    where = write_rescued("--out", "/wanted.csv", failing_then_ok, "rows\n")
    err = capsys.readouterr().err
    assert where != "/wanted.csv" and open(where).read() == "rows\n"
    assert f"saved to {where}" in err and "No space left" in err
    os.remove(where)

    def always_failing(path):
        raise OSError(28, "No space left on device")

    assert write_rescued("--out", "/wanted.csv", always_failing, "rows\n") is None
    captured = capsys.readouterr()
    assert captured.out == "rows\n" and "on stdout" in captured.err


def test_probe_leaves_no_file(tmp_path, capsys):
    out = tmp_path / "rows.csv"
    rc, _, err = run_main(capsys, ["sweep", "--grid", "Q=1", "--steps", "5", "--quiet",
                                   "--out", str(out)])
    assert rc == 2 and "--grid" in err and not out.exists()   # probed, then refused


def test_failed_checkpoint_write_keeps_the_result(tmp_path, capsys, monkeypatch):
    """A checkpoint that cannot be written after the probe (disk full): the run warns and
    still prints its result, identical to a run without --checkpoint."""
    from rdyn.reduced_dynamics.runs import checkpoint as ck

    argv = ["teacher", "--D", "20", "--K", "4", "--steps", "50", "--json"]
    reference = run_main(capsys, argv)[1]

    def full_disk(path, *args, **kwargs):
        raise ck.CheckpointError(f"cannot write checkpoint {path}: No space left on device")

    monkeypatch.setattr(ck, "save", full_disk)
    rc, out, err = run_main(capsys, argv + ["--checkpoint", str(tmp_path / "c.npz")])
    assert rc == 0 and out == reference and "No space left" in err and "goes on" in err


def test_nan_checkpoint_is_refused(tmp_path, capsys):
    from rdyn.reduced_dynamics.runs import checkpoint as ck
    from rdyn.reduced_dynamics.model_a import dynamics as ma

    path = str(tmp_path / "t.npz")
    argv = ["teacher", "--D", "20", "--K", "4", "--steps", "50", "--json"]
    assert run_main(capsys, argv + ["--checkpoint", path])[0] == 0
    cfg = ma.TeacherConfig(D=20, K=4)
    ident = ma.run_identity(cfg, 50, (), ma.Thresholds(), "float64", None)
    arrays, meta = ck.load(path, "teacher", ident)
    arrays["state"] = np.array([np.nan, 0.0, 0.0])
    ck.save(path, "teacher", ident, arrays, meta)
    assert_refused(*run_main(capsys, argv + ["--resume", path]), "non-finite")


# ------------------------------------------------------------------ signals

TEACHER_LONG = ["teacher", "--task", "cnn", "--eta", "0.001", "--steps", "60000000", "--json",
                "--quiet"]


@pytest.fixture(scope="module")
def uninterrupted_teacher():
    """The stdout of the uninterrupted run (computed once for the signal cases)."""
    whole = subprocess.run([sys.executable, "-m", "rdyn", *TEACHER_LONG], capture_output=True,
                           text=True, timeout=300)
    assert whole.returncode == 0, whole.stderr
    return whole.stdout


@pytest.mark.parametrize("signals_to_send,status", [
    ([signal.SIGTERM], 143),
    ([signal.SIGINT] * 5, 130),
    ([signal.SIGTERM] + [signal.SIGINT] * 4, 143),
], ids=["sigterm", "five-sigints", "sigterm-then-sigints"])
def test_signals_checkpoint_and_resume_byte_identical(tmp_path, signals_to_send, status,
                                                     uninterrupted_teacher):
    path = str(tmp_path / "t.npz")
    argv = TEACHER_LONG + ["--checkpoint", path, "--checkpoint-every", "0.1"]
    rc, out, err = signal_when_checkpointed(argv, path, signals_to_send)
    assert rc == status, err
    assert out == "" and "Traceback" not in err and err.count("\n") == 1, err
    assert err.startswith("rdyn teacher: interrupted at step ") and "--resume" in err
    assert not os.path.exists(path + ".tmp")
    resumed = subprocess.run([sys.executable, "-m", "rdyn", *argv, "--resume", path],
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == uninterrupted_teacher


# ------------------------------------------------------------------ the larger battery

def _hostile_values(option):
    if option.kind == "int":
        return ["-1", "2.5", "nan", "x"]
    if option.kind == "float":
        return ["nan", "inf", "-inf", "1e400", "x"]
    if option.kind == "choice":
        return ["nosuch"]
    if option.kind in ("path",):
        return ["/nonexistent/f"]
    if option.kind == "out":
        return [NOT_WRITABLE]
    return []


BIG = [(name, o.flag, value) for name, cmd in COMMANDS.items() for o in cmd.options
       for value in _hostile_values(o)]


@pytest.mark.slow
@pytest.mark.parametrize("name,flag,value", BIG, ids=[" ".join(c) for c in BIG])
def test_every_option_with_hostile_values(capsys, name, flag, value):
    """Every option of every subcommand with hostile values: refused in one line."""
    rc, out, err = run_main(capsys, [name, flag, value])
    assert rc == 2 and "Traceback" not in err and err.count("\n") == 1, err


# ------------------------------------------------------------------ second battery (issue 20, item 5)
# 48 further hostile inputs over every subcommand (none of them above); the ones that gave a
# traceback (ln noln overflow, asymptotics leaky, flow limits at large ||V*||^2), a garbage
# answer (crosscheck "diverged at step 0" with steps = -1), or ran for minutes (--method slow
# --dps 4000) are fixed; these are kept.

REFUSED_2 = [
    (["teacher", "--record", "5,-1", "--steps", "10"], "--record: step -1"),
    (["teacher", "--record", "20", "--steps", "10"], "--record: step 20"),
    (["teacher", "--activation", "expr", "--activation-expr", "x**"], "--activation-expr"),
    (["teacher", "--activation-expr", "exp(x**2)", "--D", "8", "--K", "2", "--steps", "10"],
     "--activation-expr"),
    (["teacher", "--checkpoint-every", "-1", "--checkpoint", "ck.npz"], "--checkpoint-every"),
    (["teacher", "--method", "slow", "--dps", "4000"], "at most 100 with --method slow"),
    (["teacher", "--method", "flow", "--D", "20", "--K", "4", "--vstar-norm2", "1e6"],
     "use --method map"),
    (["teacher", "--method", "flow", "--D", "20", "--K", "4", "--vstar-norm2", "1e20"],
     "use --method map"),
    (["crosscheck", "--vstar-row-norms", "1,nan", "--activation", "tanh", "--M", "2"],
     "--vstar-row-norms"),
    (["crosscheck", "--vstar-row-norms", "1,2", "--activation", "tanh", "--M", "3"],
     "--vstar-row-norms: 2 norms for --M 3"),
    (["crosscheck", "--noise-std", "1e300", "--mode", "sgd"], "--noise-std"),
    (["crosscheck", "--vstar-norm2", "1e100", "--steps", "5"], "initial loss (step 0)"),
    (["ln", "--n", "1e12", "--d", "2"], "Sobol dimensions"),
    (["ln", "--samples", "1e15", "--expectation", "monte_carlo"], "--samples"),
    (["ln", "--record", "10", "--steps", "5"], "--record"),
    (["sweep", "--grid", "D=", "--steps", "10"], "--grid: no values for D"),
    (["sweep", "--grid", "D=20;D=30", "--steps", "10"], "given twice"),
    (["sweep", "--grid", "eta=0.1:0.3:0", "--steps", "10"], "--grid"),
    (["sweep", "--grid", "K=1e9;D=2e9", "--steps", "10"], "--grid"),
    (["sweep", "--grid", "activation=erf", "--steps", "10"], "--activation erf"),
    (["sweep", "--grid", "D=20", "--steps", "10", "--threads", "0"], "--threads"),
    (["verify", "--only", "nosuch.*"], "--only"),
    (["verify", "--only", ""], "--only"),
    (["scaling", "--activation", "foo"], "--activation"),
    (["scaling", "--model", "B", "--kappa", "0.5"], "--kappa"),
    (["figures", "--seed", "1e30"], "--seed"),
    (["figures", "--paper", "B", "--steps", "1"], "--steps"),
    (["figures", "--noise-std", "1e51"], "--noise-std"),
    (["claims", "--paper", "C"], "--paper"),
    (["asymptotics", "--activation", "gelu", "--kappa", "0.2"], "--kappa"),
]


@pytest.mark.parametrize("argv,needle", REFUSED_2, ids=[" ".join(a) for a, _ in REFUSED_2])
def test_second_battery_refusals(tmp_path, monkeypatch, capsys, argv, needle):
    monkeypatch.chdir(tmp_path)
    assert_refused(*run_main(capsys, argv), needle)


def test_second_battery_groups_with_a_repeated_index(tmp_path, capsys):
    path = tmp_path / "g.json"
    path.write_text("[[0, 0], [1, 2], [2, 0]]")
    assert_refused(*run_main(capsys, ["teacher", "--groups", str(path), "--steps", "5"]),
                   "repeats an index")


DIVERGING_2 = [  # (argv, command, the step it diverges at)
    (["ln", "--model", "noln", "--target", "unnormalized", "--eta", "1e300", "--steps", "5",
      "--data", "spectrum", "--d", "3", "--spectrum", "4,1,1"], "ln", 1),
    (["teacher", "--logit-scale", "sqrtD", "--eta", "1e300", "--steps", "5"], "teacher", 1),
    (["teacher", "--activation", "tanh", "--eta", "1e300", "--D", "8", "--K", "2", "--steps",
      "10"], "teacher", 1),
    (["crosscheck", "--noise-std", "1e50", "--mode", "sgd", "--steps", "5"], "crosscheck", 3),
]


@pytest.mark.parametrize("argv,name,step", DIVERGING_2, ids=[" ".join(a) for a, _, _ in DIVERGING_2])
def test_second_battery_divergence(capsys, argv, name, step):
    rc, out, err = _no_warnings(capsys, argv + ["--json"])
    data = valid(name, json.loads(out))
    assert rc == 3 and "Traceback" not in err and data["diverged_at_step"] == step
    assert f"rdyn {name}: diverged at step {step}" in err
    assert data.get("steps", step - 1) == step - 1


EXTREME_VALID_2 = [  # extreme but valid: exit 0, a schema-valid answer, no warning
    (["teacher", "--eta", "1e-300", "--steps", "10"], "teacher"),
    (["teacher", "--D", "1e12", "--K", "4", "--steps", "10", "--dps", "30"], "teacher"),
    (["sweep", "--grid", "D=20;eta=1e-300", "--steps", "10", "--quiet"], "sweep"),
    (["sweep", "--grid", "eta=0.3:0.1:3", "--steps", "10", "--quiet"], "sweep"),
    (["ln", "--data", "spectrum", "--d", "2", "--spectrum", "1000000000000,1", "--steps", "5"],
     "ln"),
]


@pytest.mark.parametrize("argv,name", EXTREME_VALID_2, ids=[" ".join(a) for a, _ in EXTREME_VALID_2])
def test_second_battery_extreme_but_valid(capsys, argv, name):
    rc, out, err = _no_warnings(capsys, argv + ["--json"])
    assert rc == 0 and "Traceback" not in err, err
    valid(name, json.loads(out))


@pytest.mark.slow
def test_second_battery_asymptotics(capsys):
    """asymptotics --activation leaky asserted on unsimplified series coefficients (a
    traceback for every kappa); at ||V*||^2 = 1e100 its D checks overflowed (a traceback)."""
    rc, out, err = run_main(capsys, ["asymptotics", "--activation", "leaky", "--kappa", "0.5",
                                     "--json"])
    assert rc == 0 and "Traceback" not in err
    data = valid("asymptotics", json.loads(out))
    assert data["tau_star"]["exponent"] == 3 and len(data["checks"]) == 4
    assert_refused(*run_main(capsys, ["asymptotics", "--vstar-norm2", "1e100"]), "--no-check")


# ------------------------------------------------------------------ issue 32: the last hostile inputs
# Every case of issue 32's "Why" (the formula cases are item 1, tests/derivations/test_formula_security.py;
# they are repeated here at the command line so the corpus is whole). Each refusal is one line,
# exit 2, before any work; where the refusal gives advice, the advice is followed and the run
# is accepted.

ISSUE_32_REFUSED = [
    # code, resource bombs, sympy objects without a meaning: refused by the formula parser
    (["teacher", "--activation-expr", "__import__('os').system('touch PWNED') + x"],
     "--activation-expr"),
    (["teacher", "--activation-expr", "__import__('os').system('touch PWNED2')"],
     "--activation-expr"),
    (["teacher", "--activation-expr", "x+9**9**9**9"], "--activation-expr"),
    (["teacher", "--activation-expr", "x+factorial(10**7)*0"], "--activation-expr"),
    (["teacher", "--activation-expr", "zoo*x"], "--activation-expr"),
    (["teacher", "--activation-expr", "floor(x)"], "--activation-expr"),
    (["teacher", "--activation-expr", "Derivative(sin(x), x)"], "--activation-expr"),
    (["teacher", "--activation-expr", "1e-300*x"], "--activation-expr"),
    # integers of any size: refused as integers (no float conversion, no 300-digit line)
    (["teacher", "--D", "1e300"], "--D must be in 2..1000000000000000000, got 1.000e+300"),
    (["teacher", "--K", "1e299"], "--K must be in 1..999999999999999999, got 1.000e+299"),
    (["teacher", "--D", "1e19", "--K", "4"], "--D must be in 2..1000000000000000000"),
    (["ln", "--model", "looped", "--L", "1e300"], "--L must be at most 9223372036854775807"),
    (["crosscheck", "--d", "1e300"], "got 1.000e+300 (an integer of 301 digits)"),
    (["prove", "--D", "1e300"], "--D must be in 2..10000, got 1.000e+300"),
    # an explicit activation that conflicts with the formula
    (["teacher", "--activation", "relu", "--activation-expr", "x+tanh(x)"],
     "--activation-expr goes with --activation expr"),
    (["crosscheck", "--activation", "relu", "--activation-expr", "x+tanh(x)"],
     "--activation-expr goes with --activation expr"),
    (["sweep", "--grid", "D=20", "--steps", "5", "--activation", "erf", "--activation-expr",
      "x+tanh(x)"], "--activation-expr goes with --activation expr"),
    # sizes estimated before the work, the option the user gave blamed
    (["crosscheck", "--activation", "erf", "--M", "1000000"], "--M 1000000 (with --D 36"),
    (["crosscheck", "--mode", "sgd", "--d", "1e9"], "--d 1000000000 (with --batch 100"),
    (["ln", "--model", "looped", "--data", "spectrum", "--d", "3", "--spectrum", "4,3,2", "--L",
      "1000000"], "--L 1000000: the looped model's exact float64 quadrature"),
    (["ln", "--model", "looped", "--data", "spectrum", "--d", "1000", "--spectrum",
      ",".join(str(i) for i in range(1, 1001)), "--L", "1000000"], "use --expectation qmc"),
    # advice that works (the smooth rule): a kink is named, no row norm advice
    (["teacher", "--activation-expr", "x/(1+abs(x))", "--steps", "10"], "x/sqrt(1+x**2)"),
]


@pytest.mark.parametrize("argv,needle", ISSUE_32_REFUSED, ids=[" ".join(a) for a, _ in ISSUE_32_REFUSED])
def test_issue_32_refusals(tmp_path, monkeypatch, capsys, argv, needle):
    import time

    monkeypatch.chdir(tmp_path)
    start = time.monotonic()
    assert_refused(*run_main(capsys, argv), needle)
    assert time.monotonic() - start < 60   # in seconds, not after the work (no timing claim)
    assert not (tmp_path / "PWNED").exists() and not (tmp_path / "PWNED2").exists()


def test_issue_32_huge_integers_in_the_api():
    for kwargs, needle in ((dict(D=10**300), "--D must be in 2..1000000000000000000, got 1.000e+300 "
                            "(an integer of 301 digits)"),
                           (dict(K=10**299), "--K must be in"), (dict(steps=10**300), "--steps")):
        with pytest.raises(ValueError) as info:
            rdyn.teacher(**kwargs)
        assert needle in str(info.value) and "\n" not in str(info.value) and len(str(info.value)) < 200
    with pytest.raises(ValueError, match="--L must be at most"):
        rdyn.ln(model="looped", L=10**300)


def test_issue_32_conflicting_activation_in_the_api_and_its_advice():
    with pytest.raises(ValueError, match="--activation-expr goes with --activation expr"):
        rdyn.teacher(activation="relu", activation_expr="x+tanh(x)", steps=5)
    with pytest.raises(ValueError, match="--activation-expr goes with --activation expr"):
        rdyn.sweep(grid="D=20", steps=5, activation="tanh", activation_expr="x+tanh(x)")
    # the advice: no --activation (or --activation expr); the default relu is no conflict
    a = rdyn.teacher(activation_expr="x+tanh(x)", D=8, K=2, steps=5, quiet=True)
    b = rdyn.teacher(activation="expr", activation_expr="x+tanh(x)", D=8, K=2, steps=5, quiet=True)
    assert a["model"]["activation_expr"] == b["model"]["activation_expr"] == "x+tanh(x)"
    assert a["final"]["C1"] == b["final"]["C1"] > 0


def test_issue_32_two_outputs_naming_one_file(tmp_path, capsys, monkeypatch):
    from rdyn.options import validate

    monkeypatch.chdir(tmp_path)
    (tmp_path / "same.md").write_text("the ledger\n")
    for report, errata in (("same.md", "same.md"), ("same.md", str(tmp_path / "same.md")),
                           ("same.md", "./sub/../same.md")):
        (tmp_path / "sub").mkdir(exist_ok=True)
        assert_refused(*run_main(capsys, ["claims", "--report", report, "--errata", errata]),
                       "names the same file as --report")
    assert (tmp_path / "same.md").read_text() == "the ledger\n"   # nothing ran, nothing written
    with pytest.raises(ValueError, match="names the same file"):
        rdyn.claims(report="same.md", errata="same.md")
    # the advice: two files (validated only: the ledger itself takes minutes)
    values = validate("claims", {"report": "ledger.md", "errata": "erratum.md"}, api=True)
    assert values["report"] == "ledger.md" and values["errata"] == "erratum.md"


def test_issue_32_sgd_memory_blames_the_given_option_and_the_advice_works(capsys):
    rc, out, err = run_main(capsys, ["crosscheck", "--mode", "sgd", "--d", "1e9"])
    assert rc == 2 and err.startswith("rdyn crosscheck: error: --d 1000000000") and "GB" in err
    assert run_main(capsys, ["crosscheck", "--mode", "sgd", "--d", "8", "--steps", "2",
                             "--json"])[0] == 0
    rc, out, err = run_main(capsys, ["crosscheck", "--mode", "sgd", "--batch", "1e12"])
    assert rc == 2 and "--batch 1000000000000 (with --d 8, --M 4, --D 36)" in err


def test_issue_32_smooth_crosscheck_memory_is_estimated_before_work(capsys, monkeypatch):
    from rdyn.verification.references import full_matrix_smooth as fms

    def no_work(*args, **kwargs):
        raise AssertionError("the smooth crosscheck started before its memory was checked")

    monkeypatch.setattr(fms, "crosscheck_smooth", no_work)
    rc, out, err = run_main(capsys, ["crosscheck", "--activation", "erf", "--M", "1000000"])
    assert_refused(rc, out, err, "this job needs about 2.12e+04 GB of memory")
    # the estimate: 8 arrays of M x D x 96^2 float64 (measured peak 6-7), M = 1e6, D = 36
    assert fms.memory_estimate(10**6, 36, 8) == pytest.approx(8 * 8 * 36e6 * 96**2, rel=1e-3)


def test_issue_32_smooth_crosscheck_advice_lower_M_is_accepted(capsys):
    rc, out, err = run_main(capsys, ["crosscheck", "--activation", "erf", "--M", "4", "--steps",
                                     "2", "--json"])
    assert rc == 0, err
    assert valid("crosscheck", json.loads(out))["model"]["M"] == 4


def test_issue_32_looped_ln_refused_before_work_and_qmc_accepted(capsys, monkeypatch):
    from rdyn.reduced_dynamics.model_b import run as mb
    from rdyn.reduced_dynamics.model_b import gaussian as gq

    # the reach of the tau grid: about 2 L log(lam_max/lam_min) plus a tail, from the layout
    assert gq.looped_tau_reach((4, 3, 2), 100) == pytest.approx(167.75, abs=0.01)
    assert gq.looped_tau_reach((4, 3, 2), 10**6) > 1e6
    real_run = mb.run

    def no_run(*args, **kwargs):
        raise AssertionError("the looped run started before its grid was sized")

    monkeypatch.setattr(mb, "run", no_run)
    argv = ["ln", "--model", "looped", "--data", "spectrum", "--d", "3", "--spectrum", "4,3,2",
            "--L", "1000000", "--steps", "20"]
    assert_refused(*run_main(capsys, argv), "use --expectation qmc")
    monkeypatch.setattr(mb, "run", real_run)
    rc, out, err = _no_warnings(capsys, argv + ["--expectation", "qmc", "--samples", "4096",
                                                "--json"])
    data = valid("ln", json.loads(out))
    assert rc == 0 and data["expectation"] == "qmc" and data["diverged_at_step"] is None


def test_issue_32_looped_ln_at_dps_is_sized_before_work(capsys, monkeypatch):
    """At --dps the grid has no float64 range limit, so --L 1e6 is sized instead: 142920313
    nodes of 3 eigenvalues, MPFR objects of about 58 bytes at 20 digits, refused on a machine
    with 16 GB before anything is built."""
    monkeypatch.setattr("rdyn.options.memory.available_memory", lambda: 16 * 10**9)
    argv = ["ln", "--model", "looped", "--data", "spectrum", "--d", "3", "--spectrum", "4,3,2",
            "--L", "1000000", "--dps", "20"]
    assert_refused(*run_main(capsys, argv), "--L 1000000 with --spectrum (3 distinct eigenvalues: "
                   "142920313 quadrature nodes each): this job needs about 199 GB")


def test_issue_32_gaussian_route_failure_is_never_divergence(capsys):
    """A looped run whose float64 grid is within range but whose quadrature misses its
    tolerance (or gives a non-finite value) is refused in one line, not reported as
    "diverged at step 0"."""
    from rdyn.reduced_dynamics.model_b.gaussian_route import GaussianRoute
    from rdyn.reduced_dynamics.model_b.gaussian import QuadratureError

    route = GaussianRoute((4, 3, 2), None, 10)
    with pytest.raises(QuadratureError, match="not a finite number"):
        route.check(float("nan"), 0.0, "Dist^2 at rho = 0")
    with pytest.raises(QuadratureError, match="not a finite number"):
        route.check(1.0, float("inf"), "Dist^2 at rho = 0")
    assert route.check(0.5, 1e-17, "Dist^2") == 0.5


@pytest.mark.slow
def test_issue_32_thousand_distinct_eigenvalues(capsys):
    """rdyn ln --model looped --d 1000 with 1000 distinct eigenvalues: once a 5,000-character
    QuadratureError; now one line naming the spectrum by its size, and the advice (qmc) runs."""
    spectrum = ",".join(str(i) for i in range(1, 1001))
    argv = ["ln", "--model", "looped", "--data", "spectrum", "--d", "1000", "--spectrum", spectrum,
            "--steps", "2"]
    rc, out, err = run_main(capsys, argv)
    assert_refused(rc, out, err, "use --expectation qmc")
    assert "1000 distinct" in err and len(err) < 400
    rc, out, err = run_main(capsys, argv + ["--expectation", "qmc", "--samples", "4096", "--json"])
    assert rc == 0 and json.loads(out)["expectation"] == "qmc"


@pytest.mark.parametrize("formula", ["x+tanh(x)", "x"])
def test_issue_32_no_negative_excess_loss(capsys, formula):
    """||V*||^2 = 1e100: the excess loss was E[sigma^2] - 2 E[T B] + E[B^2], which cancels to
    rounding once the student fits (-3.1e85 for both formulas, where --activation identity gives
    0); it is now E[(T - B)^2] + E[Var(sigma | Z1)], a sum of squares: never negative, and for
    the fitted state within the rounding of sigma's values, (M D / 2) (c eps r)^2 with
    r = 1e50, eps = 2.2e-16 and c = 10, not eps r^2."""
    rc, out, err = _no_warnings(capsys, ["teacher", "--activation-expr", formula, "--vstar-norm2",
                                         "1e100", "--D", "8", "--K", "2", "--json", "--quiet"])
    data = valid("teacher", json.loads(out))
    assert rc == 0 and data["final"]["p"] == 0.5   # T* reached: the student fits
    assert 0.0 <= data["final"]["loss"] <= 8 / 2 * (10 * 2.2e-16 * 1e50) ** 2


def test_issue_32_tanh_at_large_D_runs_with_defaults(capsys):
    """tanh at D = 1e4 was refused ("lower --vstar-norm2 or raise --M", advice that did not
    help): its rule check compared losses that cancel to rounding near p = 1/K. With the loss
    as a sum of squares the rule converges (96 nodes) and the run is accepted."""
    argv = ["teacher", "--activation", "tanh", "--D", "10000", "--K", "4", "--steps", "10",
            "--json", "--quiet"]
    rc, out, err = run_main(capsys, argv)
    if rc != 0:   # the tabulated route (issue 31) may refuse first: its advice is followed
        assert_refused(rc, out, err, "use --smooth-route exact")
        rc, out, err = run_main(capsys, argv + ["--smooth-route", "exact"])
    assert rc == 0, err
    data = valid("teacher", json.loads(out))
    assert data["quadrature"]["nodes"] <= 128 and data["quadrature"]["error_estimate"] <= 1e-13


def test_issue_32_kink_advice_works_when_followed(capsys):
    rc, out, err = run_main(capsys, ["teacher", "--activation-expr", "x/(1+abs(x))", "--steps",
                                     "10"])
    assert_refused(rc, out, err, "contains Abs")
    assert "row norm" in err and "lower --vstar-norm2" not in err
    rc, out, err = run_main(capsys, ["teacher", "--activation-expr", "x/sqrt(1+x**2)", "--steps",
                                     "10", "--json", "--quiet"])
    assert rc == 0 and valid("teacher", json.loads(out))["final"]["t"] == 10
    # the row-norm advice stands where it works: tanh at ||V*||^2 = 1e100 is refused with it,
    # and lowering --vstar-norm2 as it says is accepted
    argv = ["teacher", "--activation", "tanh", "--D", "8", "--K", "2", "--steps", "10"]
    assert_refused(*run_main(capsys, argv + ["--vstar-norm2", "1e100"]), "lower --vstar-norm2")
    assert run_main(capsys, argv + ["--vstar-norm2", "1", "--quiet"])[0] == 0


# ------------------------------------------------------------------ issue 32: long runs say how long

def test_issue_32_teacher_D1000_estimate_from_the_slow_manifold():
    """rdyn teacher --D 1000 (default run to 2 T*): T* ~ 8.25e11 steps by the slow-manifold
    limit, so the run is capped at 1e12 steps, about 17 h at 60 ns a step, said before it
    starts (the run itself is not made)."""
    from rdyn.api._teacher import MIN_DEFAULT_STEPS
    from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, Thresholds
    from rdyn.run_time import TEACHER_F64_STEP_S, teacher_float64_estimate

    estimate = teacher_float64_estimate(TeacherConfig(D=1000, K=4), None, Thresholds(),
                                        MIN_DEFAULT_STEPS)
    assert estimate.steps == 10**12 and not estimate.lower_bound
    assert estimate.seconds == pytest.approx(10**12 * TEACHER_F64_STEP_S)
    assert estimate.line() == ("rdyn teacher: about 16.7 h (1e+12 steps in float64, to 2 T* of "
                               "the slow-manifold limit)")
    # D = 20: T* = 204185 is found by the 1e6-step probe: 2 T* steps, no limit needed
    short = teacher_float64_estimate(TeacherConfig(D=20, K=4), None, Thresholds(), MIN_DEFAULT_STEPS)
    assert short.steps == 2 * 204185 and short.seconds < 1


def test_issue_32_teacher_D1000_says_so_up_front():
    proc = subprocess.Popen([sys.executable, "-m", "rdyn", "teacher", "--D", "1000", "--K", "4",
                             "--json"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        first = proc.stderr.readline()
    finally:
        proc.kill()
        proc.wait()
        proc.stderr.close()
    assert first.startswith("rdyn teacher: about 16.7 h (1e+12 steps in float64"), first


def test_issue_32_default_run_progress_bar_has_a_total(capsys):
    rc, out, err = run_main(capsys, ["teacher", "--D", "20", "--K", "4", "--json"])
    assert rc == 0 and json.loads(out)["T_star"] == 204185
    assert "/408k" in err   # 2 T* = 408370 steps, known before the run


def test_issue_32_claims_says_how_long(capsys, monkeypatch):
    from rdyn.run_time import claims_estimate
    from rdyn.verification.claims import ledger as ledger_module

    class Stop(Exception):
        pass

    def stop(*args, **kwargs):
        raise Stop

    monkeypatch.setattr(ledger_module, "evaluate", stop)
    with pytest.raises(Stop):
        run_main(capsys, ["claims", "--paper", "B"])
    assert capsys.readouterr().err.startswith("rdyn claims: about 30 s (the quick checks of paper B)")
    assert claims_estimate(None, True).line() == ("rdyn claims: about 13 min (the full-size checks "
                                                  "of both papers)")


# ------------------------------------------------------------------ issue 32: no partial files, ever
# A full disk is a 64 KiB tmpfs (root; skipped where it cannot be mounted) filled to a few bytes
# of free space: every writer either writes its whole file or leaves the requested path as it
# was (absent, or the previous file byte for byte), no temporary behind, one warning line, and
# the result rescued where the project rescues it (the fixture full_disk: conftest.py).

def _left(disk) -> set:
    return set(os.listdir(disk)) - {".filler"}


def test_atomic_files_group_is_all_or_nothing(full_disk):
    from rdyn.reduced_dynamics.runs.atomic_files import AtomicFiles

    disk, fill = full_disk
    (disk / "doc.md").write_text("old document\n")
    fill(4096)
    with pytest.raises(OSError) as info:
        with AtomicFiles() as files:
            with open(files.path(disk / "doc_fig1.png"), "wb") as fh:
                fh.write(b"\x89PNG" + b"1" * 3000)   # fits
            with open(files.path(disk / "doc.md"), "w") as fh:
                fh.write("x" * 20000)                # does not
    assert info.value.errno == 28
    assert _left(disk) == {"doc.md"} and (disk / "doc.md").read_text() == "old document\n"
    # a writer's own exception (not a disk error) also discards everything
    with pytest.raises(KeyError):
        with AtomicFiles() as files:
            files.path(disk / "other.txt")
            raise KeyError("writer bug")
    assert _left(disk) == {"doc.md"}


def test_atomic_file_keeps_the_umask_permissions(tmp_path):
    from rdyn.reduced_dynamics.runs.atomic_files import write_text_atomic

    write_text_atomic(tmp_path / "a.csv", "x\n")
    mask = os.umask(0)
    os.umask(mask)
    assert (tmp_path / "a.csv").stat().st_mode & 0o777 == 0o666 & ~mask


@pytest.mark.parametrize("name", ["rows.csv", "rows.json"])
def test_sweep_out_on_a_full_disk(full_disk, capsys, name):
    """The issue's truncated rows.csv (cut mid-row beside the rescued copy): now the requested
    path keeps its previous content, the rows are rescued whole."""
    disk, fill = full_disk
    out = disk / name
    argv = ["sweep", "--grid", "D=20;eta=0.01:0.3:100", "--steps", "10", "--quiet", "--out"]
    rc, _, _ = run_main(capsys, argv + [str(out)])
    assert rc == 0
    reference = out.read_text()
    assert len(reference) > 8192   # more than the free space left below
    out.write_text("previous rows\n")
    fill(4096)
    rc, stdout, err = run_main(capsys, argv + [str(out)])
    assert rc == 0 and err.startswith("rdyn: warning: cannot write --out") and "No space left" in err
    assert err.count("\n") == 2 and "rows written to" in err, err   # the warning, the summary
    rescued = err.split("saved to ")[1].split(" instead")[0]
    try:
        assert open(rescued).read() == reference
    finally:
        os.remove(rescued)
    assert out.read_text() == "previous rows\n" and _left(disk) == {name}


def test_scaling_out_on_a_full_disk(full_disk, capsys, monkeypatch):
    from rdyn.api import _scaling

    disk, fill = full_disk
    out = disk / "scaling.json"
    out.write_text("{}\n")
    fill(0)
    big = "x" * 20000

    real = _scaling.write_rescued

    def rescued_big(flag, path, write, text):   # the report, padded past the free space
        return real(flag, path, lambda p: _scaling.write_text_atomic(p, big), big)

    monkeypatch.setattr(_scaling, "write_rescued", rescued_big)
    rc, stdout, err = run_main(capsys, ["scaling", "--model", "B", "--out", str(out)])
    if rc != 0:
        pytest.skip(f"scaling --model B did not run here: {err.splitlines()[-1:]}")
    assert "No space left on device" in err and out.read_text() == "{}\n" and _left(disk) == {out.name}
    rescued = err.split("saved to ")[1].split(" instead")[0]
    assert open(rescued).read() == big
    os.remove(rescued)


def test_checkpoint_on_a_full_disk_keeps_the_previous_one(full_disk):
    from rdyn.reduced_dynamics.runs import checkpoint as ck

    disk, fill = full_disk
    path = str(disk / "run.npz")
    ck.save(path, "teacher", {"D": 20}, {"state": np.arange(3.0)}, {"t": 1})
    before = open(path, "rb").read()
    fill(0)
    with pytest.raises(ck.CheckpointError, match="No space left on device"):
        ck.save(path, "teacher", {"D": 20}, {"state": np.arange(20000.0)}, {"t": 2})
    assert open(path, "rb").read() == before and _left(disk) == {"run.npz"}   # no run.npz.tmp


def test_teacher_checkpoint_on_a_full_disk_run_goes_on(full_disk, capsys):
    disk, fill = full_disk
    argv = ["teacher", "--D", "20", "--K", "4", "--steps", "50", "--json"]
    reference = run_main(capsys, argv)[1]
    path = disk / "t.npz"
    fill(0)
    rc, out, err = run_main(capsys, argv + ["--checkpoint", str(path)])
    assert rc == 0 and out == reference and "No space left" in err
    assert _left(disk) == set()   # neither t.npz nor t.npz.tmp


def test_figure_on_a_full_disk_is_rescued_whole(full_disk, capsys):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rdyn.verification.figures.layout import save_figure

    disk, fill = full_disk
    target = disk / "figure2_loss.png"
    target.write_bytes(b"old png")
    fill(4096)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.imshow(np.random.default_rng(0).random((200, 200)))   # incompressible: > 4 KiB of PNG
    written = save_figure(fig, target, dpi=100)
    plt.close(fig)
    err = capsys.readouterr().err
    assert written != target and written.read_bytes().startswith(b"\x89PNG")
    assert err.count("\n") == 1 and "No space left on device" in err and str(written) in err
    assert target.read_bytes() == b"old png" and _left(disk) == {"figure2_loss.png"}
    import shutil

    shutil.rmtree(written.parent)


@pytest.mark.parametrize("suffix", [".tex", ".md", ".html"])
def test_erratum_and_report_on_a_full_disk(full_disk, capsys, suffix):
    """The issue's truncated e_fig1.png beside a rescued erratum: the erratum and its plots are
    one group, written whole to the rescue folder, nothing partial at the requested paths."""
    from claims_runs import _fake_errata_run

    from rdyn.output import write_rescued
    from rdyn.verification.claims import errata_writer, ledger as claims, report as claims_report

    run = _fake_errata_run()
    entries = [e for e in claims.entries("A") if e.label in ("Theorem 3.1 (loss)", "Lemma D.10")]
    ledger = claims.Ledger([claims.judge(e, run) for e in entries], 1.0, True, "A")
    disk, fill = full_disk
    path = disk / f"e{suffix}"
    path.write_text("previous erratum\n")
    fill(4096)
    written = []
    where = write_rescued("--errata", path, lambda p: written.extend(errata_writer.write(ledger, p)))
    err = capsys.readouterr().err
    assert where != str(path) and err.count("\n") == 1 and "No space left" in err
    assert path.read_text() == "previous erratum\n" and _left(disk) == {path.name}
    assert written[0] == where and all(os.path.getsize(f) > 0 for f in written)
    if suffix != ".html":   # .tex and .md carry their plots as files
        assert written[1].endswith("_fig1.png") and open(written[1], "rb").read(4) == b"\x89PNG"
    for f in written:
        os.remove(f)
    # the ledger report, the same way
    report = disk / f"ledger{'.md' if suffix != '.html' else '.html'}"
    where = write_rescued("--report", report, lambda p: claims_report.write(ledger, p))
    if where == str(report):   # small enough for the page left: written whole
        assert report.stat().st_size > 0
    else:
        assert not report.exists() and os.path.getsize(where) > 0
        os.remove(where)


def test_output_nowhere_writable_is_one_line(tmp_path, capsys, monkeypatch):
    """A figure that can be written neither at --out nor in the temporary folder: one line,
    exit 1, no traceback."""
    from rdyn.verification.figures import layout as figure_layout

    def no_space(path, write):
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr("rdyn.reduced_dynamics.runs.atomic_files.write_atomic", no_space)
    monkeypatch.chdir(tmp_path)
    rc, out, err = run_main(capsys, ["figures", "--paper", "B", "--quick", "--steps", "2",
                                     "--out", str(tmp_path / "figs")])
    assert rc == 1 and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("rdyn figures: error: cannot write")
    assert figure_layout is not None


def test_readme_setup_order_installs_before_it_uses():
    """README's set-up works as written: a command that needs build, twine or pytest comes
    after (or with) the install of the extra that provides them (issue 32: the README once
    showed `python -m build && twine check` before the [test] extra)."""
    from pathlib import Path

    text = (ROOT / "README.md").read_text()
    for tool in ("python -m build", "twine", "python -m pytest"):
        at = text.find(tool)
        assert at >= 0, tool
        assert 'pip install ".[test' in text[:at], f"{tool!r} is shown before the [test] install"


def test_issue_32_verify_and_scaling_say_how_long(capsys, monkeypatch):
    from rdyn.run_time import fixed_size_estimate
    from rdyn.verification.checks import registry

    assert fixed_size_estimate("verify", False).line() == ("rdyn verify: about 4 min (the full "
                                                          "checks of both papers)")
    assert fixed_size_estimate("scaling", True).line() == ("rdyn scaling: about 20 s (the quick "
                                                          "fits of both papers)")
    monkeypatch.setattr(registry, "run_checks", lambda **kwargs: [])   # the checks: skipped
    err = run_main(capsys, ["verify", "--quick", "--json"])[2]
    assert err.startswith("rdyn verify: about 115 s (the quick checks of both papers)")
    err = run_main(capsys, ["verify", "--only", "A.invariant.*", "--json"])[2]
    assert "about" not in err and "no check id matches" in err   # a selection: no estimate


def test_issue_32_figures_say_how_long():
    """rdyn figures --paper A: 8.6 s + 5.6 ms per SGD step of the six experiments (measured 121 s
    of CPU at the default 20000 steps)."""
    from rdyn.run_time import figures_estimate

    assert figures_estimate(20000, False).seconds == pytest.approx(8.6 + 112.0)
    assert figures_estimate(20000, False).line() == ("rdyn figures: about 2 min (six experiments "
                                                    "of 20000 SGD steps)")
    assert figures_estimate(1500, True).seconds == pytest.approx(8.6 + 4.05)


def test_issue_32_figures_b_say_how_long(capsys):
    """rdyn figures --paper B: 3 s + 72 ms per GD step of the seven trainings (measured 146 s
    wall at the default 2000 steps, 4.4 s with --quick); announced before the training, the
    quick run (under 10 s) silently."""
    from rdyn.run_time import figures_b_estimate

    assert figures_b_estimate(2000, False).seconds == pytest.approx(3.0 + 144.0)
    assert figures_b_estimate(2000, False).line() == (
        "rdyn figures: about 2 min (seven full-matrix Model B trainings of 2000 GD steps)")
    assert figures_b_estimate(60, True).seconds == pytest.approx(3.0 + 1.38)


def test_figures_command_on_a_full_disk(full_disk, capsys):
    """The issue's `rdyn figures` on a full disk (a 61-line ENOSPC traceback, the figures
    lost): each figure goes whole to a rescue folder, one warning line each, the JSON names
    where they are, nothing partial under --out."""
    import shutil

    disk, fill = full_disk
    out = disk / "figs"
    out.mkdir()
    fill(4096)
    rc, stdout, err = run_main(capsys, ["figures", "--paper", "B", "--quick", "--steps", "2",
                                        "--out", str(out), "--json"])
    assert rc == 0 and "Traceback" not in err, err
    figures = json.loads(stdout)["figures"]
    warnings_ = [line for line in err.splitlines() if "No space left on device" in line]
    rescued = [p for p in figures.values() if not p.startswith(str(out))]
    assert rescued and len(warnings_) == len(rescued)
    for p in figures.values():
        assert open(p, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    assert all(os.path.getsize(out / name) > 0 for name in os.listdir(out))   # whole files only
    assert not [n for n in os.listdir(out) if n.startswith(".")]                # no temporaries
    for p in rescued:
        shutil.rmtree(os.path.dirname(p), ignore_errors=True)


# ------------------------------------------------------------------ issue 32: the contract inside the project

def test_no_tracked_file_cites_the_external_contract():
    """The contract is docs/interface.md (and the conventions docs/models_and_conventions.md):
    no docstring, help text, schema, notebook or page cites the external specification file,
    which neither the repository nor the wheel contains; nor the external numerics notes (their
    facts are restated in docs/numerics.md)."""
    import subprocess as sp
    from pathlib import Path

    root = ROOT
    needles = ("SPEC" + ".md", "NUMERICS" + ".md")   # spelled apart: this file is tracked too
    listed = sp.run(["git", "ls-files"], cwd=root, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    citing = []
    for name in listed.stdout.split():
        path = root / name
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue   # binary files
        citing += [f"{name}:{n}" for n, line in enumerate(text.splitlines(), 1)
                   if any(needle in line for needle in needles)]
    assert not citing, citing
    assert (root / "docs" / "interface.md").is_file()


def test_help_points_to_documentation_that_exists(capsys):
    import re

    rc, out, err = run_main(capsys, ["--help"])
    assert rc == 0
    text = " ".join(out.split())
    folder = re.search(r"installed with the package:\n  (\S+)\n", out).group(1)
    assert folder == rdyn.docs_folder() and os.path.isfile(os.path.join(folder, "interface.md"))
    for page in ("input_rules.md", "api.md", "cli.md"):
        assert page in text and os.path.isfile(os.path.join(folder, page))


def test_issue_32_sampled_ln_says_how_long(capsys, monkeypatch):
    """rdyn ln on sphere data (qmc / monte_carlo): 1.1e-7 s per drawn coordinate (d n + d per
    point) and 6.7e-9 s per step, point and dimension: the looped defaults (d = 16, n = 32,
    1e5 points, 2000 steps) about 27 s, said first."""
    from rdyn.run_time import sampled_ln_estimate

    est = sampled_ln_estimate(16, 32, 100000, 2000)
    assert est.seconds == pytest.approx(1.1e-7 * 1e5 * 528 + 6.7e-9 * 2000 * 1e5 * 16)
    assert est.line() == "rdyn ln: about 27 s (100000 sampled points of dimension 16, 2000 steps)"
    from rdyn.reduced_dynamics.model_b import run as mb

    class Stop(Exception):
        pass

    def stop(*args, **kwargs):
        raise Stop

    monkeypatch.setattr(mb, "run", stop)
    with pytest.raises(Stop):
        run_main(capsys, ["ln", "--model", "looped", "--json"])
    assert capsys.readouterr().err.startswith("rdyn ln: about 27 s (100000 sampled points")
