"""Gauss-Hermite rules for E[f(Z)], Z ~ N(0, 1) (probabilists' weight, weights summing to 1),
in float64 and at any precision.

The float64 rule is numpy's ``hermegauss`` (Golub-Welsch), normalised. At ``dps`` digits the
nodes are the float64 nodes refined by Newton's method on the orthonormal Hermite recurrence
``h_{k+1} = (x h_k - sqrt(k) h_{k-1}) / sqrt(k+1)`` in mpmath at ``dps + 10`` digits
(``h_n' = sqrt(n) h_{n-1}``), and the weights are ``1 / sum_{k<n} h_k(x_i)^2`` (Christoffel
numbers), so the rule is exact for polynomials of degree < 2n at that precision.
Nodes whose weight is below ``prune`` times the largest are dropped (their contribution is
below the working precision for integrands of moderate growth).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np


@dataclass(frozen=True, eq=False)
class GaussRule:
    """Nodes and weights (backend numbers, numpy arrays) of an n-point rule."""

    n: int
    nodes: np.ndarray
    weights: np.ndarray


@lru_cache(maxsize=32)
def float64_rule(n: int) -> GaussRule:
    """The n-point rule in float64 (weights normalised to sum 1; none pruned). numpy's
    ``hermegauss`` is O(n^3) (0.1 s at n = 256); its result is kept in the source cache of
    :mod:`rdyn.reduced_dynamics.kernel_cache` as the exact decimal forms (``repr``) of the
    floats, read back as the same bits (:func:`_float64_rule_text`)."""
    values = [float(v) for v in _float64_rule_text(n).split()]
    nodes, weights = np.array(values[:n]), np.array(values[n:])
    nodes.setflags(write=False)
    weights.setflags(write=False)
    return GaussRule(n, nodes, weights)


def _float64_rule_text(n: int) -> str:
    """The normalised n-point float64 rule as text: n nodes, then n weights, one ``repr`` a
    line (read from the source cache; computed with ``hermegauss`` when missing)."""
    from rdyn.reduced_dynamics.runs import kernel_cache

    def generate():
        nodes, weights = np.polynomial.hermite_e.hermegauss(n)
        weights = weights / weights.sum()
        return "\n".join(repr(float(v)) for v in (*nodes, *weights)) + "\n"

    return kernel_cache.cached_source("gauss_hermite_float64", (int(n),), generate)


@lru_cache(maxsize=32)
def _mp_rule_strings(n: int, dps: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Nodes and weights at ``dps`` digits as decimal strings (a pure function of n, dps)."""
    import mpmath

    ctx = mpmath.MPContext()
    ctx.dps = dps + 10
    with np.errstate(over="ignore", invalid="ignore"):   # only the nodes are used: numpy's
        start = np.polynomial.hermite_e.hermegauss(n)[0]  # float64 weights overflow for n > ~300
    nodes, weights = [], []
    for x0 in start[start >= 0]:
        x = ctx.mpf(float(x0))
        for _ in range(100):
            h_prev, h = ctx.mpf(0), ctx.mpf(1)
            for k in range(n):
                h_prev, h = h, (x * h - ctx.sqrt(k) * h_prev) / ctx.sqrt(k + 1)
            dx = h / (ctx.sqrt(n) * h_prev)
            x -= dx
            if abs(dx) <= abs(x) * ctx.mpf(10) ** (-(dps + 8)) or dx == 0:
                break
        total, h_prev, h = ctx.mpf(1), ctx.mpf(0), ctx.mpf(1)
        for k in range(n - 1):
            h_prev, h = h, (x * h - ctx.sqrt(k) * h_prev) / ctx.sqrt(k + 1)
            total += h * h
        nodes.append(x)
        weights.append(1 / total)
    # mirror (the rule is symmetric; x = 0 is a node when n is odd)
    full_nodes = [-v for v in reversed(nodes) if v != 0] + nodes
    full_weights = [w for v, w in zip(reversed(nodes), reversed(weights)) if v != 0] + weights
    norm = ctx.fsum(full_weights)
    return (tuple(ctx.nstr(v, dps + 8, strip_zeros=False) for v in full_nodes),
            tuple(ctx.nstr(w / norm, dps + 8, strip_zeros=False) for w in full_weights))


def precise_rule(n: int, dps: int, make, prune: float | None = None) -> GaussRule:
    """The n-point rule at ``dps`` digits as backend numbers (``make(str)``), nodes with
    weight < ``prune`` * max weight dropped (default 10^-(dps + 5))."""
    node_text, weight_text = _mp_rule_strings(n, dps)
    keep_level = 10.0 ** (-(dps + 5)) if prune is None else prune
    wmax = max(float(w) for w in weight_text)
    keep = [i for i, w in enumerate(weight_text) if float(w) >= keep_level * wmax]
    nodes = np.array([make(node_text[i]) for i in keep], dtype=object)
    weights = np.array([make(weight_text[i]) for i in keep], dtype=object)
    return GaussRule(n, nodes, weights)
