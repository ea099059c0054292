"""Exact-map T* at large D with the float64 event loop, stopping at T* (a script, not a test).

Runs the compiled loop of :mod:`rdyn.reduced_dynamics.model_a.dynamics` chunk by chunk until p(t) >= 1/(2K)
(the same loop and kernels as ``rdyn teacher``; a default ``rdyn teacher`` run would go on to
2 T*). Prints one JSON line per configuration (D, K, eta, t1, T_star, seconds, steps/s).
Usage: python bench/long_tstar.py D [D ...]   (K = 4, ReLU, default eta = eta_limit/2)
"""
from __future__ import annotations

import json
import sys
import time

import numpy as np

from rdyn.reduced_dynamics.model_a.dynamics import (NO_EVENT, TeacherConfig, Thresholds, attention_crossing,
                                      compiled_advance, eta_limit)
from rdyn.reduced_dynamics.model_a.kernels import kernels


def tstar(D: int, K: int = 4, activation: str = "relu", chunk: int = 50_000_000,
          limit: int = 10**12) -> dict:
    cfg = TeacherConfig(D=D, K=K, activation=activation)
    th = Thresholds()
    eta = cfg.step_size
    advance = compiled_advance(cfg.activation, cfg.logit_scale)
    k = kernels(cfg.activation, cfg.logit_scale, "float64")
    c = np.array(k.prepare(cfg.D, cfg.K, eta, cfg.vstar_norm2, cfg.kappa, cfg.sigma_prime_zero))
    pre = attention_crossing(cfg, th.attention(K))
    pre -= 1e-6 * (abs(pre) + 1)
    settings = np.array([th.t1_fraction, th.attention(K), float(eta >= eta_limit(cfg) * (1 - 1e-9)),
                         0.0, pre])
    state = np.zeros(3)
    events = np.array([NO_EVENT, NO_EVENT, NO_EVENT, limit], dtype=np.int64)
    cursor = np.zeros(1, dtype=np.int64)
    capture_steps = np.zeros(0, dtype=np.int64)
    capture_out = np.zeros((0, 3))
    t = 0
    start = time.perf_counter()
    while events[1] < 0 and t < limit:
        t = advance(state, t, chunk, c, capture_steps, capture_out, cursor, events, settings)
        print(f"D={D}: t={t:.4g} C2+C3={state[1] + state[2]:.6f} (T* at {pre:.6f})",
              file=sys.stderr, flush=True)
    seconds = time.perf_counter() - start
    return {"D": D, "K": K, "activation": activation, "eta": eta, "t1": int(events[0]),
            "T_star": int(events[1]) if events[1] >= 0 else None, "steps_run": int(t),
            "seconds": round(seconds, 1), "steps_per_s": t / seconds}


if __name__ == "__main__":
    for D in [int(a) for a in sys.argv[1:]]:
        print(json.dumps(tstar(D)), flush=True)
