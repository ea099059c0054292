"""Theorem B.3 on one box of parameters: every S0 of an S0 box at eta = eta_max
(:func:`s0_box_decide`), or every (S0, theta) of a box at eta = theta eta_max (:func:`theta_box_decide`):
step 0 exactly, every later state by covering the invariant region of states (g, delta) with interval
boxes (:func:`region_ok`; docs/proofs.md, Model B)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from flint import arb

from rdyn.reduced_dynamics.certified.interval import Interval
from rdyn.verification.proofs.balls import ball, lower, upper
from rdyn.verification.proofs.model_b.instance import NolnConstants, bmin, k_terms, qball
from rdyn.verification.proofs.model_b.slacks import interval_slacks

REGION_DEPTH = 10               # bisections of a (g, delta) region box


@dataclass
class Tally:
    boxes: int = 0
    s0_boxes: int = 0


def region_ok(k, sig0_hi: float, g_lo: float, g_hi: float, conds, tally: Tally, max_boxes: int,
              loss_per_k_sigma: bool = False, x0=None, sigma0=None):
    """Branch and bound over (g, delta) in [g_lo, g_hi] x [0, sig0_hi] for the fixed parameter
    ball ``k`` (over the S0 box it came from), in outward-rounded interval arithmetic
    (:class:`Interval`). ``conds``: names whose slack must be certainly positive ('loss'), non-negative
    ('descent_lemma', 'gamma') or the invariance conditions ('inv_loss': |f| <= 1, 'inv_mono':
    0 <= f <= 1; both with 1 - k^2 (g-1)^2 >= 0). Returns ({cond: True/False(undecided)},
    {cond: smallest lower bound of the slack}).

    With ``x0`` = k sigma0 and ``sigma0`` (balls; ``--eta-fraction``) the second coordinate is
    ``delta/sigma0`` in [0, sig0_hi] and ``k sigma = x0 sqrt((delta/sigma0)^2 + 4 g^2/sigma0^2)``: k and
    sigma0 stay correlated (k sigma0 = theta k_max sigma0 is enclosed tightly while k and sigma0 alone
    vary by the relative width of the S0 box)."""
    kk = Interval(lower(k), upper(k))
    if x0 is not None:
        X, S0s = Interval(lower(x0), upper(x0)), Interval(lower(sigma0), upper(sigma0))
    if not (kk.lo > 0 and math.isfinite(kk.hi)):     # a wide S0 box: k not enclosed away from 0
        return {c: False for c in conds}, {c: None for c in conds}
    ok = {c: True for c in conds}
    margin = {c: None for c in conds}
    stack = [(g_lo, g_hi, 0.0, sig0_hi, 0)]
    while stack:
        a, b, p, q, depth = stack.pop()
        tally.boxes += 1
        # sigma = sqrt(delta^2 + 4 g^2) increases in delta and in g >= 0: its range from the corners
        s_lo = (Interval(p) * Interval(p) + 4 * Interval(a) * Interval(a)).lo
        s_hi = (Interval(q) * Interval(q) + 4 * Interval(b) * Interval(b)).hi
        if x0 is None:
            sigma = Interval(s_lo, s_hi).sqrt()
            f, s, dshrink = interval_slacks(kk, sigma, a, b, loss_per_k_sigma)
        else:   # sigma/sigma0 = sqrt(dhat^2 + 4 g^2/sigma0^2), increasing in dhat, g >= 0 and 1/sigma0
            s_lo = (Interval(p) * Interval(p) + 4 * (Interval(a) / Interval(S0s.hi)) * (Interval(a) / Interval(S0s.hi))).lo
            s_hi = (Interval(q) * Interval(q) + 4 * (Interval(b) / Interval(S0s.lo)) * (Interval(b) / Interval(S0s.lo))).hi
            shat = Interval(s_lo, s_hi).sqrt()
            ks, sigma = X * shat, S0s * shat
            if not sigma.lo > 0:     # underflow (theta ~ 1e-160): nothing is decided on this box
                for c in conds:
                    ok[c] = False
                break
            f, s, dshrink = interval_slacks(kk, sigma, a, b, loss_per_k_sigma, ks=ks)
        pending = []
        for c in conds:
            if not ok[c]:
                continue
            one_minus_f = s["u"] if "u" in s else 1 - f
            if c == "inv_loss":
                lo = min(one_minus_f.lo, (1 + f).lo, dshrink.lo)
                good = lo >= 0
            elif c == "inv_mono":
                lo = min(f.lo, one_minus_f.lo, dshrink.lo)
                good = lo >= 0
            else:
                lo = s[c].lo
                good = lo > 0 if c == "loss" else lo >= 0
            if good:
                margin[c] = lo if margin[c] is None else min(margin[c], lo)
            else:
                pending.append(c)
        if pending:
            if depth >= REGION_DEPTH or tally.boxes >= max_boxes:
                for c in pending:
                    ok[c] = False
                continue
            if (b - a) >= (q - p) / 4 or depth % 2 == 0:
                m = (a + b) / 2
                stack += [(a, m, p, q, depth + 1), (m, b, p, q, depth + 1)]
            else:
                m = (p + q) / 2
                stack += [(a, b, p, m, depth + 1), (a, b, m, q, depth + 1)]
    return ok, margin


def _low(x) -> float:
    """A float <= every point of x; 0.0 for an exact zero (an equality that holds exactly)."""
    return 0.0 if x.is_exact() and x == 0 else lower(x)


def _merge_region(result: dict, margins: dict, ok: dict, mg: dict, names) -> None:
    """Fold the region's verdicts into step 0's: a statement holds when it held at step 0 and on the
    region, its margin the smaller of the two."""
    for name in names:
        result[name] = result[name] and (True if ok[name] else None)
        if ok[name] and result[name]:
            margins[name] = min(margins[name], mg[name])


def s0_box_decide(form, lo: float, hi: float, cst: NolnConstants, tally: Tally, max_boxes: int):
    """Decide the three statements of B.3 for every S0 in [lo, hi]: ({name: True/None}, margins,
    region description)."""
    gs, k2, d = cst.gamma_star, qball(cst.kappa2), cst.d
    S0 = ball(lo, hi)
    k, which = bmin(k_terms(form, S0, gs, k2, d))
    sigma0 = S0 / gs
    # the middle term binding makes k sigma0 = 1 exactly (the first step lands on gamma*)
    x0 = k * sigma0 if which != 1 else None

    exact_landing = which == 1
    if exact_landing:
        x0 = arb(1)
    f0 = 1 - x0
    # step 0 at g = 0: f = 1 - k sigma0
    step0 = {"loss": x0 * (1 + f0), "descent_lemma": f0, "gamma": f0}   # interval_slacks at g = 0
    result, margins = {}, {}
    for name, val in step0.items():
        good = bool(val > 0) if name == "loss" else bool(val >= 0)
        result[name] = True if good else None
        margins[name] = _low(val) if good else None
    if exact_landing:
        return result, margins, {"first_step": "lands on gamma* exactly (eta = d/(2 kappa2 S0) binds)"}
    # |g_1 - 1| = |1 - x0| <= rho0, rounded outward (1 - a in floating point may round down), and the
    # region's ends 1 -+ rho0 rounded outward too
    rho0 = (1 - Interval(lower(x0), upper(x0))).mag()
    if rho0 >= 1:
        return {n: None for n in result}, margins, None
    # delta_1 = (1 - k^2) sigma0 exactly (g_0 = 0), and delta never increases after
    sig_hi = upper(sigma0 * (1 - k * k))
    region = None
    if result["gamma"]:
        g_lo = (1 - Interval(rho0)).lo
        ok, mg = region_ok(k, sig_hi, g_lo, 1.0, ("inv_mono", "loss", "descent_lemma", "gamma"), tally,
                           max_boxes)
        if ok["inv_mono"]:
            region = {"g": [g_lo, 1.0], "delta": [0.0, sig_hi]}
            _merge_region(result, margins, ok, mg, ("loss", "descent_lemma", "gamma"))
            return result, margins, region
    result["gamma"] = None
    g_lo, g_hi = (1 - Interval(rho0)).lo, (1 + Interval(rho0)).hi
    ok, mg = region_ok(k, sig_hi, g_lo, g_hi, ("inv_loss", "loss", "descent_lemma"), tally, max_boxes)
    if not ok["inv_loss"]:
        return {n: None for n in result}, margins, None
    region = {"g": [g_lo, g_hi], "delta": [0.0, sig_hi]}
    _merge_region(result, margins, ok, mg, ("loss", "descent_lemma"))
    return result, margins, region


def _pos_mul(a, b):
    """A ball containing a b for positive balls a, b, from the products of the endpoints (the
    midpoint-radius product of two wide balls, e.g. theta in [1e-9, 1e-8], can contain 0)."""
    if not (lower(a) > 0 and lower(b) > 0):
        return a * b
    return ball(lower(arb(lower(a)) * arb(lower(b))), upper(arb(upper(a)) * arb(upper(b))))


def theta_box_decide(form, lo: float, hi: float, t_lo: float, t_hi: float, cst: NolnConstants, tally: Tally,
                     max_boxes: int):
    """Decide the three statements of B.3 for every S0 in [lo, hi] and every eta = theta eta_max(S0)
    with theta in [t_lo, t_hi] (``--eta-fraction``; docs/proofs.md, Model B): k = theta k_max(S0) is
    enclosed over the (S0, theta) box, and so is the region R (rho0 = |1 - k sigma0| and
    delta <= (1 - k^2) sigma0 depend on k); the loss slack is normalised by k sigma (it tends to 2 as
    theta -> 0). Returns ({name: True/None}, margins, d log(k sigma0)/d log S0: 1, 0 or 1/2 when the
    first, second or third term of eta_max certainly binds on the box, else 1)."""
    gs, k2, d = cst.gamma_star, qball(cst.kappa2), cst.d
    S0 = ball(lo, hi)
    th = ball(t_lo, t_hi)
    kmax, which = bmin(k_terms(form, S0, gs, k2, d))
    sigma0 = S0 / gs
    x1 = arb(1) if which == 1 else _pos_mul(kmax, sigma0)   # k_max sigma0 (exactly 1 when d/(2 kappa2 S0) binds)
    sens = {1: 0.0, 2: 0.5}.get(which, 1.0)
    k = _pos_mul(th, kmax)
    x0 = _pos_mul(th, x1)                             # k sigma0 at step 0 (g = 0)
    f0 = 1 - x0
    # step 0 at g = 0 (u = k sigma0): loss (1 - f^2)/(k sigma0) = 1 + f0, Part 1 (1 - x0 - f0^2)/x0 = f0
    step0 = {"loss": 1 + f0, "descent_lemma": f0, "gamma": f0}
    result, margins = {}, {}
    for name, val in step0.items():
        good = bool(val > 0) if name == "loss" else bool(val >= 0)
        result[name] = True if good else None
        margins[name] = _low(val) if good else None
    if not bool(x0 > 0) or not bool(x0 < 2):
        return {n: None for n in result}, margins, sens
    # delta_1 = (1 - k^2) sigma0 exactly (g_0 = 0), and delta never increases after; g_1 = x0
    dhat_hi = upper(1 - k * k)                        # delta/sigma0 <= 1 - k^2
    if result["gamma"]:       # f0 >= 0: g_1 = x0 in (0, 1], and 0 <= f <= 1 on [g_1, 1] keeps g there
        ok, mg = region_ok(k, dhat_hi, lower(x0), 1.0, ("inv_mono", "loss", "descent_lemma", "gamma"), tally,
                           max_boxes, loss_per_k_sigma=True, x0=x0, sigma0=sigma0)
        if ok["inv_mono"]:
            _merge_region(result, margins, ok, mg, ("loss", "descent_lemma", "gamma"))
            return result, margins, sens
    result["gamma"] = None
    rho0 = upper(abs(1 - x0))                          # |g_1 - 1|; |f| <= 1 keeps |g - 1| <= rho0
    g_lo = (Interval(1.0) - Interval(rho0)).lo
    if not g_lo > 0:
        return {n: None for n in result}, margins, sens
    ok, mg = region_ok(k, dhat_hi, g_lo, (Interval(1.0) + Interval(rho0)).hi, ("inv_loss", "loss", "descent_lemma"), tally,
                       max_boxes, loss_per_k_sigma=True, x0=x0, sigma0=sigma0)
    if not ok["inv_loss"]:
        return {n: None for n in result}, margins, sens
    _merge_region(result, margins, ok, mg, ("loss", "descent_lemma"))
    return result, margins, sens
