"""Exact Task 2 rules of Model B's single layers (and the two-level looped model).

Two distinct eigenvalues: Gauss-Legendre in ``theta`` (top-eigenspace mass ``t = sin^2 theta ~
Beta(k/2, (d-k)/2)``); three or four: the tensor Gauss-Jacobi rule over the Dirichlet eigenspace
masses (:func:`dirichlet_exact_rule`); at the working precision when ``dps`` is given.
"""
from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from rdyn.reduced_dynamics.model_b.rule import NullContext, SpectralRule, distinct_levels, sqrt_elementwise


MAX_EXACT_LEVELS = 4          # single layers: the Dirichlet rule up to this many distinct eigenvalues
                              # (beyond, and where its node budget is exceeded: the Gaussian route)
EXACT_NODE_LIMIT = {"float64": 3_000_000, "mpmath": 200_000}


class ExactUnavailable(ValueError):
    """The exact rule would need more nodes than EXACT_NODE_LIMIT allows."""


def exact_supported(spectrum: tuple[int, ...] | None, model: str = "ln") -> bool:
    """Task 2 expectations are exact for every spectrum and every model: the theta rule (r = 2),
    the Dirichlet rule (single layers, r <= MAX_EXACT_LEVELS), the 2F1 / graded rule (looped,
    r = 2), and the Gaussian quadratic-form route for any r
    (:mod:`rdyn.reduced_dynamics.model_b.gaussian_route`). Task 1 (sphere data): not exact."""
    return spectrum is not None


def uses_gaussian_route(spectrum: tuple[int, ...], model: str) -> bool:
    """Whether a Task 2 run goes through the Gaussian route by default: r >= 3 for the looped
    model, r > MAX_EXACT_LEVELS for the single layers (where it is also the fallback when the
    Dirichlet rule exceeds its node budget at ``dps``)."""
    r = len(set(spectrum))
    return r > (2 if model == "looped" else MAX_EXACT_LEVELS)


def gaussian_route_at(spectrum: tuple[int, ...], model: str, dps: int | None) -> bool:
    """Whether a Task 2 run at ``dps`` takes the Gaussian route, as far as it is known before
    any rule is built: :func:`uses_gaussian_route`, or (single layers, ``dps`` given) a
    Dirichlet rule whose first comparison already exceeds its node budget (refused at once by
    :func:`dirichlet_exact_rule`). A later fallback (the search growing past the budget) is
    not predicted."""
    if uses_gaussian_route(spectrum, model):
        return True
    r = len(set(spectrum))
    return dps is not None and model != "looped" and r >= 3 and dirichlet_refused_at_once(r, dps)


def dirichlet_start(dps: int | None) -> int:
    """The per-coordinate order the Dirichlet rule's search starts at (float64: 8)."""
    return 8 if dps is None else dirichlet_orders(dps)[0]


def dirichlet_refused_at_once(r: int, dps: int | None) -> bool:
    """Whether the Dirichlet rule for ``r`` distinct eigenvalues is refused before building:
    its first comparison (orders ``n0`` and ``n0 + max(4, n0 // 4)``) already needs more than
    ``EXACT_NODE_LIMIT`` nodes."""
    n = dirichlet_start(dps)
    return (n + max(4, n // 4)) ** (r - 1) > EXACT_NODE_LIMIT["float64" if dps is None else "mpmath"]


def _probe_terms(nodes, g):
    """The least smooth statistics of the single layers (LN at gamma = 0, g, oo)."""
    m1, m2, var = nodes.m1, nodes.m2, nodes.variance
    sq2 = sqrt_elementwise(m2)
    r2 = 1 + 2 * g * m1 + g * g * m2
    return [1 / sq2, m1 / sq2, var / (m2 * m2), var / (sq2 * r2 * sqrt_elementwise(r2))]


def _probe(rule: SpectralRule, lam_min):
    return rule.means(_probe_terms, mpmath.mpf(1) / lam_min if rule.mp else 1 / lam_min)


THETA_MAX_DEGREE = 10        # the theta rule at dps: mpmath Gauss-Legendre degree m has 3 * 2^(m-1) nodes


def theta_start_degree(dps: int) -> int:
    """The first Gauss-Legendre degree the theta rule at ``dps`` builds; the search raises it
    until two degrees agree (at most :data:`THETA_MAX_DEGREE`)."""
    return max(4, int(math.ceil(math.log2(dps / 3 + 1))) + 1)


def dirichlet_orders(dps: int) -> tuple[int, int]:
    """(first, second) per-coordinate orders of the Dirichlet rule's search at ``dps``: it
    starts near 0.8 (dps + 3) (the error falls ~10^-1.35 per node and coordinate, measured for
    spectrum (4,3,2,1)) and compares with the next order n + max(4, n // 4); the time estimate
    of ``rdyn ln --dps`` (rdyn/run_time.py) assumes that comparison accepts."""
    first = max(8, int(math.ceil(0.8 * (dps + 3))))
    return first, first + max(4, first // 4)


def dirichlet_exact_rule(spectrum: tuple[int, ...], dps: int | None = None,
                         nodes: int | None = None) -> SpectralRule:
    """Exact rule for Task 2 with r >= 2 distinct eigenvalues (single layers).

    The masses of ``a`` on the r eigenspaces are Dirichlet(k_1/2, ..., k_r/2) (``k_i`` the
    multiplicities, eigenvalues descending); :func:`rdyn.reduced_dynamics.model_b.dirichlet_rule.dirichlet_rule`
    integrates in stick-breaking coordinates by tensor Gauss-Jacobi, coordinate ``u_j`` mapped
    exponentially (:func:`rdyn.reduced_dynamics.model_b.dirichlet_rule.mapped_beta`) with
    ``delta_j = lam_r^2 / (lam_j^2 - lam_r^2)``: for ``gamma >= 0`` the nearest branch point of
    ``sqrt(m2)`` and ``sqrt(1 + 2 gamma m1 + gamma^2 m2)`` as functions of ``u_j`` lies at
    ``u_j <= -delta_j`` (the mass moved from ``lam_j`` to ``lam_r``).
    The per-coordinate order ``n`` is raised until two successive orders agree on the probe
    statistics to ``1e-14`` (float64) or ``10^-(dps+3)``; ``nodes`` fixes ``n``.
    """
    from rdyn.reduced_dynamics.model_b.dirichlet_rule import dirichlet_params, dirichlet_rule

    lv = distinct_levels(spectrum)
    lam = [v for v, _ in lv]
    params = dirichlet_params([k for _, k in lv])
    deltas = [Fraction(lam[-1] ** 2, lam[j] ** 2 - lam[-1] ** 2) for j in range(len(lam) - 1)]
    mp = dps is not None
    limit = EXACT_NODE_LIMIT["mpmath" if mp else "float64"]

    def build(n):
        if n ** (len(lam) - 1) > limit:
            raise ExactUnavailable(
                f"the exact rule for {len(lam)} distinct eigenvalues {tuple(lam)} needs more than "
                f"{limit} nodes at {'dps ' + str(dps) if mp else 'float64'}")
        masses, weights = dirichlet_rule(params, n, dps + 8 if mp else None, deltas)
        if mp:
            levels = np.array([[mpmath.mpf(v) for v in lam]] * len(weights), dtype=object)
        else:
            levels = np.tile(np.array(lam, dtype=float), (len(weights), 1))
        return SpectralRule(levels, masses, weights, "exact", mp)

    ctx = mpmath.workdps(dps + 10) if mp else NullContext()
    with ctx:
        if nodes:
            return build(nodes)
        tol = (mpmath.mpf(10) ** (-dps - 3)) if mp else 1e-14
        # measured (spectrum (4,3,2,1)): the error falls ~10^-1.35 per node and coordinate, so
        # at dps the search starts near 0.8 (dps + 3) nodes; it is refused at once when the
        # first comparison (orders n0 and 1.25 n0) would already exceed the node budget
        n = dirichlet_start(dps)
        if dirichlet_refused_at_once(len(lam), dps):
            raise ExactUnavailable(
                f"the exact rule for {len(lam)} distinct eigenvalues {tuple(lam)} needs more than "
                f"{limit} nodes at {'dps ' + str(dps) if mp else 'float64'}")
        rule = build(n)
        coarse = _probe(rule, lam[-1])
        while True:
            n = n + max(4, n // 4)
            finer = build(n)
            fine = _probe(finer, lam[-1])
            if all(abs(x - y) <= abs(y) * tol for x, y in zip(coarse, fine)):
                return finer
            coarse = fine


class _GmpyGaussLegendre(mpmath.calculus.quadrature.GaussLegendre):
    """mpmath's Gauss-Legendre rule with its standard nodes computed on gmpy2 numbers.

    :meth:`calc_nodes` is mpmath's algorithm (Newton's iteration on the three-term recurrence
    of the Legendre polynomials at 1.5 times the precision) with the same operations in the same
    order, each rounded to nearest at the same precision, on exact gmpy2 copies: the nodes and
    weights are mpmath's, bit for bit."""

    def calc_nodes(self, degree, prec, verbose=False):
        if degree == 1:
            return super().calc_nodes(degree, prec, verbose)
        import gmpy2

        from rdyn.reduced_dynamics.numerics import mpfr_arrays

        epsilon = gmpy2.mul_2exp(gmpy2.mpfr(1, 2), -prec - 8)
        n = 3 * 2 ** (degree - 1)
        nodes = []
        with mpfr_arrays.precision(int(prec * 1.5)):
            for j in range(1, n // 2 + 1):
                r = gmpy2.mpfr(math.cos(math.pi * (j - 0.25) / (n + 0.5)))
                while True:
                    t1, t2 = 1, 0
                    for j1 in range(1, n + 1):
                        t2, t1 = t1, ((2 * j1 - 1) * r * t1 - (j1 - 1) * t2) / j1
                    t4 = n * (r * t1 - t2) / (r ** 2 - 1)
                    a = t1 / t4
                    r = r - a
                    if abs(a) < epsilon:
                        break
                w = mpfr_arrays.to_mpf_exact(2 / ((1 - r ** 2) * t4 ** 2))
                nodes.append((mpfr_arrays.to_mpf_exact(r), w))
                nodes.append((mpfr_arrays.to_mpf_exact(-r), w))
        return nodes


_GAUSS_LEGENDRE = []


def _gauss_legendre():
    """One Gauss-Legendre rule object (:class:`_GmpyGaussLegendre`) for the process: its node
    cache, keyed by degree, precision and interval, returns what a fresh object computes (the
    nodes are a function of those alone), once per key."""
    if not _GAUSS_LEGENDRE:
        _GAUSS_LEGENDRE.append(_GmpyGaussLegendre(mpmath.mp))
    return _GAUSS_LEGENDRE[0]


def exact_rule(spectrum: tuple[int, ...], dps: int | None = None, nodes: int | None = None) -> SpectralRule:
    """Exact rule for Task 2: Gauss-Legendre in theta for <= 2 distinct eigenvalues (below),
    :func:`dirichlet_exact_rule` for 3..MAX_EXACT_LEVELS.

    ``t = sin^2 theta`` has density ``2 sin^{k-1} cos^{d-k-1} / B(k/2, (d-k)/2)`` on
    ``(0, pi/2)``; ``k`` = multiplicity of the top eigenvalue.
    """
    lv = distinct_levels(spectrum)
    d = len(spectrum)
    if len(lv) == 1:
        one = mpmath.mpf(1) if dps else 1.0
        arr = (lambda x: np.array(x, dtype=object)) if dps else np.array
        return SpectralRule(arr([[one * lv[0][0]]]), arr([[one]]), arr([one]), "exact", bool(dps))
    if len(lv) > 2:
        return dirichlet_exact_rule(spectrum, dps, nodes)
    (lam1, k), (lam2, _) = lv
    if dps is None:
        n_nodes = nodes or 200
        x, w = np.polynomial.legendre.leggauss(n_nodes)
        theta = (x + 1) * math.pi / 4
        wt = w * math.pi / 4
        dens = 2 * np.sin(theta) ** (k - 1) * np.cos(theta) ** (d - k - 1) / math.exp(
            math.lgamma(k / 2) + math.lgamma((d - k) / 2) - math.lgamma(d / 2))
        t = np.sin(theta) ** 2
        levels = np.tile(np.array([float(lam1), float(lam2)]), (n_nodes, 1))
        masses = np.stack([t, 1 - t], axis=1)
        return SpectralRule(levels, masses, wt * dens, "exact", False, (k, d))
    obj = lambda x: np.array(x, dtype=object)

    def build(degree):
        pts = _gauss_legendre().get_nodes(mpmath.mpf(0), mpmath.pi / 2, degree, mpmath.mp.prec)
        norm = mpmath.beta(mpmath.mpf(k) / 2, mpmath.mpf(d - k) / 2)
        levels, masses, weights = [], [], []
        for th, w in pts:
            s, c = mpmath.sin(th), mpmath.cos(th)
            t = s * s
            levels.append([mpmath.mpf(lam1), mpmath.mpf(lam2)])
            masses.append([t, 1 - t])
            weights.append(w * 2 * s ** (k - 1) * c ** (d - k - 1) / norm)
        return SpectralRule(obj(levels), obj(masses), obj(weights), "exact", True, (k, d))

    def probe(rule):   # the least smooth statistics of the LN layer
        m1, m2 = rule.m1, rule.m2
        return [rule.mean(1 / sqrt_elementwise(m2)), rule.mean((m2 - m1 * m1) / (m2 * m2))]

    with mpmath.workdps(dps + 10):
        if nodes:
            return build(nodes)
        # accept degree m once degrees m-1 and m agree to 10^-(dps+3) on the probe statistics
        degree = theta_start_degree(dps)
        rule = build(degree)
        while degree < THETA_MAX_DEGREE:
            finer = build(degree + 1)
            degree += 1
            if all(abs(x - y) <= abs(y) * mpmath.mpf(10) ** (-dps - 3) for x, y in zip(probe(rule), probe(finer))):
                return finer
            rule = finer
        return rule
