"""Per-row validity of a sweep checkpoint (``rdyn sweep --resume``; docs/input_rules.md
rule 9).

A sweep row may legitimately hold non-finite numbers: a configuration that diverges (the rule
of :mod:`rdyn.reduced_dynamics.runs.divergence`: a state component non-finite or above
``STATE_BOUND`` = 1e100) keeps an overflowed state in the batch kernel, and its row leaves
``t1``, ``T_star`` and ``loss_slope`` empty. So the check is per row, not per file:

* a row may hold NaN/inf (or a value beyond the bound) only where a diverged row does, and only
  if it is *marked diverged*;
* a row marked diverged must be possible: its configuration really diverges within the steps
  the checkpoint has run (re-run with :func:`rdyn.reduced_dynamics.model_a.dynamics.run`, which stops at
  the divergence step), and its fields outside the empty ones are consistent.

Anything else raises :class:`~rdyn.reduced_dynamics.runs.checkpoint.CheckpointError` with one line
naming the row (counted from 1 in grid order, as the CSV's data lines) and its configuration.

Batch checkpoints (kind "sweep", :mod:`rdyn.reduced_dynamics.model_a.batch`): per configuration the
state (C1, C2, C3), the events (t1, T*) and the captured states at the logarithmic capture
steps. The mark is the state itself: a row is diverged when its state is out of range. Its
captures before the divergence step must be finite and in range; capture slots not reached
yet hold NaN (as written by a fresh run); events are -1 or a step already reached.

Smooth checkpoints (kind "sweep_smooth", :mod:`rdyn.reduced_dynamics.model_a.smooth_sweep`): finished
rows (dicts of ``ROW_FIELDS``). The mark is ``diverged_at_step`` (an integer in 1..steps, and
then ``steps`` is the step before). NaN/inf in ``t1``, ``T_star``, ``loss_slope`` of a diverged
row is read as empty (None); every other number must be finite.
"""
from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from rdyn.reduced_dynamics.runs.checkpoint import CheckpointError
from rdyn.reduced_dynamics.runs.divergence import STATE_BOUND, is_diverged

EMPTY_WHEN_DIVERGED = ("t1", "T_star", "loss_slope")
STATE_FIELDS = ("C1", "C2", "C3")
FINITE_FIELDS = ("C1", "C2", "C3", "p", "C1_star", "loss")


def _label(config) -> str:
    """A configuration in a message: its sizes, step size and activation."""
    activation = getattr(config.activation, "label", config.activation)
    eta = "auto" if config.eta is None else repr(float(config.eta))
    return f"D={config.D}, K={config.K}, eta={eta}, activation={activation}"


def _refuse(path, row: int, config, what: str):
    raise CheckpointError(f"checkpoint {path}: row {row + 1} ({_label(config)}) {what}; "
                          "not resumable")


def _in_range(values: np.ndarray) -> bool:
    with np.errstate(invalid="ignore"):
        return bool(np.all(np.abs(values) <= STATE_BOUND))


def check_batch_clock(path, clock: np.ndarray, steps: int, capture_steps: np.ndarray) -> None:
    """A group's clock (t, capture cursor, finished) is one the batch loop can reach."""
    t, cursor, finished = (int(x) for x in clock)
    before = int(np.sum(capture_steps < t))
    at_or_before = int(np.sum(capture_steps <= t))
    if not (0 <= t <= steps and finished in (0, 1) and (finished == 0 or t == steps)
            and before <= cursor <= at_or_before):
        raise CheckpointError(f"checkpoint {path} has an impossible loop position "
                              f"(step {t}, capture {cursor}, finished {finished}); not resumable")


def check_batch_rows(path, configs, rows, state, steps: int, capture_steps: np.ndarray) -> None:
    """Refuse a batch group whose state cannot come from a run (module docstring).
    ``configs[i]`` is configuration i of the group and ``rows[i]`` its index in the grid;
    ``state`` a :class:`~rdyn.reduced_dynamics.model_a.batch.GroupState`."""
    from rdyn.reduced_dynamics.model_a.dynamics import run

    check_batch_clock(path, state.clock, steps, capture_steps)
    t, cursor = int(state.clock[0]), int(state.clock[1])
    for i, (config, row) in enumerate(zip(configs, rows)):
        t1, t_star = (int(x) for x in state.events[i])
        if not (t1 == -1 or 1 <= t1 <= t) or not (t_star == -1 or 0 <= t_star <= t):
            _refuse(path, row, config, f"has events t1={t1}, T*={t_star} outside -1 and "
                    f"1..{t} (0..{t} for T*)")
        if not np.all(np.isnan(state.capture_out[i, cursor:])):
            _refuse(path, row, config, "holds values in capture slots not reached yet")
        captured = state.capture_out[i, :cursor]
        if not is_diverged((state.C1[i], state.C2[i], state.C3[i])):
            if not _in_range(captured):
                _refuse(path, row, config, "holds a non-finite or out-of-range captured state "
                        "but is not diverged (its state C1, C2, C3 is finite)")
            continue
        diverged_at = run(config, steps=t).diverged_at_step
        if diverged_at is None:
            _refuse(path, row, config, "is marked diverged (its state C1, C2, C3 is "
                    "non-finite or above 1e+100) but this configuration does not diverge "
                    f"within the checkpoint's {t} steps")
        if not _in_range(captured[capture_steps[:cursor] < diverged_at]):
            _refuse(path, row, config, "holds a non-finite or out-of-range captured state "
                    f"before its divergence at step {diverged_at}")


def _is_int(x) -> bool:
    return isinstance(x, Integral) and not isinstance(x, bool)


def _is_finite(x) -> bool:
    return isinstance(x, Real) and not isinstance(x, bool) and math.isfinite(x)


def _same(saved, wanted) -> bool:
    return saved == wanted or (isinstance(saved, Real) and isinstance(wanted, Real)
                               and float(saved) == float(wanted))


def check_smooth_rows(path, configs, rows: list, steps: int, fields) -> list[dict]:
    """The finished rows of a smooth-sweep checkpoint, checked (module docstring) and with the
    empty fields of diverged rows normalised to None; ``fields`` is ``ROW_FIELDS``."""
    checked = []
    for i, (config, row) in enumerate(zip(configs, rows)):
        if not isinstance(row, dict) or set(row) != set(fields):
            _refuse(path, i, config, "is malformed (not a row of the sweep's fields)")
        wanted = {"D": config.D, "K": config.K, "vstar_norm2": config.vstar_norm2,
                  "activation": config.activation.label, "logit_scale": config.logit_scale,
                  "M": config.M, "kappa": None, "sigma_prime_zero": None}
        if config.eta is not None:
            wanted["eta"] = config.eta
        for key, value in wanted.items():
            if not _same(row[key], value):
                _refuse(path, i, config, f"holds {key}={row[key]!r}, not its configuration's "
                        f"{value!r}")
        if not (_is_finite(row["eta"]) and row["eta"] > 0):
            _refuse(path, i, config, f"holds eta={row['eta']!r}")
        diverged_at = row["diverged_at_step"]
        diverged = diverged_at is not None
        if diverged and not (_is_int(diverged_at) and 1 <= diverged_at <= steps):
            _refuse(path, i, config, f"is marked diverged at step {diverged_at!r}, not a step "
                    f"in 1..{steps}")
        last = diverged_at - 1 if diverged else steps
        if not (_is_int(row["steps"]) and row["steps"] == last):
            _refuse(path, i, config, f"holds steps={row['steps']!r}, expected {last}"
                    + (f" (the step before its divergence at step {diverged_at})"
                       if diverged else ""))
        for key in FINITE_FIELDS:
            if not _is_finite(row[key]) or (key in STATE_FIELDS and abs(row[key]) > STATE_BOUND):
                _refuse(path, i, config, f"holds {key}={row[key]!r}"
                        + (" (a diverged row holds the last finite state)" if diverged else ""))
        row = dict(row)
        for key in EMPTY_WHEN_DIVERGED:
            value = row[key]
            empty = value is None or (isinstance(value, float) and not math.isfinite(value))
            if diverged:
                if not empty:
                    _refuse(path, i, config, f"is marked diverged at step {diverged_at} but "
                            f"holds {key}={value!r} (a diverged row leaves it empty)")
                row[key] = None
            elif value is not None:
                ok = (_is_finite(value) if key == "loss_slope" else
                      _is_int(value) and (1 if key == "t1" else 0) <= value <= steps)
                if not ok:
                    _refuse(path, i, config, f"holds {key}={value!r}"
                            + (" but is not diverged" if empty else ""))
        checked.append(row)
    return checked
