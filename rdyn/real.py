"""Reals that carry the precision of the run that computed them (docs/api.md, "Precision").

A run at ``dps=N`` (``--dps N``) computes mpmath values at N digits or more, but an
``mpmath.mpf`` prints at mpmath's *global* precision (15 digits by default: a 40-digit result
would show 15). :class:`Real` is an ``mpf`` that remembers N: ``str``, ``repr`` and
``format(x)`` show N significant digits (the digits of the run's ``--json`` string), while the
value is the same binary number (``Real(x, N) == x``), every mpmath function accepts it,
``float()`` rounds it to float64 and arithmetic returns plain ``mpf``. ``x.dps`` is N;
``x.digits(n)`` the value to ``n`` significant digits.

:func:`digits_text` is the one rule for "N significant digits" (text output of the CLI, the
API's :class:`Real`); the JSON form (``rdyn.output``) uses the same digits in scientific form.
"""
from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import mpmath

GUARD_DIGITS = 10  # the working precision while rounding a value to its shown digits


def digits_text(value, dps: int) -> str:
    """``value`` (mpf, float, int or Fraction) to ``dps`` significant digits, trailing zeros
    kept (``0.600`` at 3 digits); exact inputs (Fraction, int) are rounded once, from their
    exact value."""
    with mpmath.workdps(dps + GUARD_DIGITS):
        if isinstance(value, Fraction):
            x = mpmath.mpf(value.numerator) / value.denominator
        else:
            x = mpmath.mpf(value)
        if x == 0:
            return "0." + "0" * (dps - 1) if dps > 1 else "0"
        return mpmath.nstr(x, dps, strip_zeros=False)


class Real(mpmath.mpf):
    """An ``mpf`` printed at ``dps`` significant digits (see the module docstring)."""

    def __new__(cls, value, dps: int):
        """The same binary value as the mpf (or float) ``value``, never rounded to the global
        mpmath precision."""
        self = object.__new__(cls)
        if not isinstance(value, mpmath.mpf):
            with mpmath.workprec(53):
                value = mpmath.mpf(float(value))
        self._mpf_ = value._mpf_
        self._dps = int(dps)
        return self

    @property
    def dps(self) -> int:
        """The run's precision in decimal digits (the digits ``str`` shows)."""
        return self._dps

    def digits(self, n: int | None = None) -> str:
        """The value to ``n`` significant digits (default: the run's ``dps``)."""
        return digits_text(self, self._dps if n is None else n)

    def __str__(self) -> str:
        return self.digits()

    __repr__ = __str__

    def __format__(self, spec: str) -> str:
        """``format(x, "")`` is ``str(x)``; a format spec (``".25e"``, ``".3f"``) is applied to
        the exact decimal expansion of the value's digits, never to a float64 rounding."""
        if not spec:
            return str(self)
        return format(Decimal(digits_text(self, self._dps + GUARD_DIGITS)), spec)

    def __reduce__(self):
        return (_rebuild, (self._mpf_, self._dps))


def _rebuild(mpf_tuple, dps):
    value = mpmath.mpf(0)
    value._mpf_ = mpf_tuple
    return Real(value, dps)


def at_precision(value, dps: int | None):
    """``value`` as the API shows it: an mpf of a run at ``dps`` becomes a :class:`Real`;
    float64 values (``dps`` None, or plain floats) and everything else are returned as they
    are (a float64 number already prints all its digits)."""
    if dps is not None and isinstance(value, mpmath.mpf) and not isinstance(value, Real):
        return Real(value, dps)
    return value
