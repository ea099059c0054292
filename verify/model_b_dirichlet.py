"""Independent routes for the exact Task 2 expectations of Model B (r distinct eigenvalues).

The iterator's rule (:func:`reduced_dynamics.model_b.exact_rule`) integrates the Dirichlet
(k_1/2, ..., k_r/2) masses in stick-breaking coordinates with the eigenvalues in *descending*
order, graded towards u_j = 0. The route here breaks the sticks in *ascending* order (smallest
eigenvalue first: different coordinates, different nodes, no grading, a fixed high order), so
agreement to the working precision is a genuine check of both; plus Monte Carlo (iid uniform
``a``) within 5 standard errors. Checks ``B.exact.*``.
"""
from __future__ import annotations

import math

import mpmath
import numpy as np

from reduced_dynamics import model_b as mb
from reduced_dynamics.dirichlet_rule import dirichlet_params, dirichlet_rule
from verify.report import Check, digits_of

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


def statistics(rule: mb.SpectralRule, gammas) -> list:
    """LN loss and L'(gamma) at each gamma, kappa3 = E||Sa||, kappa4 = E[a^T S a/||S a||]."""
    out = []
    for g in gammas:
        loss, dl = mb.ln_terms(rule, g)
        out += [rule.mean(loss), rule.mean(dl)]
    sq = np.sqrt(rule.m2) if not rule.mp else np.array([mpmath.sqrt(v) for v in rule.m2], dtype=object)
    out += [rule.mean(sq), rule.mean(rule.m1 / sq)]
    return out


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
                         "pass" if err < 1e-12 else "fail", err, digits_of(err),
                         {"note": "float64 floor: m2 - m1^2 cancels (L'(gamma) ~ gamma^-3)"}))
    dps = 25
    for spec in ((3, 2, 1),) if quick else ((3, 2, 1), (4, 3, 2, 1)):
        r = len(set(spec))
        with mpmath.workdps(dps + 5):
            ex = statistics(mb.exact_rule(spec, dps), [mpmath.mpf(g) for g in GAMMAS])
            ind = statistics(ascending_rule(spec, 48 if r == 3 else 40, dps + 8), [mpmath.mpf(g) for g in GAMMAS])
        err = max_rel(ex, ind)
        out.append(Check(f"B.exact.dps{dps}.r{r}", f"{SRC}, C.2.1",
                         f"dps {dps}, spectrum {spec}: iterator's rule equals the ascending route",
                         "pass" if err < 10.0 ** (-dps + 2) else "fail", err, digits_of(err)))
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
