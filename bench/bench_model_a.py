"""Benchmark of Model A's collapsed iterators (a script, not a test).

Prints steps/second of the numba float64 path, a plain-Python float64 loop of the same
generated recursion, the arb path at 30 digits and mpmath at 30 digits, with ratios to the
plain loop. Usage: python bench/bench_model_a.py
"""
from __future__ import annotations

import time

from reduced_dynamics.model_a import TeacherConfig, run
from reduced_dynamics.model_a_kernels import kernels


def rate(fn, steps):
    start = time.perf_counter()
    fn(steps)
    return steps / (time.perf_counter() - start)


def plain_loop(cfg, steps):
    k = kernels(cfg.activation, cfg.logit_scale, "float64")
    c = k.prepare(cfg.D, cfg.K, cfg.step_size, cfg.vstar_norm2, cfg.kappa, cfg.sigma_prime_zero)
    C1 = C2 = C3 = 0.0
    for _ in range(steps):
        C1, C2, C3 = k.step(C1, C2, C3, c)
    return C1


def main() -> None:
    for D, K in ((20, 4), (36, 4)):
        cfg = TeacherConfig(D=D, K=K, activation="relu", eta=0.5 * 4 * K / D)
        run(cfg, steps=10)  # compile
        rows = {
            "numba float64": rate(lambda n: run(cfg, steps=n), 10**7),
            "plain Python float64": rate(lambda n: plain_loop(cfg, n), 2 * 10**5),
            "arb, --dps 30": rate(lambda n: run(cfg, steps=n, backend="arb", dps=30), 10**5),
            "mpmath, dps 30": rate(lambda n: run(cfg, steps=n, backend="mpmath", dps=30), 10**4),
        }
        base = rows["plain Python float64"]
        print(f"D={D}, K={K}, ReLU, eta={cfg.eta:.4g}")
        for name, r in rows.items():
            print(f"  {name:22s} {r:14,.0f} steps/s   {r / base:8.2f} x plain loop")
    cfg = TeacherConfig(D=36, K=4, activation="relu", eta=0.01)
    start = time.perf_counter()
    r = run(cfg)
    print(f"default run to T* and beyond at D=36, K=4, eta=0.01: T*={r.T_star}, "
          f"{r.steps} steps in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
