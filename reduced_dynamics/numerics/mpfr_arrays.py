"""Elementwise multiple precision on numpy object arrays of gmpy2 ``mpfr`` (MPFR).

The exact Model B rules hold their nodes as ``mpmath.mpf``; evaluating the LN layer's per-node
expressions on ``mpf`` object arrays costs ~50 us per node, on ``mpfr`` object arrays ~3.7 us
(measured at 120 bits, 2e4 nodes; per LN step 12-18x, ``python bench/bench_model_b.py dps``).
This module is the bridge:

* :func:`exact` converts ``mpf`` values (or ints, floats) to ``mpfr`` **without rounding**
  (each value gets exactly the bits of its mantissa);
* :func:`precision` is a local gmpy2 context: every ``mpfr`` operation inside it rounds to
  nearest at ``bits``; nothing global is read or left behind (gmpy2's default context is 53
  bits, so ``mpfr`` arithmetic outside such a block would silently lose digits: the functions
  here are only ever called inside it);
* :func:`fsum` is MPFR's correctly rounded sum (independent of order), :func:`to_mpf` the exact
  way back.
"""
from __future__ import annotations

from contextlib import contextmanager

import gmpy2
import mpmath
import numpy as np


def _one(value):
    """One value as mpfr, exactly: mpfr itself; int, float, mpf with their own bits."""
    if isinstance(value, gmpy2.mpfr):
        return value
    if isinstance(value, int):
        return gmpy2.mpfr(value, max(value.bit_length(), 2))
    if isinstance(value, float):
        return gmpy2.mpfr(value, 53)
    sign, man, exp, bits = mpmath.mpf(value)._mpf_
    if man == 0:
        return gmpy2.mpfr(0)
    with gmpy2.context(gmpy2.get_context(), precision=max(int(bits), 2)):
        return gmpy2.mul_2exp(gmpy2.mpfr(-int(man) if sign else int(man)), int(exp))


def _from_mpf_parts(values, bits: int) -> list:
    """``mpfr`` copies of the values, each mpf mantissa rounded to nearest at ``bits`` (exact
    when it has no more bits) times its power of two (exact); others by :func:`_one`."""
    powers_of_two, done = {}, {}   # done: by id, for objects repeated in the array
    out = []
    with gmpy2.context(gmpy2.get_context(), precision=max(int(bits), 2)):
        mpfr = gmpy2.mpfr
        for value in values:
            copy = done.get(id(value))
            if copy is None:
                parts = value._mpf_ if isinstance(value, mpmath.mpf) else None
                if parts is None or not parts[1]:   # int, float, mpfr; an mpf zero (or inf, nan)
                    copy = _one(value)
                else:
                    sign, man, exp, _ = parts
                    scale = powers_of_two.get(exp)
                    if scale is None:
                        scale = powers_of_two[exp] = gmpy2.mul_2exp(mpfr(1), exp)
                    copy = mpfr(-man if sign else man) * scale
                done[id(value)] = copy
            out.append(copy)
    return out


def _object_array(items: list, shape) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(shape)


def exact(values):
    """``mpfr`` copies of mpf scalars / arrays, bit for bit (an mpf with more bits than
    mpmath's working precision is first rounded to it, as ``mpmath.mpf(value)`` does)."""
    if isinstance(values, np.ndarray):
        return _object_array(_from_mpf_parts(values.reshape(-1), mpmath.mp.prec), values.shape)
    return _one(values)


def exact_unrounded(values: np.ndarray) -> np.ndarray:
    """``mpfr`` copies of an array of mpf (or int, float) values with all their bits, whatever
    mpmath's working precision (operands for arithmetic that rounds only its results)."""
    flat = values.reshape(-1)
    bits = max([2] + [v._mpf_[3] for v in flat if isinstance(v, mpmath.mpf)])
    return _object_array(_from_mpf_parts(flat, bits), values.shape)


def rounded(values: np.ndarray, bits: int) -> np.ndarray:
    """Each value rounded to nearest at ``bits`` (``mpmath.mpf(value)`` at that precision)."""
    with gmpy2.context(gmpy2.get_context(), precision=int(bits)):
        return np.frompyfunc(lambda v: gmpy2.mpfr(v, int(bits)), 1, 1)(values)


def to_mpf_array(values: np.ndarray) -> np.ndarray:
    """``mpf`` copies of an ``mpfr`` array, exact (not rounded to mpmath's working precision)."""
    from mpmath.libmp import from_man_exp

    make = mpmath.mp.make_mpf
    out = np.empty(values.shape, dtype=object)
    flat = out.reshape(-1)
    for i, v in enumerate(values.reshape(-1)):
        man, exp = v.as_mantissa_exp()
        flat[i] = make(from_man_exp(int(man), int(exp))) if man else mpmath.mpf(0)
    return out


@contextmanager
def precision(bits: int):
    """Local gmpy2 context rounding every operation to nearest at ``bits``."""
    with gmpy2.context(gmpy2.get_context(), precision=int(bits)):
        yield


_sqrt = np.frompyfunc(gmpy2.sqrt, 1, 1)


def sqrt(values: np.ndarray) -> np.ndarray:
    """Elementwise correctly rounded square root (inside :func:`precision`)."""
    return _sqrt(values)


def fsum(values) -> gmpy2.mpfr:
    """Correctly rounded sum (MPFR ``mpfr_sum``; inside :func:`precision`)."""
    return gmpy2.fsum(list(np.asarray(values, dtype=object).reshape(-1)))


def to_mpf(value) -> mpmath.mpf:
    """``mpf`` of an ``mpfr``, exact (then rounded to mpmath's working precision)."""
    man, exp = value.as_mantissa_exp()
    return mpmath.mpf((int(man), int(exp))) if man else mpmath.mpf(0)


def to_mpf_exact(value) -> mpmath.mpf:
    """``mpf`` of an ``mpfr`` with all its bits (not rounded to mpmath's working precision)."""
    from mpmath.libmp import from_man_exp

    man, exp = value.as_mantissa_exp()
    return mpmath.mp.make_mpf(from_man_exp(int(man), int(exp))) if man else mpmath.mpf(0)


def is_mpfr_array(values) -> bool:
    return isinstance(values, np.ndarray) and values.dtype == object and values.size > 0 \
        and isinstance(values.flat[0], gmpy2.mpfr)
