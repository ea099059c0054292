"""``rdyn.crosscheck``: Model A's full-matrix GD next to the collapsed (C1, C2, C3) map.

The options arrive checked: their cross-option checks (sizes and memory, ``--vstar-row-norms``
against ``--M``, ``--record``, a smooth activation's ``--mode``) are the command's check in the
shared validation (rdyn/options/model_a_checks.py)."""
from __future__ import annotations

from rdyn.api._common import options
from rdyn.options.value_checks import parse_steps_list
from rdyn.api._signature import api_function
from rdyn.option_types import CrosscheckOptions
from rdyn.options.model_a_checks import CROSSCHECK_BATCH, CROSSCHECK_STEPS
from rdyn.output import UsageError

DEFAULT_STEPS = CROSSCHECK_STEPS
LONG_WORK = 3 * 10**8  # steps * D^2 above which a progress bar is shown (about 10 s and more)


@api_function("crosscheck")
def crosscheck(**kwargs):
    """Run full-matrix gradient descent (population gradient or online SGD) next to the
    collapsed dynamics from zero and compare (docs/interface.md, "How a collapsed map relates to
    full-matrix GD").

    Returns
    -------
    rdyn.result.Result
        The keys of ``rdyn crosscheck --json``: ``max_rel_dev`` (largest relative difference
        between (C1, C2, C3) read off the matrices and the collapsed iterates),
        ``structure_residual``, ``steps``, ``mode``, ``expected_rel_dev`` (sgd), ``eta``,
        ``final_loss``, ``record``, ``diverged_at_step`` and ``divergence_reason`` (a
        diverged run stops at the step before and reports no agreement figures: max_rel_dev,
        structure_residual, expected_rel_dev are None; docs/input_rules.md), ``model``.
    """
    return run(options("crosscheck", kwargs))


def crosscheck_request(v: CrosscheckOptions):
    """The :class:`~rdyn.reduced_dynamics.model_a.request.Request` of ``rdyn crosscheck`` from
    the checked options (their memory included): its Model (config, resolved eta, thresholds,
    groups), float64 numerics, Control (steps resolved: 300 by default; progress). The
    full-matrix options (M, d, mode, P, seed, batch, noise) stay the reference's own."""
    from rdyn.api._teacher import model_config
    from rdyn.reduced_dynamics.model_a.dynamics import Thresholds
    from rdyn.reduced_dynamics.model_a.request import Control, Request, model_of

    config, groups = model_config(v)
    return Request(model_of(config, Thresholds(), groups=groups),
                   control=Control(steps=DEFAULT_STEPS if v.steps is None else v.steps,
                                   progress=not v.quiet))


def run(v: CrosscheckOptions):
    """The crosscheck job on validated options ``v``: the request built once
    (:func:`crosscheck_request`), the full-matrix reference of its family run next to it."""
    row_norms = parse_row_norms(v)
    request = crosscheck_request(v)
    return RUN_OF_KIND[request.model.kind](v, request, row_norms)


def run_homogeneous(v: CrosscheckOptions, request, row_norms):
    """Full-matrix GD (population or SGD) next to the homogeneous collapsed map."""
    from rdyn.reduced_dynamics.runs.divergence import reason
    from rdyn.result import Result
    from rdyn.verification.references.crosscheck import crosscheck as run_crosscheck

    config, groups, steps = request.model.config, request.model.groups, request.control.steps
    batch_size = CROSSCHECK_BATCH if v.batch is None else v.batch
    noise_std = 1.0 if v.noise_std is None else v.noise_std
    record = parse_steps_list(v.record, "--record", steps)
    if not v.quiet:
        from rdyn.run_time import announce, crosscheck_estimate

        announce(crosscheck_estimate(config.D, steps, v.mode, batch_size), v.quiet)
    result = run_crosscheck(config, groups, M=v.M, d=v.d, mode=v.mode, steps=steps,
                            positional=v.P, seed=v.seed, batch_size=batch_size,
                            noise_std=noise_std, record=set(record),
                            progress=request.control.progress and steps * config.D ** 2 > LONG_WORK)
    initial_out_of_range(result.diverged_at_step, v)
    summary = {"max_rel_dev": result.max_rel_dev, "structure_residual": result.structure_residual,
               "steps": result.steps, "mode": result.mode}
    if result.mode == "sgd":   # null for a diverged run (no agreement figures)
        summary["expected_rel_dev"] = result.expected_rel_dev
    summary["diverged_at_step"] = result.diverged_at_step
    summary["divergence_reason"] = None if result.diverged_at_step is None else reason(
        "the collapsed or the full-matrix state")
    summary["eta"] = result.eta
    summary["final_loss"] = {"full": result.full_loss[-1] if result.full_loss else None,
                             "collapsed": result.collapsed_loss[-1] if result.collapsed_loss else None}
    summary["record"] = {str(t): r for t, r in sorted(result.record.items())}
    summary["model"] = {"D": config.D, "K": config.K, "M": v.M, "d": v.d,
                        "activation": config.activation,
                        "kappa": config.kappa if config.activation == "leaky" else None,
                        "P": v.P, "seed": v.seed, "logit_scale": config.logit_scale}
    return Result(summary, None, detail={"config": config, "crosscheck": result,
                                         "batch": batch_size})


def parse_row_norms(v: CrosscheckOptions):
    """--vstar-row-norms as M floats (their count checked against --M by the validation), or
    None."""
    from rdyn.options import parse_row_norms as parse

    return None if v.vstar_row_norms is None else parse(v.vstar_row_norms)


def run_smooth(v: CrosscheckOptions, request, row_norms):
    """Population GD of the full matrices for a smooth activation (verify/references/full_matrix_smooth)."""
    from dataclasses import replace

    from rdyn.result import Result
    from rdyn.verification.references.full_matrix_smooth import crosscheck_smooth

    config, groups, steps = request.model.config, request.model.groups, request.control.steps
    config = replace(config, M=v.M)   # --mode, --record and the memory: checked by the validation
    if not v.quiet:
        from rdyn.run_time import announce, crosscheck_smooth_estimate

        announce(crosscheck_smooth_estimate(config.M, config.D, steps), v.quiet)
    out = crosscheck_smooth(config, groups, d=v.d, steps=steps, seed=v.seed,
                            positional=v.P, row_norms=row_norms)
    from rdyn.reduced_dynamics.runs.divergence import reason

    diverged = out["diverged_at_step"]
    initial_out_of_range(diverged, v)
    summary = {"max_rel_dev": None if diverged is not None else float(out["max_rel_dev"]),
               "structure_residual": None if diverged is not None else float(out["structure_residual"]),
               "steps": out["steps"], "mode": "population",
               "diverged_at_step": diverged,
               "divergence_reason": None if diverged is None else reason(
                   "the collapsed or the full-matrix state"),
               "eta": out["eta"], "final_loss": out["final_loss"],
               "record": {}, "row_norms_equal": out["row_norms_equal"],
               "class_map": None if "class_map" not in out else
               {"classes": out["class_map"]["classes"],
                "max_rel_dev": float(out["class_map"]["max_rel_dev"])},
               "model": {"D": config.D, "K": config.K, "M": v.M, "d": v.d,
                         "activation": config.activation.name, "kappa": None, "P": v.P,
                         "seed": v.seed, "logit_scale": config.logit_scale,
                         "activation_expr": config.activation.formula}}
    return Result(summary, None, detail={"config": config, "crosscheck": out, "batch": None})


RUN_OF_KIND = {"homogeneous": run_homogeneous, "smooth": run_smooth}


def initial_out_of_range(diverged_at_step, v: CrosscheckOptions) -> None:
    """A run "diverged at step 0" never ran: its initial full-matrix loss (proportional to
    ||V*||_F^2, plus the label noise's variance in SGD) is already beyond the float64-safe
    range. That is bad input, refused in one line naming the options that set it (exit 2)."""
    if diverged_at_step != 0:
        return
    from rdyn.reduced_dynamics.runs.divergence import STATE_BOUND

    drivers = f"--vstar-norm2 {v.vstar_norm2}"
    if v.mode == "sgd":
        drivers += f" with --noise-std {1.0 if v.noise_std is None else v.noise_std}"
    raise UsageError(f"{drivers}: the initial loss (step 0) is already beyond the float64-safe "
                     f"range ({STATE_BOUND:.0e}); lower --vstar-norm2")
