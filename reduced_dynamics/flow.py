"""Phase boundaries of Model A in the small-step limit: gradient flow and slow manifold.

``tau = eta t``. The map ``x' = x + eta F(x)`` (:mod:`rdyn.derivations.gradient_flow`) has, as
eta -> 0, the flow ``dx/dtau = F(x)`` in the state ``x = (C1, s)``, ``s = C2 + C3``
(``C3 = K C2/(D-K)``). The phase boundaries are the map's (SPEC.md, "Phase boundaries";
:mod:`rdyn.reduced_dynamics.model_a`) written as event functions of the flow:

* ``t1 = min{t >= 1 : C1 >= t1_fraction C1*}``  ->  ``tau1``: first zero of
  ``C1 - t1_fraction C1*(s)`` for tau > 0 (upward);
* ``T* = min{t : p >= tstar_attention}``  ->  ``tau_star``: first zero of
  ``s - s_cross`` with ``s_cross`` = :func:`rdyn.reduced_dynamics.model_a.attention_crossing`
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
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rdyn.reduced_dynamics.model_a import TeacherConfig, Thresholds, attention_crossing

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
    from rdyn.reduced_dynamics.model_a_kernels import kernels

    k = kernels(config.activation, config.logit_scale, "float64")
    c = k.prepare(config.D, config.K, config.step_size, config.vstar_norm2, config.kappa,
                  config.sigma_prime_zero)
    C1, C2, C3 = k.step(0.0, 0.0, 0.0, c)
    return C1, C2 + C3


def integrate_flow(config: TeacherConfig, thresholds: Thresholds = Thresholds(),
                   order: int = 0, rtol: float = 1e-11) -> tuple[float, float, float, float]:
    """(tau1, tau_star, s1, s_star) of the float64 flow (order 0) or of the modified
    equation at the configured eta (order 1; starts from the map's state at t = 1)."""
    from scipy.integrate import solve_ivp

    from rdyn.derivations.gradient_flow import flow_functions

    rhs, corr, jac, star = flow_functions(config.activation, config.logit_scale, "numpy")
    params = _params(config)
    scale = _scale(config)
    eta = config.step_size
    s_cross = attention_crossing(config, thresholds.attention(config.K))
    if not math.isfinite(s_cross):
        raise ValueError("T* is never reached when the attention threshold is >= 1/K")
    frac = thresholds.t1_fraction

    def field(tau, y):
        ee = math.exp(-y[1] / scale)
        f = rhs(y[0], ee, *params)
        if order == 1:
            g = corr(y[0], ee, *params)
            return [f[0] + eta * g[0], f[1] + eta * g[1]]
        return f

    def jacobian(tau, y):  # order 1 uses the order-0 Jacobian (Newton matrix only)
        return np.array(jac(y[0], math.exp(-y[1] / scale), *params), dtype=float)

    def t1_event(tau, y):
        return y[0] - frac * star(math.exp(-y[1] / scale), *params)

    def tstar_event(tau, y):
        return y[1] - s_cross

    t1_event.direction = 1
    tstar_event.direction = 1
    tstar_event.terminal = True
    if order == 1:
        tau0, y0 = eta, list(first_map_step(config))
    else:
        tau0, y0 = 0.0, [0.0, 0.0]
    # after T* the flow is not needed; bound the horizon generously (T* ~ K D^3 at most)
    horizon = 1e6 * (config.D ** 3 + 1) / max(config.vstar_norm2, 1e-300)
    # order 1: finite-difference Jacobian (the order-0 one slows Newton down at large eta)
    sol = solve_ivp(field, (tau0, horizon), y0, method="Radau",
                    jac=jacobian if order == 0 else None,
                    events=(t1_event, tstar_event), rtol=rtol, atol=[1e-14, 1e-14 * scale],
                    first_step=1e-6)
    if not sol.success or len(sol.t_events[1]) == 0:
        raise RuntimeError(f"flow integration failed: {sol.message}")
    t1_hits = [t for t in sol.t_events[0] if t > 0]
    tau1 = t1_hits[0] if t1_hits else math.nan
    s1 = sol.y_events[0][0][1] if t1_hits else math.nan
    return float(tau1), float(sol.t_events[1][0]), float(s1), float(sol.y_events[1][0][1])


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

    from rdyn.derivations.gradient_flow import flow_functions

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
    from scipy.integrate import solve_ivp

    from rdyn.derivations.gradient_flow import flow_functions

    rhs, _, _, star = flow_functions(config.activation, config.logit_scale, "numpy")
    params = _params(config)
    scale = _scale(config)
    frac = thresholds.t1_fraction

    def t1_event(tau, y):
        return y[0] - frac * star(math.exp(-y[1] / scale), *params)

    t1_event.direction = 1
    t1_event.terminal = True
    sol = solve_ivp(lambda tau, y: rhs(y[0], math.exp(-y[1] / scale), *params), (0, 1e7),
                    [0.0, 0.0], method="DOP853", events=t1_event, rtol=1e-13,
                    atol=[1e-15, 1e-15 * scale], dense_output=False)
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

    from rdyn.derivations import gradient_flow as gf

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

    from rdyn.derivations import gradient_flow as gf

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
    from rdyn.derivations.gradient_flow import slow_functions, slow_rate

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
    tau1, tau_star, s1, s_star = integrate_flow(config, thresholds, order=0)
    tau1_m, tau_star_m, _, _ = integrate_flow(config, thresholds, order=1)
    return PhaseLimits("flow", tau1, tau_star, config.step_size, s1, s_star, tau1_m, tau_star_m)


def phase_limits(config: TeacherConfig, method: str = "slow",
                 thresholds: Thresholds = Thresholds(), dps: int | None = None) -> PhaseLimits:
    """tau1 = lim eta t1 and tau_star = lim eta T* (and t1, T_star = tau/eta) by ``method``:
    ``flow`` (float64 gradient flow and its first-order modified equation) or ``slow`` (mpmath
    at ``dps`` digits, default 30: Taylor flow through t1, slow-manifold quadrature)."""
    if not thresholds.t1_fraction < 1:
        raise ValueError("the flow's C1 stays below C1*: t1 is never reached with "
                         "--t1-fraction >= 1 (use --method map)")
    if not thresholds.attention(config.K) > 1 / config.D:
        raise ValueError("--tstar-attention <= 1/D: T* = 0 (p(0) = 1/D); use --method map")
    if method not in ("flow", "slow"):
        raise ValueError(f"unknown method {method!r}")
    try:
        limits = (flow_limits(config, thresholds) if method == "flow"
                  else slow_limits(config, thresholds, dps))
    except (RuntimeError, ArithmeticError, ValueError) as exc:  # scipy failures, overflow
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise LimitsUnavailable(f"the eta -> 0 phase limits cannot be computed for this "
                                f"configuration in float64 ({reason}); use --method map") from None
    if not all(math.isfinite(float(x)) for x in (limits.tau1, limits.tau_star)):
        raise LimitsUnavailable("the eta -> 0 phase limits are not finite for this "
                                "configuration (the flow leaves the float64 range); use "
                                "--method map")
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
        out["modified"] = {"tau1": limits.tau1_mod, "tau_star": limits.tau_star_mod,
                           "t1": limits.tau1_mod / limits.eta,
                           "T_star": limits.tau_star_mod / limits.eta}
    out.update({k: v for k, v in (limits.detail or {}).items()})
    return out
