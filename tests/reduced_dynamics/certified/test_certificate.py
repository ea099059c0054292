"""reduced_dynamics/certified/certificate.py: the width of a box, and exact arb values as mpf."""
from __future__ import annotations

import math

import mpmath
from flint import arb

from rdyn.reduced_dynamics.certified.certificate import arb_to_mpf, relative_radius


def test_relative_radius_of_a_box():
    width = relative_radius([arb(3), arb(8, 0.5)])
    assert 0.5 / 8 <= width < 0.5 / 8 * (1 + 1e-8)                 # arb rounds radii up, never down
    assert relative_radius([arb(-2), arb(7)]) == 0.0                  # exact components count 0
    assert relative_radius([arb(1), arb(0, 1e-20)]) == math.inf      # a ball centred at 0


def test_arb_to_mpf_is_exact_at_any_working_precision():
    x = arb(1) / 3                                        # a 53+ bit midpoint, not 1/3 itself
    with mpmath.workdps(5):
        value = arb_to_mpf(x.mid())
    man, exp = x.mid().man_exp()                          # the midpoint is man * 2**exp exactly
    with mpmath.workprec(int(man).bit_length() + 64):
        assert value == mpmath.ldexp(mpmath.mpf(int(man)), int(exp))   # not rounded to 5 digits
        assert abs(value - mpmath.mpf(1) / 3) < mpmath.mpf(2) ** -50
    assert arb_to_mpf(2.5) == 2.5                                      # anything else unchanged
