"""verify/proofs/model_b/boxes.py: one S0 box of Theorem B.3 decided by branch and bound."""
from __future__ import annotations

import flint

from rdyn.verification.proofs.model_b.boxes import Tally, s0_box_decide
from rdyn.verification.proofs.model_b.instance import BInstance, noln_constants


def _decide(form, lo, hi, max_boxes=200_000):
    old, flint.ctx.prec = flint.ctx.prec, 200
    try:
        tally = Tally()
        return s0_box_decide(form, lo, hi, noln_constants(BInstance()), tally, max_boxes), tally
    finally:
        flint.ctx.prec = old


def test_the_corrected_eta_max_is_decided_on_a_box_with_positive_margins():
    (decided, margins, _region), _ = _decide("corrected", 1.0, 1.5)
    assert decided == {"loss": True, "descent_lemma": True, "gamma": True}
    assert all(0 < m < 1 for m in margins.values())


def test_a_box_across_the_printed_forms_failure_is_not_decided():
    (decided, _, _), _ = _decide("printed", 11.24, 11.26, max_boxes=2000)
    assert decided["gamma"] is not True                     # refuted there (test_counterexample.py)
