"""Model A verify checks: fast subsets in the default run, the whole report as slow."""
import json
import subprocess
import sys

import pytest

from verify import checks_model_a as c


def by_id(checks):
    return {x.id: x for x in checks}


def test_printed_formulas_statuses():
    got = by_id(c.printed_formula_checks())
    assert got["A.C1star.identity"].status == "pass"
    assert got["A.loss.section5"].status == "pass"
    for name in ("F1", "F2_1", "F2_2", "F3", "F4", "F5"):
        assert got[f"A.{name}.identity"].status == "pass"
    assert got["A.A_of_t.relu"].status == "discrepancy"
    assert got["A.gradWKQ.identity"].status == "discrepancy"
    assert got["A.gradWKQ.identity"].detail["derived_equals_printed_with_minus_p_F1"]


def test_structural_checks_pass():
    assert all(x.status == "pass" for x in c.structural_checks())


def test_collapsed_map_against_monte_carlo_gradient():
    checks = c.collapsed_map_monte_carlo_checks(samples=100_000)
    assert len(checks) == 6 and all(x.status == "pass" for x in checks)


@pytest.mark.slow
def test_rdyn_verify_full_report():
    out = subprocess.run([sys.executable, "-m", "rdyn", "verify", "--model", "A", "--json"],
                         capture_output=True, text=True)
    data = json.loads(out.stdout)
    statuses = [x["status"] for x in data["checks"]]
    assert out.returncode == 0 and "fail" not in statuses
    assert statuses.count("pass") >= 20
