"""Cost of one full-matrix population GD step vs one collapsed (C1, C2, C3) step, Model A.

Paper sizes (seed 000, Section 4.1): cnn D=36 K=4, gcn/sts/gslp D=20; M=4, d=8 (crosscheck
defaults). The full step evaluates M*D bivariate Gaussian forms plus the softmax chain rule
(rdyn.verification.references.full_matrix.population); the collapsed step is the numba-compiled float64 map
(rdyn.reduced_dynamics.model_a.dynamics). Run: python bench/bench_crosscheck.py [--repeat N]
"""
from __future__ import annotations

import argparse
import time


from rdyn.reduced_dynamics.model_a.presets import preset_groups
from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, run as run_collapsed
from rdyn.verification.references import full_matrix as fm

SIZES = (("cnn", 36, 4), ("gcn", 20, 3), ("sts", 20, 4), ("gslp", 20, 1))


def full_step_seconds(task, D, K, repeat, M=4, d=8, activation="relu"):
    model = fm.make_model(preset_groups(task, D, K), M=M, d=d, activation=activation)
    config = TeacherConfig(D=D, K=K, activation=activation)
    traj = fm.gradient_descent(model, config.step_size, 20, record=())  # a generic state
    W_V, W_KQ = traj.W_V, traj.W_KQ
    fm.population(model, W_V, W_KQ)
    start = time.perf_counter()
    for _ in range(repeat):
        fm.population(model, W_V, W_KQ)
    return (time.perf_counter() - start) / repeat


def collapsed_step_seconds(D, K, steps=2_000_000, activation="relu"):
    config = TeacherConfig(D=D, K=K, activation=activation)
    run_collapsed(config, steps=10)  # compile
    start = time.perf_counter()
    run_collapsed(config, steps=steps)
    return (time.perf_counter() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=500)
    args = parser.parse_args()
    print(f"{'task':6} {'D':>3} {'K':>2}  full step (us)  collapsed step (us)  ratio")
    for task, D, K in SIZES:
        full = full_step_seconds(task, D, K, args.repeat)
        col = collapsed_step_seconds(D, K)
        print(f"{task:6} {D:3d} {K:2d}  {full * 1e6:14.1f}  {col * 1e6:19.4f}  {full / col:8.0f}")


if __name__ == "__main__":
    main()
