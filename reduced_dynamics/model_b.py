"""Model B collapsed dynamics: alpha/beta (looped: w/v) recursions of seed 003.

``alpha' = alpha - eta beta F(gamma)``, ``beta' = beta - eta alpha F(gamma)``, simultaneous,
with ``F = L'(gamma)/d`` (derived in :mod:`rdyn.derivations.model_b`). Expectations are weighted
sums over a :class:`SpectralRule`: the spectral measure of ``S`` seen from ``a`` (distinct
eigenvalue levels, descending, and the mass ``c^2`` of ``a`` on each eigenspace), either

* exact (Task 2 spectra, ``gamma >= 0``): two distinct eigenvalues by Gauss-Legendre in
  ``theta`` (top-eigenspace mass ``t = sin^2 theta ~ Beta(k/2, (d-k)/2)``); three or four by the
  tensor Gauss-Jacobi rule over the Dirichlet eigenspace masses
  (:func:`dirichlet_exact_rule`); at the working precision when ``dps`` is given,
* Monte Carlo: one fixed sample (``seed``) used for every step, so the recursion is
  deterministic; the loss carries its standard error (QMC replicas: :mod:`model_b_qmc`).

Works on numpy float64 arrays or numpy object arrays of ``mpmath.mpf`` with the same code;
at ``dps`` the per-node terms of the LN layer run on gmpy2 copies (:meth:`SpectralRule.means`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from fractions import Fraction
from typing import Any, Callable

import mpmath
import numpy as np

MODELS = ("ln", "noln", "looped")


# --------------------------------------------------------------------------- expectation rules
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

    @cached_property
    def m1(self):
        return (self.levels * self.masses).sum(axis=1)

    @cached_property
    def m2(self):
        return (self.levels * self.levels * self.masses).sum(axis=1)

    @cached_property
    def variance(self):
        """``m2 - m1^2`` as ``sum_i w_i (lam_i - m1)^2`` (no cancellation)."""
        dev = self.levels - self.m1[:, None]
        return (self.masses * dev * dev).sum(axis=1)

    def mean(self, values):
        return (self.weights * values).sum()

    def means(self, terms: Callable, *args) -> list:
        """``[mean(v) for v in terms(nodes, *args)]`` for a ``terms`` that reads ``m1``, ``m2``,
        ``variance`` of its first argument.

        On mp rules the terms run on exact gmpy2 copies of the nodes (:class:`MpfrNodes`), every
        operation rounded at mpmath's working precision and the weighted sum correctly rounded
        (:mod:`rdyn.reduced_dynamics.mpfr_arrays`; ~14x faster than mpf object arrays); the means
        come back as mpf. Otherwise the same as calling ``terms(self, *args)``.
        """
        if not self.mp:
            return [self.mean(v) for v in terms(self, *args)]
        from rdyn.reduced_dynamics import mpfr_arrays

        with mpfr_arrays.precision(mpmath.mp.prec):
            nodes = self.mpfr_nodes
            values = terms(nodes, *[mpfr_arrays.exact(a) for a in args])
            return [mpfr_arrays.to_mpf(mpfr_arrays.fsum(nodes.weights * v)) for v in values]

    @cached_property
    def mpfr_nodes(self) -> "MpfrNodes":
        """Bit-exact gmpy2 copies of ``m1``, ``m2``, ``variance``, ``weights`` (mp rules)."""
        from rdyn.reduced_dynamics import mpfr_arrays

        return MpfrNodes(*(mpfr_arrays.exact(v) for v in (self.m1, self.m2, self.variance, self.weights)))

    def std_error(self, values) -> float | None:
        if self.kind == "exact":
            return None
        v = np.asarray(values, dtype=float)
        return float(v.std(ddof=1) / math.sqrt(v.size))


@dataclass(frozen=True)
class MpfrNodes:
    """The statistics of a :class:`SpectralRule`'s nodes as gmpy2 mpfr object arrays; only
    to be computed with inside :func:`rdyn.reduced_dynamics.mpfr_arrays.precision`."""
    m1: Any
    m2: Any
    variance: Any
    weights: Any


def _sqrt(x):
    if x.dtype == object:
        from rdyn.reduced_dynamics import mpfr_arrays

        if mpfr_arrays.is_mpfr_array(x):
            return mpfr_arrays.sqrt(x)
        return np.array([mpmath.sqrt(v) for v in x], dtype=object)
    return np.sqrt(x)


def distinct_levels(spectrum: tuple[int, ...]) -> list[tuple[int, int]]:
    """(eigenvalue, multiplicity), descending."""
    vals = sorted(set(spectrum), reverse=True)
    return [(v, spectrum.count(v)) for v in vals]


MAX_EXACT_LEVELS = 4          # single layers: exact for Task 2 with up to this many distinct eigenvalues
EXACT_NODE_LIMIT = {"float64": 3_000_000, "mpmath": 200_000}


class ExactUnavailable(ValueError):
    """The exact rule would need more nodes than EXACT_NODE_LIMIT allows."""


def exact_supported(spectrum: tuple[int, ...] | None, model: str = "ln") -> bool:
    """Task 2 expectations are exact for the single layers (which depend on (S, a) only
    through m1, m2) with at most MAX_EXACT_LEVELS distinct eigenvalues, and for the looped
    model with at most two (whose Dist^2 has a boundary layer of width q: 2F1 closed form)."""
    if spectrum is None:
        return False
    r = len(set(spectrum))
    return r <= (2 if model == "looped" else MAX_EXACT_LEVELS)


def _probe_terms(nodes, g):
    """The least smooth statistics of the single layers (LN at gamma = 0, g, oo)."""
    m1, m2, var = nodes.m1, nodes.m2, nodes.variance
    sq2 = _sqrt(m2)
    r2 = 1 + 2 * g * m1 + g * g * m2
    return [1 / sq2, m1 / sq2, var / (m2 * m2), var / (sq2 * r2 * _sqrt(r2))]


def _probe(rule: SpectralRule, lam_min):
    return rule.means(_probe_terms, mpmath.mpf(1) / lam_min if rule.mp else 1 / lam_min)


def dirichlet_exact_rule(spectrum: tuple[int, ...], dps: int | None = None,
                         nodes: int | None = None) -> SpectralRule:
    """Exact rule for Task 2 with r >= 2 distinct eigenvalues (single layers).

    The masses of ``a`` on the r eigenspaces are Dirichlet(k_1/2, ..., k_r/2) (``k_i`` the
    multiplicities, eigenvalues descending); :func:`rdyn.reduced_dynamics.dirichlet_rule.dirichlet_rule`
    integrates in stick-breaking coordinates by tensor Gauss-Jacobi, coordinate ``u_j`` mapped
    exponentially (:func:`rdyn.reduced_dynamics.dirichlet_rule.mapped_beta`) with
    ``delta_j = lam_r^2 / (lam_j^2 - lam_r^2)``: for ``gamma >= 0`` the nearest branch point of
    ``sqrt(m2)`` and ``sqrt(1 + 2 gamma m1 + gamma^2 m2)`` as functions of ``u_j`` lies at
    ``u_j <= -delta_j`` (the mass moved from ``lam_j`` to ``lam_r``).
    The per-coordinate order ``n`` is raised until two successive orders agree on the probe
    statistics to ``1e-14`` (float64) or ``10^-(dps+3)``; ``nodes`` fixes ``n``.
    """
    from rdyn.reduced_dynamics.dirichlet_rule import dirichlet_params, dirichlet_rule

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

    ctx = mpmath.workdps(dps + 10) if mp else _NullCtx()
    with ctx:
        if nodes:
            return build(nodes)
        tol = (mpmath.mpf(10) ** (-dps - 3)) if mp else 1e-14
        # measured (spectrum (4,3,2,1)): the error falls ~10^-1.35 per node and coordinate, so
        # at dps the search starts near 0.8 (dps + 3) nodes; it is refused at once when the
        # first comparison (orders n0 and 1.25 n0) would already exceed the node budget
        n = max(8, int(math.ceil(0.8 * (dps + 3)))) if mp else 8
        if (n + max(4, n // 4)) ** (len(lam) - 1) > limit:
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
        gl = mpmath.calculus.quadrature.GaussLegendre(mpmath.mp)
        pts = gl.get_nodes(mpmath.mpf(0), mpmath.pi / 2, degree, mpmath.mp.prec)
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
        return [rule.mean(1 / _sqrt(m2)), rule.mean((m2 - m1 * m1) / (m2 * m2))]

    with mpmath.workdps(dps + 10):
        if nodes:
            return build(nodes)
        # accept degree m once degrees m-1 and m agree to 10^-(dps+3) on the probe statistics
        degree = max(4, int(math.ceil(math.log2(dps / 3 + 1))) + 1)
        rule = build(degree)
        while degree < 10:
            finer = build(degree + 1)
            degree += 1
            if all(abs(x - y) <= abs(y) * mpmath.mpf(10) ** (-dps - 3) for x, y in zip(probe(rule), probe(finer))):
                return finer
            rule = finer
        return rule


def sample_sphere_data(d: int, n: int, samples: int, rng: np.random.Generator):
    """``X`` with iid uniform unit columns and ``a`` uniform: yields (X, a) chunks."""
    chunk = max(1, min(samples, 20000))
    done = 0
    while done < samples:
        m = min(chunk, samples - done)
        X = rng.standard_normal((m, d, n))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        a = rng.standard_normal((m, d))
        a /= np.linalg.norm(a, axis=1, keepdims=True)
        yield X, a
        done += m


def monte_carlo_rule(data: str, d: int, n: int, spectrum: tuple[int, ...] | None,
                     samples: int, seed: int) -> SpectralRule:
    """One fixed sample of the spectral measure (``seed``)."""
    rng = np.random.default_rng(seed)
    if data == "spectrum":
        lv = distinct_levels(spectrum)
        u = rng.standard_normal((samples, d))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        spec = np.array(spectrum)
        masses = np.stack([(u[:, spec == v] ** 2).sum(axis=1) for v, _ in lv], axis=1)
        levels = np.tile(np.array([float(v) for v, _ in lv]), (samples, 1))
    else:
        lev, mas = [], []
        for X, a in sample_sphere_data(d, n, samples, rng):
            S = np.einsum("mij,mkj->mik", X, X)
            lam, vec = np.linalg.eigh(S)
            c = np.einsum("mij,mi->mj", vec, a)
            lev.append(lam[:, ::-1])
            mas.append((c * c)[:, ::-1])
        levels, masses = np.concatenate(lev), np.concatenate(mas)
    return SpectralRule(levels, masses, np.full(samples, 1.0 / samples), "monte_carlo", False)


# ---------------------------------------------------------------------- per-sample model forms
def ln_terms(rule: SpectralRule, g):
    """Per-sample (loss, dloss/dgamma) of the LN layer (Lemma C.1; rdyn.derivations.model_b)."""
    m1, m2, var = rule.m1, rule.m2, rule.variance
    r2 = 1 + 2 * g * m1 + g * g * m2
    r, sq2 = _sqrt(r2), _sqrt(m2)
    cos = (m1 + g * m2) / (r * sq2)
    # 2 - 2 cos without cancellation (rdyn.derivations.model_b.ln_loss_stable_form)
    loss = 2 * var / (r2 * m2 * (1 + cos))
    dloss = -2 * var / (sq2 * r2 * r)
    return loss, dloss


def noln_terms(rule: SpectralRule, g, target: str):
    """Per-sample (loss, dloss/dgamma) of the no-LN layer (Section B.1; rdyn.derivations.model_b)."""
    m1, m2 = rule.m1, rule.m2
    sq2 = _sqrt(m2)
    if target == "unnormalized":
        return 1 + 2 * (g - 1) * m1 + (g - 1) ** 2 * m2, 2 * (m1 + (g - 1) * m2)
    return 2 + 2 * g * m1 - 2 * m1 / sq2 + g * g * m2 - 2 * g * sq2, 2 * (m1 + g * m2 - sq2)


def model_terms(model: str, rule: SpectralRule, g, target: str | None = None, L: int = 1):
    """Per-sample (loss, dloss/dgamma) of any of the three models, on a given rule."""
    if model == "ln":
        return ln_terms(rule, g)
    if model == "looped":
        return looped_terms(rule, g, L)
    return noln_terms(rule, g, target)


def _looped_terms_f64(lam, c, rho, L):
    """:func:`looped_terms` on float64 arrays, compiled by numba (cached on disk by
    :mod:`rdyn.reduced_dynamics.kernel_cache`; numba is imported only here)."""
    return _looped_terms_compiled()(lam, c, rho, L)


@lru_cache(maxsize=None)
def _looped_terms_compiled():
    from rdyn.reduced_dynamics import kernel_cache

    return kernel_cache.compiled_function(_looped_terms_template, "model_b_looped",
                                          "float64 Model B looped kernel", "import numpy as np")


def _looped_terms_template(lam, c, rho, L):   # pragma: no cover - compiled twin of looped_terms
    N, K = lam.shape
    loss = np.empty(N)
    dloss = np.empty(N)
    for i in range(N):
        top = lam[i, 0]
        den = 1.0 + rho * top
        P = 0.0
        dP = 0.0
        for k in range(1, K):
            z = (1.0 + rho * lam[i, k]) / den
            z2L1 = z ** (2 * L - 1)
            P += c[i, k] * z2L1 * z
            dP += c[i, k] * (2 * L) * z2L1 * (lam[i, k] - top) / (den * den)
        tot = c[i, 0] + P
        loss[i] = P / tot
        dloss[i] = c[i, 0] * dP / (tot * tot)
    return loss, dloss


def looped_terms(rule: SpectralRule, rho, L: int):
    """Per-sample (Dist^2, d Dist^2/drho) of the looped LN model: P/(A+P)."""
    lam, c = rule.levels, rule.masses
    if not rule.mp and lam.shape[0] > 1000:
        return _looped_terms_f64(np.ascontiguousarray(lam, dtype=float), np.ascontiguousarray(c, dtype=float),
                                 float(rho), int(L))
    top = lam[:, :1]
    den = 1 + rho * top
    z = (1 + rho * lam[:, 1:]) / den
    z2L1 = z ** (2 * L - 1)
    zz = z2L1 * z
    A = c[:, 0]
    P = (c[:, 1:] * zz).sum(axis=1)
    dz = (lam[:, 1:] - top) / (den * den)
    dP = (c[:, 1:] * (2 * L) * z2L1 * dz).sum(axis=1)
    tot = A + P
    return P / tot, A * dP / (tot * tot)


def looped_two_level(rule: SpectralRule, rho, L: int):
    """Exact (G, dG/drho) of the looped model for a two-level spectrum, by 2F1.

    With ``t ~ Beta(a, b)`` (``a = k/2``, ``b = (d-k)/2``), ``q = ((1+rho l2)/(1+rho l1))^{2L}``
    and ``z = -(1-q)/q``: ``G = E[(1-t) q/(t + (1-t) q)] = b/(a+b) 2F1(1, a; a+b+1; z)`` and
    ``dG/dq = E[t(1-t)/(t+(1-t)q)^2] = q^-2 ab/((a+b)(a+b+1)) 2F1(2, a+1; a+b+2; z)`` (Euler's
    integral). Gauss-Legendre fails here: the integrand has a boundary layer of width ``q``.
    """
    k, d = rule.beta_params
    l1, l2 = rule.levels[0, 0], rule.levels[0, 1]
    if not rule.mp:
        return _looped_two_level_f64(float(rho), int(L), float(l1), float(l2), k, d)
    return looped_two_level_hyp2f1(rho, L, l1, l2, k, d)


def looped_two_level_hyp2f1(rho, L: int, l1, l2, k: int, d: int):
    """(G, dG/drho) of :func:`looped_two_level` by the 2F1 closed form, as mpmath numbers at
    the caller's mpmath precision."""
    rho_, l1, l2 = mpmath.mpf(rho), mpmath.mpf(l1), mpmath.mpf(l2)
    a, b = mpmath.mpf(k) / 2, mpmath.mpf(d - k) / 2
    q = ((1 + rho_ * l2) / (1 + rho_ * l1)) ** (2 * L)
    z = -(1 - q) / q
    G = b / (a + b) * mpmath.hyp2f1(1, a, a + b + 1, z)
    dGdq = a * b / ((a + b) * (a + b + 1)) * mpmath.hyp2f1(2, a + 1, a + b + 2, z) / (q * q)
    dq = 2 * L * q * (l2 - l1) / ((1 + rho_ * l1) * (1 + rho_ * l2))
    return G, dGdq * dq


BOUNDARY_NODES = 24       # Gauss points per panel of the float64 boundary-layer rule


@lru_cache(maxsize=64)
def _boundary_rule(k: int, d: int):
    """Reference Gauss rules (Beta(a,1), Legendre, Beta(b,1)) for :func:`_beta_layer_f64`;
    float64 values of 20-digit nodes (a pure function of (k, d))."""
    from rdyn.reduced_dynamics.dirichlet_rule import gauss_beta

    a, b = Fraction(k, 2), Fraction(d - k, 2)
    xa, wa = gauss_beta(BOUNDARY_NODES, a, 1)
    xg, wg = gauss_beta(BOUNDARY_NODES, 1, 1)
    xb, wb = gauss_beta(BOUNDARY_NODES, b, 1)
    lnB = math.lgamma(k / 2) + math.lgamma((d - k) / 2) - math.lgamma(d / 2)
    return xa, wa, xg, wg, xb, wb, lnB


def _beta_layer_f64(q, a, b, xa, wa, xg, wg, xb, wb, lnB):
    """:func:`_beta_layer_template`, compiled by numba (cached on disk by
    :mod:`rdyn.reduced_dynamics.kernel_cache`; numba is imported only here)."""
    return _beta_layer_compiled()(q, a, b, xa, wa, xg, wg, xb, wb, lnB)


@lru_cache(maxsize=None)
def _beta_layer_compiled():
    from rdyn.reduced_dynamics import kernel_cache

    return kernel_cache.compiled_function(_beta_layer_template, "model_b_beta_layer",
                                          "float64 Model B looped boundary-layer rule", "import math")


def _beta_layer_template(q, a, b, xa, wa, xg, wg, xb, wb, lnB):   # pragma: no cover - compiled
    """``G = E[(1-t) q/(t + (1-t) q)]`` and ``dG/dq = E[t (1-t)/(t + (1-t) q)^2]`` for
    ``t ~ Beta(a, b)``: composite Gauss rule graded geometrically (ratio 0.15) from ``t = 1/2``
    down to ``t <= q/10`` (the boundary layer of width ``q``), Jacobi end panels carrying
    ``t^{a-1}`` on ``[0, h_K]`` and ``(1-t)^{b-1}`` on ``[1/2, 1]`` (in ``v = 1 - t``)."""
    sigma = 0.15
    K = 0
    if q < 5.0:
        K = max(0, int(math.ceil(math.log(0.2 * q) / math.log(sigma))))
    G = 0.0
    dG = 0.0
    h = 0.5 * sigma ** K
    ha = math.exp(a * math.log(h)) / a
    for i in range(xa.shape[0]):
        t = h * xa[i]
        w = wa[i] * ha * math.exp((b - 1.0) * math.log1p(-t) - lnB)
        den = t + (1.0 - t) * q
        G += w * (1.0 - t) * q / den
        dG += w * t * (1.0 - t) / (den * den)
    for k in range(K, 0, -1):
        lo = 0.5 * sigma ** k
        hi = 0.5 * sigma ** (k - 1)
        for i in range(xg.shape[0]):
            t = lo + (hi - lo) * xg[i]
            w = wg[i] * (hi - lo) * math.exp((a - 1.0) * math.log(t) + (b - 1.0) * math.log1p(-t) - lnB)
            den = t + (1.0 - t) * q
            G += w * (1.0 - t) * q / den
            dG += w * t * (1.0 - t) / (den * den)
    hb = math.exp(b * math.log(0.5)) / b
    for i in range(xb.shape[0]):
        v = 0.5 * xb[i]
        t = 1.0 - v
        w = wb[i] * hb * math.exp((a - 1.0) * math.log1p(-v) - lnB)
        den = t + v * q
        G += w * v * q / den
        dG += w * t * v / (den * den)
    return G, dG


def _looped_two_level_f64(rho: float, L: int, l1: float, l2: float, k: int, d: int):
    """float64 twin of :func:`looped_two_level` (no 2F1: the compiled graded rule above)."""
    xa, wa, xg, wg, xb, wb, lnB = _boundary_rule(k, d)
    z = (1.0 + rho * l2) / (1.0 + rho * l1)
    q = z ** (2 * L)
    G, dGdq = _beta_layer_f64(q, k / 2, (d - k) / 2, xa, wa, xg, wg, xb, wb, lnB)
    dq = 2 * L * q * (l2 - l1) / ((1.0 + rho * l1) * (1.0 + rho * l2))
    return G, dGdq * dq


def upsilon1_two_level(rule: SpectralRule, L: int):
    """Upsilon_1 = 2L th^{2L-1} (l1 - l2)/l1^2 * dG/dq at q = th^{2L}, th = l2/l1 (exact)."""
    k, d = rule.beta_params
    mp = rule.mp
    with (mpmath.workdps(mpmath.mp.dps) if mp else mpmath.workprec(64)):
        l1, l2 = mpmath.mpf(rule.levels[0, 0]), mpmath.mpf(rule.levels[0, 1])
        a, b = mpmath.mpf(k) / 2, mpmath.mpf(d - k) / 2
        th = l2 / l1
        q = th ** (2 * L)
        dGdq = a * b / ((a + b) * (a + b + 1)) * mpmath.hyp2f1(2, a + 1, a + b + 2, -(1 - q) / q) / (q * q)
        u = 2 * L * th ** (2 * L - 1) * (l1 - l2) / (l1 * l1) * dGdq
    return u if mp else float(u)


def _two_level_exact(rule: SpectralRule) -> bool:
    return rule.kind == "exact" and rule.beta_params is not None and rule.levels.shape[1] == 2


# ------------------------------------------------------------------------------ constants
@dataclass(frozen=True)
class Constants:
    kappa1: Any
    kappa2: Any
    kappa3: Any
    kappa4: Any          # E[a^T S a / ||S a||]
    kappa1_exact: Fraction
    kappa2_exact: Fraction | None
    upsilon3: Any        # E[(m2 - m1^2)/m2^2]  (LN growth constant)


def kappa_exact(data: str, d: int, n: int, spectrum) -> tuple[Fraction, Fraction]:
    """Closed forms (rdyn.derivations.model_b.kappa_task1/2): n/d and n(n+d-1)/d^2 or sum m^2/d."""
    if data == "spectrum":
        return Fraction(sum(spectrum), d), Fraction(sum(m * m for m in spectrum), d)
    return Fraction(n, d), Fraction(n * (n + d - 1), d * d)


def _constant_terms(nodes):
    m1, m2 = nodes.m1, nodes.m2
    sq2 = _sqrt(m2)
    return [m1, m2, sq2, m1 / sq2, nodes.variance / (m2 * m2)]


def constants(rule: SpectralRule, data: str, d: int, n: int, spectrum) -> Constants:
    k1, k2 = kappa_exact(data, d, n, spectrum)
    m1, m2, k3, k4, var = rule.means(_constant_terms)
    return Constants(m1, m2, k3, k4, k1, k2, var)


def upsilon1(rule: SpectralRule, L: int):
    """Looped growth constant ``lim -rho^2 G'(rho)`` (rdyn.derivations.model_b.growth_limits)."""
    lam, c = rule.levels, rule.masses
    top = lam[:, :1]
    th = lam[:, 1:] / top
    A = c[:, 0]
    B = (c[:, 1:] * th ** (2 * L)).sum(axis=1)
    inner = (c[:, 1:] * (2 * L) * th ** (2 * L - 1) * (top - lam[:, 1:]) / (top * top)).sum(axis=1)
    return rule.mean(A * inner / ((A + B) * (A + B)))


# ------------------------------------------------------------------------------ the iterator
@dataclass(frozen=True)
class Config:
    model: str = "ln"
    target: str | None = None       # noln: normalized / unnormalized
    data: str = "sphere"
    d: int = 16
    n: int = 32
    spectrum: tuple[int, ...] | None = None
    L: int = 10
    eta: float = 0.1
    steps: int = 2000
    alpha0: float = 0.0
    beta0: float = 1.0
    dps: int | None = None
    samples: int = 100000
    seed: int = 0
    expectation: str = "auto"      # auto / exact / qmc / monte_carlo (EXPECTATIONS)
    replicas: int = 16             # qmc: independent scrambled-Sobol replicas


EXPECTATIONS = ("auto", "exact", "qmc", "monte_carlo")


def exact_gamma_range(cfg: Config) -> bool:
    """Whether the run stays where the exact Task 2 rules are accurate: ``gamma >= 0``.

    The LN and looped per-sample terms have branch points where ``1 + gamma lambda_i = 0``
    (``h = a + gamma S a`` can vanish), i.e. on the real axis at ``gamma = -1/lambda_i``; the
    rules are built and checked for ``gamma >= 0`` only (measured for spectrum (4,3,2,1): float64
    errors up to 1e-4 near ``gamma = -1/4``). Since ``L'(gamma) < 0``, ``gamma_{t+1} - gamma_t =
    eta |F| (alpha^2 + beta^2) + eta^2 F^2 gamma_t >= 0`` when ``gamma_t >= 0``: a run from
    ``alpha0 beta0 >= 0`` never leaves the range. The no-LN layer needs only kappa1..kappa4.
    """
    return cfg.model == "noln" or cfg.alpha0 * cfg.beta0 >= 0


def resolve_expectation(cfg: Config) -> str:
    """The expectation a run uses: ``exact`` for the unnormalised no-LN layer (rational kappa1,
    kappa2 only) and for Task 2 spectra in :func:`exact_supported` that start in
    :func:`exact_gamma_range`; otherwise ``qmc`` (auto) or
    the one asked for. Asking for ``exact`` where it does not exist raises :class:`ExactUnavailable`."""
    if _exact_moments_only(cfg):
        return "exact"
    if cfg.expectation in ("qmc", "monte_carlo"):
        return cfg.expectation
    if cfg.data == "spectrum" and exact_supported(cfg.spectrum, cfg.model) and exact_gamma_range(cfg):
        return "exact"
    if cfg.expectation == "exact" and not exact_gamma_range(cfg):
        raise ExactUnavailable(
            f"exact expectations of the {cfg.model} model hold for gamma = alpha*beta >= 0 (a "
            f"trajectory from alpha0*beta0 >= 0 stays there); alpha0*beta0 = "
            f"{cfg.alpha0 * cfg.beta0:g} < 0 may cross the kinks at gamma = -1/lambda_i")
    if cfg.expectation == "exact":
        r = None if cfg.spectrum is None else len(set(cfg.spectrum))
        raise ExactUnavailable(
            "exact expectations exist for --data spectrum with at most "
            f"{2 if cfg.model == 'looped' else MAX_EXACT_LEVELS} distinct eigenvalues "
            f"({'sphere data' if r is None else f'{r} given'}; model {cfg.model})")
    return "qmc"


@dataclass
class Trajectory:
    """Iterates t = 0..steps (alpha, beta, gamma) and loss at each step."""
    alpha: list
    beta: list
    gamma: list
    loss: list
    F: list
    std_error: float | None
    expectation: str
    constants: Constants
    gamma_star: Any = None
    upsilon1: Any = None
    extras: dict = field(default_factory=dict)


def build_rule(cfg: Config) -> SpectralRule:
    """The rule of an exact or one-sample Monte Carlo run (qmc: see model_b_qmc.run_replicas)."""
    kind = resolve_expectation(cfg)
    if kind == "exact" and cfg.data == "spectrum":
        return exact_rule(cfg.spectrum, cfg.dps)
    if kind == "qmc":
        raise ValueError("qmc expectations run R trajectories: use rdyn.reduced_dynamics.model_b_qmc.run_replicas")
    return monte_carlo_rule(cfg.data, cfg.d, cfg.n, cfg.spectrum, cfg.samples, cfg.seed)


def _num(x, mp: bool):
    return mpmath.mpf(x) if mp else float(x)


def _exact_moments_only(cfg: Config) -> bool:
    """The unnormalised no-LN run needs only the rational kappa1, kappa2."""
    return cfg.model == "noln" and cfg.target == "unnormalized"


def step_terms(cfg: Config, rule: SpectralRule, const: Constants) -> Callable:
    """``g -> (loss, F, per-sample loss or None)`` for the chosen model."""
    d = cfg.d
    if cfg.model == "ln" and rule.mp:
        def f(g):
            loss, dl = rule.means(ln_terms, g)
            return loss, dl / d, None
    elif cfg.model == "ln":
        def f(g):
            loss_i, dl_i = ln_terms(rule, g)
            return rule.mean(loss_i), rule.mean(dl_i) / d, loss_i
    elif cfg.model == "looped" and _two_level_exact(rule) and not rule.mp:
        k, dd = rule.beta_params
        xa, wa, xg, wg, xb, wb, lnB = _boundary_rule(k, dd)
        l1, l2, a_, b_, L2 = float(rule.levels[0, 0]), float(rule.levels[0, 1]), k / 2, (dd - k) / 2, 2 * cfg.L

        def f(g):   # inlined _looped_two_level_f64 (the per-step Python overhead matters here)
            den1, den2 = 1.0 + g * l1, 1.0 + g * l2
            q = (den2 / den1) ** L2
            G, dGdq = _beta_layer_f64(q, a_, b_, xa, wa, xg, wg, xb, wb, lnB)
            return G, dGdq * L2 * q * (l2 - l1) / (den1 * den2) / d, None
    elif cfg.model == "looped" and _two_level_exact(rule):
        def f(g):
            G, dG = looped_two_level(rule, g, cfg.L)
            return G, dG / d, None
    elif cfg.model == "looped":
        def f(g):
            loss_i, dl_i = looped_terms(rule, g, cfg.L)
            return rule.mean(loss_i), rule.mean(dl_i) / d, loss_i
    else:
        mp = rule.mp or (_exact_moments_only(cfg) and cfg.dps is not None)
        k1 = (mpmath.mpf(const.kappa1_exact.numerator) / const.kappa1_exact.denominator) if mp \
            else float(const.kappa1_exact)
        k2 = (mpmath.mpf(const.kappa2_exact.numerator) / const.kappa2_exact.denominator) if mp \
            else float(const.kappa2_exact)
        if cfg.target == "unnormalized":
            def f(g):
                return (1 + 2 * (g - 1) * k1 + (g - 1) ** 2 * k2,
                        2 * (k1 + (g - 1) * k2) / d, None)
        else:
            m1, m2 = rule.m1, rule.m2
            sq2 = _sqrt(m2)
            k3, k4 = const.kappa3, const.kappa4

            def f(g):
                loss = 2 - 2 * k4 + 2 * g * (k1 - k3) + g * g * k2
                return loss, 2 * (k1 + g * k2 - k3) / d, -2 * m1 / sq2 - 2 * g * sq2
    return f


def gamma_star(cfg: Config, const: Constants, mp: bool):
    if cfg.model != "noln":
        return None
    k1 = _num(const.kappa1_exact.numerator, mp) / const.kappa1_exact.denominator
    k2 = _num(const.kappa2_exact.numerator, mp) / const.kappa2_exact.denominator
    if cfg.target == "unnormalized":
        return 1 - k1 / k2
    return (const.kappa3 - k1) / k2


def run_identity(cfg: Config, rule: SpectralRule) -> dict:
    """Everything that determines a run (the checkpoint identity): every :class:`Config` field
    (named as the ``rdyn ln`` options; Monte Carlo ``seed`` and ``samples`` included, the
    sample being rebuilt from them) and the kind and size of the expectation rule."""
    identity = {name: getattr(cfg, name) for name in Config.__dataclass_fields__}
    identity["spectrum"] = None if cfg.spectrum is None else [int(m) for m in cfg.spectrum]
    identity["rule"] = {"kind": rule.kind, "nodes": int(len(rule.weights)), "mp": bool(rule.mp)}
    return identity


_SERIES = ("alpha", "beta", "gamma", "loss", "F")


def _consistent_length(series: dict) -> int:
    """The last step p such that alpha, beta, gamma hold steps 0..p and loss, F 0..p-1
    (values are a deterministic function of the step, so truncating to p is consistent)."""
    return min(len(series["alpha"]) - 1, len(series["beta"]) - 1, len(series["gamma"]) - 1,
               len(series["loss"]), len(series["F"]))


def _save_series(path: str, identity: dict, series: dict, exact: bool) -> int:
    """Save the trajectory up to the last consistent step p (loss and F at p are recomputed
    on resume); returns p."""
    from rdyn.reduced_dynamics._version import __version__
    from rdyn.reduced_dynamics import checkpoint

    p = _consistent_length(series)
    arrays = {}
    for name in _SERIES:
        values = series[name][:p + 1] if name in ("alpha", "beta", "gamma") else series[name][:p]
        arrays[name] = checkpoint.exact_array(values) if exact else np.array(values, dtype=np.float64)
    checkpoint.save(path, "ln", identity, arrays, {"t": p, "rdyn_version": __version__})
    return p


def _load_series(path: str, identity: dict, exact: bool) -> dict:
    from rdyn.reduced_dynamics import checkpoint

    # steps may be raised on resume (the run is extended, bit-identical to one longer run)
    arrays, meta = checkpoint.load(path, "ln", identity, ignore=("steps",))
    try:
        series = {name: (list(checkpoint.from_exact_array(arrays[name], "mpmath")) if exact
                         else np.asarray(arrays[name], dtype=np.float64).tolist())
                  for name in _SERIES}
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, checkpoint.CheckpointError):
            raise
        raise checkpoint.CheckpointError(f"checkpoint {path} is incomplete ({exc})") from None
    p = int(meta.get("t", -1))
    if p > identity["steps"]:
        raise checkpoint.CheckpointError(
            f"checkpoint {path} is at step {p}, beyond --steps {identity['steps']}")
    if p < 0 or _consistent_length(series) != p \
            or len(series["alpha"]) != p + 1 or len(series["loss"]) != p:
        raise checkpoint.CheckpointError(f"checkpoint {path} has series of the wrong length")
    return series


def run(cfg: Config, progress: Callable[[int], None] | None = None,
        rule: SpectralRule | None = None, checkpoint: str | None = None,
        checkpoint_every: float = 60.0, resume: str | None = None) -> Trajectory:
    """Iterate the collapsed recursion ``cfg.steps`` times (simultaneous updates).

    ``checkpoint``: file that receives the trajectory so far (:mod:`reduced_dynamics.
    checkpoint`, kind "ln", identity :func:`run_identity`) at most every ``checkpoint_every``
    seconds, at the end, and on KeyboardInterrupt (re-raised as
    :class:`rdyn.reduced_dynamics.checkpoint.Interrupted`). ``resume``: continue from such a file;
    the Trajectory is bit-identical to an uninterrupted run. ``cfg.steps`` may exceed the
    checkpoint's (a finished run is extended, bit-identical to one run with the larger steps).
    """
    import time

    if rule is None and resolve_expectation(cfg) == "qmc":
        if checkpoint is not None or resume is not None:
            raise ValueError("checkpoints apply to exact and monte_carlo expectations, not qmc")
        from rdyn.reduced_dynamics.model_b_qmc import run_replicas

        return run_replicas(cfg, cfg.replicas).trajectory
    rule = rule or build_rule(cfg)
    identity = run_identity(cfg, rule)
    use_mp = rule.mp or (_exact_moments_only(cfg) and cfg.dps is not None)
    ctx = mpmath.workdps(cfg.dps + 5) if use_mp else _NullCtx()
    with ctx:
        const = constants(rule, cfg.data, cfg.d, cfg.n, cfg.spectrum)
        f = step_terms(cfg, rule, const)
        a, b = _num(cfg.alpha0, use_mp), _num(cfg.beta0, use_mp)
        eta = (mpmath.mpf(str(cfg.eta)) if use_mp else float(cfg.eta))
        series = {"alpha": [a], "beta": [b], "gamma": [a * b], "loss": [], "F": []}
        if resume is not None:
            series = _load_series(resume, identity, use_mp)
        A, B, G, Ls, Fs = (series[name] for name in _SERIES)
        a, b = A[-1], B[-1]
        per_sample = None
        last_save = time.monotonic()
        try:
            for t in range(len(Ls), cfg.steps + 1):
                loss, F, per_sample = f(a * b)
                Ls.append(loss)
                Fs.append(F)
                if t == cfg.steps:
                    break
                a, b = a - eta * b * F, b - eta * a * F
                A.append(a), B.append(b), G.append(a * b)
                if progress and (t + 1) % 200 == 0:
                    progress(t + 1)
                if checkpoint is not None and time.monotonic() - last_save >= checkpoint_every:
                    _save_series(checkpoint, identity, series, use_mp)
                    last_save = time.monotonic()
            if checkpoint is not None:
                _save_series(checkpoint, identity, series, use_mp)
        except KeyboardInterrupt as exc:
            if checkpoint is None:
                raise
            from rdyn.reduced_dynamics.checkpoint import Interrupted

            raise Interrupted(_save_series(checkpoint, identity, series, use_mp), checkpoint) from exc
        se = rule.std_error(per_sample) if per_sample is not None else None
        if cfg.model == "noln" and cfg.target == "unnormalized":
            se = None
        ups1 = None
        if cfg.model == "looped":
            ups1 = upsilon1_two_level(rule, cfg.L) if _two_level_exact(rule) else upsilon1(rule, cfg.L)
        gs = gamma_star(cfg, const, use_mp)
    kind = "exact" if (rule.kind == "exact" or _exact_moments_only(cfg)) else "monte_carlo"
    return Trajectory(A, B, G, Ls, Fs, se, kind, const, gs, ups1)


class _NullCtx:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# ------------------------------------------------------------------------ derived reports
def fitted_exponent(values, t_from: int) -> float | None:
    """Least-squares slope of log|x_t| against log t over t in [t_from, end]."""
    t = np.arange(len(values), dtype=float)
    x = np.abs(np.array([float(v) for v in values]))
    sel = (t >= max(t_from, 1)) & (x > 0)
    if sel.sum() < 3:
        return None
    return float(np.polyfit(np.log(t[sel]), np.log(x[sel]), 1)[0])


def contraction_ratio(gamma, lam_top, lam_next):
    """``R = (1 + gamma lam_{r+1}) / (1 + gamma lam_1)`` (Theorem 4.6)."""
    return (1 + gamma * lam_next) / (1 + gamma * lam_top)


def test_spectrum(cfg: Config) -> tuple[np.ndarray, np.ndarray]:
    """Fixed test point: eigenvalues (descending) of ``S_test`` and ``c_i^2`` of ``a_test``.

    Spectrum data: the given spectrum; sphere data: one draw with ``seed + 1``.
    """
    rng = np.random.default_rng(cfg.seed + 1)
    a = rng.standard_normal(cfg.d)
    a /= np.linalg.norm(a)
    if cfg.data == "spectrum":
        lam = np.sort(np.array(cfg.spectrum, dtype=float))[::-1]
        return lam, (a * a)[np.argsort(np.array(cfg.spectrum))[::-1]]
    X = rng.standard_normal((cfg.d, cfg.n))
    X /= np.linalg.norm(X, axis=0)
    lam, vec = np.linalg.eigh(X @ X.T)
    c = vec.T @ a
    return lam[::-1], (c * c)[::-1]


def theorem_4_7(rho: float, L: int, lam: np.ndarray, c2: np.ndarray) -> dict:
    """sin(psi_L) at ``rho`` and at ``rho = oo`` (power method) with the Theorem 4.7 bounds."""
    top = lam[0]
    in_top = np.isclose(lam, top, rtol=1e-12, atol=0)
    lam_next = lam[~in_top][0] if (~in_top).any() else top
    ratio = lam_next / top

    def sin_psi(mu):
        w = c2 * mu ** (2 * L)
        return math.sqrt(w[~in_top].sum() / w.sum())

    c_next2 = c2[~in_top][0] if (~in_top).any() else 0.0
    a_perp, a_top = math.sqrt(c2[~in_top].sum()), math.sqrt(c2[in_top].sum())
    return {"L": L, "sin_psi_trained": sin_psi((1 + rho * lam) / (1 + rho * top)),
            "sin_psi_power_method": sin_psi(lam / top),
            "lower_bound": math.sqrt(c_next2) * ratio ** L,
            "upper_bound": a_perp / a_top * ratio ** L,
            "lambda_ratio": ratio}
