"""Benchmark of Model B's float64 exact looped path (a script, not a test).

Times ``rdyn ln --model looped --data spectrum`` steps on a two-level spectrum: the current
float64 path (compiled graded Gauss rule for the Beta boundary layer,
:func:`rdyn.reduced_dynamics.model_b.looped._beta_layer_f64`) against the previous one (mpmath ``hyp2f1``
at 64 bits per step, reproduced below), and prints the ratio measured in this one run, plus the
largest relative difference of the iterates. Also times the exact r-level LN path and the QMC
replicas, and the exact r-level LN path at ``--dps`` (:func:`dps_exact`): per-step cost on mpf
object arrays against gmpy2 mpfr arrays (same rule, same precision), and the error at a fixed
order with and without the exponential map of the stick-breaking coordinates.
:func:`gaussian` (issue 23): the Gaussian route for any number of distinct eigenvalues: 200
steps of the d = 16 example (r = 5) in float64, seconds per step at dps 25 and 50, the looped
model with r = 4 (float64 and dps 25), and the Gaussian route against the Dirichlet rule at
r = 4 (float64 per step), with the float64 vs dps 25 agreement.
Usage: python bench/bench_model_b.py [dps | gaussian]
"""
from __future__ import annotations

import time
from fractions import Fraction

import mpmath
import numpy as np

from rdyn.reduced_dynamics.model_b import run as mb


def previous_looped_two_level(rule, rho, L):
    """The float64 route before issue 14: 2F1 closed form by mpmath at 64 bits."""
    k, d = rule.beta_params
    with mpmath.workprec(64):
        G, dG = mb.looped_two_level_hyp2f1(rho, L, rule.levels[0, 0], rule.levels[0, 1], k, d)
    return float(G), float(dG)


def previous_run(cfg, rule):
    a, b = cfg.alpha0, cfg.beta0
    out = [(a, b)]
    for _ in range(cfg.steps):
        _, dG = previous_looped_two_level(rule, a * b, cfg.L)
        F = dG / cfg.d
        a, b = a - cfg.eta * b * F, b - cfg.eta * a * F
        out.append((a, b))
    return out


def main():
    cfg = mb.Config(model="looped", data="spectrum", d=4, n=6, spectrum=(3, 1, 1, 1), L=10, eta=0.5,
                    steps=2000)
    rule = mb.build_rule(cfg)
    mb.run(mb.Config(**{**cfg.__dict__, "steps": 5}), rule=rule)   # compile / warm caches
    t0 = time.perf_counter()
    new = mb.run(cfg, rule=rule)
    t_new = time.perf_counter() - t0
    old_cfg = mb.Config(**{**cfg.__dict__, "steps": 400})
    t0 = time.perf_counter()
    old = previous_run(old_cfg, rule)
    t_old = (time.perf_counter() - t0) * cfg.steps / old_cfg.steps
    diff = max(max(abs(new.alpha[t] - old[t][0]) / max(abs(old[t][0]), 1e-300),
                   abs(new.beta[t] - old[t][1]) / abs(old[t][1])) for t in range(1, old_cfg.steps + 1))
    print(f"looped L=10, spectrum (3,1,1,1), float64 exact: new {t_new / cfg.steps * 1e6:.1f} us/step, "
          f"previous (mpmath 2F1 at 64 bits) {t_old / cfg.steps * 1e6:.1f} us/step, "
          f"ratio {t_old / t_new:.1f}x; max rel. difference of iterates over 400 steps {diff:.1e}")
    for spec in ((4, 3, 2, 1, 1, 1), (5, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1)):
        c = mb.Config(model="ln", data="spectrum", d=len(spec), n=sum(spec), spectrum=spec, eta=0.1, steps=200)
        t0 = time.perf_counter()
        r = mb.build_rule(c)
        t_rule = time.perf_counter() - t0
        t0 = time.perf_counter()
        mb.run(c, rule=r)
        t_run = time.perf_counter() - t0
        print(f"ln exact, {len(set(spec))} levels d={len(spec)}: {len(r.weights)} nodes, rule {t_rule:.2f} s, "
              f"{t_run / c.steps * 1e3:.2f} ms/step")
    qmc_vs_mc()


def qmc_vs_mc():
    """Standard errors of the final alpha and loss: scrambled Sobol replicas against iid replicas
    of the same construction and the same total number of points (16 replicas each)."""
    from rdyn.reduced_dynamics.model_b.qmc import run_replicas

    cases = (("Task 2 (3,2,1,1)", mb.Config(model="ln", data="spectrum", d=4, n=7, spectrum=(3, 2, 1, 1),
                                            eta=0.5, steps=200, samples=131072)),
             ("Task 1 d=8 n=12", mb.Config(model="ln", data="sphere", d=8, n=12, eta=0.5, steps=200,
                                           samples=32768)))
    for name, cfg in cases:
        se = {}
        for kind in ("qmc", "mc"):
            t0 = time.perf_counter()
            se[kind] = run_replicas(cfg, 16, kind).trajectory.std_error
            se[kind]["time"] = time.perf_counter() - t0
        print(f"{name}, LN, 200 steps, 16 replicas x {cfg.samples // 16} points: "
              + ", ".join(f"SE({k}) qmc {se['qmc'][k]:.2e} / mc {se['mc'][k]:.2e} = 1/{se['mc'][k] / se['qmc'][k]:.1f}"
                          for k in ("alpha", "loss"))
              + f"; time qmc {se['qmc']['time']:.1f} s, mc {se['mc']['time']:.1f} s")


def dps_exact():
    """r = 3 and r = 4 at --dps: mpf vs mpfr per step, mapped vs plain coordinates."""
    from rdyn.reduced_dynamics.model_b.dirichlet_rule import dirichlet_params, dirichlet_rule

    for spec, dps in (((3, 2, 1), 25), ((4, 3, 2, 1), 30)):
        t0 = time.perf_counter()
        rule = mb.exact_rule(spec, dps)
        t_rule = time.perf_counter() - t0
        with mpmath.workdps(dps + 5):
            gs = [mpmath.mpf(k) / 7 for k in range(1, 4)]
            t0 = time.perf_counter()
            fast = [rule.means(mb.ln_terms, g) for g in gs]
            t_fast = (time.perf_counter() - t0) / len(gs)
            t0 = time.perf_counter()
            slow = [[rule.mean(v) for v in mb.ln_terms(rule, g)] for g in gs]
            t_slow = (time.perf_counter() - t0) / len(gs)
            diff = max(abs(x - y) / abs(y) for f, sl in zip(fast, slow) for x, y in zip(f, sl))
        print(f"ln exact at dps {dps}, spectrum {spec}: {len(rule.weights)} nodes, rule {t_rule:.1f} s; "
              f"per step mpf {t_slow:.3f} s, mpfr {t_fast:.3f} s, ratio {t_slow / t_fast:.1f}x "
              f"(rel. difference {float(diff):.1e})")
    lv = mb.distinct_levels((4, 3, 2, 1))
    params = dirichlet_params([k for _, k in lv])
    deltas = [Fraction(1, v * v - 1) for v, _ in lv[:-1]]   # as in model_b.dirichlet_exact_rule
    with mpmath.workdps(50):
        ref = mb.exact_rule((4, 3, 2, 1), 40).means(mb.ln_terms, mpmath.mpf(1))
        for n in (12, 20):
            errs = []
            for ds in (deltas, None):
                masses, weights = dirichlet_rule(params, n, 45, ds)
                rule = mb.SpectralRule(np.array([[mpmath.mpf(v) for v, _ in lv]] * len(weights), dtype=object),
                                       masses, weights, "exact", True)
                got = rule.means(mb.ln_terms, mpmath.mpf(1))
                errs.append(max(abs(x - y) / abs(y) for x, y in zip(got, ref)))
            print(f"spectrum (4,3,2,1), {n}^3 nodes, LN at gamma = 1: error mapped {float(errs[0]):.1e}, "
                  f"plain Gauss-Jacobi {float(errs[1]):.1e}")


D16 = (5, 4, 3, 3, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1)


def gaussian():
    """Issue 23: the Gaussian route (nodes built once, reused at every step)."""
    from dataclasses import replace

    cfg = mb.Config(model="ln", data="spectrum", d=16, n=sum(D16), spectrum=D16, steps=200)
    t = time.perf_counter()
    tr = mb.run(cfg)
    dt = time.perf_counter() - t
    q = tr.extras["quadrature"]
    print(f"ln d=16 {D16} (r=5) float64 exact: 200 steps in {dt:.2f} s ({dt / 200 * 1e3:.1f} ms/step incl. "
          f"grid and constants; {q['nodes']} nodes, max relative estimate {q['max_relative_estimate']:.1e})")
    for dps, steps in ((25, 3), (50, 2)):
        c = replace(cfg, dps=dps, steps=steps)
        t = time.perf_counter()
        hi = mb.run(c)
        dt = time.perf_counter() - t
        print(f"ln d=16 dps {dps}: {dt / (steps + 1):.2f} s per step ({steps} steps + constants; "
              f"{hi.extras['quadrature']['nodes']} nodes)")
    c = replace(cfg, steps=3)
    lo, hi = mb.run(c), mb.run(replace(c, dps=25))
    err = max(abs(mpmath.mpf(getattr(lo, k)[-1]) - getattr(hi, k)[-1]) / abs(getattr(hi, k)[-1])
              for k in ("alpha", "beta", "gamma"))
    print(f"ln d=16, 3 steps: float64 vs dps 25 largest relative difference {float(err):.1e}")
    lc = mb.Config(model="looped", data="spectrum", d=4, n=10, spectrum=(4, 3, 2, 1), L=3, steps=200)
    for dps in (None, 25):
        t = time.perf_counter()
        mb.run(replace(lc, dps=dps))
        dt = time.perf_counter() - t
        print(f"looped L=3 (4,3,2,1) {'float64' if dps is None else 'dps 25'}: 200 steps in {dt:.2f} s "
              f"({dt / 200 * 1e3:.2f} ms/step)")
    lq = replace(lc, expectation="qmc", samples=2 ** 16)
    t = time.perf_counter()
    mb.run(lq)
    dt = time.perf_counter() - t
    print(f"looped L=3 (4,3,2,1) qmc 2^16 points: 200 steps in {dt:.2f} s")
    from rdyn.reduced_dynamics.model_b.gaussian_route import GaussianRoute

    spec = (4, 3, 2, 1)
    rule, route = mb.exact_rule(spec), GaussianRoute(spec, None)
    reps = 50
    t = time.perf_counter()
    for i in range(reps):
        loss_i, dl_i = mb.ln_terms(rule, 0.5 + i)
        rule.mean(loss_i), rule.mean(dl_i)
    t_rule = (time.perf_counter() - t) / reps
    t = time.perf_counter()
    for i in range(reps):
        route.ln_means(0.5 + i)
    t_route = (time.perf_counter() - t) / reps
    print(f"ln (4,3,2,1) float64 per step: Dirichlet rule {t_rule * 1e3:.2f} ms ({rule.nodes} nodes), "
          f"Gaussian route {t_route * 1e3:.2f} ms ({route.nodes} nodes)")


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["dps"]:
        dps_exact()
    elif sys.argv[1:] == ["gaussian"]:
        gaussian()
    else:
        main()
        dps_exact()
