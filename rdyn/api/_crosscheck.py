"""``rdyn.crosscheck``: Model A's full-matrix GD next to the collapsed (C1, C2, C3) map."""
from __future__ import annotations

from rdyn.api._common import options, parse_steps_list
from rdyn.api._signature import api_function
from rdyn.option_types import CrosscheckOptions
from rdyn.options import check_memory
from rdyn.output import UsageError, require

DEFAULT_STEPS = 300
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


def run(v: CrosscheckOptions):
    from rdyn.api._teacher import model_config, preset_size
    from rdyn.reduced_dynamics.runs.divergence import reason
    from rdyn.result import Result
    from rdyn.verification.references.crosscheck import (crosscheck as run_crosscheck, memory_driver,
                                              memory_estimate)

    steps = DEFAULT_STEPS if v.steps is None else v.steps
    row_norms = parse_row_norms(v)
    batch_size = 100 if v.batch is None else v.batch
    noise_std = 1.0 if v.noise_std is None else v.noise_std
    size = preset_size(v)   # sizes are checked before anything of size D is built

    def check_size(D: int) -> None:
        sizes = (D, v.M, v.d, steps, batch_size, v.mode)
        check_memory(memory_driver(*sizes), memory_estimate(*sizes))

    if size is not None:
        check_size(size[0])
    config, groups = model_config(v)
    if size is None:
        check_size(config.D)
    if not hasattr(config, "sigma_prime_zero"):   # a smooth activation
        return run_smooth(v, config, groups, steps, row_norms)
    record = parse_steps_list(v.record, "--record", steps)
    if not v.quiet:
        from rdyn.run_time import announce, crosscheck_estimate

        announce(crosscheck_estimate(config.D, steps, v.mode, batch_size), v.quiet)
    result = run_crosscheck(config, groups, M=v.M, d=v.d, mode=v.mode, steps=steps,
                            positional=v.P, seed=v.seed, batch_size=batch_size,
                            noise_std=noise_std, record=set(record),
                            progress=not v.quiet and steps * config.D ** 2 > LONG_WORK)
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
    """--vstar-row-norms as M floats (their count checked against --M), or None."""
    from rdyn.options import parse_row_norms as parse

    if v.vstar_row_norms is None:
        return None
    norms = parse(v.vstar_row_norms)
    require(len(norms) == v.M, f"--vstar-row-norms: {len(norms)} norms for --M {v.M} rows")
    return norms


def run_smooth(v: CrosscheckOptions, config, groups, steps: int, row_norms):
    """Population GD of the full matrices for a smooth activation (verify/references/full_matrix_smooth)."""
    from dataclasses import replace

    from rdyn.result import Result
    from rdyn.verification.references.full_matrix_smooth import crosscheck_smooth

    require(v.mode == "population", "--mode sgd is not available for the smooth activations "
            "(population GD only)")
    require(v.record is None, "--record is not available for the smooth activations")
    config = replace(config, M=v.M)
    from rdyn.verification.references.full_matrix_smooth import memory_estimate as smooth_memory

    check_memory(f"--M {config.M} (with --D {config.D}, --activation {config.activation.label}: "
                 f"the expectations of all M x D entries at once)",
                 smooth_memory(config.M, config.D, v.d))
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
