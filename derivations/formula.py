"""A formula is data: the whitelist parser for formulas a user or a file gives
(``--activation-expr``, the API's ``activation_expr``, sweep points, checkpoints, Dask jobs)
and for the project's own formula strings (the erratum's corrected expressions).

Nothing here calls ``sympify``, ``eval`` or ``exec``. The text is checked and turned into a
sympy tree by walking Python's ``ast`` of it, admitting only (docs/input_rules.md, "Security"):

* numbers (decimal literals only, taken exactly: ``0.1`` is 1/10; not ``0x10``, ``0o7``,
  ``0b1``, which Python would read), the symbol ``x`` (or the caller's symbols), the constants
  ``pi`` and ``E``;
* ``+ - * / **``, unary ``+``/``-``, parentheses;
* calls of the functions in :data:`FUNCTIONS` with positional arguments (``besselj(n, x)``: n
  an integer constant of magnitude at most :data:`MAX_BESSEL_ORDER`).

Everything else is refused, in one line naming what was found: attribute access, subscripts,
strings, lambdas, comprehensions, keywords, comparisons, any other name (``__import__``,
``factorial``, ``floor``, ``Derivative``, ``zoo``, ``nan``, ...). The bounds below are checked
before Python's parser or sympy sees the text, so no input can exhaust time or memory:

* at most :data:`MAX_LENGTH` characters, all from :data:`ALLOWED_CHARACTERS` (ASCII letters,
  digits, spaces, ``+-*/().,``: no underscore, quote, bracket or non-ASCII character, so no
  dunder name and no Unicode look-alike that Python would normalise into one);
* parentheses nested at most :data:`MAX_DEPTH` deep, at most :data:`MAX_NODES` syntax nodes;
* a number literal is 0 or between 1e-6 and 1e6 in magnitude (``MIN_LITERAL``, ``MAX_LITERAL``);
* an exponent does not contain the variable and is at most :data:`MAX_EXPONENT` in magnitude,
  and every constant sub-expression stays below 10^:data:`MAX_CONSTANT_DIGITS` in magnitude
  (checked in floating point before the exact value is formed: ``9**9**9**9`` is refused
  without being computed);
* the result must be finite (no ``zoo``, ``oo``, ``nan`` from ``1/0`` or ``log(0)``).

:func:`time_budget` bounds what runs after the parse (differentiation, evaluation checks) in
wall-clock time where the platform allows it (the main thread of a POSIX process).
"""
from __future__ import annotations

import ast
import math
import re
import signal
import threading
from contextlib import contextmanager
from fractions import Fraction
from typing import Mapping

import sympy as sp

MAX_LENGTH = 500
MAX_DEPTH = 20
MAX_NODES = 200
MIN_LITERAL = 1e-6
MAX_LITERAL = 1e6
MAX_EXPONENT = 16
MAX_CONSTANT_DIGITS = 100
MAX_BESSEL_ORDER = 20   # besselj(n, x): n an integer constant, |n| <= this
ALLOWED_CHARACTERS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 +-*/().,")

#: name -> (sympy function, smallest and largest number of arguments)
FUNCTIONS: dict[str, tuple[object, int, int]] = {
    "exp": (sp.exp, 1, 1), "log": (sp.log, 1, 1), "sqrt": (sp.sqrt, 1, 1),
    "sin": (sp.sin, 1, 1), "cos": (sp.cos, 1, 1), "tan": (sp.tan, 1, 1),
    "sinh": (sp.sinh, 1, 1), "cosh": (sp.cosh, 1, 1), "tanh": (sp.tanh, 1, 1),
    "atan": (sp.atan, 1, 1), "asinh": (sp.asinh, 1, 1),
    "erf": (sp.erf, 1, 1), "erfc": (sp.erfc, 1, 1),
    "Abs": (sp.Abs, 1, 1), "abs": (sp.Abs, 1, 1),
    "Max": (sp.Max, 2, 8), "Min": (sp.Min, 2, 8), "max": (sp.Max, 2, 8), "min": (sp.Min, 2, 8),
    "besselj": (sp.besselj, 2, 2),
}
CONSTANTS: dict[str, sp.Expr] = {"pi": sp.pi, "E": sp.E}

_BINARY = {ast.Add: sp.Add, ast.Mult: sp.Mul,
           ast.Sub: lambda a, b: sp.Add(a, sp.Mul(-1, b)),
           ast.Div: lambda a, b: sp.Mul(a, sp.Pow(b, -1)),
           ast.Pow: sp.Pow}
# a decimal literal as written: digits, an optional point and fraction, an optional exponent
_DECIMAL = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_OPERATOR_NAMES = {ast.FloorDiv: "//", ast.Mod: "%", ast.MatMult: "@", ast.BitXor: "^",
                   ast.BitOr: "|", ast.BitAnd: "&", ast.LShift: "<<", ast.RShift: ">>"}


class FormulaError(ValueError):
    """A formula refused by the whitelist (one-line message)."""


def parse(text: str, symbols: Mapping[str, sp.Symbol], *, what: str = "formula",
          symbolic_exponents: bool = False, max_length: int = MAX_LENGTH,
          max_nodes: int = MAX_NODES) -> sp.Expr:
    """The sympy expression of ``text``, a formula in the names of ``symbols`` (module docstring:
    what is admitted and the bounds). Raises :class:`FormulaError` (a ``ValueError``) with a
    one-line message starting with ``what``.

    ``symbolic_exponents=True`` admits exponents that contain the symbols (``(D - K)**K``); it is
    for the project's own formula strings (the erratum's expressions, whose symbols are sizes),
    never for ``--activation-expr``; so are larger ``max_length``/``max_nodes``. The underscore is admitted only when a symbol's name has
    one (``T_star``)."""
    if not isinstance(text, str) or not text.strip():
        raise FormulaError(f"{what}: empty expression")
    if len(text) > max_length:
        raise FormulaError(f"{what}: expression longer than {max_length} characters")
    allowed = ALLOWED_CHARACTERS | ({"_"} if any("_" in name for name in symbols) else set())
    bad = sorted({c for c in text if c not in allowed})
    if bad:
        hint = " (use ** for powers)" if "^" in bad else ""
        raise FormulaError(f"{what}: character {bad[0]!r} is not allowed{hint}; a formula uses "
                           "numbers, names, + - * / ** ( ) and commas only")
    depth = 0
    for c in text:
        depth += (c == "(") - (c == ")")
        if depth > MAX_DEPTH:
            raise FormulaError(f"{what}: parentheses nested deeper than {MAX_DEPTH}")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise FormulaError(f"{what}: cannot parse {text!r} as a formula") from None
    nodes = sum(1 for _ in ast.walk(tree))
    if nodes > max_nodes:
        raise FormulaError(f"{what}: more than {max_nodes} syntax nodes")
    expr = _Builder(text, symbols, what, symbolic_exponents).build(tree.body)
    if expr.has(sp.zoo, sp.oo, -sp.oo, sp.nan):
        raise FormulaError(f"{what}: {text!r} is not finite (a division by zero or a log(0)?)")
    return expr


def symbols_in(text: str, as_symbols: tuple[str, ...] = ()) -> dict[str, sp.Symbol]:
    """Every identifier of ``text`` that is not a function or constant of :func:`parse` (or is
    named in ``as_symbols``), as a plain sympy symbol: the symbol table for the project's own
    formula strings (the erratum's expressions and derived forms), never for user text."""
    names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    keep = (names - set(FUNCTIONS) - set(CONSTANTS)) | (names & set(as_symbols))
    return {name: sp.Symbol(name) for name in keep}


class _Builder:
    """Walks the syntax tree; every node type not handled here is refused."""

    def __init__(self, text: str, symbols: Mapping[str, sp.Symbol], what: str,
                 symbolic_exponents: bool):
        self.text, self.symbols, self.what = text, dict(symbols), what
        self.symbolic_exponents = symbolic_exponents

    def refuse(self, why: str):
        raise FormulaError(f"{self.what}: {why} is not allowed in a formula")

    def build(self, node) -> sp.Expr:
        if isinstance(node, ast.Constant):
            return self.number(node)
        if isinstance(node, ast.Name):
            if node.id in self.symbols:
                return self.symbols[node.id]
            if node.id in CONSTANTS:
                return CONSTANTS[node.id]
            if node.id in FUNCTIONS:
                self.refuse(f"the function name {node.id} without arguments")
            names = ", ".join(sorted(self.symbols))
            raise FormulaError(
                f"{self.what}: the name {node.id!r} is not allowed (only the symbol"
                f"{'s' if len(self.symbols) > 1 else ''} {names}, the constants pi and E, and the "
                f"functions {', '.join(sorted(FUNCTIONS))} may appear)")
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                return sp.Mul(-1, self.build(node.operand))
            if isinstance(node.op, ast.UAdd):
                return self.build(node.operand)
            self.refuse(f"the operator {type(node.op).__name__}")
        if isinstance(node, ast.BinOp):
            op = type(node.op)
            if op not in _BINARY:
                self.refuse(f"the operator {_OPERATOR_NAMES.get(op, op.__name__)}")
            if op is ast.Pow:
                return self.power(node)
            return _BINARY[op](self.build(node.left), self.build(node.right))
        if isinstance(node, ast.Call):
            return self.call(node)
        kind = {ast.Attribute: "attribute access", ast.Subscript: "a subscript",
                ast.Lambda: "a lambda", ast.Compare: "a comparison", ast.BoolOp: "and/or",
                ast.IfExp: "if/else", ast.Tuple: "a tuple", ast.List: "a list"}
        self.refuse(kind.get(type(node), f"the construct {type(node).__name__}"))

    def number(self, node: ast.Constant) -> sp.Expr:
        value = node.value
        written = ast.get_source_segment(self.text, node) or repr(value)
        if type(value) not in (int, float):
            self.refuse(f"the literal {written}")
        if not _DECIMAL.fullmatch(written):   # 0x10, 0o7, 0b1: Python reads them, a formula not
            raise FormulaError(f"{self.what}: the number {written} is not a decimal literal "
                               "(hexadecimal, octal and binary numbers are not allowed; write "
                               "digits with an optional point and exponent, e.g. 16, 0.5, 2e-3)")
        if value != 0 and not (MIN_LITERAL <= abs(value) <= MAX_LITERAL):
            raise FormulaError(f"{self.what}: the number {ast.get_source_segment(self.text, node)}"
                               f" is outside [{MIN_LITERAL:g}, {MAX_LITERAL:g}] in magnitude")
        if type(value) is int:
            return sp.Integer(value)
        exact = Fraction(ast.get_source_segment(self.text, node))   # the decimal as written
        return sp.Rational(exact.numerator, exact.denominator)

    def power(self, node: ast.BinOp) -> sp.Expr:
        base, exponent = self.build(node.left), self.build(node.right)
        if exponent.free_symbols:
            if self.symbolic_exponents:
                return sp.Pow(base, exponent)
            self.refuse("a power whose exponent contains a variable (write exp(a*log(b)))")
        e = _float(exponent)
        if e is None or abs(e) > MAX_EXPONENT:
            raise FormulaError(f"{self.what}: an exponent must be a number of magnitude at "
                               f"most {MAX_EXPONENT}")
        if not base.free_symbols:
            b = _float(base)
            if b is None or (b != 0 and abs(e * math.log10(abs(b))) > MAX_CONSTANT_DIGITS):
                raise FormulaError(f"{self.what}: a constant power exceeds "
                                   f"10^{MAX_CONSTANT_DIGITS} in magnitude")
        return sp.Pow(base, exponent)

    def call(self, node: ast.Call) -> sp.Expr:
        if not isinstance(node.func, ast.Name):
            self.refuse("a call of anything but a named function")
        name = node.func.id
        if name not in FUNCTIONS:
            self.refuse(f"the function {name!r} (known: {', '.join(sorted(FUNCTIONS))})")
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            self.refuse("a keyword or starred argument")
        function, least, most = FUNCTIONS[name]
        if not least <= len(node.args) <= most:
            count = f"{least}" + (f" to {most}" if most != least else "")
            raise FormulaError(f"{self.what}: {name} takes {count} argument"
                               + ("" if most == 1 else "s"))
        args = [self.build(a) for a in node.args]
        if name == "besselj" and not (args[0].is_Integer and abs(int(args[0])) <= MAX_BESSEL_ORDER):
            raise FormulaError(f"{self.what}: besselj(n, x) takes an integer order n of magnitude "
                               f"at most {MAX_BESSEL_ORDER} (found {args[0]})")
        result = function(*args)
        if not result.free_symbols:
            value = _float(result)
            if value is None or (value != 0 and abs(value) > 10.0 ** MAX_CONSTANT_DIGITS):
                raise FormulaError(f"{self.what}: the constant {name}(...) is not a finite "
                                   f"number below 10^{MAX_CONSTANT_DIGITS}")
        return result


def _float(expr: sp.Expr) -> float | None:
    """A constant sub-expression's value as a float, None if it is not a finite real number.
    Its size is bounded by the checks above, so the evaluation is cheap."""
    try:
        value = complex(sp.N(expr, 17))
    except (TypeError, ValueError, OverflowError):
        return None
    if value.imag != 0 or not math.isfinite(value.real):
        return None
    return value.real


class BudgetExceeded(Exception):
    """Raised inside :func:`time_budget` when the time is up."""


@contextmanager
def time_budget(seconds: float, what: str):
    """Run the body for at most ``seconds`` of wall-clock time; past that a one-line
    ``ValueError`` naming ``what``. Uses ``SIGALRM`` (the main thread of a POSIX process);
    elsewhere the body runs unbounded in time (the parse bounds still hold). An outer timer is
    restored afterwards."""
    usable = (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread())
    if not usable:
        yield
        return

    def on_alarm(signum, frame):
        raise BudgetExceeded

    previous = signal.signal(signal.SIGALRM, on_alarm)
    outer = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except BudgetExceeded:
        raise ValueError(f"{what}: checking the formula took longer than {seconds:g} s") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer[0] > 0:
            signal.setitimer(signal.ITIMER_REAL, *outer)
