"""Small helpers on python-flint ``arb`` balls for the proofs: a ball from exact float endpoints,
the hull of two balls, rigorous float bounds, and the enclosure of ``B(z) = (z - atan z)/z^3``.

(python-flint's ``arb(mid, rad)`` with ball arguments and ``arb.union`` return far wider balls
than needed in the version used here, so the hulls are formed by hand.)
"""
from __future__ import annotations

import math
import sys

from flint import arb


def ball(lo: float, hi: float):
    """The ball [lo, hi] (exact float endpoints, lo <= hi); contains the whole interval."""
    m = (arb(lo) + arb(hi)) / 2
    r = (arb(hi) - arb(lo)) / 2
    return m + arb(0, _up(r))


def _up(x) -> float:
    """A float >= every point of the ball x (x >= 0 expected)."""
    flint = sys.modules.get("flint")   # an arb exists only once flint is loaded
    v = float(x.upper()) if flint is not None and isinstance(x, flint.arb) else float(x)
    return math.nextafter(math.nextafter(v, math.inf), math.inf) + 0.0


def upper(x) -> float:
    """A float >= every point of x."""
    return math.nextafter(float(x.upper()), math.inf)


def lower(x) -> float:
    """A float <= every point of x."""
    return math.nextafter(float(x.lower()), -math.inf)


def hull(a, b):
    """A ball containing the balls a and b."""
    m = arb(a.mid())
    r = max(_up(abs(arb(a.mid()) - m) + a.rad()), _up(abs(arb(b.mid()) - m) + b.rad()))
    return m + arb(0, r * (1 + 2.0**-50) + 1e-300)


def positive(x) -> bool:
    return bool(x > 0)


def b_point(z):
    """B(z) = (z - atan z)/z^3 at z > 0 (a ball), by the alternating series for small z."""
    if z.upper() < arb(2) ** -12:
        z2 = z * z
        # 1/3 - z^2/5 + z^4/7 - ...: for 0 < z < 1 the partial sums bracket the value
        return (arb(1) / 3 - z2 / 5) + arb(0, 1) * (z2 * z2 / 7)
    return (z - z.atan()) / (z * z * z)


def b_enclosure(z_lo: float, z_hi: float):
    """A ball containing B(z) for every z in [z_lo, z_hi] (0 <= z_lo <= z_hi): B decreases on
    [0, oo) from B(0) = 1/3, so the values lie between B(z_hi) and B(z_lo)."""
    hi = arb(1) / 3 if z_lo <= 0 else b_point(arb(z_lo))
    lo = b_point(arb(z_hi)) if z_hi > 0 else arb(1) / 3
    return hull(lo, hi)
