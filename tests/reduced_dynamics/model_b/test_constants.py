"""reduced_dynamics/model_b/constants.py: kappa1, kappa2 exact; kappa3, kappa4, Upsilon_3 as means."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from rdyn.reduced_dynamics.model_b import constants as mc
from rdyn.reduced_dynamics.model_b.rule import SpectralRule


def test_exact_kappas_of_both_tasks():
    # Task 2: sum(spectrum)/d and sum(m^2)/d (rdyn ln --spectrum 4,1,1 --d 3 prints kappa1 2, kappa2 6)
    assert mc.kappa_exact("spectrum", 3, 6, (4, 1, 1)) == (Fraction(2), Fraction(6))
    # Task 1: n/d and n(n + d - 1)/d^2
    assert mc.kappa_exact("sphere", 16, 32, None) == (Fraction(2), Fraction(32 * 47, 256))


def test_constants_are_the_means_of_the_per_node_terms():
    rule = SpectralRule(np.array([[4.0, 1.0], [4.0, 1.0]]), np.array([[0.5, 0.5], [0.25, 0.75]]),
                        np.array([0.5, 0.5]), "exact")
    c = mc.constants(rule, "spectrum", 2, 5, (4, 1))
    m1, m2 = np.array([2.5, 1.75]), np.array([8.5, 4.75])
    assert (c.kappa1, c.kappa2) == (pytest.approx(m1.mean()), pytest.approx(m2.mean()))
    assert c.kappa3 == pytest.approx(np.sqrt(m2).mean(), rel=1e-15)              # E||S a||
    assert c.kappa4 == pytest.approx((m1 / np.sqrt(m2)).mean(), rel=1e-15)        # E[a^T S a / ||S a||]
    assert c.upsilon3 == pytest.approx(((m2 - m1 ** 2) / m2 ** 2).mean(), rel=1e-14)
    assert (c.kappa1_exact, c.kappa2_exact) == (Fraction(5, 2), Fraction(17, 2))
