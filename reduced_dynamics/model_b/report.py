"""The report of one Model B run (the JSON object of ``rdyn ln``; docs/interface.md, ``rdyn ln``).

Final ``alpha, beta, gamma, loss`` (looped model: w, v, rho), the exact moments
``kappa1 = E[a^T S a]`` and ``kappa2 = E||S a||^2`` (rationals), ``kappa3 = E||S a||``,
``gamma_star`` (no-LN layer), the expectation kind and standard error, and per model: the
contraction factor R_t of Theorem 4.6 against the power method's ratio lambda_{r+1}/lambda_1
(LN layer; R* of the no-LN fixed point), the growth constants and fitted exponents
(gamma ~ t^(1/3) for the LN layer, rho ~ t^(1/2) looped), the no-LN irreducible loss, and
Theorem 4.7's bound (looped).
"""
from __future__ import annotations

from fractions import Fraction

import mpmath

from rdyn.reduced_dynamics.model_b.analysis import contraction_ratio, fitted_exponent, test_spectrum, theorem_4_7


def _rational(x, dps):
    """A Fraction as float64, or as mpf with ``dps`` digits (no float round trip)."""
    if dps is None:
        return float(x)
    with mpmath.workdps(dps + 10):
        return mpmath.mpf(x.numerator) / x.denominator


def report(cfg, tr) -> dict:
    """The JSON object of the contract plus the model-specific reports."""
    c = tr.constants
    out = {"alpha": tr.alpha[-1], "beta": tr.beta[-1], "gamma": tr.gamma[-1], "loss": tr.loss[-1],
           "kappa1": _rational(c.kappa1_exact, cfg.dps),
           "kappa2": _rational(c.kappa2_exact, cfg.dps), "kappa3": c.kappa3,
           "gamma_star": tr.gamma_star, "expectation": tr.expectation, "std_error": tr.std_error,
           "steps": cfg.steps, "model": cfg.model}
    lam, c2 = test_spectrum(cfg)
    top = lam[0]
    below = lam[lam < top * (1 - 1e-12)]
    lam_next = float(below[0]) if below.size else float(top)
    t_from = max(1, cfg.steps // 2)
    if cfg.model == "ln":
        g = float(tr.gamma[-1])
        d_cubes = (tr.gamma[-1] ** 3 - tr.gamma[-2] ** 3) if cfg.steps >= 1 else None
        out["contraction"] = {"R_t": contraction_ratio(g, top, lam_next),
                              "power_method_ratio": lam_next / top,
                              "lambda_1": float(top), "lambda_r_plus_1": lam_next}
        out["growth"] = {"upsilon3": c.upsilon3,
                         "predicted_gamma_cube_increment": 12 * cfg.eta * float(c.upsilon3) / cfg.d,
                         "last_gamma_cube_increment": d_cubes,
                         "exponent_gamma": fitted_exponent(tr.gamma, t_from),
                         "exponent_alpha": fitted_exponent(tr.alpha, t_from),
                         "exponent_beta": fitted_exponent(tr.beta, t_from),
                         "claimed": {"gamma": Fraction(1, 3), "alpha": Fraction(1, 6),
                                     "beta": Fraction(1, 6)}}
    elif cfg.model == "noln":
        gs = float(tr.gamma_star)
        out["contraction"] = {"R_star": contraction_ratio(gs, top, lam_next),
                              "power_method_ratio": lam_next / top,
                              "lambda_1": float(top), "lambda_r_plus_1": lam_next}
        k2 = float(c.kappa2_exact)
        if cfg.target == "unnormalized":
            irreducible = 1 - float(c.kappa1_exact) ** 2 / k2
        else:
            irreducible = 2 - 2 * float(c.kappa4) - (float(c.kappa3) - float(c.kappa1_exact)) ** 2 / k2
        out["irreducible_loss"] = irreducible
    else:
        rho = float(tr.gamma[-1])
        out["theorem_4_7"] = theorem_4_7(rho, cfg.L, lam, c2)
        d_sq = (tr.gamma[-1] ** 2 - tr.gamma[-2] ** 2) if cfg.steps >= 1 else None
        out["growth"] = {"upsilon1": tr.upsilon1,
                         "predicted_rho_square_increment": 4 * cfg.eta * float(tr.upsilon1) / cfg.d,
                         "last_rho_square_increment": d_sq,
                         "exponent_rho": fitted_exponent(tr.gamma, t_from),
                         "exponent_w": fitted_exponent(tr.alpha, t_from),
                         "exponent_v": fitted_exponent(tr.beta, t_from),
                         "claimed": {"rho": Fraction(1, 2), "w": Fraction(1, 4), "v": Fraction(1, 4)}}
    return out


