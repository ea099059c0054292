"""Quadrature for expectations over a Dirichlet distribution (Model B, Task 2 spectra).

For ``a`` uniform on S^{d-1} and a symmetric ``S`` with ``r`` distinct eigenvalues of
multiplicities ``k_1..k_r``, the masses ``w_i = ||P_i a||^2`` of ``a`` on the eigenspaces are
Dirichlet(k_1/2, ..., k_r/2) (normalised independent chi-squares). Stick-breaking writes them as
``w_1 = u_1``, ``w_j = u_j prod_{i<j} (1 - u_i)``, ``w_r = prod_{i<r} (1 - u_i)`` with
``u_j ~ Beta(a_j, a_{j+1} + ... + a_r)`` independent, so an expectation is an (r-1)-fold
product integral. Each factor is integrated by Gauss-Jacobi for its Beta density, so the
endpoint factors ``u^{a-1} (1-u)^{b-1}`` (singular for a or b < 1) are in the weight, never
in the integrand: an integrand analytic on the closed simplex converges geometrically.

Nodes and weights: float64 from :func:`scipy.special.roots_jacobi`; at ``dps`` digits by
Newton's method on the orthonormal polynomial of the Beta(a, b) probability measure
(three-term recurrence with the Jacobi coefficients), started from the float64 nodes, and
Christoffel weights ``1 / sum_{k<n} p_k(x)^2``. Everything at ``dps`` is local
(``mpmath.workdps``).
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from itertools import product

import mpmath
import numpy as np
from scipy.special import roots_jacobi


def _recurrence(n: int, a, b):
    """Jacobi recurrence on [-1, 1] for the weight (1-x)^al (1+x)^be, al = b-1, be = a-1:
    diagonal ``A_k`` (k < n) and ``sqrt(B_k)`` (1 <= k <= n) of the orthonormal family."""
    al, be = b - 1, a - 1
    s = al + be
    A, sqB = [], [None]
    for k in range(n):
        if k == 0:
            A.append((be - al) / (s + 2))
        else:
            A.append((be * be - al * al) / ((2 * k + s) * (2 * k + s + 2)))
    for k in range(1, n + 1):
        if k == 1:   # the general form has 0/0 when al + be = -1
            B = 4 * (1 + al) * (1 + be) / ((2 + s) ** 2 * (3 + s))
        else:
            B = 4 * k * (k + al) * (k + be) * (k + s) / ((2 * k + s) ** 2 * (2 * k + s + 1) * (2 * k + s - 1))
        sqB.append(mpmath.sqrt(B))
    return A, sqB


def _orthonormal(x, n, A, sqB):
    """p_0..p_n at x (orthonormal for the probability measure) and p_n'(x)."""
    p_prev, p = mpmath.mpf(0), mpmath.mpf(1)
    dp_prev, dp = mpmath.mpf(0), mpmath.mpf(0)
    ps = [p]
    for k in range(n):
        nxt = ((x - A[k]) * p - (sqB[k] * p_prev if k else 0)) / sqB[k + 1]
        dnxt = (p + (x - A[k]) * dp - (sqB[k] * dp_prev if k else 0)) / sqB[k + 1]
        p_prev, p, dp_prev, dp = p, nxt, dp, dnxt
        ps.append(p)
    return ps, dp


def gauss_beta(n: int, a, b, dps: int | None = None):
    """n-point Gauss rule for ``E[f(u)]``, ``u ~ Beta(a, b)``: (nodes in (0,1), weights, sum 1).

    float64 (``dps`` None) as numpy arrays; else lists of mpf correct to ``dps`` digits.
    """
    if dps is None:   # scipy's nodes lose digits for n >~ 30: refine at 20 digits, then round
        x, w = _gauss_beta_mp(n, _key(a), _key(b), 20)
        return np.array([float(v) for v in x]), np.array([float(v) for v in w])
    return list(_gauss_beta_mp(n, _key(a), _key(b), dps)[0]), list(_gauss_beta_mp(n, _key(a), _key(b), dps)[1])


def _key(a):
    """Hashable exact form of a parameter (Fraction for ints/Fractions, float otherwise)."""
    from fractions import Fraction

    return Fraction(a) if isinstance(a, (int, Fraction)) else float(a)


@lru_cache(maxsize=256)
def _gauss_beta_mp(n: int, a, b, dps: int):
    """Nodes/weights as tuples of mpf at ``dps`` digits (pure function of its arguments)."""
    x64, _ = roots_jacobi(n, float(b) - 1, float(a) - 1)
    with mpmath.workdps(dps + 15):
        a, b = _mpf(a), _mpf(b)
        A, sqB = _recurrence(n, a, b)
        tol = mpmath.mpf(10) ** (-(dps + 8))
        nodes, weights = [], []
        for x0 in x64:
            x = mpmath.mpf(float(x0))
            for _ in range(60):
                ps, dp = _orthonormal(x, n, A, sqB)
                dx = ps[n] / dp
                x -= dx
                if abs(dx) < tol:
                    break
            ps, _ = _orthonormal(x, n, A, sqB)
            nodes.append((1 + x) / 2)
            weights.append(1 / mpmath.fsum(p * p for p in ps[:n]))
        total = mpmath.fsum(weights)
        weights = [w / total for w in weights]
    with mpmath.workdps(dps):
        return tuple(+v for v in nodes), tuple(+w for w in weights)


GRADING = 0.15   # ratio of consecutive panel ends of the geometric grading towards u = 0
GRADE_BELOW = 1 / 16   # a singularity closer than this to u = 0 gets graded panels


def graded_beta(n: int, a, b, delta: float, dps: int | None = None):
    """Composite Gauss rule for ``E[f(u)]``, ``u ~ Beta(a, b)``, graded towards ``u = 0``.

    Panels ``[0, h_K], [h_K, h_{K-1}], ..., [h_1, 1/2], [1/2, 1]`` with ``h_k = GRADING^k / 2``
    and ``h_K <= delta`` (one Gauss-Jacobi panel on [0, 1] when ``delta >= GRADE_BELOW``): ``f`` may have a complex singularity at
    distance ``~delta`` from ``u = 0`` (here ``||S a||^2 -> 0`` directions when the eigenvalue
    ratio is large); on geometrically graded panels the error still decays geometrically in ``n``.
    End panels carry the Jacobi weights ``u^{a-1}`` and ``(1-u)^{b-1}`` (Gauss rules of
    Beta(a, 1) and Beta(b, 1) scaled to the panel); inner panels Gauss-Legendre times the density.
    """
    if delta >= GRADE_BELOW:
        return gauss_beta(n, a, b, dps)
    K = int(math.ceil(math.log(2 * delta) / math.log(GRADING)))
    if dps is None:
        lnB = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
        a, b = float(a), float(b)
        ends = [0.5 * GRADING ** k for k in range(K, -1, -1)]   # h_K .. h_0 = 1/2
        xa, wa = gauss_beta(n, a, 1)
        xb, wb = gauss_beta(n, b, 1)
        xg, wg = gauss_beta(n, 1, 1)
        nodes, weights = [], []
        h = ends[0]   # [0, h]: int_0^h u^{a-1} g = h^a/a E_{Beta(a,1)}[g(h x)]
        u = h * xa
        nodes.append(u)
        weights.append(wa * h ** a / a * np.exp((b - 1) * np.log1p(-u) - lnB))
        for lo, hi in zip(ends[:-1], ends[1:]):
            u = lo + (hi - lo) * xg
            nodes.append(u)
            weights.append(wg * (hi - lo) * np.exp((a - 1) * np.log(u) + (b - 1) * np.log1p(-u) - lnB))
        v = 0.5 * xb   # [1/2, 1]: v = 1 - u in [0, 1/2]
        nodes.append(1 - v)
        weights.append(wb * 0.5 ** b / b * np.exp((a - 1) * np.log1p(-v) - lnB))
        return np.concatenate(nodes), np.concatenate(weights)
    with mpmath.workdps(dps + 10):
        a, b = _mpf(a), _mpf(b)
        B = mpmath.beta(a, b)
        half = mpmath.mpf(1) / 2
        g = mpmath.mpf(GRADING.as_integer_ratio()[0]) / GRADING.as_integer_ratio()[1]
        ends = [half * g ** k for k in range(K, -1, -1)]
        xa, wa = gauss_beta(n, a, 1, dps)
        xb, wb = gauss_beta(n, b, 1, dps)
        xg, wg = gauss_beta(n, 1, 1, dps)
        nodes, weights = [], []
        h = ends[0]
        for x, w in zip(xa, wa):
            u = h * x
            nodes.append(u)
            weights.append(w * h ** a / a * (1 - u) ** (b - 1) / B)
        for lo, hi in zip(ends[:-1], ends[1:]):
            for x, w in zip(xg, wg):
                u = lo + (hi - lo) * x
                nodes.append(u)
                weights.append(w * (hi - lo) * u ** (a - 1) * (1 - u) ** (b - 1) / B)
        for x, w in zip(xb, wb):
            v = half * x
            nodes.append(1 - v)
            weights.append(w * half ** b / b * (1 - v) ** (a - 1) / B)
        return nodes, weights


def dirichlet_rule(params, n_nodes: int, dps: int | None = None, deltas=None):
    """Tensor stick-breaking rule for Dirichlet(params).

    Coordinate ``j`` uses :func:`graded_beta` with grading depth ``deltas[j]`` (None: no
    grading, one Gauss-Jacobi panel per half). Returns ``(masses, weights)``: masses (N, r)
    on the simplex, weights (N,) summing to 1; float64 arrays, or numpy object arrays of mpf.
    """
    r = len(params)
    if r == 1:
        one = mpmath.mpf(1) if dps else 1.0
        dt = object if dps else float
        return np.array([[one]], dtype=dt), np.array([one], dtype=dt)
    rules = []
    for j in range(r - 1):
        a = params[j]
        b = sum(params[j + 1:])
        delta = 1.0 if deltas is None else deltas[j]
        rules.append(graded_beta(n_nodes, a, b, delta, dps))
    if dps is None:
        grids = np.meshgrid(*[u for u, _ in rules], indexing="ij")
        wgrids = np.meshgrid(*[w for _, w in rules], indexing="ij")
        U = np.stack([g.ravel() for g in grids], axis=1)
        W = np.prod(np.stack([g.ravel() for g in wgrids], axis=1), axis=1)
        masses = np.empty((U.shape[0], r))
        rest = np.ones(U.shape[0])
        for j in range(r - 1):
            masses[:, j] = U[:, j] * rest
            rest = rest * (1 - U[:, j])
        masses[:, r - 1] = rest
        return masses, W
    with mpmath.workdps(dps + 10):
        masses, weights = [], []
        for idx in product(*[range(len(u)) for u, _ in rules]):
            rest, w, row = mpmath.mpf(1), mpmath.mpf(1), []
            for j, i in enumerate(idx):
                u = rules[j][0][i]
                row.append(u * rest)
                rest = rest * (1 - u)
                w = w * rules[j][1][i]
            row.append(rest)
            masses.append(row)
            weights.append(w)
        return np.array(masses, dtype=object), np.array(weights, dtype=object)


def half_integer_moment(params, powers) -> "Fraction":
    """E[prod w_i^{p_i}] for Dirichlet(params) with rational params (exact):
    ``prod (a_i)_{p_i} / (A)_{P}`` (rising factorials), A = sum a_i, P = sum p_i."""
    from fractions import Fraction

    num, den = Fraction(1), Fraction(1)
    A = sum(Fraction(a) for a in params)
    P = sum(powers)
    for a, p in zip(params, powers):
        for k in range(p):
            num *= Fraction(a) + k
    for k in range(P):
        den *= A + k
    return num / den


def dirichlet_params(multiplicities) -> list:
    """Dirichlet parameters k_i/2 as Fractions."""
    from fractions import Fraction

    return [Fraction(k, 2) for k in multiplicities]


def _mpf(a):
    """mpf of an int, Fraction or float without a float round trip for rationals."""
    return mpmath.mpf(a.numerator) / a.denominator if hasattr(a, "numerator") else mpmath.mpf(a)
