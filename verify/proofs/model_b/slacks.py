"""The normalised slacks of Theorem B.3's three statements on a box of states (g, sigma)
(:func:`interval_slacks`), in the float intervals of :class:`rdyn.reduced_dynamics.certified.interval.Interval`."""
from __future__ import annotations

from rdyn.reduced_dynamics.certified.interval import Interval

def _g_one_minus_g(a: float, b: float) -> Interval:
    """The range of g (1 - g) over [a, b] (concave, largest at g = 1/2)."""
    qa, qb = Interval(a) * (1 - Interval(a)), Interval(b) * (1 - Interval(b))
    hi = 0.25 if a <= 0.5 <= b else max(qa.hi, qb.hi)
    return Interval(min(qa.lo, qb.lo), hi)


def interval_slacks(k: Interval, sigma: Interval, a: float, b: float, loss_per_k_sigma: bool = False, ks: Interval | None = None):
    """The normalised slacks of the three statements at the states (g, sigma) of a box, with
    step factor ``f = 1 - u``, ``u = k sigma + k^2 g (1 - g)`` (``g' - 1 = f (g - 1)``):
    loss ``1 - f^2 = u (2 - u)`` (> 0: L decreases; monotone in u on [0, 1]), descent lemma
    ``(1 - k sigma - f^2)/(k sigma) = (1 - k sigma) + (k g (1-g)/sigma)(2 (1 - k sigma) - eps)``,
    ``eps = k^2 g (1 - g)`` (>= 0; written so that no two large terms cancel near sigma = 0),
    gamma ``f`` (>= 0 with g <= 1: no overshoot). k > 0, sigma > 0, g in [a, b]. With
    ``loss_per_k_sigma`` (``--eta-fraction``: k = theta k_max can be small) the loss slack is
    normalised as Part 1's, ``(1 - f^2)/(k sigma) = (1 + k g (1 - g)/sigma)(2 - u)``, which tends to 2
    (not 0) as k -> 0. ``ks``: an enclosure of k sigma (default k.lo sigma.lo .. k.hi sigma.hi).
    Returns (f, {name: slack}, 1 - k^2 (g - 1)^2)."""
    q = _g_one_minus_g(a, b)
    if ks is None:
        ks = k * sigma    # both positive: [k.lo sigma.lo, k.hi sigma.hi], rounded outward
    eps = k * k * q
    u = ks + eps
    f = 1 - u
    if loss_per_k_sigma:
        loss = (1 + k * q / sigma) * (2 - u)
    elif 0 <= u.lo and u.hi <= 1:
        loss = Interval((Interval(u.lo) * (2 - Interval(u.lo))).lo, (Interval(u.hi) * (2 - Interval(u.hi))).hi)
    else:
        loss = u * (2 - u)
    lemma = (1 - ks) + (k * q / sigma) * (2 * (1 - ks) - eps)
    gm1 = Interval(a) - 1.0
    gm1.hi = (Interval(b) - 1.0).hi
    sq = Interval(0.0, (Interval(max(abs(gm1.lo), abs(gm1.hi))) ** 2).hi) if gm1.lo < 0 < gm1.hi else gm1 * gm1
    out = {"loss": loss, "descent_lemma": lemma, "gamma": f}
    if loss_per_k_sigma:
        out["u"] = u     # 1 - f, without the cancellation of 1 - (1 - u) when u is tiny
    return f, out, 1 - k * k * sq
