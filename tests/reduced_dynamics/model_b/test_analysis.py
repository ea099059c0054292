"""reduced_dynamics/model_b/analysis.py: fitted exponents, Theorem 4.6's ratio, Theorem 4.7's bounds."""
from __future__ import annotations

import math

import pytest

from rdyn.reduced_dynamics.model_b import analysis   # (not its function test_spectrum: pytest would collect it)
from rdyn.reduced_dynamics.model_b.config import Config


def test_fitted_exponent_of_a_power_law():
    values = [3.0 * t ** (1 / 3) for t in range(200)]
    assert analysis.fitted_exponent(values, 50) == pytest.approx(1 / 3, abs=1e-12)
    assert analysis.fitted_exponent([1.0, 2.0, 3.0], 1) is None       # fewer than 3 points


def test_contraction_ratio_from_one_to_the_power_method():
    assert analysis.contraction_ratio(0.0, 4.0, 1.0) == 1.0
    assert analysis.contraction_ratio(1.0, 4.0, 1.0) == 2 / 5
    assert analysis.contraction_ratio(1e12, 4.0, 1.0) == pytest.approx(1 / 4)


def test_test_point_of_spectrum_data_and_theorem_4_7():
    lam, c2 = analysis.test_spectrum(Config(data="spectrum", d=3, n=6, spectrum=(1, 4, 1)))
    assert lam.tolist() == [4.0, 1.0, 1.0] and c2.sum() == pytest.approx(1.0)
    bounds = analysis.theorem_4_7(0.0, 3, lam, c2)
    # rho = 0: no training, sin(psi) of the test point itself
    assert bounds["sin_psi_trained"] == pytest.approx(math.sqrt(c2[1:].sum()))
    assert bounds["lambda_ratio"] == 0.25
    assert bounds["lower_bound"] <= bounds["sin_psi_power_method"] <= bounds["upper_bound"]
    assert bounds["upper_bound"] == pytest.approx(math.sqrt(c2[1:].sum() / c2[0]) * 0.25 ** 3)
