"""Benchmark of Model A's collapsed iterators (a script, not a test).

Prints steps/second of the numba float64 path, a plain-Python float64 loop of the same
generated recursion, the arb path at 30 digits and mpmath at 30 digits, with ratios to the
plain loop; the certified (radius-carrying) arb and interval64 iterations; the batched float64 sweep
kernel (bit-identical and --fast, 1 and 2 threads, as ratios to the single-configuration
loop and the plain loop); and a default run to T* at D=36, K=4, eta=0.01.
Usage: python bench/bench_model_a.py [--batch-only]
"""
from __future__ import annotations

import time

from rdyn.reduced_dynamics.model_a.batch import run_batch
from rdyn.reduced_dynamics.certified.arb_pass import certified_run
from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, run
from rdyn.reduced_dynamics.model_a.kernels import kernels


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


def timed(fn, work):
    """(work per wall-clock second, work per CPU second of this process): the second is
    the better per-thread figure on a shared machine, the first the one a user sees."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return work / (time.perf_counter() - wall), work / (time.process_time() - cpu)


def libm_exp_atan_rate(n: int = 2 * 10**7) -> float:
    """Evaluations per second of one C-library exp and one atan (what the bit-identical step
    must call), independent arguments: the ceiling of a bit-identical step on one core."""
    import math

    import numba

    @numba.njit
    def loop(n):
        s = 0.0
        for i in range(n):
            s += math.atan(1.3 * math.exp(-1e-9 * i))
        return s

    loop(10)
    return max(timed(lambda: loop(n), n)[1] for _ in range(2))


def batch_rows(steps: int = 10**6, repeat: int = 2) -> None:
    """rdyn sweep's batch kernel (bit-identical default and --fast) at 1 and 2 numba threads,
    against the single-configuration compiled loop and the plain-Python loop, in
    configuration-steps per second (best of ``repeat``)."""
    import numba

    configs = [TeacherConfig(D=D, K=K, eta=eta) for D in (20, 36) for K in (2, 4)
               for eta in (0.05, 0.1, 0.15, 0.2)] * 4  # 64 configurations, one group
    work = len(configs) * steps
    for fast in (False, True):
        run_batch(configs[:1], 10, fast=fast)  # compile
    run(configs[0], steps=10)
    single = max(timed(lambda: [run(c, steps=steps) for c in configs[:4]], 4 * steps)
                 for _ in range(repeat))
    plain = rate(lambda n: plain_loop(configs[0], n), 2 * 10**5)
    rows = {"single-configuration run() loop, 1 thread": single}
    threads = min(2, numba.config.NUMBA_NUM_THREADS)
    for fast in (False, True):
        for n_threads in range(1, threads + 1):
            numba.set_num_threads(n_threads)
            name = f"batch {'--fast' if fast else 'float64 (bit-identical)'}, {n_threads} thread(s)"
            rows[name] = max(timed(lambda: run_batch(configs, steps, fast=fast), work)
                             for _ in range(repeat))
    numba.set_num_threads(threads)
    print(f"rdyn sweep batch kernel, {len(configs)} configurations x {steps:,} steps "
          "(configuration-steps/s: wall clock, per CPU second)")
    for name, (wall, cpu) in rows.items():
        print(f"  {name:44s} {wall:12,.0f} {cpu:12,.0f}   {wall / single[0]:5.2f} x single"
              f"   {wall / plain:6.1f} x plain loop")
    print(f"  {'plain-Python loop of the same step':44s} {plain:12,.0f}")
    print(f"  {'ceiling: C-library exp + atan alone':44s} {'':12s} {libm_exp_atan_rate():12,.0f}"
          "   (per CPU second, one thread)")


def main() -> None:
    # D=20: eta = 0.5 (T* = 163348); D=36: eta_limit = 4K/D = 0.444 < 0.5, so the default
    # eta = eta_limit / 2 is used there instead.
    for D, K, eta in ((20, 4, 0.5), (36, 4, None)):
        cfg = TeacherConfig(D=D, K=K, activation="relu", eta=eta)
        run(cfg, steps=10)  # compile
        run(cfg, steps=10, backend="dd")  # compile (or load) the double-double loop
        certified_run(cfg, steps=10)  # generate the Jacobian code
        certified_run(cfg, steps=10, backend="interval64")  # compile (or load) the interval loop
        rows = {
            "numba float64": rate(lambda n: run(cfg, steps=n), 10**7),
            "plain Python float64": rate(lambda n: plain_loop(cfg, n), 2 * 10**5),
            "dd (double-double)": rate(lambda n: run(cfg, steps=n, backend="dd"), 10**6),
            "arb, --dps 30": rate(lambda n: run(cfg, steps=n, backend="arb", dps=30), 10**5),
            "mpmath, dps 30": rate(lambda n: run(cfg, steps=n, backend="mpmath", dps=30), 10**4),
            "certified arb, dps 30": rate(lambda n: certified_run(cfg, steps=n, dps=30), 2 * 10**4),
            "certified interval64": rate(lambda n: certified_run(cfg, steps=n,
                                                                 backend="interval64"), 10**6),
        }
        base = rows["plain Python float64"]
        print(f"D={D}, K={K}, ReLU, eta={cfg.step_size:.4g}")
        for name, r in rows.items():
            print(f"  {name:22s} {r:14,.0f} steps/s   {r / base:8.2f} x plain loop")
    batch_rows()
    cfg = TeacherConfig(D=36, K=4, activation="relu", eta=0.01)
    start = time.perf_counter()
    r = run(cfg)
    print(f"default run to T* and beyond at D=36, K=4, eta=0.01: T*={r.T_star}, "
          f"{r.steps} steps in {time.perf_counter() - start:.1f} s")


def certified_long_run() -> None:
    """A certified (interval64) run to T* and as far again at D=36, K=4, eta=0.01."""
    cfg = TeacherConfig(D=36, K=4, activation="relu", eta=0.01)
    start = time.perf_counter()
    c = certified_run(cfg, backend="interval64")
    seconds = time.perf_counter() - start
    print(f"certified interval64 run at D=36, K=4, eta=0.01: T*={c.T_star.step} "
          f"(certified: {c.certified}), {c.steps} steps in {seconds:.0f} s "
          f"({c.steps / seconds:,.0f} steps/s), relative radius {c.radius_at_T_star:.3g} at T*, "
          f"{c.radius_final:.3g} at the end")


if __name__ == "__main__":
    import sys

    batch_rows() if "--batch-only" in sys.argv else main()
    certified_long_run()
