"""Lemma D.17's law for T* (seed 000, corrected) for ReLU and Leaky ReLU in the flow limit: the identity's argument
(:mod:`rdyn.derivations.model_a.tstar_law`) with its exact obligations extended to atan; its step 0 and the calculus
that assembles steps 4-6 are not machine-checked (``tstar_law.UNCHECKED_STEPS``), so the law is not ``proved``.

The corrected Lemma D.17 (docs/claims.md, root cause ``Tstar_logit_scale``) says that, as eta -> 0 and
then D -> oo at fixed K, kappa and ``v = ||V*||^2``, ``eta T* = D^a (D-K)^2 (I0 + I1 (D-K)^(-1/2)) (1 + o(1))``
(``a = 1`` for logits/D, ``a = 0`` for logits/sqrtD) with ``I0 = K/(v g)``, ``g = 1 + kappa^2`` and
``I1 = 2 pi^2 c1 sqrt(K) I0``, ``c1 = q/pi^3 + 1/(pi q (1 - q/2))``, ``q = (1-kappa)^2/(1+kappa^2)``
(ReLU: kappa = 0, q = g = 1). This module argues it, for every K >= 1, v > 0 and 0 <= kappa < 1:

    for every D > 2K satisfying the explicit hypothesis (H) (true for every large D),
    tau_lo(D) <= tau_star(D) <= tau_hi(D), where tau_star = lim_{eta -> 0} eta T*; both bounds divided by
    D^a N^2 (N = D - K) tend to I0, and N^(1/2) times their distance from I0 tends to I1.

The proof is the identity's (:mod:`rdyn.derivations.model_a.tstar_law`, whose module docstring has steps 0-6)
with three changes; the bounds below are exact sympy computations of :func:`prove` (an ``Obligation`` of method
"exact" each), the limits are decided by :mod:`rdyn.derivations.limits` (method "limit_rules"):

* *One family.* In ``sigma = sqrt(K/N)``, ``x = e/sigma`` and ``A = atan(x)`` both activations are one
  family (:data:`FAMILY`) in ``q`` in ``(0, 1]`` and ``g`` in ``[1, 2)``: ``C1' = g lambda_1 (C1* - C1)``,
  ``H = g nu x^2 P1 P2/(1+x^2)^2 (C1/C1*)(1 - k (C1/C1* - 1))`` with ``P1 = pi - q A``, ``P2 = P1 + q x``
  (``family``: the derived vector field and C1* minus the family's cancel to 0, per activation and scale;
  ``nu`` is what is left, free of x and A). On the family with q, g and nu symbolic the lag obeys
  ``u' = lambda (-u + (1+u)^2 (1 - k u) mu R)`` with ``mu = 2 pi^2 nu/(1 + sigma^2)`` (``lag_equation``),
  ``mu = v/(K^2 D^2)`` (logits/D) or ``v/(K^2 D)`` (logits/sqrtD), as for the identity.
* *Bounds with atan.* From ``0 <= A <= pi/2``, ``P1`` lies in ``[pi/2, pi]``; R, W, k and lambda are rational
  in ``(x, sigma, q, P1, pi)``, and each bound is an exact test on a box
  (:func:`rdyn.derivations.model_a.tstar_law.box_nonnegative`; ``pi`` itself a box variable in
  ``[314159/100000, 314160/100000]``, so every coefficient is rational). Majorants:
  ``|R| <= psi = x^3 (1+x)^2 (1 + 4x/3)/(1+x^2)^4``, ``W <= wbar = x^3 (1+x)^2 (1 + x/3)/(1+x^2)^3 <= 1``,
  ``0 <= k <= kbar = 2/x^2 + 2/(3x)``; constants ``Psi = 31/50``, ``Z = 2 >= psi kbar``, ``Xi = 13/2``
  (sups 0.6135, 1.9642, 6.4635). W no longer decays like 1/x: the transient moves x by at most
  ``16 mu T0`` (``|x'| <= mu lambda W (1 + k)``, ``lambda <= 4 g <= 8`` for x >= 1), condition (H2), and
  ``T0 = 4 log(2/(4 mu sigma^2))`` from ``psi(1/sigma) >= sigma^2/2``. Steps 4-6's inequalities are the identity's
  (:func:`rdyn.derivations.model_a.tstar_law.band_obligations`) with these constants (:data:`BOUNDS`).
* *The integral.* ``J = int_{e*}^1 de/(e H0) = F(sigma)/(g nu)`` with ``F = int_sigma^(1/sigma) f``,
  ``f = (1+x^2)^2/(x^3 P1 P2)``. With atan's Taylor bounds (``atan x = x - theta x^3/3`` and, for x >= 1,
  ``atan x = pi/2 - 1/x + theta/(3 x^3)``, theta in [0, 1]: ``atan_near``, ``atan_far``):
  ``0 <= f_near - f <= 1/5`` on ``(0, 1]`` with ``f_near = (1+x^2)^2/(pi x^3 (pi - q x))`` and
  ``0 <= f_far - f <= 1/(q x)`` on ``[1, oo)`` with ``f_far = (1+x^2)^2/(x^3 b (b + q x))``, ``b = pi (1 - q/2)``
  (box tests in ``(x, q, theta, pi)``). So ``U - 1/5 - log(1/sigma)/q <= F <= U`` with ``U`` the exact
  integral of ``f_near`` over ``[sigma, 1]`` plus ``f_far`` over ``[1, 1/sigma]`` (partial fractions; the
  antiderivative is differentiated back, ``U_exact``). ``U = 1/(2 pi^2 sigma^2) + c1/sigma + O(log 1/sigma)``.

Time (step 6): ``tau_lo = (J_lo - 1024 T0/sigma)/g_hi``, ``tau_hi = T0 + J_hi/g_lo`` (the transient's
stretch of e is at most ``16 mu sigma T0`` long and ``1/(e H0) <= 64/(mu sigma^2)`` on it, from
``W >= sigma/32``, ``lambda >= 1/2``). Their limits in ``sigma -> 0`` (``leading_order``, ``I1``) and the eventual
sign of (H)'s conditions (``hypothesis_eventually``) are ``limit_rules`` obligations (q in (0, 1], g in [1, 2]
as parameter ranges). The scale- and activation-free obligations
(:func:`family_obligations`) and the time bounds at one scale (:func:`_time_bounds`) are computed once.

Lowest layer (sympy only; imports nothing above rdyn.derivations).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from rdyn.derivations.model_a import gradient_flow as gf
from rdyn.derivations.model_a import collapsed as ma
from rdyn.derivations.model_a import tstar_law as tl
from rdyn.derivations.limits import eventual_sign, limit_at_zero
from rdyn.derivations.reproducible import seeded
from rdyn.derivations.model_a.tstar_law import (bounds, box_nonnegative, hypothesis_holds,  # noqa: F401
                                        nonnegative_on, sigma, u, x)

ACTIVATIONS = ("relu", "leaky")
SCALES = tl.SCALES
BAND_FACTOR = tl.BAND_FACTOR
q, g, A, P1, theta = sp.symbols("q g A P1 theta", positive=True)
PI = sp.Symbol("Pi", positive=True)                 # pi as a box variable in the positivity tests
PI_BOX = (sp.Rational(314159, 100000), sp.Rational(314160, 100000))
PSI = x**3 * (1 + x)**2 * (1 + sp.Rational(4, 3) * x) / (1 + x**2)**4       # majorant of |R|
W_BAR = x**3 * (1 + x)**2 * (1 + x / 3) / (1 + x**2)**3                     # majorant of W
K_BAR = 2 / x**2 + sp.Rational(2, 3) / x                                     # majorant of k
XI = 3 / x + 2 / (1 + x) + sp.Rational(4, 3) / (1 + sp.Rational(4, 3) * x) + 8 * x / (1 + x**2)   # >= |psi'/psi|
CONSTANTS = {"Psi": sp.Rational(31, 50), "Z": sp.Integer(2), "Xi": sp.Rational(13, 2), "omega": sp.Integer(1)}
# the constants steps 4-6 use (each an obligation of family_obligations; lambda = g lambda_1 <= 4 g < 8 for x >= 1)
BOUNDS = tl.StepThreeBounds(psi_sup=CONSTANTS["Psi"], k_psi_sup=CONSTANTS["Z"], xi_w_sup=CONSTANTS["Xi"],
                            lambda_min=sp.Rational(1, 2), lambda_max=sp.Integer(8), w_tail=CONSTANTS["omega"],
                            tail_power=0, w_floor=sp.Rational(1, 32), psi_start=sp.Rational(1, 2),
                            k_below_one_from=2)
NEAR_GAP = sp.Rational(1, 5)       # f_near - f <= NEAR_GAP on (0, 1]
FAR_GAP = 1 / (q * x)              # f_far - f <= FAR_GAP on [1, oo)
B_FAR = sp.pi * (1 - q / 2)
F_NEAR = (1 + x**2)**2 / (sp.pi * x**3 * (sp.pi - q * x))
F_FAR = (1 + x**2)**2 / (x**3 * B_FAR * (B_FAR + q * x))
# The family (docstring): the derived pieces of both activations equal these at their (q, g), which the
# obligation ``family`` checks for each activation and scale; the bounds are proved on these forms.
FAMILY = {
    "lam": (1 + sigma**2) * (1 + x**2) / (2 * (sigma + x)**2),                       # lambda/g
    "k": (1 - sigma * x) * (P1 + q * x) / (x * (sigma + x) * P1),
    "W": x**3 * (sigma + x)**2 * P1 * (P1 + q * x) / (sp.pi**2 * (1 + x**2)**3),     # e H0/(sigma lambda mu)
    "R": x**3 * (sigma + x) * P1 * (P1 * (1 - 2 * sigma * x - x**2) + q * x * (1 - sigma * x))
         / (sp.pi**2 * (1 + x**2)**4),                                                  # r/mu
    "H0": x**2 * P1 * (P1 + q * x) / (1 + x**2)**2,                                   # H0/(g nu)
    "f": (1 + x**2)**2 / (x**3 * P1 * (P1 + q * x)),                                  # 1/(x H0 g nu)
    "star": (sigma + x) * (P1 + q * x) / (sp.pi * sigma * (1 + x**2)),                # C1*
}


@dataclass(frozen=True)
class TstarLawRelu(tl._Proof):
    """The law at one activation ("relu" or "leaky", kappa symbolic) and logit scale: the obligations, ``mu``,
    ``nu`` (``H0 = g nu x^2 P1 P2/(1+x^2)^2``), the exact ``U``, hypothesis ``conditions``, bounds
    ``tau_lo``/``tau_hi`` (expressions in D, K, ``vstar_norm2`` and ``kappa``), ``I0``, ``I1`` and the limits."""

    activation: str
    scale: str
    obligations: tuple
    mu: sp.Expr
    nu: sp.Expr
    U: sp.Expr
    conditions: tuple
    tau_lo: sp.Expr
    tau_hi: sp.Expr
    leading: sp.Expr
    I0: sp.Expr
    I1: sp.Expr
    limits: dict


# ------------------------------------------------------------------------------------------------
# the family in (q, g)
# ------------------------------------------------------------------------------------------------

def _coordinates(expr: sp.Expr) -> sp.Expr:
    """``N = K/sigma^2``, ``e = sigma x``, ``atan(x) = A``."""
    out = expr.subs(ma.N, ma.K / sigma**2).subs(gf.e, sigma * x)
    return sp.factor(sp.cancel(out.subs(sp.atan(x), A)))


def _pi_boxed(expr: sp.Expr, box: dict) -> bool:
    """``expr >= 0`` on ``box`` for every value of pi in :data:`PI_BOX` (pi replaced by a box variable)."""
    return box_nonnegative(expr.subs(sp.pi, PI), {**box, PI: PI_BOX})


def _antiderivative(integrand: sp.Expr, lo, hi) -> tuple[sp.Expr, list]:
    """An antiderivative of a rational function of x by partial fractions, each ``c/(alpha x + beta)`` term
    integrated to ``c log(s (alpha x + beta))/alpha`` with the sign ``s`` that makes the argument positive at
    the middle of ``[lo, hi]`` for sample parameters; returns it and the log arguments (whose positivity on
    the interval is an obligation of the caller)."""
    total, arguments = sp.Integer(0), []
    sample = {sigma: sp.Rational(1, 3), q: sp.Rational(1, 2)}
    middle = ((lo + hi) / 2).subs(sample)
    for term in sp.Add.make_args(sp.apart(sp.cancel(integrand), x)):
        num, den = sp.fraction(sp.factor(term))
        den_poly = sp.Poly(den, x)
        if den_poly.degree() == 1 and not num.has(x):
            alpha, beta = den_poly.all_coeffs()
            argument = alpha * x + beta
            if (argument.subs(sample).subs(x, middle)).evalf() < 0:
                argument = -argument
            total += num / alpha * sp.log(argument)
            arguments.append(argument)
        else:
            total += sp.integrate(term, x)
    return total, arguments


# ------------------------------------------------------------------------------------------------
# the proof
# ------------------------------------------------------------------------------------------------

def _family_at(q_value) -> dict:
    """The family forms at ``q = q_value`` with ``P1 = pi - q A``: what the derived pieces must equal."""
    return {name: form.subs(P1, sp.pi - q * A).subs(q, q_value) for name, form in FAMILY.items()}


def _mu_of(nu: sp.Expr) -> sp.Expr:
    """``mu = 2 pi^2 nu/(1 + sigma^2)``: the factor of ``e H0/(sigma lambda) = mu W`` and ``r = mu R``."""
    return 2 * sp.pi**2 * nu / (1 + sigma**2)


def _lag_equation_holds() -> bool:
    """Step 1 on the family (q, g, nu symbolic): with ``lambda = g lambda_1``, ``H0 = g nu x^2 P1 P2/(1+x^2)^2``,
    ``H = H0 (C1/C1*)(1 - k (C1/C1* - 1))``, ``dC1/dtau = lambda (C1* - C1)`` and ``e' = -e H``, the lag
    ``u = C1/C1* - 1`` obeys ``u' = lambda (-u + (1+u)^2 (1 - k u) mu R)``, ``mu = 2 pi^2 nu/(1 + sigma^2)``, and
    ``e H0/(sigma lambda) = mu W``. Derivatives in e by the chain rule: ``d/de = (d/dx + (1+x^2)^(-1) d/dA)/sigma``."""
    nu, C1 = sp.Symbol("nu", positive=True), gf.C1
    form = _family_at(q)
    lam, H0, k, star = g * form["lam"], g * nu * form["H0"], form["k"], form["star"]
    H = H0 * (C1 / star) * (1 - k * (C1 / star - 1))
    mu = _mu_of(nu)

    def d_de(expr):
        return (sp.diff(expr, x) + sp.diff(expr, A) / (1 + x**2)) / sigma

    u_dot = (lam * (star - C1) / star - C1 / star**2 * d_de(star) * (-sigma * x * H)).subs(C1, star * (1 + u))
    return (tl._identity_zero(u_dot - lam * (-u + (1 + u)**2 * (1 - k * u) * mu * form["R"]))
            and tl._identity_zero(sigma * x * H0 / (sigma * lam) - mu * form["W"]))


@lru_cache(maxsize=None)
@seeded
def family_obligations() -> tuple:
    """The obligations on the family forms (every q in (0, 1], sigma in (0, 1], P1 in [pi/2, pi]) and on the
    integral; the same for both activations and both logit scales. Returns ``(obligations, U)``."""
    obligations = tl._Obligations()
    claim = obligations.claim

    claim("lag_equation", "on the family: u' = lambda (-u + (1+u)^2 (1 - k u) mu R), e H0/(sigma lambda) = mu W, "
                          "mu = 2 pi^2 nu/(1 + sigma^2)", _lag_equation_holds())
    R1, W1, k1, lam1 = FAMILY["R"], FAMILY["W"], FAMILY["k"], FAMILY["lam"]
    box = {x: (0, None), sigma: (0, 1), q: (0, 1), P1: (PI / 2, PI)}
    atan_below_x = nonnegative_on(sp.cancel(sp.diff(x - sp.atan(x), x)), x, 0)   # equal at 0, derivative >= 0
    claim("atan_range", "0 <= atan x <= min(x, pi/2): P1 = pi - q A in [pi/2, pi], P2 = pi + q (x - A) = P1 + q x",
          atan_below_x)
    claim("R_bound", "|R| <= psi", _pi_boxed(PSI - R1, box) and _pi_boxed(PSI + R1, box))
    claim("W_bound", "W <= wbar", _pi_boxed(W_BAR - W1, box))
    claim("k_bound", "0 <= k <= kbar (k x (sigma + x) P1 = (1 - sigma x) P2: k >= 0 for e <= 1)",
          _pi_boxed(K_BAR - k1, box))
    b = BOUNDS
    y = sp.Symbol("y", positive=True)
    claim("lambda_bounds", f"lambda/g - {b.lambda_min} = (1 - sigma x)^2/(2 (sigma + x)^2) >= 0 (lambda >= lambda/g, "
                           f"g >= 1), and lambda/g <= {b.lambda_max / 2} for x >= 1 (lambda <= {b.lambda_max}, g <= 2)",
          tl._identity_zero((lam1 - b.lambda_min) * 2 * (sigma + x)**2 - (1 - sigma * x)**2)
          and tl.coefficient_nonnegative((b.lambda_max / 2 - lam1).subs(x, 1 + y).subs(y, x)))
    claim("log_derivative", "|psi'/psi| <= xi (psi'/psi = 3/x + 2/(1+x) + 4/(3+4x) - 8x/(1+x^2))",
          tl._identity_zero(sp.diff(PSI, x) / PSI - (XI - 16 * x / (1 + x**2))))
    claim("psi_decreasing", "psi' <= 0 on [2, oo)", nonnegative_on(-sp.diff(PSI, x), x, 2))
    claim("psi_at_start", f"psi(1/sigma) >= {b.psi_start} sigma^2 for 0 < sigma <= 1/2 (sigma <= 1/2 follows "
                          "from (H2))",
          nonnegative_on(sp.factor(PSI.subs(x, 1 / sigma)) - b.psi_start * sigma**2, sigma, 0, sp.Rational(1, 2)))
    claim("W_lower", f"W >= x^5/(4(1+x^2)^3) >= {b.w_floor}/x >= 0 for x >= 1 (>= {b.w_floor} sigma for "
                     "x <= 1/sigma)",
          _pi_boxed(W1 - x**5 / (4 * (1 + x**2)**3), box)
          and nonnegative_on(x**5 / (4 * (1 + x**2)**3) - b.w_floor / x, x, 1))
    claim("k_small", f"kbar <= 1 on [{b.k_below_one_from}, oo)", nonnegative_on(1 - K_BAR, x, b.k_below_one_from))
    claim("Psi", f"psi <= {b.psi_sup} on x > 0", nonnegative_on(b.psi_sup - PSI, x, 0))
    claim("Z", f"psi kbar <= {b.k_psi_sup} on x > 0", nonnegative_on(b.k_psi_sup - sp.cancel(PSI * K_BAR), x, 0))
    claim("Xi", f"xi wbar <= {b.xi_w_sup} on x > 0", nonnegative_on(b.xi_w_sup - sp.cancel(XI * W_BAR), x, 0))
    claim("omega", f"wbar <= {b.w_tail} on x > 0", nonnegative_on(b.w_tail - W_BAR, x, 0))
    tl.band_obligations(claim, b)
    # the integral
    f_exact = FAMILY["f"]
    claim("atan_near", "x - x^3/3 <= atan x <= x on x >= 0 (derivatives x^2/(1+x^2), x^4/(1+x^2), equal at 0)",
          atan_below_x and nonnegative_on(sp.cancel(sp.diff(sp.atan(x) - x + x**3 / 3, x)), x, 0))
    claim("atan_far", "atan x = pi/2 - atan(1/x) for x > 0 (equal derivatives, equal at x = 1)",
          tl._identity_zero(sp.diff(sp.atan(x) + sp.atan(1 / x), x))
          and sp.simplify(sp.atan(1) + sp.atan(1) - sp.pi / 2) == 0)
    near = f_exact.subs(P1, sp.pi - q * (x - theta * x**3 / 3))
    far = f_exact.subs(P1, sp.pi - q * (sp.pi / 2 - 1 / x + theta / (3 * x**3)))
    near_box = {x: (0, 1), q: (0, 1), theta: (0, 1)}
    far_box = {x: (1, None), q: (0, 1), theta: (0, 1)}
    claim("integrand_near", f"0 <= f_near - f <= {NEAR_GAP} on (0, 1]",
          _pi_boxed(F_NEAR - near, near_box) and _pi_boxed(NEAR_GAP - (F_NEAR - near), near_box))
    claim("integrand_far", "0 <= f_far - f <= 1/(q x) on [1, oo)",
          _pi_boxed(F_FAR - far, far_box) and _pi_boxed(FAR_GAP - (F_FAR - far), far_box))
    near_anti, near_args = _antiderivative(F_NEAR, sigma, 1)
    far_anti, far_args = _antiderivative(F_FAR, 1, 1 / sigma)
    claim("U_exact", "the antiderivatives differentiate back to f_near, f_far; their logs' arguments are "
                     "positive on [sigma, 1] and [1, 1/sigma]",
          tl._identity_zero(sp.diff(near_anti, x) - F_NEAR) and tl._identity_zero(sp.diff(far_anti, x) - F_FAR)
          and all(_pi_boxed(arg, {x: (0, 1), q: (0, 1)}) for arg in near_args)
          and all(_pi_boxed(arg, {x: (1, None), q: (0, 1)}) for arg in far_args))
    U = (near_anti.subs(x, 1) - near_anti.subs(x, sigma)) + (far_anti.subs(x, 1 / sigma) - far_anti.subs(x, 1))
    return tuple(obligations), U


@lru_cache(maxsize=None)
@seeded
def _time_bounds(scale: str, nu: sp.Expr) -> tuple:
    """Steps 4-6 in ``(sigma, K, v, q, g)``: hypothesis conditions, ``tau_lo``, ``tau_hi``, the leading factor,
    I0, I1, the limits and the obligations on them (``nu``: the derived factor, the same for both
    activations at one scale)."""
    K, v = ma.K, ma.vstar_norm2
    mu = _mu_of(nu)
    obligations = tl._Obligations()
    claim = obligations.claim

    U = family_obligations()[1]
    F_lo = U - NEAR_GAP - sp.log(1 / sigma) / q
    conditions = tl.hypothesis(BOUNDS, mu, sigma)   # each must be < 0; H2 implies sigma <= 1/2
    g_lo, g_hi = tl.band_factors(BOUNDS, mu)
    tau_lo = ((F_lo / (g * nu)) - tl.start_cost(BOUNDS, mu, sigma)) / g_hi
    tau_hi = tl.transient_time(BOUNDS, mu, sigma) + U / (g * nu * g_lo)
    a = 1 if scale == "D" else 0
    leading = (K * (1 + sigma**2) / sigma**2)**a * (K / sigma**2)**2
    I0 = K / (v * g)
    c1 = q / sp.pi**3 + 1 / (sp.pi * q * (1 - q / 2))
    I1 = 2 * sp.pi**2 * c1 * sp.sqrt(K) * I0
    ranges = {q: (0, 1), g: (1, 2)}
    signs = [eventual_sign(expr, sigma, ranges) for _, expr in conditions]
    claim("hypothesis_eventually", "each condition of (H) is negative for every small sigma, i.e. every large D "
          "(the sign of the finite nonzero limit of sigma^j times it, rdyn.derivations.limits)",
          all(sign == -1 for sign in signs), "limit_rules")
    limits = {}
    for name, bound in (("tau_lo", tau_lo), ("tau_hi", tau_hi)):
        ratio = bound / leading
        leading_limit = limit_at_zero(ratio, sigma, ranges)
        next_limit = limit_at_zero(sp.sqrt(K) / sigma * (ratio - I0), sigma, ranges)
        limits[name] = leading_limit.value if leading_limit else sp.nan
        limits[name + "_I1"] = next_limit.value if next_limit else sp.nan
    claim("leading_order", "tau_lo/(D^a N^2) and tau_hi/(D^a N^2) -> I0 = K/(v g)",
          all(sp.cancel(limits[b] - I0) == 0 for b in ("tau_lo", "tau_hi")), "limit_rules")
    claim("I1", "N^(1/2) (tau/(D^a N^2) - I0) -> I1 = 2 pi^2 c1 sqrt(K) I0 for both bounds",
          all(sp.cancel(limits[b + "_I1"] - I1) == 0 for b in ("tau_lo", "tau_hi")), "limit_rules")
    return tuple(obligations), conditions, tau_lo, tau_hi, leading, I0, I1, limits


@lru_cache(maxsize=None)
@seeded
def prove(activation: str = "relu", scale: str = "D") -> TstarLawRelu:
    """The proof of the module docstring for ``activation`` ("relu" or "leaky") at logit scale ``scale``."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"unknown activation {activation!r} (relu or leaky)")
    if scale not in SCALES:
        raise ValueError(f"unknown logit scale {scale!r}")
    K, N, kappa, C1 = ma.K, ma.N, ma.kappa, gf.C1
    obligations = tl._Obligations()
    claim = obligations.claim

    claim("euler_step", "the map is x + eta F(x): each increment of C1, C2, C3 is linear in eta",
          tl.is_euler_step(activation, scale))
    # the derived flow is the family's at the activation's (q, g); nu is what is left
    q_public = sp.Integer(1) if activation == "relu" else (1 - kappa)**2 / (1 + kappa**2)
    g_public = sp.Integer(1) if activation == "relu" else 1 + kappa**2
    form = _family_at(q_public)
    field = gf.vector_field(activation, scale)
    c1_rate = _coordinates(ma.to_internal(field.C1_rate))
    H = _coordinates(ma.to_internal(field.s_rate / gf.scale_of(scale)))
    star = _coordinates(ma.to_internal(gf.c1_fixed_point(activation)))
    nu = sp.factor(sp.cancel(H.subs(C1, form["star"]) / (g_public * form["H0"])))
    ratio = C1 / form["star"]
    claim("family", "in sigma = sqrt(K/N), x = e/sigma, A = atan(x): C1* and dC1/dtau = g lambda_1 (C1* - C1) "
                    "are the family's at (q, g), and ds/dtau/scale = H = g nu x^2 P1 P2/(1+x^2)^2 (C1/C1*) "
                    "(1 - k (C1/C1* - 1)) with nu free of x and A",
          not nu.free_symbols - {sigma, K, ma.vstar_norm2}
          and sp.cancel(star - form["star"]) == 0
          and sp.cancel(c1_rate - g_public * form["lam"] * (form["star"] - C1)) == 0
          and sp.cancel(H - g_public * nu * form["H0"] * ratio * (1 - form["k"] * (ratio - 1))) == 0)
    shared, U = family_obligations()
    timed, conditions, tau_lo, tau_hi, leading, I0, I1, limits = _time_bounds(scale, nu)
    obligations.extend(shared + timed)
    public = {q: q_public, g: g_public}

    def to_public(expr):
        return ma.to_public(expr.subs(public).subs(sigma, sp.sqrt(K / N)))

    return TstarLawRelu(activation, scale, tuple(obligations), to_public(sp.factor(_mu_of(nu))), to_public(nu),
                        to_public(U),
                        tuple((name, to_public(expr)) for name, expr in conditions),
                        to_public(tau_lo), to_public(tau_hi), to_public(leading),
                        to_public(I0), to_public(I1), {k_: to_public(v_) for k_, v_ in limits.items()})

