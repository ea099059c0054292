"""Many Model A configurations iterated at once in float64 (numba ``prange`` over blocks).

Configurations that share an activation and a logit scale share one generated ``step`` (and
``attention``, ``c1_star``): the batch kernel compiles them once. The state is kept as
structure of arrays and advanced in blocks of configurations (:func:`block_size`), one inner
loop over the block per step, blocks in parallel; each configuration has its own parameter
tuple ``c = prepare(D, K, eta, ...)`` (a column of a (size, n) array). Per configuration the
arithmetic is exactly that of :func:`rdyn.reduced_dynamics.model_a.dynamics.run` (same generated functions,
same order of operations, no fastmath, C-library exp/atan), so the rows equal single runs bit
for bit; the events use the same definitions:

  t1 = min{t >= 1 : C1(t) >= t1_fraction * C1*(t)},  T* = min{t >= 0 : p(t) >= 1/(2K)}.

``fast=True`` evaluates the same generated source with the branch-free exp/atan of
:func:`~rdyn.reduced_dynamics.model_a.kernels.fast_math_namespace` (and FMA contraction), so LLVM
vectorises the loop over a block (AVX2: 4 configurations per instruction); rows then agree
with single runs to a relative 1e-12 or better instead of bit for bit (measured: README,
"Numerical bars"; tested in tests/reduced_dynamics/model_a/test_batch.py).

Every configuration runs exactly ``steps`` updates (no early stop at 2 T*). The late loss
slope is the least-squares slope of log(loss) against log(t) over the logarithmic capture
grid points with t >= max(T*, steps // 10), as in ``run``.

Checkpoints (``run_batch(checkpoint=..., resume=...)``, format :mod:`rdyn.reduced_dynamics.runs.checkpoint`,
kind "sweep"): per group ``g{j}_`` the arrays C1, C2, C3, events (t1, T*), clock (t, capture
cursor, finished) and capture_out; the identity is :func:`checkpoint_identity`. The state is
saved between chunks (the compiled kernel updates state and clock together), so a resumed
sweep gives the rows of an uninterrupted one bit for bit.
"""
from __future__ import annotations

import sys
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from rdyn.reduced_dynamics.runs.checkpoint import CheckpointError
from rdyn.reduced_dynamics.runs.checkpoint import load as load_checkpoint
from rdyn.reduced_dynamics.runs.checkpoint import save as save_checkpoint
from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, Thresholds, attention_crossing
from rdyn.reduced_dynamics.model_a.engine import late_slope, log_grid
from rdyn.reduced_dynamics.runs.divergence import is_diverged
from rdyn.reduced_dynamics.runs.sweep_rows import check_batch_rows
from rdyn.reduced_dynamics.model_a.kernels import kernels

ROW_FIELDS = ("D", "K", "eta", "vstar_norm2", "activation", "kappa", "logit_scale",
              "sigma_prime_zero", "steps", "t1", "T_star", "C1", "C2", "C3", "p", "C1_star",
              "loss", "loss_slope", "diverged_at_step", "M")
# M (rows of V*) is set by smooth sweeps only (reduced_dynamics/model_a/smooth_sweep.py); None here


def _row_source(size: int) -> str:
    """``row(a, i)`` for the fast kernel (the float64 kernel reads row i of the (n, size)
    array, a view): column i of the (size, n) array ``a`` as a tuple
    (plain values: no array view to reference-count in the vectorised loop, and loads that
    are contiguous across configurations)."""
    return "def row(a, i):\n    return (%s,)\n" % ", ".join(f"a[{j}, i]" for j in range(size))


def _make_block_advance(step, step_positive, attention, c1_star, row, fastmath=False):
    """The batch kernel: configurations in blocks (structure of arrays), each block advanced by
    an inner loop over its configurations per step (numba ``prange`` over blocks).

    Every configuration sees exactly what :func:`rdyn.reduced_dynamics.model_a.dynamics.run` does: at each
    step t its events are tested at t, the capture grid is recorded at t, then it is updated.
    The tests are skipped at steps where they cannot fire: a block is tested only while one of
    its configurations still waits for t1, or has reached its T* prefilter bound (a bound a
    little below the exact crossing, as in ``run``). Between tests, captures and chunk ends
    the block runs a tight update loop; ``step_positive`` (the C1 > 0 branch alone) is used
    while every C1 of the block is positive, so that loop is branch-free.
    """
    import numba

    def check_events(C1, C2, C3, cs, lo, hi, t, events, settings, watch):
        """Events at step t for configurations lo..hi-1 (definitions as in ``run``); returns
        True while one of them still waits for t1."""
        waiting = False
        for i in range(lo, hi):
            if events[i, 0] < 0:
                if t >= 1 and C1[i] >= settings[0, i] * c1_star(C2[i], C3[i], row(cs, i)):
                    events[i, 0] = t
                else:
                    waiting = True
            if (events[i, 1] < 0 and C2[i] + C3[i] >= settings[2, i]
                    and attention(C2[i], C3[i], row(cs, i)) >= settings[1, i]):
                events[i, 1] = t
                watch[i] = np.inf
        return waiting

    def run_block(C1, C2, C3, cs, lo, hi, watch, span, positive):
        """Up to ``span`` updates of configurations lo..hi-1, stopping early after an update
        that brings some C2 + C3 to its ``watch`` bound. Returns (updates made, that bound was
        reached, every C1 > 0)."""
        for s in range(span):
            near = False
            now_positive = True
            if positive:
                for j in range(hi - lo):
                    i = numba.uint64(lo) + numba.uint64(j)  # unsigned: no wraparound test
                    a, b, d = step_positive(C1[i], C2[i], C3[i], row(cs, i))
                    C1[i] = a
                    C2[i] = b
                    C3[i] = d
                    near |= b + d >= watch[i]
                    now_positive &= a > 0
            else:
                for j in range(hi - lo):
                    i = numba.uint64(lo) + numba.uint64(j)
                    a, b, d = step(C1[i], C2[i], C3[i], row(cs, i))
                    C1[i] = a
                    C2[i] = b
                    C3[i] = d
                    near |= b + d >= watch[i]
                    now_positive &= a > 0
            positive = now_positive
            if near:
                return s + 1, True, positive
        return span, False, positive

    jit = numba.njit(error_model="numpy")
    check_events = jit(check_events)
    run_block = numba.njit(error_model="numpy", fastmath=fastmath)(run_block)

    def advance(C1, C2, C3, cs, settings, events, clock, n, end, capture_steps, capture_out,
                block):
        """Advance every configuration by up to n steps from the common step t = clock[0],
        never past ``end`` (n rounds of: events at t, capture at t, update unless t = end).
        settings[:, i] = (t1_fraction, tstar_attention, prefilter); events[i] = (t1, T*), -1
        for "not yet"; clock[1] indexes ``capture_steps``. clock is updated here, in compiled
        code, so state and clock agree whenever Python (and a Ctrl-C) can see them."""
        t = clock[0]
        cursor = clock[1]
        count = C1.shape[0]
        blocks = (count + block - 1) // block
        out_t = np.empty(blocks, dtype=np.int64)
        out_cursor = np.empty(blocks, dtype=np.int64)
        watch = np.empty(count)  # the prefilter bound while T* is not found, then +inf
        for b in numba.prange(blocks):
            lo = b * block
            hi = min(lo + block, count)
            positive = True
            for i in range(lo, hi):
                watch[i] = settings[2, i] if events[i, 1] < 0 else np.inf
                positive &= C1[i] > 0
            tt = t
            cur = cursor
            rounds = 0
            check = True  # the state we start from has not been tested yet
            waiting = True
            while rounds < n:
                if check:
                    waiting = check_events(C1, C2, C3, cs, lo, hi, tt, events, settings, watch)
                while cur < capture_steps.shape[0] and capture_steps[cur] == tt:
                    for i in range(lo, hi):
                        capture_out[i, cur, 0] = C1[i]
                        capture_out[i, cur, 1] = C2[i]
                        capture_out[i, cur, 2] = C3[i]
                    cur += 1
                if tt >= end:
                    break
                span = min(n - rounds, end - tt)
                if cur < capture_steps.shape[0]:
                    span = min(span, capture_steps[cur] - tt)
                if waiting:
                    span = 1
                done, near, positive = run_block(C1, C2, C3, cs, lo, hi, watch, span, positive)
                tt += done
                rounds += done
                check = near or waiting
            out_t[b] = tt
            out_cursor[b] = cur
        clock[0] = out_t[0]
        clock[1] = out_cursor[0]

    return numba.njit(parallel=True, error_model="numpy")(advance)


def batch_module_source(activation: str, scale: str, fast: bool = False) -> str:
    """The module behind :func:`compiled_batch_advance`: the generated kernels
    (:func:`~rdyn.reduced_dynamics.model_a.kernels.batch_kernel_source`), the row reader and the
    functions of :func:`_make_block_advance` at module level, each compiled by
    :func:`rdyn.reduced_dynamics.runs.kernel_cache.njit` with the options ``_make_block_advance`` uses.
    ``fast``: ``F`` is :func:`~rdyn.reduced_dynamics.model_a.kernels.fast_math_namespace` and
    ``step_positive`` is inlined at numba IR level, so its exp/atan polynomials vectorise with
    the loop over configurations, which is compiled with FMA contraction (fastmath "contract"
    only). float64: ``step_positive`` is ``step`` (it would gain nothing on a scalar loop)."""
    from rdyn.reduced_dynamics.runs.kernel_cache import nested_function_source
    from rdyn.reduced_dynamics.model_a.kernels import batch_kernel_source

    jit = '@njit(error_model="numpy")\n'
    body = batch_kernel_source(activation, scale)
    for name in ("step", "attention", "c1_star"):
        body = body.replace(f"\ndef {name}(", f"\n{jit}def {name}(")
    if fast:
        body = body.replace("\ndef step_positive(",
                            '\n@njit(inline="always", error_model="numpy")\ndef step_positive(')
        size = len(kernels(activation, scale, "float64").prepare(3, 1, 0.1, 1.0, 0.1, 1.0))
        row = _row_source(size)
    else:
        body += "\nstep_positive = step\n"
        row = "def row(a, i):\n    return a[i]\n"  # _row_view
    header = ["import numba", "import numpy as np", "",
              "from rdyn.reduced_dynamics.runs.kernel_cache import njit",
              "from rdyn.reduced_dynamics.model_a.kernels import fast_math_namespace\n\n"
              "F = fast_math_namespace()" if fast else "import math as F", "", "R = float", ""]
    fastmath = {"contract"} if fast else False
    parts = ["\n".join(header), body, jit + row,
             jit + nested_function_source(_make_block_advance, "check_events"),
             f'@njit(error_model="numpy", fastmath={fastmath!r})\n'
             + nested_function_source(_make_block_advance, "run_block"),
             '@njit(parallel=True, error_model="numpy")\n'
             + nested_function_source(_make_block_advance, "advance")]
    return "\n\n".join(parts)


@lru_cache(maxsize=None)
def compiled_batch_advance(activation: str, scale: str, fast: bool = False):
    """The batch kernel for one activation / logit scale, compiled by numba once and cached
    on disk (:mod:`rdyn.reduced_dynamics.runs.kernel_cache`; :func:`batch_module_source`).
    ``fast``: the generated kernels with vectorisable exp/atan (not bit-identical)."""
    from rdyn.reduced_dynamics.runs import kernel_cache

    kind = "batch_fast" if fast else "batch"
    source = kernel_cache.cached_source(kind, (activation, scale),
                                        lambda: batch_module_source(activation, scale, fast))
    label = ("fast" if fast else "float64") + " batch kernel"
    advance = kernel_cache.load_module(kind, source, label).advance
    return _interleaved(advance) if fast else advance


FAST_INTERLEAVE = 2


def _interleaved(advance):
    """``advance``, compiled with LLVM's loop vectoriser
    told to interleave ``FAST_INTERLEAVE`` vectors per iteration (``-force-vector-interleave``;
    LLVM's cost model picks 1 here). One fast step is a long dependency chain (exp, then atan,
    then the step's division) that fills the reorder buffer within one AVX2 iteration, so
    two independent 4-lane chains per iteration overlap where one leaves the FP units idle
    (measured: +35% on one Zen1 core). Lanes are independent, so this changes no result bit.
    The option is global to LLVM: it is set only during calls of this kernel and reset
    afterwards (0: the cost model decides)."""
    import llvmlite.binding as llvm

    def call(*args):
        # a call compiles (numba: at the first call with new argument types); set the option
        # around every call, so whichever call compiles sees it (it costs microseconds)
        llvm.set_option("", f"-force-vector-interleave={FAST_INTERLEAVE}")
        try:
            return advance(*args)
        finally:
            llvm.set_option("", "-force-vector-interleave=0")

    call.dispatcher = advance
    return call


@dataclass
class BatchResult:
    rows: list[dict]
    steps: int


@dataclass
class GroupState:
    """The complete loop state of one group (configurations sharing activation and logit
    scale), structure of arrays: everything a checkpoint needs besides the configurations."""

    C1: np.ndarray
    C2: np.ndarray
    C3: np.ndarray
    events: np.ndarray        # (n, 2) int64: t1, T*; -1 = not yet
    clock: np.ndarray         # (t, capture cursor, finished)
    capture_out: np.ndarray   # (n, len(capture_steps), 3)

    FIELDS = ("C1", "C2", "C3", "events", "clock", "capture_out")

    @classmethod
    def fresh(cls, n: int, captures: int) -> "GroupState":
        return cls(_aligned_zeros(n), _aligned_zeros(n), _aligned_zeros(n),
                   np.full((n, 2), -1, dtype=np.int64), np.zeros(3, dtype=np.int64),
                   np.full((n, captures, 3), np.nan))

    def arrays(self, prefix: str) -> dict:
        return {f"{prefix}{name}": getattr(self, name) for name in self.FIELDS}

    @classmethod
    def from_arrays(cls, arrays: dict, prefix: str, n: int, captures: int) -> "GroupState":
        want = cls.fresh(n, captures)
        values = {}
        for name in cls.FIELDS:
            got = arrays.get(f"{prefix}{name}")
            ref = getattr(want, name)
            if got is None or got.shape != ref.shape or got.dtype != ref.dtype:
                raise CheckpointError(f"checkpoint array {prefix}{name} is missing or malformed")
            values[name] = np.array(got)
            if name in ("C1", "C2", "C3"):
                values[name] = _aligned_zeros(n)
                values[name][:] = got
        return cls(**values)


def _aligned_zeros(n: int) -> np.ndarray:
    """float64 zeros starting on a 64-byte cache line: with blocks of a multiple of 8
    configurations, two threads never write to the same cache line (no false sharing)."""
    buffer = np.zeros(n + 8)
    skip = (-buffer.ctypes.data % 64) // 8
    return buffer[skip:skip + n]


def _parameters(configs, thresholds, k, fast=False):
    """Per-configuration parameter tuples (``prepare``; an (n, size) array, or (size, n) for
    the fast kernel) and event settings (t1_fraction, tstar_attention, prefilter; (3, n))."""
    cs = np.array([k.prepare(c.D, c.K, c.step_size, c.vstar_norm2, c.kappa, c.sigma_prime_zero)
                   for c in configs], dtype=np.float64)
    settings = np.empty((len(configs), 3))
    for i, c in enumerate(configs):
        level = thresholds.attention(c.K)
        prefilter = attention_crossing(c, level)
        settings[i] = (thresholds.t1_fraction, level, prefilter - 1e-6 * (abs(prefilter) + 1))
    return np.ascontiguousarray(cs.T) if fast else cs, np.ascontiguousarray(settings.T)


def block_size(n: int, block: int | None) -> int:
    """Configurations per block: ``block``, or by default up to 64 (a block's arrays stay in
    L1) and small enough that every numba thread gets a block; a multiple of 8 (a 64-byte
    cache line of float64: see :func:`_aligned_zeros`)."""
    if block is not None:
        return max(1, block)
    import numba

    share = -(-n // max(numba.get_num_threads(), 1))
    return max(8, min(64, -(-share // 8) * 8))


class _SweepEngine:
    """The groups of a sweep as one engine of :mod:`rdyn.reduced_dynamics.runs.driver` (state: the
    list of :class:`GroupState`). A chunk advances the first unfinished group by at most ``n``
    steps (never past ``steps``); a group at ``steps`` makes the final step's events and
    capture in one more chunk (``run`` makes the same extra pass without stepping) and is then
    finished. Position: configuration-steps done."""

    def __init__(self, members, steps, thresholds, capture_steps, fast, block, write):
        self.members, self.steps, self.thresholds = members, steps, thresholds
        self.capture_steps, self.fast, self.block, self.write = capture_steps, fast, block, write
        self.compiled: dict[int, tuple] = {}

    def _group(self, j: int) -> tuple:
        """(advance, cs, settings, block size) of group j, made on its first chunk."""
        if j not in self.compiled:
            configs = self.members[j]
            first = configs[0]
            advance = compiled_batch_advance(first.activation, first.logit_scale, self.fast)
            k = kernels(first.activation, first.logit_scale, "float64")
            cs, settings = _parameters(configs, self.thresholds, k, self.fast)
            self.compiled[j] = (advance, cs, settings, block_size(len(configs), self.block))
        return self.compiled[j]

    def advance(self, states, n: int):
        j = next(j for j, s in enumerate(states) if s.clock[2] == 0)
        state = states[j]
        advance, cs, settings, size = self._group(j)
        clock = state.clock
        final = clock[0] >= self.steps
        advance(state.C1, state.C2, state.C3, cs, settings, state.events, clock,
                1 if final else min(n, self.steps - int(clock[0])), self.steps,
                self.capture_steps, state.capture_out, size)
        if final:
            clock[2] = 1
        return states

    def done(self, states) -> bool:
        return all(s.clock[2] != 0 for s in states)

    def position(self, states) -> int:
        return sum(int(s.clock[0]) * len(g) for s, g in zip(states, self.members))

    def save(self, path: str, states) -> int:
        self.write()
        return self.position(states)


def _rows(configs, state: GroupState, steps, capture_steps):
    """The result rows of a finished group (a diverged configuration's overflow is reported
    in its row, never as a numpy warning)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return _group_rows(configs, state, steps, capture_steps)


def _group_rows(configs, state: GroupState, steps, capture_steps):
    k = kernels(configs[0].activation, configs[0].logit_scale, "float64")
    cs, _ = _parameters(configs, Thresholds(), k)
    rows = []
    for i, cfg in enumerate(configs):
        c = tuple(cs[i])
        C1, C2, C3 = state.C1[i], state.C2[i], state.C3[i]
        T_star = int(state.events[i, 1]) if state.events[i, 1] >= 0 else None
        curve = [(int(s), float(k.loss(*state.capture_out[i, j], c)))
                 for j, s in enumerate(capture_steps)]
        rows.append({
            "D": cfg.D, "K": cfg.K, "eta": cfg.step_size, "vstar_norm2": cfg.vstar_norm2,
            "activation": cfg.activation,
            "kappa": cfg.kappa if cfg.activation == "leaky" else None,
            "logit_scale": cfg.logit_scale, "sigma_prime_zero": cfg.sigma_prime_zero,
            "steps": int(state.clock[0]),
            "t1": int(state.events[i, 0]) if state.events[i, 0] >= 0 else None, "T_star": T_star,
            "C1": float(C1), "C2": float(C2), "C3": float(C3),
            "p": float(k.attention(C2, C3, c)), "C1_star": float(k.c1_star(C2, C3, c)),
            "loss": float(k.loss(C1, C2, C3, c)),
            "loss_slope": late_slope(curve, T_star, steps),
            "diverged_at_step": None, "M": None,
        })
        if is_diverged((C1, C2, C3)):
            rows[-1].update(_diverged_row(cfg, steps))
    return rows


def _diverged_row(cfg: TeacherConfig, steps: int) -> dict:
    """The columns of a configuration whose state diverged (divergence.py), from the single
    run of that configuration (bit-identical to the batch up to the divergence; it stops at
    the step before): no t1, T* or slope, the last finite state."""
    from rdyn.reduced_dynamics.model_a.dynamics import run

    r = run(cfg, steps=steps)
    f = r.final
    return {"steps": r.steps, "t1": None, "T_star": None, "C1": float(f.C1), "C2": float(f.C2),
            "C3": float(f.C3), "p": float(f.p), "C1_star": float(f.C1_star),
            "loss": float(f.loss), "loss_slope": None, "diverged_at_step": r.diverged_at_step}


def checkpoint_identity(configs: Sequence[TeacherConfig], steps: int, thresholds: Thresholds,
                        fast: bool) -> dict:
    """Everything that determines a sweep's rows (a resume must match it exactly)."""
    return {"configs": [asdict(c) for c in configs], "steps": steps,
            "t1_fraction": thresholds.t1_fraction,
            "tstar_attention": thresholds.tstar_attention, "fast": bool(fast)}


def run_batch(configs: Sequence[TeacherConfig], steps: int,
              thresholds: Thresholds = Thresholds(), progress: bool = False,
              chunk: int | None = None, fast: bool = False, block: int | None = None,
              checkpoint: str | None = None, checkpoint_every: float = 60.0,
              resume: str | None = None) -> BatchResult:
    """Iterate every configuration ``steps`` updates; one row (dict, ``ROW_FIELDS``) each,
    in the order given.

    ``fast``: vectorisable exp/atan (rows agree with single runs to a stated relative
    tolerance, not bit for bit; module docstring). ``block``: configurations per inner loop
    (default: :func:`block_size`). ``checkpoint``: file to save the complete state to every
    ``checkpoint_every`` seconds (between chunks), at the end, and on Ctrl-C (then
    :class:`~rdyn.reduced_dynamics.runs.checkpoint.Interrupted` is raised). ``resume``: a checkpoint of
    the same configurations and options to continue from
    (:class:`~rdyn.reduced_dynamics.runs.checkpoint.CheckpointError` otherwise); the rows then equal
    those of an uninterrupted run bit for bit. Neither chunk nor block size nor the thread
    count changes the rows.
    """
    if not (0 <= steps <= 10**9):
        raise ValueError("steps must be in 0..1e9")
    configs = list(configs)
    capture_steps = log_grid(steps).astype(np.int64)
    capture_steps = capture_steps[capture_steps <= steps]
    if chunk is None:  # a progress update about every 10^7 configuration-steps
        chunk = max(1000, 10**7 // max(len(configs), 1))
    groups: dict[tuple, list[int]] = {}
    for i, c in enumerate(configs):
        groups.setdefault((c.activation, c.logit_scale), []).append(i)
    members = [[configs[i] for i in indices] for indices in groups.values()]
    identity = checkpoint_identity(configs, steps, thresholds, fast)
    if resume is not None:
        arrays, _ = load_checkpoint(str(resume), "sweep", identity)
        states = [GroupState.from_arrays(arrays, f"g{j}_", len(group), len(capture_steps))
                  for j, group in enumerate(members)]
        for group, indices, state in zip(members, groups.values(), states):
            check_batch_rows(resume, group, indices, state, steps, capture_steps)
    else:
        states = [GroupState.fresh(len(group), len(capture_steps)) for group in members]

    def done() -> int:
        return sum(int(s.clock[0]) * len(g) for s, g in zip(states, members))

    def save() -> None:
        arrays = {}
        for j, state in enumerate(states):
            arrays.update(state.arrays(f"g{j}_"))
        save_checkpoint(str(checkpoint), "sweep", identity, arrays,
                        {"configuration_steps": done(),
                         "finished_groups": [int(s.clock[2]) for s in states]})

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=steps * len(configs), initial=done(), unit="cfg-step",
                   unit_scale=True, file=sys.stderr, desc="rdyn sweep")
    from rdyn.reduced_dynamics.runs.driver import drive

    engine = _SweepEngine(members, steps, thresholds, capture_steps, fast, block, save)
    drive(engine, states, chunk=chunk, checkpoint=None if checkpoint is None else str(checkpoint),
          checkpoint_every=checkpoint_every, bar=bar)
    rows: list = [None] * len(configs)
    for indices, group, state in zip(groups.values(), members, states):
        for i, row in zip(indices, _rows(group, state, steps, capture_steps)):
            rows[i] = row
    return BatchResult(rows=rows, steps=steps)


def _rows_task(configs, steps, thresholds):
    return run_batch(configs, steps, thresholds).rows


def run_batch_distributed(configs: Sequence[TeacherConfig], steps: int, address,
                          thresholds: Thresholds = Thresholds(), progress: bool = False,
                          per_task: int | None = None) -> BatchResult:
    """:func:`run_batch` with the configurations split into tasks on a Dask distributed
    scheduler (``address``: a scheduler address string, or a ``Client``), checked by
    :func:`rdyn.reduced_dynamics.runs.dask_client.connect` first (its one-line ``SchedulerError``).
    Each task is an ordinary :func:`run_batch` on a worker (numba-parallel inside), so the
    rows are the same bit for bit; they come back in input order.
    """
    from distributed import as_completed

    from rdyn.reduced_dynamics.runs.dask_client import connect

    configs = list(configs)
    with connect(address, (__name__,)) as client:   # one-line SchedulerError before any task
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
            for future in as_completed(futures, loop=client.loop):
                chunk = futures[future]
                for i, row in zip(chunk, future.result()):
                    rows[i] = row
                if bar is not None:
                    bar.update(steps * len(chunk))
        finally:   # interrupted or failed: nothing keeps running on the cluster
            client.cancel([f for f in futures if not f.done()])
            if bar is not None:
                bar.close()
        return BatchResult(rows=rows, steps=steps)

