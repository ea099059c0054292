"""One printer, several numeric backends: derived sympy expressions -> Python source.

The same generated source runs on float64 (``math``, compiled by numba), on mpmath at any
precision, and on python-flint ``arb`` balls. Backends differ only in the namespace ``F``
(elementary functions and pi) and the constructor ``R`` of exact rationals, so every backend
evaluates literally the same recursion. Common subexpressions are shared (``sympy.cse``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Callable, Sequence

import sympy as sp
from sympy.printing.pycode import PythonCodePrinter, _known_constants_math, _known_functions_math

_FUNCTIONS = ("exp", "log", "sqrt", "atan", "sin", "cos", "acos", "atan2", "log1p", "expm1")


class _BackendPrinter(PythonCodePrinter):
    """Prints functions as ``F.name(...)``, pi as ``F.pi``, rationals as ``R(p)/R(q)``."""

    def _print_Function(self, expr):
        name = type(expr).__name__
        if name not in _FUNCTIONS:
            raise ValueError(f"no backend function for {name}")
        return f"F.{name}({', '.join(self._print(a) for a in expr.args)})"

    _print_exp = _print_sqrt = _print_atan = _print_sin = _print_cos = _print_Function
    _print_log = _print_acos = _print_atan2 = _print_Function
    def _print_Abs(self, expr):
        return f"abs({self._print(expr.args[0])})"  # exact in every backend (float, mpf, arb)

    def _print_unknown_constant(self, expr):
        raise ValueError(f"no backend constant for {expr}")

    def _print_Pi(self, expr):
        return "F.pi"

    def _print_Rational(self, expr):
        return f"(R({expr.p})/R({expr.q}))"

    def _print_Half(self, expr):
        return self._print_Rational(expr)

    def _print_Integer(self, expr):
        return str(expr.p)  # Python ints are exact in every backend; rationals go through R

    def _print_Pow(self, expr, rational=False):
        base, exponent = expr.args
        if exponent == sp.Rational(1, 2):
            return f"F.sqrt({self._print(base)})"
        if exponent == -sp.Rational(1, 2):
            return f"(R(1)/F.sqrt({self._print(base)}))"
        if exponent.is_Integer:
            n = int(exponent)
            b = self.parenthesize(base, 1000)
            if n == 0:
                return "R(1)"
            power = "*".join([b] * abs(n)) if abs(n) <= 4 else f"{b}**{abs(n)}"
            return f"({power})" if n > 0 else f"(R(1)/({power}))"
        if exponent.is_Rational and exponent.q == 2:
            return f"(F.sqrt({self._print(base)})**{exponent.p})" if exponent.p > 0 else \
                f"(R(1)/F.sqrt({self._print(base)})**{-exponent.p})"
        raise ValueError(f"unsupported power {expr}")


# sympy's table prints gamma, erf, floor, E, ... as ``math.*``, which would be float64 inside an mpmath or
# arb backend: every other function goes through the namespace ``F`` (or is refused), every other constant
# is refused.
for _name in set(_known_functions_math) | {"Max", "Min", "sign"}:
    if f"_print_{_name}" not in vars(_BackendPrinter):
        setattr(_BackendPrinter, f"_print_{_name}", _BackendPrinter._print_Function)
for _name in _known_constants_math:
    if f"_print_{_name}" not in vars(_BackendPrinter):
        setattr(_BackendPrinter, f"_print_{_name}", _BackendPrinter._print_unknown_constant)
del _name

def emit_assignments(outputs: Sequence[sp.Expr], indent: str = "    ") -> tuple[list[str], list[str]]:
    """Lines assigning common subexpressions, and the printed outputs."""
    printer = _BackendPrinter()
    replacements, reduced = sp.cse(list(outputs), symbols=sp.numbered_symbols("_x"))
    lines = [f"{indent}{sym} = {printer.doprint(expr)}" for sym, expr in replacements]
    return lines, [printer.doprint(expr) for expr in reduced]


@dataclass
class ConstantPool:
    """Hoists subexpressions that depend only on parameters out of per-step code.

    ``hoist(expr)`` replaces every maximal parameter-only, non-atomic subtree by a symbol
    ``c[i]``; ``source(name, parameters)`` prints ``def name(*parameters): return (...)``
    computing them once per run.
    """

    variables: frozenset
    constants: dict = None

    def __post_init__(self):
        self.constants = {}

    def _symbol(self, expr: sp.Expr) -> sp.Symbol:
        if expr not in self.constants:
            self.constants[expr] = sp.Symbol(f"c[{len(self.constants)}]")
        return self.constants[expr]

    def hoist(self, expr: sp.Expr) -> sp.Expr:
        if expr.free_symbols & self.variables:
            if expr.is_Atom:
                return expr
            if expr.is_Pow and expr.exp.is_Number:
                return sp.Pow(self.hoist(expr.base), expr.exp)
            if expr.is_Mul or expr.is_Add:  # fold all parameter-only operands into one constant
                fixed = [a for a in expr.args if not (a.free_symbols & self.variables)]
                moving = [self.hoist(a) for a in expr.args if a.free_symbols & self.variables]
                if len(fixed) > 1 or (fixed and fixed[0] not in (sp.S.One, sp.S.NegativeOne)):
                    moving.append(self._symbol(expr.func(*fixed)))
                elif fixed:
                    moving.append(fixed[0])
                return expr.func(*moving, evaluate=False)
            return expr.func(*[self.hoist(arg) for arg in expr.args])
        if expr in (sp.S.Zero, sp.S.One, sp.S.NegativeOne):
            return expr
        return self._symbol(expr)

    def source(self, name: str, parameters: str) -> str:
        printer = _BackendPrinter()
        body = ", ".join(printer.doprint(expr) for expr in self.constants)
        return f"def {name}({parameters}):\n    return ({body},)\n"


def math_namespace():
    """The ``math`` module itself, so numba can compile ``F.exp(...)`` calls."""
    return math


def mpmath_namespace() -> SimpleNamespace:
    import mpmath

    ns = {name: getattr(mpmath, name) for name in _FUNCTIONS}
    return SimpleNamespace(**ns, pi=mpmath.pi)


def arb_namespace() -> SimpleNamespace:
    """python-flint ``arb`` versions of the elementary functions (balls in, balls out).

    Arguments that are not yet balls (integer parameters in ``prepare``) are converted.
    ``sqrt`` takes the non-negative part first, so a ball touching 0 stays finite
    (docs/numerics.md).
    """
    from flint import arb

    def method(name):
        unbound = getattr(arb, name)

        def call(x):
            try:
                return unbound(x)
            except TypeError:  # not a ball yet (an integer parameter in ``prepare``)
                return unbound(arb(x))
        return call

    functions = {name: method(name) for name in ("exp", "log", "atan", "sin", "cos", "acos",
                                                 "log1p", "expm1")}
    functions["sqrt"] = lambda x: (x if isinstance(x, arb) else arb(x)).nonnegative_part().sqrt()
    functions["atan2"] = lambda y, x: arb.atan2(arb(y), arb(x))

    class ArbNamespace(SimpleNamespace):
        pi = property(lambda self: arb.pi())  # at the precision in force when used

    return ArbNamespace(**functions)


@dataclass(frozen=True)
class Backend:
    """Namespace ``F`` of functions and rational constructor ``R`` for generated code."""

    name: str
    functions: object
    rational: Callable

    def namespace(self) -> dict:
        return {"F": self.functions, "R": self.rational}


def float_backend() -> Backend:
    return Backend("float64", math_namespace(), float)


def mpmath_backend() -> Backend:
    import mpmath

    return Backend("mpmath", mpmath_namespace(), mpmath.mpf)


def arb_backend() -> Backend:
    from flint import arb

    return Backend("arb", arb_namespace(), arb)


# --------------------------------------------------------------------------------------------
# Interval (SSA) printing: the same expressions as a sequence of calls on (lo, hi) pairs.
# --------------------------------------------------------------------------------------------

INTERVAL_FUNCTIONS = {"exp": "iexp", "atan": "iatan", "sqrt": "isqrt"}
SSA_FUNCTIONS = ("exp", "atan", "sqrt")   # printed as op + name, e.g. iexp (intervals), dexp (dd)


class _IntervalSSA:
    """Emits one assignment per operation: ``_vN = iadd(a, b)``, ``isub``, ``imul``, ``idiv``,
    ``ineg``, ``isqr``, ``ipow(a, n)``, ``isqrt``, ``iexp``, ``iatan``; numbers become point
    intervals ``ipoint(n)`` (integers, exact) or ``idiv(ipoint(p), ipoint(q))``. Identical
    subtrees are emitted once. ``op`` is the prefix of every operation name: "i" (intervals,
    :mod:`rdyn.reduced_dynamics.certified.interval`) or "d" (double-double numbers,
    :mod:`rdyn.reduced_dynamics.numerics.double_double`: ``dadd``, ``dmul``, ``dexp``, ...)."""

    def __init__(self, names: dict, indent: str, prefix: str, op: str = "i"):
        self.names = dict(names)   # sympy atom/subtree -> variable name
        self.op = op               # operation names: op + "add", op + "mul", ...
        self.indent = indent
        self.prefix = prefix
        self.lines: list[str] = []
        self.count = 0

    def _new(self, call: str) -> str:
        name = f"{self.prefix}{self.count}"
        self.count += 1
        self.lines.append(f"{self.indent}{name} = {call}")
        return name

    def emit(self, expr: sp.Expr) -> str:
        if expr in self.names:
            return self.names[expr]
        name = self._emit(expr)
        self.names[expr] = name
        return name

    def _number(self, value: sp.Expr) -> str:
        value = sp.Rational(value)
        if value.q == 1:
            if abs(value.p) >= 2**53:
                raise ValueError(f"integer {value} is not exact in float64")
            return self._new(f"{self.op}point({float(value.p)!r})")
        return self._new(f"{self.op}div({self.op}point({float(value.p)!r}), {self.op}point({float(value.q)!r}))")

    def _emit(self, expr: sp.Expr) -> str:
        if expr.is_Symbol:
            raise ValueError(f"no interval variable for {expr}")
        if expr.is_Rational:
            return self._number(expr)
        if expr.is_Add:
            positive = [a for a in expr.args if not _is_negated(a)]
            negative = [-a for a in expr.args if _is_negated(a)]
            if not positive:
                acc = self._new(f"{self.op}neg({self.emit(negative.pop(0))})")
            else:
                acc = self.emit(positive[0])
                for a in positive[1:]:
                    acc = self._new(f"{self.op}add({acc}, {self.emit(a)})")
            for a in negative:
                acc = self._new(f"{self.op}sub({acc}, {self.emit(a)})")
            return acc
        if expr.is_Mul:
            coeff, rest = expr.as_coeff_Mul()
            if coeff == -1:
                return self._new(f"{self.op}neg({self.emit(rest)})")
            args = list(expr.args)
            acc = self.emit(args[0])
            for a in args[1:]:
                acc = self._new(f"{self.op}mul({acc}, {self.emit(a)})")
            return acc
        if expr.is_Pow:
            base, exponent = expr.args
            if exponent.is_Integer:
                n = int(exponent)
                b = self.emit(base)
                if n == 0:
                    return self._new(f"{self.op}point(1.0)")
                power = b if abs(n) == 1 else self._new(
                    f"{self.op}sqr({b})" if abs(n) == 2 else f"{self.op}pow({b}, {abs(n)})")
                return power if n > 0 else self._new(f"{self.op}div({self.op}point(1.0), {power})")
            if exponent.is_Rational and exponent.q == 2:
                root = self._new(f"{self.op}sqrt({self.emit(base)})")
                n = abs(int(exponent.p))
                power = root if n == 1 else self._new(f"{self.op}pow({root}, {n})")
                return power if exponent > 0 else self._new(f"{self.op}div({self.op}point(1.0), {power})")
            raise ValueError(f"unsupported power {expr}")
        name = type(expr).__name__
        if name in SSA_FUNCTIONS and len(expr.args) == 1:
            return self._new(f"{self.op}{name}({self.emit(expr.args[0])})")
        if expr == sp.pi:
            return self._new(f"{self.op}pi()")
        raise ValueError(f"no interval operation for {expr!r}")


def _is_negated(expr: sp.Expr) -> bool:
    return expr.is_Mul and expr.as_coeff_Mul()[0] == -1 or (expr.is_Rational and expr < 0)


def emit_interval_ssa(outputs: Sequence[sp.Expr], names: dict, indent: str = "    ",
                      prefix: str = "_v", op: str = "i") -> tuple[list[str], list[str]]:
    """Lines evaluating ``outputs`` in interval arithmetic, one operation per line (SSA), and
    the names holding the outputs. ``names`` maps the free symbols (state variables, hoisted
    constants) to the names of interval variables in scope. Common subexpressions are shared
    (``sympy.cse`` first, as :func:`emit_assignments`). The existing printers are unchanged:
    this is a separate route over the same expressions."""
    replacements, reduced = sp.cse(list(outputs), symbols=sp.numbered_symbols("_x"))
    ssa = _IntervalSSA(names, indent, prefix, op)
    for sym, expr in replacements:
        ssa.names[sym] = ssa.emit(expr)
    return ssa.lines, [ssa.emit(expr) for expr in reduced]
