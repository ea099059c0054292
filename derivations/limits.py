"""Limits at ``s -> 0+`` of log-rational sums, decided by exact algebra instead of sympy ``limit``.

An expression is *log-rational* in ``s`` when it is a finite sum of terms ``c(s) log(s)^m prod_i log(u_i(s))^k_i``
with ``c`` and every ``u_i`` rational in ``s`` (coefficients free of ``s``) and ``u_i(0)`` finite and positive.
Every ``log(arg)`` of the input is first split as ``log(arg) = v log(s) + log(u)`` with ``v`` the order of the
rational ``arg`` at 0 and ``u = arg/s^v`` (valid for ``s > 0`` where ``arg > 0``, which the caller establishes: for
Lemma D.17 the ``U_exact`` obligation shows the log arguments positive); the terms are then grouped by their log
monomial, and each group's Laurent coefficients at 0 are computed exactly on the expression tree (sums term by term,
products by truncated convolution, integer powers by products and a series inverse; no common denominator of the
whole expression is formed). The limit is read off three elementary facts:

(i)   a rational function whose Laurent coefficients of negative order vanish tends to its order-0 coefficient;
(ii)  ``s^j log(s)^m -> 0`` for ``j >= 1`` and every ``m >= 0``;
(iii) ``log(u(s)) -> log(u(0))`` when ``u(0) > 0`` (continuity), so a bounded factor.

A group with a power of ``log(s)`` must therefore vanish to order ``>= 1`` and every other group to order ``>= 0``
(each lower coefficient identically zero by ``cancel``); anything else (a pole only a Taylor expansion of a log
would remove) is refused with ``None`` rather than guessed. Every leading coefficient that is divided by (a series
inverse, a log argument's ``u(0)``) must be nonzero for *every* admissible parameter value
(:func:`nonzero_everywhere`: a product of factors each of sympy-decided sign, or a polynomial in one parameter
with no root in its range by Sturm counting).

:func:`eventual_sign` decides the sign of an expression for all small ``s``: the sign of the finite, nonzero limit of
``s^j expr`` for the least ``j`` that gives one. Lowest layer (sympy only).
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

__all__ = ("Limit", "limit_at_zero", "eventual_sign", "nonzero_everywhere", "positive_everywhere")


@dataclass(frozen=True)
class Limit:
    """``value`` of the limit, and the log monomials whose coefficients were shown to vanish in the limit (each
    ``(monomial, order)``: its coefficient is ``O(s^order)``): the record a reader checks the three facts of the module docstring against."""

    value: sp.Expr
    vanishing: tuple


def _integral_powers(expr: sp.Expr, ranges: dict) -> sp.Expr | None:
    """``expr`` with each positive symbol ``p`` that carries fractional exponents replaced by ``r^m`` (``r`` a fresh
    positive symbol, ``m`` the lcm of the denominators): a bijection of the positive reals, so signs are kept and
    ``sp.factor`` sees polynomials. ``None`` for a symbol with a range (its range would have to be mapped)."""
    denominators: dict = {}
    for power in expr.atoms(sp.Pow):
        base, exponent = power.args
        if isinstance(base, sp.Symbol) and isinstance(exponent, sp.Rational) and exponent.q > 1:
            denominators[base] = sp.ilcm(denominators.get(base, 1), exponent.q)
    for base, m in denominators.items():
        if base in ranges or not base.is_positive:
            return None
        expr = expr.xreplace({base: sp.Dummy(f"root_{base}", positive=True)**m})
    return sp.powsimp(sp.expand_power_base(expr, force=True)) if denominators else expr


def _factor_signs(expr: sp.Expr, ranges: dict) -> list | None:
    """``(coefficient, [(factor, exponent, sign)])`` for ``sp.factor_list(expr)``, each factor's sign fixed for every
    admissible parameter value (sympy's assumptions, or a polynomial in one parameter ``p`` with no real root in
    ``ranges[p]`` by Sturm counting, signed at the range's midpoint); ``None`` when a factor's sign is not fixed."""
    if expr.is_number:
        return [expr, []] if expr.is_comparable else None
    expr = _integral_powers(expr, ranges)
    if expr is None:
        return None
    coefficient, factors = sp.factor_list(sp.factor(expr))
    out = []
    for base, exponent in factors:
        if base.is_positive:
            out.append((base, exponent, 1))
            continue
        if base.is_negative:
            out.append((base, exponent, -1))
            continue
        free = base.free_symbols
        if len(free) != 1:
            return None
        (p,) = free
        if p not in ranges or not base.is_polynomial(p):
            return None
        lo, hi = (sp.nsimplify(bound) for bound in ranges[p])
        if sp.Poly(base, p).count_roots(lo, hi) != 0:
            return None
        middle = base.subs(p, (lo + hi) / 2)
        out.append((base, exponent, 1 if middle > 0 else -1))
    return [coefficient, out]


def nonzero_everywhere(expr: sp.Expr, ranges: dict) -> bool:
    """``expr != 0`` for every admissible value of its symbols (:func:`_factor_signs`)."""
    signs = _factor_signs(expr, ranges)
    return signs is not None and signs[0] != 0


def positive_everywhere(expr: sp.Expr, ranges: dict) -> bool:
    """``expr > 0`` for every admissible value of its symbols (:func:`_factor_signs`)."""
    signs = _factor_signs(expr, ranges)
    if signs is None or signs[0] == 0 or not signs[0].is_number:
        return False
    sign = 1 if signs[0] > 0 else -1
    for _, exponent, factor_sign in signs[1]:
        sign *= factor_sign**exponent
    return sign == 1


def _valuation(rational: sp.Expr, s: sp.Symbol, ranges: dict) -> tuple[int, sp.Expr, sp.Expr, bool] | None:
    """``(v, a, b, constant)``: ``rational = s^v (a + O(s))/(b + O(s))`` with ``b != 0`` for every admissible
    parameter, and ``constant`` when ``rational/s^v`` is free of s. ``v`` is a lower bound of the valuation (a
    numerator coefficient that sympy does not recognise as zero counts as nonzero, which can only refuse a limit,
    never fake one); the fraction is not reduced (no gcd: the lowest coefficients are all a valuation needs).
    ``None`` when ``rational`` is not rational in ``s`` or the denominator's lowest coefficient may vanish."""
    num, den = sp.fraction(sp.together(rational))
    if not (num.is_polynomial(s) and den.is_polynomial(s)):
        return None
    pn, pd = sp.Poly(num, s), sp.Poly(den, s)
    if pn.is_zero:
        return 0, sp.Integer(0), sp.Integer(1), True
    vn = min(m[0] for m in pn.monoms())
    vd = min(m[0] for m in pd.monoms())
    low_n, low_d = pn.coeff_monomial(s**vn), pd.coeff_monomial(s**vd)
    if not nonzero_everywhere(low_d, ranges):
        return None
    return vn - vd, low_n, low_d, len(pn.monoms()) == 1 and len(pd.monoms()) == 1


def _split_logs(expr: sp.Expr, s: sp.Symbol, ranges: dict, log_s: sp.Symbol):
    """``expr`` with every ``log(arg)`` replaced by ``v log_s + log(u)`` (``arg = s^v u``, ``u(0) > 0``); each
    remaining ``log(u)`` replaced by a fresh symbol. Returns the new expression and ``{symbol: u(0)}``, or ``None``."""
    expr = sp.expand_log(expr, force=True)
    continuous = {}
    replacements = {}
    for term in expr.atoms(sp.log):
        arg = term.args[0]
        if not arg.has(s):
            continue
        split = _valuation(arg, s, ranges)
        if split is None:
            return None
        v, low_num, low_den, constant = split
        at_zero = sp.cancel(low_num / low_den)
        if not positive_everywhere(at_zero, ranges):
            return None
        replacement = v * log_s
        if not constant:
            symbol = sp.Dummy(f"log_u{len(continuous)}")
            continuous[symbol] = at_zero
            replacement += symbol
        else:
            replacement += sp.log(at_zero)
        replacements[term] = replacement
    return expr.xreplace(replacements), continuous


def _by_log_monomial(body: sp.Expr, generators: list) -> dict:
    """``body``, a polynomial in ``generators``, as ``{exponents: coefficient}``: each coefficient is the Taylor
    coefficient (derivatives at 0, which keeps it compact: expanding ``body`` would multiply out its rational
    factors); the degree in a generator is the first order of differentiation after which it no longer occurs."""
    groups: dict = {}

    def walk(expr, index, exponents, factorial):
        if index == len(generators):
            groups[tuple(exponents)] = expr / factorial
            return
        gen, k, derivative = generators[index], 0, expr
        while True:
            walk(derivative.subs(gen, 0), index + 1, exponents + [k], factorial * sp.factorial(k))
            if not derivative.has(gen):
                return
            derivative, k = sp.diff(derivative, gen), k + 1

    walk(body, 0, [], sp.Integer(1))
    return groups


class _Refused(Exception):
    """The expression leaves the class the three facts decide (a non-rational s-dependence, a leading coefficient
    that may vanish for an admissible parameter)."""


def _clean(coefficients: dict) -> dict:
    return {k: c for k, c in coefficients.items() if c != 0}


def _leading(coefficients: dict) -> tuple[int, sp.Expr] | None:
    """The lowest order whose coefficient is not identically zero (decided by ``cancel``), or ``None``."""
    for k in sorted(coefficients):
        c = sp.cancel(coefficients[k])
        if c != 0:
            return k, c
    return None


def _valuation_bound(expr: sp.Expr, s: sp.Symbol, ranges: dict) -> int:
    """A lower bound of the order of ``expr`` at 0 (exact for a quotient's denominator, via its series)."""
    if not expr.has(s):
        return 0
    if expr == s:
        return 1
    if isinstance(expr, sp.Add):
        return min(_valuation_bound(arg, s, ranges) for arg in expr.args)
    if isinstance(expr, sp.Mul):
        return sum(_valuation_bound(arg, s, ranges) for arg in expr.args)
    if isinstance(expr, sp.Pow) and expr.exp.is_Integer:
        if expr.exp > 0:
            return int(expr.exp) * _valuation_bound(expr.base, s, ranges)
        return int(expr.exp) * _exact_valuation(expr.base, s, ranges)[0]
    raise _Refused(expr)


def _exact_valuation(expr: sp.Expr, s: sp.Symbol, ranges: dict) -> tuple[int, sp.Expr]:
    """The order of ``expr`` at 0 and its leading coefficient, which must be nonzero for every admissible
    parameter (it is divided by)."""
    bound = _valuation_bound(expr, s, ranges)
    for extra in (0, 2, 6, 14):
        leading = _leading(_series(expr, s, ranges, bound + extra))
        if leading is not None:
            if not nonzero_everywhere(leading[1], ranges):
                raise _Refused(leading[1])
            return leading
    raise _Refused(expr)


def _series(expr: sp.Expr, s: sp.Symbol, ranges: dict, top: int) -> dict:
    """The Laurent coefficients ``{k: c_k}`` of ``expr`` for orders ``k <= top``: ``expr = sum c_k s^k +
    O(s^(top+1))``, computed on the expression tree (sums term by term, products by truncated convolution with each
    factor taken only to the order the others' valuations leave, integer powers by repeated products and a series
    inverse), so no common denominator of the whole expression is ever formed."""
    if not expr.has(s):
        return {0: expr} if top >= 0 else {}
    if expr == s:
        return {1: sp.Integer(1)} if top >= 1 else {}
    if isinstance(expr, sp.Add):
        out: dict = {}
        for arg in expr.args:
            for k, c in _series(arg, s, ranges, top).items():
                out[k] = out.get(k, 0) + c
        return _clean(out)
    if isinstance(expr, sp.Mul):
        factors = list(expr.args)
        bounds = [_valuation_bound(f, s, ranges) for f in factors]
        total = sum(bounds)
        out, remaining = {0: sp.Integer(1)}, total
        for f, bound in zip(factors, bounds):
            remaining -= bound                         # the factors still to come contribute at least this order
            out = _product(out, _series(f, s, ranges, top - (total - bound)), top - remaining)
        return out
    if isinstance(expr, sp.Pow) and expr.exp.is_Integer:
        n = int(expr.exp)
        base = expr.base
        if n > 0:
            vb = _valuation_bound(base, s, ranges)
            series_base = _series(base, s, ranges, top - (n - 1) * vb)
            out = {0: sp.Integer(1)}
            for i in range(n):
                out = _product(out, series_base, top - (n - 1 - i) * vb)
            return out
        m = -n                                         # base = s^vb B(s), B(0) = b0; base^n = s^(-m vb) B^(-m)
        vb, b0 = _exact_valuation(base, s, ranges)
        degree = top + m * vb                          # B^(-m) is needed to this degree
        if degree < 0:
            return {}
        series_base = _series(base, s, ranges, vb + degree)
        shifted = [series_base.get(vb + i, 0) for i in range(degree + 1)]
        inverse: list = []
        for i in range(degree + 1):
            c = (1 if i == 0 else 0) - sum(shifted[j] * inverse[i - j] for j in range(1, i + 1))
            inverse.append(c / b0)
        powered = {0: sp.Integer(1)}
        for _ in range(m):
            powered = _product(powered, dict(enumerate(inverse)), degree)
        return _clean({k - m * vb: c for k, c in powered.items()})
    raise _Refused(expr)


def _product(a: dict, b: dict, top: int) -> dict:
    out: dict = {}
    for i, ci in a.items():
        for j, cj in b.items():
            if i + j <= top:
                out[i + j] = out.get(i + j, 0) + ci * cj
    return _clean(out)


def _order_at_least(coefficient: sp.Expr, s: sp.Symbol, ranges: dict, needed: int) -> tuple[bool, sp.Expr] | None:
    """Whether the Laurent coefficients of ``coefficient`` vanish identically below order ``needed`` (each decided
    by ``cancel``), and its order-0 coefficient when ``needed == 0`` (:func:`_series`). ``None`` when the
    expression leaves the decidable class."""
    try:
        series = _series(coefficient, s, ranges, 0 if needed == 0 else needed - 1)
    except _Refused:
        return None
    for k in sorted(series):
        if k < needed and sp.cancel(series[k]) != 0:
            return False, sp.Integer(0)
    return True, sp.cancel(series.get(0, 0))


def limit_at_zero(expr: sp.Expr, s: sp.Symbol, ranges: dict | None = None) -> Limit | None:
    """The limit of a log-rational ``expr`` as ``s -> 0+`` by the facts (i)-(iii) of the module docstring, or
    ``None`` when they do not decide it (an unbounded group, or a leading coefficient that may vanish).
    ``ranges`` gives ``(lo, hi)`` for parameters that are not sign-definite by their assumptions."""
    ranges = ranges or {}
    log_s = sp.Dummy("log_s")
    split = _split_logs(expr, s, ranges, log_s)
    if split is None:
        return None
    body, continuous = split
    generators = [log_s, *continuous]
    value, vanishing = sp.Integer(0), []
    for monomial, coefficient in _by_log_monomial(body, generators).items():
        term = sp.Mul(*(gen**k for gen, k in zip(generators, monomial)))
        needed = 1 if monomial[0] > 0 else 0        # fact (ii) for a power of log(s); (i) and (iii) otherwise
        decided = _order_at_least(coefficient, s, ranges, needed)
        if decided is None or not decided[0]:
            return None
        if needed:
            vanishing.append((term, needed))
        else:
            value += decided[1] * term.xreplace({symbol: sp.log(at_zero) for symbol, at_zero in continuous.items()})
    return Limit(sp.cancel(value), tuple(vanishing))


def eventual_sign(expr: sp.Expr, s: sp.Symbol, ranges: dict | None = None, max_power: int = 8) -> int | None:
    """The sign of ``expr`` for all sufficiently small ``s > 0``: that of the first finite nonzero limit of
    ``s^j expr``, ``j = 0, 1, ...`` (``s^j > 0``); ``None`` if no ``j <= max_power`` decides it."""
    for j in range(max_power + 1):
        result = limit_at_zero(s**j * expr, s, ranges)
        if result is None:
            continue
        if result.value.is_positive:
            return 1
        if result.value.is_negative:
            return -1
        if result.value != 0:
            return None          # a value whose sign sympy cannot decide
        return None              # limit 0 at the least decided j: the sign is not read off this order
    return None
