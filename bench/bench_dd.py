"""Benchmark of the double-double backend against arb and mpmath (a script, not a test).

One run measures, at D=20, K=4, ReLU, eta=0.5 (T* = 163348) and at D=128, K=4 (default eta):
steps/s of ``run(..., backend="dd")`` (compiled double-double), the 30-digit arb path and
mpmath at 30 digits (wall clock and per CPU second of this process: the machine is shared),
their ratios, and the largest relative difference of the reported values (C1, C2, C3, p,
C1*, loss) between dd and arb after 10^5 steps.
Usage: PYTHONPATH=. python bench/bench_dd.py
"""
from __future__ import annotations

import time

from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, run


def rates(fn, steps):
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn(steps)
    return steps / (time.perf_counter() - wall), steps / (time.process_time() - cpu), result


def agreement(a, b) -> float:
    keys = ("C1", "C2", "C3", "p", "C1_star", "loss")
    return max(float(abs(getattr(a.final, k) - getattr(b.final, k)) / abs(getattr(b.final, k)))
               for k in keys)


def main() -> None:
    for D, K, eta in ((20, 4, 0.5), (128, 4, None)):
        cfg = TeacherConfig(D=D, K=K, eta=eta)
        run(cfg, steps=10, backend="dd")   # compile (or load the cached kernels)
        rows = {
            "dd (compiled double-double)": rates(lambda n: run(cfg, steps=n, backend="dd"), 10**6),
            "arb, --dps 30": rates(lambda n: run(cfg, steps=n, backend="arb", dps=30), 2 * 10**4),
            "mpmath, dps 30": rates(lambda n: run(cfg, steps=n, backend="mpmath", dps=30), 3000),
        }
        print(f"D={D}, K={K}, ReLU, eta={cfg.step_size:.4g} (steps/s: wall clock, per CPU second)")
        dd_cpu = rows["dd (compiled double-double)"][1]
        for name, (wall, cpu, _) in rows.items():
            print(f"  {name:30s} {wall:12,.0f} {cpu:12,.0f}   dd is {dd_cpu / cpu:7.1f}x faster (CPU)")
        steps = 10**5
        dd = run(cfg, steps=steps, backend="dd")
        arb = run(cfg, steps=steps, backend="arb", dps=30)
        print(f"  after {steps:,} steps: max relative difference dd vs arb(30) = "
              f"{agreement(dd, arb):.2e}; t1 {dd.t1} / {arb.t1}")


if __name__ == "__main__":
    main()
