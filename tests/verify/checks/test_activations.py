"""verify/checks/activations.py: the A.act.* checks of smooth activations decide as derived."""
from __future__ import annotations

from rdyn.verification.checks import activations


def test_closure_checks_pass_for_every_smooth_activation():
    checks = {c.id: c.status for c in activations.closure_checks()}
    assert {f"A.act.closure.row_norms.{name}" for name in activations.NAMES} <= set(checks)
    assert {"A.act.closure.orthogonal", "A.act.closure.homogeneous", "A.act.closure.row_sum"} <= set(checks)
    assert set(checks.values()) == {"pass"}


def test_finite_difference_checks_pass_with_small_errors():
    checks = activations.finite_difference_checks()
    assert [c.id for c in checks] == [f"A.act.fd.{name}" for name in activations.NAMES]
    assert all(c.status == "pass" and c.max_error is not None and c.max_error < 1e-5 for c in checks)
