"""Phase boundaries of Model A with a smooth activation in the small-step limit:
the gradient flow and the slow manifold of the map of :mod:`rdyn.reduced_dynamics.model_a.smooth`.

The map is ``x' = x + eta F(x)`` with F free of eta in the state ``x = (C1, s)``, ``s = C2 + C3``
(derived for every activation in :mod:`rdyn.derivations.model_a.gradient_flow_general`):
``dC1/dtau = D m2(C1, e)``, ``ds/dtau = C1 ||V*||^2 (m1 - m2) / ((D-K)(K + (D-K) e))`` (logit
scale D; times sqrt(D) for the sqrt(D) scale), ``e = exp(-s/scale)``. This module evaluates that
derived F on the moments the float64 map uses (erf, GELU: the compiled closed forms of
:mod:`rdyn.reduced_dynamics.model_a.compiled`; the others: the map's Gauss-Hermite rule with the
node count :func:`rdyn.reduced_dynamics.model_a.smooth.choose_rule` picks for the float64 run)
and hands it, as a :class:`rdyn.reduced_dynamics.model_a.limits.flow.PlaneFlow`, to the event and integration
machinery of :mod:`rdyn.reduced_dynamics.model_a.limits.flow` (the same events: ``tau1`` the first upward zero
of ``C1 - t1_fraction C1*(s)``, ``C1*`` solved numerically per s by Brent's method;
``tau_star`` the zero of ``s - s_cross``).

Derivatives (Radau's Newton matrix, the slow manifold's ``lambda``, ``dC1*/ds`` and
``F_s,C1``): ``F_C1,C1 = D dm2/dC1`` from the derived derivative (closed form, or ``E[...
sigma'']`` on the rule); the other three entries by central differences with the stated steps
``h_C1 = 6e-6 max(1, |C1|)`` and ``h_s = 6e-6 scale`` (about eps^(1/3): truncation and
rounding both ~1e-11 relative). The modified equation's ``F_1 = -1/2 (DF) F`` is a central
directional difference along F (step 6e-6 in the units (1, scale) of (C1, s)).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from rdyn.derivations.model_a.gradient_flow_general import rate_function
from rdyn.reduced_dynamics.model_a.limits.flow import (PhaseLimits, PlaneFlow, check_thresholds,
                                        plane_flow_limits, plane_slow_limits)
from rdyn.reduced_dynamics.model_a.gauss_hermite import float64_rule
from rdyn.reduced_dynamics.model_a.dynamics import Thresholds, attention_crossing
from rdyn.reduced_dynamics.model_a.smooth import (COMPILED, Expectations, Numbers, SmoothConfig,
                                                  choose_rule, default_probes, eta_limit)

FD_STEP = 6e-6  # relative central-difference step of the Jacobian entries without closed form


@dataclass(frozen=True)
class SmoothField:
    """The derived vector field of one smooth configuration, its moments evaluated as the float64
    map evaluates them: erf and GELU by their compiled closed forms (``closed_form``: the numba
    function of :mod:`rdyn.reduced_dynamics.model_a.compiled`), the others on the Gauss-Hermite
    rule (``nodes``, ``quadrature_error``: as the float64 map run chooses them)."""

    config: SmoothConfig
    expectations: Expectations
    nodes: int
    quadrature_error: float
    closed_form: Callable | None = None

    @property
    def scale(self) -> float:
        return self.config.scale

    def _level(self, e: float):
        """What the moments at ``e`` share across C1 (the quadrature's teacher averages)."""
        return None if self.closed_form is not None else self.expectations.level(e)

    def _moments(self, c1: float, e: float, lvl, derivative: bool = False):
        """(m1, m2, dm2/dC1 or None) at (C1, e)."""
        if self.closed_form is not None:
            c = self.config
            _, m1, m2, dm2, _, _ = self.closed_form(c1, e, float(c.D), float(c.K), c.row_norm)
            return m1, m2, dm2
        m1, m2, dm2, _ = self.expectations.moments(c1, lvl, derivative=derivative)
        return float(m1), float(m2), None if dm2 is None else float(dm2)

    def rate(self, c1: float, s: float) -> list[float]:
        """``(dC1/dtau, ds/dtau)`` at (C1, s)."""
        e = math.exp(-s / self.scale)
        return self._rate_at(c1, e, self._level(e))

    def _rate_at(self, c1, e, lvl):
        c = self.config
        m1, m2, _ = self._moments(c1, e, lvl)
        return rate_function(c.logit_scale)(c1, e, c.D, c.K, c.vstar_norm2, m1, m2)

    def jacobian(self, c1: float, s: float) -> list[list[float]]:
        """``[[F_C1,C1, F_C1,s], [F_s,C1, F_s,s]]``: F_C1,C1 derived, the rest central
        differences (module docstring)."""
        e = math.exp(-s / self.scale)
        lvl = self._level(e)
        _, _, dm2 = self._moments(c1, e, lvl, derivative=True)
        hc = FD_STEP * max(1.0, abs(c1))
        up, down = self._rate_at(c1 + hc, e, lvl), self._rate_at(c1 - hc, e, lvl)
        hs = FD_STEP * self.scale
        ahead, behind = self.rate(c1, s + hs), self.rate(c1, s - hs)
        return [[self.config.D * dm2, (ahead[0] - behind[0]) / (2 * hs)],
                [(up[1] - down[1]) / (2 * hc), (ahead[1] - behind[1]) / (2 * hs)]]

    def correction(self, c1: float, s: float) -> list[float]:
        """``F_1 = -1/2 (DF) F``: the directional derivative of F along F by central
        differences, step ``FD_STEP`` in the units (1, scale) of (C1, s)."""
        f = self.rate(c1, s)
        size = max(abs(f[0]), abs(f[1]) / self.scale)
        if size == 0:
            return [0.0, 0.0]
        h = FD_STEP * max(1.0, abs(c1), s / self.scale) / size
        ahead = self.rate(c1 + h * f[0], s + h * f[1])
        behind = self.rate(c1 - h * f[0], s - h * f[1])
        return [-(ahead[0] - behind[0]) / (4 * h), -(ahead[1] - behind[1]) / (4 * h)]

    def c1_star(self, s: float) -> float:
        """C1*(s): the positive zero of m2 at fixed s (Brent's method on a doubling bracket
        from [0, 1], to float64 resolution; inf if m2 > 0 up to C1 = 1e12, 0 if m2(0) <= 0)."""
        from scipy.optimize import brentq

        e = math.exp(-s / self.scale)
        lvl = self._level(e)

        def m2(c):
            return self._moments(c, e, lvl)[1]

        if m2(0.0) <= 0:
            return 0.0
        lo, hi = 0.0, 1.0
        while m2(hi) > 0:
            lo, hi = hi, 2 * hi
            if hi > 1e12:
                return math.inf
        return brentq(m2, lo, hi, xtol=1e-300, rtol=8.9e-16, maxiter=200)


def step_size(config: SmoothConfig) -> float:
    """The configured eta, or the map's default eta_limit / 2 (as model_a.smooth.run)."""
    return config.eta if config.eta is not None else eta_limit(config) / 2


def smooth_field(config: SmoothConfig, thresholds: Thresholds = Thresholds()) -> SmoothField:
    """The field on the node count the float64 map run would choose (same probes)."""
    level = thresholds.attention(config.K)
    n, error = choose_rule(config, None, default_probes(config, None, level))
    ex = Expectations(config, Numbers(config.activation, None), float64_rule(n))
    closed = None
    if config.activation.name in COMPILED:
        from rdyn.reduced_dynamics.model_a import compiled as mc

        compiled = mc.compiled_iterate if config.activation.name == "erf" else mc.compiled_gelu_iterate
        closed = compiled()[1]
    return SmoothField(config, ex, n, error, closed)


def smooth_plane_flow(field: SmoothField, thresholds: Thresholds = Thresholds()) -> PlaneFlow:
    """``field`` as the :class:`PlaneFlow` of :mod:`rdyn.reduced_dynamics.model_a.limits.flow`."""
    c = field.config
    eta = step_size(c)

    def first_step():
        C1, C2, C3, _ = field.expectations.step(0.0, 0.0, 0.0, eta)
        return float(C1), float(C2 + C3)

    return PlaneFlow(rate=field.rate, jacobian=field.jacobian, correction=field.correction,
                     c1_star=field.c1_star, first_step=first_step, scale=field.scale,
                     s_cross=attention_crossing(c, thresholds.attention(c.K)), eta=eta,
                     horizon=1e6 * (c.D ** 3 + 1) / c.vstar_norm2)


def smooth_phase_limits(config: SmoothConfig, method: str = "flow",
                        thresholds: Thresholds = Thresholds()) -> PhaseLimits:
    """tau1 = lim eta t1 and tau_star = lim eta T* of the smooth map (float64): ``flow`` (Radau,
    and the first-order modified equation at the configured eta) or ``slow`` (DOP853 through
    t1, then the slow-manifold quadrature)."""
    from rdyn.reduced_dynamics.model_a.limits.flow import checked_limits

    check_thresholds(config.D, config.K, thresholds)
    if method not in ("flow", "slow"):
        raise ValueError(f"unknown method {method!r}")
    flow = smooth_plane_flow(smooth_field(config, thresholds), thresholds)
    return checked_limits(lambda: (plane_flow_limits if method == "flow" else plane_slow_limits)(
        flow, thresholds.t1_fraction))
