"""Lemma D.13's ``t1 = Theta(1/eta)`` for every step size of a box at once: explicit ``0 < a <= eta t1 <= b``
for every eta in ``(LO, HI]`` (seed 000, Appendix D.2; docs/proofs.md, "Every step size at once").

``t1`` is the first ``t >= 1`` with ``C1(t) >= 0.95 C1*(t)``. The bounds rest on the invariant tube of
:mod:`.eta_box` (every state from t = 1 has ``C1 > 0``, ``rho = C1/C1* >= 0``, and follows the ``C1 > 0`` branch of
the map) and on three facts of the map at eta = 1 (the kernels prepared there; ``lam = (1 - alpha)/eta``,
``S = C1*``, ``b = lam S``, all free of eta):

* ``C1(t+1) - C1(t) = eta b(e) (1 - rho)`` for ``t >= 1`` (``C1' = (1 - eta lam) C1 + eta lam S``), and
  ``C1(1) = eta first_c1``, ``e(1) = 1`` (the ``C1 = 0`` branch moves neither C2 nor C3);
* ``e(t+1) = e(t) exp(-u)`` with ``0 <= u = eta e^2 X1/scale`` (``X1 = Delta x/(eta e^2) = rho Y``);
* on ``e`` in ``[e_min, 1]`` and ``rho`` in ``[0, 0.95]`` (every step before t1): ``S`` in ``[S_lo, S_hi]``,
  ``b`` in ``[b_lo, b_hi]`` with ``b_lo > 0``, ``e^2 X1/scale <= U`` (ball arithmetic on slices of the interval).

*Upper bound.* Let ``t*`` be the first ``t >= 1`` with ``e(t) < e_min`` and suppose ``t* <= t1``. Every step
``1 <= s < t*`` has ``rho < 0.95``, so ``C1`` grows by more than ``0.05 eta b_lo`` per step and
``0.05 eta b_lo (t* - 2) < C1(t* - 1) < 0.95 S_hi``: ``eta t* < B = 19 S_hi/b_lo + 2 HI``. Then
``e(t*) >= exp(-eta U (t* - 1)) > exp(-U B) >= e_min`` (checked), a contradiction. So ``e >= e_min`` up to t1, and
the same count with ``t1`` for ``t*`` gives ``eta t1 < B``: ``t1`` exists and ``b = B``.

*Lower bound.* Each increment is at most ``eta b_hi`` (``rho >= 0``), so
``0.95 S_lo <= C1(t1) <= eta first_c1 + eta b_hi (t1 - 1)``: ``eta t1 >= (0.95 S_lo - HI first_c1)/b_hi = a``.

The constants depend on D, K, the activation, kappa, ||V*||^2 and the logit scale, never on eta: together they
are the papers' ``t1 = Theta(1/eta)`` at that configuration, with ``a`` and ``b`` its explicit constants. They are
crude (a factor of about 30 apart: the 0.05 of the count above), not the limit ``eta t1 -> tau1``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from flint import arb

from rdyn.verification.proofs.balls import ball, hull, lower, upper

SLICES = 256
BAND = "0.95"                   # Lemma D.13's fraction: t1 is the first t >= 1 with C1 >= 0.95 C1*
E_MIN_TRIES = 12                # e_min = 1/2, 1/4, ... until exp(-U B) >= e_min


@dataclass(frozen=True)
class T1Scaling:
    """``a <= eta t1 <= b`` for every eta of the box (``a > 0``), shown with ``e >= e_min`` up to t1."""

    a: float
    b: float
    e_min: float

    def to_dict(self) -> dict:
        return {"eta_t1": [self.a, self.b], "e_min_before_t1": self.e_min}


def _extrema(k, c, scale, bz, e_min: float):
    """``(S_lo, S_hi, b_lo, b_hi, U)`` over ``e`` in ``[e_min, 1]`` and ``rho`` in ``[0, 0.95]`` (balls' ends)."""
    edges = [e_min + (1 - e_min) * i / SLICES for i in range(SLICES)] + [1.0]
    rho = hull(arb(0), arb(BAND))
    out = [math.inf, -math.inf, math.inf, -math.inf, -math.inf]
    for lo, hi in zip(edges, edges[1:]):
        E = ball(lo, hi)
        # w = (rho - 1)/e^3 for rho in [0, 0.95] and e in [lo, hi]
        W = ball(lower(-1 / arb(lo) ** 3), upper((arb(BAND) - 1) / arb(hi) ** 3))
        S = k.star(E, c)
        b = (1 - k.alpha(E, c)) * S
        U = E * E * rho * k.dx_e2_rho(E, W, bz(lo, hi), c) / scale
        out = [min(out[0], lower(S)), max(out[1], upper(S)), min(out[2], lower(b)), max(out[3], upper(b)),
               max(out[4], upper(U))]
    return out


def bounds(k, c, scale, bz, eta_hi: float) -> T1Scaling | None:
    """:class:`T1Scaling` for every eta in ``(0, eta_hi]`` from kernels ``k`` prepared at eta = 1 (``c``),
    ``scale`` (D or sqrt(D), a ball) and ``bz(e_lo, e_hi)`` (the atan enclosure of the map's ``B``); None when
    ``b_lo > 0``, ``a > 0`` or ``exp(-U B) >= e_min`` is not certain. Valid only where the tube's invariance is
    (the caller's proof: C1 > 0, rho >= 0 and the C1 > 0 branch at every t >= 1)."""
    hi = arb(eta_hi)
    e_min = 0.5
    for _ in range(E_MIN_TRIES):
        S_lo, S_hi, b_lo, b_hi, U = _extrema(k, c, scale, bz, e_min)
        if not (b_lo > 0 and math.isfinite(U) and math.isfinite(S_hi) and math.isfinite(b_hi)):
            return None
        B = 19 * arb(S_hi) / arb(b_lo) + 2 * hi
        if (-arb(U) * B).exp() >= e_min:
            a = (arb(BAND) * arb(S_lo) - hi * k.first_c1(c)) / arb(b_hi)
            if not a > 0:
                return None
            return T1Scaling(lower(a), upper(B), e_min)
        e_min /= 2
    return None
