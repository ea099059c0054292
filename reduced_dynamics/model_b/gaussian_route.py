"""Model B's exact Task 2 expectations for any number of distinct eigenvalues (Gaussian route).

Every quantity the iterator needs is an expectation of quadratic forms in ``z ~ N(0, I_d)``
(``a = z/|z|``, ``Lambda`` the spectrum, ``M = I + gamma Lambda``, ``P = z^T Lambda z``,
``Q0 = |z|^2``, ``Q1 = z^T Lambda^2 z``, ``Q2 = z^T M^2 z``, ``G = Q0 Q1 - P^2
= (1/2) sum_ij z_i^2 z_j^2 (lam_i - lam_j)^2``), evaluated by
:mod:`rdyn.reduced_dynamics.model_b.gaussian`:

* LN layer (Lemma C.1): ``cos = (m1 + gamma m2)/(r sqrt(m2)) = z^T Lambda M z Q1^{-1/2}
  Q2^{-1/2}``, ``E[loss] = 2 - 2 E[cos]``; ``L'(gamma) = -2 E[var / (sqrt(m2) r^3)]
  = -2 E[G Q1^{-1/2} Q2^{-3/2}]`` (``var = m2 - m1^2 = G/Q0^2``, ``r^2 = Q2/Q0``);
* constants: ``kappa3 = E sqrt(m2) = E[Q1 Q1^{-1/2} Q0^{-1/2}]``, ``kappa4 = E[m1/sqrt(m2)] =
  E[P Q1^{-1/2} Q0^{-1/2}]``, ``Upsilon_3 = E[var/m2^2] = E[G Q1^{-2}]``; ``kappa1, kappa2``
  exact rationals;
* looped model: ``Dist^2 = P/(A + P) = z^T W z / z^T V z`` with ``V = (1 on the top eigenspace,
  q_p = ((1 + rho lam_p)/(1 + rho lam_1))^{2L} elsewhere)``, ``W = V`` off the top and 0 on it;
  ``d Dist^2/d rho = E[z^T E z  z^T U z / (z^T V z)^2]``, ``U_p = 2L q_p^{(2L-1)/(2L)}
  (lam_p - lam_1)/(1 + rho lam_1)^2``; ``Upsilon_1`` the same form at ``rho = oo``
  (``V_p = theta_p^{2L}``, ``U_p = 2L theta_p^{2L-1} (lam_1 - lam_p)/lam_1^2``, ``theta_p = lam_p/lam_1``).

The identities ``Q1 Q2 - (z^T Lambda M z)^2 = G`` and ``r^2 m2 - (m1 + gamma m2)^2 = m2 - m1^2``
are derived in :mod:`rdyn.derivations.model_b`. Each expectation comes with the quadrature's
a-posteriori estimate; :meth:`GaussianRoute.check` refuses a value whose estimate exceeds the
tolerance (the iterator calls it at every step), and the largest relative estimate of a run is
kept in ``worst_estimate``.
"""
from __future__ import annotations

import math

from dataclasses import dataclass, field

import mpmath

from rdyn.reduced_dynamics.model_b import gaussian as gq
from rdyn.reduced_dynamics.model_b.exact import ExactUnavailable
from rdyn.reduced_dynamics.model_b.rule import distinct_levels


def dps_refusal(spectrum: tuple, dps: int | None) -> str | None:
    """Why the Gaussian route refuses ``dps`` (None if it runs): beyond
    :data:`gq.GAUSSIAN_DPS_MAX` digits the grid (about dps^2 nodes) and a node's cost (1 + (dps/300)^1.5,
    rdyn.run_time) make a step take minutes."""
    if dps is None or dps <= gq.GAUSSIAN_DPS_MAX:
        return None
    r = len(distinct_levels(spectrum))
    return (f"the Gaussian route ({r} distinct eigenvalues) runs at most --dps {gq.GAUSSIAN_DPS_MAX} "
            f"(its grid grows like dps^2: {gq.grid_nodes(spectrum, gq.GAUSSIAN_DPS_MAX)} nodes at "
            f"{gq.GAUSSIAN_DPS_MAX}), got --dps {dps}")


def spectrum_text(spectrum) -> str:
    """A spectrum in a one-line message: the tuple when short, else its size and range."""
    spectrum = tuple(spectrum)
    if len(spectrum) <= 8:
        return str(spectrum)
    return (f"of {len(spectrum)} entries, {len(set(spectrum))} distinct, from {min(spectrum)} "
            f"to {max(spectrum)}")


@dataclass
class GaussianRoute:
    """The exact Task 2 expectations of one run (``spectrum``, ``dps``; ``L`` for the looped
    model). Nodes are built once (:func:`gq.single_layer_grid` / :func:`gq.looped_grid`) and
    reused at every step. ``worst_estimate``: the largest relative a-posteriori estimate seen;
    ``worst_rounding``: the largest relative float64 rounding bound under which an estimate
    above the tolerance was accepted (None: every estimate met the tolerance)."""
    spectrum: tuple
    dps: int | None
    L: int | None = None
    kind: str = "exact"
    route: str = "gaussian"
    worst_estimate: float = 0.0
    worst_rounding: float | None = None   # the largest relative rounding bound that admitted an estimate above tol
    grid: gq.Grid = field(init=False)
    _grid_single: gq.Grid | None = field(init=False, default=None, repr=False)

    def __post_init__(self):
        refusal = dps_refusal(self.spectrum, self.dps)
        if refusal is not None:
            raise ExactUnavailable(refusal)
        self.grid = (gq.looped_grid(self.spectrum, self.L, self.dps) if self.L is not None
                     else gq.single_layer_grid(self.spectrum, self.dps))

    @property
    def mp(self) -> bool:
        return self.dps is not None

    @property
    def levels(self) -> list:
        return [v for v, _ in distinct_levels(self.spectrum)]

    @property
    def multiplicities(self) -> list:
        return [m for _, m in distinct_levels(self.spectrum)]

    @property
    def nodes(self) -> int:
        return self.grid.nodes

    @property
    def tolerance(self):
        """The relative tolerance: 1e-15 (float64), or ``10^-(dps+3)`` as an exact decimal
        power (mpf at ``dps + 10`` digits; the grid's float is its rounding)."""
        if not self.mp:
            return self.grid.tol
        with mpmath.workdps(self.dps + 10):
            return mpmath.mpf(10) ** -(self.dps + 3)

    def check(self, value, estimate, what: str, rounding: float = 0.0):
        """``value`` if ``estimate <= max(tol |value|, rounding)`` (recording the relative
        estimate), else :class:`gq.QuadratureError`. ``rounding``: a bound on the float64
        rounding in the estimate (the looped model: :func:`gq.looped_rounding_bound`; 0 at
        ``dps``), so that a difference of fine and coarse rules at rounding level is not taken
        for a quadrature failure; an estimate above both is refused."""
        rel = float(abs(estimate) / abs(value)) if value != 0 else float(abs(estimate))
        if not math.isfinite(float(value)) or not math.isfinite(rel):
            raise gq.QuadratureError(   # a numerical failure, never reported as divergence
                f"Gaussian-route quadrature for {what}: not a finite number "
                f"(spectrum {spectrum_text(self.spectrum)})")
        floor = float(rounding / abs(value)) if value != 0 else float(rounding)
        if rel > self.grid.tol and not (floor > 0 and rel <= floor):
            raise gq.QuadratureError(
                f"Gaussian-route quadrature for {what}: a-posteriori estimate {rel:.1e} exceeds the "
                f"tolerance {self.grid.tol:.0e}"
                + (f" and the float64 rounding bound {floor:.1e}" if floor > 0 else "")
                + f" (spectrum {spectrum_text(self.spectrum)})")
        self.worst_estimate = max(self.worst_estimate, rel)
        if rel > self.grid.tol:   # accepted at rounding level only
            self.worst_rounding = max(self.worst_rounding or 0.0, floor)
        return value

    def _num(self, x):
        return mpmath.mpf(x) if self.mp else float(x)

    # ---------------------------------------------------------------- single layers
    def ln_means(self, g):
        """``(E[loss], E[L'(gamma)])`` of the LN layer at ``gamma = g >= 0``."""
        lam, k = self.levels, self.multiplicities
        M = [1 + g * lv for lv in lam]
        (cos, e1), (gap, e2) = gq.single_layer_means(
            self.grid, k, lam, [lv * lv for lv in lam], [m * m for m in M],
            [(gq.LINEAR, [lv * m for lv, m in zip(lam, M)]), (gq.GAP,)])
        cos = self.check(cos, e1, f"E[cos] at gamma = {g}")
        gap = self.check(gap, e2, f"E[var/(sqrt(m2) r^3)] at gamma = {g}")
        return 2 - 2 * cos, -2 * gap

    def constants(self):
        """``(kappa3, kappa4, Upsilon_3)``."""
        lam, k = self.levels, self.multiplicities
        sq = [lv * lv for lv in lam]
        ones = [1] * len(lam)
        (k3, e3), (k4, e4) = gq.single_layer_means(self.grid_single, k, lam, sq, ones,
                                                   [(gq.LINEAR, sq), (gq.LINEAR, lam)])
        ((u3, e5),) = gq.single_layer_means(self.grid_single, k, lam, sq, sq, [(gq.GAP,)])
        return (self.check(k3, e3, "kappa3"), self.check(k4, e4, "kappa4"),
                self.check(u3, e5, "Upsilon_3"))

    @property
    def grid_single(self) -> gq.Grid:
        if self.L is None:
            return self.grid
        if self._grid_single is None:
            self._grid_single = gq.single_layer_grid(self.spectrum, self.dps)
        return self._grid_single

    # ---------------------------------------------------------------- looped model
    def looped_means(self, rho):
        """``(E[Dist^2], E[d Dist^2 / d rho])`` at ``rho >= 0``."""
        lam, k, L = self.levels, self.multiplicities, self.L
        den = 1 + rho * lam[0]
        z = [(1 + rho * lv) / den for lv in lam]
        V = [zp ** (2 * L) for zp in z]
        V[0] = self._num(1)
        W = [self._num(0)] + V[1:]
        U = [self._num(0)] + [2 * L * z[p] ** (2 * L - 1) * (lam[p] - lam[0]) / (den * den)
                              for p in range(1, len(lam))]
        top = [True] + [False] * (len(lam) - 1)
        D, e1, r1 = gq.ratio_mean(self.grid, k, V, W)
        dD, e2, r2 = gq.product_ratio_mean(self.grid, k, V, top, U)
        return (self.check(D, e1, f"Dist^2 at rho = {rho}", r1),
                self.check(dD, e2, f"Dist^2' at rho = {rho}", r2))

    def upsilon1(self):
        """``Upsilon_1 = lim -rho^2 G'(rho)`` (rdyn.derivations.model_b.growth_limits)."""
        lam, k, L = self.levels, self.multiplicities, self.L
        one = self._num(1)
        th = [one * lv / lam[0] for lv in lam]
        V = [t ** (2 * L) for t in th]
        U = [self._num(0)] + [2 * L * th[p] ** (2 * L - 1) * (lam[0] - lam[p]) / (one * lam[0] * lam[0])
                              for p in range(1, len(lam))]
        u, e, r = gq.product_ratio_mean(self.grid, k, V, [True] + [False] * (len(lam) - 1), U)
        return self.check(u, e, "Upsilon_1", r)
