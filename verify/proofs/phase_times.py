"""The phase times as Theta(1/eta) for every step size of a box at once (seed 000, Appendix D.2; docs/proofs.md,
"Every step size at once"): Lemma D.13's ``t1`` and Lemma D.17's ``T*`` with explicit ``0 < a <= eta t <= b`` for
every eta in ``(LO, HI]``.

``t1`` is the first ``t >= 1`` with ``C1(t) >= 0.95 C1*(t)``; ``T*`` the first ``t`` with ``p(t) >= 1/(2K)``, that is
``e(t) <= e* = K/(D-K)``. The bounds rest on the invariant tube of :mod:`.eta_box` (every state from t = 1 lies in
it: ``C1 > 0``, ``rho = C1/C1* >= 0``, ``w`` between the tube's edges, and the ``C1 > 0`` branch of the map) and on
facts of the map at eta = 1 (the kernels prepared there; ``lam = (1 - alpha)/eta``, ``S = C1*``, ``b = lam S``,
all free of eta):

* ``C1(t+1) - C1(t) = eta b(e) (1 - rho)`` for ``t >= 1`` (``C1' = (1 - eta lam) C1 + eta lam S``), and
  ``C1(1) = eta first_c1``, ``e(1) = 1`` (the ``C1 = 0`` branch moves neither C2 nor C3);
* ``e(t+1) = e(t) exp(-u)`` with ``0 <= u = eta e^2 X1/scale`` (``X1 = Delta x/(eta e^2) = rho Y``).

**t1.** On ``e`` in ``[e_min, 1]`` and ``rho`` in ``[0, 0.95]`` (every step before t1), ball arithmetic on slices
bounds ``S`` by ``[S_lo, S_hi]``, ``b`` by ``[b_lo, b_hi]`` (``b_lo > 0``) and ``e^2 X1/scale`` by ``U``.

*Upper bound.* Let ``t*`` be the first ``t >= 1`` with ``e(t) < e_min`` and suppose ``t* <= t1``. Every step
``1 <= s < t*`` has ``rho < 0.95``, so ``C1`` grows by more than ``0.05 eta b_lo`` per step and
``0.05 eta b_lo (t* - 2) < C1(t* - 1) < 0.95 S_hi``: ``eta t* < B = 19 S_hi/b_lo + 2 HI``. Then
``e(t*) >= exp(-eta U (t* - 1)) > exp(-U B) >= e_min`` (checked), a contradiction. So ``e >= e_min`` up to t1, and
the same count with ``t1`` for ``t*`` gives ``eta t1 < B``: ``t1`` exists and ``b = B``.

*Lower bound.* Each increment is at most ``eta b_hi`` (``rho >= 0``), so
``0.95 S_lo <= C1(t1) <= eta first_c1 + eta b_hi (t1 - 1)``: ``eta t1 >= (0.95 S_lo - HI first_c1)/b_hi = a``.

These are crude (a factor of about 30 apart: the 0.05 of the count above).

**T*.** Slice ``[e*, 1]`` geometrically, ``e* = s_0 < ... < s_n = 1``, and bound ``u/eta = e^2 X1/scale`` on slice
``i`` over the tube's ``w`` there (in ``SUB`` pieces): above by ``U_i`` (every state), below by ``V_i > 0`` (the
states with ``rho >= 0.95``: every state from t1 on, since the tube proof shows that a step keeps
``rho >= 0.95``, condition ``band_lower_kept``). ``e`` decreases, so one step crosses ``s_{i+1}``; it starts in
a slice above ``i`` and covers at most ``eta max_{j > i} U_j`` of slice ``i``'s log-width; the rest is covered by
steps starting in slice ``i``, each by at most ``eta U_i``. So those steps number at least
``(log(s_{i+1}/s_i) - eta max_{j > i} U_j)/(eta U_i)`` (``e(1) = 1`` is the top edge: no step crosses it), and after
t1 at most ``log(s_{i+1}/s_i)/(eta V_i) + 1``. Summed:
``eta T* >= a = sum_i (log(s_{i+1}/s_i) - HI max_{j > i} U_j)/U_i`` and
``eta T* <= b = b(t1) + sum_i log(s_{i+1}/s_i)/V_i + n HI``. Here the bounds are close (a few percent at
moderate D): they are Riemann sums of the flow's crossing time.

The constants depend on D, K, the activation, kappa, ||V*||^2 and the logit scale, never on eta: they are the
papers' ``t1 = Theta(1/eta)`` and the eta-dependence of ``T* = Theta(K D^2/(eta ||V*||^2))`` at that configuration
(not the law in D, Lemma D.17's own statement).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from flint import arb

from rdyn.verification.proofs.balls import ball, lower, upper

SLICES = 256
SUB = 4                         # pieces of the tube's w range on each slice of [e*, 1] (T*)
REFINE_DEPTH = 8                # halvings of a slice (e and w) where the step's lower rate is not shown > 0
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


@dataclass(frozen=True)
class TStarScaling:
    """``a <= eta T* <= b`` for every eta of the box (``a > 0``)."""

    a: float
    b: float

    def to_dict(self) -> dict:
        return {"eta_tstar": [self.a, self.b]}


def _extrema(k, c, scale, bz, e_min: float):
    """``(S_lo, S_hi, b_lo, b_hi, U)`` over ``e`` in ``[e_min, 1]`` and ``rho`` in ``[0, 0.95]`` (balls' ends)."""
    edges = [e_min + (1 - e_min) * i / SLICES for i in range(SLICES)] + [1.0]
    rho = ball(0.0, upper(arb(BAND)))
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


def t1_bounds(k, c, scale, bz, eta_hi: float) -> T1Scaling | None:
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


def _step_rate(k, c, scale, bz, E, e_lo: float, e_hi: float, w_lo: float, w_hi: float, rho_floor):
    """``(upper, lower)`` ends of ``e^2 X1/scale`` (``u/eta``) over ``e`` in ``[e_lo, e_hi]`` and the tube's
    ``w`` in ``[w_lo, w_hi]``, the lower one over the states with ``rho >= rho_floor`` only (None where there are
    none), in :data:`SUB` pieces of ``w``."""
    floor = lower((rho_floor - 1) / arb(e_lo) ** 3)     # rho >= floor_rho means w >= (floor_rho - 1)/e^3 >= this
    bz_box = bz(e_lo, e_hi)
    ups, lows = [], []
    for j in range(SUB):
        a = w_lo + (w_hi - w_lo) * j / SUB
        b = w_hi if j == SUB - 1 else w_lo + (w_hi - w_lo) * (j + 1) / SUB
        W = ball(a, b)
        rho = 1 + W * E ** 3
        rho = ball(max(0.0, lower(rho)), upper(rho))    # rho >= 0 on the tube
        ups.append(upper(E * E * rho * k.dx_e2_rho(E, W, bz_box, c) / scale))
        if b >= floor:
            Wa = ball(max(a, floor), b)
            rho_a = 1 + Wa * E ** 3
            rho_a = ball(max(lower(rho_floor), lower(rho_a)), max(upper(rho_a), upper(rho_floor)))   # rho >= floor
            lows.append(lower(E * E * rho_a * k.dx_e2_rho(E, Wa, bz_box, c) / scale))
    return max(ups), (min(lows) if lows else None)


def _refined_rate(k, c, scale, bz, e_lo: float, e_hi: float, w_lo: float, w_hi: float, rho_floor, depth: int):
    """:func:`_step_rate`, the box halved in ``e`` and in ``w`` (at most ``depth`` times) where the lower end is not
    certainly positive: near ``e = 1`` the tube's ``w`` range is wide (its edges open to ``w = -1`` and about 1
    there), and the reduced forms, which hold ``C1 = C1*(1 + w e^3)`` several times over, are enclosed well only on
    narrow boxes."""
    u, v = _step_rate(k, c, scale, bz, ball(e_lo, e_hi), e_lo, e_hi, w_lo, w_hi, rho_floor)
    if v is None or v > 0 or depth == 0:
        return u, v
    e_mid, w_mid = (e_lo + e_hi) / 2, (w_lo + w_hi) / 2
    parts = [_refined_rate(k, c, scale, bz, a, b, wa, wb, rho_floor, depth - 1)
             for a, b in ((e_lo, e_mid), (e_mid, e_hi)) for wa, wb in ((w_lo, w_mid), (w_mid, w_hi))]
    lows = [x for _, x in parts if x is not None]
    return max(x for x, _ in parts), (min(lows) if lows else None)


def _tube_w(piece, e_lo: float, e_hi: float) -> tuple[float, float]:
    """The tube's ``w`` range over ``[e_lo, e_hi]`` inside one piece (both edges linear there), rounded outward."""
    a, b, la, la2, ha, ha2 = piece
    if b <= a:
        return min(la, la2), max(ha, ha2)
    at = [(arb(x) - a) / (arb(b) - a) for x in (e_lo, e_hi)]
    lows = [arb(la) + (arb(la2) - la) * t for t in at]
    highs = [arb(ha) + (arb(ha2) - ha) * t for t in at]
    return min(lower(x) for x in lows), max(upper(x) for x in highs)


def tstar_bounds(k, c, scale, bz, tube, K: int, N: int, eta_hi: float, t1: T1Scaling) -> TStarScaling | None:
    """:class:`TStarScaling` for every eta in ``(0, eta_hi]`` (module docstring), ``tube`` the invariant tube
    (its ``pieces()``; the slices are cut at its knots, so that each lies in one piece), ``t1`` its
    :class:`T1Scaling`; None when a ``V_i > 0`` or ``a > 0`` is not certain. Valid only where the tube's invariance
    and ``band_lower_kept`` are (the caller's proof)."""
    e_star = arb(K) / arb(N)
    start = lower(e_star)                               # slices cover [e*, 1]: the states with e > e* (t < T*)
    pieces = tube.pieces()
    cuts = {float(e_star) ** (1 - i / SLICES) for i in range(1, SLICES)}
    cuts |= {x for piece in pieces for x in piece[:2] if start < x < 1.0}
    edges = [start] + sorted(x for x in cuts if start < x < 1.0) + [1.0]
    band = arb(BAND)
    U, V, logs = [], [], []
    for lo, hi in zip(edges, edges[1:]):
        piece = next(pc for pc in pieces if pc[0] <= lo and hi <= pc[1])
        w_lo, w_hi = _tube_w(piece, lo, hi)
        u, v = _refined_rate(k, c, scale, bz, lo, hi, w_lo, w_hi, band, REFINE_DEPTH)
        if v is None or not v > 0 or not math.isfinite(u):
            return None
        U.append(u)
        V.append(v)
        logs.append((arb(hi) / arb(lo)).log())
    logs[0] = (arb(edges[1]) / e_star).log()            # the lowest slice from e* itself
    n = len(U)
    hi_eta = arb(eta_hi)
    above = [max(U[i + 1:]) if i + 1 < n else 0.0 for i in range(n)]   # the one step that crosses s_{i+1}
    a = sum(((logs[i] - hi_eta * arb(above[i])) / arb(U[i]) for i in range(n)), arb(0))
    b = arb(t1.b) + sum((logs[i] / arb(V[i]) for i in range(n)), arb(0)) + n * hi_eta
    if not a > 0:
        return None
    return TStarScaling(lower(a), upper(b))
