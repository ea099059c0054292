"""Model A with a general activation: the collapsed map derived without positive homogeneity
(docs/models_and_conventions.md, "Activations beyond the paper").

Setting: ``V*`` has M rows ``v_m = r_m u_m`` (``u_m`` unit vectors), ``W_V = C1 V*`` and
``W_KQ = C2 A_in - C3 A_out`` (the ansatz of :mod:`rdyn.derivations.model_a.collapsed`). For row m and
column i the teacher and student pre-activations are ``r_m Y1`` and ``C1 r_m Y2`` with
``Y1 = u_m^T X s*_i``, ``Y2 = u_m^T X s_i`` (the same law as in the homogeneous derivation:
``Y1 = u/K``, ``Y2 = p u + q w``).

1. Closure of W_V (:func:`orthogonal_gradient_covariances`). The W_V gradient of row m is
   ``-sum_i E[h_m (X s_i)]`` with ``h_m = (sigma(r_m Y1) - sigma(C1 r_m Y2)) sigma'(C1 r_m Y2)``.
   Split ``X s_i = (u_m^T X s_i) u_m + xi`` with ``xi = (I - u_m u_m^T) X s_i``. Stein's identity
   for jointly Gaussian (Y1, Y2, xi): ``E[h(Y1, Y2) xi] = Cov(xi, Y1) E[d1 h] + Cov(xi, Y2) E[d2 h]``,
   and both covariances vanish (computed below from ``cov(a^T X b, c^T X d) = (a.c)(b.d)`` with
   ``a = u_perp``, ``c = u_m``), for every sigma. So the gradient of row m is
   ``-D E[h_m Y2] u_m``: parallel to ``v_m``, with the coefficient ``g(r_m) = -D E[h_{r_m} Y2]/r_m``
   per unit of ``v_m``.
2. Row norms. ``W_V = C1 V*`` is preserved iff ``g(r_m)`` is the same
   for every row: always for a positively homogeneous sigma (``h_r = r h_1``: the coefficient is
   free of r, :func:`homogeneous_coefficient_is_free_of_r`), and for a general sigma exactly when
   the rows have equal norms (then all ``g(r_m)`` coincide). Unequal norms: the rows move at
   different rates and the ansatz does not close (``rdyn crosscheck --vstar-row-norms`` shows it).
3. The update (:func:`general_update`). With equal norms ``r = sqrt(vstar_norm2 / M)`` and the
   normalised moments ``m_k = E[h Y_k] / r``: ``<grad_{W_V} L, V*> / ||V*||^2 = -D m2`` and
   ``dL/dS_{j,i} = -C1 sum_m r E[h x_j'] = -C1 vstar_norm2 E[h x_j'] / r``, i.e. the logit
   gradients of :func:`rdyn.derivations.model_a.collapsed.logit_gradients_symbolic` with
   ``(hY1, hY2) = (m1, m2)``. The sum over rows is checked symbolically.
"""
from __future__ import annotations

from functools import lru_cache

import sympy as sp

from rdyn.derivations.reproducible import seeded


@lru_cache(maxsize=None)
@seeded
def orthogonal_gradient_covariances(tokens: int = 4) -> tuple[sp.Expr, sp.Expr]:
    """(Cov(xi, Y1), Cov(xi, Y2)) for symbolic token weights s*_j, s_j of one column and the
    coordinate of X s_i along a unit vector orthogonal to u_m (d = 2 after a rotation, which
    leaves iid N(0,1) X invariant): both are 0 for every weight vector."""
    u = sp.Matrix([1, 0])          # u_m (rotated to e_1)
    u_perp = sp.Matrix([0, 1])     # any unit vector orthogonal to u_m
    s_star = sp.Matrix(sp.symbols(f"sstar0:{tokens}", real=True))
    s = sp.Matrix(sp.symbols(f"s0:{tokens}", real=True))

    def cov(a, b, c, d):   # cov(a^T X b, c^T X d) for iid N(0,1) X
        return (a.T * c)[0] * (b.T * d)[0]

    return (sp.simplify(cov(u_perp, s, u, s_star)), sp.simplify(cov(u_perp, s, u, s)))


@lru_cache(maxsize=None)
@seeded
def homogeneous_coefficient_is_free_of_r() -> bool:
    """For sigma(r x) = r sigma(x), sigma'(r x) = sigma'(x) (ReLU family), h_r = r h_1, so
    E[h_r Y2] / r = E[h_1 Y2]: checked on the integrand with a symbolic positive r."""
    r, y1, y2, c1 = sp.symbols("r y1 y2 C1", positive=True)
    # on each linear piece sigma(x) = k x (k = 1, kappa or 0), sigma' = k:
    # h_r = (k r y1 - k C1 r y2) k, so h_r / r = h_1 on every piece
    k = sp.Symbol("k", nonnegative=True)

    def h(rr):
        return (k * rr * y1 - k * c1 * rr * y2) * k

    return sp.simplify(h(r) / r - h(1)) == 0


@lru_cache(maxsize=None)
@seeded
def general_update() -> dict:
    """The collapsed update for M rows of equal norm r in terms of m1, m2: returns the
    per-step increments {C1, C2, C3} (sympy) and asserts that summing the per-row logit
    gradients equals the homogeneous form with (hY1, hY2) = (m1, m2), vstar_norm2 = M r^2."""
    from rdyn.derivations.model_a import collapsed as ma

    M, r = sp.symbols("M r", positive=True)
    m1, m2, hY1_raw, hY2_raw = sp.symbols("m1 m2 E_hY1 E_hY2", real=True)
    p, q = ma.attention_weights()
    K, N, C1 = ma.K, ma.N, ma.C1
    # per row: dl/dS_j = -C1 r E[h x_j'] (chain rule through the student pre-activation C1 r Y2)
    per_row_in = -C1 * r * hY1_raw
    per_row_out = -C1 * r * (hY2_raw - p * K * hY1_raw) / q / N
    total_in, total_out = M * per_row_in, M * per_row_out
    mean = K * p * total_in + N * q * total_out
    grad_in = sp.simplify(p * (total_in - mean))
    grad_out = sp.simplify(q * (total_out - mean))
    lg = ma.logit_gradients_symbolic()
    subs = {sp.Symbol("hY1"): m1, sp.Symbol("hY2"): m2, ma.vstar_norm2: M * r**2}
    raw = {hY1_raw: m1 * r, hY2_raw: m2 * r}
    assert sp.simplify(grad_in.subs(raw) - lg.in_group.subs(subs)) == 0
    assert sp.simplify(grad_out.subs(raw) - lg.out_group.subs(subs)) == 0
    # W_V: <grad, V*> / ||V*||^2 = sum_m (-D E[h Y2] r) / (M r^2) = -D m2
    grad_wv = sp.simplify(M * (-(K + N) * hY2_raw * r) / (M * r**2)).subs(raw)
    assert sp.simplify(grad_wv + (K + N) * m2) == 0
    return {"C1": -ma.eta * grad_wv, "grad_A_in": lg.in_group.subs(subs),
            "grad_A_out": lg.out_group.subs(subs)}


@lru_cache(maxsize=1)
def logit_gradient_functions():
    """The derived logit gradients (in-group, out-group entry) of
    :func:`rdyn.derivations.model_a.collapsed.logit_gradients_symbolic` as plain-arithmetic callables of
    (C1, e, K, N, V, hY1, hY2) with V = ||V*||_F^2 and e = q/p (floats, arb balls, mpf; numba
    compiles them too)."""
    from rdyn.derivations.model_a import collapsed as ma

    lg = ma.logit_gradients_symbolic()
    args = (ma.C1, ma.out_group_ratio, ma.K, ma.N, ma.vstar_norm2, sp.Symbol("hY1"), sp.Symbol("hY2"))
    return (sp.lambdify(args, lg.in_group, modules=[{}]),
            sp.lambdify(args, lg.out_group, modules=[{}]))
