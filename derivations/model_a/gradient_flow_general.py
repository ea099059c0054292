"""Model A with a smooth activation: the gradient-flow limit of the collapsed map and its slow
manifold, derived without positive homogeneity.

Derived from :func:`rdyn.derivations.model_a.collapsed_general.general_update` (the collapsed map for M
rows of ``V*`` of equal norm ``r = sqrt(vstar_norm2 / M)``, docs/models_and_conventions.md, "Activations beyond the
paper"); nothing is transcribed. The Gaussian moments ``m_k = E[h Y_k] / r`` of that map depend
on the state only through ``C1`` and ``e = exp(-(C2+C3)/scale)`` (``h`` is built from
``sigma(r Y1)``, ``sigma(C1 r Y2)`` and the law of ``(Y1, Y2)``, which is fixed by p, q), and
never on eta. They are kept as undefined functions ``m1(C1, e)``, ``m2(C1, e)``, so everything
below holds for every activation:

1. Vector field (:func:`general_vector_field`). Each component of the map is
   ``x + eta F(x)`` with ``F`` free of eta (asserted), so with ``tau = eta t`` the limit
   eta -> 0 is ``dx/dtau = F(x)``. ``F_C3 = K F_C2/(D-K)`` (asserted), hence ``C3 = K C2/(D-K)``
   along the trajectory from zero and the state ``(C1, s)``, ``s = C2 + C3``, is closed (the same
   reduction as :mod:`rdyn.derivations.model_a.gradient_flow` for ReLU): ``dC1/dtau = D m2``,
   ``ds/dtau = F_s(C1, m1, m2, e)``.
2. The modified equation of first order is ``F + eta F_1``, ``F_1 = -1/2 (DF) F`` (explicit
   Euler; the same backward-error statement as for ReLU, it needs only that F is free of eta).
3. Slow manifold. ``C1*(s)`` is the zero of ``F_C1 = D m2`` (the fixed point of the map at
   fixed p); by implicit differentiation ``dC1*/ds = -F_C1,s / F_C1,C1`` (asserted against
   :func:`sympy.idiff`) with ``d/ds = -(e/scale) d/de``. With ``lambda = -F_C1,C1`` at ``C1*``
   (no longer affine in C1: the linearisation at C1* is what the first-order lag uses), the
   lag is ``delta = -(dC1*/ds) G0 / lambda`` and ``ds/dtau = G0 + F_s,C1 delta`` with
   ``G0 = F_s(C1*, s)``. On the manifold ``m2 = 0``: ``G0`` depends on ``m1`` alone
   (:func:`manifold_rate`), so it has no cancellation between ``C1`` and ``C1^2`` terms.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from rdyn.derivations.model_a import collapsed as ma
from rdyn.derivations.model_a.gradient_flow import VectorField
from rdyn.derivations.model_a.collapsed_general import general_update
from rdyn.derivations.reproducible import seeded

C1, C2, C3, D, K, N, eta = ma.C1, ma.C2, ma.C3, ma.D, ma.K, ma.N, ma.eta
e = ma.out_group_ratio
s = sp.Symbol("s", real=True)  # C2 + C3
m1 = sp.Function("m1")(C1, e)  # E[h Y1] / r at (C1, e)
m2 = sp.Function("m2")(C1, e)  # E[h Y2] / r at (C1, e)
m1_value, m2_value = sp.symbols("m1_value m2_value", real=True)


@lru_cache(maxsize=None)
@seeded
def general_vector_field(scale: str = "D") -> VectorField:
    """``F = (map - identity)/eta`` of the smooth collapsed map, asserted free of eta, and
    ``ds/dtau = F_C2 + F_C3 = D F_C2/(D-K)`` (``F_C3 = K F_C2/(D-K)`` asserted); a
    :class:`~rdyn.derivations.model_a.gradient_flow.VectorField` with activation ``"any"``, in C1, e and
    the moment functions ``m1(C1, e)``, ``m2(C1, e)``."""
    update = general_update()
    M, r = sp.symbols("M r", positive=True)
    back = {r: sp.sqrt(ma.vstar_norm2 / M)}   # r^2 M = vstar_norm2
    moments = {sp.Symbol("m1", real=True): m1, sp.Symbol("m2", real=True): m2}
    div = ma.to_internal(ma.logit_scale(scale))

    def in_state(expr):
        return sp.simplify(ma.to_internal(expr).subs(back).subs(moments))

    increments = (in_state(update["C1"]),
                  in_state(-eta * update["grad_A_in"] / div),
                  in_state(eta * update["grad_A_out"] / div))
    rates = []
    for inc in increments:
        rate = sp.simplify(inc / eta)
        assert not rate.has(eta), "the smooth map is not x + eta F(x)"
        assert not rate.has(M), "the rate depends on M beyond vstar_norm2 and m1, m2"
        rates.append(rate)
    F1, F2, F3 = rates
    assert sp.simplify(F3 - K * F2 / N) == 0, "C3 rate is not K/(D-K) times the C2 rate"
    s_rate = sp.factor(sp.simplify(F2 * (K + N) / N))
    return VectorField("any", scale, ma.to_public(F1), ma.to_public(F2), ma.to_public(s_rate))


def d_ds(expr: sp.Expr, scale: str) -> sp.Expr:
    """Derivative along s = C2 + C3 of an expression in e = exp(-s/scale)."""
    return -e / ma.logit_scale(scale) * sp.diff(expr, e)


@dataclass(frozen=True)
class GeneralSlowManifold:
    """The slow-manifold reduction in terms of values at ``C1 = C1*(s)``: ``G0`` (with
    ``m1 = m1_value``, ``m2 = 0``), and the lag and its rate correction as functions of the
    partial derivatives (plain symbols): ``lag = -(dC1*/ds) G0 / lambda``,
    ``G1 = F_s,C1 lag``."""

    G0: sp.Expr
    lag: sp.Expr
    G1: sp.Expr


@lru_cache(maxsize=None)
@seeded
def manifold_rate(scale: str = "D") -> GeneralSlowManifold:
    """Step 3 of the module docstring. Symbols: ``dstar`` (dC1*/ds), ``lam`` (lambda),
    ``fs_c1`` (dF_s/dC1 at C1*), ``G0`` for the value of G0 in ``lag`` and ``G1``."""
    f = general_vector_field(scale)
    G0 = sp.factor(f.s_rate.subs({m2: 0}).subs({m1: m1_value}))
    assert not G0.has(m2_value), "G0 still depends on m2"
    dstar, lam, fs_c1, g0 = sp.symbols("dstar lam fs_c1 G0", real=True)
    lag = -dstar * g0 / lam
    return GeneralSlowManifold(G0, lag, fs_c1 * lag)


PARAMETER_SYMBOLS = (D, K, ma.vstar_norm2)


@lru_cache(maxsize=None)
def rate_function(scale: str):
    """``(C1, e, D, K, vstar_norm2, m1, m2) -> (dC1/dtau, ds/dtau)``, lambdified from
    :func:`general_vector_field` (plain arithmetic: floats, mpf)."""
    f = general_vector_field(scale)
    values = {m1: m1_value, m2: m2_value}
    args = (C1, e) + PARAMETER_SYMBOLS + (m1_value, m2_value)
    return sp.lambdify(args, [f.C1_rate.subs(values), f.s_rate.subs(values)], "math", cse=True)
