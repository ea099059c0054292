"""How close the eta -> 0 phase limits are to the exact map (rdyn.reduced_dynamics.model_a.limits.flow vs .dynamics;
for a smooth activation rdyn.reduced_dynamics.model_a.limits.smooth_flow vs .smooth).

For one configuration :func:`compare` iterates the exact map (numba float64) and evaluates the
flow (order 0 and the first-order modified equation) and the slow-manifold quadrature, and
returns the relative errors of ``t1`` and ``T*`` predicted as ``tau/eta`` against the map's
integer event times. The map's event is the first integer step at or after the crossing, so
``eta T*_map = tau_star(eta) + eta * theta`` with ``theta`` in [0, 1): a rounding of at most one
step (relative ``1/T*``) is part of every comparison.

:func:`observed_order` measures the order in eta from two step sizes.
"""
from __future__ import annotations

import math
from dataclasses import replace

from rdyn.reduced_dynamics.model_a.limits.flow import flow_limits, slow_limits
from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, Thresholds, run
from rdyn.reduced_dynamics.model_a.smooth import SmoothConfig, run as run_smooth
from rdyn.reduced_dynamics.model_a.limits.smooth_flow import smooth_phase_limits, step_size


def _run_map(config, thresholds: Thresholds, steps=None, record=()):
    """The exact map's run: float64 numba (identity, ReLU, leaky) or the smooth map's float64
    run (a :class:`SmoothConfig`)."""
    if isinstance(config, SmoothConfig):
        return run_smooth(config, steps, record, thresholds.t1_fraction,
                          thresholds.tstar_attention)
    return run(config, steps=steps, record=record, thresholds=thresholds)


def _limits(config, method: str, thresholds: Thresholds):
    if isinstance(config, SmoothConfig):
        return smooth_phase_limits(config, method, thresholds)
    return (flow_limits if method == "flow" else slow_limits)(config, thresholds)


def map_crossings(config: TeacherConfig, thresholds: Thresholds = Thresholds()) -> dict:
    """The map's event steps t1, T* and its crossing times interpolated between the steps
    before and at each event (linear in ``C1 - t1_fraction C1*`` and in ``s = C2 + C3``):
    real numbers that a flow matching the map to O(eta^2) in tau predicts to O(eta) relative,
    free of the one-step rounding of the integer events."""
    from rdyn.reduced_dynamics.model_a.dynamics import attention_crossing

    first = _run_map(config, thresholds)
    t1, T = first.t1, first.T_star
    marks = sorted({t1 - 1, t1, T - 1, T} - {-1})
    second = _run_map(config, thresholds, steps=T, record=marks)
    assert (second.t1, second.T_star) == (t1, T)
    r = second.record
    frac = thresholds.t1_fraction

    def between(t, g):
        if t == 0 or t - 1 not in r:
            return float(t)
        g0, g1 = float(g(r[t - 1])), float(g(r[t]))
        return t - 1 + (-g0) / (g1 - g0)

    s_cross = attention_crossing(config, thresholds.attention(config.K))
    return {"t1": t1, "T_star": T, "lost_at_step": first.lost_at_step,
            "t1_interp": between(t1, lambda x: x.C1 - frac * x.C1_star),
            "T_star_interp": between(T, lambda x: x.C2 + x.C3 - s_cross)}


def compare(config: TeacherConfig, thresholds: Thresholds = Thresholds(),
            methods=("flow", "slow")) -> dict:
    """Map event times and the relative errors of every limit (``err_*``: (prediction - map) /
    map, predictions as reals tau/eta, against the map's interpolated crossing times)."""
    events = map_crossings(config, thresholds)
    smooth = isinstance(config, SmoothConfig)
    eta = step_size(config) if smooth else config.step_size
    out = {"D": config.D, "K": config.K,
           "activation": config.activation.label if smooth else config.activation,
           "logit_scale": config.logit_scale, "eta": eta, **events}

    class result:  # interpolated crossings
        t1 = events["t1_interp"]
        T_star = events["T_star_interp"]
    if "flow" in methods:
        f = _limits(config, "flow", thresholds)
        out.update(tau1_flow=f.tau1, tau_star_flow=f.tau_star,
                   err_t1_flow=f.t1 / result.t1 - 1, err_T_flow=f.T_star / result.T_star - 1,
                   err_t1_modified=f.tau1_mod / eta / result.t1 - 1,
                   err_T_modified=f.tau_star_mod / eta / result.T_star - 1)
    if "slow" in methods:
        s = _limits(config, "slow", thresholds)
        out.update(tau_star_slow=s.tau_star, err_T_slow=s.T_star / result.T_star - 1)
        if "flow" in methods:
            out["slow_vs_flow"] = s.tau_star / out["tau_star_flow"] - 1
    return out


def observed_order(config: TeacherConfig, eta_large: float, eta_small: float,
                   thresholds: Thresholds = Thresholds()) -> dict:
    """log(|err(eta_large)| / |err(eta_small)|) / log(eta_large / eta_small) for T* of the
    flow (expected 1) and of the modified equation (expected 2, until the one-step rounding
    of the map's event, relative 1/T*, dominates)."""
    a = compare(replace(config, eta=eta_large), thresholds, ("flow",))
    b = compare(replace(config, eta=eta_small), thresholds, ("flow",))
    ratio = math.log(eta_large / eta_small)
    order = {}
    for key in ("err_T_flow", "err_T_modified", "err_t1_flow", "err_t1_modified"):
        x, y = abs(a[key]), abs(b[key])
        order[key] = math.log(x / y) / ratio if x > 0 and y > 0 else None
    return {"large": a, "small": b, "order": order}
