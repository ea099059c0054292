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
import numbers
from fractions import Fraction
from functools import lru_cache

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


def _orthonormal(x, n, A, sqB, zero=None):
    """p_0..p_n at x (orthonormal for the probability measure) and p_n'(x) (in the number
    type of ``zero``: mpf by default)."""
    zero = mpmath.mpf(0) if zero is None else zero
    p_prev, p = zero, zero + 1
    dp_prev, dp = zero, zero
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
    return Fraction(a) if isinstance(a, (int, Fraction)) else float(a)


@lru_cache(maxsize=256)
def _gauss_beta_mp(n: int, a, b, dps: int):
    """Nodes/weights as tuples of mpf at ``dps`` digits (pure function of its arguments)."""
    from rdyn.reduced_dynamics.numerics import mpfr_arrays

    x64, _ = roots_jacobi(n, float(b) - 1, float(a) - 1)
    with mpmath.workdps(dps + 15):
        a, b = _mpf(a), _mpf(b)
        A, sqB = _recurrence(n, a, b)
        tol = mpmath.mpf(10) ** (-(dps + 8))
        # Newton's iteration on gmpy2 copies: every operation rounded to nearest at the working
        # precision, as mpf arithmetic rounds it, so the nodes are those of mpf arithmetic
        A_r, sqB_r = [mpfr_arrays.exact(v) for v in A], [None] + [mpfr_arrays.exact(v) for v in sqB[1:]]
        tol_r = mpfr_arrays.exact(tol)
        nodes, weights = [], []
        with mpfr_arrays.precision(mpmath.mp.prec):
            for x0 in x64:
                x = mpfr_arrays.exact(float(x0))
                for _ in range(60):
                    ps, dp = _orthonormal(x, n, A_r, sqB_r, mpfr_arrays.exact(0))
                    dx = ps[n] / dp
                    x -= dx
                    if abs(dx) < tol_r:
                        break
                ps, _ = _orthonormal(x, n, A_r, sqB_r, mpfr_arrays.exact(0))
                nodes.append(mpfr_arrays.to_mpf((1 + x) / 2))
                weights.append(1 / mpmath.fsum(mpfr_arrays.to_mpf_exact(p * p) for p in ps[:n]))
        total = mpmath.fsum(weights)
        weights = [w / total for w in weights]
    with mpmath.workdps(dps):
        return tuple(+v for v in nodes), tuple(+w for w in weights)


MAP_BELOW = 0.5   # a singularity closer than this (relative) to u = 0 gets the exponential map


def mapped_beta(n: int, a, b, delta: float, dps: int | None = None):
    """Gauss rule for ``E[f(u)]``, ``u ~ Beta(a, b)``, when ``f`` has a branch point near
    ``u = -delta`` (``delta`` small): returns ``(u, 1 - u, weights)``.

    Substitution ``u = delta (e^{L s} - 1)``, ``L = log(1 + 1/delta)`` (``s`` in [0, 1] onto
    ``u`` in [0, 1]): ``u + delta = delta e^{L s}`` never vanishes, so a branch point at
    ``u = -delta`` moves to ``s = -oo`` and one at ``u = -c`` (``c > delta``) to imaginary part
    ``pi / L``. The density becomes ``s^{a-1} (1-s)^{b-1} h(s)`` with
    ``h = (u/s)^{a-1} ((1-u)/(1-s))^{b-1} u'(s)`` analytic on [0, 1] (zeros of ``u/s`` and of
    ``(1-u)/(1-s)`` lie at imaginary distance ``2 pi / L``): the Gauss-Jacobi rule of Beta(a, b)
    in ``s`` with weights times ``h(s_i)`` converges geometrically at a rate that degrades only
    like ``1/log(1/delta)``. ``1 - u = delta e^{L s} expm1(L (1 - s))`` (no cancellation near
    ``u = 1``). With ``delta >= MAP_BELOW`` the plain Gauss-Jacobi rule is returned.
    """
    if delta >= MAP_BELOW:
        s, w = gauss_beta(n, a, b, dps)
        if dps is None:
            return s, 1 - s, w
        with mpmath.workdps(dps + 10):
            return s, [1 - v for v in s], w
    s, w = gauss_beta(n, a, b, dps)
    if dps is None:
        a, b, dl = float(a), float(b), float(delta)
        L = math.log1p(1 / dl)
        u = dl * np.expm1(L * s)
        rest = dl * np.exp(L * s) * np.expm1(L * (1 - s))
        h = (u / s) ** (a - 1) * (rest / (1 - s)) ** (b - 1) * dl * L * np.exp(L * s)
        return u, rest, w * h
    with mpmath.workdps(dps + 10):
        a, b = _mpf(a), _mpf(b)
        dl = _mpf(delta)
        L = mpmath.log1p(1 / dl)
        us, rests, ws = [], [], []
        for si, wi in zip(s, w):
            e = mpmath.exp(L * si)
            u = dl * mpmath.expm1(L * si)
            rest = dl * e * mpmath.expm1(L * (1 - si))
            us.append(u)
            rests.append(rest)
            ws.append(wi * (u / si) ** (a - 1) * (rest / (1 - si)) ** (b - 1) * dl * L * e)
        return us, rests, ws


def dirichlet_rule(params, n_nodes: int, dps: int | None = None, deltas=None):
    """Tensor stick-breaking rule for Dirichlet(params).

    Coordinate ``j`` uses :func:`mapped_beta` with ``deltas[j]``, the relative distance of the
    integrand's nearest branch point beyond ``u_j = 0`` (None: plain Gauss-Jacobi everywhere).
    Returns ``(masses, weights)``: masses (N, r) on the simplex, weights (N,) (summing to 1 up
    to the quadrature error of the map); float64 arrays, or numpy object arrays of mpf.
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
        rules.append(mapped_beta(n_nodes, a, b, delta, dps))
    if dps is None:
        def tensor(k):
            grids = np.meshgrid(*[rule[k] for rule in rules], indexing="ij")
            return np.stack([g.ravel() for g in grids], axis=1)
        U, V, Ws = tensor(0), tensor(1), tensor(2)
        masses = np.empty((U.shape[0], r))
        rest = np.ones(U.shape[0])
        for j in range(r - 1):
            masses[:, j] = U[:, j] * rest
            rest = rest * V[:, j]
        masses[:, r - 1] = rest
        return masses, np.prod(Ws, axis=1)
    with mpmath.workdps(dps + 10):
        masses, weights = [], []
        _tensor_rows(rules, 0, [], mpmath.mpf(1), mpmath.mpf(1), masses, weights)
        return np.array(masses, dtype=object), np.array(weights, dtype=object)


def _tensor_rows(rules, j, row, rest, w, masses, weights):
    """Append the rows of the tensor rule below the prefix ``row`` (coordinates ``< j``; ``rest``
    = ``prod (1 - u_i)``, ``w`` = product of weights so far), in lexicographic order of the node
    indices: ``w_j = u_j rest``, ``rest <- rest (1 - u_j)``, the weight times the coordinate's
    weight. Each product is formed once per prefix, not once per row."""
    u, one_minus_u, wj = rules[j]
    last = j == len(rules) - 1
    for i in range(len(u)):
        head = row + [u[i] * rest]
        rest_i = rest * one_minus_u[i]
        w_i = w * wj[i]
        if last:
            head.append(rest_i)
            masses.append(head)
            weights.append(w_i)
        else:
            _tensor_rows(rules, j + 1, head, rest_i, w_i, masses, weights)


def dirichlet_params(multiplicities) -> list:
    """Dirichlet parameters k_i/2 as Fractions."""
    return [Fraction(k, 2) for k in multiplicities]


def _mpf(a):
    """mpf of an int, Fraction or float without a float round trip for rationals."""
    return mpmath.mpf(a.numerator) / a.denominator if isinstance(a, numbers.Rational) else mpmath.mpf(a)
