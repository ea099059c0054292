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


def test_appendix_f_monte_carlo_is_the_named_integrand_on_the_drawn_samples():
    """Only the named integrand is evaluated; its mean and standard error are those of the
    integrand on the same draws (three variances drawn in order from the generator)."""
    import math

    import numpy as np

    from rdyn.verification.checks.model_a import _appendix_f_monte_carlo

    a, b, c, kappa, samples = 1.0, 2.0, 0.5, 0.1, 2000
    draws = np.random.default_rng(7)
    x1, x2, x3 = (draws.standard_normal(samples) * math.sqrt(v) for v in (a, b, c))
    act = lambda x: np.where(x >= 0, x, kappa * x)  # noqa: E731
    slope = lambda x: np.where(x >= 0, 1.0, kappa)  # noqa: E731
    want = {"E[x1 s(x1) s'(x1+x2)]": x1 * act(x1) * slope(x1 + x2),
            "E[x2 s(x1) s'(x1+x2+x3)]": x2 * act(x1) * slope(x1 + x2 + x3),
            "E[s(x1) s(x1+x2)]": act(x1) * act(x1 + x2)}
    for name, values in want.items():
        mean, se = _appendix_f_monte_carlo(name, a, b, c, kappa, samples, np.random.default_rng(7))
        assert mean == values.mean() and se == values.std(ddof=1) / math.sqrt(samples)
