"""rdyn.verification.proofs.model_b: the float interval ``Iv`` of the Theorem B.3 branch and bound is
the outward-rounded arithmetic of rdyn.reduced_dynamics.certified.interval (one arithmetic, one
rounding argument), and its results contain the exact ones."""
from __future__ import annotations

import math
import random
from fractions import Fraction

import mpmath
import pytest

from rdyn.reduced_dynamics.certified import interval as ci
from rdyn.verification.proofs.model_b.slacks import Iv, interval_slacks

PAIRS = [((0.1, 0.3), (0.7, 1.9)), ((-2.5, 1e-3), (3.0, 3.0 + 2 ** -40)), ((1e-300, 1e-200), (-7.0, -1e-5)),
         ((1 / 3, 1 / 3), (2 / 3, 2 / 3)), ((-1e300, 1e300), (1e10, 1e12)), ((0.0, 0.0), (5e-324, 1e-310))]


def _contains(iv: Iv, exact) -> bool:
    return (iv.lo == -math.inf or Fraction(iv.lo) <= exact) and (iv.hi == math.inf or exact <= Fraction(iv.hi))


def _random_pairs(n: int, seed: int = 7):
    rng = random.Random(seed)
    for _ in range(n):
        a = sorted(rng.uniform(-4, 4) * 10.0 ** rng.randint(-30, 30) for _ in range(2))
        b = sorted(rng.uniform(-4, 4) * 10.0 ** rng.randint(-30, 30) for _ in range(2))
        yield tuple(a), tuple(b)


@pytest.mark.parametrize("a,b", PAIRS)
def test_iv_is_the_sharp_primitives(a, b):
    """Iv's operators are iadd1, isub1, imul1, idiv1, isqrt1 of certified/interval.py, bit for bit:
    the compiled primitive and its Python source (which Iv runs) give the same endpoints."""
    x, y = Iv(*a), Iv(*b)
    assert (x + y).pair() == ci.iadd1(a, b) == ci.iadd1.py_func(a, b)
    assert (x - y).pair() == ci.isub1(a, b) == ci.isub1.py_func(a, b)
    assert (x * y).pair() == ci.imul1(a, b) == ci.imul1.py_func(a, b)
    assert (x / y).pair() == ci.idiv1(a, b) == ci.idiv1.py_func(a, b)
    assert (-x).pair() == ci.ineg(a)
    for v in (a, b):
        if v[1] >= 0:
            assert Iv(*v).sqrt().pair() == ci.isqrt1(v) == ci.isqrt1.py_func(v)
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


def test_iv_contains_the_exact_results():
    """Every endpoint pair contains the exact rational result over the box (at its corners; + - * /
    of intervals take their extremes there), and the square root its 50-digit value."""
    for a, b in list(PAIRS) + list(_random_pairs(200, seed=3)):
        x, y = Iv(*a), Iv(*b)
        corners = [(Fraction(p), Fraction(q)) for p in a for q in b]
        for iv, op in ((x + y, lambda p, q: p + q), (x - y, lambda p, q: p - q), (x * y, lambda p, q: p * q)):
            assert all(_contains(iv, op(p, q)) for p, q in corners)
        if b[0] > 0 or b[1] < 0:
            assert all(_contains(x / y, p / q) for p, q in corners)
        else:
            assert (x / y).pair() == (-math.inf, math.inf)
    mpmath.mp.dps = 50
    for v in (2.0, 0.1, 1e-300, 7.5e300, 3.0):
        r = Iv(v, v).sqrt()
        exact = mpmath.sqrt(mpmath.mpf(v))
        assert mpmath.mpf(r.lo) < exact < mpmath.mpf(r.hi)
        assert r.lo >= 0 and Fraction(r.lo) ** 2 <= Fraction(v) <= Fraction(r.hi) ** 2
    assert Iv(-1e-300, 4.0).sqrt().lo == 0.0


def test_iv_chain_contains_the_exact_value():
    """A chain as in the slacks, (1 - k s)(2 - k s)/s + k^2 g (1 - g), at 50 digits."""
    mpmath.mp.dps = 50
    k, s, g = 0.1234567, 1.7654321, 0.3
    iv = (1 - Iv(k) * Iv(s)) * (2 - Iv(k) * Iv(s)) / Iv(s) + Iv(k) * Iv(k) * Iv(g) * (1 - Iv(g))
    K, S, G = (mpmath.mpf(v) for v in (k, s, g))
    exact = (1 - K * S) * (2 - K * S) / S + K * K * G * (1 - G)
    assert mpmath.mpf(iv.lo) < exact < mpmath.mpf(iv.hi)
    assert iv.hi - iv.lo < 1e-14


@pytest.mark.parametrize("per_k_sigma", [False, True])
@pytest.mark.parametrize("k,sigma,g", [(0.05, 3.0, 0.2), (0.2, 0.7, 0.9), (1e-6, 40.0, 0.55)])
def test_interval_slacks_contain_the_exact_slacks(k, sigma, g, per_k_sigma):
    """At a point state the slacks of the three statements (docs/proofs.md, Model B) contain their
    exact rational values: f = 1 - u, u = k sigma + k^2 g (1 - g); loss u (2 - u) (or, per k sigma,
    (1 + k g (1 - g)/sigma)(2 - u)); Part 1 (1 - k sigma - f^2)/(k sigma); 1 - k^2 (g - 1)^2."""
    f, s, shrink = interval_slacks(Iv(k), Iv(sigma), g, g, loss_per_k_sigma=per_k_sigma)
    K, S, G = Fraction(k), Fraction(sigma), Fraction(g)
    u = K * S + K * K * G * (1 - G)
    F = 1 - u
    assert _contains(f, F) and _contains(s["gamma"], F)
    assert _contains(s["loss"], (1 - F * F) / (K * S) if per_k_sigma else 1 - F * F)
    assert _contains(s["descent_lemma"], (1 - K * S - F * F) / (K * S))
    assert _contains(shrink, 1 - K * K * (G - 1) ** 2)
    if per_k_sigma:
        assert _contains(s["u"], u)
