"""Benchmark of Model A with smooth activations (issues 22, 31; a script, not a test).

For each size (D = 8, K = 2, M = 2 and the paper's CNN size D = 36, K = 4, M = 4; eta = 0.2), in
one run of this script:

* ReLU's float64 steps/s (numba event loop, the reference);
* for erf and GELU (compiled closed forms, their default route) and for tanh, softplus, sigmoid
  and the formula ``x*tanh(x) + x/3`` (tabulated moments, ``reduced_dynamics/model_a/smooth_tables.py``,
  their default route since issue 31): the float64 steps/s of the run's compiled loop (tiles
  already built), ReLU / it, the set-up seconds (node choice, probes, tile widths; then the
  tiles the run builds), the node count and tile widths, and the agreement with the exact rule
  (``route="exact"``: the compiled Gauss-Hermite tensor rule at every step): the largest
  relative difference of the final C1, C2, C3 after ``AGREE_STEPS`` steps, and whether t1, T*
  are equal;
* with ``--whole``: whole-process wall-clock and CPU seconds of ``rdyn teacher ... --steps
  20000000 --quiet`` for each activation against ReLU, and of the same with ``--steps 1000``
  (the fixed cost: start-up, node choice, tables, loading the compiled loop).

The machine is shared: the load average is printed with the numbers; ratios within one run
are what count. Usage: PYTHONPATH=. python bench/bench_activations.py [--whole]
"""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import time

from rdyn.derivations.activations import Activation
from rdyn.reduced_dynamics.model_a import smooth as ms
from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig
from rdyn.reduced_dynamics.model_a.engine import log_grid
from rdyn.reduced_dynamics.model_a.dynamics import run as run_homogeneous

SIZES = ((8, 2, 2), (36, 4, 4))
ETA = 0.2
FORMULA = "x*tanh(x) + x/3"
ACTIVATIONS = (("erf", None), ("gelu", None), ("tanh", None), ("softplus", None),
               ("sigmoid", None), ("expr", FORMULA))
LOOP_STEPS = 2_000_000
AGREE_STEPS = 20_000
WHOLE_STEPS = 20_000_000


def relu_rate(D: int, K: int, steps: int = 5_000_000) -> float:
    cfg = TeacherConfig(D=D, K=K, activation="relu", eta=ETA)
    run_homogeneous(cfg, steps=1000)   # compile / load
    start = time.perf_counter()
    run_homogeneous(cfg, steps=steps)
    return steps / (time.perf_counter() - start)


def closed_form_rate(cfg, steps: int) -> float:
    import numpy as np

    from rdyn.reduced_dynamics.model_a.compiled import advance_compiled, start_counters

    capture = np.array([0, steps], dtype=np.int64)

    def one_run(n):
        out = np.full((2, 3), np.nan)
        advance_compiled(cfg, np.zeros(3), start_counters(n), n + 1, ETA, 0.95,
                         1 / (2 * cfg.K), False, 1000, n, capture, out, None)

    one_run(10)
    start = time.perf_counter()
    one_run(steps)
    return steps / (time.perf_counter() - start)


def table_rate(cfg, steps: int):
    """(steps/s of the table loop with its tiles built, set-up s, tiles-built s, nodes, widths)."""
    from rdyn.reduced_dynamics.runs.smooth_checkpoint import SmoothLoop

    start = time.perf_counter()
    probes = ms.default_probes(cfg, None, 1 / (2 * cfg.K))
    n, _ = ms.choose_rule(cfg, None, probes)
    route = ms.make_table_route(cfg, n, probes)
    setup = time.perf_counter() - start
    grid = set(int(s) for s in log_grid(steps))

    def one_run():
        advance = route.advancer(ETA, 0.95, 1 / (2 * cfg.K), False, 1000, steps, grid)
        loop = SmoothLoop(0, [0.0, 0.0, 0.0], stop_at=steps)
        begin = time.perf_counter()
        while not loop.done:
            advance(loop, steps + 1)
        return time.perf_counter() - begin

    first = one_run()      # builds the tiles the trajectory needs (and loads the loop)
    second = one_run()     # the same steps on the built table
    return steps / second, setup, first - second, n, (route.table.hc, route.table.he)


def agreement(cfg, route: str):
    """(largest relative difference of the final C1, C2, C3, (t1, T*) equal) of ``route``
    against the exact rule after AGREE_STEPS steps."""
    a = ms.run(cfg, AGREE_STEPS, route=route)
    b = ms.run(cfg, AGREE_STEPS, route="exact")
    worst = max(abs(float(getattr(a.final, k)) - float(getattr(b.final, k)))
                / abs(float(getattr(b.final, k))) for k in ("C1", "C2", "C3"))
    return worst, (a.t1, a.T_star) == (b.t1, b.T_star)


def whole_process(argv: list[str]) -> tuple[float, float]:
    """(wall s, CPU s of the child) of ``python -m rdyn`` with ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "rdyn", *argv], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    whole = "--whole" in sys.argv
    print(f"load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())} (2 cores)")
    for D, K, M in SIZES:
        relu = relu_rate(D, K)
        print(f"\nD={D}, K={K}, M={M}, eta={ETA}: relu {relu:.3g} steps/s (numba event loop)")
        print("activation | route | float64 steps/s | relu / it | set-up s | tiles built s | "
              f"nodes | tile widths (C1, e) | max rel. diff. C1,C2,C3 vs exact rule "
              f"({AGREE_STEPS} steps) | t1, T* equal")
        for name, formula in ACTIVATIONS:
            cfg = ms.SmoothConfig(D=D, K=K, activation=Activation(name, formula), eta=ETA, M=M)
            label = name if formula is None else f"expr {formula}"
            if name in ms.COMPILED:
                rate = closed_form_rate(cfg, LOOP_STEPS)
                print(f"{label} | closed form | {rate:.3g} | {relu / rate:.1f}x | - | - | - | - "
                      "| (exact) | -")
            rate, setup, built, n, widths = table_rate(cfg, LOOP_STEPS)
            worst, same = agreement(cfg, "table")
            print(f"{label} | table | {rate:.3g} | {relu / rate:.1f}x | {setup:.2f} | "
                  f"{built:.2f} | {n} | {widths[0]:g}, {widths[1]:g} | {worst:.1e} | {same}")
    if not whole:
        return
    print(f"\nwhole processes (wall s, CPU s), load average "
          f"{' '.join(f'{v:.2f}' for v in os.getloadavg())}:")
    print(f"size | activation | {WHOLE_STEPS:.0e} steps | / relu (wall, CPU) | 1000 steps "
          "(fixed cost) | fixed cost beyond relu (wall, CPU)")
    for D, K, M in SIZES:
        base = ["teacher", "--D", str(D), "--K", str(K), "--eta", str(ETA), "--quiet"]
        relu_long = whole_process(base + ["--activation", "relu", "--steps", str(WHOLE_STEPS)])
        relu_short = whole_process(base + ["--activation", "relu", "--steps", "1000"])
        print(f"D={D} | relu | {relu_long[0]:.2f}, {relu_long[1]:.2f} | 1x | "
              f"{relu_short[0]:.2f}, {relu_short[1]:.2f} | -")
        for name, formula in ACTIVATIONS:
            act = ["--activation", name] + ([] if formula is None else ["--activation-expr", formula])
            args = base + act + ["--M", str(M)]
            long = whole_process(args + ["--steps", str(WHOLE_STEPS)])
            short = whole_process(args + ["--steps", "1000"])
            label = name if formula is None else f"expr {formula}"
            print(f"D={D} | {label} | {long[0]:.2f}, {long[1]:.2f} | {long[0] / relu_long[0]:.1f}x, "
                  f"{long[1] / relu_long[1]:.1f}x | {short[0]:.2f}, {short[1]:.2f} | "
                  f"{short[0] - relu_short[0]:.2f}, {short[1] - relu_short[1]:.2f}")
    print(f"load average at end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
