"""Shared by the claims tests (tests/verify/claims/test_claims.py) and the full-disk test of
the erratum (tests/rdyn/cli/test_hostile_inputs.py): a fake errata run."""
from __future__ import annotations

from rdyn.verification.checks.record import Check


def _fake_errata_run():
    rows = [{"config": "D=8, K=2, identity", "T": [200.0, 400.0, 800.0], "T_star": 100,
             "measured_values": [0.5, 0.25, 0.125], "derived_values": [0.45, 0.24, 0.124]}]
    late = {"expression": {"identity": "D**2*K*(D - K)/(4*T*eta)", "relu": "D**2*K*(D - K)/(4*T*eta)",
                           "leaky": "D**2*K*(D - K)/(4*T*eta)"},
            "tex": r"\frac{D^{2} K \left(D - K\right)}{4 T \eta}", "per_config": rows, "measured": 0.001}
    return [Check("A.errata.derived.loss_theorem31", "s", "printed vs derived", "discrepancy", None, None,
                  {"printed": "K*D**4/(eta*T)", "derived": {"relu": "D**2*K*(D - K)/(4*T*eta)"}}),
            Check("A.errata.late.excess_loss", "s", "late", "pass", 0.001, None, late),
            Check("A.errata.late.excess_loss.sqrtD", "s", "late", "pass", 0.001, None, late),
            Check("A.claim.D10", "s", "D10", "discrepancy", None, None, {"printed": "p <= 1/(2 pi D K)"})]
