"""The certified loop of Model A's collapsed map for every smooth activation (python-flint
``arb`` balls): one pass at a fixed working precision, the moments of each step from the
caller (the closed forms of erf and GELU, :mod:`rdyn.reduced_dynamics.certified.smooth`; the
strip quadrature of tanh, softplus, sigmoid and formulas,
:mod:`rdyn.reduced_dynamics.certified.strip`). The map, the events, the mean-value form in C1
and the rigour argument: :mod:`rdyn.reduced_dynamics.certified.smooth`'s docstring.
"""
from __future__ import annotations

import math

from rdyn.reduced_dynamics.certified.certificate import (CertifiedResult, EventCertificate,
                                                       QuadratureTooLarge, relative_radius)


def log2_relative_radius(state) -> float:
    """log2 of the largest relative radius of a box of arb balls, in arb (no float underflow
    at any precision): -inf for exact components only, +inf for a ball centred at 0."""
    from flint import arb

    worst = -math.inf
    for v in state:
        if v.rad() == 0:
            continue
        if v.mid() == 0:
            return math.inf
        ratio = arb(v.rad()) / abs(arb(v.mid()))
        worst = max(worst, float((ratio.log() / arb(2).log()).mid()))
    return worst


class _TooWide(Exception):
    """The relative radius passed the limit at ``step`` (``growth``: the (t, log2 radius)
    samples of the pass so far)."""

    def __init__(self, step: int, log2_radius: float, growth: list):
        super().__init__(step, log2_radius)
        self.step, self.log2_radius, self.growth = step, log2_radius, growth


def _iterate(config, eta, steps, thresholds, tstar_level, min_default_steps, prec,
             radius_limit, step_moments) -> CertifiedResult:
    """One pass at ``prec`` bits; raises _TooWide when log2 of the relative radius exceeds
    ``radius_limit`` (None: never). ``step_moments(b)`` (``b``: the run's balls,
    :func:`rdyn.reduced_dynamics.certified.exact_inputs.smooth_run_balls`) gives the object
    whose ``at(C1, e, p, s2, s_res)`` sets a step's geometry and returns the step's moment
    enclosures (``moments(C1)``, ``m2(C1)``, ``dm2(C1)``)."""
    import flint
    from flint import arb

    from rdyn.derivations.activations import BranchPointError
    from rdyn.derivations.model_a.collapsed_general import logit_gradient_functions
    from rdyn.reduced_dynamics.certified.exact_inputs import smooth_run_balls
    from rdyn.reduced_dynamics.model_a.dynamics import MAX_STEPS

    grad_in, grad_out = logit_gradient_functions()
    with flint.ctx.workprec(prec):
        b = smooth_run_balls(config, eta, thresholds, tstar_level)
        D, K, N, V, step_size = b["D"], b["K"], b["N"], b["V"], b["step_size"]
        fraction, level, scale, ratio_root = b["fraction"], b["level"], b["scale"], b["ratio_root"]
        stepper = step_moments(b)
        t1, tstar = EventCertificate("t1"), EventCertificate("T_star")
        end = steps if steps is not None else MAX_STEPS
        state = (arb(0), arb(0), arb(0))
        stopped, radius_at_tstar, growth, log2_growth, next_sample = None, None, [], [], 1
        t = 0
        while True:
            C1, C2, C3 = state
            try:
                # the attention geometry of e (model_a.smooth.Expectations.level)
                e = (-(C2 + C3) / scale).exp()
                p = 1 / (K + N * e)
                q = e * p
                s2 = (K * p * p + N * q * q).sqrt()
                ex = stepper.at(C1, e, p, s2, q * ratio_root / s2)
                if tstar.step is None:
                    tstar.observe(t, p - level)
                    if tstar.step is not None:
                        radius_at_tstar = relative_radius(state)
                        if steps is None:
                            end = max(2 * t, min_default_steps)
                if t >= 1 and t1.step is None:
                    t1.observe(t, -ex.m2(C1 / fraction))
                if t >= next_sample:
                    growth.append((t, relative_radius(state)))
                    log2_growth.append((t, log2_relative_radius(state)))
                    next_sample *= 2
                if t >= end:
                    break
                m1, m2 = ex.moments(C1)
                args = (C1, e, K, N, V, m1, m2)
                if C1.rad() == 0:
                    C1_next = C1 + step_size * D * m2
                else:   # mean-value form in C1 (certified.smooth's docstring)
                    centre = arb(C1.mid())
                    slope = 1 + step_size * D * ex.dm2(C1)
                    C1_next = centre + step_size * D * ex.m2(centre) + slope * (C1 - centre)
                state = (C1_next, C2 - step_size * grad_in(*args) / scale,
                         C3 + step_size * grad_out(*args) / scale)
            except BranchPointError as exc:
                stopped = f"branch point at step {t}: {exc}"
                break
            except QuadratureTooLarge as exc:   # the strip rule of a huge state (strip.py)
                stopped = f"quadrature too large at step {t}: {exc}"
                break
            t += 1
            if not all(v.is_finite() for v in state):
                stopped = f"enclosure not finite at step {t}"
                break
            if radius_limit is not None:
                log2_radius = log2_relative_radius(state)
                if log2_radius > radius_limit:
                    raise _TooWide(t, log2_radius, log2_growth)
        return CertifiedResult(steps=t, t1=t1, T_star=tstar, state=state, prec=prec,
                               radius_final=relative_radius(state),
                               radius_at_T_star=radius_at_tstar, radius_growth=growth,
                               stopped=stopped)
