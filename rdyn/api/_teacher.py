"""``rdyn.teacher``: Model A's collapsed (C1, C2, C3) dynamics, phases t1 and T*.

The options arrive checked: their cross-option checks are the command's check in the shared
validation (rdyn/options/model_a_checks.py, for the CLI and the API alike). Here
:func:`teacher_request` maps them into the request once and :func:`run` runs it."""
from __future__ import annotations

import math
import os

from rdyn.api._common import checkpoint_errors, options
from rdyn.options.engine_errors import usage_errors
from rdyn.options.value_checks import parse_steps_list
from rdyn.api._signature import api_function
from rdyn.option_types import CrosscheckOptions, LnOptions, SweepOptions, TeacherOptions
from rdyn.options.model_a_checks import (MIN_DEFAULT_STEPS, model_size, preset_task,
                                         smooth_activation)
from rdyn.output import require

# the options the Model A helpers below read (rdyn teacher and rdyn crosscheck share them)
ModelAOptions = TeacherOptions | CrosscheckOptions
# the commands that write checkpoints
CheckpointOptions = TeacherOptions | LnOptions | SweepOptions


class CertifyInterrupted(KeyboardInterrupt):
    """Ctrl-C during the --certify pass (the main run is complete, and checkpointed if asked;
    ``step``/``path``: where the interval64 pass saved its own checkpoint, if it did)."""

    def __init__(self, step=None, path=None):
        super().__init__()
        self.step, self.path = step, path


def model_config(v: ModelAOptions, with_groups: bool = True):
    """(TeacherConfig or SmoothConfig, groups) of the checked Model A options ``v``.
    ``with_groups=False``: a preset's D lists of groups are not built (groups is None; the
    collapsed map needs D and K only, so ``rdyn teacher --D 1e10`` costs no O(D) memory)."""
    from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig
    from rdyn.reduced_dynamics.model_a.presets import preset_groups

    D, K, groups = model_size(v)
    if groups is None and with_groups:
        groups = preset_groups(preset_task(v), D, K)
    activation = smooth_activation(v)
    with usage_errors():
        if activation is not None:   # the smooth engine imports sympy: only for smooth runs
            from rdyn.reduced_dynamics.model_a.smooth import SmoothConfig

            return SmoothConfig(D=D, K=K, activation=activation, eta=v.eta,
                                vstar_norm2=v.vstar_norm2, M=v.M or 1,
                                logit_scale=v.logit_scale), groups
        return TeacherConfig(D=D, K=K, activation=v.activation,
                             kappa=0.1 if v.kappa is None else v.kappa, eta=v.eta,
                             vstar_norm2=v.vstar_norm2, sigma_prime_zero=v.sigma_prime_zero,
                             logit_scale=v.logit_scale), groups


# --------------------------------------------------------------------------------------------
# The request: the checked options mapped once (every None default resolved here)
# --------------------------------------------------------------------------------------------

def teacher_request(v: TeacherOptions):
    """The :class:`~rdyn.reduced_dynamics.model_a.request.Request` of ``rdyn teacher`` from the
    checked options ``v`` (rdyn/options/model_a_checks.py; nothing is checked here): Model,
    Numerics and Control with every default resolved (eta by ``resolve_eta``, thresholds,
    backend and dps, route, checkpoint period, step budgets). A map run's time estimate is
    announced here, once the numerics are known and before any work (a smooth run's once its
    node count is chosen: :func:`time_announcer`)."""
    from rdyn.reduced_dynamics.model_a.dynamics import DD_DIGITS, Thresholds
    from rdyn.reduced_dynamics.model_a.request import Control, Numerics, Request, model_of

    every = checkpoint_kwargs(v)
    config, _ = model_config(v, with_groups=False)
    thresholds = Thresholds(v.t1_fraction, v.tstar_attention)
    control = {"steps": v.steps, "progress": not v.quiet, "min_default_steps": MIN_DEFAULT_STEPS,
               "method": v.method, "certify": bool(v.certify), **every}
    if v.method != "map":   # the eta -> 0 phase limits
        return Request(model_of(config, thresholds, v.dps),
                       Numerics("float64" if v.dps is None else "mpmath", v.precision, v.dps),
                       Control(**control))
    control["record"] = tuple(parse_steps_list(v.record, "--record", v.steps))
    if config.kind == "smooth":
        backend = "float64" if v.dps is None else (
            "arb" if config.activation.name != "expr" else "mpmath")
        numerics = Numerics(backend, v.precision, v.dps, v.smooth_route or "auto")
    else:
        backend = v.precision or ("float64" if v.dps is None else "arb")
        numerics = Numerics(backend, v.precision,
                            DD_DIGITS if backend == "dd" and v.dps is None else v.dps)
    control.update(time_announcer(v, config, thresholds, numerics))
    return Request(model_of(config, thresholds, numerics.dps, numerics.route), numerics,
                   Control(**control))


def time_announcer(v: TeacherOptions, config, thresholds, numerics) -> dict:
    """The time estimate of a map run (rdyn/run_time.py; none for a --resume or --quiet), as
    the Control fields that carry it: a homogeneous run's is printed now, ``expected_steps``
    being the progress bar's total of a float64 default run (2 T*, estimated); a smooth run's
    is ``on_rule(n)``, printed once its node count n is chosen (float64 runs: only when they
    may be long, returning the estimated steps for the progress bar)."""
    if v.resume is not None or v.quiet:
        return {}
    from rdyn.run_time import (announce, default_smooth_steps, smooth_float64_estimate,
                               smooth_teacher_estimate, teacher_estimate,
                               teacher_float64_estimate)

    dps = numerics.dps
    if config.kind == "smooth" and dps is None:
        def on_rule_float64(nodes: int) -> int | None:
            from rdyn.reduced_dynamics.model_a.smooth import MAX_DEFAULT_STEPS as most

            estimate = smooth_float64_estimate(config, nodes, v.steps, thresholds,
                                               MIN_DEFAULT_STEPS, most)
            announce(estimate, v.quiet)
            return None if estimate is None else estimate.steps

        return {"on_rule": on_rule_float64}
    if config.kind == "smooth":
        def on_rule(nodes: int) -> None:
            steps, lower = v.steps, False
            if steps is None:
                steps, lower = default_smooth_steps(config, thresholds, MIN_DEFAULT_STEPS)
            announce(smooth_teacher_estimate(config.activation.name, nodes, steps, dps,
                                             v.certify, lower), v.quiet)

        return {"on_rule": on_rule}
    if numerics.backend == "arb":
        announce(teacher_estimate(config, v.steps, dps, v.certify, thresholds,
                                  MIN_DEFAULT_STEPS), v.quiet)
    elif numerics.backend == "float64":
        estimate = teacher_float64_estimate(config, v.steps, thresholds, MIN_DEFAULT_STEPS)
        announce(estimate, v.quiet)
        return {"expected_steps": None if estimate.lower_bound else estimate.steps}
    return {}


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
    eta -> 0 phase limits instead (:func:`run`).

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
    """The teacher job on checked options ``v`` (also used by the CLI): the request built
    once (:func:`teacher_request`), run on the engine of its moment provider, its JSON summary
    built once (:func:`summary`), the Result built once. ``detail``: ``run`` (the engine's
    result), ``certificate``, ``request``, ``warnings`` (lines the CLI prints on stderr as
    ``rdyn teacher: warning:``), ``initial_multiplier`` (a smooth run whose C1 multiplier left
    (-1, 1) at step 0: its value there, else None).

    ``method="flow"|"slow"``: the eta -> 0 phase limits instead
    (rdyn.reduced_dynamics.model_a.limits.flow; for a smooth activation
    rdyn.reduced_dynamics.model_a.limits.smooth_flow): JSON keys ``limit``, ``method``, ``tau1``,
    ``tau_star``, and ``t1``, ``T_star`` = tau/eta as reals (limits, never step counts); flow
    adds ``modified`` (the first-order modified equation at this eta), slow ``s_shift`` and
    ``quadrature_error``; ``detail``: ``limits``, ``config``, ``request``, ``warnings``."""
    from rdyn.reduced_dynamics.model_a.limits.flow import limits_summary
    from rdyn.reduced_dynamics.model_a.request import execute
    from rdyn.result import Result

    request = teacher_request(v)
    model, dps = request.model, request.numerics.dps
    if request.control.method != "map":
        with usage_errors():
            limits = LIMITS_OF_KIND[model.kind](model.config, request.control.method,
                                                model.thresholds, dps)
        data = limits_summary(limits)
        detail = {"limits": limits, "config": model.config, "request": request, "warnings": []}
    else:
        with ENGINE_ERRORS[model.kind]():
            result = execute(request)
        for s in request.control.record if result.diverged_at_step is None else ():
            require(s <= result.steps, f"--record: step {s} outside 0..{result.steps}")  # diverged: steps up to it
        warnings = []
        if result.fixed_point_at is not None:
            warnings.append(f"from step {result.fixed_point_at} the iterates are a fixed point "
                            f"of the map in {request.numerics.backend} arithmetic (the "
                            "increments round away): T* is never reached; stopped there")
        data = summary(request, result, dps)
        certificate = None
        if request.control.certify:
            certificate = CERTIFY[model.kind](request, result)
            data.update(certificate_keys(result, certificate))
        multiplier = None
        if model.kind == "smooth" and result.lost_at_step == 0:
            multiplier = initial_multiplier(result.config, model.eta)
        detail = {"run": result, "certificate": certificate, "request": request,
                  "warnings": warnings, "initial_multiplier": multiplier}
    return Result(data, dps, detail=detail)


# how an engine's refusals reach users: a smooth run's every ValueError (a CheckpointError too)
# in one line, a homogeneous run's CheckpointError whole
ENGINE_ERRORS = {"homogeneous": checkpoint_errors, "smooth": usage_errors}


def _certify_homogeneous(request, result):
    """The certified pass of a homogeneous run (arb at --dps, interval64 otherwise)."""
    from rdyn.reduced_dynamics.certified.arb_pass import certified_run, companion_path

    control, backend, dps = request.control, request.numerics.backend, request.numerics.dps
    cert_backend = "arb" if backend == "arb" else "interval64"   # dd: interval64 too
    cert_options = {}
    if cert_backend == "interval64" and (control.checkpoint or control.resume) is not None:
        # the interval64 pass: its own checkpoint next to the main one (NAME.certify.npz)
        from rdyn.derivations.atomic_files import output_target

        resumed = companion_path(output_target(control.resume)) if control.resume is not None else None
        cert_options = {"checkpoint": control.checkpoint and companion_path(output_target(control.checkpoint)),
                        "checkpoint_every": control.checkpoint_every,
                        "resume": resumed if resumed and os.path.exists(resumed) else None}
    try:  # the arb pass is not checkpointed: a resume re-runs it
        with checkpoint_errors():
            return certified_run(request.model.config, steps=result.steps,
                                 thresholds=request.model.thresholds, dps=dps,
                                 progress=control.progress, backend=cert_backend, **cert_options)
    except KeyboardInterrupt as exc:   # the interval64 pass's Interrupted says where it saved
        from rdyn.reduced_dynamics.runs.checkpoint import Interrupted

        saved = (exc.step, exc.path) if isinstance(exc, Interrupted) else (None, None)
        raise CertifyInterrupted(*saved) from exc


def _certify_smooth(request, result):
    """The certified pass of a smooth run (rdyn.reduced_dynamics.certified.smooth)."""
    from rdyn.reduced_dynamics.certified.smooth import certified_smooth_run

    try:
        return certified_smooth_run(request.model.config, result.eta, steps=result.steps,
                                    thresholds=request.model.thresholds,
                                    dps=request.numerics.dps,
                                    min_default_steps=request.control.min_default_steps)
    except KeyboardInterrupt as exc:
        raise CertifyInterrupted() from exc


CERTIFY = {"homogeneous": _certify_homogeneous, "smooth": _certify_smooth}


def initial_multiplier(config, eta) -> float | None:
    """The C1 update's multiplier 1 + eta D dm2/dC1 at step 0 (the zero state, p = 1/D) of a
    smooth activation, in float64 (None if it cannot be evaluated)."""
    try:
        from rdyn.reduced_dynamics.model_a.smooth import Expectations, Numbers, float64_rule

        ex = Expectations(config, Numbers(config.activation, None), float64_rule(96))
        dm2 = float(ex.moments(0.0, ex.level(1.0))[2])
    except Exception:   # a description only: the run itself has been reported already
        return None
    value = 1 + float(eta) * config.D * dm2
    return value if math.isfinite(value) else None


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


def summary(request, result, dps=None) -> dict:
    """The JSON object of a map run (the interface contract plus eta, loss_slope, model; a
    smooth run adds quadrature), built once for both families: eta is the request's resolved
    step size (at ``dps``: a homogeneous run's exact value, a smooth run's float read as its
    decimal), eta_limit the run's (a homogeneous run's exact value at ``dps``; a smooth run's
    float64 grid maximum at any ``dps``, not padded with digits it does not have)."""
    c, eta = result.config, request.model.eta
    limit = float(result.eta_limit)
    if dps is not None and request.model.kind == "smooth":
        eta = _decimal_at(eta, dps)
    elif dps is not None:
        from rdyn.reduced_dynamics.model_a.dynamics import eta_limit_exact

        limit, eta = _exact(eta_limit_exact(c), dps), _exact(c.exact_step_size(), dps)
    data = {
        "t1": result.t1,
        "T_star": result.T_star,
        "final": result.final.as_dict(),
        "record": {str(t): r.as_dict() for t, r in sorted(result.record.items())},
        "stability": {"eta_limit": limit, "lost_at_step": result.lost_at_step},
        "eta": eta,
        "loss_slope": result.loss_slope,
        "diverged_at_step": result.diverged_at_step,
        "divergence_reason": None if result.diverged_at_step is None else divergence_reason(),
    }
    data.update(SUMMARY_OF_KIND[request.model.kind](c, result))
    return data


def _homogeneous_keys(c, result) -> dict:
    return {"model": {"D": c.D, "K": c.K, "activation": c.activation,
                      "kappa": c.kappa if c.activation == "leaky" else None,
                      "vstar_norm2": c.vstar_norm2, "sigma_prime_zero": c.sigma_prime_zero,
                      "logit_scale": c.logit_scale, "backend": result.backend}}


def _smooth_keys(c, result) -> dict:
    return {"model": {"D": c.D, "K": c.K, "activation": c.activation.name,
                      "kappa": None, "vstar_norm2": c.vstar_norm2, "sigma_prime_zero": None,
                      "logit_scale": c.logit_scale, "backend": result.backend,
                      "M": c.M, "activation_expr": c.activation.formula},
            "quadrature": {"nodes": result.nodes, "error_estimate": result.quadrature_error,
                           "rule": "Gauss-Hermite" + (" (inner average closed form)"
                                                      if c.activation.name in ("erf", "gelu")
                                                      else " tensor"),
                           "route": result.route, "table_error": result.table_error}}


SUMMARY_OF_KIND = {"homogeneous": _homogeneous_keys, "smooth": _smooth_keys}


def _homogeneous_limits(config, method, thresholds, dps):
    from rdyn.reduced_dynamics.model_a.limits.flow import phase_limits

    return phase_limits(config, method, thresholds, dps)


def _smooth_limits(config, method, thresholds, dps):
    from rdyn.reduced_dynamics.model_a.limits.smooth_flow import smooth_phase_limits

    return smooth_phase_limits(config, method, thresholds)


LIMITS_OF_KIND = {"homogeneous": _homogeneous_limits, "smooth": _smooth_limits}
