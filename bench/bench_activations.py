"""Benchmark of Model A with smooth activations (issue 22; a script, not a test).

Prints float64 steps/s of the collapsed map for relu (numba event loop, the reference), for erf
(compiled closed form, the default float64 route) and for erf, tanh, gelu, softplus, sigmoid
on the numpy Gauss-Hermite step (rule chosen per run),
their ratio to relu, the per-run set-up time (rule choice, eta_limit grid), and the 30-digit
steps/s. Usage: python bench/bench_activations.py
"""
from __future__ import annotations

import time

from rdyn.derivations.activations import Activation
from rdyn.reduced_dynamics.model_a import TeacherConfig, run as run_homogeneous
from rdyn.reduced_dynamics.model_a_smooth import (Expectations, Numbers, SmoothConfig, choose_rule,
                                                  default_probes, eta_limit)

D, K, M, ETA = 8, 2, 2, 0.2


def relu_rate(steps: int = 5_000_000) -> float:
    cfg = TeacherConfig(D=D, K=K, activation="relu", eta=ETA)
    run_homogeneous(cfg, steps=1000)   # compile
    start = time.perf_counter()
    run_homogeneous(cfg, steps=steps)
    return steps / (time.perf_counter() - start)


def smooth_rates(name: str, steps: int = 3000, dps_steps: int = 40):
    cfg = SmoothConfig(D=D, K=K, activation=Activation(name), eta=ETA, M=M)
    start = time.perf_counter()
    n, _ = choose_rule(cfg, None, default_probes(cfg, None, 1 / (2 * K)))
    eta_limit(cfg)
    setup = time.perf_counter() - start
    from rdyn.reduced_dynamics.gauss_hermite import float64_rule

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


def compiled_rate(name: str, steps: int) -> float:
    """Steps/s of the compiled float64 loop (erf, gelu: closed forms)."""
    import numpy as np

    from rdyn.reduced_dynamics.model_a_compiled import advance_compiled, start_counters

    cfg = SmoothConfig(D=D, K=K, activation=Activation(name), eta=ETA, M=M)
    capture = np.array([0, steps], dtype=np.int64)

    def one_run(n):
        out = np.full((2, 3), np.nan)
        advance_compiled(cfg, np.zeros(3), start_counters(n), n + 1, ETA, 0.95, 1 / (2 * K),
                         False, 1000, n, capture, out)

    one_run(1000)   # compile
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
    print("the Gauss-Hermite step (numpy; the float64 route of the others, erf's for reports):")
    print("activation | nodes | float64 steps/s | relu / it | set-up s | nodes (dps 30) | steps/s (dps 30)")
    for name in ("erf", "tanh", "gelu", "softplus", "sigmoid"):
        n, rate, setup, n30, rate30 = smooth_rates(name)
        print(f"{name} | {n} | {rate:.3g} | {relu / rate:.0f}x | {setup:.2f} | {n30} | {rate30:.3g}")


if __name__ == "__main__":
    main()
