"""Benchmark of Model A with smooth activations (issue 22; a script, not a test).

Prints float64 steps/s of the collapsed map for relu (numba event loop, the reference), for erf
and gelu (compiled closed forms), for tanh, softplus, sigmoid and a formula (compiled
Gauss-Hermite tensor rule, the float64 route since issue 22's speed-up; rule chosen per run),
their ratio to relu, the numpy Gauss-Hermite step of the same rule (the route before; now the
fallback, and the --dps loop's code) with the compiled rule's speed-up over it, the per-run
set-up time (rule choice, eta_limit grid), and the 30-digit steps/s.
Usage: PYTHONPATH=. python bench/bench_activations.py
"""
from __future__ import annotations

import time

from rdyn.derivations.activations import Activation
from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, run as run_homogeneous
from rdyn.reduced_dynamics.model_a.smooth import (Expectations, Numbers, SmoothConfig, choose_rule,
                                                  default_probes, eta_limit)

D, K, M, ETA = 8, 2, 2, 0.2
FORMULA = "x*tanh(x) + x/3"


def relu_rate(steps: int = 5_000_000) -> float:
    cfg = TeacherConfig(D=D, K=K, activation="relu", eta=ETA)
    run_homogeneous(cfg, steps=1000)   # compile
    start = time.perf_counter()
    run_homogeneous(cfg, steps=steps)
    return steps / (time.perf_counter() - start)


def smooth_rates(name: str, formula: str | None = None, steps: int = 3000, dps_steps: int = 40):
    """(nodes, numpy-step steps/s, set-up s, nodes at dps 30, steps/s at dps 30)."""
    cfg = SmoothConfig(D=D, K=K, activation=Activation(name, formula), eta=ETA, M=M)
    start = time.perf_counter()
    n, _ = choose_rule(cfg, None, default_probes(cfg, None, 1 / (2 * K)))
    eta_limit(cfg)
    setup = time.perf_counter() - start
    from rdyn.reduced_dynamics.model_a.gauss_hermite import float64_rule

    ex = Expectations(cfg, Numbers(cfg.activation, None), float64_rule(n))
    state = (0.0, 0.0, 0.0)
    start = time.perf_counter()
    for _ in range(steps):
        state = ex.step(*state, ETA)[:3]
    rate = steps / (time.perf_counter() - start)
    num = Numbers(cfg.activation, 30)
    with num.precision():
        n30, _ = choose_rule(cfg, 30, default_probes(cfg, 30, 1 / (2 * K)))
        ex30 = Expectations(cfg, num, num.rule(n30))
        state = (num.make(0), num.make(0), num.make(0))
        eta = num.make("0.2")
        start = time.perf_counter()
        for _ in range(dps_steps):
            state = tuple(num.strip(v) for v in ex30.step(*state, eta)[:3])
        rate30 = dps_steps / (time.perf_counter() - start)
    return n, rate, setup, n30, rate30


def compiled_rate(name: str, steps: int, formula: str | None = None, nodes: int = 0) -> float:
    """Steps/s of the compiled float64 loop: erf, gelu (closed forms), or the compiled tensor
    rule with ``nodes`` nodes (the others)."""
    import numpy as np

    from rdyn.reduced_dynamics.model_a.compiled import advance_compiled, start_counters
    from rdyn.reduced_dynamics.model_a.smooth import _compiled_loop

    cfg = SmoothConfig(D=D, K=K, activation=Activation(name, formula), eta=ETA, M=M)
    loop = _compiled_loop(cfg, nodes)
    capture = np.array([0, steps], dtype=np.int64)

    def one_run(n):
        out = np.full((2, 3), np.nan)
        advance_compiled(cfg, np.zeros(3), start_counters(n), n + 1, ETA, 0.95, 1 / (2 * K),
                         False, 1000, n, capture, out, loop)

    one_run(10)   # compile
    start = time.perf_counter()
    one_run(steps)
    return steps / (time.perf_counter() - start)


def main() -> None:
    relu = relu_rate()
    print(f"D={D}, K={K}, M={M}, eta={ETA}")
    print(f"relu (numba event loop): {relu:.3g} steps/s")
    erf = compiled_rate("erf", 5_000_000)
    print(f"erf (compiled closed form, the float64 default): {erf:.3g} steps/s, relu / erf = "
          f"{relu / erf:.1f}x")
    gelu = compiled_rate("gelu", 2_000_000)
    print(f"gelu (compiled closed form, the float64 default): {gelu:.3g} steps/s, relu / gelu = "
          f"{relu / gelu:.1f}x")
    print("the compiled Gauss-Hermite tensor rule (the float64 route of the others) against the "
          "numpy step of the same rule (the route before; the fallback):")
    print("activation | nodes | compiled steps/s | relu / it | numpy step steps/s | speed-up | "
          "set-up s | nodes (dps 30) | steps/s (dps 30)")
    for name, formula in (("tanh", None), ("softplus", None), ("sigmoid", None), ("expr", FORMULA)):
        n, rate, setup, n30, rate30 = smooth_rates(name, formula)
        fast = compiled_rate(name, max(int(20 * rate), 20000), formula, n)
        label = name if formula is None else f"expr {FORMULA}"
        print(f"{label} | {n} | {fast:.3g} | {relu / fast:.0f}x | {rate:.3g} | {fast / rate:.1f}x | "
              f"{setup:.2f} | {n30} | {rate30:.3g}")
    print("the numpy Gauss-Hermite step of erf and gelu (their compiled routes are closed forms):")
    for name in ("erf", "gelu"):
        n, rate, setup, n30, rate30 = smooth_rates(name)
        print(f"{name} | {n} | {rate:.3g} | {relu / rate:.0f}x | {setup:.2f} | {n30} | {rate30:.3g}")


if __name__ == "__main__":
    main()
