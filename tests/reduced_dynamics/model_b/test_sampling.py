"""reduced_dynamics/model_b/sampling.py: one fixed Monte Carlo sample of the spectral measure."""
from __future__ import annotations

import numpy as np

from rdyn.reduced_dynamics.model_b import sampling


def test_sphere_sample_bytes():
    # X and its normalised copy (2 d n), S and its eigenvectors (2 d^2), float64, per point
    assert sampling.sphere_sample_bytes(3, 6, 10) == 8.0 * 10 * (2 * 18 + 2 * 9)


def test_sphere_samples_are_unit_columns_in_chunks():
    chunks = list(sampling.sample_sphere_data(4, 5, 7, np.random.default_rng(0)))
    assert sum(X.shape[0] for X, _ in chunks) == 7
    for X, a in chunks:
        assert np.allclose(np.linalg.norm(X, axis=1), 1) and np.allclose(np.linalg.norm(a, axis=1), 1)


def test_spectrum_rule_masses_are_the_uniform_direction_on_each_level():
    rule = sampling.monte_carlo_rule("spectrum", 3, 6, (4, 1, 1), 20000, seed=1)
    assert rule.kind == "monte_carlo" and rule.nodes == 20000
    assert rule.levels[0].tolist() == [4.0, 1.0]
    assert np.allclose(rule.masses.sum(axis=1), 1)
    # a uniform unit vector in R^3 puts 1/3 of its mass on the level of multiplicity 1 on average
    assert abs(rule.masses[:, 0].mean() - 1 / 3) < 4 * rule.masses[:, 0].std() / np.sqrt(20000)
    again = sampling.monte_carlo_rule("spectrum", 3, 6, (4, 1, 1), 20000, seed=1)
    assert np.array_equal(rule.masses, again.masses)                  # fixed by the seed
