"""Benchmark of Model A's collapsed iterators (a script, not a test).

Prints steps/second of the numba float64 path, a plain-Python float64 loop of the same
generated recursion, the arb path at 30 digits and mpmath at 30 digits, with ratios to the
plain loop; the certified (radius-carrying) arb iteration; the batched float64 sweep
kernel; and a default run to T* at D=36, K=4, eta=0.01. Usage: python bench/bench_model_a.py
"""
from __future__ import annotations

import time

from reduced_dynamics.batch import run_batch
from reduced_dynamics.certified import certified_run
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
    # D=20: eta = 0.5 (T* = 163348); D=36: eta_limit = 4K/D = 0.444 < 0.5, so the default
    # eta = eta_limit / 2 is used there instead.
    for D, K, eta in ((20, 4, 0.5), (36, 4, None)):
        cfg = TeacherConfig(D=D, K=K, activation="relu", eta=eta)
        run(cfg, steps=10)  # compile
        certified_run(cfg, steps=10)  # generate the Jacobian code
        rows = {
            "numba float64": rate(lambda n: run(cfg, steps=n), 10**7),
            "plain Python float64": rate(lambda n: plain_loop(cfg, n), 2 * 10**5),
            "arb, --dps 30": rate(lambda n: run(cfg, steps=n, backend="arb", dps=30), 10**5),
            "mpmath, dps 30": rate(lambda n: run(cfg, steps=n, backend="mpmath", dps=30), 10**4),
            "certified arb, dps 30": rate(lambda n: certified_run(cfg, steps=n, dps=30), 2 * 10**4),
        }
        base = rows["plain Python float64"]
        print(f"D={D}, K={K}, ReLU, eta={cfg.step_size:.4g}")
        for name, r in rows.items():
            print(f"  {name:22s} {r:14,.0f} steps/s   {r / base:8.2f} x plain loop")
    configs = [TeacherConfig(D=D, K=K, eta=eta) for D in (20, 36) for K in (2, 4)
               for eta in (0.05, 0.1, 0.15, 0.2)]
    run_batch(configs[:1], 10)  # compile
    start = time.perf_counter()
    run_batch(configs, 10**6)
    print(f"batch float64 (rdyn sweep), {len(configs)} configurations x 10^6 steps: "
          f"{len(configs) * 10**6 / (time.perf_counter() - start):,.0f} configuration-steps/s")
    cfg = TeacherConfig(D=36, K=4, activation="relu", eta=0.01)
    start = time.perf_counter()
    r = run(cfg)
    print(f"default run to T* and beyond at D=36, K=4, eta=0.01: T*={r.T_star}, "
          f"{r.steps} steps in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
