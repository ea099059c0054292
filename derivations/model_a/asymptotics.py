"""Model A: large-D asymptotics of the phase limits tau1, tau_star and of the late excess loss.

Derived from the slow manifold of :mod:`rdyn.derivations.model_a.gradient_flow` (C1 slaved to C1*; the
first-order lag G1 changes tau_star by a relative O(1e-12) at D = 1e4 and is left out here).
Conventions: ``N = D - K``, ``e = exp(-s/scale)``, ``x = e sqrt(N/K)``; T* is at ``e* = K/N``
(p = 1/(2K)); tau_star = tau1 + scale * int_{e*}^{~1} de / (e G0(e)).

* Logit scales: ``G0`` under ``sqrtD`` is exactly ``sqrt(D)`` times ``G0`` under ``D``
  (asserted), so ``scale/G0`` is ``D`` times smaller: ``tau_star(sqrtD) = tau_star(D)/D`` up to
  the O(1) phase-one time. Everything below is computed for the scale ``D``.
* tau_star (matched asymptotics in ``epsilon = N^{-1/2}``): an inner region ``e = K r/N``
  (r = O(1): near T*), where ``A(e) de = N^2 (a0(r) + epsilon a1(r) + ...) dr`` with
  ``A = 1/(e G0)``, and an outer region (e = O(1)) where ``A = N^2 (b0(e) + epsilon b1(e) +
  ...)``. The overlap terms are of lower order, so
  ``tau_star / D = N^2 [I0 + epsilon I1 + O(epsilon^2 log N)]`` with
  ``I0 = int_1^inf a0 dr + int_0^1 b0 de``, ``I1 = int_1^inf a1 dr + int_0^1 b1 de``.
* tau1: during phase one p stays within O(1/D) of 1/D and C1 relaxes linearly at rate
  ``lambda(e = 1)``: ``tau1 -> log(1/(1 - t1_fraction)) / lambda(1)`` (limit in D of lambda(1)).
* Late excess loss: as e -> 0 at fixed D, ``loss0 ~ l2 e^2`` and ``G0 ~ g2 e^2``, so
  ``de/dtau = -(e/scale) G0`` gives ``e^2 ~ scale/(2 g2 tau)`` and
  ``loss ~ c_L / tau`` with ``c_L = l2 scale / (2 g2)`` (the Theta(1/T) rate, with its constant).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from rdyn.derivations.model_a import gradient_flow as gf
from rdyn.derivations.reproducible import seeded
from rdyn.derivations.model_a import collapsed as ma

e, K, N, D = gf.e, ma.K, ma.N, ma.D
v = ma.vstar_norm2
r = sp.Symbol("r", positive=True)
epsilon = sp.Symbol("epsilon", positive=True)


def _g0(activation: str, scale: str) -> sp.Expr:
    h, _, star, _, _ = gf.slow_coefficients(activation, scale)
    return ma.to_internal(star * h)


@lru_cache(maxsize=None)
@seeded
def scale_relation(activation: str) -> bool:
    """G0(sqrtD) = sqrt(D) G0(D) identically."""
    ratio = sp.simplify(_g0(activation, "sqrtD") / _g0(activation, "D"))
    return sp.simplify(ratio - sp.sqrt(K + N)) == 0


@dataclass(frozen=True)
class TauStarExpansion:
    """tau_star(scale D) / D = N^2 (I0 + I1 N^{-1/2} + ...); pieces as sympy expressions or
    mpmath numbers (when sympy leaves an integral unevaluated)."""

    a0: sp.Expr
    a1: sp.Expr
    b0: sp.Expr
    b1: sp.Expr
    I0: object
    I1: object


def _integral(expr, var, lo, hi):
    """Closed form if sympy finds one, else a 30-digit mpmath quadrature (as a Float)."""
    if expr == 0:
        return sp.Integer(0)
    result = sp.integrate(expr, (var, lo, hi))
    if result.has(sp.Integral) or not result.free_symbols <= {K, v, ma.kappa}:
        raise NotImplementedError(f"no closed form for int {expr} d{var}")
    return sp.simplify(result)


@lru_cache(maxsize=None)
@seeded
def tau_star_expansion(activation: str) -> TauStarExpansion:
    """The two leading orders of tau_star / D at logit scale D (module docstring)."""
    A = 1 / (e * _g0(activation, "D"))
    inner = (A.subs(e, K * r / N) * K / N / N**2).subs(N, epsilon**-2)
    inner_series = sp.series(inner, epsilon, 0, 2).removeO()
    a0 = sp.simplify(inner_series.coeff(epsilon, 0))
    a1 = sp.simplify(inner_series.coeff(epsilon, 1))
    outer = (A / N**2).subs(N, epsilon**-2)
    outer_series = sp.series(outer, epsilon, 0, 2).removeO()
    b0 = sp.simplify(outer_series.coeff(epsilon, 0))
    b1 = sp.simplify(outer_series.coeff(epsilon, 1))
    assert not (inner_series - a0 - epsilon * a1).has(epsilon ** -1), "inner grows faster than N^2"
    I0 = sp.simplify(_integral(a0, r, 1, sp.oo) + _integral(b0, e, 0, 1))
    I1 = sp.simplify(_integral(a1, r, 1, sp.oo) + _integral(b1, e, 0, 1))
    return TauStarExpansion(a0, a1, b0, b1, I0, I1)


@lru_cache(maxsize=None)
@seeded
def phase_one_rate_limit(activation: str) -> sp.Expr:
    """lim_{D -> oo} lambda(e = 1): the C1 relaxation rate of phase one (scale D)."""
    rate = ma.to_internal(gf.c1_relaxation_rate(activation, "D")).subs(e, 1)
    return sp.simplify(sp.limit(rate, N, sp.oo))


@lru_cache(maxsize=None)
@seeded
def late_loss_constant(activation: str, scale: str = "D") -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    """(l2, g2, c_L): loss0 ~ l2 e^2, G0 ~ g2 e^2 as e -> 0 at fixed D (asserted: no lower
    powers), and ``c_L = lim tau * loss = l2 scale / (2 g2)``, in D and K."""
    loss = ma.to_internal(gf.slow_manifold(activation, scale).loss0)
    G0 = _g0(activation, scale)
    coefficients = []
    for expr in (loss, G0):
        series = sp.expand(sp.series(expr, e, 0, 3).removeO())
        # the orders e^0, e^1 vanish, but for leaky only after simplification (kappa terms)
        assert all(sp.simplify(series.coeff(e, k)) == 0 for k in (0, 1)), "lower powers of e"
        coefficients.append(sp.simplify(series.coeff(e, 2)))
    l2, g2 = coefficients
    scale_expr = ma.to_internal(gf.scale_of(scale))
    c_L = sp.factor(sp.simplify(l2 * scale_expr / (2 * g2)))
    return ma.to_public(l2), ma.to_public(g2), ma.to_public(c_L)


@lru_cache(maxsize=None)
@seeded
def slow_integral_closed_form(activation: str) -> sp.Expr | None:
    """``int_{K/N}^{1} de / (e G0(e))`` at logit scale D in closed form when sympy finds one
    (identity: G0 = e^2 v / (K (K + N e^2)^2), a rational function), else None. Then
    ``tau_star - tau1 = D * this`` up to the phase-one displacement and the lag."""
    A = sp.cancel(1 / (e * _g0(activation, "D")))
    if not A.is_rational_function(e):
        return None
    return ma.to_public(sp.expand(sp.simplify(sp.integrate(sp.apart(A, e), (e, K / N, 1)))))


# --------------------------------------------------------------------------------------------
# Smooth activations: the leading constant of tau_star, tau1's limit and c_L
# --------------------------------------------------------------------------------------------
#
# With Z1, Z2 independent N(0, 1), Y2 = s2 Z1, Y1 = rho Z1 + s_res Z2 (Var Y1 = 1/K exactly:
# rho^2 + s_res^2 = (K p^2 + N q^2)/(K s2^2)), the teacher's argument r Y1 and the student's
# b Z1 (b = C1 r s2), r = sqrt(||V*||^2 / M) and a = r / sqrt(K) (the sd of r Y1):
#
# * On the slow manifold (m2 = 0) Stein's identity on Z2 gives, for every activation,
#   m1(C1*) = s_res^2 E[sigma'(r Y1) sigma'(C1* r Y2)] (the rho Z1 part of m1 is (rho/s2) m2 = 0),
#   so G0 = C1* v m1 / (N (K + N e)) differs from the identity's (C1* = rho/s2, m1 = s_res^2)
#   by the factor (C1* s2 / rho) E[sigma'(r Y1) sigma'(C1* r Y2)].
# * Inner region (e = K x/N, x fixed, N -> oo): s_res = O(N^-1/2), rho -> 1/sqrt(K), so the
#   teacher's r Y1 -> a Z1, the root of m2 is b = r rho (C1* s2/rho -> 1) and the factor
#   tends to kappa_s = E[sigma'(a Z)^2]: a0 = a0(identity) / kappa_s.
# * Outer region (e fixed): s2 = O(N^-1/2), rho = O(N^-1/2), so b -> 0 and sigma(b Z1) may be
#   expanded: r m2 = s2 (sigma1 r rho A - b Q) + ..., with sigma_k = sigma^(k)(0),
#   A = E[sigma'(a Z)], B = E[sigma(a Z)] - sigma0 and Q = sigma1^2 - sigma2 B; hence
#   C1* s2 / rho -> sigma1 A / Q, the factor -> sigma1^2 A^2 / Q: b0 = b0(identity) Q / (sigma1 A)^2.
# * So I0 = inner / kappa_s + outer Q / (sigma1 A)^2 with inner = int_1^oo a0 dx and outer =
#   int_0^1 b0 de of the identity (both K/(2 v), derived by tau_star_expansion).
# * Phase one (e = 1: p = q = 1/D, D s2^2 = 1, D p = 1): D m2 -> sigma1 A - Q C1, so the rate is
#   Q and tau1 -> log(1/(1 - t1_fraction)) / Q (Q > 0 needed).
# * Late phase (e -> 0 at fixed D): s_res -> 0, loss0 ~ (M D / 2) r^2 s_res^2 kappa_s and
#   G0 ~ kappa_s G0(identity), so kappa_s cancels in c_L = l2 scale / (2 g2): c_L is the identity's.
# * Not derived: the (D-K)^(-1/2) term I1. Between the regions (e ~ N^(-1/2)) rho passes from
#   1/sqrt(K) to 0, and there the factor depends on sigma through the whole bivariate law, not
#   through the constants above; the matching of the identity and ReLU does not carry over.

a_sd = sp.Symbol("a", positive=True)
_zs = sp.Symbol("z", real=True)
A_sym, kappa_sym, B_sym = sp.symbols("A kappa_s B", real=True)
sigma1_sym, sigma2_sym = sp.symbols("sigma1 sigma2", real=True)


@lru_cache(maxsize=None)
@seeded
def identity_region_integrals() -> tuple[sp.Expr, sp.Expr]:
    """(int_1^oo a0 dx, int_0^1 b0 de) of the identity's :func:`tau_star_expansion`: the inner
    and outer parts of I0 (K/(2 v) each)."""
    x = tau_star_expansion("identity")
    return (sp.simplify(_integral(x.a0, r, 1, sp.oo)), sp.simplify(_integral(x.b0, e, 0, 1)))


@dataclass(frozen=True)
class SmoothLeading:
    """The large-D constants of a smooth activation (the derivation above), symbolic in the
    Gaussian moments A, kappa_s, B (symbols :data:`A_sym`, :data:`kappa_sym`, :data:`B_sym`) and
    sigma1, sigma2 (exact values in ``sigma``): ``I0``, ``rate`` (Q: phase one's C1 rate),
    ``moments``: name -> the integrand in x (sigma' , sigma'^2, sigma - sigma0: average at x = a Z)
    and its closed form in ``a`` where sympy finds one (None otherwise)."""

    sigma: tuple
    I0: sp.Expr
    rate: sp.Expr
    moments: dict


@lru_cache(maxsize=16)
@seeded
def smooth_leading(expression: sp.Expr) -> SmoothLeading:
    """:class:`SmoothLeading` of the activation ``expression`` (a sympy function of
    :data:`rdyn.derivations.activations.x`)."""
    from rdyn.derivations import activations as act

    s0, s1, s2 = (sp.simplify(d.subs(act.x, 0)) for d in act.derivatives(expression))
    inner, outer = identity_region_integrals()
    Q = sigma1_sym**2 - sigma2_sym * B_sym
    I0 = inner / kappa_sym + outer * Q / (sigma1_sym**2 * A_sym**2)
    d1 = act.derivatives(expression)[1]
    integrands = {"A": d1, "kappa_s": d1**2, "B": expression - s0}
    moments = {}
    for name, f in integrands.items():
        try:
            closed = sp.simplify(act.gaussian_expectation_closed(f.subs(act.x, a_sd * act._z)))
        except (ValueError, NotImplementedError, TypeError):
            closed = None
        moments[name] = (f, closed)
    return SmoothLeading((s0, s1, s2), I0.subs({sigma1_sym: s1, sigma2_sym: s2}),
                         Q.subs({sigma1_sym: s1, sigma2_sym: s2}), moments)
