"""verify/proofs/kernels.py: the facts a proof reads from the generated source instead of running sympy."""
from __future__ import annotations

import pytest

from rdyn.verification.proofs import symbolic as sy
from rdyn.verification.proofs.kernels import kernels


@pytest.mark.parametrize("activation, scale, atan, slack_power", [
    ("relu", "D", True, 1), ("identity", "D", False, 2), ("leaky", "D", True, 1), ("relu", "sqrtD", True, 1)])
def test_the_cached_facts_are_sympys(activation, scale, atan, slack_power):
    """The facts in the (disk-cached) source equal a fresh sympy reduction's: the atan coefficient sqrt((D-K)/K)
    where there is one, the power of e dividing D.19's upper slack, and the eta structure (all six hold)."""
    facts = kernels(activation, scale).facts
    r = sy.reduced(activation, scale)
    assert facts["atan"] is atan and (r.atan_coefficient is not None) is atan
    assert facts["slack_power"] == r.slack_power == slack_power
    assert facts["eta_structure"] == sy.eta_structure(activation, scale)
    assert all(facts["eta_structure"].values()) and len(facts["eta_structure"]) == 6
    assert facts["beta_is_eta_D_F3_over_Kp"] is True   # the C1 update's drive (Lemma D.13's C1 step)
