"""``rdyn.teacher``: Model A's collapsed (C1, C2, C3) dynamics, phases t1 and T*."""
from __future__ import annotations

import json
import os
import sys
from typing import Any

from rdyn.api._common import checkpoint_errors, options, parse_steps_list, usage_errors
from rdyn.api._signature import api_function
from rdyn.option_types import CrosscheckOptions, LnOptions, SweepOptions, TeacherOptions
from rdyn.options import SMOOTH_ACTIVATIONS
from rdyn.output import UsageError, require

# the options the Model A helpers below read (rdyn teacher and rdyn crosscheck share them)
ModelAOptions = TeacherOptions | CrosscheckOptions
# the commands that write checkpoints
CheckpointOptions = TeacherOptions | LnOptions | SweepOptions


MIN_DEFAULT_STEPS = 1000  # the default run (no --steps) runs to max(2 T*, 1000)
SLOW_DPS_MAX = 100  # --method slow at --dps N: 3.6 s at 30, 43 s at 100, > 120 s at 200 (D = 20)


class CertifyInterrupted(KeyboardInterrupt):
    """Ctrl-C during the --certify pass (the main run is complete, and checkpointed if asked;
    ``step``/``path``: where the interval64 pass saved its own checkpoint, if it did)."""

    def __init__(self, step=None, path=None):
        super().__init__()
        self.step, self.path = step, path


def precision_backend(precision: str | None, dps: int | None) -> tuple[str, int | None]:
    """(backend, dps) from ``precision`` and ``dps`` (UsageError for conflicting choices)."""
    from rdyn.reduced_dynamics.model_a.dynamics import DD_DIGITS

    if precision is None:
        return ("float64" if dps is None else "arb"), dps
    if precision == "float64":
        require(dps is None, "--precision float64 takes no --dps")
    elif precision == "dd":
        require(dps is None or dps <= DD_DIGITS,
                f"--precision dd carries about {DD_DIGITS} digits: --dps must be <= {DD_DIGITS}")
        dps = DD_DIGITS if dps is None else dps
    else:
        require(dps is not None, "--precision arb needs --dps N")
    return precision, dps


def preset_size(v: ModelAOptions) -> tuple[int, int] | None:
    """(D, K) of a preset teacher from the options, without building anything (None when
    --groups gives the family); UsageError for a preset that cannot have them."""
    from rdyn.reduced_dynamics.model_a.presets import check_preset

    if v.groups is not None:
        return None
    task = v.task or ("sts" if (v.D is not None or v.K is not None) else "cnn")
    with usage_errors():
        return check_preset(task, v.D, v.K)


def model_config(v: ModelAOptions, with_groups: bool = True):
    """(TeacherConfig, groups) from the validated Model A options (UsageError otherwise).
    ``with_groups=False``: a preset's D lists of groups are not built (groups is None; the
    collapsed map needs D and K only, so ``rdyn teacher --D 1e10`` costs no O(D) memory)."""
    from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig
    from rdyn.reduced_dynamics.model_a.presets import PRESETS, check_preset, preset_groups, validate_groups

    groups: Any
    with usage_errors():
        if v.groups is not None:
            require(v.task is None, "--groups and --task are exclusive")
            groups = v.groups
            if isinstance(groups, (str, os.PathLike)):
                groups = read_groups_file(groups)
            D, K = validate_groups(groups, v.D)
            require(v.K is None or v.K == K, f"--groups have size {K} but --K is {v.K}")
            groups = [list(g) for g in groups]
        else:
            task = v.task or ("sts" if (v.D is not None or v.K is not None) else "cnn")
            assert task in PRESETS
            D, K = check_preset(task, v.D, v.K)
            groups = preset_groups(task, D, K) if with_groups else None
        if v.activation_expr is not None or v.activation in SMOOTH_ACTIVATIONS:
            return smooth_config(v, D, K), groups
        kappa = 0.1 if v.kappa is None else v.kappa
        config = TeacherConfig(D=D, K=K, activation=v.activation, kappa=kappa, eta=v.eta,
                               vstar_norm2=v.vstar_norm2,
                               sigma_prime_zero=v.sigma_prime_zero,
                               logit_scale=v.logit_scale)
    return config, groups


# reading a JSON file of N bytes into Python lists of ints takes at most about this many
# bytes per byte of file (a one-digit index and its comma, "0,", become an 8-byte list slot and
# a cached small int; a 20-digit index a 36-byte int): the memory estimate made before reading
GROUPS_BYTES_PER_FILE_BYTE = 32
GROUPS_INDEX_DIGITS = 19   # an index of a 64-bit D (D <= 10^18 - 1 has at most 18 digits)


def read_groups_file(path) -> list:
    """The JSON value of a ``--groups`` file, read as data: its memory estimated from its size
    before it is read (refused above the machine's available memory), an integer of more than
    19 digits refused before it is converted, and nesting too deep for the parser refused, each
    in one line naming the file (docs/input_rules.md, rule 4); the value is checked by
    ``validate_groups`` (non-integers, sizes, ranges)."""
    from rdyn.options import check_memory

    flag = f"--groups {os.fspath(path)}"
    try:
        size = os.path.getsize(path)
    except OSError as exc:
        raise UsageError(f"cannot read {flag}: {exc.strerror or exc}") from None
    check_memory(f"{flag} ({size} bytes)", GROUPS_BYTES_PER_FILE_BYTE * size)

    def index(text):
        if len(text.lstrip("-")) > GROUPS_INDEX_DIGITS:
            raise ValueError(f"{flag}: an index of {len(text.lstrip('-'))} digits; indices are "
                             "0..D-1 (at most 19 digits)")
        return int(text)

    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh, parse_int=index)
    except RecursionError:
        raise UsageError(f"cannot read {flag}: lists nested too deeply (expected a list of D "
                         "lists of integers)") from None
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc).splitlines()[0]
        raise UsageError(f"cannot read {flag}: {reason}") from None


def smooth_config(v: ModelAOptions, D: int, K: int, M: int | None = None):
    """SmoothConfig of a smooth activation (erf, tanh, gelu, softplus, sigmoid, expr)."""
    from rdyn.derivations.activations import Activation
    from rdyn.reduced_dynamics.model_a.smooth import SmoothConfig

    formula = v.activation_expr
    name = "expr" if formula is not None else v.activation
    require(name != "expr" or formula is not None, "--activation expr needs --activation-expr EXPR")
    rows = M if M is not None else (v.M or 1)
    return SmoothConfig(D=D, K=K, activation=Activation(name, formula), eta=v.eta,
                        vstar_norm2=v.vstar_norm2, M=rows, logit_scale=v.logit_scale)


def run_smooth(v: TeacherOptions, config, thresholds):
    """The teacher job for a smooth activation (rdyn.reduced_dynamics.model_a.smooth)."""
    from rdyn.reduced_dynamics.certified.smooth import certifiable
    from rdyn.reduced_dynamics.certified.strip import why_not_certifiable
    from rdyn.reduced_dynamics.model_a.smooth import PRECISE_LADDER, SMOOTH_DPS_MAX
    from rdyn.reduced_dynamics.model_a.smooth import run as run_smooth_dynamics
    from rdyn.result import Result

    if v.method != "map":
        return run_limits(v, config, thresholds)
    for flag, given, why in (
            ("--certify", v.certify and not certifiable(config.activation),
             why_not_certifiable(config.activation) or "no certified iteration"),
            ("--precision", v.precision not in (None, "float64", "arb"), "use --dps N")):
        require(not given, f"{flag} is not available with --activation {config.activation.label}: {why}")
    require(v.precision != "arb" or v.dps is not None, "--precision arb needs --dps N")
    require(v.dps is None or v.dps <= SMOOTH_DPS_MAX,
            f"--dps {v.dps}: --activation {config.activation.label} runs at most --dps "
            f"{SMOOTH_DPS_MAX} (its Gauss-Hermite ladder ends at {PRECISE_LADDER[-1]} nodes, about "
            "what 300 digits need)")
    record = parse_steps_list(v.record, "--record", v.steps)
    if v.steps is None:
        require(thresholds.attention(config.K) < 1 / config.K,
                "T* is never reached when --tstar-attention >= 1/K; give --steps")
    with usage_errors():   # also a CheckpointError (a ValueError): one line, exit 2
        result = run_smooth_dynamics(config, v.steps, record, thresholds.t1_fraction,
                                     thresholds.tstar_attention, v.dps,
                                     progress=not v.quiet, min_default_steps=MIN_DEFAULT_STEPS,
                                     on_rule=smooth_announcer(v, config, thresholds),
                                     route=v.smooth_route or "auto",
                                     **checkpoint_kwargs(v))
    for s in record if result.diverged_at_step is None else ():  # diverged: steps up to it
        require(s <= result.steps, f"--record: step {s} outside 0..{result.steps}")
    dps = v.dps
    # eta: the decimal the iteration uses (repr of the float option, as model_a.smooth does);
    # eta_limit: a float64 grid maximum (model_a.smooth.eta_limit), reported as float64 at any
    # --dps rather than padded with digits it does not have
    convert = (lambda x: x) if dps is None else (lambda x: _decimal_at(x, dps))
    summary = {
        "t1": result.t1, "T_star": result.T_star,
        "final": result.final.as_dict(),
        "record": {str(t): r.as_dict() for t, r in sorted(result.record.items())},
        "stability": {"eta_limit": float(result.eta_limit), "lost_at_step": result.lost_at_step},
        "eta": convert(result.eta),
        "loss_slope": result.loss_slope,
        "diverged_at_step": result.diverged_at_step,
        "divergence_reason": None if result.diverged_at_step is None else divergence_reason(),
        "model": {"D": config.D, "K": config.K, "activation": config.activation.name,
                  "kappa": None, "vstar_norm2": config.vstar_norm2, "sigma_prime_zero": None,
                  "logit_scale": config.logit_scale, "backend": result.backend,
                  "M": config.M, "activation_expr": config.activation.formula},
        "quadrature": {"nodes": result.nodes, "error_estimate": result.quadrature_error,
                       "rule": "Gauss-Hermite" + (" (inner average closed form)"
                                                  if config.activation.name in ("erf", "gelu")
                                                  else " tensor"),
                       "route": result.route, "table_error": result.table_error},
    }
    certificate = None
    if v.certify:
        from rdyn.reduced_dynamics.certified.smooth import certified_smooth_run

        try:
            certificate = certified_smooth_run(config, result.eta, steps=result.steps,
                                               thresholds=thresholds, dps=dps,
                                               min_default_steps=MIN_DEFAULT_STEPS)
        except KeyboardInterrupt as exc:
            raise CertifyInterrupted() from exc
        summary.update(certificate_keys(result, certificate))
    return Result(summary, dps, detail={"run": result, "certificate": certificate})


def smooth_announcer(v: TeacherOptions, config, thresholds):
    """``on_rule(n)`` printing the time estimate of a smooth run once its node count n is
    chosen (rdyn/run_time.py; float64 runs: only when they may be long, returning the
    estimated steps for the progress bar; None for a --resume or --quiet)."""
    dps = v.dps
    if v.resume is not None or v.quiet:
        return None
    from rdyn.run_time import (announce, default_smooth_steps, smooth_float64_estimate,
                               smooth_teacher_estimate)

    if dps is None:
        def on_rule_float64(nodes: int) -> int | None:
            from rdyn.reduced_dynamics.model_a.smooth import MAX_DEFAULT_STEPS as most

            estimate = smooth_float64_estimate(config, nodes, v.steps, thresholds,
                                               MIN_DEFAULT_STEPS, most)
            announce(estimate, v.quiet)
            return None if estimate is None else estimate.steps

        return on_rule_float64

    def on_rule(nodes: int) -> None:
        steps, lower = v.steps, False
        if steps is None:
            steps, lower = default_smooth_steps(config, thresholds, MIN_DEFAULT_STEPS)
        announce(smooth_teacher_estimate(config.activation.name, nodes, steps, dps,
                                         v.certify, lower), v.quiet)

    return on_rule


def certificate_keys(result, certificate) -> dict:
    """The --certify keys of the JSON summary: ``certified`` (every enclosure finite and the
    certified t1, T* equal the run's), ``radius``, ``certified_backend``, ``certificate``."""
    return {"certified": certificate.certified and (
                (result.t1, result.T_star) == (certificate.t1.step, certificate.T_star.step)),
            "radius": certificate.radius_final, "certified_backend": certificate.backend,
            "certificate": certificate.summary()}


def _decimal_at(x: float, dps: int):
    """The float ``x`` read as the decimal it prints as (``repr``), an mpf at dps + 10 digits."""
    import mpmath

    with mpmath.workdps(dps + 10):
        return mpmath.mpf(repr(float(x)))


def checkpoint_kwargs(v: CheckpointOptions) -> dict:
    every = 60.0 if v.checkpoint_every is None else v.checkpoint_every
    return {"checkpoint": None if v.checkpoint is None else os.fspath(v.checkpoint),
            "checkpoint_every": every,
            "resume": None if v.resume is None else os.fspath(v.resume)}


@api_function("teacher")
def teacher(**kwargs):
    """Iterate Model A's collapsed dynamics (docs/models_and_conventions.md, Model A; seed 000, Lemma D.2) from
    C1 = C2 = C3 = 0: the API of ``rdyn teacher``. ``method="flow"``/``"slow"`` give the
    eta -> 0 phase limits instead (:func:`run_limits`).

    Returns
    -------
    rdyn.result.Result
        The keys of ``rdyn teacher --json``: ``t1``, ``T_star`` (GD steps; None if not
        reached), ``final`` (``t, C1, C2, C3, p, C1_star, loss``: the state, the attention on
        an in-group key, the C1 fixed point at p, the excess loss L - 1/2 E||E||_F^2),
        ``record``, ``stability`` (``eta_limit``, ``lost_at_step``), ``eta``, ``loss_slope``,
        ``diverged_at_step``, ``divergence_reason`` (docs/input_rules.md#overflow-and-divergence:
        a diverged run stops there, ``final`` is the step before, t1, T* and the slope are
        None), ``model``. All quantities are dimensionless; with ``dps`` the reals print at ``dps``
        significant digits (docs/api.md).
    """
    v = options("teacher", kwargs)
    return run(v)


def run(v: TeacherOptions):
    """The teacher job on validated options ``v`` (also used by the CLI)."""
    from rdyn.reduced_dynamics.model_a.dynamics import Thresholds, run as run_dynamics
    from rdyn.result import Result

    config, _ = model_config(v, with_groups=False)
    thresholds = Thresholds(v.t1_fraction, v.tstar_attention)
    if not hasattr(config, "sigma_prime_zero"):   # a smooth activation
        return run_smooth(v, config, thresholds)
    record = parse_steps_list(v.record, "--record", v.steps)
    if v.steps is None:  # the default run stops at max(2 T*, 1000): unknown in advance
        for s in record:
            require(s <= MIN_DEFAULT_STEPS, f"--record: step {s} needs --steps (the default run "
                    f"may stop at step {MIN_DEFAULT_STEPS})")
    if v.method != "map":
        return run_limits(v, config, thresholds)
    if v.steps is None:  # the default run stops at 2 T*: refuse runs that cannot reach T*
        require(thresholds.attention(config.K) < 1 / config.K,
                "T* is never reached when --tstar-attention >= 1/K; give --steps")
        require(config.sigma_prime_zero != 0,
                "with --sigma-prime-zero 0 nothing moves from W_V = 0 (T* is never reached); "
                "give --steps")
    backend, dps = precision_backend(v.precision, v.dps)
    if v.certify and v.checkpoint is not None and backend != "arb":
        from rdyn.derivations.atomic_files import output_target
        from rdyn.options import check_output_path
        from rdyn.reduced_dynamics.certified.arb_pass import companion_path

        # the interval64 pass's file, beside the checkpoint (a symbolic link's target)
        companion = companion_path(output_target(v.checkpoint))
        check_output_path("--checkpoint", companion)
        check_output_path("--checkpoint", companion + ".tmp")
    expected = None   # the progress bar's total of a default run (2 T*, estimated)
    if backend == "arb" and v.resume is None and not v.quiet:
        from rdyn.run_time import announce, teacher_estimate

        announce(teacher_estimate(config, v.steps, dps, v.certify, thresholds,
                                  MIN_DEFAULT_STEPS), v.quiet)
    elif backend == "float64" and v.resume is None and not v.quiet:
        from rdyn.run_time import announce, teacher_float64_estimate

        estimate = teacher_float64_estimate(config, v.steps, thresholds, MIN_DEFAULT_STEPS)
        announce(estimate, v.quiet)
        expected = None if estimate.lower_bound else estimate.steps
    with checkpoint_errors():
        result = run_dynamics(config, steps=v.steps, record=record, thresholds=thresholds,
                              backend=backend, dps=dps, progress=not v.quiet,
                              expected_steps=expected, **checkpoint_kwargs(v))
    for s in record if result.diverged_at_step is None else ():  # diverged: steps up to it
        require(s <= result.steps, f"--record: step {s} outside 0..{result.steps}")
    if result.fixed_point_at is not None:
        print(f"rdyn teacher: warning: from step {result.fixed_point_at} the iterates are a "
              f"fixed point of the map in {backend} arithmetic (the increments round away): "
              "T* is never reached; stopped there", file=sys.stderr)
    summary = result_summary(result, dps)
    certificate = None
    if v.certify:
        from rdyn.reduced_dynamics.certified.arb_pass import certified_run, companion_path

        cert_backend = "arb" if backend == "arb" else "interval64"   # dd: interval64 too
        cert_options = {}
        if cert_backend == "interval64" and (v.checkpoint or v.resume) is not None:
            # the interval64 pass: its own checkpoint next to the main one (NAME.certify.npz)
            from rdyn.derivations.atomic_files import output_target

            resumed = companion_path(output_target(v.resume)) if v.resume is not None else None
            cert_options = {"checkpoint": v.checkpoint and companion_path(output_target(v.checkpoint)),
                            "checkpoint_every": checkpoint_kwargs(v)["checkpoint_every"],
                            "resume": resumed if resumed and os.path.exists(resumed) else None}
        try:  # the arb pass is not checkpointed: a resume re-runs it
            with checkpoint_errors():
                certificate = certified_run(config, steps=result.steps, thresholds=thresholds,
                                            dps=dps, progress=not v.quiet,
                                            backend=cert_backend, **cert_options)
        except KeyboardInterrupt as exc:
            raise CertifyInterrupted(getattr(exc, "step", None), getattr(exc, "path", None)) from exc
        summary.update(certificate_keys(result, certificate))
    return Result(summary, dps, detail={"run": result, "certificate": certificate})


def _exact(value, dps):
    """A sympy number as float64, or as an mpf carrying dps + 10 digits."""
    if dps is None:
        return float(value)
    import mpmath
    import sympy as sp

    with mpmath.workdps(dps + 10):
        return mpmath.mpf(str(sp.N(value, dps + 10)))


def divergence_reason() -> str:
    from rdyn.reduced_dynamics.runs.divergence import reason

    return reason("the state (C1, C2, C3)")


def result_summary(result, dps=None) -> dict:
    """The JSON object of the interface contract (plus eta, loss_slope, model)."""
    from rdyn.reduced_dynamics.model_a.dynamics import eta_limit_exact, eta_limit_fraction

    c = result.config
    if dps is None:  # the same floats, without importing sympy (eta_limit_fraction is exact)
        limit = float(eta_limit_fraction(c))
        eta = c.eta if c.eta is not None else float(eta_limit_fraction(c) / 2)
    else:
        limit, eta = _exact(eta_limit_exact(c), dps), _exact(c.exact_step_size(), dps)
    return {
        "t1": result.t1,
        "T_star": result.T_star,
        "final": result.final.as_dict(),
        "record": {str(t): r.as_dict() for t, r in sorted(result.record.items())},
        "stability": {"eta_limit": limit, "lost_at_step": result.lost_at_step},
        "eta": eta,
        "loss_slope": result.loss_slope,
        "diverged_at_step": result.diverged_at_step,
        "divergence_reason": None if result.diverged_at_step is None else divergence_reason(),
        "model": {"D": c.D, "K": c.K, "activation": c.activation,
                  "kappa": c.kappa if c.activation == "leaky" else None,
                  "vstar_norm2": c.vstar_norm2, "sigma_prime_zero": c.sigma_prime_zero,
                  "logit_scale": c.logit_scale, "backend": result.backend},
    }


def run_limits(v: TeacherOptions, config, thresholds):
    """``method="flow"|"slow"``: the eta -> 0 phase limits (rdyn.reduced_dynamics.model_a.flow; for a
    smooth activation rdyn.reduced_dynamics.model_a.smooth_flow): JSON keys
    ``limit``, ``method``, ``tau1``, ``tau_star``, and ``t1``, ``T_star`` = tau/eta as reals
    (limits, never step counts); flow adds ``modified`` (the first-order modified equation at
    this eta), slow ``s_shift`` and ``quadrature_error``."""
    from rdyn.reduced_dynamics.model_a.flow import limits_summary, phase_limits
    from rdyn.result import Result

    smooth = not hasattr(config, "sigma_prime_zero")
    for flag, given in (("--record", v.record), ("--steps", v.steps),
                        ("--certify", v.certify), ("--checkpoint", v.checkpoint),
                        ("--resume", v.resume), ("--precision", v.precision)):
        require(not given, f"{flag} applies to --method map only")
    require(v.method != "flow" or v.dps is None,
            "--method flow is float64 (scipy); use --method slow with --dps")
    require(v.dps is None or v.dps <= SLOW_DPS_MAX,
            f"--dps must be at most {SLOW_DPS_MAX} with --method slow (its quadratures at N "
            f"digits: measured 3.6 s at --dps 30, 43 s at 100, over 120 s at 200), got {v.dps}")
    require(not smooth or v.dps is None,
            f"--method slow with --activation {getattr(config.activation, 'label', '')} is "
            "float64 (its moments are float64 Gauss-Hermite sums): --dps is not available")
    require(thresholds.attention(config.K) < 1 / config.K,
            "T* is never reached when --tstar-attention >= 1/K")
    require(smooth or config.sigma_prime_zero != 0,
            "with --sigma-prime-zero 0 nothing moves from W_V = 0 (T* is never reached)")
    with usage_errors():
        if smooth:
            from rdyn.reduced_dynamics.model_a.smooth_flow import smooth_phase_limits

            limits = smooth_phase_limits(config, v.method, thresholds)
        else:
            limits = phase_limits(config, v.method, thresholds, v.dps)
    return Result(limits_summary(limits), v.dps, detail={"limits": limits, "config": config})
