"""verify/proofs/model_b/training.py: certified GD training of the LN layer on a two-level spectrum."""
from __future__ import annotations

from rdyn.reduced_dynamics.model_b.config import Config
from rdyn.reduced_dynamics.model_b.iterate import iterate
from rdyn.verification.proofs.model_b.training import certified_training


def test_the_certified_gamma_contains_the_float64_iteration():
    gamma, increasing, _ = certified_training("ln", (4, 1, 1), 3, 0.1, 50)
    trajectory = iterate(Config(model="ln", data="spectrum", d=3, spectrum=(4, 1, 1), eta=0.1, steps=50))
    float64 = float(trajectory.gamma[-1])
    assert increasing
    assert abs(float(gamma.mid()) - float64) < 1e-12 * float64 and float(gamma.rad()) < 1e-30
