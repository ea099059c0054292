"""Model A verify checks: the whole report (slow suite)."""
import json
import subprocess
import sys

import pytest

# The quick checks' statuses are asserted on a fresh-process run in
# tests/project/test_verify_determinism.py (run once there, not again here).


@pytest.mark.slow
def test_rdyn_verify_full_report():
    out = subprocess.run([sys.executable, "-m", "rdyn", "verify", "--model", "A", "--json"],
                         capture_output=True, text=True)
    data = json.loads(out.stdout)
    statuses = [x["status"] for x in data["checks"]]
    assert out.returncode == 0 and "fail" not in statuses
    assert statuses.count("pass") >= 20
