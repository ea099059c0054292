"""The spectral rule of Model B: weighted nodes of the spectral measure of ``S`` seen from ``a``.

Every Model B expectation is a weighted sum over a :class:`SpectralRule` (distinct eigenvalue levels,
descending, and the mass ``c^2`` of ``a`` on each eigenspace), whether the nodes come from an exact
quadrature (:mod:`rdyn.reduced_dynamics.model_b.exact`) or from samples (:mod:`rdyn.reduced_dynamics.model_b.sampling`, :mod:`rdyn.reduced_dynamics.model_b.qmc`).
Works on numpy float64 arrays or numpy object arrays of ``mpmath.mpf`` with the same code; at ``dps``
the per-node terms run on gmpy2 copies (:meth:`SpectralRule.means`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable

import mpmath
import numpy as np


@dataclass(frozen=True)
class SpectralRule:
    """Weighted nodes of the spectral measure of ``S`` seen from ``a``.

    ``levels[i, k]`` distinct eigenvalues (column 0 = top), ``masses[i, k]`` squared projection
    of ``a`` on that eigenspace, ``weights[i]`` (sum 1). ``kind`` is ``exact``/``monte_carlo``.
    """
    levels: Any
    masses: Any
    weights: Any
    kind: str
    mp: bool = False
    beta_params: tuple | None = None   # (k, d) of t ~ Beta(k/2, (d-k)/2) for exact two-level rules

    @property
    def nodes(self) -> int:
        return int(len(self.weights))

    @cached_property
    def m1(self):
        if self.mp:
            return _mpf_array(self._mpfr_m1)
        return (self.levels * self.masses).sum(axis=1)

    @cached_property
    def m2(self):
        if self.mp:
            return _mpf_array(self._mpfr_m2)
        return (self.levels * self.levels * self.masses).sum(axis=1)

    @cached_property
    def variance(self):
        """``m2 - m1^2`` as ``sum_i w_i (lam_i - m1)^2`` (no cancellation)."""
        if self.mp:
            return _mpf_array(self._mpfr_variance)
        dev = self.levels - self.m1[:, None]
        return (self.masses * dev * dev).sum(axis=1)

    # mp rules: the same operations in the same order on exact gmpy2 copies of levels and
    # masses, each rounded to nearest at mpmath's working precision when first asked for, which
    # is what mpf arithmetic rounds to: the values are those of the mpf expressions above, bit
    # for bit. Each is (bits, mpfr array).
    @cached_property
    def _mpfr_levels(self):
        from rdyn.reduced_dynamics.numerics import mpfr_arrays

        return mpfr_arrays.exact_unrounded(self.levels)

    @cached_property
    def _mpfr_masses(self):
        from rdyn.reduced_dynamics.numerics import mpfr_arrays

        return mpfr_arrays.exact_unrounded(self.masses)

    @cached_property
    def _mpfr_m1(self):
        from rdyn.reduced_dynamics.numerics import mpfr_arrays

        with mpfr_arrays.precision(mpmath.mp.prec):
            return mpmath.mp.prec, (self._mpfr_levels * self._mpfr_masses).sum(axis=1)

    @cached_property
    def _mpfr_m2(self):
        from rdyn.reduced_dynamics.numerics import mpfr_arrays

        with mpfr_arrays.precision(mpmath.mp.prec):
            return mpmath.mp.prec, (self._mpfr_levels * self._mpfr_levels * self._mpfr_masses).sum(axis=1)

    @cached_property
    def _mpfr_variance(self):
        from rdyn.reduced_dynamics.numerics import mpfr_arrays

        m1 = self._mpfr_m1[1]
        with mpfr_arrays.precision(mpmath.mp.prec):
            dev = self._mpfr_levels - m1[:, None]
            return mpmath.mp.prec, (self._mpfr_masses * dev * dev).sum(axis=1)

    def mean(self, values):
        return (self.weights * values).sum()

    def means(self, terms: Callable, *args) -> list:
        """``[mean(v) for v in terms(nodes, *args)]`` for a ``terms`` that reads ``m1``, ``m2``,
        ``variance`` of its first argument.

        On mp rules the terms run on exact gmpy2 copies of the nodes (:class:`MpfrNodes`), every
        operation rounded at mpmath's working precision and the weighted sum correctly rounded
        (:mod:`rdyn.reduced_dynamics.numerics.mpfr_arrays`; ~14x faster than mpf object arrays); the means
        come back as mpf. Otherwise the same as calling ``terms(self, *args)``.
        """
        if not self.mp:
            return [self.mean(v) for v in terms(self, *args)]
        from rdyn.reduced_dynamics.numerics import mpfr_arrays

        with mpfr_arrays.precision(mpmath.mp.prec):
            nodes = self.mpfr_nodes
            values = terms(nodes, *[mpfr_arrays.exact(a) for a in args])
            return [mpfr_arrays.to_mpf(mpfr_arrays.fsum(nodes.weights * v)) for v in values]

    @cached_property
    def mpfr_nodes(self) -> "MpfrNodes":
        """Bit-exact gmpy2 copies of ``m1``, ``m2``, ``variance``, ``weights`` (mp rules)."""
        from rdyn.reduced_dynamics.numerics import mpfr_arrays

        bits = mpmath.mp.prec   # each statistic as its mpf value would be read now: rounded to bits
        stats = [values if prec <= bits else mpfr_arrays.rounded(values, bits)
                 for prec, values in (self._mpfr_m1, self._mpfr_m2, self._mpfr_variance)]
        return MpfrNodes(*stats, mpfr_arrays.exact(self.weights))

    def std_error(self, values) -> float | None:
        if self.kind == "exact":
            return None
        v = np.asarray(values, dtype=float)
        return float(v.std(ddof=1) / math.sqrt(v.size))


@dataclass(frozen=True)
class MpfrNodes:
    """The statistics of a :class:`SpectralRule`'s nodes as gmpy2 mpfr object arrays; only
    to be computed with inside :func:`rdyn.reduced_dynamics.numerics.mpfr_arrays.precision`."""
    m1: Any
    m2: Any
    variance: Any
    weights: Any


def _mpf_array(computed):
    """The mpf object array of a (bits, mpfr array) pair, exactly."""
    from rdyn.reduced_dynamics.numerics import mpfr_arrays

    return mpfr_arrays.to_mpf_array(computed[1])


def sqrt_elementwise(x):
    if x.dtype == object:
        from rdyn.reduced_dynamics.numerics import mpfr_arrays

        if mpfr_arrays.is_mpfr_array(x):
            return mpfr_arrays.sqrt(x)
        return np.array([mpmath.sqrt(v) for v in x], dtype=object)
    return np.sqrt(x)


def distinct_levels(spectrum: tuple[int, ...]) -> list[tuple[int, int]]:
    """(eigenvalue, multiplicity), descending."""
    vals = sorted(set(spectrum), reverse=True)
    return [(v, spectrum.count(v)) for v in vals]



class NullContext:
    """A context manager that does nothing (float64 runs in place of ``mpmath.workdps``)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
