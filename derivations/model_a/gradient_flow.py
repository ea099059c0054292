"""Model A: the gradient-flow limit of the collapsed map, its modified equation, the slow manifold.

Derived from :func:`rdyn.derivations.model_a.catalog.model_a_expressions` (the collapsed map of Lemma D.2,
seed 000, C1 > 0 branch) under the conventions of docs/models_and_conventions.md; nothing here is transcribed.

1. Vector field. The map is ``x' = x + eta F(x)`` with ``F`` free of ``eta`` (asserted), so with
   ``tau = eta t`` the limit eta -> 0 is ``dx/dtau = F(x)`` (:func:`vector_field`). The state is
   ``(C1, s)`` with ``s = C2 + C3``: along the trajectory from zero ``C3 = K C2/(D-K)``
   (:func:`rdyn.derivations.model_a.collapsed.c2_c3_invariant`), so ``C2 = (D-K) s/D`` and the map depends on
   ``(C2, C3)`` only through ``e = exp(-s/scale)``. Every expression is written in ``C1`` and
   ``e``; ``d/ds = -(e/scale) d/de``.
2. Modified equation (backward error analysis, first order): the flow of
   ``F + eta F_1`` with ``F_1 = -1/2 (DF) F`` matches one map step to ``O(eta^3)``, hence a
   trajectory over ``tau = O(1)`` to ``O(eta^2)`` (:func:`modified_correction`).
3. Slow manifold. ``F_C1`` is affine in C1: ``F_C1 = lambda(s) (C1*(s) - C1)`` with ``C1*`` the
   fixed point of the map at fixed p (Lemma D.4's proxy). Slaving ``C1 = C1* + delta`` with the
   first-order lag ``delta = -(dC1*/ds) G0 / lambda`` (the same for the map at any stable eta:
   the map's lag is ``-(C1*(s_{t+1}) - C1*(s_t))/(1 - m)`` with ``1 - m = eta lambda``) gives
   ``ds/dtau = G(s) = G0(s) + dF_s/dC1 * delta`` with ``G0(s) = F_s(C1*(s), s)``
   (:func:`slow_manifold`).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from rdyn.derivations.reproducible import seeded

from rdyn.derivations.model_a import collapsed as ma
from rdyn.derivations.model_a.catalog import model_a_expressions

C1, C2, C3, D, K, eta = ma.C1, ma.C2, ma.C3, ma.D, ma.K, ma.eta
e = ma.out_group_ratio
s = sp.Symbol("s", real=True)  # C2 + C3


def _from_catalog(expr: sp.Expr) -> sp.Expr:
    """Catalog expressions use the plain symbol ``e``; map it to :data:`ma.out_group_ratio`."""
    return expr.subs(sp.Symbol("e"), e)


def scale_of(scale: str) -> sp.Expr:
    return ma.logit_scale(scale)


@dataclass(frozen=True)
class VectorField:
    """``dC1/dtau``, ``dC2/dtau``, ``ds/dtau`` (s = C2 + C3) in C1 and e, and the scale."""

    activation: str
    scale: str
    C1_rate: sp.Expr
    C2_rate: sp.Expr
    s_rate: sp.Expr


@lru_cache(maxsize=None)
@seeded
def vector_field(activation: str, scale: str = "D") -> VectorField:
    """``F = lim_{eta -> 0} (map - identity)/eta`` on the C1 > 0 branch (Lemma D.2 as a flow).

    ``ds/dtau = F_C2 + F_C3`` with ``F_C3 = K F_C2/(D-K)`` (asserted from the map itself)."""
    x = model_a_expressions(activation, scale)
    rates = []
    for name, var in (("C1_next_positive", C1), ("C2_next_positive", C2),
                      ("C3_next_positive", C3)):
        increment = _from_catalog(x[name]) - var
        rate = sp.limit(increment / eta, eta, 0) if increment.has(eta) else increment
        assert not rate.has(eta), "the map is not x + eta F(x)"
        rates.append(rate)
    F1, F2, F3 = rates
    invariant = ma.to_internal(F3 - K * F2 / (D - K))
    assert sp.simplify(invariant) == 0, "C3 rate is not K/(D-K) times the C2 rate"
    s_rate = ma.to_public(sp.factor(sp.simplify(ma.to_internal(F2 * D / (D - K)))))
    return VectorField(activation, scale, F1, F2, s_rate)


def d_ds(expr: sp.Expr, scale: str) -> sp.Expr:
    """Derivative along s = C2 + C3 of an expression in e = exp(-s/scale)."""
    return -e / scale_of(scale) * sp.diff(expr, e)


@dataclass(frozen=True)
class ModifiedCorrection:
    """``F_1 = -1/2 (DF) F`` in the state (C1, s): components for C1 and s."""

    C1_rate: sp.Expr
    s_rate: sp.Expr


@lru_cache(maxsize=None)
def modified_correction(activation: str, scale: str = "D") -> ModifiedCorrection:
    """First-order modified equation ``dx/dtau = F + eta F_1``, ``F_1 = -1/2 (DF) F``
    (Hairer-Lubich-Wanner, Geometric Numerical Integration, IX.1, for explicit Euler)."""
    f = vector_field(activation, scale)
    out = []
    for comp in (f.C1_rate, f.s_rate):
        jac_f = sp.diff(comp, C1) * f.C1_rate + d_ds(comp, scale) * f.s_rate
        out.append(-jac_f / 2)
    return ModifiedCorrection(*out)


@lru_cache(maxsize=None)
def c1_relaxation_rate(activation: str, scale: str = "D") -> sp.Expr:
    """``lambda = -dF_C1/dC1`` (F_C1 is affine in C1, asserted); the map's C1 multiplier is
    ``1 - eta lambda``."""
    f = vector_field(activation, scale)
    assert sp.diff(f.C1_rate, C1, 2) == 0
    return sp.simplify(-sp.diff(f.C1_rate, C1))


@lru_cache(maxsize=None)
def c1_fixed_point(activation: str) -> sp.Expr:
    """C1*(e), the zero of F_C1 (the fixed point of the map at fixed p)."""
    return _from_catalog(model_a_expressions(activation, "D")["C1_star"])


@dataclass(frozen=True)
class SlowManifold:
    """``ds/dtau`` on the slow manifold: ``G0`` (C1 = C1*) and the first-order lag term ``G1``;
    ``lag`` is delta = C1 - C1*; ``loss0`` the excess loss on the manifold (C1 = C1*)."""

    G0: sp.Expr
    G1: sp.Expr
    lag: sp.Expr
    rate: sp.Expr
    loss0: sp.Expr


@lru_cache(maxsize=None)
def slow_manifold(activation: str, scale: str = "D") -> SlowManifold:
    """Slaving of C1 to C1*(p) plus its first-order lag (module docstring, step 3)."""
    f = vector_field(activation, scale)
    star = c1_fixed_point(activation)
    residual = sp.simplify(ma.to_internal(f.C1_rate.subs(C1, star)))
    assert residual == 0, "C1* is not the zero of the C1 rate"
    rate = c1_relaxation_rate(activation, scale)
    G0 = f.s_rate.subs(C1, star)
    lag = -d_ds(star, scale) * G0 / rate
    G1 = sp.diff(f.s_rate, C1).subs(C1, star) * lag
    loss = _from_catalog(model_a_expressions(activation, scale)["loss_positive"]).subs(C1, star)
    return SlowManifold(G0, G1, lag, rate, loss)


# --------------------------------------------------------------------------------------------
# Numerical functions (lambdified from the expressions above)
# --------------------------------------------------------------------------------------------

PARAMETER_SYMBOLS = (D, K, ma.vstar_norm2, ma.kappa)


@lru_cache(maxsize=None)
def flow_functions(activation: str, scale: str, module: str):
    """Lambdified ``(rhs, correction, jacobian)`` of (C1, e) and the parameters (D, K, vstar_norm2,
    kappa). ``rhs -> (dC1/dtau, ds/dtau)``, ``correction -> F_1``, ``jacobian -> d(F)/d(C1, s)``.
    ``module``: "numpy" or "mpmath"."""
    f = vector_field(activation, scale)
    m = modified_correction(activation, scale)
    jac = [[sp.diff(comp, C1), d_ds(comp, scale)] for comp in (f.C1_rate, f.s_rate)]
    args = (C1, e) + PARAMETER_SYMBOLS
    mod = "numpy" if module == "numpy" else "mpmath"
    rhs = sp.lambdify(args, [f.C1_rate, f.s_rate], mod, cse=True)
    corr = sp.lambdify(args, [m.C1_rate, m.s_rate], mod, cse=True)
    jacobian = sp.lambdify(args, jac, mod, cse=True)
    star = sp.lambdify((e,) + PARAMETER_SYMBOLS, c1_fixed_point(activation), mod, cse=True)
    return rhs, corr, jacobian, star


@lru_cache(maxsize=None)
@seeded
def slow_coefficients(activation: str, scale: str = "D") -> tuple[sp.Expr, ...]:
    """``(h, a2, C1*, dC1*/ds, lambda)`` in e, where ``F_s = a1 C1 + a2 C1^2`` (asserted: no
    C1-free term, degree 2) and ``h = a1 + a2 C1*`` simplified, so that ``G0 = C1* h``,
    ``lag = -(dC1*/ds) G0/lambda``, ``G1 = (h + a2 C1*) lag``. ``a1 C1*`` and ``a2 C1*^2``
    cancel to about 1e-5 relative near T* at D = 1e6; ``h`` is their sum in closed form
    (relu: ``e^2 ||V*||^2 (pi - atan(e sqrt((D-K)/K))) / (2 pi K (K + (D-K) e)(K + (D-K) e^2))``)
    and has no cancellation."""
    f = vector_field(activation, scale)
    poly = sp.Poly(sp.expand(f.s_rate), C1)
    assert poly.degree() <= 2, "ds/dtau is not quadratic in C1"
    a = [sp.factor(poly.coeff_monomial(C1**k)) for k in range(3)]
    assert sp.simplify(a[0]) == 0, "ds/dtau does not vanish at C1 = 0"
    star = c1_fixed_point(activation)
    h = ma.to_public(sp.factor(sp.simplify(ma.to_internal(a[1] + a[2] * star))))
    return (h, a[2], star, d_ds(star, scale), c1_relaxation_rate(activation, scale))


def slow_rate(coefficients, lag: bool = True):
    """``G = G0 (+ G1)`` from the values of :func:`slow_coefficients` (any number type)."""
    h, a2, star, dstar, rate = coefficients
    G0 = star * h
    if not lag:
        return G0
    return G0 - (h + a2 * star) * dstar * G0 / rate


@lru_cache(maxsize=None)
def slow_functions(activation: str, scale: str, module: str = "mpmath"):
    """Lambdified :func:`slow_coefficients` (one function of e, D, K, vstar_norm2, kappa
    returning the six values; common subexpressions shared) and the manifold loss (C1 = C1*)."""
    sm = slow_manifold(activation, scale)
    args = (e,) + PARAMETER_SYMBOLS
    mod = "numpy" if module == "numpy" else "mpmath"
    coefficients = sp.lambdify(args, list(slow_coefficients(activation, scale)), mod, cse=True)
    loss = sp.lambdify(args, sm.loss0, mod, cse=True)
    return coefficients, loss
