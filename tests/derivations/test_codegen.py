"""derivations/codegen.py: one printer for every numeric backend, and the constant pool."""
from __future__ import annotations

import mpmath
import pytest
import sympy as sp

from rdyn.derivations import codegen
from rdyn.derivations.generated import run_generated

x, a, b = sp.symbols("x a b", positive=True)


def _compile(outputs, namespace):
    lines, printed = codegen.emit_assignments(outputs)
    source = "def f(x):\n" + "\n".join(lines + [f"    return ({', '.join(printed)},)"]) + "\n"
    return run_generated(source, "codegen test", namespace)["f"]


def test_printed_source_equals_sympy_at_30_digits_on_mpmath():
    outputs = [sp.sqrt(x) + sp.Rational(1, 3), sp.exp(x) ** 2 / (1 + x) ** 5, sp.atan(x) * sp.pi,
               x ** sp.Rational(-3, 2), sp.log(x) * sp.exp(x) ** 2]   # exp(x)**2 shared (cse)
    with mpmath.workdps(30):
        f = _compile(outputs, {"F": codegen.mpmath_namespace(), "R": mpmath.mpf})
        got = f(mpmath.mpf(7) / 10)
        for out, value in zip(outputs, got):
            want = mpmath.mpf(str(sp.N(out.subs(x, sp.Rational(7, 10)), 40)))
            assert abs(want - value) < mpmath.mpf(10) ** -27 * abs(want), (out, value, want)


def test_rationals_are_exact_in_the_backend_integers_stay_python_ints():
    printer = codegen._BackendPrinter()
    assert printer.doprint(sp.Rational(1, 3) * x).replace("(", "").replace(")", "") == "R1/R3*x"
    assert printer.doprint(x ** 3) == "((x)*(x)*(x))"           # small powers multiplied out
    assert printer.doprint(x ** -2) == "(R(1)/((x)*(x)))"
    assert printer.doprint(x ** sp.Rational(3, 2)) == "(F.sqrt(x)**3)"
    assert printer.doprint(sp.pi * x) == "F.pi*x"


def test_a_function_without_a_backend_is_refused():
    with pytest.raises(ValueError, match="no backend function for g"):
        codegen.emit_assignments([sp.Function("g")(x)])


y = sp.Symbol("y", real=True)


@pytest.mark.parametrize("expr", [sp.gamma(y), sp.erf(y), sp.tanh(y), sp.floor(y), sp.sign(y), sp.Max(y, 1)])
def test_functions_in_sympys_math_table_are_refused_not_printed_as_float64_math(expr):
    # sympy's PythonCodePrinter would print these as math.*: float64 inside the mpmath and arb backends
    with pytest.raises(ValueError, match="no backend function"):
        codegen.emit_assignments([expr])


@pytest.mark.parametrize("const", [sp.E, sp.oo, sp.nan])
def test_constants_other_than_pi_are_refused(const):
    with pytest.raises(ValueError, match="no backend constant"):
        codegen.emit_assignments([const * x])


def test_abs_prints_as_the_builtin_exact_in_every_backend():
    assert codegen.emit_assignments([sp.Abs(y)])[1] == ["abs(y)"]


def test_constant_pool_hoists_parameter_only_subtrees_once():
    pool = codegen.ConstantPool(frozenset({x}))
    hoisted = pool.hoist(a * b * x + a ** 2 + sp.exp(x) * a * b)
    c0, c1 = sp.Symbol("c[0]"), sp.Symbol("c[1]")
    assert list(pool.constants) == [a * b, a ** 2] or list(pool.constants) == [a ** 2, a * b]
    assert hoisted.free_symbols == {x, c0, c1}
    constants = run_generated(pool.source("constants", "a, b"), "pool", {"F": codegen.math_namespace(),
                                                                       "R": float})["constants"]
    values = dict(zip(pool.constants, constants(3.0, 5.0)))
    assert values == {a * b: 15.0, a ** 2: 9.0}
