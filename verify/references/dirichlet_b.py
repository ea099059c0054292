"""Independent routes for the exact Task 2 expectations of Model B (r distinct eigenvalues).

The iterator's rule (:func:`rdyn.reduced_dynamics.model_b.run.exact_rule`) integrates the Dirichlet
(k_1/2, ..., k_r/2) masses in stick-breaking coordinates with the eigenvalues in *descending*
order, each coordinate mapped exponentially away from its nearest branch point. The route here
breaks the sticks in *ascending* order (smallest eigenvalue first: different coordinates,
different nodes, plain Gauss-Jacobi without any map, a fixed high order), so agreement to the
working precision is a genuine check of both; plus Monte Carlo (iid uniform ``a``) within 5
standard errors, and (full report) the r-independent 2-D Gamma-integral route. Checks
``B.exact.*``.
"""
from __future__ import annotations

import mpmath
import numpy as np

from rdyn.reduced_dynamics.model_b import run as mb
from rdyn.reduced_dynamics.model_b.dirichlet_rule import dirichlet_params, dirichlet_rule
from rdyn.verification.checks.record import Check, digits_of

SRC = "Wu-Zhang-Cao 2026 (seed 003)"


def ascending_rule(spectrum, n_nodes: int, dps: int | None = None) -> mb.SpectralRule:
    """Tensor Gauss-Jacobi rule with the sticks broken from the smallest eigenvalue up."""
    lv = sorted(mb.distinct_levels(spectrum))          # ascending
    masses, weights = dirichlet_rule(dirichlet_params([k for _, k in lv]), n_nodes, dps)
    lam = [v for v, _ in lv]
    if dps is None:
        levels = np.tile(np.array(lam, dtype=float), (len(weights), 1))
    else:
        levels = np.array([[mpmath.mpf(v) for v in lam]] * len(weights), dtype=object)
    return mb.SpectralRule(levels, masses, weights, "exact", dps is not None)


def _statistic_terms(nodes, *gammas):
    out = []
    for g in gammas:
        out += list(mb.ln_terms(nodes, g))
    sq = mb.sqrt_elementwise(nodes.m2)
    return out + [sq, nodes.m1 / sq]


def statistics(rule: mb.SpectralRule, gammas) -> list:
    """LN loss and L'(gamma) at each gamma, kappa3 = E||Sa||, kappa4 = E[a^T S a/||S a||]."""
    return rule.means(_statistic_terms, *gammas)


def max_rel(a, b) -> float:
    with mpmath.workdps(60):
        return max(float(abs(mpmath.mpf(x) - mpmath.mpf(y)) / abs(mpmath.mpf(y))) for x, y in zip(a, b))


CASES = [(3, 1, 1, 1), (2, 2, 1, 1, 1, 1, 1, 3), (3, 2, 1), (4, 2, 2, 1, 1, 1, 1, 1),
         (4, 3, 2, 1), (4, 3, 3, 2, 1, 1, 1, 1)]
GAMMAS = (0.0, 0.5, 3.0, 40.0)


def checks(quick: bool = True) -> list[Check]:
    out = []
    for spec in CASES:
        r = len(set(spec))
        ex = statistics(mb.exact_rule(spec), GAMMAS)
        ind = statistics(ascending_rule(spec, 80 if r <= 3 else 60), GAMMAS)
        err = max_rel(ex, ind)
        out.append(Check(f"B.exact.float64.r{r}.{'-'.join(map(str, spec))}", f"{SRC}, C.2.1 (F_t), B.2 (kappa3, kappa4)",
                         f"Task 2 spectrum {spec} ({r} distinct eigenvalues): LN loss and L'(gamma) at gamma in "
                         f"{GAMMAS}, kappa3, kappa4 by the iterator's rule equal the ascending stick-breaking route",
                         "pass" if err < 2e-14 else "fail", err, digits_of(err),
                         {"note": "r = 2 uses the 200-node theta rule (floor ~6e-15); r >= 3 agree to ~4e-16"}))
    # the ascending route is plain Gauss-Jacobi (error ~10^-0.44 per node and coordinate for
    # r = 4): its order is set for the tolerance 10^-(dps-2)
    cases = [((3, 2, 1), 25, 48), ((4, 3, 2, 1), 20, 48)]
    if not quick:
        cases += [((4, 3, 2, 1), 30, 72), ((4, 3, 3, 2, 1, 1, 1, 1), 30, 72)]
    for spec, dps, n_ascending in cases:
        r = len(set(spec))
        with mpmath.workdps(dps + 5):
            gammas = [mpmath.mpf(g) for g in GAMMAS]
            ex = statistics(mb.exact_rule(spec, dps), gammas)
            ind = statistics(ascending_rule(spec, n_ascending, dps + 8), gammas)
        err = max_rel(ex, ind)
        out.append(Check(f"B.exact.dps{dps}.r{r}.{'-'.join(map(str, spec))}", f"{SRC}, C.2.1",
                         f"dps {dps}, spectrum {spec}: LN loss and L'(gamma) at gamma in {GAMMAS}, kappa3, "
                         "kappa4 by the iterator's rule equal the ascending route",
                         "pass" if err < 10.0 ** (-dps + 2) else "fail", err, digits_of(err),
                         {"ascending_nodes_per_coordinate": n_ascending}))
    if not quick:   # the r-independent 2-D Gamma-integral route (about a minute per point);
        # (100, 50, 2, 1): branch point at delta = 1/9999 from u_1 = 0 (the exponential map's case)
        for spec in ((3, 2, 1), (4, 3, 2, 1), (100, 50, 2, 1)):
            r = len(set(spec))
            rule = mb.exact_rule(spec)
            loss_i, dl_i = mb.ln_terms(rule, 0.5)
            L, dL = gamma_route(spec, 0.5, 16)
            err = max_rel([rule.mean(loss_i), rule.mean(dl_i)], [L, dL])
            out.append(Check(f"B.exact.gamma_route.r{r}.{'-'.join(map(str, spec))}", f"{SRC}, C.2.1",
                             f"spectrum {spec}: LN loss and L'(gamma) at gamma = 0.5 by the exact rule equal "
                             "the 2-D Gamma-integral route (Gaussian representation; independent of r)",
                             "pass" if err < 1e-13 else "fail", err, digits_of(err)))
    # Monte Carlo within 5 standard errors (r = 4, d = 8)
    spec = (4, 3, 3, 2, 1, 1, 1, 1)
    mc = mb.monte_carlo_rule("spectrum", 8, sum(spec), spec, 40000, 7)
    ex_rule = mb.exact_rule(spec)
    zs = {}
    for g in GAMMAS:
        for j, name in ((0, "loss"), (1, "dloss")):
            vals = mb.ln_terms(mc, g)[j]
            zs[f"{name}@{g}"] = float(abs(vals.mean() - ex_rule.mean(mb.ln_terms(ex_rule, g)[j])) / mc.std_error(vals))
    out.append(Check("B.exact.monte_carlo.r4", f"{SRC}, C.2.1",
                     f"spectrum {spec}: Monte Carlo (4e4 samples) within 5 SE of the exact rule",
                     "pass" if max(zs.values()) < 5 else "fail", None, None, {"z": zs}))
    return out


def gamma_route(spectrum, g, dps: int = 20):
    """(E[loss], E[L'(gamma)]) of the LN layer at ``gamma = g`` by a 2-D integral, for any r.

    Independent of the stick-breaking rules: with ``z ~ N(0, I)`` in the eigenbasis (``a = z/|z|``,
    every quantity is homogeneous of degree 0 in z), ``M = I + g Lambda``,
    ``(m1 + g m2)/(r sqrt(m2)) = z^T Lambda M z (z^T M^2 z)^{-1/2} (z^T Lambda^2 z)^{-1/2}`` and
    ``(m2 - m1^2)/(sqrt(m2) r^3) = (1/2) sum_ij z_i^2 z_j^2 (lam_i - lam_j)^2 (z^T Lambda^2 z)^{-1/2}
    (z^T M^2 z)^{-3/2}``. Each negative power by ``Q^{-p} = Gamma(p)^{-1} int_0^oo t^{p-1} e^{-tQ} dt``;
    the Gaussian expectation against ``e^{-z^T D z}`` is ``prod_i (1 + 2 D_i)^{-1/2}`` times
    moments of ``N(0, (I + 2D)^{-1})``. With ``s = x^2``, ``t = y^2`` (removing ``s^{-1/2}``):
    ``E[...] = (4/pi) int int Phi N1 dx dy`` and ``(8/pi) int int y^2 Phi N2 dx dy`` over
    ``[0, oo)^2`` (mpmath tanh-sinh), ``Phi = prod_p (1 + 2 x^2 lam_p^2 + 2 y^2 M_p^2)^{-k_p/2}``.
    """
    lv = mb.distinct_levels(spectrum)
    with mpmath.workdps(dps + 10):
        lam = [mpmath.mpf(v) for v, _ in lv]
        ks = [k for _, k in lv]
        g = mpmath.mpf(g)
        M = [1 + g * l for l in lam]

        def parts(x, y):
            s, t = x * x, y * y
            den = [1 + 2 * s * l * l + 2 * t * m * m for l, m in zip(lam, M)]
            phi = mpmath.fprod(dn ** (-mpmath.mpf(k) / 2) for dn, k in zip(den, ks))
            sig = [1 / dn for dn in den]
            n1 = mpmath.fsum(k * l * m * sg for k, l, m, sg in zip(ks, lam, M, sig))
            n2 = mpmath.fsum(ks[p] * ks[q] * sig[p] * sig[q] * (lam[p] - lam[q]) ** 2
                             for p in range(len(lam)) for q in range(p + 1, len(lam)))
            return phi, n1, n2

        i1 = mpmath.quad(lambda x, y: (lambda p: p[0] * p[1])(parts(x, y)), [0, mpmath.inf], [0, mpmath.inf])
        i2 = mpmath.quad(lambda x, y: (lambda p: y * y * p[0] * p[2])(parts(x, y)), [0, mpmath.inf], [0, mpmath.inf])
        loss = 2 - 2 * 4 / mpmath.pi * i1
        dloss = -2 * 8 / mpmath.pi * i2
    return loss, dloss
