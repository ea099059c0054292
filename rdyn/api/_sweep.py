"""``rdyn.sweep``: Model A's collapsed dynamics over a grid of configurations (batched)."""
from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

from rdyn.api._common import checkpoint_errors, options
from rdyn.options.engine_errors import usage_errors
from rdyn.api._signature import api_function
from rdyn.option_types import SweepOptions
from rdyn.output import UsageError, jsonable, require, write_rescued, write_text_atomic


@api_function("sweep")
def sweep(**kwargs):
    """Iterate every configuration of ``grid`` (``'D=20,36;K=2,4;eta=0.1:0.3:3'``; keys D, K,
    eta, vstar_norm2, activation, kappa, sigma_prime_zero, logit_scale) for ``steps`` GD steps,
    many at once (numba): the API of ``rdyn sweep``. With a smooth ``activation`` (erf, tanh,
    gelu, softplus, sigmoid, expr with ``activation_expr``; ``M`` rows of V*) every point is one
    float64 run of :func:`rdyn.reduced_dynamics.model_a.smooth.run` (rows as ``rdyn.teacher``).

    Returns
    -------
    rdyn.result.Result
        ``rows`` (one dict per configuration, in grid order: D, K, eta, vstar_norm2,
        activation, kappa, logit_scale, sigma_prime_zero, steps, t1, T_star, C1, C2, C3, p,
        C1_star, loss, loss_slope, diverged_at_step, M; M is None unless the activation is
        smooth, kappa and sigma_prime_zero are None for it) and ``steps``; with ``out`` the rows are also written
        (CSV, or JSON for a .json name).
    """
    return run(options("sweep", kwargs))


def smooth_activation(v: SweepOptions):
    """The smooth Activation of ``--activation`` / ``--activation-expr`` (None for a sweep of
    the grid's homogeneous activations)."""
    if v.activation is None and v.activation_expr is None:
        return None
    from rdyn.derivations.activations import Activation

    formula = v.activation_expr
    require(v.activation != "expr" or formula is not None,
            "--activation expr needs --activation-expr EXPR")
    # sigma'(0) != 0 is checked with --activation-expr (rdyn/options/value_checks.py)
    return Activation("expr" if formula is not None else v.activation, formula)


def configurations(v: SweepOptions, activation=None) -> list:
    """The grid's configurations: TeacherConfig, or with a smooth ``activation`` SmoothConfig
    (the grid keys it does not use are refused)."""
    from rdyn.reduced_dynamics.model_a.grid import SMOOTH_UNUSED, config, parse_grid, smooth_config

    refused = None
    if activation is not None:
        refused = {k: f"does not apply with --activation {activation.label} (a smooth "
                   "activation has its own sigma'(0))" if k == "sigma_prime_zero" else
                   f"does not apply with --activation {activation.label}"
                   for k in SMOOTH_UNUSED}
    configs = []
    with usage_errors():
        for point in parse_grid(v.grid, refused):
            try:
                configs.append(config(point) if activation is None else
                               smooth_config(point, activation, v.M or 1))
            except ValueError:
                if not v.skip_invalid:
                    raise
    require(configs, "--grid has no valid configuration")
    return configs


def run(v: SweepOptions):
    from rdyn.reduced_dynamics.model_a.batch import ROW_FIELDS, run_batch
    from rdyn.reduced_dynamics.model_a.dynamics import Thresholds
    from rdyn.api._teacher import checkpoint_kwargs
    from rdyn.result import Result

    activation = smooth_activation(v)
    configs = configurations(v, activation)
    if v.threads is not None:
        import numba

        numba.set_num_threads(min(v.threads, numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]
    thresholds = Thresholds(v.t1_fraction, v.tstar_attention)
    steps = v.steps
    if not v.quiet and v.resume is None and v.scheduler is None:   # the grid is known: say how long
        from rdyn.run_time import announce, sweep_estimate

        announce(sweep_estimate(len(configs), steps, activation is not None, bool(v.fast)), v.quiet)
    if activation is not None:
        from rdyn.reduced_dynamics.model_a.smooth_sweep import run_smooth_batch

        with checkpoint_errors():
            result = run_smooth_batch(configs, steps, thresholds, progress=not v.quiet,
                                      **checkpoint_kwargs(v))
    elif v.scheduler is not None:
        from rdyn.reduced_dynamics.model_a.batch import run_batch_distributed
        from rdyn.reduced_dynamics.runs.dask_client import SchedulerError

        try:
            result = run_batch_distributed(configs, steps, v.scheduler, thresholds,
                                           progress=not v.quiet)
        except SchedulerError as exc:  # unreachable, not a scheduler, no worker, workers without rdyn
            raise UsageError(f"--scheduler {v.scheduler}: {exc}") from None
    else:
        with checkpoint_errors():
            result = run_batch(configs, steps, thresholds, progress=not v.quiet,
                               fast=v.fast, **checkpoint_kwargs(v))
    rows = result.rows
    if v.out is not None:
        out = Path(v.out)
        if out.suffix == ".json":
            text = json.dumps(jsonable({"rows": rows, "steps": steps}), allow_nan=False) + "\n"
        else:
            buffer = io.StringIO()
            write_csv(buffer, rows, ROW_FIELDS)
            text = buffer.getvalue()
        written = write_rescued("--out", out, lambda p: write_text_atomic(p, text), text)
        if written is not None:
            print(f"rdyn sweep: {len(rows)} rows written to {written}", file=sys.stderr)
    return Result({"rows": rows, "steps": steps}, None,
                  detail={"fields": ROW_FIELDS, "configurations": len(configs)})


def write_csv(fh, rows, fields) -> None:
    writer = csv.DictWriter(fh, fieldnames=list(fields), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if row[k] is None else (repr(row[k]) if isinstance(row[k], float)
                                                       else row[k]) for k in fields})
