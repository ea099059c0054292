"""Numerical evaluation of derived closed forms, without sympy auto-evaluation.

Substituting numbers into a sympy expression and simplifying is NOT a pure function of the
inputs: ``cos(acos(r))`` for a rational ``r`` near 1 is sometimes evaluated at low precision
during automatic simplification and comes back as ``1`` (sympy issue #23086, docs/numerics.md),
depending on the cache and ordering state of the process, so a verdict built on it would depend
on what ran before.

Everything here therefore evaluates numerically only: the expression is compiled once by
``sympy.lambdify`` (a textual translation, no evaluation) and called on mpmath numbers inside
``mpmath.workdps``, which sets and restores the precision, so the result depends on the
expression, the values and ``dps`` only. Exact rationals are converted to mpmath numbers at
the working precision, never rounded through float.
"""
from __future__ import annotations

from typing import Mapping

import mpmath
import sympy as sp


def _mpf(value) -> mpmath.mpf:
    """An mpmath number for a sympy number, int, or decimal string (at the current precision)."""
    if isinstance(value, str):
        return mpmath.mpf(value)
    if isinstance(value, (int, float)):
        return mpmath.mpf(value)   # exact: a float is a binary rational
    if not isinstance(value, sp.Expr):
        raise TypeError(f"a sympy number, int or decimal string, not {type(value).__name__}")
    if value.is_Integer:
        return mpmath.mpf(int(value))
    if value.is_Rational:
        return mpmath.mpf(int(value.p)) / int(value.q)
    return mpmath.mpf(str(sp.N(value, mpmath.mp.dps + 10)))


def evaluate(expr: sp.Expr, values: Mapping[sp.Symbol, object], dps: int = 30) -> mpmath.mpf:
    """``expr`` at ``values`` (sympy numbers, ints or decimal strings), computed with mpmath at
    ``dps`` digits plus 10 guard digits. Every free symbol of ``expr`` must be given."""
    symbols = sorted(expr.free_symbols, key=lambda s: s.name)
    missing = [s.name for s in symbols if s not in values]
    if missing:
        raise ValueError(f"no value for {', '.join(missing)}")
    function = sp.lambdify(symbols, expr, modules="mpmath")
    with mpmath.workdps(dps + 10):
        result = function(*(_mpf(values[s]) for s in symbols))
        return +mpmath.mpf(result) if not isinstance(result, mpmath.mpc) else result


def at_correlation(expr: sp.Expr, theta: sp.Symbol, rho, dps: int = 30, **values) -> mpmath.mpf:
    """``expr`` (a function of the angle ``theta`` between two Gaussians) at correlation
    ``rho = cos(theta)``, computed stably near ``|rho| = 1``.

    ``cos(theta)`` and ``sin(theta)`` are replaced structurally (``xreplace``, no evaluation) by
    ``rho`` and ``sqrt((1 - rho)(1 + rho))``, with ``1 - rho`` formed exactly from the given
    decimal or rational; a bare ``theta`` is ``atan2(sin, cos)`` (accurate for rho -> 1, where
    ``acos`` loses half the digits). ``values`` gives the other symbols by name.
    """
    cos_t, sin_t = sp.Dummy("cos_theta"), sp.Dummy("sin_theta")
    expanded = sp.expand_trig(expr)
    replaced = expanded.xreplace({sp.cos(theta): cos_t, sp.sin(theta): sin_t})
    if replaced.has(sp.cos(theta)) or any(f.has(theta) for f in replaced.atoms(sp.Function)):
        raise ValueError(f"theta appears inside a function other than sin/cos: {expr}")
    if isinstance(rho, (str, int)):
        rho = sp.Rational(rho)   # a decimal string: exact
    elif isinstance(rho, float):
        rho = sp.Float(rho)
    by_name = {s.name: s for s in expr.free_symbols}
    numbers = {by_name[k]: v for k, v in values.items() if k in by_name}
    with mpmath.workdps(dps + 10):
        one_minus_rho_squared = _mpf((1 - rho) * (1 + rho))  # exact rational, then rounded once
        sin_value = mpmath.sqrt(one_minus_rho_squared)
        cos_value = _mpf(rho)
        numbers.update({cos_t: cos_value, sin_t: sin_value,
                        theta: mpmath.atan2(sin_value, cos_value)})
        symbols = sorted(replaced.free_symbols, key=lambda s: s.name)
        function = sp.lambdify(symbols, replaced, modules="mpmath")
        return +function(*(v if isinstance(v, mpmath.mpf) else _mpf(v)
                           for v in (numbers[s] for s in symbols)))
