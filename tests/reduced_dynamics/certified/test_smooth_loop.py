"""reduced_dynamics/certified/smooth_loop.py: the width of a box of balls, in arb."""
from __future__ import annotations

import math

import pytest
from flint import arb

from rdyn.reduced_dynamics.certified.smooth_loop import log2_relative_radius


def test_log2_relative_radius_is_the_widest_component():
    box = [arb(3), arb(8, 2.0 ** -17), arb(1, 2.0 ** -30)]        # relative radii 0, 2^-20, 2^-30
    assert log2_relative_radius(box) == pytest.approx(-20, abs=1e-6)


def test_exact_components_and_balls_at_zero():
    assert log2_relative_radius([arb(3), arb(-1)]) == -math.inf
    assert log2_relative_radius([arb(1, 0.5), arb(0, 1e-30)]) == math.inf


def test_no_underflow_far_below_float64():
    assert log2_relative_radius([arb(1, arb(2) ** -2000)]) == pytest.approx(-2000, abs=1e-6)
