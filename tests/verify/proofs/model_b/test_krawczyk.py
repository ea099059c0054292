"""verify/proofs/model_b/krawczyk.py: gamma* of Theorem 4.2 by the Krawczyk test."""
from __future__ import annotations

from fractions import Fraction

import flint

from rdyn.verification.proofs.model_b.instance import BInstance, noln_constants
from rdyn.verification.proofs.model_b.krawczyk import krawczyk_gamma_star


def test_the_box_holds_the_exact_fixed_point_and_the_map_contracts():
    old, flint.ctx.prec = flint.ctx.prec, 200
    try:
        cst = noln_constants(BInstance())      # Task 1, d = 16, n = 32: gamma* = 1 - kappa1/kappa2 = 31/47
        result = krawczyk_gamma_star(cst, (0.25, 16.0), "corrected")
    finally:
        flint.ctx.prec = old
    assert cst.gamma_star_exact == Fraction(31, 47)
    cert = result["certificate"]
    assert result["verdict"] == "certified" and result["quantity"] == "fixed_point"
    lo, hi = cert["box"]
    assert lo < 31 / 47 < hi and hi - lo == cert["width"]
    k_lo, k_hi = cert["krawczyk_image"]
    assert lo < k_lo < 31 / 47 < k_hi < hi                 # K(X) inside int X: existence, uniqueness
    assert 0 < cert["contraction"] < 1                      # and attraction
