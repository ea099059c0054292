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


def _mp_rule(nodes=60, seed=2):
    """An mp rule whose masses carry more bits than the precisions used below."""
    rng = np.random.default_rng(seed)
    with mpmath.workdps(60):
        raw = [[mpmath.mpf(float(x)) + mpmath.mpf(1) / (7 + k) for k, x in enumerate(row)]
               for row in rng.random((nodes, 3))]
        masses = np.array([[v / mpmath.fsum(row) for v in row] for row in raw], dtype=object)
        levels = np.array([[mpmath.mpf(4), mpmath.mpf(2), mpmath.mpf(1)]] * nodes, dtype=object)
        weights = np.array([mpmath.mpf(1) / nodes] * nodes, dtype=object)
    return SpectralRule(levels, masses, weights, "exact", mp=True)


def _same_bits(xs, ys):
    return all(x._mpf_ == y._mpf_ for x, y in zip(xs, ys))


def test_mp_moments_are_the_mpf_expressions_bit_for_bit():
    """m1, m2, variance of an mp rule (computed on gmpy2 copies) are the values of the mpf
    object-array expressions at the precision each is first asked for, and mpfr_nodes holds them
    as ``mpfr_arrays.exact`` would read them at its own precision (rounded when lower)."""
    from rdyn.reduced_dynamics.numerics import mpfr_arrays

    r = _mp_rule()
    with mpmath.workdps(40):
        m1 = r.m1
        want_m1 = (r.levels * r.masses).sum(axis=1)
    with mpmath.workdps(30):
        var = r.variance
        dev = r.levels - want_m1[:, None]
        want_var = (r.masses * dev * dev).sum(axis=1)
    with mpmath.workdps(50):
        m2 = r.m2
        want_m2 = (r.levels * r.levels * r.masses).sum(axis=1)
    assert _same_bits(m1, want_m1) and _same_bits(var, want_var) and _same_bits(m2, want_m2)
    with mpmath.workdps(45):   # below m2's precision: m2 is read rounded, m1 and var as they are
        nodes = r.mpfr_nodes
        for got, want in ((nodes.m1, want_m1), (nodes.m2, want_m2), (nodes.variance, want_var),
                          (nodes.weights, r.weights)):
            assert all(x == y for x, y in zip(got, mpfr_arrays.exact(want)))
        assert not all(x == mpfr_arrays.exact_unrounded(want_m2)[i] for i, x in enumerate(nodes.m2))


def test_mp_means_equal_the_mpf_route_bit_for_bit():
    from rdyn.reduced_dynamics.model_b.terms import ln_terms

    r, plain = _mp_rule(), _mp_rule()
    with mpmath.workdps(35):
        g = mpmath.mpf(3) / 7
        fast = r.means(ln_terms, g)
        # the mpf route: statistics and terms on mpf object arrays, the weighted sum correctly rounded
        m1 = (plain.levels * plain.masses).sum(axis=1)
        m2 = (plain.levels * plain.levels * plain.masses).sum(axis=1)
        dev = plain.levels - m1[:, None]
        var = (plain.masses * dev * dev).sum(axis=1)

        class Stats:
            pass
        stats = Stats()
        stats.m1, stats.m2, stats.variance = m1, m2, var
        slow = [mpmath.fsum(w * v for w, v in zip(plain.weights, values)) for values in ln_terms(stats, g)]
    assert all(abs(x - y) <= mpmath.mpf(10) ** -34 * abs(y) for x, y in zip(fast, slow))
