"""verify/checks/errata_a.py: the erratum's one-formula ``q_min = ((D-K)/D)^2 (1 - c b/pi)(1 - c b/pi + c s/pi)``
(docs/claims.md, the glossary) equals the derived q_min of every activation, exactly and at 30 digits."""
import pytest

from rdyn.verification.checks.errata_a import q_min_named_holds


@pytest.mark.parametrize("scale", ["D", pytest.param("sqrtD", marks=pytest.mark.slow)])
def test_named_q_min_is_the_derived_one(scale):
    result = q_min_named_holds(scale)
    assert set(result) == {"identity", "relu", "leaky"}
    for activation, row in result.items():
        assert row["symbolic_zero"], activation
        assert row["max_abs_difference_30_digits"] < 1e-28, activation
