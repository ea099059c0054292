"""Certified iteration of Model A's collapsed map for a smooth activation whose expectations
are all closed forms (erf, GELU), on python-flint ``arb`` balls. tanh, softplus
and sigmoid (no closed forms) go to :mod:`rdyn.reduced_dynamics.certified.strip`:
a strip quadrature with a proved remainder, the same loop.

The map is :mod:`rdyn.reduced_dynamics.model_a.smooth`'s (derived in
:mod:`rdyn.derivations.model_a.collapsed_general`): ``C1' = C1 + eta D m2``, ``C2' = C2 - eta g_in /
scale``, ``C3' = C3 + eta g_out / scale`` with the logit gradients of
:func:`rdyn.derivations.model_a.collapsed_general.logit_gradient_functions` at ``(hY1, hY2) = (m1, m2)``.
``m1``, ``m2`` are the closed forms of :func:`rdyn.derivations.activations.closed_moments`
(the same sympy expressions the float64 compiled loop evaluates), lambdified for balls by
:func:`rdyn.derivations.activations.guarded_arb_lambdify`, at the geometry of
``e = exp(-(C2 + C3)/scale)``: ``p = 1/(K + N e)``, ``q = e p``, ``s2 = sqrt(K p^2 + N q^2)``,
``s_res = q sqrt(N/K)/s2``, ``rho = p/s2``, ``W^2 = smoothing_width(r s_res)``, ``r =
sqrt(||V*||_F^2 / M)`` (``model_a.smooth.Expectations.level``).

Rigour. Every operation is a ball operation (python-flint guarantees that each result
contains the exact image of its arguments), so by induction each state ball contains the
exact real trajectory from the exact inputs: D, K, M exact; eta, ||V*||_F^2 and the t1
fraction as their decimal forms (eta: the decimal of the float the float64 run uses); the T*
level 1/(2K) exactly (:mod:`rdyn.reduced_dynamics.certified.exact_inputs`). Branch points are guarded:
a square root, fractional power or log of a ball not certainly positive, a quotient by a ball
containing 0 raises :class:`~rdyn.derivations.activations.BranchPointError`, and the run stops
there ("not certified", ``stopped`` says where). A non-finite state stops it too.

Phase boundaries, certified as in :mod:`rdyn.reduced_dynamics.certified.arb_pass` (the event step is
the first whose test enclosure is certainly >= 0, every earlier one certainly < 0):
T*: ``p - level``; t1 (t >= 1): ``-m2(C1 / fraction, p)``, the float64 path's test
(``C1 >= fraction C1*`` iff ``m2(C1 / fraction) <= 0``, since at fixed p, m2 is positive
below its positive root C1* and negative above it).

Dependency effect. C1 enters its own update twice (``C1 + eta D m2(C1)``): evaluated on a ball,
the radius would grow by about ``1 + eta D |dm2/dC1|`` per step instead of
``|1 + eta D dm2/dC1| < 1``, i.e. geometrically. The C1 update is therefore taken in mean-value
form in C1: for every e in the ball E of the step, ``C1 -> C1 + eta D m2(C1, e)`` is smooth
(m2 is a Gaussian expectation of a smooth integrand with Gaussian tails, differentiable under
the integral), so by the mean-value theorem on the ball X of C1, with c = mid(X)

    C1' in  c + eta D m2(c, E) + (1 + eta D dm2/dC1(X, E)) (X - c),

dm2/dC1 being the derived closed form of :func:`rdyn.derivations.activations.closed_moments`
(the same expression the stability test uses). C2 and C3 are plain ball updates: they enter
through ``e`` with a factor O(eta/scale^2), so their dependency effect is small but still
geometric (measured: 0.1 to 0.3 bits per step, e.g. 140-bit balls lose 30 digits in about
130 steps of erf at D = 6, K = 2, ||V*||^2 = 2 near T*; none at the 400-step examples). That
remainder is paid by precision: iterate at ``ceil(dps log2 10) + 40`` bits; when the relative
radius exceeds ``10^-dps`` (the digits the run must certify) at step t, restart at the
precision :func:`next_precision` predicts from the bits lost so far and the recent loss rate
(at most :data:`MAX_PREC`; at the cap the run goes on to the end and reports whatever it
certifies). The precision sequence is a function of the inputs only, so the certificate is
too. (A full mean-value form would also need the e-derivatives of GELU's large closed forms;
the precision restart is simpler and, measured, cheap: arb costs about 0.1 ms a step.)
"""
from __future__ import annotations

import math
from functools import lru_cache

from rdyn.reduced_dynamics.certified.certificate import CertifiedResult
from rdyn.reduced_dynamics.certified.smooth_loop import _iterate, _TooWide

MAX_PREC = 8192          # bits: the cap of the adaptive working precision
MAX_ATTEMPTS = 4


@lru_cache(maxsize=None)
def ball_map(name: str):
    """(moments, m2, dm2, width): the closed forms of ``name`` as guarded arb callables:
    ``moments(C1, r, rho, s_res, s2, W, K) -> [m1, m2]``, ``m2(...)`` alone, ``dm2/dC1(...)``
    and ``width(s) = W^2`` (callables that evaluate at the caller's precision)."""
    from rdyn.derivations import activations as act

    forms = act.closed_forms(name)
    args = (act.state_C1, act.state_r, act.state_rho, act.state_sres, act.state_s2,
            act.state_W, act.state_K)
    return (act.guarded_arb_lambdify(args, [forms["m1"], forms["m2"]]),
            act.guarded_arb_lambdify(args, forms["m2"]),
            act.guarded_arb_lambdify(args, forms["dm2"]),
            act.guarded_arb_lambdify((act.s,), forms["width"]))


def certifiable(activation) -> bool:
    """True for the activations with every expectation closed (erf, gelu) and for those whose
    strip of analyticity is derived (tanh, softplus, sigmoid, and formulas whose strip bounds
    :func:`rdyn.reduced_dynamics.certified.strip.formula_strip` derives: the certified
    quadrature of :mod:`rdyn.reduced_dynamics.certified.strip`). ``activation``: an
    :class:`rdyn.derivations.activations.Activation`."""
    from rdyn.derivations.activations import CLOSED_MOMENTS
    from rdyn.reduced_dynamics.certified.strip import strip_certifiable

    return activation.name in CLOSED_MOMENTS or strip_certifiable(activation)


def next_precision(prec: int, target_bits: int, wide: _TooWide, end: int) -> int:
    """The restart precision after a pass at ``prec`` bits outgrew the target at step t:
    target + the bits lost by t + 1.25 x (the loss rate since the last sample at or before
    t/2) x (the steps left) + 64, and at least ``prec + 64``. The rate is the recent one
    because the loss accelerates after T* (measured)."""
    lost = wide.log2_radius + prec
    past = [(s, r) for s, r in wide.growth if math.isfinite(r) and s <= wide.step // 2]
    if past:
        s, r = past[-1]
        rate = max(lost - (r + prec), 0.0) / (wide.step - s)
    else:
        rate = lost / max(wide.step, 1)
    need = target_bits + lost + 1.25 * rate * max(end - wide.step, 0) + 64
    return max(prec + 64, math.ceil(need))


def certified_smooth_run(config, eta: float, steps: int | None = None, thresholds=None,
                         dps: int | None = 30, tstar_level=None,
                         min_default_steps: int = 1000, prec: int | None = None) -> CertifiedResult:
    """Certified enclosures of the smooth run of ``config`` (a
    :class:`~rdyn.reduced_dynamics.model_a.smooth.SmoothConfig` with activation erf or gelu)
    at step size ``eta`` (the float the float64 run used; read as its decimal). ``steps=None``:
    to T*, then to max(2 T*, ``min_default_steps``). ``dps``: digits the final enclosure
    should certify (default 30); the working precision is chosen as the module docstring says,
    or fixed at ``prec`` bits (no adaptation). ``tstar_level`` overrides the T* level (string,
    arb ball or number)."""
    from rdyn.reduced_dynamics.certified.strip import certified_strip_run, strip_certifiable
    from rdyn.reduced_dynamics.model_a.dynamics import Thresholds

    if strip_certifiable(config.activation):   # no closed forms: certified quadrature
        return certified_strip_run(config, eta, steps, thresholds, tstar_level,
                                   min_default_steps, dps=dps)
    if not certifiable(config.activation):
        raise ValueError(f"no certified iteration for activation {config.activation.label}")
    thresholds = thresholds or Thresholds()
    digits = 30 if dps is None else int(dps)
    target_bits = math.ceil(digits * math.log2(10))
    limit = -digits * math.log2(10)          # log2 of the relative radius to certify
    if prec is not None:
        return _iterate(config, eta, steps, thresholds, tstar_level, min_default_steps, prec, None,
                    _closed_forms(config))
    prec = target_bits + 40
    for _ in range(MAX_ATTEMPTS):
        last = prec >= MAX_PREC
        try:
            return _iterate(config, eta, steps, thresholds, tstar_level, min_default_steps,
                            prec, None if last else limit, _closed_forms(config))
        except _TooWide as wide:
            end = steps if steps is not None else max(2 * wide.step, min_default_steps)
            prec = min(MAX_PREC, next_precision(prec, target_bits, wide, end))
    return _iterate(config, eta, steps, thresholds, tstar_level, min_default_steps, prec, None,
                    _closed_forms(config))


class _ClosedFormStep:
    """The moments of one step from the closed forms of ``name`` (:func:`ball_map`) at the
    step's geometry (the interface the loop of :func:`_iterate` reads: ``moments(C1) -> (m1,
    m2)``, ``m2(C1)``, ``dm2(C1)``, as enclosures)."""

    def __init__(self, name: str, b: dict):
        self._moments, self._m2, self._dm2, self._width = ball_map(name)
        self._b = b

    def at(self, C1, e, p, s2, s_res):
        """Set the step's geometry (BranchPointError if ``W^2`` is not certainly positive)."""
        from rdyn.derivations.activations import BranchPointError

        r = self._b["r"]
        W2 = self._width(r * s_res)
        if not W2 > 0:
            raise BranchPointError(f"W^2 = {W2} not certainly positive")
        self._geo = (r, p / s2, s_res, s2, W2.sqrt(), self._b["K"])
        return self

    def moments(self, C1):
        return self._moments(C1, *self._geo)

    def m2(self, C1):
        return self._m2(C1, *self._geo)

    def dm2(self, C1):
        return self._dm2(C1, *self._geo)




def _closed_forms(config):
    """The step-moments factory of the closed forms (:class:`_ClosedFormStep`) for
    :func:`rdyn.reduced_dynamics.certified.smooth_loop._iterate`."""
    name = config.activation.name
    return lambda b: _ClosedFormStep(name, b)
