"""Independent checks of Model B's Gaussian route (exact Task 2 expectations for any r).

The production route (:mod:`rdyn.reduced_dynamics.model_b.gaussian_route`: polar Gamma-function
representation, double-exponential trapezoid in ``tau`` and periodic trapezoid in ``phi``) is
checked against routes that share none of its nodes or formulas:

* the Dirichlet rule (stick-breaking Gauss-Jacobi, :func:`rdyn.reduced_dynamics.model_b.run.exact_rule`)
  for r <= 4, in float64 and at ``dps``; the looped model against the 2F1 closed form (r = 2);
* the 2-D mpmath tanh-sinh route in Cartesian coordinates
  (:func:`rdyn.verification.references.dirichlet_b.gamma_route`) at 20 digits, for a few points (full);
* randomised QMC (16 scrambled-Sobol replicas) within 4 standard errors for every case the
  Dirichlet rule cannot reach (r >= 5, d up to 64; the looped model with r >= 3);
* the a-posteriori estimate against the actual error (the route at ``dps`` against itself at
  ``dps + 20``);
* trajectories (full): the d = 16 example (r = 5) and the looped (4,3,2,1), L = 3 model,
  float64 against ``dps`` 25 and against QMC trajectories.
and the identities the route rests on, derived with sympy
(:func:`rdyn.derivations.model_b.gaussian_route_identities`). Checks ``B.gaussian.*``.
"""
from __future__ import annotations

import math
from dataclasses import replace

import mpmath
import numpy as np

from rdyn.reduced_dynamics.model_b import run as mb
from rdyn.reduced_dynamics.model_b.gaussian_route import GaussianRoute
from rdyn.verification.references.dirichlet_b import max_rel
from rdyn.verification.checks.record import Check, digits_of

SRC = "Wu-Zhang-Cao 2026 (seed 003)"
GAMMAS = (0.0, 0.5, 3.0, 40.0)
D16 = (5, 4, 3, 3, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1)          # the d = 16 example (r = 5)
D64 = tuple(sorted((1 + (i * 7) % 9 for i in range(64)), reverse=True))   # r = 9, d = 64


def route_statistics(spec, gammas, dps=None) -> list:
    """LN loss and L'(gamma) at each gamma, then kappa3, kappa4, Upsilon_3 (Gaussian route)."""
    route = GaussianRoute(tuple(spec), dps)
    out = []
    for g in gammas:
        out += list(route.ln_means(g))
    return out + list(route.constants())


def max_error(got, ref, n_gammas: int) -> float:
    """Largest error over the statistics of :func:`route_statistics`: absolute for the LN
    losses (the route computes ``2 - 2 E[cos]``: an absolute error ~1e-16 in float64, whatever
    the loss), relative for everything else."""
    with mpmath.workdps(60):
        errs = []
        for i, (x, y) in enumerate(zip(got, ref)):
            diff = abs(mpmath.mpf(x) - mpmath.mpf(y))
            errs.append(float(diff if (i < 2 * n_gammas and i % 2 == 0) else diff / abs(mpmath.mpf(y))))
    return max(errs)


def rule_statistics(rule: mb.SpectralRule, gammas) -> list:
    """The same statistics on a node rule (Dirichlet / theta / Monte Carlo)."""
    def terms(nodes, *gs):
        out = []
        for g in gs:
            out += list(mb.ln_terms(nodes, g))
        sq = mb.sqrt_elementwise(nodes.m2)
        return out + [sq, nodes.m1 / sq, nodes.variance / (nodes.m2 * nodes.m2)]
    return rule.means(terms, *gammas)


def _sobol_spectrum_rules(spec, replicas: int, points: int, seed: int):
    from rdyn.reduced_dynamics.model_b.qmc import replica_rule

    seeds = np.random.SeedSequence(seed).spawn(replicas)
    return [replica_rule("spectrum", len(spec), sum(spec), spec, points, s) for s in seeds]


def qmc_z_scores(spec, gammas, values, replicas=16, points=4096, seed=11) -> list[float]:
    """|value - QMC mean| / SE for each statistic of :func:`rule_statistics`."""
    per = np.array([[float(x) for x in rule_statistics(r, gammas)] for r in
                    _sobol_spectrum_rules(spec, replicas, points, seed)])
    mean, se = per.mean(axis=0), per.std(axis=0, ddof=1) / math.sqrt(replicas)
    return [float(abs(float(v) - m) / s) if s > 0 else 0.0 for v, m, s in zip(values, mean, se)]


def looped_statistics_route(spec, L, rhos, dps=None) -> list:
    route = GaussianRoute(tuple(spec), dps, L)
    out = []
    for rho in rhos:
        out += list(route.looped_means(rho))
    return out + [route.upsilon1()]


def looped_statistics_rule(rule, L, rhos) -> list:
    out = []
    for rho in rhos:
        G, dG = mb.looped_terms(rule, rho, L)
        out += [rule.mean(G), rule.mean(dG)]
    return out + [mb.upsilon1(rule, L)]


RHOS = (0.0, 0.7, 5.0, 100.0)


def checks(quick: bool = True) -> list[Check]:
    from rdyn.derivations.model_b import gaussian_route_identities

    ids = gaussian_route_identities()
    out = [Check("B.gaussian.identities", f"{SRC}, C.2.1 (rdyn's exact Gaussian route)",
                 "the Gaussian route's identities hold symbolically: Lagrange's gap identities "
                 "Q1 Q2 - (z^T L M z)^2 = Q0 Q1 - P^2 = G, the Gaussian moments, the Gamma-function "
                 "representation (p = 1/2, 1, 3/2, 2), the polar weights (2/pi) v and (4/pi) v^2 sin^2 phi",
                 "pass" if all(ids.values()) else "fail", None, None, {"identities": ids})]
    # 1. against the Dirichlet / theta rules (r <= 4), float64
    for spec in ((3, 1, 1, 1), (3, 2, 1), (4, 3, 2, 1), (4, 3, 3, 2, 1, 1, 1, 1)):
        r = len(set(spec))
        err = max_error(route_statistics(spec, GAMMAS), rule_statistics(mb.exact_rule(spec), GAMMAS), len(GAMMAS))
        out.append(Check(f"B.gaussian.float64.r{r}.{'-'.join(map(str, spec))}", f"{SRC}, C.2.1, B.2",
                         f"spectrum {spec}: LN loss (absolute) and L'(gamma) at gamma in {GAMMAS}, kappa3, "
                         "kappa4, Upsilon_3 (relative) by the Gaussian route equal the Dirichlet (r = 2: theta) rule",
                         "pass" if err < (2e-14 if r == 2 else 5e-15) else "fail", err, digits_of(err),
                         {"note": "r = 2: the 200-node theta rule's floor ~6e-15"}))
    # 2. at dps against the Dirichlet rule
    spec, dps = ((4, 3, 2, 1), 20) if quick else ((4, 3, 2, 1), 30)
    with mpmath.workdps(dps + 5):
        gs = [mpmath.mpf(g) for g in GAMMAS[:3]]
        err = max_error(route_statistics(spec, gs, dps), rule_statistics(mb.exact_rule(spec, dps), gs), len(gs))
    out.append(Check(f"B.gaussian.dps{dps}.r4", f"{SRC}, C.2.1",
                     f"dps {dps}, spectrum {spec}: the Gaussian route equals the Dirichlet rule at gamma in "
                     f"{GAMMAS[:3]} (LN loss, L'(gamma), kappa3, kappa4, Upsilon_3)",
                     "pass" if err < 10.0 ** (2 - dps) else "fail", err, digits_of(err)))
    # 3. looped model, r = 2, against the 2F1 closed form
    with mpmath.workdps(30):
        rhos = [mpmath.mpf(x) for x in RHOS]
        got = looped_statistics_route((3, 1, 1, 1), 3, rhos, 25)
        rule = mb.exact_rule((3, 1, 1, 1), 25)
        ref = []
        for rho in rhos:
            ref += list(mb.looped_two_level_hyp2f1(rho, 3, 3, 1, 1, 4))
        ref.append(mb.upsilon1_two_level(rule, 3))
        err = max_rel(got, ref)
    out.append(Check("B.gaussian.looped.r2_2F1_dps25", f"{SRC}, Thm 4.7 setting",
                     "looped L = 3, spectrum (3,1,1,1), dps 25: Dist^2, its rho-derivative at rho in "
                     f"{RHOS} and Upsilon_1 by the Gaussian route equal the 2F1 closed form",
                     "pass" if err < 1e-23 else "fail", err, digits_of(err)))
    # 4. a-posteriori estimate against the actual error (route at dps vs dps + 20)
    spec, dps = D16, 12
    with mpmath.workdps(dps + 30):
        g = mpmath.mpf("0.5")
        lo = GaussianRoute(spec, dps)
        hi = GaussianRoute(spec, dps + 20)
        a, b = lo.ln_means(g), hi.ln_means(g)
        err = max_rel(a, b)
    out.append(Check("B.gaussian.estimate_bounds_error", f"{SRC}, C.2.1",
                     f"spectrum D16 at gamma = 1/2: the route at dps {dps} is within its tolerance "
                     f"{lo.grid.tol:.0e} of the route at dps {dps + 20}; the largest a-posteriori estimate "
                     f"was {lo.worst_estimate:.1e}",
                     "pass" if err <= lo.grid.tol and lo.worst_estimate <= lo.grid.tol else "fail",
                     err, digits_of(err), {"worst_relative_estimate": lo.worst_estimate}))
    # 5. QMC within 4 SE where no other exact route exists
    for spec in ((D16, D64) if not quick else (D16,)):
        r = len(set(spec))
        vals = route_statistics(spec, GAMMAS[:3])
        z = qmc_z_scores(spec, GAMMAS[:3], vals, points=4096 if quick else 16384)
        out.append(Check(f"B.gaussian.qmc.r{r}.d{len(spec)}", f"{SRC}, C.2.1",
                         f"Task 2, d = {len(spec)}, r = {r}: LN loss, L'(gamma) at gamma in {GAMMAS[:3]}, kappa3, "
                         "kappa4, Upsilon_3 by the Gaussian route within 4 SE of randomised QMC (16 replicas)",
                         "pass" if max(z) < 4 else "fail", None, None, {"max_z": max(z), "z": z}))
    rule_cache = {}
    for spec, L in (((4, 3, 2, 1), 3), ((5, 4, 3, 2, 2, 1, 1, 1), 10)):
        vals = looped_statistics_route(spec, L, RHOS)
        rules = rule_cache.setdefault(spec, _sobol_spectrum_rules(spec, 16, 4096 if quick else 16384, 5))
        per = np.array([[float(x) for x in looped_statistics_rule(r, L, RHOS)] for r in rules])
        mean, se = per.mean(axis=0), per.std(axis=0, ddof=1) / 4
        z = [float(abs(v - m) / s) if s > 0 else 0.0 for v, m, s in zip(vals, mean, se)]
        r = len(set(spec))
        out.append(Check(f"B.gaussian.looped.qmc.r{r}.L{L}", f"{SRC}, Thm 4.7 setting",
                         f"looped L = {L}, spectrum {spec}: Dist^2, its derivative at rho in {RHOS} and "
                         "Upsilon_1 by the Gaussian route within 4 SE of randomised QMC",
                         "pass" if max(z) < 4 else "fail", None, None, {"max_z": max(z), "z": z}))
    if not quick:
        out += full_checks()
    return out


def full_checks() -> list[Check]:
    """The slow part: the Cartesian tanh-sinh route and the d = 16 and looped trajectories."""
    from rdyn.verification.references.dirichlet_b import gamma_route

    out = []
    for spec in (D16, (7, 5, 4, 3, 2, 1)):
        r = len(set(spec))
        got = GaussianRoute(spec, None).ln_means(0.5)
        ref = gamma_route(spec, 0.5, 20)
        err = max_error(got, ref, 1)
        out.append(Check(f"B.gaussian.tanh_sinh.r{r}.d{len(spec)}", f"{SRC}, C.2.1",
                         f"spectrum {spec}: LN loss and L'(1/2) by the Gaussian route equal the Cartesian "
                         "2-D tanh-sinh route at 20 digits", "pass" if err < 1e-13 else "fail", err, digits_of(err)))
    for name, cfg in trajectory_cases():
        f64 = mb.run(cfg)
        hi = mb.run(replace(cfg, dps=25))
        err = max(max_rel([f64.alpha[-1], f64.beta[-1], f64.gamma[-1]], [hi.alpha[-1], hi.beta[-1], hi.gamma[-1]]),
                  float(abs(mpmath.mpf(f64.loss[-1]) - hi.loss[-1])))
        q = mb.run(replace(cfg, expectation="qmc", samples=2 ** 18))
        z = {k: abs(float(getattr(f64, k)[-1]) - float(getattr(q, k)[-1])) / q.std_error[k]
             for k in ("alpha", "beta", "gamma", "loss")}
        out.append(Check(f"B.gaussian.trajectory.{name}", f"{SRC}, rdyn's exact Gaussian route",
                         f"{name}, {cfg.steps} steps: exact float64 equals exact dps 25 to 1e-13 (alpha, beta, "
                         "gamma relative; loss absolute) and QMC (2^18 points, 16 replicas) within 4 SE",
                         "pass" if err < 1e-13 and max(z.values()) < 4 else "fail", err, digits_of(err),
                         {"z": z}))
    return out


def trajectory_cases():
    return [("ln.d16", mb.Config(model="ln", data="spectrum", d=16, n=sum(D16), spectrum=D16, steps=50)),
            ("looped.L3.4-3-2-1", mb.Config(model="looped", data="spectrum", d=4, n=10,
                                            spectrum=(4, 3, 2, 1), L=3, steps=50))]
