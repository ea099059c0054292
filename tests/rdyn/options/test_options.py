"""Input rules (issue 10): every subcommand refuses bad input up front, with one line on stderr
naming the option and exit status 2, and the Python API raises ValueError with the same line.

The property-based tests are driven by the option table (rdyn.options.COMMANDS), so a new
option is covered automatically (a new free-text option must get an entry in BAD_STRINGS).
"""
from __future__ import annotations

import importlib.util
import json
import math
import os
import string
import subprocess
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import rdyn
from rdyn import cli, options as opt
from rdyn.options import COMMANDS

from checkout import ROOT_DIR as ROOT
README = os.path.join(ROOT, "README.md")  # a regular file: a path below it has no folder

# Minimal valid arguments of commands with required options.
BASE = {"sweep": ["--grid", "D=8;K=2", "--steps", "10"]}
BASE_KW = {"sweep": {"grid": "D=8;K=2", "steps": 10}}

# Bad values of the free-text options (kind "str"): each must be refused naming the option.
BAD_STRINGS = {
    ("teacher", "record"): ["a,b", "1,x", "-1", "99999999999"],
    ("crosscheck", "record"): ["a", "400", "-3"],
    ("ln", "spectrum"): ["x", "1,2", "0,1,1", "1.5,2"],
    ("sweep", "grid"): ["nonsense", "D=8;K=2;eta=inf", "D=8;K=2;sigma_prime_zero=nan",
                        "D=8;K=2;kappa=0.2", "D=8;K=2;Q=1", "D=8;K=9", ""],
    ("sweep", "scheduler"): ["nonsense", "tcp://127.0.0.1:0", "http://127.0.0.1:8786"],   # malformed: no connect
    ("scaling", "activation"): ["tanh", "relu,relu", ","],
    ("verify", "only"): ["", " ", "Z.*", "nothing"],
    ("ln", "record"): ["a,b", "-1", "99999", "1.5"],
    ("teacher", "activation_expr"): ["y", "1/x", "exp(x**2)", "x+", "3", "log(x)", "sqrt(x)"],
    ("crosscheck", "activation_expr"): ["y*x", "1/x", "x+", "2"],
    ("sweep", "activation_expr"): ["y", "1/x", "exp(x**2)", "x+", "3", "x**2"],
    ("figures", "activation_expr"): ["y", "1/x", "exp(x**2)", "x+", "3", "x**2"],
    ("asymptotics", "activation_expr"): ["y", "1/x", "exp(x**2)", "x+", "3"],
    ("crosscheck", "vstar_row_norms"): ["a,b", "1,-2,3,4", "nan,1,1,1", "1,2", "0,1,1,1"],
    ("prove", "statement"): ["Lemma Z.9", "", "Lemma D.5; rm -rf /"],
    ("prove", "spectrum"): ["x", "1,2", "0,1,1"],
    ("prove", "s0"): ["x", "1", "2,1", "0,1", "1,inf"],
    ("prove", "eta_fraction"): ["x", "0.5", "0,1", "0.5,0.2", "1,2", "-1,1", "nan,1", "1e-200,1"],
    ("prove", "gamma"): ["x", "-1,2", "1"],
    ("prove", "grid"): ["nonsense", "D=8;K=2;eta=inf", "D=8;K=2;eta=fast", "D=8;K=2;sigma_prime_zero=2",
                        "D=8;K=2;kappa=0.2", "D=8;K=2;Q=1", "D=8;K=9", "D=8;K=2;activation=erf", "", " "],
    ("prove", "scheduler"): ["nonsense", "tcp://127.0.0.1:0", "http://127.0.0.1:8786"],
}

NAME_CHARS = string.ascii_letters + string.digits + "._+"


def _not_a_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return True
    return False


def bad_values(command: str, o: opt.Option, tmp: str):
    """A strategy of bad command-line values (strings) for option ``o``."""
    if o.kind == "int":
        cases = [st.sampled_from(["abc", "2.5", "1e3.5", "", "nan", "0x10"])]  # "1e3" is 1000
        if o.lo is not None:
            cases.append(st.integers(max_value=int(o.lo) - (0 if o.lo_open else 1)).map(str))
        if o.hi is not None:
            cases.append(st.integers(min_value=int(o.hi) + (0 if o.hi_open else 1)).map(str))
        if o.applies is not None and o.applies({**_defaults(command)}) is False:
            cases.append(st.just("1" if o.lo is None or o.lo <= 1 else str(int(o.lo))))
        return st.one_of(cases)
    if o.kind == "float":
        cases = [st.sampled_from(["nan", "inf", "-inf", "NaN", "Infinity", "x", "", "1e400"])]
        if o.lo is not None:
            cases.append(st.floats(max_value=o.lo, exclude_max=not o.lo_open,
                                   allow_nan=False, allow_infinity=False).map(repr))
        if o.hi is not None:
            cases.append(st.floats(min_value=o.hi, exclude_min=not o.hi_open,
                                   allow_nan=False, allow_infinity=False).map(repr))
        return st.one_of(cases)
    if o.kind == "choice":
        return st.text(NAME_CHARS, min_size=1, max_size=8).filter(lambda s: s not in o.choices)
    if o.kind == "out":
        return st.sampled_from([os.path.join(README, "x.out"),
                                os.path.join(tmp, "missing", "deeper", "x.out")]
                               if o.output == "file" else [README, os.path.join(README, "sub")])
    if o.kind == "path":
        return st.text(NAME_CHARS, min_size=1, max_size=8).map(
            lambda s: os.path.join(tmp, "no-such-dir", s))
    if o.kind == "str":
        assert (command, o.name) in BAD_STRINGS, f"add bad values for {command} --{o.name}"
        return st.sampled_from(BAD_STRINGS[(command, o.name)])
    raise AssertionError(f"no bad values for kind {o.kind}")


def _defaults(command: str) -> dict:
    return {o.name: o.default for o in COMMANDS[command].options}


def _option_testable(command: str, o: opt.Option) -> bool:
    if o.kind == "flag" or o.cli_only:
        return False
    return True


CASES = [(c, o.name) for c, cmd in COMMANDS.items() for o in cmd.options if _option_testable(c, o)]


def run_cli(capsys, argv):
    capsys.readouterr()
    start = time.perf_counter()
    try:
        rc = cli.main(argv)
    except SystemExit as exc:  # argparse
        rc = exc.code
    elapsed = time.perf_counter() - start
    out, err = capsys.readouterr()
    return rc, out, err, elapsed


def assert_refused(rc, out, err, elapsed, flag):
    assert rc == 2, (rc, err)
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert flag in lines[0], (flag, lines[0])
    assert elapsed < 10, f"took {elapsed:.1f} s: work was done before the refusal"


@settings(max_examples=100, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_option_refuses_bad_values(data, capsys, tmp_path_factory):
    tmp = str(tmp_path_factory.getbasetemp())
    command, name = data.draw(st.sampled_from(CASES), label="option")
    o = COMMANDS[command].option(name)
    value = data.draw(bad_values(command, o, tmp), label="value")
    argv = [command, *BASE.get(command, []), f"{o.flag}={value}"]
    rc, out, err, elapsed = run_cli(capsys, argv)
    flag = o.flag
    if (command, name) == ("sweep", "grid"):
        flag = "--grid"
    assert_refused(rc, out, err, elapsed, flag)


def test_every_option_is_covered():
    """Every option of every command gets bad values above (or is a flag / --json)."""
    kinds = {o.kind for cmd in COMMANDS.values() for o in cmd.options}
    assert kinds <= {"int", "float", "choice", "out", "path", "str", "flag"}
    for c, cmd in COMMANDS.items():
        for o in cmd.options:
            if o.kind == "str":
                assert (c, o.name) in BAD_STRINGS


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_api_raises_the_cli_message(data, capsys):
    """Numeric bad values: rdyn.CMD(opt=value) raises ValueError with the CLI's message."""
    numeric = [(c, n) for c, n in CASES if COMMANDS[c].option(n).kind in ("int", "float")]
    command, name = data.draw(st.sampled_from(numeric), label="option")
    o = COMMANDS[command].option(name)
    text = data.draw(bad_values(command, o, "/nonexistent"), label="value")
    try:
        value = int(text) if o.kind == "int" else float(text)
    except ValueError:
        return  # not a number: only the CLI parses text
    if o.kind == "float" and abs(value) == math.inf and text not in ("inf", "-inf", "Infinity"):
        return
    rc, out, err, _ = run_cli(capsys, [command, *BASE.get(command, []), f"{o.flag}={text}"])
    assert rc == 2
    cli_message = err.strip().split(": error: ", 1)[1]
    with pytest.raises(ValueError) as info:
        getattr(rdyn, command)(**{**BASE_KW.get(command, {}), name: value})
    assert str(info.value) == cli_message


def test_api_refuses_unknown_keyword_and_wrong_types():
    with pytest.raises(ValueError, match="unknown option 'nope' for rdyn teacher"):
        rdyn.teacher(nope=1)
    with pytest.raises(ValueError, match="--D must be an integer"):
        rdyn.teacher(D=2.5)
    with pytest.raises(ValueError, match="--eta must be a real number"):
        rdyn.teacher(eta="0.1")
    with pytest.raises(ValueError, match="--K must be an integer"):
        rdyn.teacher(K=True)
    with pytest.raises(ValueError, match="unknown option 'json'"):
        rdyn.teacher(json=True)


# ----------------------------------------------------------------------------- help
def test_help_of_rdyn_and_every_command(capsys):
    for argv in (["--help"], ["-h"], *[[c, "--help"] for c in cli.SUBCOMMANDS]):
        with pytest.raises(SystemExit) as info:
            cli.main(argv)
        assert info.value.code == 0, argv
        out = capsys.readouterr().out
        assert out.startswith("usage: rdyn"), argv
    with pytest.raises(SystemExit):
        cli.main(["teacher", "--help"])
    out = capsys.readouterr().out
    for o in COMMANDS["teacher"].options:
        assert o.flag in out


def test_help_and_a_refusal_in_a_subprocess():
    out = subprocess.run([sys.executable, "-m", "rdyn", "--help"], capture_output=True,
                         text=True, cwd=ROOT)
    assert out.returncode == 0 and "teacher" in out.stdout and out.stderr == ""
    out = subprocess.run([sys.executable, "-m", "rdyn", "teacher", "--eta", "nan"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == "rdyn teacher: error: --eta must be a finite number, got nan\n"
    out = subprocess.run([sys.executable, "-m", "rdyn", "crosscheck", "--seed", "-1"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "--seed" in out.stderr


# ----------------------------------------------------------------------------- classes
@pytest.mark.parametrize("argv, words", [
    (["teacher", "--eta", "inf"], "--eta must be a finite number"),
    (["teacher", "--sigma-prime-zero", "nan"], "--sigma-prime-zero must be a finite number"),
    (["teacher", "--vstar-norm2", "inf"], "--vstar-norm2 must be a finite number"),
    (["ln", "--alpha0", "nan"], "--alpha0 must be a finite number"),
    (["ln", "--beta0", "inf"], "--beta0 must be a finite number"),
    (["sweep", "--grid", "D=8;K=2;eta=inf", "--steps", "5"], "--grid: eta must be finite"),
    (["sweep", "--grid", "D=8;K=2;sigma_prime_zero=nan", "--steps", "5"],
     "--grid: sigma_prime_zero must be finite"),
    (["crosscheck", "--seed", "-1"], "--seed must be in 0.."),
    (["ln", "--seed", "-1"], "--seed must be in 0.."),
    (["figures", "--seed", "-1"], "--seed must be in 0.."),
    (["teacher", "--checkpoint-every", "5"], "--checkpoint-every applies only with --checkpoint"),
    (["sweep", "--grid", "D=8;K=2;kappa=0.2", "--steps", "5"],
     "--grid: kappa applies to leaky rows only"),
    (["ln", "--dps", "30"], "--dps applies only when the expectation is exact"),
    (["teacher", "--dps", "5000"], f"--dps 5000 is above the supported maximum {opt.DPS_MAX}"),
    (["teacher", "--dps", "4"], "--dps must be in 5.."),
    (["teacher", "--kappa", "0.2"], "--kappa applies to --activation leaky only"),
    (["crosscheck", "--batch", "5"], "--batch applies to --mode sgd only"),
    (["ln", "--L", "3"], "--L applies only to --model looped"),
    (["scaling", "--model", "B", "--kappa", "0.2"], "--kappa applies to the leaky activation"),
])
def test_refusals(capsys, argv, words):
    rc, out, err, elapsed = run_cli(capsys, argv)
    assert rc == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert words in err, err


def test_sweep_scheduler_without_dask(capsys, monkeypatch):
    find_spec = importlib.util.find_spec   # as if distributed were not installed (CI installs it)
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "distributed" else find_spec(name, *a))
    for argv in (["sweep", "--grid", "D=8;K=2", "--steps", "5"], ["prove", "--grid", "D=8;K=2"]):
        rc, out, err, _ = run_cli(capsys, argv + ["--scheduler", "tcp://127.0.0.1:1"])
        assert rc == 2 and err.count("\n") == 1 and "install rdyn-theory[dask]" in err, err


def test_output_paths_checked_before_work(tmp_path, capsys, monkeypatch):
    sweep = ["sweep", "--grid", "D=8;K=2", "--steps", "5"]
    rc, _, err, _ = run_cli(capsys, sweep + ["--out", str(tmp_path / "nodir" / "rows.csv")])
    assert rc == 2 and f"folder {tmp_path / 'nodir'} does not exist" in err
    rc, _, err, _ = run_cli(capsys, sweep + ["--out", os.path.join(README, "rows.csv")])
    assert rc == 2 and f"{README} is not a directory" in err
    rc, _, err, _ = run_cli(capsys, sweep + ["--out", str(tmp_path)])
    assert rc == 2 and "is a directory, not a file" in err
    rc, _, err, _ = run_cli(capsys, ["scaling", "--out", str(tmp_path / "nodir" / "r.json")])
    assert rc == 2 and "does not exist" in err
    rc, _, err, _ = run_cli(capsys, ["figures", "--out", README])
    assert rc == 2 and f"--out: {README} is not a directory" in err
    # unwritable folders (tests run as root, so simulate the permission)
    locked = str(tmp_path / "locked")
    os.mkdir(locked)
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw:
                        False if os.path.abspath(p) == locked else real_access(p, mode, **kw))
    rc, _, err, elapsed = run_cli(capsys, ["teacher", "--checkpoint",
                                           os.path.join(locked, "c.npz")])
    assert rc == 2 and f"--checkpoint: folder {locked} is not writable" in err and elapsed < 5
    rc, _, err, _ = run_cli(capsys, ["figures", "--out", locked])
    assert rc == 2 and f"--out: folder {locked} is not writable" in err
    rc, _, err, _ = run_cli(capsys, ["figures", "--out", os.path.join(locked, "new", "sub")])
    assert rc == 2 and "is not writable" in err


def test_groups_file_entries_must_be_integers(tmp_path, capsys):
    for bad in ([[0, 1], [0.5, 1], [0, 2]], [[0, 1], ["a", 1], [0, 2]]):
        path = tmp_path / "g.json"
        path.write_text(json.dumps(bad))
        rc, _, err, _ = run_cli(capsys, ["teacher", "--groups", str(path)])
        assert rc == 2 and "--groups: indices must be integers" in err, err
    rc, _, err, _ = run_cli(capsys, ["teacher", "--groups", str(tmp_path / "none.json")])
    assert rc == 2 and "--groups: file" in err and "does not exist" in err


def test_memory_estimates_refuse_jobs_that_cannot_fit(capsys, monkeypatch):
    monkeypatch.setattr("rdyn.options.memory.available_memory", lambda: 8 * 10**9)
    rc, out, err, elapsed = run_cli(capsys, ["crosscheck", "--D", "20000", "--K", "4"])
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert "--D 20000: this job needs about 96 GB of memory, 8 GB available" in err
    rc, _, err, _ = run_cli(capsys, ["ln", "--samples", "100000000"])
    assert rc == 2 and "--samples 100000000" in err and "8 GB available" in err


def test_available_memory_reads_proc_meminfo():
    mem = opt.available_memory()
    if os.path.exists("/proc/meminfo"):
        assert isinstance(mem, int) and mem > 10**7


def test_option_table_generates_the_parser():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, command in COMMANDS.items():
        flags = {s for a in sub.choices[name]._actions for s in a.option_strings}
        assert {o.flag for o in command.options} <= flags


# ----------------------------------------------------------------------------- valid extremes
def test_extreme_but_valid_inputs(capsys):
    cases = [
        (["teacher", "--D", "2", "--K", "1", "--steps", "50", "--json"], None),
        (["teacher", "--D", "1000000", "--K", "3", "--steps", "20", "--json"], None),
        (["teacher", "--D", "10", "--K", "2", "--eta", "1e-12", "--steps", "100", "--record", "1,2",
          "--json"], None),
        (["teacher", "--D", "10", "--K", "2", "--steps", "20", "--dps", "100", "--json"], 100),
    ]
    results = []
    for argv, dps in cases:
        rc, out, err, _ = run_cli(capsys, argv)
        assert rc == 0, err
        data = json.loads(out)
        results.append(data)
        c1 = data["final"]["C1"]
        if dps is None:
            assert isinstance(c1, float) and c1 > 0
        else:
            assert isinstance(c1, str) and len(c1.split("e")[0].replace(".", "").lstrip("-")) == dps
    assert results[0]["model"]["D"] == 2 and results[0]["model"]["K"] == 1
    assert results[1]["final"]["p"] == pytest.approx(1 / 1000000, rel=1e-6)
    # eta = 1e-12: after the first step (which uses sigma'(0)) C1 grows by a constant
    # increment; the restoring term is O(eta C1) relative, far below 1e-9
    c1, c2 = (results[2]["record"][k]["C1"] for k in ("1", "2"))
    assert 0 < c1 and 0 < c2 - c1
    assert results[2]["final"]["C1"] - c2 == pytest.approx(98 * (c2 - c1), rel=1e-9)


# ----------------------------------------------------------------------------- API
def test_api_teacher_equals_cli_json(capsys):
    argv = ["teacher", "--task", "sts", "--steps", "500", "--record", "0,1,500", "--json"]
    rc, out, _, _ = run_cli(capsys, argv)
    assert rc == 0
    r = rdyn.teacher(task="sts", steps=500, record=[0, 1, 500])
    assert r.to_dict() == json.loads(out)
    assert r.final.t == 500 and r.T_star is None and r.t1 == json.loads(out)["t1"]
    assert r.record["1"].C1 == 0.2 and r.stability.eta_limit == 0.8
    assert rdyn.teacher(task="sts", steps=500, record="0,1,500") == r


def test_api_teacher_message_equals_cli_message(capsys):
    rc, _, err, _ = run_cli(capsys, ["teacher", "--D", "8", "--K", "8"])
    with pytest.raises(ValueError) as info:
        rdyn.teacher(D=8, K=8)
    assert rc == 2 and err == f"rdyn teacher: error: {info.value}\n"
    assert str(info.value) == "need K < D, got K=8, D=8"


def test_api_ln_spectrum_tuple_and_dps(capsys):
    argv = ["ln", "--model", "ln", "--data", "spectrum", "--spectrum", "4,1,1", "--d", "3",
            "--eta", "0.5", "--steps", "20", "--dps", "30", "--json"]
    rc, out, _, _ = run_cli(capsys, argv)
    assert rc == 0
    b = rdyn.ln(model="ln", data="spectrum", spectrum=(4, 1, 1), d=3, eta=0.5, steps=20, dps=30)
    assert b.to_dict() == json.loads(out)
    assert b.expectation == "exact" and b.std_error is None
    import mpmath

    assert isinstance(b.gamma, mpmath.mpf)
    with mpmath.workdps(40):  # the check's own precision, never the process's global state
        assert abs(b.gamma - b.alpha * b.beta) <= abs(b.gamma) * mpmath.mpf(10) ** -28


def test_import_rdyn_is_lazy():
    code = ("import sys, rdyn; heavy = [m for m in ('numpy', 'numba', 'sympy', 'mpmath', "
            "'rdyn.reduced_dynamics.model_a.dynamics') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr
    assert callable(rdyn.teacher) and rdyn.__version__


# ----------------------------------------------------------------------------- resume
def test_resume_with_larger_steps_is_one_longer_run(tmp_path, capsys):
    path = str(tmp_path / "t.npz")
    base = ["teacher", "--D", "8", "--K", "2", "--eta", "0.5", "--record", "5", "--json"]
    rc, _, err, _ = run_cli(capsys, base + ["--steps", "3000", "--checkpoint", path])
    assert rc == 0, err
    rc, extended, err, _ = run_cli(capsys, base + ["--steps", "40000", "--resume", path])
    assert rc == 0, err
    rc, single, _, _ = run_cli(capsys, base + ["--steps", "40000"])
    assert extended == single
    data = json.loads(single)
    assert data["T_star"] is not None and 3000 < data["T_star"] < 40000  # crossed after 3000
    rc, _, err, _ = run_cli(capsys, base + ["--steps", "2000", "--resume", path])
    assert rc == 2 and "is at step 3000, beyond --steps 2000" in err


def test_ln_resume_with_larger_steps(tmp_path, capsys):
    path = str(tmp_path / "b.npz")
    base = ["ln", "--data", "spectrum", "--d", "4", "--spectrum", "3,1,1,1", "--json"]
    assert run_cli(capsys, base + ["--steps", "100", "--checkpoint", path])[0] == 0
    rc, extended, err, _ = run_cli(capsys, base + ["--steps", "250", "--resume", path])
    assert rc == 0, err
    assert extended == run_cli(capsys, base + ["--steps", "250"])[1]


def test_input_rules_doc_lists_the_current_table():
    with open(os.path.join(ROOT, "docs", "input_rules.md")) as fh:
        doc = fh.read()
    assert opt.markdown().strip() in doc, "regenerate the tables of docs/input_rules.md"
