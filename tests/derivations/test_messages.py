"""Messages (issue 40, "Messages and help"): values that start with a minus, long values
summarised, the stability sentence of `rdyn teacher`, Python warnings as one line
(docs/input_rules.md, rules 2 and 11, "Overflow and divergence")."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from rdyn.cli import build_parser, main, option_values_joined
from rdyn.derivations.messages import LINE_LIMIT, bounded, summarised
from rdyn.options import COMMANDS

LINE = LINE_LIMIT   # the longest refusal line (docs/input_rules.md, rule 11)


def _run(argv, capsys) -> tuple[int, str, str]:
    try:
        status = main(list(argv))
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


# --------------------------------------------------------------------------------------------
# Values may start with a minus
# --------------------------------------------------------------------------------------------

VALUE_OPTIONS = [(name, o) for name, cmd in COMMANDS.items() for o in cmd.options
                 if o.kind != "flag"]


@pytest.mark.parametrize("name,option", VALUE_OPTIONS,
                         ids=[f"{n} {o.flag}" for n, o in VALUE_OPTIONS])
def test_every_value_option_takes_a_value_with_a_minus(name, option, capsys):
    """Every option of every subcommand that takes a value: "-1,2" reaches the option (a
    str/path option keeps it as given; a number is converted or refused by argparse's type,
    a choice refused as a choice), never "expected one argument"."""
    parser = build_parser(name)
    required = {"--grid": ["--steps", "1"], "--steps": ["--grid", "D=20"]}.get(
        option.flag, ["--grid", "D=20", "--steps", "1"]) if name == "sweep" else []
    for value in ("-1,2", "-x*tanh(x)/4+x", "-0.5", "--not-an-option"):
        try:
            args = parser.parse_args(option_values_joined([name, *required, option.flag, value]))
        except SystemExit:
            err = capsys.readouterr().err
            assert "expected one argument" not in err, err
            assert option.kind in ("int", "float", "choice"), err
            continue
        got = getattr(args, option.name)
        got = got[-1] if isinstance(got, list) else got
        if option.kind in ("str", "path", "out"):
            assert got == value
        else:
            assert got == float(value) or got == value


def test_option_names_are_still_options():
    joined = option_values_joined
    assert joined(["teacher", "--eta", "--steps", "10"]) == ["teacher", "--eta", "--steps", "10"]
    assert joined(["teacher", "--eta", "--ste", "10"]) == ["teacher", "--eta", "--ste", "10"]
    assert joined(["teacher", "--record", "-h"]) == ["teacher", "--record", "-h"]
    assert joined(["teacher", "--eta", "-1"]) == ["teacher", "--eta=-1"]
    assert joined(["teacher", "--ste", "-5"]) == ["teacher", "--ste=-5"]   # an abbreviation
    assert joined(["teacher", "--json", "-1"]) == ["teacher", "--json", "-1"]   # a flag
    assert joined(["teacher", "--", "--eta", "-1"]) == ["teacher", "--", "--eta", "-1"]
    assert joined(["--version"]) == ["--version"]


@pytest.mark.parametrize("argv,message", [
    (["teacher", "--activation", "leaky", "--kappa", "-0.5"],
     "rdyn teacher: error: --kappa must be in [0, 1), got -0.5"),
    (["teacher", "--steps", "-5"], "rdyn teacher: error: --steps must be in 0..1000000000000, got -5"),
    (["ln", "--eta", "-0.1"], "rdyn ln: error: --eta must be > 0, got -0.1"),
    (["sweep", "--grid", "D=20", "--steps", "-1"], "rdyn sweep: error: --steps must be in "),
    (["prove", "--paper", "B", "--s0", "-1,2"], "rdyn prove: error: --s0"),
    (["prove", "--paper", "B", "--eta-fraction", "-0.5,1"], "rdyn prove: error: --eta-fraction"),
    (["verify", "--only", "-x"], "rdyn verify: error: --only"),
    (["teacher", "--eta", "--steps", "10"], "rdyn teacher: error: argument --eta: expected one argument"),
])
def test_negative_values_reach_validation(argv, message, capsys):
    status, _, err = _run(argv, capsys)
    assert status == 2
    line, = err.strip().splitlines()
    assert line.startswith(message), line
    if "--eta --steps" not in " ".join(argv):
        assert "expected one argument" not in line


def test_help_still_works(capsys):
    status, out, _ = _run(["teacher", "--D", "8", "--help"], capsys)
    assert status == 0 and "usage: rdyn teacher" in out


def test_a_formula_that_starts_with_a_minus_runs(capsys):
    status, out, err = _run(["teacher", "--activation-expr", "-x*tanh(x)/4+x", "--D", "8", "--K",
                             "2", "--M", "2", "--eta", "0.2", "--steps", "3", "--json",
                             "--quiet"], capsys)
    assert status == 0, err
    assert json.loads(out)["final"]["t"] == 3


# --------------------------------------------------------------------------------------------
# Long values summarised
# --------------------------------------------------------------------------------------------

def test_summarised():
    assert summarised([1, 2, 3]) == "[1, 2, 3]"
    text = summarised(list(range(100000)))
    assert len(text) <= 200 and text.endswith("...] (100000 values)") and text.startswith("[0, 1, 2")
    text = summarised({"k%d" % i: i for i in range(1000)}, json.dumps)
    assert len(text) <= 200 and text.endswith("(1000 keys)")
    text = summarised(",".join(["1"] * 20000))
    assert len(text) <= 200 and "(20000 comma-separated values, 39999 characters)" in text
    text = summarised("x" * 5000, limit=80)
    assert len(text) <= 80 and text.endswith("(5000 characters)")
    nested = [{"D": 20, "K": 4, "eta": 0.1 * i, "activation": "relu"} for i in range(5000)]
    for limit in (30, 70, 100):
        text = summarised(nested, json.dumps, limit=limit)
        assert len(text) <= max(limit, 30) and text.endswith("(5000 values)"), text
    assert summarised(nested, json.dumps, limit=70).startswith('[{"D": 20, ...} (4 keys), ')


def test_bounded():
    assert bounded("short  line\nwith a break") == "short line with a break"
    line = "rdyn x: error: " + "a" * 10000 + " END"
    text = bounded(line)
    assert len(text) <= LINE and text.startswith("rdyn x: error: aaa") and text.endswith(" END")
    assert "characters left out" in text


HUGE = {"list": ",".join(str(i % 7 + 1) for i in range(20000)), "text": "x+" * 5000 + "x",
        "minus": "-" + "x+" * 5000}
TEXT_OPTIONS = [(name, o.flag) for name, cmd in COMMANDS.items() for o in cmd.options
                if o.kind in ("str", "path", "out") and o.flag != "--record"]
BASE = {"sweep": ["--grid", "D=20", "--steps", "1"]}


@pytest.mark.parametrize("name,flag", TEXT_OPTIONS, ids=[f"{n} {f}" for n, f in TEXT_OPTIONS])
def test_huge_values_give_short_lines(name, flag, capsys, tmp_path, monkeypatch):
    """A 40,000-character value of any text option: refused in one short line."""
    monkeypatch.chdir(tmp_path)
    for kind, value in HUGE.items():
        base = [] if flag == "--grid" else BASE.get(name, [])
        extra = ["--steps", "1"] if name == "sweep" and flag == "--grid" else []
        status, _, err = _run([name, *base, flag, value, *extra], capsys)
        assert status == 2, (kind, err[:500])
        lines = err.strip().splitlines()
        assert len(lines) == 1 and len(lines[0]) <= LINE, (kind, len(err), err[:400])


@pytest.mark.parametrize("argv", [
    ["teacher", "--record", "x" * 20000],
    ["teacher", "--dps", "1" * 5000],              # int -> str beyond Python's 4300 digits
    ["teacher", "--D", "-" + "1" * 5000],
    ["teacher", "--D", "1" * 50000],               # argparse: invalid integer value '111...'
    ["ln", "--spectrum", ",".join(["x"] * 20000)],
    ["teacher", "--eta", "1" * 50000 + "x"],
    ["teacher", "--D", "1e1000000"],                # not built: int() of it took 96 s
    ["sweep", "--grid", "D=20", "--steps", "1e100000000"],
])
def test_huge_numbers_and_lists_give_short_lines(argv, capsys):
    status, _, err = _run(argv, capsys)
    assert status == 2
    line, = err.strip().splitlines()
    assert len(line) <= LINE, line[:400]


def test_api_messages_are_bounded_too():
    import rdyn

    with pytest.raises(ValueError) as info:
        rdyn.sweep(grid=";".join(f"D={i}" for i in range(3000)) + ";bad", steps=1)
    assert len(str(info.value)) <= LINE
    with pytest.raises(ValueError) as info:
        rdyn.teacher(record=list(range(10**5)) + ["x"])
    assert len(str(info.value)) <= LINE and "(100001 values)" in str(info.value)


def test_resume_with_another_grid_is_one_short_line(capsys, tmp_path):
    """The reported case: a sweep checkpoint resumed with another grid printed 53,541
    characters (568,682 for 2000 configurations)."""
    path = str(tmp_path / "c.npz")
    grid = "D=20;eta=0.01:0.3:600"
    assert main(["sweep", "--grid", grid, "--steps", "2", "--checkpoint", path, "--quiet"]) == 0
    capsys.readouterr()
    status, _, err = _run(["sweep", "--grid", "D=20;eta=0.01:0.3:601", "--steps", "2",
                           "--resume", path, "--quiet"], capsys)
    line, = err.strip().splitlines()
    assert status == 2 and len(line) <= LINE, line[:500]
    assert "different configs" in line and "(600 values) in the checkpoint" in line \
        and "(601 values) now" in line, line
    # a grid of the same size: the first configuration that differs, by its index
    status, _, err = _run(["sweep", "--grid", "D=20;eta=0.01:0.31:600", "--steps", "2",
                           "--resume", path, "--quiet"], capsys)
    line, = err.strip().splitlines()
    assert status == 2 and "different configs[1].eta: " in line and len(line) <= LINE, line


# --------------------------------------------------------------------------------------------
# The stability sentence of `rdyn teacher`
# --------------------------------------------------------------------------------------------

def _eta_line(argv, capsys) -> str:
    status, out, err = _run(argv, capsys)
    assert status == 0, err
    return next(line for line in out.splitlines() if line.strip().startswith("eta = "))


def test_stability_never_lost(capsys):
    line = _eta_line(["teacher", "--D", "20", "--K", "4", "--steps", "50"], capsys)
    assert line.strip() == ("eta = 0.4  (eta_limit = 0.8; the C1 update's multiplier stayed in "
                            "(-1, 1) at every step)")


def test_stability_lost_by_a_large_step(capsys):
    line = _eta_line(["teacher", "--D", "20", "--K", "4", "--eta", "5", "--steps", "5"], capsys)
    assert "eta_limit = 0.8; the C1 update's multiplier at p(t) fell below -1 at step 0" in line


def test_stability_lost_at_the_zero_state_says_why(capsys):
    """The reported contradiction: "eta = 0.2 (eta_limit = 0.4234; stability lost at step 0)".
    The multiplier at C1 = 0 is above 1 for this formula at any eta (the zero state repels C1);
    eta_limit bounds it at the fixed point C1*(p)."""
    line = _eta_line(["teacher", "--activation-expr", "x*tanh(x)+x/3", "--D", "8", "--K", "2",
                      "--M", "2", "--eta", "0.2", "--steps", "5", "--quiet"], capsys)
    assert "stability lost" not in line
    assert "the bound at the fixed point C1*(p)" in line
    assert "left (-1, 1) at step 0: 1.0955" in line and "above 1" in line, line


def test_eta_above_the_limit_but_never_lost(capsys):
    line = _eta_line(["teacher", "--activation-expr", "x+tanh(x)", "--D", "8", "--K", "2",
                      "--M", "2", "--eta", "0.2", "--steps", "5", "--quiet"], capsys)
    assert "eta is above it, but the C1 update's multiplier stayed in (-1, 1) over these 5 steps" \
        in line, line


# --------------------------------------------------------------------------------------------
# Python warnings: one line
# --------------------------------------------------------------------------------------------

def test_a_raw_warning_is_one_line(capsys, monkeypatch):
    import rdyn.cli.teacher as teacher

    def run(values, args):
        with np.errstate(over="warn"):
            np.exp(np.array([1000.0]))
            np.exp(np.array([1000.0]))
        warnings.warn("two\nlines", RuntimeWarning)
        warnings.warn("two\nlines", RuntimeWarning)
        return 0

    monkeypatch.setattr(teacher, "run", run)
    previous = warnings.showwarning
    with warnings.catch_warnings():
        warnings.simplefilter("always")   # each warning reaches showwarning: shown once
        status, out, err = _run(["teacher"], capsys)
    assert status == 0
    lines = err.splitlines()
    assert len(lines) == 2, err
    assert lines[0].startswith("rdyn: warning: overflow encountered in exp (RuntimeWarning in "
                               "test_messages.py:"), lines
    assert lines[1].startswith("rdyn: warning: two lines (RuntimeWarning in test_messages.py:")
    assert warnings.showwarning is previous   # restored after the command
