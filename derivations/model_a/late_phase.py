"""Model A, phase 3 (T > T*): the late-phase law of ``x = C2 + C3`` and the asymptotic rates it
implies, with their constants (seed 000, Theorem 3.1 and Lemmas D.17-D.19).

Derived from the slow manifold of :mod:`rdyn.derivations.model_a.gradient_flow` (C1 slaved to C1*; the
gradient-flow limit ``tau = eta T`` of the collapsed map of Lemma D.2). With
``e = exp(-x/scale)`` (``scale`` = D or sqrt(D), the softmax scale), as e -> 0 at fixed D:

* ``dx/dtau = G0(e) ~ g2 e^2``, ``C1*(e) = 1 + c1 e + O(e^2)``, excess loss on the manifold
  ``loss0(e) ~ l2 e^2`` (each coefficient a Taylor coefficient at e = 0: the functions are analytic there,
  so ``lim f(e)/e^k = f^(k)(0)/k!`` once ``f(0) = ... = f^(k-1)(0) = 0`` is checked exactly; asserted finite and
  nonzero; no sympy ``limit``);
* so ``d(e^-2)/dtau = 2 g2/scale`` and ``e^2 ~ scale/(2 g2 tau)``: the late-phase equation
  ``x(T) = (scale/2) log(2 g2 eta T/scale) + o(1)``;
* ``1 - K p = N e/(K + N e) ~ (N/K) e`` (``N = D - K``), hence, with ``tau = eta T``:
  ``1 - K p ~ (N/K) sqrt(scale/(2 g2 tau))`` (Theta(T^-1/2), not 1/T),
  ``||S - S*||_F = D (1 - K p)/sqrt(K N)`` (the attention structure),
  ``||W_V - V*||_F = sqrt(M) |C1 - 1| ~ sqrt(M) |c1| e``,
  ``excess loss ~ l2 scale/(2 g2 tau)`` (Theta(1/T)),
  ``Delta(C2 + C3) = eta G ~ eta g2 exp(-2 (C2 + C3)/scale)`` (Lemma D.19's form, derived constant).

Lag and modified-equation terms change these by relative O(e) and O(eta), i.e. they vanish as
T -> oo; the checks measure how fast (:mod:`rdyn.verification.checks.errata_a`).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from rdyn.derivations.model_a import gradient_flow as gf
from rdyn.derivations.model_a import collapsed as ma
from rdyn.derivations.reproducible import seeded

e = gf.e
D, K, M, eta = ma.D, ma.K, ma.vstar_norm2, ma.eta
T = sp.Symbol("T", positive=True)

QUANTITIES = ("excess_loss", "one_minus_Kp", "S_error_F", "WV_error_F", "delta_C2_plus_C3",
              "one_over_K_minus_p")


@dataclass(frozen=True)
class LatePhase:
    """Coefficients (public symbols D, K, vstar_norm2, kappa) of one activation and logit scale."""

    activation: str
    scale: str
    g2: sp.Expr   # dx/dtau ~ g2 e^2
    c1: sp.Expr   # C1* = 1 + c1 e + ...
    l2: sp.Expr   # loss0 ~ l2 e^2
    e_squared_times_tau: sp.Expr  # lim tau e^2 = scale/(2 g2)

    def asymptote(self, quantity: str) -> sp.Expr:
        """The leading term (in D, K, vstar_norm2 = M, eta, T, kappa) of ``quantity`` as T -> oo."""
        N = D - K
        e_T = sp.sqrt(self.e_squared_times_tau / (eta * T))
        forms = {
            "excess_loss": self.l2 * self.e_squared_times_tau / (eta * T),
            "one_minus_Kp": N / K * e_T,
            "one_over_K_minus_p": N / K**2 * e_T,
            "S_error_F": D * (N / K * e_T) / sp.sqrt(K * N),
            "WV_error_F": sp.sqrt(M) * sp.Abs(self.c1) * e_T,
            # as a function of x = C2 + C3 (not of T): eta g2 exp(-2 x/scale)
            "delta_C2_plus_C3": eta * self.g2,
        }
        return sp.simplify(forms[quantity])


def _taylor_limit(numerator: sp.Expr, order: int) -> sp.Expr:
    """``lim_{e -> 0} numerator/e^order`` for ``numerator`` analytic at 0 (rational in e with a denominator nonzero
    at 0, and atan): the Taylor coefficient ``numerator^(order)(0)/order!``, after checking exactly that the lower
    derivatives vanish at 0 and every value at 0 is finite."""
    derivative = numerator
    for k in range(order + 1):
        value = sp.cancel(derivative.subs(e, 0))
        if value.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
            raise ValueError(f"not analytic at e = 0: derivative {k} of {numerator} is {value}")
        if k < order:
            if value != 0:
                raise ValueError(f"derivative {k} of {numerator} does not vanish at e = 0: {value}")
            derivative = sp.diff(derivative, e)
    return sp.simplify(value / sp.factorial(order))


def _limit(numerator: sp.Expr, order: int) -> sp.Expr:
    value = _taylor_limit(numerator, order)
    assert value.is_finite is not False and value != 0, f"degenerate late-phase coefficient: {value}"
    return value


@lru_cache(maxsize=None)
@seeded
def late_phase(activation: str, scale: str = "D") -> LatePhase:
    """The coefficients of the module docstring (Taylor coefficients at e = 0 on the slow manifold)."""
    h, _, star, _, _ = gf.slow_coefficients(activation, scale)
    h_i, star_i = ma.to_internal(h), ma.to_internal(star)
    star0 = _taylor_limit(star_i, 0)
    assert star0 == 1, f"C1* does not tend to 1 as p -> 1/K: {star0}"
    g2 = _limit(h_i * star_i, 2)
    c1 = _limit(star_i - 1, 1)
    loss = ma.to_internal(gf.slow_manifold(activation, scale).loss0)
    l2 = _limit(loss, 2)
    scale_expr = ma.to_internal(gf.scale_of(scale))
    pub = lambda x: sp.factor(ma.to_public(sp.simplify(x)))  # noqa: E731
    return LatePhase(activation, scale, pub(g2), pub(c1), pub(l2), pub(scale_expr / (2 * g2)))


@lru_cache(maxsize=None)
@seeded
def increment_ratio(activation: str, scale: str = "D") -> sp.Expr:
    """``q(e) = G0(e)/(g2 e^2)``: the slow-manifold drift of ``x = C2 + C3`` over its leading
    term (Lemma D.19's increment, corrected). ``q -> 1`` as ``e -> 0``; on phase 3
    (``e <= K/(D-K)``, i.e. ``p >= 1/(2K)``) it decreases from 1 to :func:`increment_ratio_at_threshold`
    (checked on a grid by ``A.errata.bound.*``), which bounds ``Delta x`` and hence ``1/K - p``
    from both sides."""
    h, _, star, _, _ = gf.slow_coefficients(activation, scale)
    g2 = ma.to_internal(late_phase(activation, scale).g2)
    q = sp.simplify(ma.to_internal(star * h) / (g2 * e**2))
    assert sp.simplify(_taylor_limit(sp.cancel(q * e**2), 2) - 1) == 0, f"q(e) does not tend to 1: {q}"
    return ma.to_public(q)


@lru_cache(maxsize=None)
@seeded
def increment_ratio_at_threshold(activation: str, scale: str = "D") -> sp.Expr:
    """``q_min = q(K/(D-K))``: the value at ``p = 1/(2K)`` (T = T*), in D, K (and kappa)."""
    q = ma.to_internal(increment_ratio(activation, scale)).subs(e, ma.K / ma.N)
    return sp.factor(ma.to_public(sp.simplify(q)))
