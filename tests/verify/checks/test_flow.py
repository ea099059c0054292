"""verify/checks/flow.py: the derived T* exponent against the printed Theta(K D^2/(eta ||V*||^2))."""
from __future__ import annotations

from rdyn.verification.checks import flow


def test_printed_d_squared_is_a_discrepancy_with_logits_over_d_and_holds_over_sqrt_d():
    checks = {c.id: c for c in flow.derived_exponent_checks()}
    assert set(checks) == {"A.flow.Tstar_exponent.D", "A.flow.Tstar_exponent.sqrtD"}
    assert checks["A.flow.Tstar_exponent.D"].status == "discrepancy"     # derived: D^3
    assert checks["A.flow.Tstar_exponent.sqrtD"].status == "pass"
    assert flow.PRINTED_TSTAR in checks["A.flow.Tstar_exponent.D"].claim + str(checks["A.flow.Tstar_exponent.D"].detail)
