"""The collapsed map of rdyn.derivations.model_a.collapsed: ``K (C2' - C2) = (D - K)(C3' - C3)`` on every branch
(the logit gradient of each column sums to zero), the invariant behind ``C3 = K C2/(D - K)`` along the whole
trajectory from 0, on which the flow, the proofs and the late-phase bounds rest."""
import pytest

from rdyn.derivations.model_a.collapsed import c2_c3_invariant


@pytest.mark.parametrize("activation,scale", [
    ("relu", "D"),
    *(pytest.param(a, s, marks=pytest.mark.slow) for a, s in (("identity", "D"), ("identity", "sqrtD"),
                                                               ("relu", "sqrtD"), ("leaky", "D"), ("leaky", "sqrtD")))])
def test_c2_c3_invariant_on_every_branch(activation, scale):
    assert c2_c3_invariant(activation, scale)
