"""Brute-force Monte Carlo of Model A's full-matrix population gradient.

An independent route for the collapsed map: sample ``X`` with iid N(0,1) entries, run the
full student ``sigma(W_V X softmax_col(P^T W_KQ P / scale))`` and the teacher
``sigma(V* X S*)`` on real matrices, back-propagate by hand, and average. The noise ``E`` is
left out: it is independent and zero-mean, so it does not change the expected gradient.
Returns means with standard errors, so comparisons can be made in units of standard error.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def _act(x, kappa):
    return np.where(x >= 0, x, kappa * x)


def _slope(x, kappa):
    return np.where(x >= 0, 1.0, kappa)


def structure_matrices(groups: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """A_in[j, i] = 1{j in G^i}, A_out = 1 - A_in (in the P = I basis)."""
    D = len(groups)
    a_in = np.zeros((D, D))
    for i, g in enumerate(groups):
        a_in[g, i] = 1.0
    return a_in, 1.0 - a_in


@dataclass(frozen=True)
class GradientEstimate:
    """Projections of the expected gradient onto V*, A_in and -A_out (each divided by the
    squared norm of the direction), with their standard errors."""

    mean: np.ndarray  # [along V*, along A_in, along -A_out]
    std_error: np.ndarray
    samples: int


def projected_gradient(C1, C2, C3, vstar, groups, kappa, s0=1.0, scale="D", P=None,
                       samples=10**6, chunk=50_000, seed=0) -> GradientEstimate:
    """Monte Carlo estimate of <grad_{W_V} L, V*>/||V*||^2, <grad_{W_KQ} L, A_in>/||A_in||^2
    and <grad_{W_KQ} L, -A_out>/||A_out||^2 at W_V = C1 V*, W_KQ = P (C2 A_in - C3 A_out) P^T.

    ``kappa`` is the negative slope (1 identity, 0 ReLU). sigma'(0) = s0.
    """
    rng = np.random.default_rng(seed)
    M, d = vstar.shape
    D = len(groups)
    P = np.eye(D) if P is None else P
    a_in, a_out = structure_matrices(groups)
    s_star = a_in / a_in.sum(axis=0, keepdims=True)
    div = D if scale == "D" else np.sqrt(D)
    logits = (C2 * a_in - C3 * a_out) / div  # P^T W_KQ P / scale
    S = np.exp(logits - logits.max(axis=0, keepdims=True))
    S /= S.sum(axis=0, keepdims=True)
    W_V = C1 * vstar
    directions = [vstar, P @ a_in @ P.T, -(P @ a_out @ P.T)]
    norms = [np.sum(v * v) for v in directions]
    values = []
    for start in range(0, samples, chunk):
        n = min(chunk, samples - start)
        X = rng.standard_normal((n, d, D))
        XS = X @ S
        Z = W_V @ XS
        Zs = vstar @ X @ s_star
        slope = np.where(Z == 0, s0, _slope(Z, kappa))
        R = (_act(Zs, kappa) - _act(Z, kappa)) * slope  # -dL/dZ
        grad_WV = -np.einsum("nmi,ndi->nmd", R, XS)
        grad_S = -np.einsum("nmj,nmi->nji", W_V @ X, R)  # (W_V X)^T dL/dZ
        weighted = np.einsum("nji,ji->ni", grad_S, S)
        grad_A = S * (grad_S - weighted[:, None, :])
        grad_WKQ = P @ grad_A @ P.T / div
        values.append(np.stack([
            np.einsum("nmd,md->n", grad_WV, directions[0]) / norms[0],
            np.einsum("nji,ji->n", grad_WKQ, directions[1]) / norms[1],
            np.einsum("nji,ji->n", grad_WKQ, directions[2]) / norms[2],
        ], axis=1))
    values = np.concatenate(values)
    return GradientEstimate(values.mean(axis=0), values.std(axis=0, ddof=1) / np.sqrt(samples), samples)
