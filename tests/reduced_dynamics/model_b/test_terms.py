"""reduced_dynamics/model_b/terms.py: per-sample (loss, dloss/dgamma) of the LN and no-LN layers."""
from __future__ import annotations

import numpy as np
import pytest

from rdyn.reduced_dynamics.model_b import terms
from rdyn.reduced_dynamics.model_b.rule import SpectralRule

RULE = SpectralRule(np.array([[4.0, 1.0], [3.0, 2.0]]), np.array([[0.5, 0.5], [0.2, 0.8]]),
                    np.array([0.5, 0.5]), "exact")
M1, M2 = RULE.m1, RULE.m2


def _derivative(f, g, h=1e-4):
    return (f(g + h) - f(g - h)) / (2 * h)


@pytest.mark.parametrize("g", [0.0, 0.3, 2.0])
def test_ln_loss_is_two_minus_two_cos_and_dloss_its_derivative(g):
    def cos(g):
        return (M1 + g * M2) / np.sqrt((1 + 2 * g * M1 + g * g * M2) * M2)

    loss, dloss = terms.ln_terms(RULE, g)
    assert loss == pytest.approx(2 - 2 * cos(g), rel=1e-12)
    assert dloss == pytest.approx(_derivative(lambda x: 2 - 2 * cos(x), g), rel=1e-6)


@pytest.mark.parametrize("target", ["unnormalized", "normalized"])
def test_noln_dloss_is_the_derivative_of_the_loss(target):
    g = 0.7
    loss, dloss = terms.noln_terms(RULE, g, target)
    assert dloss == pytest.approx(_derivative(lambda x: terms.noln_terms(RULE, x, target)[0], g), rel=1e-6)
    if target == "unnormalized":   # E||(g - 1) S a + ... ||: 1 + 2(g-1) m1 + (g-1)^2 m2
        assert loss == pytest.approx(1 + 2 * (g - 1) * M1 + (g - 1) ** 2 * M2, rel=1e-15)


def test_model_terms_dispatches_by_model():
    for a, b in zip(terms.model_terms("ln", RULE, 0.3), terms.ln_terms(RULE, 0.3)):
        assert np.array_equal(a, b)
    for a, b in zip(terms.model_terms("noln", RULE, 0.3, "normalized"), terms.noln_terms(RULE, 0.3, "normalized")):
        assert np.array_equal(a, b)
