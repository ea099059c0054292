"""Many Model A configurations iterated at once in float64 (numba ``prange``).

Configurations that share an activation and a logit scale share one generated ``step`` (and
``attention``, ``c1_star``): the batch kernel compiles them once and runs a parallel loop
over configurations, each with its own parameter tuple ``c = prepare(D, K, eta, ...)``. Per
configuration the arithmetic is exactly that of :func:`reduced_dynamics.model_a.run` (same
generated functions, same order of operations, no fastmath), so the rows equal single runs
bit for bit; the events use the same definitions:

  t1 = min{t >= 1 : C1(t) >= t1_fraction * C1*(t)},  T* = min{t >= 0 : p(t) >= 1/(2K)}.

Every configuration runs exactly ``steps`` updates (no early stop at 2 T*). The late loss
slope is the least-squares slope of log(loss) against log(t) over the logarithmic capture
grid points with t >= max(T*, steps // 10), as in ``run``.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from reduced_dynamics.model_a import (TeacherConfig, Thresholds, attention_crossing,
                                      late_slope, log_grid)
from reduced_dynamics.model_a_kernels import kernels

ROW_FIELDS = ("D", "K", "eta", "vstar_norm2", "activation", "kappa", "logit_scale",
              "sigma_prime_zero", "steps", "t1", "T_star", "C1", "C2", "C3", "p", "C1_star",
              "loss", "loss_slope")


def _make_batch_advance(step, attention, c1_star):
    import numba

    def advance(states, ts, n, cs, settings, events, capture_steps, capture_out, cursors, end):
        """Advance every configuration i (row of ``states``) by up to n steps, never past
        ``end``. settings[i] = (t1_fraction, tstar_attention, prefilter); events[i] =
        (t1, T*) with -1 for "not yet"."""
        for i in numba.prange(states.shape[0]):
            C1 = states[i, 0]
            C2 = states[i, 1]
            C3 = states[i, 2]
            c = cs[i]
            t = ts[i]
            for _ in range(n):
                if events[i, 0] < 0 and t >= 1 and C1 >= settings[i, 0] * c1_star(C2, C3, c):
                    events[i, 0] = t
                if (events[i, 1] < 0 and C2 + C3 >= settings[i, 2]
                        and attention(C2, C3, c) >= settings[i, 1]):
                    events[i, 1] = t
                while cursors[i] < capture_steps.shape[0] and capture_steps[cursors[i]] == t:
                    capture_out[i, cursors[i], 0] = C1
                    capture_out[i, cursors[i], 1] = C2
                    capture_out[i, cursors[i], 2] = C3
                    cursors[i] += 1
                if t >= end:
                    break
                C1, C2, C3 = step(C1, C2, C3, c)
                t += 1
            states[i, 0] = C1
            states[i, 1] = C2
            states[i, 2] = C3
            ts[i] = t

    return advance


@lru_cache(maxsize=None)
def compiled_batch_advance(activation: str, scale: str):
    """The batch kernel for one activation / logit scale (compiled once per process)."""
    import numba

    k = kernels(activation, scale, "float64")
    jit = numba.njit
    return numba.njit(parallel=True)(
        _make_batch_advance(jit(k.step), jit(k.attention), jit(k.c1_star)))


@dataclass
class BatchResult:
    rows: list[dict]
    steps: int


def _group_rows(configs, steps, thresholds, capture_steps, bar, chunk):
    """Run configurations of one activation/scale; returns rows in input order."""
    first = configs[0]
    advance = compiled_batch_advance(first.activation, first.logit_scale)
    k = kernels(first.activation, first.logit_scale, "float64")
    n = len(configs)
    cs = np.array([k.prepare(c.D, c.K, c.step_size, c.vstar_norm2, c.kappa, c.sigma_prime_zero)
                   for c in configs], dtype=np.float64)
    settings = np.empty((n, 3))
    for i, c in enumerate(configs):
        level = thresholds.attention(c.K)
        prefilter = attention_crossing(c, level)
        settings[i] = (thresholds.t1_fraction, level, prefilter - 1e-6 * (abs(prefilter) + 1))
    states = np.zeros((n, 3))
    ts = np.zeros(n, dtype=np.int64)
    events = np.full((n, 2), -1, dtype=np.int64)
    cursors = np.zeros(n, dtype=np.int64)
    capture_out = np.full((n, capture_steps.shape[0], 3), np.nan)
    done = 0
    while done < steps:
        m = min(chunk, steps - done)
        advance(states, ts, m, cs, settings, events, capture_steps, capture_out, cursors, steps)
        done += m
        if bar is not None:
            bar.update(m * n)
    # the final step's events and capture (run() makes the same extra pass without stepping)
    advance(states, ts, 1, cs, settings, events, capture_steps, capture_out, cursors, steps)
    rows = []
    for i, cfg in enumerate(configs):
        c = tuple(cs[i])
        C1, C2, C3 = states[i]
        T_star = int(events[i, 1]) if events[i, 1] >= 0 else None
        curve = [(int(s), float(k.loss(*capture_out[i, j], c))) for j, s in enumerate(capture_steps)]
        rows.append({
            "D": cfg.D, "K": cfg.K, "eta": cfg.step_size, "vstar_norm2": cfg.vstar_norm2,
            "activation": cfg.activation,
            "kappa": cfg.kappa if cfg.activation == "leaky" else None,
            "logit_scale": cfg.logit_scale, "sigma_prime_zero": cfg.sigma_prime_zero,
            "steps": int(ts[i]),
            "t1": int(events[i, 0]) if events[i, 0] >= 0 else None, "T_star": T_star,
            "C1": float(C1), "C2": float(C2), "C3": float(C3),
            "p": float(k.attention(C2, C3, c)), "C1_star": float(k.c1_star(C2, C3, c)),
            "loss": float(k.loss(C1, C2, C3, c)),
            "loss_slope": late_slope(curve, max(T_star or 0, steps // 10)),
        })
    return rows


def run_batch(configs: Sequence[TeacherConfig], steps: int,
              thresholds: Thresholds = Thresholds(), progress: bool = False,
              chunk: int | None = None) -> BatchResult:
    """Iterate every configuration ``steps`` updates; one row (dict, ``ROW_FIELDS``) each,
    in the order given."""
    if not (0 <= steps <= 10**9):
        raise ValueError("steps must be in 0..1e9")
    configs = list(configs)
    capture_steps = log_grid(steps).astype(np.int64)
    capture_steps = capture_steps[capture_steps <= steps]
    if chunk is None:  # a progress update about every 10^7 configuration-steps
        chunk = max(1000, 10**7 // max(len(configs), 1))
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=steps * len(configs), unit="cfg-step", unit_scale=True,
                   file=sys.stderr, desc="rdyn sweep")
    groups: dict[tuple, list[int]] = {}
    for i, c in enumerate(configs):
        groups.setdefault((c.activation, c.logit_scale), []).append(i)
    rows: list = [None] * len(configs)
    try:
        for indices in groups.values():
            for i, row in zip(indices, _group_rows([configs[i] for i in indices], steps,
                                                   thresholds, capture_steps, bar, chunk)):
                rows[i] = row
    finally:
        if bar is not None:
            bar.close()
    return BatchResult(rows=rows, steps=steps)


def _rows_task(configs, steps, thresholds):
    return run_batch(configs, steps, thresholds).rows


def run_batch_distributed(configs: Sequence[TeacherConfig], steps: int, address,
                          thresholds: Thresholds = Thresholds(), progress: bool = False,
                          per_task: int | None = None) -> BatchResult:
    """:func:`run_batch` with the configurations split into tasks on a Dask distributed
    scheduler (``address``: a scheduler address string, or a ``LocalCluster``/``Client``).
    Each task is an ordinary :func:`run_batch` on a worker (numba-parallel inside), so the
    rows are the same bit for bit; they come back in input order.
    """
    from distributed import Client, as_completed

    configs = list(configs)
    own = not isinstance(address, Client)
    client = Client(address) if own else address
    try:
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        if per_task is None:  # a few tasks per worker, configurations of one kind together
            per_task = max(1, -(-len(configs) // (4 * workers)))
        order = sorted(range(len(configs)),
                       key=lambda i: (configs[i].activation, configs[i].logit_scale))
        chunks = [order[i:i + per_task] for i in range(0, len(order), per_task)]
        futures = {client.submit(_rows_task, [configs[i] for i in chunk], steps, thresholds,
                                 pure=False): chunk for chunk in chunks}
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=steps * len(configs), unit="cfg-step", unit_scale=True,
                       file=sys.stderr, desc="rdyn sweep (dask)")
        rows: list = [None] * len(configs)
        try:
            for future in as_completed(futures):
                chunk = futures[future]
                for i, row in zip(chunk, future.result()):
                    rows[i] = row
                if bar is not None:
                    bar.update(steps * len(chunk))
        finally:
            if bar is not None:
                bar.close()
        return BatchResult(rows=rows, steps=steps)
    finally:
        if own:
            client.close()


def rows_equal_single_run(row: dict, result) -> bool:
    """True when a batch row reproduces a :class:`~reduced_dynamics.model_a.RunResult`."""
    f = result.final
    return (row["t1"] == result.t1 and row["T_star"] == result.T_star
            and all(row[key] == getattr(f, key) for key in ("C1", "C2", "C3", "p", "loss")))

