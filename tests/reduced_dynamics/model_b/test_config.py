"""reduced_dynamics/model_b/config.py: which expectation a Model B run uses."""
from __future__ import annotations

import pytest

from rdyn.reduced_dynamics.model_b.config import Config, exact_gamma_range, resolve_expectation
from rdyn.reduced_dynamics.model_b.exact import ExactUnavailable

SPECTRUM = dict(data="spectrum", d=3, n=6, spectrum=(4, 1, 1))


@pytest.mark.parametrize("cfg,expected", [
    (Config(model="noln", target="unnormalized"), "exact"),      # rational kappa1, kappa2 only
    (Config(**SPECTRUM), "exact"),                                # Task 2 spectrum, auto
    (Config(**SPECTRUM, expectation="qmc"), "qmc"),
    (Config(**SPECTRUM, expectation="monte_carlo"), "monte_carlo"),
    (Config(), "qmc"),                                            # sphere data, auto
    (Config(**SPECTRUM, alpha0=-1.0, beta0=1.0), "qmc"),          # may cross gamma = -1/lambda_i
])
def test_resolved_expectation(cfg, expected):
    assert resolve_expectation(cfg) == expected


def test_exact_where_it_does_not_exist_is_refused_with_the_reason():
    with pytest.raises(ExactUnavailable, match="not for sphere data"):
        resolve_expectation(Config(expectation="exact"))
    with pytest.raises(ExactUnavailable, match=r"alpha0\*beta0 = -0.5 < 0"):
        resolve_expectation(Config(**SPECTRUM, alpha0=-0.5, beta0=1.0, expectation="exact"))


def test_exact_gamma_range():
    assert exact_gamma_range(Config(alpha0=0.0, beta0=1.0))
    assert not exact_gamma_range(Config(alpha0=-0.1, beta0=1.0))
    assert exact_gamma_range(Config(model="noln", alpha0=-0.1, beta0=1.0))   # needs kappa1..4 only
