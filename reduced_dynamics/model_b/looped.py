"""The looped LN model of Model B: per-sample Dist^2 terms (compiled for large rules), the exact
two-level route (2F1 closed form; compiled graded Gauss rule in float64) and the growth constant
Upsilon_1."""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import mpmath
import numpy as np

from rdyn.reduced_dynamics.model_b.rule import SpectralRule


def _looped_terms_f64(lam, c, rho, L):
    """:func:`looped_terms` on float64 arrays, compiled by numba (cached on disk by
    :mod:`rdyn.reduced_dynamics.runs.kernel_cache`; numba is imported only here)."""
    return _looped_terms_compiled()(lam, c, rho, L)


@lru_cache(maxsize=None)
def _looped_terms_compiled():
    from rdyn.reduced_dynamics.runs import kernel_cache

    return kernel_cache.compiled_function(_looped_terms_template, "model_b_looped",
                                          "float64 Model B looped kernel", "import numpy as np")


def _looped_terms_template(lam, c, rho, L):   # pragma: no cover - compiled twin of looped_terms
    N, K = lam.shape
    loss = np.empty(N)
    dloss = np.empty(N)
    for i in range(N):
        top = lam[i, 0]
        den = 1.0 + rho * top
        P = 0.0
        dP = 0.0
        for k in range(1, K):
            z = (1.0 + rho * lam[i, k]) / den
            z2L1 = z ** (2 * L - 1)
            P += c[i, k] * z2L1 * z
            dP += c[i, k] * (2 * L) * z2L1 * (lam[i, k] - top) / (den * den)
        tot = c[i, 0] + P
        loss[i] = P / tot
        dloss[i] = c[i, 0] * dP / (tot * tot)
    return loss, dloss


def looped_terms(rule: SpectralRule, rho, L: int):
    """Per-sample (Dist^2, d Dist^2/drho) of the looped LN model: P/(A+P)."""
    lam, c = rule.levels, rule.masses
    if not rule.mp and lam.shape[0] > 1000:
        return _looped_terms_f64(np.ascontiguousarray(lam, dtype=float), np.ascontiguousarray(c, dtype=float),
                                 float(rho), int(L))
    top = lam[:, :1]
    den = 1 + rho * top
    z = (1 + rho * lam[:, 1:]) / den
    z2L1 = z ** (2 * L - 1)
    zz = z2L1 * z
    A = c[:, 0]
    P = (c[:, 1:] * zz).sum(axis=1)
    dz = (lam[:, 1:] - top) / (den * den)
    dP = (c[:, 1:] * (2 * L) * z2L1 * dz).sum(axis=1)
    tot = A + P
    return P / tot, A * dP / (tot * tot)


def looped_two_level(rule: SpectralRule, rho, L: int):
    """Exact (G, dG/drho) of the looped model for a two-level spectrum, by 2F1.

    With ``t ~ Beta(a, b)`` (``a = k/2``, ``b = (d-k)/2``), ``q = ((1+rho l2)/(1+rho l1))^{2L}``
    and ``z = -(1-q)/q``: ``G = E[(1-t) q/(t + (1-t) q)] = b/(a+b) 2F1(1, a; a+b+1; z)`` and
    ``dG/dq = E[t(1-t)/(t+(1-t)q)^2] = q^-2 ab/((a+b)(a+b+1)) 2F1(2, a+1; a+b+2; z)`` (Euler's
    integral). Gauss-Legendre fails here: the integrand has a boundary layer of width ``q``.
    """
    k, d = rule.beta_params
    l1, l2 = rule.levels[0, 0], rule.levels[0, 1]
    if not rule.mp:
        return _looped_two_level_f64(float(rho), int(L), float(l1), float(l2), k, d)
    return looped_two_level_hyp2f1(rho, L, l1, l2, k, d)


def looped_two_level_hyp2f1(rho, L: int, l1, l2, k: int, d: int):
    """(G, dG/drho) of :func:`looped_two_level` by the 2F1 closed form, as mpmath numbers at
    the caller's mpmath precision."""
    rho_, l1, l2 = mpmath.mpf(rho), mpmath.mpf(l1), mpmath.mpf(l2)
    a, b = mpmath.mpf(k) / 2, mpmath.mpf(d - k) / 2
    q = ((1 + rho_ * l2) / (1 + rho_ * l1)) ** (2 * L)
    z = -(1 - q) / q
    G = b / (a + b) * mpmath.hyp2f1(1, a, a + b + 1, z)
    dGdq = a * b / ((a + b) * (a + b + 1)) * mpmath.hyp2f1(2, a + 1, a + b + 2, z) / (q * q)
    dq = 2 * L * q * (l2 - l1) / ((1 + rho_ * l1) * (1 + rho_ * l2))
    return G, dGdq * dq


BOUNDARY_NODES = 24       # Gauss points per panel of the float64 boundary-layer rule


@lru_cache(maxsize=64)
def _boundary_rule(k: int, d: int):
    """Reference Gauss rules (Beta(a,1), Legendre, Beta(b,1)) for :func:`_beta_layer_f64`;
    float64 values of 20-digit nodes (a pure function of (k, d))."""
    from rdyn.reduced_dynamics.model_b.dirichlet_rule import gauss_beta

    a, b = Fraction(k, 2), Fraction(d - k, 2)
    xa, wa = gauss_beta(BOUNDARY_NODES, a, 1)
    xg, wg = gauss_beta(BOUNDARY_NODES, 1, 1)
    xb, wb = gauss_beta(BOUNDARY_NODES, b, 1)
    lnB = math.lgamma(k / 2) + math.lgamma((d - k) / 2) - math.lgamma(d / 2)
    return xa, wa, xg, wg, xb, wb, lnB


def _beta_layer_f64(q, a, b, xa, wa, xg, wg, xb, wb, lnB):
    """:func:`_beta_layer_template`, compiled by numba (cached on disk by
    :mod:`rdyn.reduced_dynamics.runs.kernel_cache`; numba is imported only here)."""
    return _beta_layer_compiled()(q, a, b, xa, wa, xg, wg, xb, wb, lnB)


@lru_cache(maxsize=None)
def _beta_layer_compiled():
    from rdyn.reduced_dynamics.runs import kernel_cache

    return kernel_cache.compiled_function(_beta_layer_template, "model_b_beta_layer",
                                          "float64 Model B looped boundary-layer rule", "import math")


def _beta_layer_template(q, a, b, xa, wa, xg, wg, xb, wb, lnB):   # pragma: no cover - compiled
    """``G = E[(1-t) q/(t + (1-t) q)]`` and ``dG/dq = E[t (1-t)/(t + (1-t) q)^2]`` for
    ``t ~ Beta(a, b)``: composite Gauss rule graded geometrically (ratio 0.15) from ``t = 1/2``
    down to ``t <= q/10`` (the boundary layer of width ``q``), Jacobi end panels carrying
    ``t^{a-1}`` on ``[0, h_K]`` and ``(1-t)^{b-1}`` on ``[1/2, 1]`` (in ``v = 1 - t``)."""
    sigma = 0.15
    K = 0
    if q < 5.0:
        K = max(0, int(math.ceil(math.log(0.2 * q) / math.log(sigma))))
    G = 0.0
    dG = 0.0
    h = 0.5 * sigma ** K
    ha = math.exp(a * math.log(h)) / a
    for i in range(xa.shape[0]):
        t = h * xa[i]
        w = wa[i] * ha * math.exp((b - 1.0) * math.log1p(-t) - lnB)
        den = t + (1.0 - t) * q
        G += w * (1.0 - t) * q / den
        dG += w * t * (1.0 - t) / (den * den)
    for k in range(K, 0, -1):
        lo = 0.5 * sigma ** k
        hi = 0.5 * sigma ** (k - 1)
        for i in range(xg.shape[0]):
            t = lo + (hi - lo) * xg[i]
            w = wg[i] * (hi - lo) * math.exp((a - 1.0) * math.log(t) + (b - 1.0) * math.log1p(-t) - lnB)
            den = t + (1.0 - t) * q
            G += w * (1.0 - t) * q / den
            dG += w * t * (1.0 - t) / (den * den)
    hb = math.exp(b * math.log(0.5)) / b
    for i in range(xb.shape[0]):
        v = 0.5 * xb[i]
        t = 1.0 - v
        w = wb[i] * hb * math.exp((a - 1.0) * math.log1p(-v) - lnB)
        den = t + v * q
        G += w * v * q / den
        dG += w * t * v / (den * den)
    return G, dG


def _looped_two_level_f64(rho: float, L: int, l1: float, l2: float, k: int, d: int):
    """float64 twin of :func:`looped_two_level` (no 2F1: the compiled graded rule above)."""
    xa, wa, xg, wg, xb, wb, lnB = _boundary_rule(k, d)
    z = (1.0 + rho * l2) / (1.0 + rho * l1)
    q = z ** (2 * L)
    G, dGdq = _beta_layer_f64(q, k / 2, (d - k) / 2, xa, wa, xg, wg, xb, wb, lnB)
    dq = 2 * L * q * (l2 - l1) / ((1.0 + rho * l1) * (1.0 + rho * l2))
    return G, dGdq * dq


def looped_two_level_step(rule: SpectralRule, L: int, d: int):
    """``rho -> (G, G'(rho)/d, None)`` in float64 for a two-level exact rule: the body of
    :func:`_looped_two_level_f64` with the rule's constants bound once (the per-step Python
    overhead matters here)."""
    k, dd = rule.beta_params
    xa, wa, xg, wg, xb, wb, lnB = _boundary_rule(k, dd)
    l1, l2, a_, b_, L2 = float(rule.levels[0, 0]), float(rule.levels[0, 1]), k / 2, (dd - k) / 2, 2 * L

    def step(g):
        den1, den2 = 1.0 + g * l1, 1.0 + g * l2
        q = (den2 / den1) ** L2
        G, dGdq = _beta_layer_f64(q, a_, b_, xa, wa, xg, wg, xb, wb, lnB)
        return G, dGdq * L2 * q * (l2 - l1) / (den1 * den2) / d, None
    return step


def upsilon1_two_level(rule: SpectralRule, L: int):
    """Upsilon_1 = 2L th^{2L-1} (l1 - l2)/l1^2 * dG/dq at q = th^{2L}, th = l2/l1 (exact)."""
    k, d = rule.beta_params
    mp = rule.mp
    with (mpmath.workdps(mpmath.mp.dps) if mp else mpmath.workprec(64)):
        l1, l2 = mpmath.mpf(rule.levels[0, 0]), mpmath.mpf(rule.levels[0, 1])
        a, b = mpmath.mpf(k) / 2, mpmath.mpf(d - k) / 2
        th = l2 / l1
        q = th ** (2 * L)
        dGdq = a * b / ((a + b) * (a + b + 1)) * mpmath.hyp2f1(2, a + 1, a + b + 2, -(1 - q) / q) / (q * q)
        u = 2 * L * th ** (2 * L - 1) * (l1 - l2) / (l1 * l1) * dGdq
    return u if mp else float(u)


def two_level_exact(rule: SpectralRule) -> bool:
    return rule.kind == "exact" and rule.beta_params is not None and rule.levels.shape[1] == 2



def upsilon1(rule: SpectralRule, L: int):
    """Looped growth constant ``lim -rho^2 G'(rho)`` (rdyn.derivations.model_b.growth_limits)."""
    lam, c = rule.levels, rule.masses
    top = lam[:, :1]
    th = lam[:, 1:] / top
    A = c[:, 0]
    B = (c[:, 1:] * th ** (2 * L)).sum(axis=1)
    inner = (c[:, 1:] * (2 * L) * th ** (2 * L - 1) * (top - lam[:, 1:]) / (top * top)).sum(axis=1)
    return rule.mean(A * inner / ((A + B) * (A + B)))
