"""verify/proofs/model_b/counterexample.py: the printed eta_max of Theorem B.3 refuted by a certified
(gamma, S) iteration; the corrected one gives no counterexample."""
from __future__ import annotations

import math

import flint

from rdyn.verification.proofs.model_b.counterexample import crossing_candidates, trajectory_counterexample
from rdyn.verification.proofs.model_b.instance import BInstance, noln_constants

NAMES = ("descent_lemma", "loss", "gamma")


def _at_200_bits(f):
    old, flint.ctx.prec = flint.ctx.prec, 200
    try:
        return f(noln_constants(BInstance()))
    finally:
        flint.ctx.prec = old


def test_candidates_lie_just_below_the_crossing_of_the_printed_terms():
    gs = 31 / 47
    crossing = 4 * math.sqrt(1 + 16 * gs * gs)             # S0_c = 4 sqrt(1 + 16 gamma*^2)
    points = _at_200_bits(crossing_candidates)
    assert len(points) == 3 and all(crossing * (1 - 0.01) < p < crossing for p in points)
    assert points == sorted(points, reverse=True)          # theta = 1/4, 1/2, 3/4: further below


def test_the_printed_form_overshoots_gamma_star_at_step_2_and_the_corrected_does_not():
    printed = _at_200_bits(lambda cst: trajectory_counterexample("printed", 11.2470741, cst, NAMES))
    corrected = _at_200_bits(lambda cst: trajectory_counterexample("corrected", 11.2470741, cst, NAMES))
    assert corrected == {}
    gamma = printed["gamma"]
    assert gamma["step"] == 2 and gamma["rhs"].startswith("0.659574468085106382978723404255319")   # 31/47
    assert float(gamma["lhs"]) > float(gamma["rhs"])        # gamma_2 > gamma*: the statement is false
    assert 1e-12 < float(gamma["ratio"]) - 1 < 1.1e-12 and gamma["ratio_radius"] < 1e-40
