"""reduced_dynamics/numerics/mpfr_arrays.py: bit-exact conversions between mpf and gmpy2 mpfr."""
from __future__ import annotations

import random

import gmpy2
import mpmath
import numpy as np

from rdyn.reduced_dynamics.numerics import mpfr_arrays


def _values():
    """mpf values with more bits than the precisions below, a repeated object, zero, int, float."""
    rng = random.Random(5)
    with mpmath.workprec(300):
        vals = [mpmath.mpf(rng.random()) ** 3 / rng.choice([3, 7, 11]) * rng.choice([1, -1])
                for _ in range(400)]
        vals += [mpmath.mpf(2) ** -70, mpmath.mpf(0), mpmath.mpf(1) / 3, 3, 0.25]
    vals.append(vals[0])
    return np.array(vals, dtype=object).reshape(-1, 2)


def _reference_exact(value):
    """``mpmath.mpf(value)`` at the working precision, then its bits as mpfr (the definition)."""
    sign, man, exp, bits = mpmath.mpf(value)._mpf_
    if not man:
        return gmpy2.mpfr(0)
    with gmpy2.context(gmpy2.get_context(), precision=max(int(bits), 2)):
        return gmpy2.mul_2exp(gmpy2.mpfr(-int(man) if sign else int(man)), int(exp))


def test_exact_rounds_like_mpf_at_the_working_precision():
    values = _values()
    for prec in (53, 100, 143, 250, 400):
        with mpmath.workprec(prec):
            got = mpfr_arrays.exact(values)
            want = [_reference_exact(v) for v in values.flat]
        assert got.shape == values.shape
        assert all(x == y for x, y in zip(got.flat, want)), prec
        # rounding changed something at the low precisions: the test would see a plain copy
        if prec == 53:
            with mpmath.workprec(300):
                assert any(mpfr_arrays.to_mpf(x) != mpmath.mpf(v) for x, v in zip(got.flat, values.flat))


def test_exact_unrounded_keeps_every_bit_and_to_mpf_array_comes_back_exactly():
    values = _values()
    with mpmath.workprec(53):   # the working precision does not matter
        copies = mpfr_arrays.exact_unrounded(values)
        back = mpfr_arrays.to_mpf_array(copies)
        assert back.shape == values.shape
        assert all(b == mpmath.mpf(v) if not isinstance(v, mpmath.mpf) else b._mpf_ == v._mpf_
                   for b, v in zip(back.flat, values.flat))
    with mpmath.workprec(400):
        assert all(mpfr_arrays.to_mpf(c) == mpmath.mpf(v) for c, v in zip(copies.flat, values.flat))
    with mpmath.workprec(53):
        assert mpfr_arrays.to_mpf_exact(copies[0, 0]) == values[0, 0]


def test_rounded_is_mpf_rounding():
    values = mpfr_arrays.exact_unrounded(_values())
    for bits in (20, 53, 90):
        got = mpfr_arrays.rounded(values, bits)
        with mpmath.workprec(bits):
            want = [mpmath.mpf(mpfr_arrays.to_mpf_exact(v)) for v in values.flat]
        with mpmath.workprec(500):
            assert all(mpfr_arrays.to_mpf(x) == y for x, y in zip(got.flat, want))
