"""Cost per GD step of ``rdyn teacher --dps N`` against N (a script, not a test): the
measurements behind the run-time model of :mod:`rdyn.run_time` (seconds per step =
OVERHEAD + A * N**B). Per step from the difference of an n- and a 3n-step arb run (start-up
and the event bookkeeping cancel), the better of two repetitions, and the model's value.
Usage: python bench/bench_dps_cost.py [ACTIVATION,...] [DPS ...]

``python bench/bench_dps_cost.py smooth [ACTIVATION,...] [DPS ...]``: seconds per step of the
smooth activations' quadrature loop (``Expectations.step`` plus the t1 test) at n = 24 and 48
nodes, per node (erf, gelu) or node^2 (tensor rule), against :func:`rdyn.run_time.
smooth_step_seconds`. ``python bench/bench_dps_cost.py ln [MODEL:SPECTRUM,...] [DPS ...]``:
building the exact rule of ``rdyn ln --dps`` and the cost per step, against
:func:`rdyn.run_time.ln_estimate`.
"""
from __future__ import annotations

import sys
import time

from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, run
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


def smooth(argv) -> None:
    from rdyn.derivations.activations import Activation
    from rdyn.reduced_dynamics.model_a import smooth as ms
    from rdyn.run_time import TENSOR_RULE, smooth_step_seconds

    names = argv[0].split(",") if argv else ["erf", "gelu", "tanh", "softplus", "sigmoid", "expr"]
    levels = [int(x) for x in argv[1:]] or [30, 100, 300]
    for name in names:
        act = Activation(name, "x*tanh(x)" if name == "expr" else None)
        cfg = ms.SmoothConfig(D=8, K=2, activation=act, eta=0.2, M=2)
        for dps in levels:
            num = ms.Numbers(act, dps)
            with num.precision():
                for n in (24, 48):
                    ex = ms.Expectations(cfg, num, num.rule(n))
                    C1, C2, C3, eta = (num.make(x) for x in (0.3, 1.0, 0.5, 0.2))
                    best = float("inf")
                    for _ in range(2):
                        t0 = time.perf_counter()
                        for _ in range(3):
                            ex.step(C1, C2, C3, eta)
                            ex.m2_only(C1, ex.level(num.exp(-(C2 + C3) / ex.scale)))
                        best = min(best, (time.perf_counter() - t0) / 3)
                    units = n * n if name in TENSOR_RULE else n
                    print(f"{name:8s} dps {dps:4d} n {n:3d}: {best * 1e3:8.2f} ms/step measured "
                          f"({best / units * 1e6:.2f} us per {'node^2' if units > n else 'node'}),"
                          f" {smooth_step_seconds(name, n, dps) * 1e3:8.2f} ms/step model",
                          flush=True)


def ln(argv) -> None:
    from dataclasses import replace

    from rdyn.reduced_dynamics.model_b import run as mb
    from rdyn.reduced_dynamics.model_b.iterate import build_rule, iterate
    from rdyn.run_time import ln_estimate

    cases = argv[0].split(",") if argv else ["ln:4-1-1", "ln:4-2-1", "ln:4-3-2-1"]
    levels = [int(x) for x in argv[1:]] or [30, 60]
    for case in cases:
        model, spec = case.split(":")
        spectrum = tuple(int(x) for x in spec.split("-"))
        for dps in levels:
            cfg = mb.Config(model=model, data="spectrum", d=len(spectrum), spectrum=spectrum,
                            dps=dps, eta=0.5, steps=2,
                            target="normalized" if model == "noln" else None)
            t0 = time.perf_counter()
            rule = build_rule(cfg)
            t1 = time.perf_counter()
            iterate(cfg, rule=rule)
            t2 = time.perf_counter()
            iterate(replace(cfg, steps=22), rule=rule)
            t3 = time.perf_counter()
            per = ((t3 - t2) - (t2 - t1)) / 20
            model_build = ln_estimate(model, spectrum, dps, 0, cfg.L)
            print(f"{case:12s} dps {dps:4d}: {rule.nodes} nodes, build {t1 - t0:7.2f} s "
                  f"(model {'-' if model_build is None else f'{model_build.seconds:.2f}'} s), "
                  f"{per * 1e3:8.2f} ms/step", flush=True)


def main(argv) -> None:
    if argv and argv[0] in ("smooth", "ln"):
        return {"smooth": smooth, "ln": ln}[argv[0]](argv[1:])
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
