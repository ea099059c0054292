"""verify/proofs/model_b/contraction.py: Theorem 4.6's per-layer factor R = (1 + gamma l_(r+1))/(1 + gamma l_1)
enclosed over a gamma range and certified < 1."""
from __future__ import annotations

from fractions import Fraction

from rdyn.verification.proofs.model_b.contraction import contraction_factor, top_levels


def test_top_levels():
    assert top_levels((4, 1, 1)) == (4, 1, 1)
    assert top_levels((4, 4, 2, 1)) == (4, 2, 2)
    assert top_levels((3, 3)) == (3, 2, None)


def test_certified_over_a_gamma_range_with_the_endpoint_values():
    out = contraction_factor((4, 1, 1), 1.0, 2.0, label="Theorem 4.6", strictly_above_power=True)
    assert out["verdict"] == "certified" and out["counterexample"] is None
    cert = out["certificate"]
    lo, hi = cert["R"]
    # R decreases in gamma: R(2) = 3/9 below, R(1) = 2/5 above; the power method's ratio 1/4 below both
    assert lo <= 1 / 3 <= lo + 1e-15 and hi - 1e-15 <= 2 / 5 <= hi
    assert cert["min_margin"] <= float(Fraction(1, 3) - Fraction(1, 4)) and cert["min_margin"] > 0


def test_refuted_when_the_range_reaches_gamma_zero():
    out = contraction_factor((4, 1, 1), 0.0, 2.0, label="Theorem 4.6")      # R(0) = 1, not < 1
    assert out["verdict"] == "refuted" and out["certificate"] is None
    assert out["counterexample"]["rhs"] == "1"


def test_a_ball_too_wide_is_undecided_never_refuted():
    """A certified ball (one unknown value) straddling the point where R = 1 decides nothing; a ball on which R >= 1
    everywhere refutes (R(gamma) >= 1 for gamma <= 0)."""
    from flint import arb

    wide = arb("0.5", "1")           # [-0.5, 1.5]: R >= 1 below 0, < 1 above
    out = contraction_factor((4, 1, 1), wide, wide, label="Theorem 4.7", what="rho_T")
    assert out["verdict"] == "undecided" and out["counterexample"] is None and "too wide" in out["reason"]
    negative = arb("-0.1", "0.01")   # R = 0.9/0.6 = 1.5 on the whole ball
    out = contraction_factor((4, 1, 1), negative, negative, label="Theorem 4.7", what="rho_T")
    assert out["verdict"] == "refuted" and out["counterexample"]["rhs"] == "1"
    assert float(out["counterexample"]["lhs"][:6]) >= 1


def test_a_tiny_positive_gamma_is_certified_at_any_precision():
    """1 - R = gamma (l_1 - l_(r+1))/(1 + gamma l_1) has no cancellation: R < 1 at gamma = 1e-300 is certified with
    a margin of 3e-300, at the default 53 bits (R itself rounds to 1 there; deciding R < 1 from R's ball said
    refuted)."""
    import flint

    with flint.ctx.workprec(53):
        out = contraction_factor((4, 1, 1), 1e-300, 2.0, label="Theorem 4.6")
    assert out["verdict"] == "certified"
    assert 2.9e-300 < out["certificate"]["min_margin"] <= 3e-300
