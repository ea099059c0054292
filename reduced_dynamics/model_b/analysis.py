"""Derived reports of Model B runs: fitted exponents, the contraction ratio (Theorem 4.6), the
fixed test point and Theorem 4.7's bounds."""
from __future__ import annotations

import math

import numpy as np

from rdyn.reduced_dynamics.model_b.config import Config


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
