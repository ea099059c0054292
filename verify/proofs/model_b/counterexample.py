"""Counterexamples to Theorem B.3: the (gamma, S) recursion of B.2.3 iterated in arb from one S0
(:func:`trajectory_counterexample`), and the points where the printed eta_max fails first
(:func:`crossing_candidates`, :func:`theta_candidates`)."""
from __future__ import annotations

from flint import arb

from rdyn.verification.proofs.balls import lower
from rdyn.verification.proofs.iterate import digits
from rdyn.verification.proofs.model_b.instance import NolnConstants, bmin, eta_of_k, k_terms, qball

SEARCH_STEPS = 4000             # steps of a counterexample search


def trajectory_counterexample(form: str, S0_value: float, cst: NolnConstants, names, steps: int = SEARCH_STEPS,
                              theta: float | None = None):
    """Iterate B.2.3's recursions (gamma, S) in arb from alpha_0 = 0, beta_0^2 = S0 (the exact
    float S0_value) at eta = eta_max(S0) (times the exact float ``theta``, ``--eta-fraction``; the
    counterexample then records it) and return {name: counterexample} for the statements of
    ``names`` that are certainly false at some step (the first such step)."""
    gs, k2, d = cst.gamma_star, qball(cst.kappa2), cst.d
    S0 = arb(S0_value)
    k, which = bmin(k_terms(form, S0, gs, k2, d))
    if which is None:
        return {}
    if theta is not None:
        k = arb(theta) * k
    eta = eta_of_k(k, gs, k2, d)
    gamma, S = arb(0), S0
    c = 2 * k2 / d
    found = {}
    for t in range(steps):
        F = c * (gamma - gs)
        g1 = gamma - eta * S * F + eta * eta * gamma * F * F
        S1 = (1 + eta * eta * F * F) * S - 4 * eta * gamma * F
        loss_t, loss_t1 = k2 * (gamma - gs) ** 2, k2 * (g1 - gs) ** 2
        sides = {"loss": (loss_t1, loss_t, bool(loss_t1 >= loss_t) and bool(loss_t > 0)),
                 "descent_lemma": (loss_t1 - loss_t, -eta * d * S * F * F / 2,
                                   bool(loss_t1 - loss_t > -eta * d * S * F * F / 2)),
                 "gamma": (g1, gs, bool(g1 > gs))}
        for name in names:
            lhs, rhs, false = sides[name]
            if name not in found and false:
                ratio = lhs / rhs
                found[name] = {"S0": digits(S0), "eta": digits(eta), "step": t, "gamma": digits(gamma), "S": digits(S),
                               "lhs": digits(lhs), "rhs": digits(rhs), "ratio": digits(ratio),
                               "ratio_radius": float(ratio.rad())}
                if theta is not None:
                    found[name]["theta"] = theta
        if len(found) == len(names) or bool(abs(gamma - gs) < arb(10) ** -45) or gamma.rad() > 1e-30:
            break
        gamma, S = g1, S1
    return found


def theta_candidates(cst: NolnConstants, theta_lo: float, theta_hi: float = 1.0) -> list:
    """(S0, theta) points just below the crossing S0_c = 4 sqrt(1 + 16 gamma*^2) with theta =
    1 - j k_c^2/8 (j = 1..8, k_c = gamma*/S0_c): there k sigma_1 = theta (1 + k^2) k_c sigma0 passes 1
    for theta above about 1 - k_c^2, the lowest theta at which the printed statements fail."""
    gs = cst.gamma_star
    Sc = 4 * (1 + 16 * gs * gs).sqrt()
    kc2 = float((gs / Sc) ** 2)
    point = lower(Sc * (1 - 2.0 ** -30))
    return [(point, 1 - j * kc2 / 8) for j in range(1, 9) if theta_lo <= 1 - j * kc2 / 8 <= theta_hi]


def crossing_candidates(cst: NolnConstants) -> list:
    """Points S0_c (1 - theta k^2) (theta = 1/4, 1/2, 3/4; k = gamma*/S0_c) just below the S0 where
    the printed eta_max's first two terms cross, S0_c = 4 sqrt(1 + 16 gamma*^2): there k sigma0 is
    just below 1 and S grows by 1 + k^2 in the first step, so k sigma passes 1 (f < 0)."""
    gs = cst.gamma_star
    Sc = 4 * (1 + 16 * gs * gs).sqrt()
    k2 = (gs / Sc) ** 2
    return [lower(Sc * (1 - theta * k2)) for theta in (0.25, 0.5, 0.75)]
