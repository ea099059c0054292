"""The one engine of Model A's collapsed runs, shared by every moment provider.

A Model A run (:mod:`.request`: the homogeneous closed forms of :mod:`.dynamics`; the smooth
closed forms, the tensor rule and the tables of :mod:`.smooth`) is one *chunk* function of its
moment provider, ``chunk(loop, n) -> loop``: advance the loop record by at most ``n`` steps,
with the events (t1, T*, lost_at_step), the captures at the requested steps, the divergence
rule (:mod:`rdyn.reduced_dynamics.runs.divergence`) and the stop step, and set ``loop.done``
when the run has ended. Everything around the chunks is written here, once:

* :func:`capture_steps`: the steps whose states are kept (the log grid, :func:`log_grid`, and
  the record steps);
* :class:`ModelAEngine` / :func:`drive_run`: the engine of :func:`rdyn.reduced_dynamics.runs.
  driver.drive` (chunks, progress, checkpoints, Ctrl-C / SIGTERM, resume) on a loop record
  with ``t``, ``stop_at``, ``done`` and ``copy()`` (``dynamics._Loop``, ``smooth_checkpoint.
  SmoothLoop``), saved by the provider's ``write(path, loop)`` (each family keeps its own
  checkpoint layout, so existing files of both resume);
* :func:`progress_bar`: the bar on stderr;
* :func:`assemble`: the :class:`RunResult` from the captured states: the final state, the
  record, the loss curve, the late-time slope, and nothing computed from a diverged run.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np


@dataclass(frozen=True)
class StateReport:
    """Observables at one step: the state, attention level p, C1*, excess loss."""

    t: int
    C1: object
    C2: object
    C3: object
    p: object
    C1_star: object
    loss: object

    def as_dict(self) -> dict:
        return {"t": self.t, "C1": self.C1, "C2": self.C2, "C3": self.C3, "p": self.p,
                "C1_star": self.C1_star, "loss": self.loss}


@dataclass
class RunResult:
    config: object   # TeacherConfig (model_a.dynamics) or SmoothConfig (model_a.smooth)
    eta: float
    steps: int
    t1: int | None
    T_star: int | None
    lost_at_step: int | None
    eta_limit: float
    final: StateReport
    record: dict[int, StateReport]
    loss_curve: list[tuple[int, object]] = field(default_factory=list)
    loss_slope: float | None = None
    backend: str = "float64"
    # default runs only: the step from which the iterates are a fixed point of the map as
    # evaluated in this backend's arithmetic (the increments round away), before T*; the
    # run stops there, since T* can then never be reached (None otherwise)
    fixed_point_at: int | None = None
    # the first step whose state diverged (reduced_dynamics/runs/divergence.py): the run stops,
    # ``final`` is the state of the step before, t1, T* and loss_slope are None
    diverged_at_step: int | None = None


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------

def log_grid(last: int, per_decade: int = 20) -> np.ndarray:
    """Steps 0, ``last`` and the points round(10^(k/per_decade)) <= ``last`` (k = 0, 1, ...).

    The grid is prefix-stable: the points of ``log_grid(N1)`` below N1 are those of
    ``log_grid(N2)`` below N1 for every N2 >= N1, so a run extended from N1 to N2 steps (resume
    with a larger ``steps``) has captured exactly the points a single N2-step run captures."""
    last = int(last)
    top = int(per_decade * math.log10(max(last, 1))) + 1
    points = np.round(np.logspace(0, top / per_decade, top + 1)).astype(np.int64)
    points = points[points <= last]
    return np.unique(np.concatenate([[0], points, [last]]).astype(np.int64))


def capture_steps(end: int, record: Sequence[int]) -> np.ndarray:
    """The steps a run of at most ``end`` steps captures: :func:`log_grid` of ``end`` and the
    ``record`` steps up to ``end``, sorted, int64."""
    steps = np.unique(np.concatenate([log_grid(end), np.asarray(list(record), dtype=np.int64)]))
    return steps[steps <= end].astype(np.int64)


def late_slope(curve: Sequence[tuple[int, float]], T_star: int | None,
               last: int) -> float | None:
    """Least-squares slope of log(loss) against log(t) over the late window
    [max(T*, last // 10), last] (the paper's Theta(1/T) regime is after T*, Lemma D.16).

    Reported only for a run long enough to have a late time: T* reached, ``last >= 2 T*``
    (the window spans at least a factor 2 in t) and at least 3 positive losses in the window;
    else None (a 10-step run has no late-time slope)."""
    if T_star is None or last < 2 * max(T_star, 1):
        return None
    start = max(T_star, last // 10, 1)
    pts = [(t, float(v)) for t, v in curve if start <= t <= last and float(v) > 0]
    if len(pts) < 3:
        return None
    x = np.log([t for t, _ in pts])
    y = np.log([v for _, v in pts])
    return float(np.polyfit(x, y, 1)[0])


def assemble(result_class, *, config, eta, eta_limit, backend: str, t: int, t1, T_star, lost,
             captured: dict, final_state, record: Sequence[int],
             report: Callable, loss: Callable, diverged_at: int | None = None,
             fixed_point_at: int | None = None, **extra) -> RunResult:
    """The result of a run that ended at step ``t`` in ``final_state``: ``captured`` maps the
    captured steps to their states (C1, C2, C3); ``report(t, state)`` is the provider's
    :class:`StateReport`, ``loss(state)`` its excess loss (the curve: one value per captured
    step). ``record`` steps that were not captured are left out. A diverged run
    (``diverged_at``) reports no t1, T* or slope. ``extra``: fields of ``result_class``."""
    if diverged_at is not None:   # divergence.py: nothing computed from a diverged run
        t1 = T_star = None
    curve = [(int(s), loss(v)) for s, v in sorted(captured.items())]
    rec = {int(s): report(int(s), captured[int(s)]) for s in record if int(s) in captured}
    final = report(int(t), final_state)
    return result_class(config=config, eta=eta, steps=int(t), t1=t1, T_star=T_star,
                        lost_at_step=lost, eta_limit=eta_limit, final=final, record=rec,
                        loss_curve=curve, loss_slope=late_slope(curve, T_star, int(t)),
                        backend=backend, fixed_point_at=fixed_point_at,
                        diverged_at_step=diverged_at, **extra)


# --------------------------------------------------------------------------------------------
# The driver engine
# --------------------------------------------------------------------------------------------

class ModelAEngine:
    """Every Model A run as an engine of :mod:`rdyn.reduced_dynamics.runs.driver`: the
    provider's ``chunk(loop, n) -> loop`` (events, captures, divergence; sets ``loop.done``)
    and ``write(path, loop)`` (its checkpoint); ``budget``: the largest stop step, so the bar's
    total becomes the stop step once T* has set a smaller one."""

    def __init__(self, chunk: Callable, write: Callable | None, budget: int):
        self.chunk, self.write, self.budget = chunk, write, budget

    def advance(self, loop, n: int):
        return self.chunk(loop, n)

    def done(self, loop) -> bool:
        return bool(loop.done)

    def position(self, loop) -> int:
        return int(loop.t)

    def total(self, loop) -> int | None:
        stop = int(loop.stop_at)
        return stop if stop < self.budget else None

    def snapshot(self, loop):
        return loop.copy()

    def save(self, path: str, loop) -> int:
        self.write(path, loop)
        return int(loop.t)


def drive_run(chunk: Callable, write: Callable | None, loop, *, budget: int, size: int,
              checkpoint: str | None = None, checkpoint_every: float = 60.0, bar=None,
              bar_every: int = 0):
    """Advance ``loop`` chunk by chunk of ``size`` steps until it is done (:class:`ModelAEngine`
    on :func:`rdyn.reduced_dynamics.runs.driver.drive`): with a ``checkpoint`` path the loop is
    written at most every ``checkpoint_every`` seconds between chunks, at the end, and on
    KeyboardInterrupt (the last complete chunk boundary; then
    :class:`~rdyn.reduced_dynamics.runs.checkpoint.Interrupted` is raised)."""
    from rdyn.reduced_dynamics.runs.driver import drive

    return drive(ModelAEngine(chunk, write, budget), loop, chunk=size, checkpoint=checkpoint,
                 checkpoint_every=checkpoint_every, bar=bar, bar_every=bar_every)


def progress_bar(show: bool, total: int | None, initial: int = 0, **options):
    """The run's progress bar on stderr (tqdm; ``options``: more tqdm arguments), or None."""
    if not show:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, unit="step", unit_scale=True, file=sys.stderr,
                desc="rdyn teacher", **options)
