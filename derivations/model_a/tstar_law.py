"""Lemma D.17's law for T* (seed 000, corrected) for the identity activation in the flow limit: an argument whose
identities, inequalities and limits are machine-checked obligations, and whose step 0 (Euler convergence) and the
calculus that assembles steps 4-6 are not (:data:`UNCHECKED_STEPS`; so :attr:`TstarLaw.proved` is False and the
ledger does not call the law proved).

The corrected Lemma D.17 (docs/claims.md, root cause ``Tstar_logit_scale``) says that, as eta -> 0
and then D -> oo at fixed K and ``v = ||V*||^2``, ``eta T* = D^a (D-K)^2 (I0 + I1 (D-K)^(-1/2)) (1 + o(1))``
with ``a = 1`` for logits/D and ``a = 0`` for logits/sqrtD; for the identity ``I0 = K/v`` and ``I1 = 0``
(:func:`rdyn.derivations.model_a.asymptotics.tau_star_expansion`, matched asymptotics: formal). This module
argues the identity's law with explicit bounds, for every K >= 1 and v > 0:

    for every D > 2K satisfying the explicit hypothesis (H) below (true for every large D, and for every
    D >= D0(K, v), a threshold :func:`threshold` finds and :func:`hypothesis_from` decides exactly),
    tau_lo(D) <= tau_star(D) <= tau_hi(D), where tau_star = lim_{eta -> 0} eta T*, and
    tau_lo / (D^a N^2) -> K/v, tau_hi / (D^a N^2) -> K/v, with N^(1/2) (tau/(D^a N^2) - K/v) -> 0 (I1 = 0).

The argument. Steps 1-3, and every inequality steps 4-6 use, are exact sympy computations of :func:`prove` (an
:class:`Obligation` of method "exact" each; steps 4-6's in :func:`band_obligations`, on boxes of the bounded
quantities), on the flow that rdyn.derivations.model_a.gradient_flow derives from the map. Step 0 is cited; the
three calculus facts that assemble steps 4-6 from their inequalities are named in :data:`UNCHECKED_STEPS`
(``calculus_frame``); the limits of step 6 and the eventual sign of (H) are decided by
:mod:`rdyn.derivations.limits` (method "limit_rules": exact algebra on log-rational sums plus three elementary limit
facts, no sympy ``limit``). The law needs (H) only for every large D; the explicit bounds at finite D need it at that
D, and :func:`hypothesis_from` shows it exactly at every D >= D0 (:func:`hypothesis_holds` is the 50-digit test at one
D).

0. *Flow limit.* The map is the explicit Euler step ``x + eta F(x)`` of the flow ``x' = F(x)``
   (:func:`rdyn.derivations.model_a.gradient_flow.vector_field`; ``euler_step``: the increments are linear in
   eta), F is smooth near the trajectory, and the flow
   crosses the level ``p = 1/(2K)`` transversally (``ds/dtau > 0`` there, step 5). Euler's method
   converges uniformly on compact time intervals (Hairer, Norsett, Wanner, *Solving ODEs I*, Thm II.3.6),
   so the first step with ``p >= 1/(2K)`` satisfies ``eta T* -> tau_star``, the flow's first-passage time.
1. *Slow and fast variables* (``N = D - K``, ``e = exp(-s/scale)``, ``s = C2 + C3``; start
   ``C1 = 0``, ``e = 1``; T* at ``e* = K/N``): ``C1' = lambda (C1* - C1)`` (``relaxation``) and
   ``e' = -e H(C1, e)``, ``H = (ds/dtau)/scale`` quadratic in C1 with ``H(C1*(1+u)) = H0 (1+u)(1 - k u)``
   (``factorisation``). So ``u = C1/C1* - 1`` obeys ``u' = lambda (-u + (1+u)^2 (1 - k u) r)`` with
   ``r = (d log C1*/de) e H0/lambda`` (``lag_equation``).
2. *Coordinates* ``sigma = sqrt(K/N)`` in (0, 1), ``x = e/sigma`` in ``[sigma, 1/sigma]``: ``r = mu R(x, sigma)``
   and ``e H0/(sigma lambda) = mu W(x, sigma)`` with one x-free factor ``mu`` (``v/(K^2 D^2)`` for logits/D,
   ``v/(K^2 D)`` for logits/sqrtD: ``coordinates``).
3. *Bounds* (polynomial inequalities, each exact: a polynomial with nonnegative coefficients after
   ``sigma = 1/(1+t)``, or a univariate polynomial whose odd-multiplicity roots avoid the interval):
   ``|R| <= psi = x^3 (1+x)^3/(1+x^2)^4``, ``W <= wbar = x^3 (1+x)^2/(1+x^2)^3``, ``0 <= k <= 1/x^2``
   (``x <= 1/sigma``), ``lambda >= 1/2``, ``lambda <= 4`` for ``x >= 1``, ``|psi'/psi| <= xi`` (triangle
   inequality on ``psi'/psi = 3/x + 3/(1+x) - 8x/(1+x^2)``), psi decreasing on ``[2, oo)``,
   ``psi(1/sigma) >= sigma^2/16``, ``W >= sigma/8`` on ``[1, 1/sigma]``, ``wbar <= 4/x`` on ``[1, oo)``,
   and rational constants ``Psi >= psi``, ``Z >= psi/x^2``, ``Xi >= xi wbar`` on ``x > 0``.
4. *Band.* With ``c = 4`` and ``beta(x) = c mu psi(x)``: at ``u = +-beta(x)`` the time derivative of
   ``u -+ beta(x(tau))`` is ``+-lambda mu psi E`` (``edge_rate``, with ``x' = -lambda mu W (1+u)(1-ku)``), and
   ``E <= (1 + c mu Psi)(1 + c mu Z)((1 + c mu Psi) + c mu Xi) - c`` on the box of ``R/psi``, ``W psi'/psi``,
   ``beta``, ``k beta`` (``edge_repels``), negative under (H1); so u never leaves the band.
5. *Transient.* From ``u = -1`` at ``x = 1/sigma``: while ``x >= 1`` and ``-1 <= u <= -beta``,
   ``u'/lambda >= |u|/2`` (``transient_contraction``), so ``|u|' <= -lambda |u|/2 <= -|u|/4``; psi decreasing on
   ``[2, oo)`` and ``psi(1/sigma) >= sigma^2/16`` bound beta below, so u enters the band by
   ``T0 = 4 log(16/(c mu sigma^2))``; meanwhile ``0 <= -x' <= mu lambda W (1 + k) <= 32 mu/x``
   (``x_speed``; ``W <= wbar <= 4/x`` for ``x >= 1``), so ``x^2 >= 1/sigma^2 - 64 mu tau`` and x stays >= 2 when
   ``1/sigma^2 - 64 mu T0 >= 4``  (H2). In the band ``H/H0`` lies in
   ``[g_lo, g_hi] = [(1 - c mu Psi)(1 - c mu Z), (1 + c mu Psi)(1 + c mu Z)]`` (``band_ratio``; ``c mu Psi < 1``,
   ``c mu Z < 1``: (H3)), so ``ds/dtau > 0`` and e decreases to ``e*``. The constants of steps 5-6 (32, 64, 1024,
   T0's 4 and 16) are computed from step 3's (:class:`StepThreeBounds`), not typed in.
6. *Time.* ``tau_star = tau0 + int_{e*}^{e(tau0)} de/(e H)`` with ``tau0 <= T0``,
   ``1 - e(tau0) <= 1 - sqrt(1 - 64 mu sigma^2 T0) <= 64 mu sigma^2 T0`` (``start_stretch``) and
   ``1/(e H0) <= 16/(mu sigma^2)``
   on ``[e(tau0), 1]``; with ``J = int_{e*}^1 de/(e H0)`` (exact): ``tau_lo = (J - 1024 T0)/g_hi``,
   ``tau_hi = T0 + J/g_lo``. Their limits (``leading_order``, ``no_I1``) and the eventual sign of each
   condition of (H) (``hypothesis_eventually``: negative for every large D) are ``limit_rules`` obligations
   (:mod:`rdyn.derivations.limits`), so the bounds hold for every large D.

Lowest layer (sympy only; imports nothing above rdyn.derivations). ReLU and Leaky ReLU, whose H0 carries
``atan(x)`` and whose law has an ``I1 (D-K)^(-1/2)`` term: :mod:`rdyn.derivations.model_a.tstar_law_relu`, which
reuses this module's positivity tests (:func:`box_nonnegative`, :func:`nonnegative_on`) and evaluators.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import sympy as sp

from rdyn.derivations.model_a import gradient_flow as gf
from rdyn.derivations.model_a import collapsed as ma
from rdyn.derivations.limits import eventual_sign, limit_at_zero
from rdyn.derivations.reproducible import seeded

SCALES = ("D", "sqrtD")
BAND_FACTOR = 4                     # c: the band |u| <= c mu psi(x)
x, sigma, t, u = sp.symbols("x sigma t u", positive=True)
PSI = x**3 * (1 + x)**3 / (1 + x**2)**4                      # majorant of |R|
W_BAR = x**3 * (1 + x)**2 / (1 + x**2)**3                    # majorant of W
XI = 3 / x + 3 / (1 + x) + 8 * x / (1 + x**2)                # majorant of |psi'/psi|
# rational upper bounds of the suprema over x > 0 (each proved below; the sups measured on a grid:
# 0.51970, 0.71839, 4.4911)
CONSTANTS = {"Psi": sp.Rational(53, 100), "Z": sp.Rational(3, 4), "Xi": sp.Rational(9, 2)}


METHODS = ("exact", "limit_rules", "sympy_limit")
#: methods whose obligations are machine-checked for every parameter (``limit_rules``: exact algebra plus the three
#: elementary limit facts of :mod:`rdyn.derivations.limits`)
CHECKED_METHODS = ("exact", "limit_rules")
# The steps of the law's argument that no obligation checks (docs/claims.md, Strength; the same for
# rdyn.derivations.model_a.tstar_law_relu): while any is listed, :attr:`_Proof.proved` is False.
UNCHECKED_STEPS = (
    ("flow_limit", "step 0: eta T* -> tau_star as eta -> 0 by Euler convergence, cited (Hairer, Norsett, Wanner, "
                   "Thm II.3.6), not machine-checked"),
    ("calculus_frame", "steps 4-6: three facts of one-variable calculus, not machine-checked, assemble their exact "
                       "inequalities (the band edges, the transient contraction and the speed of x, the start "
                       "stretch, H/H0 in the band) with the bounds of step 3. First, a C^1 function of tau whose "
                       "derivative is negative wherever it is 0 does not become positive (the band, step 4); second, "
                       "comparison: w' <= -w/4 gives w(tau) <= w(0) exp(-tau/4), and y' >= -b gives "
                       "y(tau) >= y(0) - b tau (the transient, step 5); third, while e decreases, the time from e1 to "
                       "e2 is int de/(e H), monotone in 1/H (step 6)"),
)


@dataclass(frozen=True)
class Obligation:
    """One step of the proof: ``claim`` in words, whether the computation establishes it, and how:
    ``method`` "exact" (cancel, Sturm counting, coefficient signs), "limit_rules" (a limit decided by
    :mod:`rdyn.derivations.limits`: exact algebra and three elementary limit facts) or "sympy_limit" (a sympy
    ``limit`` call: evidence, not a proof; no obligation uses it now)."""

    name: str
    claim: str
    holds: bool
    method: str = "exact"


class _Obligations(list):
    """The obligations of one proof, in order: ``claim(name, text, holds, method)`` records one."""

    def claim(self, name: str, text: str, holds, method: str = "exact") -> None:
        if method not in METHODS:
            raise ValueError(f"unknown obligation method {method!r}")
        self.append(Obligation(name, text, bool(holds), method))


class _Proof:
    """A proof as a list of obligations plus the steps no obligation checks (:data:`UNCHECKED_STEPS`):
    ``checked`` when every obligation holds, ``proved`` only when moreover every obligation is exact and no
    step is unchecked."""

    obligations: tuple
    unchecked_steps = UNCHECKED_STEPS

    @property
    def checked(self) -> bool:
        return all(o.holds for o in self.obligations)

    @property
    def exact_obligations(self) -> tuple:
        """Names of the obligations that hold by an exact computation."""
        return tuple(o.name for o in self.obligations if o.holds and o.method in CHECKED_METHODS)

    @property
    def proved(self) -> bool:
        return self.checked and all(o.method in CHECKED_METHODS for o in self.obligations) and not self.unchecked_steps


@dataclass(frozen=True)
class TstarLaw(_Proof):
    """The identity's Lemma D.17 law at logit scale ``scale``: the obligations, the derived pieces
    (``mu``, ``J``, hypothesis ``conditions``, bounds ``tau_lo``/``tau_hi`` as expressions in D, K and
    ``vstar_norm2``) and the limits of ``tau/(D^a (D-K)^2)`` and of ``N^(1/2)`` times its distance to I0."""

    scale: str
    obligations: tuple
    mu: sp.Expr
    J: sp.Expr
    conditions: tuple
    tau_lo: sp.Expr
    tau_hi: sp.Expr
    leading: sp.Expr
    limits: dict


# ------------------------------------------------------------------------------------------------
# exact positivity tests
# ------------------------------------------------------------------------------------------------

def _odd_part(poly: sp.Poly) -> sp.Poly:
    """The product of the odd-multiplicity square-free factors of ``poly`` (where it changes sign)."""
    out = sp.Poly(1, *poly.gens)
    for factor, multiplicity in poly.sqf_list()[1]:
        if multiplicity % 2:
            out *= factor
    return out


def nonnegative_on(expr: sp.Expr, var: sp.Symbol, lo, hi=None) -> bool:
    """``expr >= 0`` on ``[lo, hi]`` (``hi`` None: ``[lo, oo)``; the ends excluded where the denominator
    vanishes), for a rational function of one variable: the numerator has no odd-multiplicity root and the
    denominator no root strictly inside, and their signs at one interior rational point agree. Exact
    (Sturm counting on rational endpoints)."""
    num, den = sp.fraction(sp.together(sp.expand(expr)))
    point = (sp.Rational(lo) + (sp.Rational(hi) if hi is not None else sp.Rational(lo) + 2)) / 2
    signs = []
    for part, is_denominator in ((num, False), (den, True)):
        poly = sp.Poly(sp.expand(part), var)
        if poly.degree() <= 0:
            signs.append(sp.sign(poly.as_expr()))
            continue
        # the numerator may touch 0 (even roots); the denominator may not vanish inside at all
        odd = poly.sqf_part() if is_denominator else _odd_part(poly)
        inside = odd.count_roots(lo, hi) - (1 if odd.eval(lo) == 0 else 0) - \
            (1 if hi is not None and odd.eval(hi) == 0 else 0)
        if inside > 0:
            return False
        value = poly.eval(point)
        while value == 0:                       # an even root at the test point: move towards lo
            point = (point + sp.Rational(lo)) / 2
            value = poly.eval(point)
        signs.append(sp.sign(value))
    return signs[0] * signs[1] >= 0 and signs[1] != 0


def box_nonnegative(expr: sp.Expr, box: dict) -> bool:
    """``expr >= 0`` at every point of ``box`` (``{variable: (lo, hi)}``, ``hi`` None for ``[lo, oo)``; a bound
    may name variables listed after it) where ``expr`` is defined, for a rational function: each variable is
    written ``lo + t`` (unbounded) or ``lo + (hi - lo)/(1 + t)``, in box order, with ``t >= 0``, and numerator
    and denominator, as polynomials in the t's, each have coefficients of one sign, the same sign. Exact
    (rational coefficients), and only sufficient: a false answer proves nothing. The substitutions run in
    sympy's sparse polynomial ring over QQ, or over sympy expressions (EX) when a coefficient holds a symbol
    outside the box or a transcendental constant (then sympy's assumptions decide its sign)."""
    num, den = sp.fraction(sp.cancel(sp.together(expr)))
    if num == 0:
        return True
    parts = (num, den, *(_number_or_expr(b) for pair in box.values() for b in pair if b is not None))
    rational = all(not (part.free_symbols - set(box)) and part.is_polynomial(*box) for part in parts) \
        and all(c.is_Rational for part in parts for c in sp.Poly(part, *box).coeffs())
    return box_nonnegative_in(num, den, box, sp.QQ if rational else sp.EX)


def box_nonnegative_in(num: sp.Expr, den: sp.Expr, box: dict, domain) -> bool:
    """:func:`box_nonnegative` of ``num/den`` with coefficients in ``domain`` (QQ or EX). A part that is not a
    polynomial in the box's variables (``Abs(2 e - 1)``, ``atan(e)``) raises sympy's PolynomialError: EX would
    otherwise take it for a constant coefficient."""
    for part in (num, den, *(_number_or_expr(b) for pair in box.values() for b in pair if b is not None)):
        if not part.is_polynomial(*box):
            raise sp.PolynomialError(f"{part} is not a polynomial in {', '.join(map(str, box))}")
    variables = list(box)
    ring, *gens = sp.ring(variables + [sp.Symbol(f"t_{i}", nonnegative=True) for i in range(len(variables))],
                          domain)
    parts = [ring(num), ring(den)]
    one = ring.one
    for i, (var, (lo, hi)) in enumerate(box.items()):
        v, t_i = gens[i], gens[len(variables) + i]
        lo = ring(_number_or_expr(lo))
        for j, part in enumerate(parts):
            if hi is None:
                parts[j] = part.compose(v, lo + t_i)
                continue
            # P(lo + (hi - lo)/(1 + t)) (1 + t)^deg: a polynomial of the same sign (each part on its own)
            top = ring(_number_or_expr(hi))
            by_power: dict[int, object] = {}
            for monom, coeff in part.terms():
                rest = monom[:i] + (0,) + monom[i + 1:]
                by_power[monom[i]] = by_power.get(monom[i], ring.zero) + ring({rest: coeff})
            degree = max(by_power)
            parts[j] = sum((c * (lo * (one + t_i) + top - lo)**m * (one + t_i)**(degree - m)
                            for m, c in by_power.items()), ring.zero)
    return _ring_sign(parts[0]) * _ring_sign(parts[1]) == 1


def _number_or_expr(bound) -> sp.Expr:
    """A box bound (a sympy expression, or an int or Fraction written in the code) as a sympy expression."""
    return bound if isinstance(bound, sp.Basic) else sp.Rational(bound)


def _ring_sign(polynomial) -> int:
    """+1 (-1) when every coefficient of a nonzero ring element is > 0 (< 0), else 0 (EX coefficients: their
    sign by sympy's assumptions, a TypeError when it cannot tell)."""
    to_sympy = polynomial.ring.domain.to_sympy
    coefficients = [to_sympy(c) for c in polynomial.coeffs()]
    if polynomial and all(c > 0 for c in coefficients):
        return 1
    if polynomial and all(c < 0 for c in coefficients):
        return -1
    return 0


def coefficient_nonnegative(expr: sp.Expr) -> bool:
    """``expr(x, sigma) >= 0`` for every ``x >= 0`` and ``0 < sigma <= 1``, shown by ``sigma = 1/(1+t)``
    (t >= 0): :func:`box_nonnegative` on that box."""
    return box_nonnegative(expr, {x: (0, None), sigma: (0, 1)})


# ------------------------------------------------------------------------------------------------
# steps 4-6: the band, the transient and the time (shared with rdyn.derivations.model_a.tstar_law_relu)
# ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class StepThreeBounds:
    """The constants steps 4-6 take from a law's step-3 obligations (each proved there, for its R, W, k, lambda):

    * ``psi_sup``, ``k_psi_sup``, ``xi_w_sup``: Psi >= psi, Z >= k psi, Xi >= |psi'/psi| W on x > 0;
    * ``lambda_min <= lambda`` on x > 0, ``lambda <= lambda_max`` on x >= 1;
    * ``0 <= W <= w_tail x^(-tail_power)`` on x >= 1, and ``0 <= k <= 1`` from ``k_below_one_from`` on;
    * ``W >= w_floor sigma`` on ``[1, 1/sigma]``; psi decreasing on ``[2, oo)`` with ``psi(1/sigma) >= psi_start
      sigma^2``.

    From them: ``|x'| <= speed mu x^(-tail_power)`` on the transient (``speed = 2 lambda_max w_tail``, the 2 from
    ``(1 + u)(1 - k u) <= 1 + k <= 2``)."""

    psi_sup: sp.Rational
    k_psi_sup: sp.Rational
    xi_w_sup: sp.Rational
    lambda_min: sp.Rational
    lambda_max: sp.Rational
    w_tail: sp.Rational
    tail_power: int
    w_floor: sp.Rational
    psi_start: sp.Rational
    k_below_one_from: int

    @property
    def speed(self) -> sp.Rational:
        return 2 * self.lambda_max * self.w_tail


#: the identity's step-3 constants (each an obligation of :func:`prove`)
IDENTITY_BOUNDS = StepThreeBounds(psi_sup=CONSTANTS["Psi"], k_psi_sup=CONSTANTS["Z"], xi_w_sup=CONSTANTS["Xi"],
                                  lambda_min=sp.Rational(1, 2), lambda_max=sp.Integer(4), w_tail=sp.Integer(4),
                                  tail_power=1, w_floor=sp.Rational(1, 8), psi_start=sp.Rational(1, 16),
                                  k_below_one_from=1)


def transient_time(b: StepThreeBounds, mu: sp.Expr, sig: sp.Expr) -> sp.Expr:
    """Step 5's ``T0``: on the transient ``|u|' <= -(lambda_min/2)|u|`` from ``|u| = 1``, and the band's edge
    is at least ``c mu psi_start sigma^2``, so ``|u| <= beta`` by
    ``T0 = log(1/(c mu psi_start sigma^2))/(lambda_min/2)``."""
    return sp.log(1 / (BAND_FACTOR * mu * b.psi_start * sig**2)) / (b.lambda_min / 2)


def hypothesis(b: StepThreeBounds, mu: sp.Expr, sig: sp.Expr) -> tuple:
    """(H): ``(name, expression)`` pairs, each to be negative. (H1) makes the band's edges repel (step 4); (H2)
    keeps ``x >= 2`` up to T0: ``d(x^n)/dtau >= -n speed mu`` with ``n = tail_power + 1``; (H3) makes
    ``c mu Psi < 1`` and ``c mu Z < 1``, so ``H/H0 > 0`` in the band."""
    m, n = BAND_FACTOR * mu, b.tail_power + 1
    return (
        ("H1", _repelling(b, m)),
        ("H2", 2**n + n * b.speed * mu * transient_time(b, mu, sig) - 1 / sig**n),
        ("H3", m * sp.Max(b.psi_sup, b.k_psi_sup) - 1),
    )


def _repelling(b: StepThreeBounds, m: sp.Expr) -> sp.Expr:
    """(H1)'s expression at ``m = c mu``: a bound of the edges' rate :func:`edge_rate` (``edge_repels``)."""
    return (1 + m * b.psi_sup) * (1 + m * b.k_psi_sup) * ((1 + m * b.psi_sup) + m * b.xi_w_sup) - BAND_FACTOR


def band_factors(b: StepThreeBounds, mu: sp.Expr) -> tuple:
    """``(g_lo, g_hi)``: ``H/H0 = (1 + u)(1 - k u)`` in the band lies in ``[g_lo, g_hi]`` (``band_ratio``)."""
    m = BAND_FACTOR * mu
    return (1 - m * b.psi_sup) * (1 - m * b.k_psi_sup), (1 + m * b.psi_sup) * (1 + m * b.k_psi_sup)


def start_cost(b: StepThreeBounds, mu: sp.Expr, sig: sp.Expr) -> sp.Expr:
    """Step 6's correction to J for the stretch of e the transient covers: that stretch is at most
    ``n speed mu sigma^n T0`` long (``start_stretch``) and ``1/(e H0) <= 1/(lambda_min w_floor mu sigma^2)`` on it."""
    n = b.tail_power + 1
    return n * b.speed * mu * sig**n * transient_time(b, mu, sig) / (b.lambda_min * b.w_floor * mu * sig**2)


_m, _rho, _ell, _beta, _k_beta, _w, _k, _u, _k_u, _lam, _W, _z = sp.symbols(
    "m rho ell beta k_beta w k u k_u lam W z", real=True)       # the bounded quantities of steps 4-6


def edge_rate(side: int) -> sp.Expr:
    """Step 4: ``side (d/dtau)(u - side beta(x))/(lambda mu psi)`` at ``u = side beta`` (side = +1 the upper edge,
    -1 the lower), with ``m = c mu``, ``rho = R/psi``, ``ell = W psi'/psi``, ``beta = m psi`` and ``k_beta = k beta``;
    negative means the edge repels."""
    s = side
    return -BAND_FACTOR + s * (1 + s * _beta)**2 * (1 - s * _k_beta) * _rho \
        + _m * _ell * (1 + s * _beta) * (1 - s * _k_beta)


def band_obligations(claim, b: StepThreeBounds) -> None:
    """Steps 4-6's inequalities, each an exact test on a box of the bounded quantities (``claim(name, text,
    holds)`` records each). What ties them to the flow: the lag equation ``u' = lambda (-u + (1+u)^2 (1 - k u) mu R)``
    and ``x' = -x H = -lambda mu W (1 + u)(1 - k u)`` (the obligations ``lag_equation``, ``factorisation`` and
    ``coordinates``), and the step-3 bounds ``b``. The calculus that assembles them (a function with a negative
    derivative wherever it vanishes cannot cross 0; comparison of ``w' <= -a w`` with ``exp(-a tau)``; the time as
    ``int de/(e H)``) is :data:`UNCHECKED_STEPS`'s ``calculus_frame``."""
    lam, mu, psi, dpsi, W, k, R = sp.symbols("lambda mu psi dpsi W k R", positive=True)
    c = BAND_FACTOR
    derived = True
    for side in (1, -1):
        u_edge = side * c * mu * psi
        u_rate = lam * (-u_edge + (1 + u_edge)**2 * (1 - k * u_edge) * mu * R)
        x_rate = -lam * mu * W * (1 + u_edge) * (1 - k * u_edge)
        g_rate = side * (u_rate - side * c * mu * dpsi * x_rate) / (lam * mu * psi)
        named = edge_rate(side).subs({_rho: R / psi, _ell: W * dpsi / psi, _beta: c * mu * psi,
                                      _k_beta: k * c * mu * psi, _m: c * mu})
        derived = derived and _identity_zero(g_rate - named)
    claim("edge_rate", "at u = +-beta(x), beta = c mu psi: +-(u -+ beta)' = lambda mu psi E(m, rho, ell, beta, k beta) "
          "with x' = -lambda mu W (1 + u)(1 - k u), m = c mu, rho = R/psi, ell = W psi'/psi", derived)
    m_max = 1 / sp.Max(b.psi_sup, b.k_psi_sup)                  # (H3)
    h1 = _repelling(b, _m)
    box = {_rho: (-1, 1), _ell: (-b.xi_w_sup, b.xi_w_sup), _beta: (0, _m * b.psi_sup),
           _k_beta: (0, _m * b.k_psi_sup), _m: (0, m_max)}
    claim("edge_repels", "E <= (H1)'s expression at both edges, for |rho| <= 1, |ell| <= Xi, 0 <= beta <= m Psi, "
          "0 <= k beta <= m Z, 0 <= m max(Psi, Z) <= 1 ((H3)): so under (H1) the band |u| <= c mu psi(x) is never "
          "left",
          all(box_nonnegative(h1 - edge_rate(side), box) for side in (1, -1)))
    # step 5: from u = -1 to the band's lower edge, w = -u in [beta, 1], while k <= 1
    w_rate = _w + (1 - _w)**2 * (1 + _k * _w) * (_beta / c) * _rho         # u'/lambda, mu R = (beta/c) rho
    claim("transient_contraction", "u'/lambda >= |u|/2 for -1 <= u <= -beta, |R| <= psi and 0 <= k <= 1 "
          f"(x >= {b.k_below_one_from}), so |u|' <= -(lambda_min/2)|u|",
          box_nonnegative(w_rate - _w / 2, {_rho: (-1, 1), _k: (0, 1), _w: (_beta, 1), _beta: (0, 1)}))
    p = b.tail_power
    x_speed = _lam * b.w_tail * _W * (1 + _u) * (1 - _k * _u)                # -x' x^p/mu, W = w_tail _W x^-p
    speed_box = {_lam: (0, b.lambda_max), _W: (0, 1), _u: (-1, 0), _k: (0, 1)}
    claim("x_speed", f"0 <= -x' <= {b.speed} mu x^(-{p}) for x >= {max(1, b.k_below_one_from)} and -1 <= u <= 0",
          box_nonnegative(x_speed, speed_box) and box_nonnegative(b.speed - x_speed, speed_box))
    n = p + 1
    claim("start_stretch", f"(1 - z)^(1/{n}) >= 1 - z on [0, 1]: the transient leaves e >= 1 - {n} speed mu "
          f"sigma^{n} T0", box_nonnegative((1 - _z) - (1 - _z)**n, {_z: (0, 1)}))
    g_lo, g_hi = band_factors(b, _m / c)
    ratio_box = {_u: (-_m * b.psi_sup, _m * b.psi_sup), _k_u: (-_m * b.k_psi_sup, _m * b.k_psi_sup), _m: (0, m_max)}
    claim("band_ratio", "H/H0 = (1 + u)(1 - k u) lies in [g_lo, g_hi] for |u| <= m Psi, |k u| <= m Z (so H > 0 "
          "under (H3))", box_nonnegative((1 + _u) * (1 - _k_u) - g_lo, ratio_box)
          and box_nonnegative(g_hi - (1 + _u) * (1 - _k_u), ratio_box))


# ------------------------------------------------------------------------------------------------
# the proof
# ------------------------------------------------------------------------------------------------

def _flow_pieces(scale: str) -> dict:
    """C1 rate, H, lambda, C1*, H0, k, r in (C1, e) and the internal parameters (K, N, v)."""
    field = gf.vector_field("identity", scale)
    c1_rate = ma.to_internal(field.C1_rate)
    H = ma.to_internal(field.s_rate / gf.scale_of(scale))
    lam = sp.factor(sp.simplify(-sp.diff(c1_rate, gf.C1)))
    star = sp.factor(ma.to_internal(gf.c1_fixed_point("identity")))
    H0 = sp.factor(sp.simplify(H.subs(gf.C1, star)))
    a2 = sp.Poly(sp.expand(H), gf.C1).coeff_monomial(gf.C1**2)
    k = sp.factor(sp.simplify(-a2 * star**2 / H0))
    log_slope = sp.factor(sp.simplify(sp.diff(star, gf.e) / star))
    r = sp.factor(sp.simplify(log_slope * gf.e * H0 / lam))
    return {"c1_rate": c1_rate, "H": H, "lam": lam, "star": star, "H0": H0, "k": k, "r": r}


def _in_coordinates(expr: sp.Expr) -> sp.Expr:
    """``N = K/sigma^2``, ``e = sigma x``."""
    return sp.factor(sp.cancel(expr.subs(ma.N, ma.K / sigma**2).subs(gf.e, sigma * x)))


def _identity_zero(expr: sp.Expr) -> bool:
    """``expr == 0`` identically, for a rational function of its symbols (exact: ``cancel``)."""
    return sp.cancel(sp.together(expr)) == 0


def is_euler_step(activation: str, scale: str) -> bool:
    """Step 0: the collapsed map's increments of C1, C2, C3 are linear in eta (the map is ``x + eta F(x)``)."""
    from rdyn.derivations.model_a.catalog import model_a_expressions

    expressions = model_a_expressions(activation, scale)
    return all(sp.diff(gf._from_catalog(expressions[f"{name}_next_positive"]), ma.eta, 2) == 0
               for name in ("C1", "C2", "C3"))


def _flow_obligations(claim, f: dict, scale: str) -> None:
    """Steps 0 and 1: the map is one explicit Euler step, C1 relaxes to C1*, H factorises at
    ``C1 = C1*(1+u)`` and ``u`` obeys the lag equation (``f``: :func:`_flow_pieces`; ``claim(name, text,
    holds)`` records each)."""
    e, C1 = gf.e, gf.C1
    lam, star, H0, k, r, H = f["lam"], f["star"], f["H0"], f["k"], f["r"], f["H"]
    claim("euler_step", "the map is x + eta F(x): each increment of C1, C2, C3 is linear in eta",
          is_euler_step("identity", scale))
    claim("relaxation", "dC1/dtau = lambda (C1* - C1)", _identity_zero(f["c1_rate"] - lam * (star - C1)))
    claim("factorisation", "H(C1*(1+u), e) = H0 (1+u)(1 - k u)",
          _identity_zero(H.subs(C1, star * (1 + u)) - H0 * (1 + u) * (1 - k * u)))
    u_dot = (f["c1_rate"] / star - C1 / star**2 * sp.diff(star, e) * (-e * H)).subs(C1, star * (1 + u))
    claim("lag_equation", "du/dtau = lambda (-u + (1+u)^2 (1 - k u) r)",
          _identity_zero(u_dot - lam * (-u + (1 + u)**2 * (1 - k * u) * r)))


@lru_cache(maxsize=None)
@seeded
def prove(scale: str = "D") -> TstarLaw:
    """The proof of the module docstring at logit scale ``scale`` ("D" or "sqrtD")."""
    if scale not in SCALES:
        raise ValueError(f"unknown logit scale {scale!r}")
    K, N, v, e = ma.K, ma.N, ma.vstar_norm2, gf.e
    f = _flow_pieces(scale)
    lam, H0, k, r = f["lam"], f["H0"], f["k"], f["r"]
    obligations = _Obligations()
    claim = obligations.claim
    _flow_obligations(claim, f, scale)
    # step 2
    omega_over_sigma = _in_coordinates(e * H0 / lam) / sigma
    mu, W = sp.factor(omega_over_sigma).as_independent(x, as_Add=False)
    R = _in_coordinates(r) / mu
    k_x, lam_x = _in_coordinates(k), _in_coordinates(lam)
    claim("coordinates", "r = mu R(x, sigma), e H0/(sigma lambda) = mu W(x, sigma), R and W free of K, v",
          not (R.free_symbols | W.free_symbols) - {x, sigma})
    mu_public = sp.factor(sp.simplify(mu.subs(sigma, sp.sqrt(K / N))))
    # step 3: bounds
    claim("R_bound", "|R| <= psi", coefficient_nonnegative(PSI - R) and coefficient_nonnegative(PSI + R))
    claim("W_bound", "W <= wbar", coefficient_nonnegative(W_BAR - W))
    claim("k_bound", "k <= 1/x^2, and k x (sigma + x) = 1 - sigma x (>= 0 for e <= 1)",
          coefficient_nonnegative(1 / x**2 - k_x) and _identity_zero(k_x * x * (sigma + x) - (1 - sigma * x)))
    b = IDENTITY_BOUNDS
    link = (1 + x**2) / (1 + x)**2
    claim("lambda_lower", f"lambda >= (1+x^2)/(1+x)^2 >= {b.lambda_min}",
          coefficient_nonnegative(lam_x - link) and nonnegative_on(link - b.lambda_min, x, 0))
    y = sp.Symbol("y", positive=True)
    claim("lambda_upper", f"lambda <= {b.lambda_max} for x >= 1",
          coefficient_nonnegative((b.lambda_max - lam_x).subs(x, 1 + y).subs(y, x)))
    claim("log_derivative", "psi'/psi = 3/x + 3/(1+x) - 8x/(1+x^2)",
          _identity_zero(sp.diff(PSI, x) / PSI - (3 / x + 3 / (1 + x) - 8 * x / (1 + x**2))))
    claim("psi_decreasing", "psi' <= 0 on [2, oo)", nonnegative_on(-sp.diff(PSI, x), x, 2))
    psi_edge = sp.factor(PSI.subs(x, 1 / sigma))
    claim("psi_at_start", f"psi(1/sigma) >= {b.psi_start} sigma^2 for 0 < sigma <= 1",
          nonnegative_on(psi_edge - b.psi_start * sigma**2, sigma, 0, 1))
    claim("W_lower", f"W >= x^5/(1+x^2)^3 >= {b.w_floor}/x >= 0 for x >= 1 (>= {b.w_floor} sigma for x <= 1/sigma)",
          coefficient_nonnegative(W - x**5 / (1 + x**2)**3)
          and nonnegative_on(x**5 / (1 + x**2)**3 - b.w_floor / x, x, 1))
    claim("Psi", f"psi <= {b.psi_sup} on x > 0", nonnegative_on(b.psi_sup - PSI, x, 0))
    claim("Z", f"psi/x^2 <= {b.k_psi_sup} on x > 0 (so k psi <= Z)", nonnegative_on(b.k_psi_sup - PSI / x**2, x, 0))
    claim("Xi", f"xi wbar <= {b.xi_w_sup} on x > 0", nonnegative_on(b.xi_w_sup - sp.cancel(XI * W_BAR), x, 0))
    claim("wbar_tail", f"wbar <= {b.w_tail}/x on [1, oo)", nonnegative_on(b.w_tail / x**b.tail_power - W_BAR, x, 1))
    claim("k_below_one", f"k <= 1/x^2 <= 1 on [{b.k_below_one_from}, oo)",
          nonnegative_on(1 - 1 / x**2, x, b.k_below_one_from))
    # steps 4-6: their inequalities (band_obligations), then the bounds in the public parameters
    band_obligations(claim, b)
    s_pub = sp.sqrt(K / N)
    conditions = hypothesis(b, mu_public, s_pub)
    T0 = transient_time(b, mu_public, s_pub)
    s = sp.Symbol("s", positive=True)          # N = 1/s^2: the limits N -> oo as s -> 0+
    signs = [eventual_sign(expr.subs(N, 1 / s**2), s) for _, expr in conditions]
    claim("hypothesis_eventually", "each condition of (H) is negative for every large D (the sign of the finite "
          "nonzero limit of N^(-j/2) times it, rdyn.derivations.limits)", all(sign == -1 for sign in signs),
          "limit_rules")
    g_lo, g_hi = band_factors(b, mu_public)
    J = sp.expand(sp.expand_log(sp.integrate(sp.apart(sp.cancel(1 / (e * H0)), e), (e, K / N, 1)), force=True))
    tau_lo = (J - start_cost(b, mu_public, s_pub)) / g_hi
    tau_hi = T0 + J / g_lo
    a = 1 if scale == "D" else 0
    leading = (K + N)**a * N**2
    limits = {}
    for name, bound in (("tau_lo", tau_lo), ("tau_hi", tau_hi)):
        ratio = (bound / leading).subs(N, 1 / s**2)
        leading_limit = limit_at_zero(ratio, s)
        limits[name] = leading_limit.value if leading_limit else sp.nan
        next_limit = limit_at_zero((ratio - limits[name]) / s, s)
        limits[name + "_I1"] = next_limit.value if next_limit else sp.nan
    claim("leading_order", "tau_lo/(D^a N^2) and tau_hi/(D^a N^2) -> K/v",
          all(sp.cancel(limits[b] - K / v) == 0 for b in ("tau_lo", "tau_hi")), "limit_rules")
    claim("no_I1", "N^(1/2) (tau/(D^a N^2) - K/v) -> 0 for both bounds (I1 = 0)",
          all(limits[b + "_I1"] == 0 for b in ("tau_lo", "tau_hi")), "limit_rules")
    return TstarLaw(scale, tuple(obligations), ma.to_public(mu_public), ma.to_public(J),
                    tuple((nm, ma.to_public(ex)) for nm, ex in conditions),
                    ma.to_public(tau_lo), ma.to_public(tau_hi), ma.to_public(leading), limits)


@lru_cache(maxsize=None)
def _mpmath_function(expr: sp.Expr):
    """``expr`` (in D, K, ``vstar_norm2``, ``kappa``) lambdified for mpmath, once per expression (:func:`threshold`
    evaluates the same conditions at many D)."""
    return sp.lambdify((ma.D, ma.K, ma.vstar_norm2, ma.kappa), expr, "mpmath")


def _numeric(expr: sp.Expr, D: int, K: int, vstar_norm2, kappa, digits: int):
    """``expr`` (in D, K, ``vstar_norm2``, ``kappa``) at one instance, by mpmath at ``digits`` digits (local
    precision)."""
    import mpmath

    f = _mpmath_function(expr)
    with mpmath.workdps(digits):
        return f(mpmath.mpf(D), mpmath.mpf(K), mpmath.mpf(str(vstar_norm2)), mpmath.mpf(str(kappa)))


def hypothesis_holds(law, D: int, K: int, vstar_norm2, kappa=0) -> bool:
    """Whether (H) of ``law`` (this module's, or :mod:`.tstar_law_relu`'s; ``kappa`` for Leaky ReLU) holds at
    one instance: each condition's expression is negative (50 digits; the conditions are far from 0 except
    within a step of D0)."""
    return all(_numeric(expr, D, K, vstar_norm2, kappa, 50) < 0 for _, expr in law.conditions)


def bounds(law, D: int, K: int, vstar_norm2, kappa=0, digits: int = 30) -> tuple:
    """(tau_lo, tau_hi) at one instance as mpmath numbers of ``digits`` digits (ValueError when (H) fails)."""
    if not hypothesis_holds(law, D, K, vstar_norm2, kappa):
        activation = getattr(law, "activation", "identity")
        raise ValueError(f"hypothesis (H) of the {activation} T* law does not hold at D = {D}, K = {K}")
    return (_numeric(law.tau_lo, D, K, vstar_norm2, kappa, digits),
            _numeric(law.tau_hi, D, K, vstar_norm2, kappa, digits))


# ------------------------------------------------------------------------------------------------
# an explicit threshold: (H) at every D >= D0, exactly
# ------------------------------------------------------------------------------------------------

_s, _ell_log = sp.symbols("s ell", positive=True)     # s = sqrt((D - K)/K) = 1/sigma; ell stands for a log


def _log_below(A: sp.Rational, r: sp.Rational) -> bool:
    """``log A < r``, exactly: ``r > 0`` and ``A`` below a partial sum of ``exp(r)``'s series (every term positive).
    Once the terms fall (``j > 2 r``) the rest of the series is below twice the last term, so the search stops when
    even that would not reach A."""
    if r <= 0:
        return bool(r == 0 and A < 1)           # r < 0 would need an upper bound of exp(r): not decided
    A, r = Fraction(int(A.p), int(A.q)), Fraction(int(r.p), int(r.q))
    total, term, j = Fraction(0), Fraction(1), 0
    while True:
        total += term
        if A < total:
            return True
        j += 1
        term = term * r / j
        if j > 2 * r and total + 2 * term <= A:
            return False


def _log_at_least(A: sp.Rational) -> sp.Rational:
    """A rational lower bound of ``log A`` for ``A >= 1``: ``log A >= 2 (A - 1)/(A + 1)``."""
    return 2 * (A - 1) / (A + 1)


def _split_log(expr: sp.Expr):
    """``expr = P + Q log(A)`` with P, Q, A free of logs (None when expr holds more than one log)."""
    logs = expr.atoms(sp.log)
    if not logs:
        return expr, sp.Integer(0), sp.Integer(1)
    if len(logs) > 1:
        return None
    (log_term,) = logs
    expanded = sp.expand(expr.subs(log_term, _ell_log))
    Q = sp.cancel(expanded.coeff(_ell_log, 1))
    P = sp.cancel(expanded.coeff(_ell_log, 0))
    if sp.cancel(expanded - P - Q * _ell_log) != 0:
        return None
    return P, Q, sp.cancel(log_term.args[0])


def hypothesis_from(law, D0: int, K: int, vstar_norm2, kappa=0) -> bool:
    """Whether (H) of ``law`` holds at **every** D >= D0 (at one K, ``||V*||^2``, kappa), decided exactly. In
    ``s = sqrt((D - K)/K)`` every condition is ``P(s) + Q(s) log A(s)`` with P, Q, A rational; with ``s_lo`` a
    rational at most ``s(D0)``: the condition is negative at ``s_lo`` (``Q > 0`` and ``log A < -P/Q`` by a partial
    sum of exp's series, or exact for a condition without a log), and it decreases on ``[s_lo, oo)``: A
    increases there, and the derivative ``P' + Q' ell + Q A'/A`` is <= 0 for every ``ell >= log A(s_lo)``
    (coefficient signs after ``s = s_lo + t``, :func:`box_nonnegative`; ``ell`` from a rational lower bound of
    ``log A(s_lo)``). False means not shown, not that (H) fails."""
    values = {ma.K: sp.Rational(K), ma.vstar_norm2: sp.Rational(str(vstar_norm2)), ma.kappa: sp.Rational(str(kappa))}
    if D0 <= 2 * K:
        return False
    s0_squared = sp.Rational(D0 - K, K)
    s_lo = sp.Rational(int(sp.floor(sp.sqrt(s0_squared) * 10**9)), 10**9)       # <= s(D0), rational
    for _, condition in law.conditions:
        parts = _split_log(condition.subs(values).subs(ma.D, values[ma.K] * (1 + _s**2)))
        if parts is None or not all(p.is_rational_function(_s) for p in parts):
            return False
        P, Q, A = (sp.cancel(p) for p in parts)
        at = {_s: s_lo}
        P0, Q0, A0 = (p.subs(at) for p in (P, Q, A))             # exact rationals
        if Q == 0:
            negative = P0 < 0
        else:
            negative = Q0 > 0 and A0 >= 1 and _log_below(A0, -P0 / Q0)
        if not negative:
            return False
        if Q == 0:
            decreasing = box_nonnegative(-sp.diff(P, _s), {_s: (s_lo, None)})
        else:
            decreasing = (box_nonnegative(sp.diff(A, _s), {_s: (s_lo, None)})
                          and box_nonnegative(-(sp.diff(P, _s) + sp.diff(Q, _s) * _ell_log + Q * sp.diff(A, _s) / A),
                                              {_ell_log: (_log_at_least(A0), None), _s: (s_lo, None)}))
        if not decreasing:
            return False
    return True


def threshold(law, K: int, vstar_norm2, kappa=0, start: int | None = None, limit: int = 10**6):
    """The least D0 > 2K (from ``start``) at which :func:`hypothesis_from` shows (H) at every D >= D0, or None below
    ``limit``: the first D at which the 50-digit evaluation says (H) holds, then upward until the exact test
    succeeds."""
    D = max(2 * K + 1, start or 0)
    while D < limit and not hypothesis_holds(law, D, K, vstar_norm2, kappa):
        D += 1
    while D < limit:
        if hypothesis_from(law, D, K, vstar_norm2, kappa):
            return D
        D += 1
    return None
