"""rdyn.verification.proofs.model_b: Theorem B.3's slacks on a box contain the exact ones (the float
``Interval`` itself: tests/reduced_dynamics/certified/test_interval.py), and the prover's verdicts."""
from __future__ import annotations

import math
from fractions import Fraction

import pytest

from rdyn.reduced_dynamics.certified.interval import Interval
from rdyn.verification.proofs.model_b.slacks import interval_slacks


def _contains(iv: Interval, exact) -> bool:
    return (iv.lo == -math.inf or Fraction(iv.lo) <= exact) and (iv.hi == math.inf or exact <= Fraction(iv.hi))


@pytest.mark.parametrize("per_k_sigma", [False, True])
@pytest.mark.parametrize("k,sigma,g", [(0.05, 3.0, 0.2), (0.2, 0.7, 0.9), (1e-6, 40.0, 0.55)])
def test_interval_slacks_contain_the_exact_slacks(k, sigma, g, per_k_sigma):
    """At a point state the slacks of the three statements (docs/proofs.md, Model B) contain their
    exact rational values: f = 1 - u, u = k sigma + k^2 g (1 - g); loss u (2 - u) (or, per k sigma,
    (1 + k g (1 - g)/sigma)(2 - u)); Part 1 (1 - k sigma - f^2)/(k sigma); 1 - k^2 (g - 1)^2."""
    f, s, shrink = interval_slacks(Interval(k), Interval(sigma), g, g, loss_per_k_sigma=per_k_sigma)
    K, S, G = Fraction(k), Fraction(sigma), Fraction(g)
    u = K * S + K * K * G * (1 - G)
    F = 1 - u
    assert _contains(f, F) and _contains(s["gamma"], F)
    assert _contains(s["loss"], (1 - F * F) / (K * S) if per_k_sigma else 1 - F * F)
    assert _contains(s["descent_lemma"], (1 - K * S - F * F) / (K * S))
    assert _contains(shrink, 1 - K * K * (G - 1) ** 2)
    if per_k_sigma:
        assert _contains(s["u"], u)
