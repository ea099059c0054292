"""``rdyn.asymptotics``: Model A's phase limits as D -> infinity at fixed K (derived)."""
from __future__ import annotations

from rdyn.api._common import options
from rdyn.options.engine_errors import error_text, usage_errors
from rdyn.api._signature import api_function
from rdyn.option_types import AsymptoticsOptions
from rdyn.options import SMOOTH_ACTIVATIONS


@api_function("asymptotics")
def asymptotics(**kwargs):
    """Leading large-D behaviour at fixed K of ``tau1 = lim eta t1``, ``tau_star = lim eta T*``
    (eta -> 0) and the late excess-loss constant ``c_L`` in ``loss ~ c_L/(eta t)``, derived with
    sympy (rdyn.reduced_dynamics.model_a.limits.asymptotics; docs/flow_and_asymptotics.md): exponent of D exact,
    constants as closed forms / 30 digits, the next correction term; checked against the
    slow-manifold quadrature at D = 10^3..10^6 unless ``no_check``.
    """
    return run(options("asymptotics", kwargs))


def run(v: AsymptoticsOptions, progress: bool = False):
    """``progress`` (the CLI): print the time estimate first (rdyn/run_time.py)."""
    from rdyn.reduced_dynamics.model_a.limits.asymptotics import asymptotic_summary
    from rdyn.result import Result

    name = "expr" if v.activation_expr is not None else v.activation
    with usage_errors():
        if name == "expr" and v.activation_expr is None:
            raise ValueError("--activation expr needs --activation-expr EXPR")
    if progress:
        from rdyn.run_time import announce, asymptotics_estimate

        announce(asymptotics_estimate(name, not v.no_check), quiet=False)

    kappa = 0.1 if v.kappa is None else v.kappa
    check_D = () if v.no_check else (10**3, 10**4, 10**5, 10**6)
    with usage_errors():
        if name in SMOOTH_ACTIVATIONS:
            from rdyn.derivations.activations import Activation
            from rdyn.reduced_dynamics.model_a.limits.asymptotics import smooth_asymptotic_summary

            summary = smooth_asymptotic_summary(Activation(name, v.activation_expr),
                                                v.logit_scale, v.K, v.vstar_norm2, v.M or 1,
                                                check_D=check_D, describe=error_text)
        else:
            summary = asymptotic_summary(v.activation, v.logit_scale, v.K, v.vstar_norm2,
                                         kappa, check_D=check_D)
    return Result(summary, None, detail={"summary": summary})
