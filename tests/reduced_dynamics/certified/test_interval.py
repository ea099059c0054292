"""reduced_dynamics/certified/interval.py: the sharp operations (``iadd1`` .. ``isqrt1``) compiled and as Python
source give the same endpoints, lie inside the fast ones, and contain the exact results; :class:`Interval` is
those operations behind Python operators (the Model B prover's interval)."""
from __future__ import annotations

import math
import random
from fractions import Fraction

import mpmath
import pytest

from rdyn.reduced_dynamics.certified import interval as ci
from rdyn.reduced_dynamics.certified.interval import Interval

PAIRS = [((0.1, 0.3), (0.7, 1.9)), ((-2.5, 1e-3), (3.0, 3.0 + 2 ** -40)), ((1e-300, 1e-200), (-7.0, -1e-5)),
         ((1 / 3, 1 / 3), (2 / 3, 2 / 3)), ((-1e300, 1e300), (1e10, 1e12)), ((0.0, 0.0), (5e-324, 1e-310))]


def _contains(iv: Interval, exact) -> bool:
    return (iv.lo == -math.inf or Fraction(iv.lo) <= exact) and (iv.hi == math.inf or exact <= Fraction(iv.hi))


def _random_pairs(n: int, seed: int = 7):
    rng = random.Random(seed)
    for _ in range(n):
        a = sorted(rng.uniform(-4, 4) * 10.0 ** rng.randint(-30, 30) for _ in range(2))
        b = sorted(rng.uniform(-4, 4) * 10.0 ** rng.randint(-30, 30) for _ in range(2))
        yield tuple(a), tuple(b)


@pytest.mark.parametrize("a,b", PAIRS)
def test_interval_is_the_sharp_primitives(a, b):
    """Interval's operators are iadd1, isub1, imul1, idiv1, isqrt1 of certified/interval.py, bit for bit:
    the compiled primitive and its Python source (which Interval runs) give the same endpoints."""
    x, y = Interval(*a), Interval(*b)
    assert (x + y).pair() == ci.iadd1(a, b) == ci.iadd1.py_func(a, b)
    assert (x - y).pair() == ci.isub1(a, b) == ci.isub1.py_func(a, b)
    assert (x * y).pair() == ci.imul1(a, b) == ci.imul1.py_func(a, b)
    assert (x / y).pair() == ci.idiv1(a, b) == ci.idiv1.py_func(a, b)
    assert (-x).pair() == ci.ineg(a)
    for v in (a, b):
        if v[1] >= 0:
            assert Interval(*v).sqrt().pair() == ci.isqrt1(v) == ci.isqrt1.py_func(v)
    # a float operand is the point interval
    assert (x + 2).pair() == (2 + x).pair() == ci.iadd1(a, (2.0, 2.0))
    assert (1 - x).pair() == ci.isub1((1.0, 1.0), a)


def test_compiled_and_python_sharp_primitives_agree():
    for a, b in _random_pairs(300):
        for name in ("iadd1", "isub1", "imul1", "idiv1"):
            fn = getattr(ci, name)
            assert fn(a, b) == fn.py_func(a, b), (name, a, b)
        assert ci.isqrt1((0.0, abs(b[1]))) == ci.isqrt1.py_func((0.0, abs(b[1])))


def test_sharp_rounding_is_one_ulp_and_inside_up_down():
    """pred/succ are the neighbouring floats (nextDown/nextUp) of the round-to-nearest endpoint; the
    certified pass's up/down enclose them (up(x) >= succ(x)), so the sharp interval lies inside
    the fast one."""
    for x in (0.0, -0.0, 1.0, 0.1, -3.5, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, math.inf):
        assert ci.succ(x) == math.nextafter(x, math.inf) and ci.pred(-x) == -ci.succ(x)
        assert ci.up(x) >= ci.succ(x) and ci.down(-x) <= ci.pred(-x)
    assert ci.pred(-math.inf) == -math.inf and ci.succ(math.inf) == math.inf
    for a, b in _random_pairs(200, seed=11):
        for sharp, fast in ((ci.iadd1, ci.iadd), (ci.isub1, ci.isub), (ci.imul1, ci.imul), (ci.idiv1, ci.idiv)):
            s, f = sharp(a, b), fast(a, b)
            assert f[0] <= s[0] <= s[1] <= f[1], (sharp, a, b)
    s = 0.1 + 0.2
    assert ci.iadd1((0.1, 0.1), (0.2, 0.2)) == (math.nextafter(s, -math.inf), math.nextafter(s, math.inf))


def test_interval_contains_the_exact_results():
    """Every endpoint pair contains the exact rational result over the box (at its corners; + - * /
    of intervals take their extremes there), and the square root its 50-digit value."""
    for a, b in list(PAIRS) + list(_random_pairs(200, seed=3)):
        x, y = Interval(*a), Interval(*b)
        corners = [(Fraction(p), Fraction(q)) for p in a for q in b]
        for iv, op in ((x + y, lambda p, q: p + q), (x - y, lambda p, q: p - q), (x * y, lambda p, q: p * q)):
            assert all(_contains(iv, op(p, q)) for p, q in corners)
        if b[0] > 0 or b[1] < 0:
            assert all(_contains(x / y, p / q) for p, q in corners)
        else:
            assert (x / y).pair() == (-math.inf, math.inf)
    with mpmath.workdps(50):
        for v in (2.0, 0.1, 1e-300, 7.5e300, 3.0):
            r = Interval(v, v).sqrt()
            exact = mpmath.sqrt(mpmath.mpf(v))
            assert mpmath.mpf(r.lo) < exact < mpmath.mpf(r.hi)
            assert r.lo >= 0 and Fraction(r.lo) ** 2 <= Fraction(v) <= Fraction(r.hi) ** 2
    assert Interval(-1e-300, 4.0).sqrt().lo == 0.0


def test_an_interval_chain_contains_the_exact_value():
    """A chain as in the slacks, (1 - k s)(2 - k s)/s + k^2 g (1 - g), at 50 digits."""
    k, s, g = (Interval(v) for v in (0.1234567, 1.7654321, 0.3))
    iv = (1 - k * s) * (2 - k * s) / s + k * k * g * (1 - g)
    with mpmath.workdps(50):
        K, S, G = (mpmath.mpf(v) for v in (0.1234567, 1.7654321, 0.3))
        exact = (1 - K * S) * (2 - K * S) / S + K * K * G * (1 - G)
        assert mpmath.mpf(iv.lo) < exact < mpmath.mpf(iv.hi)
    assert iv.hi - iv.lo < 1e-14


