"""Phase boundaries of Model A in the small-step limit: gradient flow and slow manifold.

``tau = eta t``. The map ``x' = x + eta F(x)`` (:mod:`rdyn.derivations.model_a.gradient_flow`) has, as
eta -> 0, the flow ``dx/dtau = F(x)`` in the state ``x = (C1, s)``, ``s = C2 + C3``
(``C3 = K C2/(D-K)``). The phase boundaries are the map's (docs/models_and_conventions.md, "Phase boundaries";
:mod:`rdyn.reduced_dynamics.model_a.dynamics`) written as event functions of the flow:

* ``t1 = min{t >= 1 : C1 >= t1_fraction C1*}``  ->  ``tau1``: first zero of
  ``C1 - t1_fraction C1*(s)`` for tau > 0 (upward);
* ``T* = min{t : p >= tstar_attention}``  ->  ``tau_star``: first zero of
  ``s - s_cross`` with ``s_cross`` = :func:`rdyn.reduced_dynamics.model_a.dynamics.attention_crossing`
  (p is increasing in s).

``tau1 = lim eta t1`` and ``tau_star = lim eta T*``. Methods:

* ``flow``: integrate the flow. float64: ``scipy.integrate.solve_ivp`` (Radau, the flow is
  stiff after t1: C1 relaxes at rate ~ D/(2K) while s moves on a time ~ D^3) with the derived
  Jacobian and event functions. With ``order=1`` the first-order modified equation
  ``F + eta F_1`` is integrated from the map's exact state at t = 1, so ``tau/eta`` matches the
  map's event times to ``O(eta)`` relative (``O(eta^2)`` in tau).
* ``slow``: integrate the flow through t1 (float64 DOP853, or mpmath Taylor series
  :func:`mpmath.odefun` with the event located by root refinement on the dense Taylor output),
  then ``tau_star - tau1 = int_{s1 + shift}^{s_star} ds / G(s)`` along the slow manifold (C1
  slaved to C1* plus its first-order lag; ``shift`` the asymptotic phase of the remaining C1
  transient), one :func:`mpmath.quad` in ``u = log e``.

The float64 machinery (Radau with the events, DOP853 to t1, the slow-manifold quadrature) is
written once over a :class:`PlaneFlow` (the vector field as numbers): :func:`homogeneous_flow`
for identity, ReLU, Leaky ReLU, :mod:`rdyn.reduced_dynamics.model_a.limits.smooth_flow` for the smooth
activations.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, Thresholds, attention_crossing

METHODS = ("flow", "slow")


@dataclass(frozen=True)
class PhaseLimits:
    """``tau1 = lim eta t1``, ``tau_star = lim eta T*`` and the reals ``t1 = tau1/eta``,
    ``T_star = tau_star/eta`` at the configured eta (limits, not step counts).

    ``modified``: with the first-order modified equation (flow, order 1), ``tau1_mod``,
    ``tau_star_mod`` at this eta (``None`` otherwise). ``s1``, ``s_star``: C2 + C3 at the events.
    """

    method: str
    tau1: object
    tau_star: object
    eta: float
    s1: object
    s_star: object
    tau1_mod: object = None
    tau_star_mod: object = None
    detail: dict | None = None

    @property
    def t1(self):
        return self.tau1 / self.eta

    @property
    def T_star(self):
        return self.tau_star / self.eta


def _scale(config: TeacherConfig) -> float:
    return config.D if config.logit_scale == "D" else math.sqrt(config.D)


def _params(config: TeacherConfig):
    return (config.D, config.K, config.vstar_norm2, config.kappa)


# --------------------------------------------------------------------------------------------
# float64 flow (scipy)
# --------------------------------------------------------------------------------------------

def first_map_step(config: TeacherConfig) -> tuple[float, float]:
    """(C1, s) after the map's exact first step from zero (the C1 = 0 branch)."""
    from rdyn.reduced_dynamics.model_a.kernels import kernels

    k = kernels(config.activation, config.logit_scale, "float64")
    c = k.prepare(config.D, config.K, config.step_size, config.vstar_norm2, config.kappa,
                  config.sigma_prime_zero)
    C1, C2, C3 = k.step(0.0, 0.0, 0.0, c)
    return C1, C2 + C3


@dataclass(frozen=True)
class PlaneFlow:
    """A flow ``dx/dtau = F(x)`` in the state ``x = (C1, s)`` (float64 callables) with what the
    event machinery of this module needs; one per model family (ReLU-type: :func:`homogeneous_flow`;
    smooth activations: :mod:`rdyn.reduced_dynamics.model_a.limits.smooth_flow`).

    ``rate(C1, s) -> (F_C1, F_s)``; ``jacobian(C1, s) -> [[F_C1,C1, F_C1,s], [F_s,C1, F_s,s]]``;
    ``correction(C1, s) -> F_1 = -1/2 (DF) F`` (the first-order modified equation's term);
    ``c1_star(s)``: the zero of F_C1 at fixed s; ``first_step()``: the map's (C1, s) at t = 1;
    ``s_cross``: s at the T* attention level; ``eta``: the configured step size."""

    rate: Callable
    jacobian: Callable
    correction: Callable
    c1_star: Callable
    first_step: Callable
    scale: float
    s_cross: float
    eta: float
    horizon: float


def homogeneous_flow(config: TeacherConfig, thresholds: Thresholds = Thresholds()) -> PlaneFlow:
    """The derived flow of identity, ReLU, Leaky ReLU (:mod:`rdyn.derivations.model_a.gradient_flow`)."""
    from rdyn.derivations.model_a.gradient_flow import flow_functions

    rhs, corr, jac, star = flow_functions(config.activation, config.logit_scale, "numpy")
    params = _params(config)
    scale = _scale(config)
    s_cross = attention_crossing(config, thresholds.attention(config.K))
    # after T* the flow is not needed; bound the horizon generously (T* ~ K D^3 at most)
    horizon = 1e6 * (config.D ** 3 + 1) / max(config.vstar_norm2, 1e-300)
    return PlaneFlow(
        rate=lambda c1, s: rhs(c1, math.exp(-s / scale), *params),
        jacobian=lambda c1, s: jac(c1, math.exp(-s / scale), *params),
        correction=lambda c1, s: corr(c1, math.exp(-s / scale), *params),
        c1_star=lambda s: star(math.exp(-s / scale), *params),
        first_step=lambda: first_map_step(config),
        scale=scale, s_cross=s_cross, eta=config.step_size, horizon=horizon)


def integrate_plane_flow(flow: PlaneFlow, t1_fraction: float, order: int = 0,
                         rtol: float = 1e-11) -> tuple[float, float, float, float]:
    """(tau1, tau_star, s1, s_star) of ``flow`` (order 0) or of its modified equation
    ``F + eta F_1`` at ``flow.eta`` (order 1; from the map's state at t = 1): Radau with the
    flow's Jacobian (order 1: finite differences, scipy's), events ``C1 - t1_fraction C1*(s)``
    (upward) and ``s - s_cross``; tau1 is NaN when T* comes first."""
    from scipy.integrate import solve_ivp

    if not math.isfinite(flow.s_cross):
        raise ValueError("T* is never reached when the attention threshold is >= 1/K")
    eta, scale = flow.eta, flow.scale

    def field(tau, y):
        f = flow.rate(y[0], y[1])
        if order == 1:
            g = flow.correction(y[0], y[1])
            return [f[0] + eta * g[0], f[1] + eta * g[1]]
        return f

    def jacobian(tau, y):  # order 1 uses the order-0 Jacobian (Newton matrix only)
        return np.array(flow.jacobian(y[0], y[1]), dtype=float)

    def t1_event(tau, y):
        return y[0] - t1_fraction * flow.c1_star(y[1])

    def tstar_event(tau, y):
        return y[1] - flow.s_cross

    t1_event.direction = 1
    t1_event.terminal = True
    tstar_event.direction = 1
    tstar_event.terminal = True
    if order == 1:
        tau0, y0 = eta, list(flow.first_step())
    else:
        tau0, y0 = 0.0, [0.0, 0.0]
    # order 1: finite-difference Jacobian (the order-0 one slows Newton down at large eta)
    options = dict(method="Radau", jac=jacobian if order == 0 else None, rtol=rtol,
                   atol=[1e-14, 1e-14 * scale], first_step=1e-6)
    # two legs: to t1 (both events), then to T* (no t1 event: C1* is not solved after t1)
    sol = solve_ivp(field, (tau0, flow.horizon), y0, events=(t1_event, tstar_event), **options)
    if not sol.success:
        raise RuntimeError(f"flow integration failed: {sol.message}")
    tau1 = s1 = math.nan
    if len(sol.t_events[0]) and len(sol.t_events[1]) == 0:
        tau1, s1 = float(sol.t_events[0][0]), float(sol.y_events[0][0][1])
        sol = solve_ivp(field, (sol.t[-1], flow.horizon), sol.y[:, -1], events=(tstar_event,),
                        **options)
        if not sol.success:
            raise RuntimeError(f"flow integration failed: {sol.message}")
        events, states = sol.t_events[0], sol.y_events[0]
    else:
        events, states = sol.t_events[1], sol.y_events[1]
    if len(events) == 0:
        raise RuntimeError("flow integration failed: T* not reached")
    return tau1, float(events[0]), s1, float(states[0][1])


# --------------------------------------------------------------------------------------------
# arbitrary precision: Taylor series through t1, then the slow-manifold quadrature
# --------------------------------------------------------------------------------------------

def _mp_params(config: TeacherConfig):
    import mpmath

    return (mpmath.mpf(config.D), mpmath.mpf(config.K), mpmath.mpf(repr(config.vstar_norm2)),
            mpmath.mpf(repr(config.kappa)))


def _mp_scale(config: TeacherConfig):
    import mpmath

    return mpmath.mpf(config.D) if config.logit_scale == "D" else mpmath.sqrt(config.D)


def _mp_attention_crossing(config: TeacherConfig, level):
    """:func:`attention_crossing` at the working precision (level: the T* attention)."""
    import mpmath

    room = 1 / mpmath.mpf(repr(level)) - config.K
    if room <= 0:
        return mpmath.inf
    return -_mp_scale(config) * mpmath.log(room / (config.D - config.K))


def _first_root(g, start, step, limit):
    """First upward zero of g on (start, limit], bracketed on a grid of ``step`` and refined
    by bisection-safeguarded secant (Illinois); g is cheap (dense Taylor output)."""
    import mpmath

    a, ga = start, g(start)
    while a < limit:
        b = a + step
        gb = g(b)
        if ga < 0 <= gb:
            return mpmath.findroot(g, (a, b), solver="illinois")
        a, ga = b, gb
        step *= 1.25
    raise RuntimeError("event not reached")


def taylor_phase_one(config: TeacherConfig, thresholds: Thresholds):
    """mpmath Taylor integration (:func:`mpmath.odefun`, current precision) of the flow from
    zero to tau1 (root refinement on the dense output). Returns (tau1, C1(tau1), s1)."""
    import mpmath

    from rdyn.derivations.model_a.gradient_flow import flow_functions

    rhs, _, _, star = flow_functions(config.activation, config.logit_scale, "mpmath")
    params = _mp_params(config)
    scale = _mp_scale(config)
    frac = mpmath.mpf(repr(thresholds.t1_fraction))

    def field(tau, y):
        return rhs(y[0], mpmath.exp(-y[1] / scale), *params)

    zero = mpmath.mpf(0)
    # degree ~ digits: measured fastest at 40 digits (degree 20: 2.7x, 60: 3x slower)
    solution = mpmath.odefun(field, zero, [zero, zero], degree=max(20, mpmath.mp.dps))
    rate0 = _lambda_mp(config)(mpmath.mpf(1))

    def g(tau):
        c1, ss = solution(tau)
        return c1 - frac * star(mpmath.exp(-ss / scale), *params)

    tau1 = _first_root(g, mpmath.mpf(0), mpmath.mpf(1) / (4 * rate0), mpmath.mpf(10) ** 6 / rate0)
    c1, s1 = solution(tau1)
    return tau1, c1, s1


def float_phase_one(config: TeacherConfig, thresholds: Thresholds):
    """float64 (DOP853, rtol 1e-13) integration of the flow from zero to tau1 (non-stiff
    there: the C1 rate is about 1/2 while p is near 1/D). Returns (tau1, C1(tau1), s1)."""
    return plane_phase_one(homogeneous_flow(config, thresholds), thresholds.t1_fraction)


def plane_phase_one(flow: PlaneFlow, t1_fraction: float):
    """:func:`float_phase_one` for any :class:`PlaneFlow`: (tau1, C1(tau1), s1)."""
    from scipy.integrate import solve_ivp

    def t1_event(tau, y):
        return y[0] - t1_fraction * flow.c1_star(y[1])

    t1_event.direction = 1
    t1_event.terminal = True
    sol = solve_ivp(lambda tau, y: flow.rate(y[0], y[1]), (0, 1e7),
                    [0.0, 0.0], method="DOP853", events=t1_event, rtol=1e-13,
                    atol=[1e-15, 1e-15 * flow.scale], dense_output=False)
    if not sol.success or len(sol.t_events[0]) == 0:
        raise RuntimeError(f"phase-one integration failed: {sol.message}")
    c1, s1 = sol.y_events[0][0]
    return float(sol.t_events[0][0]), float(c1), float(s1)


def transient_shift(config: TeacherConfig, c1, s1):
    """Asymptotic phase of the C1 transient after t1: the manifold trajectory that the flow
    from (C1, s1) approaches starts at ``s1 + dF_s/dC1 * (C1 - C1_manifold(s1)) / lambda(s1)``
    (first order in the distance to the manifold). Returns that shift of s."""
    import mpmath
    import sympy as sp

    from rdyn.derivations.model_a import gradient_flow as gf

    sm = gf.slow_manifold(config.activation, config.logit_scale)
    f = gf.vector_field(config.activation, config.logit_scale)
    star = gf.c1_fixed_point(config.activation)
    slope = sp.diff(f.s_rate, gf.C1).subs(gf.C1, star + sm.lag)
    args = (gf.e,) + gf.PARAMETER_SYMBOLS
    fn = sp.lambdify(args, [star + sm.lag, slope, sm.rate], "mpmath", cse=True)
    ee = mpmath.exp(-mpmath.mpf(s1) / _mp_scale(config))
    manifold, ds_dc1, rate = fn(ee, *_mp_params(config))
    return ds_dc1 * (mpmath.mpf(c1) - manifold) / rate


def _lambda_mp(config: TeacherConfig):
    import sympy as sp

    from rdyn.derivations.model_a import gradient_flow as gf

    expr = gf.c1_relaxation_rate(config.activation, config.logit_scale)
    f = sp.lambdify((gf.e,) + gf.PARAMETER_SYMBOLS, expr, "mpmath")
    params = _mp_params(config)
    return lambda ee: f(ee, *params)


def slow_integral(config: TeacherConfig, s_from, s_to, lag: bool = True,
                  exact: bool = True):
    """``int_{s_from}^{s_to} ds / G(s)`` on the slow manifold as an integral over
    ``u = log e = -s/scale`` (G = G0 + G1 with the lag, G0 without). ``exact``: mpmath
    tanh-sinh at the current precision; else float64 ``scipy.integrate.quad``.
    Returns (value, estimated absolute error)."""
    from rdyn.derivations.model_a.gradient_flow import slow_functions, slow_rate

    if not exact:
        from scipy.integrate import quad

        coefficients, _ = slow_functions(config.activation, config.logit_scale, "numpy")
        params = _params(config)
        scale = _scale(config)
        value, err = quad(lambda u: scale / slow_rate(coefficients(math.exp(u), *params), lag),
                          -float(s_to) / scale, -float(s_from) / scale, epsabs=0,
                          epsrel=1e-13, limit=200)
        return value, err
    import mpmath

    coefficients, _ = slow_functions(config.activation, config.logit_scale, "mpmath")
    params = _mp_params(config)
    scale = _mp_scale(config)

    def integrand(u):
        return scale / slow_rate(coefficients(mpmath.exp(u), *params), lag)

    value, err = mpmath.quad(integrand, [-s_to / scale, -s_from / scale], error=True)
    if err > abs(value) * mpmath.mpf(10) ** (8 - mpmath.mp.dps):  # split and retry
        nodes = mpmath.linspace(-s_to / scale, -s_from / scale, 9)
        value, err = mpmath.quad(integrand, nodes, error=True)
    return value, err


def plane_slow_rate(flow: PlaneFlow, s: float, lag: bool = True) -> float:
    """``G(s) = G0 + G1`` from a :class:`PlaneFlow`'s numbers (the reduction of
    :mod:`rdyn.derivations.model_a.gradient_flow_general`, step 3): ``G0 = F_s(C1*, s)``,
    ``lambda = -F_C1,C1``, ``dC1*/ds = -F_C1,s / F_C1,C1``, ``lag = -(dC1*/ds) G0/lambda``,
    ``G1 = F_s,C1 lag``, every partial at ``C1 = C1*(s)``."""
    star = flow.c1_star(s)
    g0 = flow.rate(star, s)[1]
    if not lag:
        return g0
    (f_cc, f_cs), (f_sc, _) = flow.jacobian(star, s)
    slope = -f_cs / f_cc
    return g0 + f_sc * (-slope * g0 / -f_cc)


def plane_slow_limits(flow: PlaneFlow, t1_fraction: float, lag: bool = True) -> PhaseLimits:
    """:func:`slow_limits` in float64 for any :class:`PlaneFlow`: tau1 by :func:`plane_phase_one`,
    then ``tau_star = tau1 + int_{s1 + shift}^{s_cross} ds / G`` (``G`` by
    :func:`plane_slow_rate`, ``scipy.integrate.quad`` in ``u = -s/scale`` at relative
    tolerance 1e-10; ``shift = F_s,C1 (C1 - C1* - lag)/lambda`` at s1, as
    :func:`transient_shift`)."""
    from scipy.integrate import quad

    if not math.isfinite(flow.s_cross):
        raise ValueError("T* is never reached when the attention threshold is >= 1/K")
    tau1, c1, s1 = plane_phase_one(flow, t1_fraction)
    star = flow.c1_star(s1)
    g0 = flow.rate(star, s1)[1]
    (f_cc, f_cs), (f_sc, _) = flow.jacobian(star, s1)
    rate = -f_cc
    lag_1 = (f_cs / f_cc) * g0 / rate if lag else 0.0
    shift = f_sc * (c1 - (star + lag_1)) / rate
    if s1 + shift >= flow.s_cross:  # T* inside the transient
        raise ValueError("T* is reached before C1 is slaved; use method 'flow'")
    scale = flow.scale
    integral, error = quad(lambda u: scale / plane_slow_rate(flow, -u * scale, lag),
                           -flow.s_cross / scale, -(s1 + shift) / scale, epsabs=0,
                           epsrel=1e-10, limit=200)
    return PhaseLimits("slow", tau1, tau1 + integral, flow.eta, s1, flow.s_cross,
                       detail={"s_shift": shift, "quadrature_error": error})


def slow_limits(config: TeacherConfig, thresholds: Thresholds = Thresholds(),
                dps: int | None = None, lag: bool = True) -> PhaseLimits:
    """tau1 from the flow (mpmath Taylor at ``dps``; float64 DOP853 when ``dps`` is None),
    tau_star = tau1 + int_{s1 + shift}^{s_star} ds / G (quadrature at ``dps`` or 20 digits);
    ``shift`` is :func:`transient_shift`."""
    import mpmath

    with mpmath.workdps((dps or 20) + 10):
        if dps is None:
            tau1, c1, s1 = float_phase_one(config, thresholds)
        else:
            tau1, c1, s1 = taylor_phase_one(config, thresholds)
        s_star = _mp_attention_crossing(config, thresholds.attention(config.K))
        if not mpmath.isfinite(s_star):
            raise ValueError("T* is never reached when the attention threshold is >= 1/K")
        shift = transient_shift(config, c1, s1)
        if s1 + shift >= s_star:  # T* inside the transient: not a slow-manifold configuration
            raise ValueError("T* is reached before C1 is slaved; use method 'flow'")
        integral, error = slow_integral(config, s1 + shift, s_star, lag, exact=dps is not None)
        tau_star = tau1 + integral
        cast = float if dps is None else (lambda x: +x)
        eta = config.step_size if dps is None else \
            mpmath.mpf(str(config.exact_step_size().evalf(mpmath.mp.dps + 5)))
        return PhaseLimits("slow", cast(tau1), cast(tau_star), eta, cast(s1),
                           cast(s_star), detail={"s_shift": cast(shift),
                                                 "quadrature_error": cast(error)})


def flow_limits(config: TeacherConfig, thresholds: Thresholds = Thresholds()) -> PhaseLimits:
    return plane_flow_limits(homogeneous_flow(config, thresholds), thresholds.t1_fraction)


def plane_flow_limits(flow: PlaneFlow, t1_fraction: float) -> PhaseLimits:
    """The flow (order 0) and its first-order modified equation (order 1) of any
    :class:`PlaneFlow`."""
    tau1, tau_star, s1, s_star = integrate_plane_flow(flow, t1_fraction, order=0)
    tau1_m, tau_star_m, _, _ = integrate_plane_flow(flow, t1_fraction, order=1)
    return PhaseLimits("flow", tau1, tau_star, flow.eta, s1, s_star, tau1_m, tau_star_m)


def check_thresholds(D: int, K: int, thresholds: Thresholds) -> None:
    """FieldError (one line, naming the threshold) when the flow's events cannot happen."""
    from rdyn.derivations.fields import FieldError

    if not thresholds.t1_fraction < 1:
        raise FieldError("t1_fraction", "the flow's C1 stays below C1*: t1 is never reached with "
                         "{t1_fraction} >= 1 (use {method} map)", "method")
    if not thresholds.attention(K) > 1 / D:
        raise FieldError("tstar_attention", "{tstar_attention} <= 1/D: T* = 0 (p(0) = 1/D); use "
                         "{method} map", "method")


def phase_limits(config: TeacherConfig, method: str = "slow",
                 thresholds: Thresholds = Thresholds(), dps: int | None = None) -> PhaseLimits:
    """tau1 = lim eta t1 and tau_star = lim eta T* (and t1, T_star = tau/eta) by ``method``:
    ``flow`` (float64 gradient flow and its first-order modified equation) or ``slow`` (mpmath
    at ``dps`` digits, default 30: Taylor flow through t1, slow-manifold quadrature)."""
    check_thresholds(config.D, config.K, thresholds)
    if method not in ("flow", "slow"):
        raise ValueError(f"unknown method {method!r}")
    return checked_limits(lambda: flow_limits(config, thresholds) if method == "flow"
                          else slow_limits(config, thresholds, dps))


def checked_limits(compute: Callable[[], PhaseLimits]) -> PhaseLimits:
    """``compute()``, the eta -> 0 phase limits of one configuration (homogeneous or smooth
    activation), or :class:`LimitsUnavailable` in one line: the float64 flow fails (a scipy
    failure, an overflow) or its tau1, tau_star are not finite."""
    try:
        limits = compute()
    except (RuntimeError, ArithmeticError, ValueError) as exc:  # scipy failures, overflow
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise LimitsUnavailable(f"the eta -> 0 phase limits cannot be computed for this "
                                f"configuration in float64 ({reason}); use --method map") from None
    if not all(math.isfinite(float(x)) for x in (limits.tau1, limits.tau_star)):
        raise LimitsUnavailable("the eta -> 0 phase limits are not finite for this "
                                "configuration (the flow leaves the float64 range or misses "
                                "t1); use --method map")
    return limits


class LimitsUnavailable(ValueError):
    """The eta -> 0 limits of a configuration cannot be computed (the float64 flow fails or
    overflows, e.g. at a very large ||V*||_F^2); a one-line message."""


LIMIT_NAMES = {"flow": "gradient_flow", "slow": "slow_manifold"}


def limits_summary(limits: PhaseLimits) -> dict:
    """The JSON object of ``rdyn teacher --method flow|slow``: ``tau1``, ``tau_star`` (eta -> 0
    limits of eta t1, eta T*), ``t1``, ``T_star`` (= tau/eta, reals), ``limit`` (which limit),
    ``eta``, ``s1``, ``s_star`` (C2 + C3 at the events); flow adds ``modified`` (first-order
    modified equation at this eta: ``tau1``, ``tau_star``, ``t1``, ``T_star``)."""
    out = {"limit": LIMIT_NAMES[limits.method], "method": limits.method,
           "tau1": limits.tau1, "tau_star": limits.tau_star,
           "t1": limits.t1, "T_star": limits.T_star, "eta": limits.eta,
           "s1": limits.s1, "s_star": limits.s_star}
    if limits.tau1_mod is not None:
        # null where the modified flow has no such event (its tau1 is nan when it starts, one
        # step in, already past t1: a map that reaches t1 at its first step)
        def reported(value):
            return value if math.isfinite(float(value)) else None

        out["modified"] = {"tau1": reported(limits.tau1_mod),
                           "tau_star": reported(limits.tau_star_mod),
                           "t1": reported(limits.tau1_mod / limits.eta),
                           "T_star": reported(limits.tau_star_mod / limits.eta)}
    out.update({k: v for k, v in (limits.detail or {}).items()})
    return out
