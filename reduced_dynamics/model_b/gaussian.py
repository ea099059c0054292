"""Exact Task 2 expectations of Model B by Gaussian quadratic forms: cost independent of r.

With ``z ~ N(0, I_d)`` in the eigenbasis of ``S`` (``a = z/|z|``; every Model B quantity is
homogeneous of degree 0 in ``z``), each level ``p`` (eigenvalue ``lam_p``, multiplicity ``k_p``)
enters only through diagonal quadratic forms. Two shapes cover all models:

* **single layers** (LN, no-LN constants): ``E[N(z) (z^T A z)^{-a} (z^T B z)^{-b}]`` with
  ``(a, b) = (1/2, 1/2)`` and ``N = z^T C z`` (*linear*), or ``(a, b) = (1/2, 3/2)`` and
  ``N = (1/2) sum_ij z_i^2 z_j^2 (lam_i - lam_j)^2`` (*gap*). ``Q^{-p} = Gamma(p)^{-1}
  int_0^oo t^{p-1} e^{-t Q} dt`` for both powers and the Gaussian identity
  ``E[z_i^2 e^{-z^T D z}] / E[e^{-z^T D z}] = 1/(1 + 2 D_i)`` (and ``1/((1+2D_i)(1+2D_j))`` for
  ``z_i^2 z_j^2``, i != j) give, in polar coordinates ``s = v cos^2 phi``, ``t = v sin^2 phi``,
  ``v = e^tau``::

      linear: (2/pi) int_0^{pi/2} dphi int dtau  v   Phi N1,      N1 = sum_p k_p C_p sigma_p
      gap:    (4/pi) int_0^{pi/2} dphi sin^2 phi int dtau v^2 Phi N2,
              N2 = (1/2) sum_pq k_p k_q sigma_p sigma_q (lam_p - lam_q)^2 = W sum_p w_p (lam_p - mu)^2

  with ``D_p = 2 (A_p cos^2 phi + B_p sin^2 phi)``, ``sigma_p = 1/(1 + v D_p)``,
  ``Phi = prod_p sigma_p^{k_p/2}``, ``w_p = k_p sigma_p``, ``W = sum w_p``, ``mu = sum w_p lam_p / W``
  (two-pass: no cancellation). ``A, B`` are first rescaled (``E = alpha^a beta^b E[...]`` with
  ``alpha A, beta B``) so that ``alpha A_p / (beta B_p)`` is centred on 1.
* **looped model** (Dist^2 = P/(A+P) is a ratio of two quadratic forms): one-dimensional,
  ``E[z^T W z / z^T V z] = (1/2) int dtau v Phi sum_p k_p W_p sigma_p`` and
  ``E[z^T E z z^T U z / (z^T V z)^2] = (1/4) int dtau v^2 Phi (sum_{p in E} k_p sigma_p)
  (sum_q k_q U_q sigma_q)`` (``E`` and ``U`` on disjoint levels), ``sigma_p = 1/(1 + v V_p)``.

**Quadrature and its error.** ``tau``: trapezoid rule on a fixed grid. For real ``D_p > 0`` the
integrand is analytic in the strip ``|Im tau| < pi`` (branch points of ``(1 + e^tau D_p)^{-k/2}``
at ``tau = -log D_p + i pi``), so the error is ``O(exp(-2 pi a / h))`` for any ``a < pi``
(Trefethen and Weideman 2014, Thm 5.1); the grid spacing is set from ``a = A_TAU`` and the
truncation at ``tau_lo``/``tau_hi`` from the exponential decay of the tails (``e^{tau}`` and
``e^{-tau d/2}``). ``phi``: the integrand is an even, pi-periodic function of ``phi`` (it
depends on ``cos 2 phi``), analytic in ``|Im phi| < a_phi = min_p atanh(min(rho_p, 1/rho_p)^{1/2})``,
``rho_p = alpha A_p / (beta B_p)`` (where ``D_p`` vanishes), so the trapezoid rule on
``[0, pi/2]`` (endpoints halved) converges like ``exp(-4 a_phi N)``. Both grids are set for
``tol`` on the *coarse* rule (every other node in ``tau`` and in ``phi``), so the returned fine
value carries ``|fine - coarse|`` as an a-posteriori estimate: it bounds the coarse rule's error
(up to the fine rule's), and the fine rule's error is far below it (the exponent doubles).
Every evaluation returns ``(fine, estimate)``; the iterator checks ``estimate <= tol |fine|``
at every step (:class:`QuadratureError` otherwise).

Works in float64 (numpy) and at ``dps`` on gmpy2 MPFR object arrays
(:mod:`rdyn.reduced_dynamics.numerics.mpfr_arrays`) at ``dps + 10`` digits, ``tol = 10^-(dps+3)``.
Nodes depend on the spectrum's eigenvalue ratio and on ``d`` only, never on ``gamma``: built
once per run (:func:`single_layer_grid`, :func:`looped_grid`) and reused at every step.
"""
from __future__ import annotations

import cmath
import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

KAPPA = 2.0            # tau = tau0 + KAPPA sinh(u)
A_TAU_FRACTION = 0.7   # fraction of the strip half-width in u used to space the grid
PHI_MARGIN = 0.8       # fraction of a_phi used to size the phi grid
FLOAT64_TOL = 1e-15    # float64: what the coarse rule is sized for (relative)


class QuadratureError(ArithmeticError):
    """The a-posteriori estimate of a Gaussian-route expectation exceeded its tolerance."""


# dps beyond which the Gaussian route is refused (rdyn.api._ln): the grid grows like dps^2 and a
# node's cost like 1 + (dps/300)^1.5 (rdyn.run_time) (4,3,2,1,1: 378105 nodes, 3.8 s per LN step at 100; 1646195, 21 s at
# 200; the constants once more 1.6 times that; load 1)
GAUSSIAN_DPS_MAX = 200
# elements (tau x phi x level) of the single-layer integrand held at once: bounds the memory
# of an MPFR run (about 0.3 kB per element) whatever the grid size
CHUNK_ELEMENTS = 200_000


def tolerance(dps: int | None) -> float:
    """The relative tolerance of the coarse rule: 1e-15 (float64) or ``10^-(dps+3)``; a float
    (normal for every ``dps <= GAUSSIAN_DPS_MAX``)."""
    if dps is not None and dps > GAUSSIAN_DPS_MAX:
        raise ValueError(f"the Gaussian route runs at most {GAUSSIAN_DPS_MAX} digits, got dps {dps}")
    return FLOAT64_TOL if dps is None else 10.0 ** -(dps + 3)


def log_inverse_tolerance(dps: int | None) -> float:
    """``log(1/tol)`` computed without forming ``tol`` (no float underflow at large ``dps``)."""
    return -math.log(FLOAT64_TOL) if dps is None else (dps + 3) * math.log(10.0)


def _work_bits(dps: int | None) -> int:
    return 53 if dps is None else int((dps + 10) * 3.33) + 8


@dataclass(frozen=True)
class Grid:
    """Fixed quadrature nodes: ``v = e^tau`` on an equispaced grid (spacing ``h``), and, for
    the single layers, ``cos^2 phi``, ``sin^2 phi`` on ``[0, pi/2]`` with trapezoid weights.
    Arrays are float64, or MPFR object arrays (``mp``) at the working precision."""
    v: Any
    tau_weights: Any          # fine trapezoid weights in tau (the coarse rule: every other node, doubled)
    cos2: Any
    sin2: Any
    phi_weights: Any
    phi_coarse_weights: Any
    tau_coarse: Any           # boolean mask of the coarse tau nodes
    phi_coarse: Any
    mp: bool
    bits: int
    tol: float
    a_phi: float

    @property
    def nodes(self) -> int:
        return int(len(self.v)) * (1 if self.cos2 is None else int(len(self.cos2)))


@dataclass(frozen=True)
class TauLayout:
    """The ``tau`` nodes without their values: ``tau_j = tau0 + KAPPA sinh(h j)``,
    ``j = -n_lo .. n_hi`` (both even)."""
    tau0: float
    h: float
    n_lo: int
    n_hi: int

    @property
    def nodes(self) -> int:
        return self.n_lo + self.n_hi + 1


def tau_layout(sing_lo: float, sing_hi: float, rate_hi: float, dps: int | None) -> TauLayout:
    """The trapezoid rule in ``u`` with ``tau = tau0 + KAPPA sinh(u)`` (both tails then decay
    double-exponentially in ``u``).

    The integrand's branch points sit at ``tau = tau_s + i pi`` with ``tau_s`` in
    ``[sing_lo, sing_hi]`` (``-log D_p``); in ``u`` they lie at ``asinh((tau_s - tau0 + i pi)/KAPPA)``,
    whose smallest imaginary part ``a_u`` (at an end of the range) sets the spacing:
    ``h = pi A_TAU_FRACTION a_u / log(1/tol)`` (coarse spacing ``2h`` meets
    ``exp(-2 pi A_TAU_FRACTION a_u / (2h)) = tol``). Tails: the integrand is at most
    ``C e^{tau}`` below and ``C e^{-rate_hi tau}`` above ``tau_s``; the grid stops where that
    is ``tol e^{-8}``. An even number of intervals; the coarse rule takes every other node."""
    log_inv = log_inverse_tolerance(dps)
    tau0 = 0.5 * (sing_lo + sing_hi)
    half = 0.5 * (sing_hi - sing_lo)
    a_u = min(complex(cmath.asinh(complex(x, math.pi) / KAPPA)).imag for x in (-half, half))
    h = math.pi * A_TAU_FRACTION * a_u / log_inv
    span = log_inv + 8
    u_lo = -math.asinh((span + half) / KAPPA)
    u_hi = math.asinh((span / rate_hi + half) / KAPPA)
    return TauLayout(tau0, h, int(math.ceil(-u_lo / (2 * h))) * 2, int(math.ceil(u_hi / (2 * h))) * 2)


def _tau_grid(layout: TauLayout, mp: bool, bits: int):
    """Nodes ``v = e^tau``, weights ``d tau / d u`` times ``h``, and the coarse mask of
    ``layout``."""
    tau0, h = layout.tau0, layout.h
    idx = np.arange(-layout.n_lo, layout.n_hi + 1)
    coarse = idx % 2 == 0
    if not mp:
        u = h * idx
        return np.exp(tau0 + KAPPA * np.sinh(u)), h * KAPPA * np.cosh(u), coarse
    from rdyn.reduced_dynamics.numerics import mpfr_arrays
    import gmpy2

    with mpfr_arrays.precision(bits):
        hh, t0 = gmpy2.mpfr(h), gmpy2.mpfr(tau0)
        us = [hh * int(i) for i in idx]
        v = np.array([gmpy2.exp(t0 + KAPPA * gmpy2.sinh(u)) for u in us], dtype=object)
        w = np.array([hh * KAPPA * gmpy2.cosh(u) for u in us], dtype=object)
        return v, w, coarse


def _phi_grid(n: int, mp: bool, bits: int):
    """Trapezoid rule on ``[0, pi/2]`` for an even pi-periodic integrand, ``n`` intervals
    (``n`` even; the coarse rule is every other node, weights doubled)."""
    j = np.arange(n + 1)
    coarse = j % 2 == 0
    if not mp:
        phi = j * (math.pi / (2 * n))
        c2, s2 = np.cos(phi) ** 2, np.sin(phi) ** 2
        w = np.full(n + 1, math.pi / (2 * n))
        w[0] = w[-1] = math.pi / (4 * n)
        wc = np.where(coarse, 2 * w, 0.0)
        return c2, s2, w, wc, coarse
    from rdyn.reduced_dynamics.numerics import mpfr_arrays
    import gmpy2

    with mpfr_arrays.precision(bits):
        pi = gmpy2.const_pi()
        step = pi / (2 * n)
        c2 = np.array([gmpy2.cos(step * int(i)) ** 2 for i in j], dtype=object)
        s2 = np.array([gmpy2.sin(step * int(i)) ** 2 for i in j], dtype=object)
        w = np.array([step] * (n + 1), dtype=object)
        w[0] = w[-1] = step / 2
        wc = np.array([2 * w[i] if coarse[i] else gmpy2.mpfr(0) for i in j], dtype=object)
        return c2, s2, w, wc, coarse


def single_layer_layout(spectrum: tuple[int, ...], dps: int | None = None) -> tuple[TauLayout, int, float]:
    """``(tau layout, phi intervals n_phi, a_phi)`` of the single-layer grid, without building it.

    Ratio ``R = lam_max / lam_min``: after the centring rescale every ``alpha A_p``, ``beta B_p``
    lies in ``[1/R^2, R^2]`` (``A = Lambda^2``, ``B = (I + gamma Lambda)^2`` or ``I`` or
    ``Lambda^2``; ``(lam_p/M_p) / (lam_q/M_q) <= R`` for ``gamma >= 0``) and the centred
    ``rho_p`` in ``[1/R, R]``, so ``a_phi >= atanh(R^{-1/2})`` for every step."""
    R = max(spectrum) / min(spectrum)
    a_phi = math.atanh(min(R ** -0.5, 0.95)) if R > 1 else 3.0
    n_phi = 2 * max(2, int(math.ceil(log_inverse_tolerance(dps) / (2 * PHI_MARGIN * a_phi) / 2)) + 1)
    dmax, dmin = 2 * R * R, 2 / (R * R)
    return tau_layout(-math.log(dmax), -math.log(dmin), len(spectrum) / 2, dps), n_phi, a_phi


def single_layer_grid(spectrum: tuple[int, ...], dps: int | None = None) -> Grid:
    """The grid of the single-layer integrals for a Task 2 spectrum (any number of levels;
    :func:`single_layer_layout`)."""
    tol = tolerance(dps)
    layout, n_phi, a_phi = single_layer_layout(spectrum, dps)
    mp, bits = dps is not None, _work_bits(dps)
    v, h, tau_coarse = _tau_grid(layout, mp, bits)
    c2, s2, w, wc, phi_coarse = _phi_grid(n_phi, mp, bits)
    return Grid(v, h, c2, s2, w, wc, tau_coarse, phi_coarse, mp, bits, tol, a_phi)


def looped_layout(spectrum: tuple[int, ...], L: int, dps: int | None = None) -> TauLayout:
    """The ``tau`` layout of the looped model's one-dimensional integrals: ``V_p = q_p =
    ((1 + rho lam_p)/(1 + rho lam_1))^{2L}`` lies in ``[R^{-2L}, 1]`` for every ``rho >= 0``
    (``R = lam_max / lam_min``), and ``V_p = theta_p^{2L}`` likewise, so the branch points
    ``-log(V_p) + i pi`` lie in ``[0, 2L log R] + i pi`` at every step."""
    R = max(spectrum) / min(spectrum)
    return tau_layout(-math.log(2.0), 2 * L * math.log(R) + math.log(2.0), len(spectrum) / 2, dps)


# float64's exp overflows above 709.78: the looped tau grid's nodes v = e^tau, and their squares
# (product_ratio_mean), must stay finite
FLOAT64_TAU_MAX = 350.0


def looped_tau_reach(spectrum: tuple[int, ...], L: int) -> float:
    """The largest ``tau`` of the looped model's grid (:func:`looped_layout`; arithmetic on the
    layout only, nothing allocated): about ``2 L log(lam_max / lam_min)`` plus the tail."""
    layout = looped_layout(spectrum, L, None)
    return layout.tau0 + KAPPA * math.sinh(layout.h * layout.n_hi)


def grid_nodes(spectrum: tuple[int, ...], dps: int | None, L: int | None = None) -> int:
    """Nodes of the grid a run builds (``n_tau`` times ``n_phi + 1``; looped: ``n_tau``), from
    the layouts alone (no allocation)."""
    if L is not None:
        return looped_layout(spectrum, L, dps).nodes
    layout, n_phi, _ = single_layer_layout(spectrum, dps)
    return layout.nodes * (n_phi + 1)


def _as(values, mp: bool):
    """Coefficients per level as float64 or exact MPFR (from int, Fraction, float or mpf)."""
    if not mp:
        return np.array([float(x) for x in values])
    from rdyn.reduced_dynamics.numerics import mpfr_arrays
    import gmpy2

    out = []
    for x in values:
        if isinstance(x, numbers.Rational) and not isinstance(x, int):   # Fraction, mpq
            out.append(gmpy2.mpfr(x.numerator) / x.denominator)
        else:
            out.append(mpfr_arrays.exact(x))
    return np.array(out, dtype=object)


def _log_phi(sigma, k):
    """float64 ``log prod_p sigma_p^{k_p/2}`` over the last axis."""
    with np.errstate(divide="ignore"):   # sigma = 0 (v V_p beyond float64): Phi = 0
        return 0.5 * (np.log(sigma) * k).sum(axis=-1)


def _phi_factor(sigma, k, mp: bool, log_phi=None):
    """``prod_p sigma_p^{k_p/2}`` over the last axis (float64: ``exp`` of :func:`_log_phi`,
    or of ``log_phi`` when given)."""
    if not mp:
        return np.exp(_log_phi(sigma, k) if log_phi is None else log_phi)
    from rdyn.reduced_dynamics.numerics import mpfr_arrays

    whole = np.ones(sigma.shape[:-1], dtype=object) * sigma.flat[0] ** 0
    half = None
    for p, kp in enumerate(k):
        kp = int(kp)
        if kp // 2:
            whole = whole * sigma[..., p] ** (kp // 2)
        if kp % 2:
            half = sigma[..., p] if half is None else half * sigma[..., p]
    return whole if half is None else whole * mpfr_arrays.sqrt(half)


def _sum(values, mp: bool):
    if not mp:
        return math.fsum(np.ravel(values))
    from rdyn.reduced_dynamics.numerics import mpfr_arrays

    return mpfr_arrays.fsum(values)


def _scales(A, B, mp: bool):
    """``alpha, beta`` centring ``alpha A_p / (beta B_p)`` (and ``alpha A``) on 1."""
    if not mp:
        alpha = 1 / math.sqrt(A.max() * A.min())
        ratio = alpha * A / B
        beta = math.sqrt(ratio.max() * ratio.min())
        return alpha, beta
    import gmpy2

    alpha = 1 / gmpy2.sqrt(max(A) * min(A))
    ratio = [alpha * x / y for x, y in zip(A, B)]
    return alpha, gmpy2.sqrt(max(ratio) * min(ratio))


def _scale_power(alpha, beta, a2: int, b2: int, mp: bool):
    """``alpha^{a2/2} beta^{b2/2}``."""
    if not mp:
        return math.sqrt(alpha ** a2 * beta ** b2)
    import gmpy2

    return gmpy2.sqrt(alpha ** a2 * beta ** b2)


LINEAR, GAP = "linear", "gap"


def single_layer_means(grid: Grid, k, lam, A, B, numerators) -> list:
    """``[(E[N (z^T A z)^{-1/2} (z^T B z)^{-b}], estimate) for N in numerators]`` on one pass
    over the nodes (shared ``sigma_p``, ``Phi``). A numerator is ``(LINEAR, C)`` (``z^T C z``,
    ``b = 1/2``) or ``(GAP,)`` (``(1/2) sum_ij z_i^2 z_j^2 (lam_i - lam_j)^2``, ``b = 3/2``);
    module doc. ``k, lam, A, B, C``: per level, ``A, B > 0``; int, Fraction, float or mpf.
    The ``tau`` nodes are taken in blocks of at most :data:`CHUNK_ELEMENTS` integrand
    elements (memory bounded whatever the grid); the block sums are summed exactly (float64:
    ``math.fsum``; MPFR: correctly rounded at the working precision)."""
    mp = grid.mp
    with _context(grid):
        kk = np.array([int(x) for x in k])
        lam_, A_, B_ = _as(lam, mp), _as(A, mp), _as(B, mp)
        alpha, beta = _scales(A_, B_, mp)
        Da, Db = 2 * alpha * A_, 2 * beta * B_
        D = Da[None, :] * grid.cos2[:, None] + Db[None, :] * grid.sin2[:, None]      # (phi, p)
        prefs, Cs = [], []
        for num in numerators:
            if num[0] == LINEAR:
                Cs.append(_as(num[1], mp))
                prefs.append(2 / _pi(mp) * _scale_power(alpha, beta, 1, 1, mp))
            else:
                Cs.append(None)
                prefs.append(4 / _pi(mp) * _scale_power(alpha, beta, 1, 3, mp))
        fine_parts = [[] for _ in numerators]
        coarse_parts = [[] for _ in numerators]
        block = max(1, CHUNK_ELEMENTS // (D.shape[0] * D.shape[1]))
        for start in range(0, len(grid.v), block):
            cut = slice(start, start + block)
            v = grid.v[cut]
            sigma = 1 / (1 + v[:, None, None] * D[None, :, :])                     # (tau, phi, p)
            Phi = _phi_factor(sigma, kk, mp) * (v * grid.tau_weights[cut])[:, None]   # v dtau Phi
            wts = sigma * kk
            coarse_rows = grid.tau_coarse[cut]
            for i, C in enumerate(Cs):
                if C is not None:
                    f = Phi * (wts * C).sum(axis=-1)
                else:
                    W = wts.sum(axis=-1)
                    mu = (wts * lam_).sum(axis=-1) / W
                    dev = lam_[None, None, :] - mu[:, :, None]
                    N = W * (wts * dev * dev).sum(axis=-1)
                    f = Phi * v[:, None] * grid.sin2[None, :] * N
                fine_parts[i].append(_sum(f * grid.phi_weights[None, :], mp))
                coarse_parts[i].append(_sum(f[coarse_rows] * grid.phi_coarse_weights[None, :], mp))
        out = []
        for pref, fp, cp in zip(prefs, fine_parts, coarse_parts):
            fine = _sum(fp, mp) * pref
            coarse = 2 * _sum(cp, mp) * pref
            out.append((_out(fine, mp), _out(abs(fine - coarse), mp)))
        return out


def _pi(mp: bool):
    if not mp:
        return math.pi
    import gmpy2

    return gmpy2.const_pi()


class _context:
    def __init__(self, grid: Grid):
        self.grid = grid
        self.ctx = None

    def __enter__(self):
        if self.grid.mp:
            from rdyn.reduced_dynamics.numerics import mpfr_arrays

            self.ctx = mpfr_arrays.precision(self.grid.bits)
            self.ctx.__enter__()
        return self

    def __exit__(self, *exc):
        if self.ctx is not None:
            return self.ctx.__exit__(*exc)
        return False


def _out(x, mp: bool):
    if not mp:
        return float(x)
    from rdyn.reduced_dynamics.numerics import mpfr_arrays

    return mpfr_arrays.to_mpf(x)


def looped_grid(spectrum: tuple[int, ...], L: int, dps: int | None = None) -> Grid:
    """The ``tau`` grid of the looped model (:func:`looped_layout`)."""
    tol = tolerance(dps)
    mp, bits = dps is not None, _work_bits(dps)
    v, w, tau_coarse = _tau_grid(looped_layout(spectrum, L, dps), mp, bits)
    return Grid(v, w, None, None, None, None, tau_coarse, None, mp, bits, tol, math.inf)


def ratio_mean(grid: Grid, k, V, W):
    """``(E[z^T W z / z^T V z], estimate, rounding)`` (``rounding``: :func:`_fine_coarse`), per level ``V > 0``, ``W``: ``(1/2) int dtau v Phi
    sum_p k_p W_p sigma_p``, ``sigma_p = 1/(1 + v V_p)`` (module doc)."""
    mp = grid.mp
    with _context(grid):
        kk = np.array([int(x) for x in k])
        sigma = 1 / (1 + grid.v[:, None] * _as(V, mp)[None, :])
        log_phi = None if mp else _log_phi(sigma, kk)
        f = (_phi_factor(sigma, kk, mp, log_phi) * (grid.v * grid.tau_weights)
             * (sigma * (kk * _as(W, mp))).sum(axis=-1))
        return _fine_coarse(grid, f, 1 / _two(mp), log_phi, kk)


def product_ratio_mean(grid: Grid, k, V, top, U):
    """``(E[z^T E z  z^T U z / (z^T V z)^2], estimate, rounding)`` with ``E`` the projector on the levels
    where ``top`` is true and ``U`` zero there: ``(1/4) int dtau v^2 Phi (sum_{p in E} k_p
    sigma_p) (sum_q k_q U_q sigma_q)``."""
    mp = grid.mp
    with _context(grid):
        kk = np.array([int(x) for x in k])
        sigma = 1 / (1 + grid.v[:, None] * _as(V, mp)[None, :])
        ke = np.array([int(x) if t else 0 for x, t in zip(k, top)])
        log_phi = None if mp else _log_phi(sigma, kk)
        f = (_phi_factor(sigma, kk, mp, log_phi) * (grid.v * grid.v * grid.tau_weights)
             * (sigma * ke).sum(axis=-1) * (sigma * (kk * _as(U, mp))).sum(axis=-1))
        return _fine_coarse(grid, f, 1 / _two(mp) ** 2, log_phi, kk)


def _two(mp: bool):
    if not mp:
        return 2.0
    import gmpy2

    return gmpy2.mpfr(2)


def _fine_coarse(grid: Grid, f, pref, log_phi, k):
    """``(fine, |fine - coarse|, rounding)`` of the looped model's one-dimensional integrals
    (``rounding``: :func:`looped_rounding_bound`; 0 at ``dps``)."""
    fine = _sum(f, grid.mp) * pref
    coarse = 2 * _sum(f[grid.tau_coarse], grid.mp) * pref
    rounding = 0.0 if grid.mp else looped_rounding_bound(grid, f, pref, log_phi, k)
    return _out(fine, grid.mp), _out(abs(fine - coarse), grid.mp), rounding


# float64 unit roundoff, and the counts of the rounding model of looped_rounding_bound
UNIT_ROUNDOFF = 2.0 ** -53
ROUNDING_OPS = 10       # the multiplications and divisions of one term outside Phi and the sums


def looped_rounding_bound(grid: Grid, f, pref, log_phi, k) -> float:
    """A bound on the float64 rounding in ``|fine - coarse|`` of a looped-model integral
    (``f``: its terms ``w_j g(tau_j)``, ``log_phi``: ``log Phi_j`` (:func:`_log_phi` of
    ``sigma_p = 1/(1 + v_j V_p)``), ``k``: multiplicities), so that an a-posteriori estimate at rounding level is not taken for
    a quadrature failure (docs/numerics.md, "Rounding-aware tolerance of the looped model").

    Both sums are exact (``math.fsum``), so the rounding is that of the terms. Per term the
    relative error is at most ``u (ROUNDING_OPS + 1.5 d + 2 r + (2 + r) |log Phi_j| + G |tau_j|)``
    (``u = 2^-53``, ``d = sum k_p``, ``r`` levels): ``sigma_p`` (three operations) enters
    ``log Phi = (1/2) sum_p k_p log sigma_p`` (``u`` per level plus ``u |log sigma_p|``, and the
    ``r``-term sum, whose terms share a sign: ``r u |log Phi|``), ``exp`` adds ``u``
    and the argument's absolute error, ``sum_p k_p W_p sigma_p`` has terms of one sign (``W, U``
    are of one sign on their levels: ``(4 + r) u``). The node ``tau_j = tau0 + KAPPA sinh(u_j)``
    is rounded by ``u |tau_j|``, which moves ``log g`` by ``u |tau_j| |d log g / d tau|`` with
    ``|d log g/d tau| <= G = 4 + d/2`` (``v^2``: 2, ``Phi``: ``d/2``, each level sum: 1). The
    coefficients ``V, U`` (powers ``2L``) carry larger relative errors, but those are the same
    at every node: a smooth change of the integrand that the fine and the coarse rules both
    integrate, not a difference between them. The bound is the fine sum's
    ``sum_j |f_j| rho_j`` plus the coarse sum's (doubled weights on even nodes) plus the final
    roundings ``2 u |fine|``, times ``|pref|``."""
    kk = np.asarray(k, dtype=float)
    d, r = float(kk.sum()), float(len(kk))
    with np.errstate(invalid="ignore", over="ignore"):   # log Phi = -inf: f = 0
        tau = np.abs(np.log(grid.v))
        rho = UNIT_ROUNDOFF * (ROUNDING_OPS + 1.5 * d + 2 * r + (2 + r) * np.abs(log_phi)
                               + (4 + d / 2) * tau)
        err = np.where(f != 0, np.abs(f) * rho, 0.0)
    fine = abs(math.fsum(f))
    return float(abs(pref) * (math.fsum(err) + 2 * math.fsum(err[grid.tau_coarse])
                              + 2 * UNIT_ROUNDOFF * fine))
