"""reduced_dynamics/model_b/rule.py: the spectral rule's moments, means and standard error."""
from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from rdyn.reduced_dynamics.model_b.rule import NullContext, SpectralRule, distinct_levels, sqrt_elementwise

# two nodes: eigenvalue levels (4, 1) with the mass of a on each
LEVELS = np.array([[4.0, 1.0], [4.0, 1.0]])
MASSES = np.array([[0.5, 0.5], [0.25, 0.75]])


def rule(kind="exact", weights=(0.5, 0.5)):
    return SpectralRule(LEVELS, MASSES, np.array(weights), kind)


def test_moments_per_node():
    r = rule()
    assert r.nodes == 2
    assert r.m1.tolist() == [2.5, 1.75]                      # 0.5*4 + 0.5*1, 0.25*4 + 0.75*1
    assert r.m2.tolist() == [8.5, 4.75]
    assert r.variance.tolist() == pytest.approx((r.m2 - r.m1 ** 2).tolist(), abs=1e-15)
    assert r.variance.tolist() == [2.25, 1.6875]


def test_means_are_weighted_and_std_error_only_for_samples():
    r = rule(weights=(0.25, 0.75))
    assert r.means(lambda nodes: [nodes.m1, nodes.m2]) == [0.25 * 2.5 + 0.75 * 1.75, 0.25 * 8.5 + 0.75 * 4.75]
    assert r.std_error([1.0, 2.0]) is None
    assert rule("monte_carlo").std_error([1.0, 2.0, 3.0]) == pytest.approx(1 / math.sqrt(3))


def test_mp_rule_means_at_the_working_precision():
    with mpmath.workdps(40):
        to_mp = np.vectorize(mpmath.mpf, otypes=[object])
        r = SpectralRule(to_mp(LEVELS), to_mp(MASSES), to_mp(np.array([1.0, 2.0])) / 3, "exact", mp=True)
        (k3,) = r.means(lambda nodes: [sqrt_elementwise(nodes.m2)])
        want = (mpmath.sqrt(mpmath.mpf("8.5")) + 2 * mpmath.sqrt(mpmath.mpf("4.75"))) / 3
        assert isinstance(k3, mpmath.mpf) and abs(k3 - want) < mpmath.mpf(10) ** -38


def test_distinct_levels_descending_with_multiplicity_and_the_null_context():
    assert distinct_levels((1, 4, 1, 2)) == [(4, 1), (2, 1), (1, 2)]
    with NullContext() as ctx:
        assert isinstance(ctx, NullContext)
