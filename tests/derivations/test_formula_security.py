"""A formula is data, never code (docs/input_rules.md, "Security").

The whitelist parser (rdyn.derivations.formula) must refuse every hostile formula in one line
within a second, on every entry point (CLI, API), without running anything; it must build the
right expression for every admitted formula (property-based, against a float evaluation written
here independently); and no module of the package may hand text to sympify/eval/exec/pickle
outside the audited call sites listed below.
"""
from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import mpmath
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

import rdyn
from rdyn import cli
from rdyn.derivations import formula
from rdyn.derivations.activations import parse_expression, x

from checkout import ROOT

# (formula, words the one-line refusal must contain)
HOSTILE = [
    ("__import__('os').system('touch PWNED') + x", "not allowed"),
    ("__import__('os').system('touch PWNED2')", "not allowed"),
    ("x.__class__.__mro__", "not allowed"),
    ("x.real", "attribute access"),
    ("(lambda y: y)(x)", "not allowed"),
    ("[c for c in x]", "not allowed"),
    ("exec(x)", "the function 'exec'"),
    ("eval(x)", "the function 'eval'"),
    ("open(x)", "the function 'open'"),
    ("getattr(x, x)", "the function 'getattr'"),
    ("sympify(x)", "the function 'sympify'"),
    ("x+9**9**9**9", "exponent"),
    ("x+factorial(10**7)*0", "the function 'factorial'"),
    ("x + 10**10**10", "exponent"),
    ("(((2**16)**16)**16)**16 * x", "10^100"),
    ("x*exp(exp(exp(100)))", "not a finite number"),
    ("zoo*x", "the name 'zoo'"),
    ("nan*x", "the name 'nan'"),
    ("oo*x", "the name 'oo'"),
    ("x/0", "not finite"),
    ("x*log(0)", "not a finite number"),
    ("floor(x)", "the function 'floor'"),
    ("Derivative(sin(x), x)", "the function 'Derivative'"),
    ("Integral(x, x)", "the function 'Integral'"),
    ("Piecewise((x, x > 0), (0, True))", "not allowed"),
    ("S('x')", "not allowed"),
    ("x if x else x", "if/else"),
    ("x > 0", "not allowed"),
    ("x and x", "and/or"),
    ("sin(x=1)", "not allowed"),
    ("sin(*x)", "starred"),
    ("\uff58 + 1", "not allowed"),                 # fullwidth x (NFKC-normalised by Python)
    ("\U0001d431 + 1", "not allowed"),             # mathematical bold x
    ("x\u200b+1", "not allowed"),                  # zero-width space
    ("x^2", "use ** for powers"),
    ("x // 2", "//"),
    ("x @ x", "not allowed"),
    ("1j*x", "the literal 1j"),
    ("True*x", "the literal True"),
    ("1e-300*x", "outside"),
    ("1e300*x", "outside"),
    ("x**x", "exponent contains a variable"),
    ("2**x", "exponent contains a variable"),
    ("(" * 25 + "x" + ")" * 25, "nested deeper"),
    ("-" * 300 + "x", "syntax nodes"),
    ("x+" * 120 + "x", "syntax nodes"),
    ("x" * 501, "longer than 500"),
    ("", "empty"),
    ("x +", "cannot parse"),
    ("7", "does not depend on x"),
    ("y + x", "only the symbol x"),
    ("sin", "without arguments"),
    ("sin(x, x)", "takes 1 argument"),
    ("1e-3*1e-3*1e-3*x", "max |sigma'|"),            # every literal allowed, the scale not
]


@pytest.mark.parametrize("text, words", HOSTILE)
def test_hostile_formula_refused_in_one_line_within_a_second(text, words, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    parse_expression.cache_clear()
    start = time.perf_counter()
    with pytest.raises(ValueError) as refused:
        parse_expression(text)
    assert time.perf_counter() - start < 1.0
    from rdyn.derivations.fields import FieldError
    from rdyn.options.engine_errors import error_text

    # the library names its field; the API and the command line word it as the option
    assert isinstance(refused.value, FieldError) and refused.value.field == "activation_expr"
    assert str(refused.value).startswith("activation_expr: ")
    message = error_text(refused.value)
    assert "\n" not in message and message.startswith("--activation-expr: ") and words in message
    assert list(tmp_path.iterdir()) == []            # nothing was run


@pytest.mark.parametrize("text", [t for t, _ in HOSTILE[:12]] + ["zoo*x", "floor(x)",
                                                                  "Derivative(sin(x), x)"])
def test_hostile_formula_refused_by_cli_and_api(text, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["teacher", "--activation-expr", text, "--quiet"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1, err
    with pytest.raises(ValueError):
        rdyn.teacher(activation_expr=text, quiet=True)
    with pytest.raises(ValueError):
        rdyn.sweep(activation="expr", activation_expr=text, grid="D=8;K=2")
    assert list(tmp_path.iterdir()) == []


def test_console_command_runs_nothing(tmp_path):
    """The reported exploit, through the installed entry point's code path in a new process:
    exit 2, one line, no file."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for text in ("__import__('os').system('touch PWNED') + x",
                 "__import__('os').system('touch PWNED2')"):
        run = subprocess.run([sys.executable, "-m", "rdyn", "teacher", "--activation-expr", text],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert run.returncode == 2 and run.stdout == ""
        assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert list(tmp_path.iterdir()) == []


def test_numbers_are_taken_exactly_as_written():
    assert parse_expression("0.1*x + tanh(x)") == x / 10 + sp.tanh(x)
    assert parse_expression("x*1e-3 + tanh(x)") == x / 1000 + sp.tanh(x)
    assert parse_expression("Max(x, 0)**3 + x") == sp.Max(x, 0) ** 3 + x
    assert parse_expression("x - 2*x/3 + tanh(x)") == x / 3 + sp.tanh(x)
    assert formula.parse("-x**2", {"x": x}) == -x ** 2           # ** binds tighter than unary -


def test_project_strings_admit_symbolic_exponents_and_underscores():
    D, K = sp.symbols("D K")
    T_star = sp.Symbol("T_star")
    assert formula.parse("(D - K)**K", {"D": D, "K": K}, symbolic_exponents=True) == (D - K) ** K
    with pytest.raises(ValueError, match="exponent contains a variable"):
        formula.parse("(D - K)**K", {"D": D, "K": K})
    assert formula.parse("2*T_star", formula.symbols_in("2*T_star")) == 2 * T_star
    with pytest.raises(ValueError, match="'_'"):
        formula.parse("x.__class__", {"x": x})


def test_time_budget_stops_a_long_body():
    start = time.perf_counter()
    with pytest.raises(ValueError, match="longer than 0.2 s"):
        with formula.time_budget(0.2, "--activation-expr"):
            while True:
                pass
    assert time.perf_counter() - start < 2.0


# ----------------------------------------------------------------------------- property tests
_UNARY = {"exp": math.exp, "sin": math.sin, "cos": math.cos, "tanh": math.tanh,
          "atan": math.atan, "erf": math.erf, "abs": abs}
_UNARY_MP = {"exp": mpmath.exp, "sin": mpmath.sin, "cos": mpmath.cos, "tanh": mpmath.tanh,
             "atan": mpmath.atan, "erf": mpmath.erf, "abs": mpmath.fabs}


def _trees(depth):
    """(text, python float function of x) pairs from the admitted grammar."""
    leaves = st.one_of(
        st.just(("x", lambda v, table: v)),
        st.integers(1, 50).map(lambda n: (str(n), lambda v, table, n=n: n)),
        st.sampled_from(["0.5", "0.25", "1.5", "2.75"]).map(
            lambda t: (t, lambda v, table, t=t: mpmath.mpf(t) if table is _UNARY_MP else float(t))))
    if depth == 0:
        return leaves
    sub = _trees(depth - 1)

    def binary(pair, op):
        (a, fa), (b, fb) = pair
        return (f"({a}) {op} ({b})", {"+": lambda v, t: fa(v, t) + fb(v, t),
                                      "-": lambda v, t: fa(v, t) - fb(v, t),
                                      "*": lambda v, t: fa(v, t) * fb(v, t)}[op])

    def unary(item, name):
        a, fa = item
        return (f"{name}({a})", lambda v, t: t[name](fa(v, t)))

    def power(item, k):
        a, fa = item
        return (f"({a})**{k}", lambda v, t: fa(v, t) ** k)

    return st.one_of(
        leaves,
        st.builds(binary, st.tuples(sub, sub), st.sampled_from("+-*")),
        st.builds(unary, sub, st.sampled_from(sorted(_UNARY))),
        st.builds(power, sub, st.integers(0, 3)),
        st.builds(lambda item: (f"-({item[0]})", lambda v, t: -item[1](v, t)), sub))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(tree=_trees(3), point=st.floats(-2, 2))
def test_admitted_formulas_mean_what_they_say(tree, point):
    text, reference = tree
    try:
        want = float(reference(point, _UNARY))   # float64 first: skips values beyond its range
    except OverflowError:
        return
    if math.isfinite(want):
        # The reference itself at 420 digits (mpmath, independent of sympy): every intermediate is
        # below 1.8e308 here, so even cos(exp(exp(5))) keeps about 100 correct digits.  (The float
        # value alone is not a reference: cos(exp(18)) loses 1e-9 to the rounding of exp(18).)
        with mpmath.workdps(420):
            want = float(reference(mpmath.mpf(point), _UNARY_MP))
    try:
        expr = formula.parse(text, {"x": x})
    except formula.FormulaError as refused:   # only for the stated bounds
        assert re.search(r"outside|10\^100|syntax nodes|nested|not finite", str(refused)), str(refused)
        return
    got = complex(sp.N(expr.subs(x, sp.Float(point, 30)), 20))
    if math.isfinite(want) and abs(want) < 1e12:
        assert got.imag == 0 and got.real == pytest.approx(want, rel=1e-12, abs=1e-12), text


_GARBAGE = st.recursive(
    st.one_of(st.sampled_from(["x", "y", "1", "0", "2.5", "1e999", "pi", "E", "zoo", "__x__", "'s'",
                               "None", "[]", "{}", "...", "oo", "I"])),
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "**", "//", "%", "@", "^", ".",
                                          ",", " if x else ", " and ", "<", "=="]), inner)
        .map("".join),
        st.tuples(st.sampled_from(["sin", "exp", "eval", "exec", "lambda y:", "getattr", "S",
                                   "factorial", "floor", "Max", "besselj", "__import__", "-", ""]),
                  inner).map(lambda p: f"{p[0]}({p[1]})"),
        st.tuples(inner, st.sampled_from([".real", ".__class__", "[0]", "()", "(x, y=1)"]))
        .map("".join)),
    max_leaves=12)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(text=_GARBAGE)
def test_any_text_is_refused_cleanly_or_parsed_into_x(text):
    """Random syntax (code, attributes, names, operators): a FormulaError or an expression whose
    only symbol is x; never another exception, never slow."""
    start = time.perf_counter()
    try:
        expr = formula.parse(text, {"x": x})
    except formula.FormulaError as refused:
        assert "\n" not in str(refused)
    else:
        assert expr.free_symbols <= {x} and not expr.has(sp.zoo, sp.nan, sp.oo)
    assert time.perf_counter() - start < 1.0


# ----------------------------------------------------------------------------- the audit
# Every call that can turn text into code, with why it is safe; a new one fails this test.
AUDITED = {
    ("derivations/generated.py", "exec"): 1,      # the one exec: source rdyn printed from derived sympy trees or templates
    ("derivations/activations.py", "eval"): 1,    # srepr text of the package's generated module
    ("derivations/model_a/catalog.py", "eval"): 1,        # srepr text of the package's generated module
    ("reduced_dynamics/runs/kernel_cache.py", "pickle"): 3,  # numba cache in a private folder only
}
# a bare call or one through the sympy module (a method such as Poly.eval is not one), or
# pickle.load(s)
_PATTERN = re.compile(r"(?:(?<![\w.])|(?<=\bsp\.)|(?<=\bsympy\.)|(?<=\bsympy_parser\.))"
                      r"(sympify|parse_expr|eval|exec|S)\s*\(|\b(pickle)\.loads?\s*\(")


def test_the_audit_pattern_finds_what_it_must():
    hits = lambda code: [m.group(1) or m.group(2) for m in _PATTERN.finditer(code)]
    assert hits("e = sp.sympify(text)") == ["sympify"]
    assert hits("sympy.S(text) + sympify(t) + parse_expr(t)") == ["S", "sympify", "parse_expr"]
    assert hits("eval(t); exec(t); pickle.loads(b); pickle.load(f)") == ["eval", "exec", "pickle",
                                                                          "pickle"]
    assert hits("poly.eval(0) + obj.exec(1) + evaluate(x) + sp.Symbol('S')") == []


def _package_files():
    for folder in ("derivations", "reduced_dynamics", "verify", "rdyn"):
        yield from sorted((ROOT / folder).rglob("*.py"))


def test_no_text_reaches_sympify_eval_exec_or_pickle_outside_the_audit():
    found = {}
    for path in _package_files():
        rel = path.relative_to(ROOT).as_posix()
        for line in path.read_text().splitlines():
            code = line.split("#")[0]
            for match in _PATTERN.finditer(code):
                if re.search(r"[\"'].*" + re.escape(match.group(0)), code):
                    continue                           # inside a string (a docstring or message)
                key = (rel, match.group(1) or match.group(2))
                found[key] = found.get(key, 0) + 1
    unexpected = {k: v for k, v in found.items() if AUDITED.get(k) != v}
    assert not unexpected, f"unaudited calls (add a reason to AUDITED or remove them): {unexpected}"


def test_kernel_cache_refuses_a_folder_others_can_write(tmp_path, monkeypatch):
    from rdyn.reduced_dynamics.runs import kernel_cache

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("RDYN_CACHE_DIR", str(shared))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert kernel_cache.cache_root() == tmp_path / "xdg" / "rdyn"
    assert not kernel_cache._private(shared)
