"""Cost per GD step of ``rdyn teacher --dps N`` against N (a script, not a test): the
measurements behind the run-time model of :mod:`rdyn.run_time` (seconds per step =
OVERHEAD + A * N**B). Per step from the difference of an n- and a 3n-step arb run (start-up
and the event bookkeeping cancel), the better of two repetitions, and the model's value.
Usage: python bench/bench_dps_cost.py [ACTIVATION,...] [DPS ...]
"""
from __future__ import annotations

import sys
import time

from rdyn.reduced_dynamics.model_a import TeacherConfig, run
from rdyn.run_time import teacher_step_seconds


def per_step(cfg, dps: int, n: int) -> float:
    best = float("inf")
    for _ in range(2):
        t0 = time.perf_counter()
        run(cfg, steps=n, backend="arb", dps=dps)
        t1 = time.perf_counter()
        run(cfg, steps=3 * n, backend="arb", dps=dps)
        t2 = time.perf_counter()
        best = min(best, ((t2 - t1) - (t1 - t0)) / (2 * n))
    return best


def main(argv) -> None:
    activations = argv[0].split(",") if argv else ["relu", "identity", "leaky"]
    levels = [int(x) for x in argv[1:]] or [30, 100, 300, 1000, 2000, 4000]
    for activation in activations:
        cfg = TeacherConfig(D=20, K=4, activation=activation, eta=0.5)
        run(cfg, steps=10, backend="arb", dps=30)  # compile and warm the caches
        for dps in levels:
            n = max(300, 10**6 // dps) if dps < 1000 else 500
            measured = per_step(cfg, dps, n)
            print(f"{activation:8s} dps {dps:5d}: {measured * 1e3:8.4f} ms/step measured, "
                  f"{teacher_step_seconds(dps) * 1e3:8.4f} ms/step model", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
