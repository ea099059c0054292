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
    [gamma_lo, gamma_hi] (balls or floats; R decreases in gamma: dR/dgamma = (l_{r+1} - l_1)/(1 + gamma l_1)^2),
    and the certified statement R < 1 (with R^L for a looped model)."""
    t0 = time.perf_counter()
    l1, r, l2 = top_levels(spectrum)
    g_lo = gamma_lo if isinstance(gamma_lo, arb) else arb(gamma_lo)
    g_hi = gamma_hi if isinstance(gamma_hi, arb) else arb(gamma_hi)
    R_hi = (1 + g_lo * l2) / (1 + g_lo * l1)     # at the smallest gamma
    R_lo = (1 + g_hi * l2) / (1 + g_hi * l1)
    power = arb(l2) / l1
    ok = bool(R_hi < 1)
    # Theorem 4.6 (2) also states R* > l_(r+1)/l_1 (gamma* finite): certified when asked for
    above = bool(R_lo > power) if strictly_above_power else None
    gamma_pair = [float(gamma_lo), float(gamma_hi)] if not isinstance(gamma_lo, arb) else [lower(g_lo), upper(g_hi)]
    cert = {"gamma": gamma_pair, "R": [lower(R_lo), upper(R_hi)], "R_max": digits(R_hi),
            "R_min": digits(R_lo), "lambda_1": l1, "r": r, "lambda_r_plus_1": l2,
            "power_method_ratio": digits(power), "min_margin": lower(1 - R_hi),
            "boxes": 1, "seconds": round(time.perf_counter() - t0, 3)}
    if strictly_above_power:
        cert["min_margin"] = min(cert["min_margin"], lower(R_lo - power))
        ok = ok and above
    if L is not None:
        cert["R_max_L"] = digits(R_hi ** L)
        cert["L"] = L
    return {"label": label, "form": "printed", "side": "upper",
            "statement": f"per-layer contraction factor R = (1 + {what} l_(r+1))/(1 + {what} l_1) < 1"
                         f"{' and > l_(r+1)/l_1 (the power method)' if strictly_above_power else ''} for {what} in "
                         f"the stated range: tan psi_(l+1) <= R tan psi_l on every cone tan psi <= tau (each invariant)",
            "quantity": "contraction", "verdict": "certified" if ok else "refuted",
            "certificate": cert if ok else None,
            "counterexample": None if ok else {"gamma": digits(g_lo), "lhs": digits(R_hi), "rhs": "1",
                                               "ratio": digits(R_hi), "ratio_radius": float(R_hi.rad()),
                                               "step": 0, "S0": None},
            "reason": None}
