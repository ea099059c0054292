"""Sweeps of Model A with a smooth activation (``rdyn sweep --activation erf|tanh|gelu|
softplus|sigmoid|expr``): one :func:`rdyn.reduced_dynamics.model_a.smooth.run` (float64) per
grid point, one after the other, each row exactly the single run's numbers.

The rows have the fields of :data:`rdyn.reduced_dynamics.model_a.batch.ROW_FIELDS`, with the smooth
run's conventions: ``activation`` is the activation's label (``expr:FORMULA`` for a formula),
``kappa`` and ``sigma_prime_zero`` are None (sigma'(0) is the activation's own), ``M`` is the
number of rows of V* (all of norm sqrt(vstar_norm2 / M)), ``eta`` the step size used (half the
float64 grid estimate of eta_limit for ``eta=auto``), and ``steps`` the steps run (the step
before ``diverged_at_step`` for a diverged run, as in ``rdyn teacher``). Events: t1 and T* of
:mod:`~rdyn.reduced_dynamics.model_a.smooth` (the same definitions as the batch kernel).

Checkpoints (format :mod:`rdyn.reduced_dynamics.runs.checkpoint`, kind "sweep_smooth"): the rows of
the finished grid points (JSON in the header's meta; floats round-trip exactly), saved after a
point when ``checkpoint_every`` seconds have passed, at the end, and on Ctrl-C. A resumed sweep
runs the remaining points, so its rows equal an uninterrupted sweep's (each run is a pure
function of its configuration).
"""
from __future__ import annotations

import sys
from dataclasses import asdict
from typing import Sequence

from rdyn.reduced_dynamics.runs.checkpoint import CheckpointError
from rdyn.reduced_dynamics.runs.checkpoint import load as load_checkpoint
from rdyn.reduced_dynamics.runs.checkpoint import save as save_checkpoint
from rdyn.reduced_dynamics.model_a.dynamics import Thresholds
from rdyn.reduced_dynamics.runs.driver import drive

CHECKPOINT_KIND = "sweep_smooth"


def smooth_row(config, result) -> dict:
    """The sweep row of one smooth run (``SmoothRun``): ROW_FIELDS, floats as float64."""
    f = result.final
    return {
        "D": config.D, "K": config.K, "eta": float(result.eta),
        "vstar_norm2": config.vstar_norm2, "activation": config.activation.label,
        "kappa": None, "logit_scale": config.logit_scale, "sigma_prime_zero": None,
        "steps": int(result.steps), "t1": result.t1, "T_star": result.T_star,
        "C1": float(f.C1), "C2": float(f.C2), "C3": float(f.C3), "p": float(f.p),
        "C1_star": float(f.C1_star), "loss": float(f.loss), "loss_slope": result.loss_slope,
        "diverged_at_step": result.diverged_at_step, "M": config.M,
    }


def checkpoint_identity(configs: Sequence, steps: int, thresholds: Thresholds) -> dict:
    """Everything that determines a smooth sweep's rows (a resume must match it exactly)."""
    return {"configs": [dict(asdict(c), activation=c.activation.label) for c in configs],
            "steps": steps, "t1_fraction": thresholds.t1_fraction,
            "tstar_attention": thresholds.tstar_attention}


def run_smooth_batch(configs: Sequence, steps: int, thresholds: Thresholds = Thresholds(),
                     progress: bool = False, checkpoint: str | None = None,
                     checkpoint_every: float = 60.0, resume: str | None = None):
    """One float64 :func:`~rdyn.reduced_dynamics.model_a.smooth.run` of ``steps`` steps per
    configuration (``SmoothConfig``), in order; a :class:`~rdyn.reduced_dynamics.model_a.batch.
    BatchResult` of :func:`smooth_row` rows. ``checkpoint``/``resume``: module docstring."""
    from rdyn.reduced_dynamics.model_a.batch import ROW_FIELDS, BatchResult
    from rdyn.reduced_dynamics.model_a.smooth import run
    from rdyn.reduced_dynamics.runs.sweep_rows import check_smooth_rows

    if not (0 <= steps <= 10**9):
        raise ValueError("steps must be in 0..1e9")
    configs = list(configs)
    identity = checkpoint_identity(configs, steps, thresholds)
    rows: list[dict] = []
    if resume is not None:
        _, meta = load_checkpoint(str(resume), CHECKPOINT_KIND, identity)
        rows = meta.get("rows")
        if not isinstance(rows, list) or len(rows) > len(configs):
            raise CheckpointError(f"checkpoint {resume} has malformed rows")
        if not all(isinstance(r, dict) for r in rows):
            raise CheckpointError(f"checkpoint {resume} has malformed rows")
        rows = check_smooth_rows(resume, configs, rows, steps, ROW_FIELDS)

    def save() -> None:
        save_checkpoint(str(checkpoint), CHECKPOINT_KIND, identity, {},
                        {"rows": rows, "configuration_steps": steps * len(rows)})

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(configs), initial=len(rows), unit="cfg", file=sys.stderr,
                   desc="rdyn sweep")

    def advance(done_rows: list, n: int) -> list:
        for config in configs[len(done_rows):len(done_rows) + n]:
            result = run(config, steps, t1_fraction=thresholds.t1_fraction,
                         tstar_attention=thresholds.tstar_attention)
            done_rows.append(smooth_row(config, result))
        return done_rows

    engine = _RowsEngine(advance, len(configs), steps, save)
    drive(engine, rows, chunk=1, checkpoint=None if checkpoint is None else str(checkpoint),
          checkpoint_every=checkpoint_every, bar=bar)
    return BatchResult(rows=rows, steps=steps)


class _RowsEngine:
    """A sweep of whole runs as an engine of :mod:`rdyn.reduced_dynamics.runs.driver`: the state is
    the list of finished rows, a chunk runs the next grid point(s); the checkpoint's step is
    ``steps`` per finished row."""

    def __init__(self, advance, count: int, steps: int, write):
        self.advance, self.count, self.steps, self.write = advance, count, steps, write

    def done(self, rows: list) -> bool:
        return len(rows) >= self.count

    def position(self, rows: list) -> int:
        return len(rows)

    def save(self, path: str, rows: list) -> int:
        self.write()
        return self.steps * len(rows)

