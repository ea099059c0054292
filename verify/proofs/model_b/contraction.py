"""Theorems 4.6 and 4.7: the per-layer contraction factor ``R = (1 + gamma l_(r+1))/(1 + gamma l_1)``
of the looped layer, enclosed over a range of gamma and certified ``< 1`` (:func:`contraction_factor`)."""
from __future__ import annotations

import time

from flint import arb

from rdyn.verification.proofs.balls import lower, upper
from rdyn.verification.proofs.iterate import digits


def top_levels(spectrum):
    """lambda_1 (the largest eigenvalue of S = diag(m)), its multiplicity r and lambda_{r+1}."""
    levels = sorted(set(spectrum), reverse=True)
    if len(levels) < 2:
        return levels[0], len(spectrum), None
    return levels[0], sum(1 for m in spectrum if m == levels[0]), levels[1]


def contraction_factor(spectrum, gamma_lo, gamma_hi, *, label: str, L: int | None = None, what: str = "gamma",
                       strictly_above_power: bool = False):
    """Certified enclosure of R(gamma) = (1 + gamma l_{r+1})/(1 + gamma l_1) for gamma in
    [gamma_lo, gamma_hi] (R decreases in gamma: dR/dgamma = (l_{r+1} - l_1)/(1 + gamma l_1)^2), and the
    statement R < 1 (with R^L for a looped model; and R > l_{r+1}/l_1 when ``strictly_above_power``).

    Both bounds are decided in forms without cancellation (``1 - R = gamma (l_1 - l_{r+1})/(1 + gamma l_1)``,
    ``R - l_{r+1}/l_1 = (l_1 - l_{r+1})/(l_1 (1 + gamma l_1))``), so at exact points the verdict does not depend
    on the precision (R < 1 for every gamma > 0, however small). Floats are a stated range, its ends exact points:
    the statement is refuted when it fails at an end. A ball (``gamma_lo is gamma_hi``, e.g. a certified gamma_T or
    gamma*) encloses one unknown value: the statement is certified when it holds on the whole ball, refuted when it
    fails on the whole ball, and otherwise undecided (a ball too wide to tell), never refuted."""
    t0 = time.perf_counter()
    l1, r, l2 = top_levels(spectrum)
    point = not isinstance(gamma_lo, arb)
    g_lo = gamma_lo if isinstance(gamma_lo, arb) else arb(gamma_lo)
    g_hi = gamma_hi if isinstance(gamma_hi, arb) else arb(gamma_hi)
    R_hi = (1 + g_lo * l2) / (1 + g_lo * l1)     # at the smallest gamma
    R_lo = (1 + g_hi * l2) / (1 + g_hi * l1)
    power = arb(l2) / l1
    # the two bounds in forms without cancellation: 1 - R = gamma (l_1 - l_(r+1))/(1 + gamma l_1), smallest at the
    # smallest gamma (so R < 1 exactly when gamma > 0, however small), and R - l_(r+1)/l_1 = (l_1 - l_(r+1))/(l_1
    # (1 + gamma l_1)), smallest at the largest gamma
    below_one = g_lo * (l1 - l2) / (1 + g_lo * l1)
    above_power = arb(l1 - l2) / (l1 * (1 + g_hi * l1))
    ok = bool(below_one > 0)
    # Theorem 4.6 (2) also states R* > l_(r+1)/l_1 (gamma* finite): certified when asked for
    above = bool(above_power > 0) if strictly_above_power else None
    gamma_pair = [float(gamma_lo), float(gamma_hi)] if point else [lower(g_lo), upper(g_hi)]
    cert = {"gamma": gamma_pair, "R": [lower(R_lo), upper(R_hi)], "R_max": digits(R_hi),
            "R_min": digits(R_lo), "lambda_1": l1, "r": r, "lambda_r_plus_1": l2,
            "power_method_ratio": digits(power), "min_margin": lower(below_one),
            "boxes": 1, "seconds": round(time.perf_counter() - t0, 3)}
    if strictly_above_power:
        cert["min_margin"] = min(cert["min_margin"], lower(above_power))
        ok = ok and above
    if L is not None:
        cert["R_max_L"] = digits(R_hi ** L)
        cert["L"] = L
    # a counterexample: R >= 1 at the range's lower end (a point: exact, from its sign) or on the whole ball;
    # R <= l_(r+1)/l_1 at its upper end or on the whole ball
    counterexample = None
    if not ok:
        if bool(below_one <= 0):
            at, value, rhs = g_lo, R_hi, arb(1)
            counterexample = {"gamma": digits(at), "lhs": digits(value), "rhs": "1"}
        elif strictly_above_power and bool(above_power <= 0):
            at, value, rhs = g_hi, R_lo, power
            counterexample = {"gamma": digits(at), "lhs": digits(value), "rhs": digits(power)}
        if counterexample is not None:
            counterexample.update(ratio=digits(value / rhs), ratio_radius=float((value / rhs).rad()), step=0,
                                  S0=None)
    verdict = "certified" if ok else "refuted" if counterexample is not None else "undecided"
    reason = None
    if verdict == "undecided":
        reason = (f"the ball of {what}, [{lower(g_lo)!r}, {upper(g_hi)!r}], is too wide to decide: 1 - R in "
                  f"[{lower(below_one)!r}, {upper(below_one)!r}]")
    return {"label": label, "form": "printed", "side": "upper",
            "statement": f"per-layer contraction factor R = (1 + {what} l_(r+1))/(1 + {what} l_1) < 1"
                         f"{' and > l_(r+1)/l_1 (the power method)' if strictly_above_power else ''} for {what} in "
                         f"the stated range: tan psi_(l+1) <= R tan psi_l on every cone tan psi <= tau (each invariant)",
            "quantity": "contraction", "verdict": verdict, "certificate": cert if ok else None,
            "counterexample": counterexample, "reason": reason}
