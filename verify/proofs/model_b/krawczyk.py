"""Theorem 4.2's gamma*: the unique, attracting fixed point of the collapsed GD map in a box, for every
S0 of an interval, by the Krawczyk test (:func:`krawczyk_gamma_star`)."""
from __future__ import annotations

import math
import time

from flint import arb

from rdyn.verification.proofs.balls import ball, hull, lower, upper
from rdyn.verification.proofs.iterate import digits
from rdyn.verification.proofs.model_b.instance import NolnConstants, bmin, eta_of_k, k_terms, qball


def krawczyk_gamma_star(cst: NolnConstants, s0: tuple, form: str = "corrected", rel_width: float = 2.0 ** -8):
    """Existence, uniqueness and attraction of gamma* in X = gamma* (1 +- rel_width) for the GD map
    g(gamma) = gamma - eta S F + eta^2 gamma F^2 (F = 2 kappa2 (gamma - gamma*)/d, B.2.3), for every
    S0 in s0 at eta = eta_max(S0) and every S in [2 min X, sqrt(S0^2 + 4 max X^2)] (the S the
    trajectory can have with gamma in X: S^2 = D^2 + 4 gamma^2, 0 <= D <= S0 by Theorem B.3's region).

    Returns a dict: box, width, K(X) (the Krawczyk image), inside (K(X) in int X), contraction
    (upper bound of sup |g'| over X and the parameters), verdict."""
    t0 = time.perf_counter()
    gs, k2, d = cst.gamma_star, qball(cst.kappa2), cst.d
    c = 2 * k2 / d
    x_lo, x_hi = lower(gs * (1 - arb(rel_width))), upper(gs * (1 + arb(rel_width)))
    X = ball(x_lo, x_hi)
    m = arb(X.mid())
    # split the S0 interval and, for each piece, the S range (geometrically) so the parameter
    # boxes stay narrow; the main term eta c S of h' is enclosed from its (positive) endpoints
    pieces, s_pieces, lo, hi = 16, 16, float(s0[0]), float(s0[1])
    inside, q_max, K_hull, boxes = True, 0.0, None, 0

    def h(gam, S_, eta_):
        F = c * (gam - gs)
        return eta_ * F * (S_ - eta_ * gam * F)

    def dh(gam, S_lo: float, S_hi: float, eta_):   # d/dgamma of eta F (S - eta gamma F), F' = c
        F = c * (gam - gs)
        ec = eta_ * c
        main = ball(lower(ec) * S_lo * (1 - 2.0 ** -50), upper(ec) * S_hi * (1 + 2.0 ** -50))
        return main - ec * eta_ * gam * F + eta_ * F * (-eta_ * F - eta_ * gam * c)

    def piece(a: float, b: float):
        """(inside, q, hull of K(X), boxes) over S0 in [a, b] and the S range it allows."""
        S0 = ball(a, b)
        k, _ = bmin(k_terms(form, S0, gs, k2, d))
        eta = eta_of_k(k, gs, k2, d)
        eta_m = arb(eta.mid())
        s_lo, s_hi = 2 * x_lo, upper((S0 * S0 + 4 * arb(x_hi) ** 2).sqrt())
        ratio = (s_hi / s_lo) ** (1.0 / s_pieces)
        ok, q, Kh = True, 0.0, None
        for j in range(s_pieces):
            p_lo, p_hi = s_lo * ratio ** j, (s_hi if j == s_pieces - 1 else s_lo * ratio ** (j + 1))
            S = ball(p_lo, p_hi)
            Sm = arb(S.mid())
            C = 1 / dh(m, float(Sm), float(Sm), eta_m).mid()
            KX = m - C * h(m, S, eta) + (1 - C * dh(X, p_lo, p_hi, eta)) * (X - m)
            ok = ok and bool(KX.lower() > X.lower()) and bool(KX.upper() < X.upper())
            q = max(q, upper(abs(1 - dh(X, p_lo, p_hi, eta))))
            Kh = KX if Kh is None else hull(Kh, KX)
        return ok, q, Kh, s_pieces

    # S0 pieces: geometric (eta_max ~ 1/S0), bisected (geometric mean) where the test fails
    work = [(lo * (hi / lo) ** (i / pieces), hi if i == pieces - 1 else lo * (hi / lo) ** ((i + 1) / pieces), 0)
            for i in range(pieces)]
    while work:
        a, b, depth = work.pop()
        ok, q, Kh, nb = piece(a, b)
        boxes += nb
        if not (ok and q < 1) and depth < 12 and b > a:
            mid = math.sqrt(a * b)
            work += [(a, mid, depth + 1), (mid, b, depth + 1)]
            continue
        inside = inside and ok
        q_max = max(q_max, q)
        K_hull = Kh if K_hull is None else hull(K_hull, Kh)
    verdict = "certified" if inside and q_max < 1 else "undecided"
    return {"label": "Theorem 4.2 (gamma*)", "form": form, "side": None,
            "statement": f"gamma* is the unique fixed point of the collapsed GD map in the box X and attracts it "
                         f"(|g'| <= q < 1 on X), for every S0 in [{s0[0]!r}, {s0[1]!r}] at eta = eta_max ({form})",
            "quantity": "fixed_point", "verdict": verdict,
            "certificate": None if verdict != "certified" else {
                "box": [x_lo, x_hi], "width": x_hi - x_lo, "krawczyk_image": [lower(K_hull), upper(K_hull)],
                "contraction": q_max, "gamma_star": digits(gs), "gamma_star_radius": float(gs.rad()),
                "S0": [lo, hi], "boxes": boxes, "min_margin": min(lower(K_hull) - x_lo, x_hi - upper(K_hull)) / (x_hi - x_lo),
                "seconds": round(time.perf_counter() - t0, 3)},
            "counterexample": None,
            "reason": None if verdict == "certified" else
            f"Krawczyk image inside X: {inside}; contraction bound {q_max!r} (needs < 1)"}
