"""Model B statements of Appendices B.2 and C.3 that had no ledger entry (issue 19, item 5;
ids ``B.cover.*``). Every check builds explicit vectors ``a`` and matrices ``S = X X^T``
(Task 1: iid uniform unit columns of X in R^d, a uniform on the sphere; d = 16, n = 32 as in
Section 5) and evaluates the printed statement on them, independently of the spectral rules of
:mod:`rdyn.reduced_dynamics.model_b`.

* ``B.cover.quadratic_loss.<target>``: B.2.3's ``L(gamma) = L(gamma*) + kappa2 (gamma - gamma*)^2``
  with the model output ``a + gamma S a`` and target ``S a/||S a||`` (normalized) or ``S a``
  (unnormalized), the kappas and ``gamma*`` of B.2.1/B.2.2 measured on the same sample (the
  identity is algebraic, so it holds on any sample to rounding);
* ``B.cover.degenerate_kappa``: B.2.2, ``kappa2 = kappa1`` for X with orthonormal columns
  (n <= d), then ``gamma2* = 0``, ``F(gamma_0 = 0) = 0`` and gradient descent from
  ``gamma_0 = 0`` stays at 0; with the sphere data of Task 1, ``kappa2 > kappa1`` and gamma moves;
* ``B.cover.cos_phi``: C.3's ``cos(phi_t) = (a^T S a + gamma ||S a||^2)/(||a + gamma S a|| ||S a||) >= 0``
  for gamma >= 0, against the cosine of the explicit vectors;
* ``B.cover.cauchy_schwarz``: B.2.1's ``(E[||S a|| - a^T S a])^2/E[||S a||^2] <=
  E[(||S a|| - a^T S a)^2/||S a||^2]`` and the irreducible loss ``E[1 - (a^T S a)^2/||S a||^2] > 0``.
"""
from __future__ import annotations

import numpy as np

from rdyn.verification.report import Check

PAPER = "Model B (seed 003)"
D_DIM, N_TOKENS, SAMPLES = 16, 32, 20000


def task1_sample(d: int = D_DIM, n: int = N_TOKENS, samples: int = SAMPLES, seed: int = 19):
    """(a, Sa) for ``samples`` draws of Task 1 (one fixed seed)."""
    from rdyn.reduced_dynamics.model_b_sampling import sample_sphere_data

    rng = np.random.default_rng(seed)
    a_all, sa_all = [], []
    for X, a in sample_sphere_data(d, n, samples, rng):
        sa = np.einsum("mij,mkj,mk->mi", X, X, a)
        a_all.append(a)
        sa_all.append(sa)
    return np.concatenate(a_all), np.concatenate(sa_all)


def _kappas(a, sa):
    k1 = float(np.mean(np.einsum("mi,mi->m", a, sa)))
    k2 = float(np.mean(np.einsum("mi,mi->m", sa, sa)))
    k3 = float(np.mean(np.linalg.norm(sa, axis=1)))
    return k1, k2, k3


def quadratic_loss_checks() -> list[Check]:
    a, sa = task1_sample()
    k1, k2, k3 = _kappas(a, sa)
    norm = np.linalg.norm(sa, axis=1, keepdims=True)
    out = []
    for target, y, g_star in (("normalized", sa / norm, (k3 - k1) / k2), ("unnormalized", sa, 1 - k1 / k2)):
        loss = lambda g: float(np.mean(np.sum((a + g * sa - y) ** 2, axis=1)))  # noqa: E731
        gammas = np.linspace(-1.0, 2.0, 13)
        dev = max(abs(loss(g) - (loss(g_star) + k2 * (g - g_star) ** 2)) / loss(g) for g in gammas)
        out.append(Check(
            f"B.cover.quadratic_loss.{target}", f"{PAPER}, B.2.3 (loss landscape)",
            f"L(gamma) = L(gamma*) + kappa2 (gamma - gamma*)^2 ({target} target; explicit vectors, d={D_DIM}, "
            f"n={N_TOKENS}, {SAMPLES} samples, 13 gammas in [-1, 2]): max relative deviation {dev:.1e}",
            "pass" if dev < 1e-10 else "discrepancy", dev, None,
            {"measured": dev, "gamma_star": g_star, "kappa1": k1, "kappa2": k2, "kappa3": k3}))
    return out


def degenerate_kappa_check() -> Check:
    rng = np.random.default_rng(23)
    d, n, m = D_DIM, 8, 4000
    Q = np.linalg.qr(rng.standard_normal((m, d, n)))[0]  # orthonormal columns, n <= d
    a = rng.standard_normal((m, d))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    sa = np.einsum("mij,mkj,mk->mi", Q, Q, a)
    k1, k2, _ = _kappas(a, sa)
    g_star = 1 - k1 / k2
    gamma, eta = 0.0, 0.5
    for _ in range(200):  # GD on L2(gamma) = E||a + (gamma - 1) S a||^2 from gamma_0 = 0 (d/dgamma / d)
        grad = float(np.mean(2 * np.einsum("mi,mi->m", a + (gamma - 1) * sa, sa)))
        gamma -= eta * grad / d
    a1, sa1 = task1_sample(samples=4000)
    k1s, k2s, _ = _kappas(a1, sa1)
    gamma_s = 0.0
    for _ in range(200):
        grad = float(np.mean(2 * np.einsum("mi,mi->m", a1 + (gamma_s - 1) * sa1, sa1)))
        gamma_s -= eta * grad / d
    ok = abs(k2 - k1) / k1 < 1e-12 and abs(g_star) < 1e-12 and abs(gamma) < 1e-12 and k2s > k1s and gamma_s > 0.01
    return Check("B.cover.degenerate_kappa", f"{PAPER}, B.2.2 (kappa2 = kappa1)",
                 f"orthonormal columns (d={d}, n={n}): kappa2/kappa1 - 1 = {k2 / k1 - 1:.1e}, gamma2* = {g_star:.1e}, "
                 f"gamma after 200 GD steps from 0: {gamma:.1e}; sphere columns (n={N_TOKENS}): kappa2 - kappa1 = "
                 f"{k2s - k1s:.3g} > 0 and gamma -> {gamma_s:.3g}",
                 "pass" if ok else "discrepancy", None, None,
                 {"kappa1": k1, "kappa2": k2, "gamma_star": g_star, "gamma_after_200_steps": gamma,
                  "sphere_kappa1": k1s, "sphere_kappa2": k2s, "sphere_gamma_after_200_steps": gamma_s})


def cos_phi_check() -> Check:
    a, sa = task1_sample(samples=4000)
    worst, min_cos = 0.0, np.inf
    for g in (0.0, 0.1, 0.5, 1.0, 3.0, 10.0):
        y = a + g * sa
        direct = np.einsum("mi,mi->m", y, sa) / (np.linalg.norm(y, axis=1) * np.linalg.norm(sa, axis=1))
        printed = (np.einsum("mi,mi->m", a, sa) + g * np.einsum("mi,mi->m", sa, sa)) / (
            np.linalg.norm(y, axis=1) * np.linalg.norm(sa, axis=1))
        worst = max(worst, float(np.max(np.abs(direct - printed))))
        min_cos = min(min_cos, float(printed.min()))
    ok = worst < 1e-12 and min_cos >= 0
    return Check("B.cover.cos_phi", f"{PAPER}, C.3 Step 2 (cos phi_t)",
                 f"cos(phi_t) = (a^T S a + gamma ||Sa||^2)/(||a + gamma S a|| ||S a||) >= 0 for gamma in [0, 10] "
                 f"(4000 Task 1 samples): max |printed - direct| {worst:.1e}, min cos {min_cos:.3g}",
                 "pass" if ok else "discrepancy", worst, None, {"measured": worst, "min_cos_phi": min_cos})


def cauchy_schwarz_check() -> Check:
    a, sa = task1_sample()
    asa = np.einsum("mi,mi->m", a, sa)
    nrm = np.linalg.norm(sa, axis=1)
    lhs = float(np.mean(nrm - asa) ** 2 / np.mean(nrm**2))
    rhs = float(np.mean((nrm - asa) ** 2 / nrm**2))
    floor = float(np.mean(1 - asa**2 / nrm**2))
    ok = lhs <= rhs and floor > 0
    return Check("B.cover.cauchy_schwarz", f"{PAPER}, B.2.1 (Cauchy-Schwarz step)",
                 f"(E[||Sa|| - a^T S a])^2/E||Sa||^2 = {lhs:.4g} <= E[(||Sa|| - a^T S a)^2/||Sa||^2] = {rhs:.4g}; "
                 f"E[1 - (a^T S a)^2/||Sa||^2] = {floor:.4g} > 0 (d={D_DIM}, n={N_TOKENS}, {SAMPLES} samples)",
                 "pass" if ok else "discrepancy", None, None,
                 {"lhs": lhs, "rhs": rhs, "irreducible_lower_bound": floor})


def checks() -> tuple[Check, ...]:
    return tuple(quadratic_loss_checks()) + (degenerate_kappa_check(), cos_phi_check(), cauchy_schwarz_check())
