"""The one loop of every long run: chunks, progress, checkpoints, Ctrl-C / SIGTERM, resume.

A run is an *engine* (what one chunk of steps does) handed to :func:`drive` (everything
around the chunks). The engine is any object with these methods (duck-typed; :class:`Engine`
spells the protocol out):

``advance(state, n) -> state``
    Run one chunk of at most ``n`` steps (the engine says what a step is: an iteration of the
    map, a configuration of a sweep) and return the state: the same object mutated, or a new
    one. Everything specific to the run happens here: events, captured records, divergence
    (the engine stops at the last finite state and reports itself done), fixed points. A chunk
    of compiled code is one call of a compiled kernel, so the driver costs nothing per step.
``done(state) -> bool``
    Whether the run has ended (asked before every chunk: a finished state is not advanced).
``position(state) -> int``
    How far the run is, in the progress bar's units (steps, configuration-steps, rows).
``save(path, state) -> int``
    Write ``state`` as a checkpoint (:func:`rdyn.reduced_dynamics.runs.checkpoint.save`, which
    blocks SIGINT and SIGTERM while the file is written; raises ``CheckpointError``) and
    return the step the file holds (the step of the ``Interrupted`` message).

and optionally

``restore(path) -> state``
    The state saved in a checkpoint (``CheckpointError`` if it does not fit the run):
    ``drive(..., resume=path)`` starts from it.
``snapshot(state) -> state``
    A consistent copy, taken before every chunk, for engines whose ``advance`` changes the
    state in Python code (an interrupt can land in the middle of the chunk): Ctrl-C inside
    ``advance`` saves the snapshot, i.e. the chunk's start. Engines whose state changes only
    inside one compiled call (a signal is delivered after it returns) or that save only their
    consistent part need none.
``total(state) -> int | None``
    The progress bar's total once it is known (the stop step of a default run, set by the
    T* event), else None (the bar keeps the total it was made with).
``final_save(state) -> bool``
    Whether the end of the run is saved (default True; a diverged Model B run keeps the
    last periodic checkpoint).

What :func:`drive` does, the same for every run:

* chunk by chunk until ``done``; after each chunk the progress ``bar`` (tqdm-like:
  ``update(delta)``, ``total``, ``close()``; or :class:`StepLines`) advances by the change of
  ``position`` (at most every ``bar_every`` units, always at the end);
* with a ``checkpoint`` path: a save between chunks when ``checkpoint_every`` seconds have
  passed since the last one (not after the last chunk), and one at the end; a save that
  cannot be written warns on stderr and the run goes on
  (:func:`~rdyn.reduced_dynamics.runs.checkpoint.save_or_warn`);
* KeyboardInterrupt (Ctrl-C, and SIGTERM, which :mod:`rdyn.signals` turns into one): the bar
  is closed; without a checkpoint the interrupt propagates; with one the last consistent
  state is saved (the snapshot if the interrupt landed inside ``advance``) and
  :class:`~rdyn.reduced_dynamics.runs.checkpoint.Interrupted` (step = what ``save`` returned)
  is raised; the CLI turns it into the one-line message with the resume command;
* ``resume``: the state comes from ``engine.restore(resume)``; since a checkpoint holds the
  complete loop state at a chunk boundary, the resumed run is bit-identical to an
  uninterrupted one.

Clients: Model A's runs, homogeneous and smooth alike (the one engine of
:mod:`rdyn.reduced_dynamics.model_a.engine`, :func:`~rdyn.reduced_dynamics.model_a.engine.
drive_run`), the batched float64 sweep
(:func:`rdyn.reduced_dynamics.model_a.batch.run_batch`), the smooth sweep
(:mod:`rdyn.reduced_dynamics.model_a.smooth_sweep`) and Model B (:func:`rdyn.reduced_dynamics.model_b.
iterate.iterate`); the certified passes: :mod:`rdyn.reduced_dynamics.certified.interval_pass` (interval64),
:mod:`rdyn.reduced_dynamics.certified.arb_pass`, rdyn prove's certified iteration
(``verify/proofs/iterate.py``) and Model B's certified training (``verify/proofs/model_b/training.py``). tests/reduced_dynamics/runs/test_driver.py fails if a loop of
its own (``except KeyboardInterrupt``, ``Interrupted(...)``, a timed checkpoint) appears elsewhere.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Protocol

from rdyn.reduced_dynamics.runs.checkpoint import Interrupted, save_or_warn


class Engine(Protocol):
    """The protocol of :func:`drive` (module docstring); the optional methods are
    ``restore``, ``snapshot``, ``total`` and ``final_save``."""

    def advance(self, state: Any, n: int) -> Any: ...

    def done(self, state: Any) -> bool: ...

    def position(self, state: Any) -> int: ...

    def save(self, path: str, state: Any) -> int: ...


class StepLines:
    """A progress "bar" that calls ``callback(p)`` for every multiple ``p`` of ``every``
    that the position passes, up to ``last`` (the lines of ``rdyn ln``: "step 200/400")."""

    def __init__(self, callback: Callable[[int], None], every: int, start: int = 0,
                 last: int | None = None):
        self.callback, self.every, self.at, self.last = callback, every, start, last
        self.total = None

    def update(self, delta: int) -> None:
        new = self.at + delta
        p = (self.at // self.every + 1) * self.every
        while p <= new and (self.last is None or p <= self.last):
            self.callback(p)
            p += self.every
        self.at = new

    def close(self) -> None:
        pass


def drive(engine: Engine, state: Any = None, *, chunk: int, checkpoint: str | None = None,
          checkpoint_every: float = 60.0, resume: str | None = None, bar=None,
          bar_every: int = 0) -> Any:
    """Advance ``state`` (or the state of the checkpoint ``resume``) chunk by chunk of
    ``chunk`` steps until ``engine.done``; returns the final state. Checkpoints, progress
    and interrupts: module docstring."""
    if resume is not None:
        state = engine.restore(resume)
    snapshot = getattr(engine, "snapshot", None)
    total = getattr(engine, "total", None)
    last_save = time.monotonic()
    shown = engine.position(state)
    start = None   # the snapshot of the chunk in progress
    try:
        while not engine.done(state):
            start = None
            if snapshot is not None:
                start = snapshot(state)
            state = engine.advance(state, chunk)
            start = None
            finished = engine.done(state)
            if bar is not None:
                at = engine.position(state)
                if finished or at - shown >= bar_every:
                    known = total(state) if total is not None else None
                    if known is not None:
                        bar.total = known
                    bar.update(at - shown)
                    shown = at
            if finished:
                break
            if checkpoint is not None and time.monotonic() - last_save >= checkpoint_every:
                save_or_warn(lambda: engine.save(checkpoint, state))
                last_save = time.monotonic()
        if checkpoint is not None and getattr(engine, "final_save", lambda s: True)(state):
            save_or_warn(lambda: engine.save(checkpoint, state))
    except KeyboardInterrupt as exc:
        if bar is not None:
            bar.close()
        if checkpoint is None:
            raise
        consistent = start if start is not None else state
        raise Interrupted(int(engine.save(checkpoint, consistent)), checkpoint) from exc
    if bar is not None:
        bar.close()
    return state
