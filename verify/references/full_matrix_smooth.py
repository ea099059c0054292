"""Model A's full student and teacher for a smooth activation: exact population GD on the
matrices (no collapse ansatz), for ``rdyn crosscheck --activation erf|tanh|gelu|...``.

For output row ``m`` and column ``i`` the pair ``(z*, z) = (v*_m^T X s*_i, w_m^T X s_i)`` is
centred bivariate Gaussian with ``a = ||v*_m||^2 ||s*_i||^2``, ``b = ||w_m||^2 ||s_i||^2``,
``c = <v*_m, w_m> <s*_i, s_i>``. The excess loss is ``1/2 sum_{m,i} F(a, b, c)`` with
``F = E[(sigma(z*) - sigma(z))^2]``, and the gradient follows by the chain rule through (b, c)
with Price's theorem (no homogeneity, no collapsed formula):
``dF/dc = -2 E[sigma'(z*) sigma'(z)]``,
``dF/db = E[sigma'(z)^2 + sigma(z) sigma''(z)] - E[sigma(z*) sigma''(z)]``.
Each expectation is a tensor Gauss-Hermite rule on the entry's own law
(``z* = sqrt(a) Z1``, ``z = (c/sqrt(a)) Z1 + sqrt(b - c^2/a) Z2``), vectorised over all M*D
entries.
"""
from __future__ import annotations

import math

import numpy as np

from rdyn.derivations.activations import Activation, numeric_functions
from rdyn.reduced_dynamics.model_a.gauss_hermite import float64_rule


def entry_expectations(activation: Activation, a, b, c, n: int = 96):
    """(F, dF/db, dF/dc) for arrays a, b, c of the same shape."""
    sigma, d1, d2 = numeric_functions(activation, "numpy")
    rule = float64_rule(n)
    z, w = rule.nodes, rule.weights
    W = np.outer(w, w)
    sa = np.sqrt(a)[..., None, None]
    slope = (c / np.sqrt(a))[..., None, None]
    resid = np.sqrt(np.maximum(b - c * c / a, 0.0))[..., None, None]
    zt = sa * z[:, None]
    zs = slope * z[:, None] + resid * z[None, :]
    st, ss = sigma(zt), sigma(zs)
    d1t, d1s, d2s = d1(zt), d1(zs), d2(zs)
    F = np.sum(W * (st - ss) ** 2, axis=(-2, -1))
    dFdc = -2 * np.sum(W * d1t * d1s, axis=(-2, -1))
    dFdb = np.sum(W * (d1s * d1s + ss * d2s - st * d2s), axis=(-2, -1))
    return F, dFdb, dFdc


# peak memory of entry_expectations in float64 arrays of M x D x n x n (measured with
# tracemalloc at M x D = 2000, n = 96: 6.03 for erf, tanh, gelu, softplus, 7.03 for sigmoid; a
# formula's temporaries may add some): the estimate counts this many
ENTRY_ARRAYS = 8


def memory_estimate(M: int, D: int, d: int, n: int = 96) -> float:
    """Bytes a smooth full-matrix crosscheck needs, roughly: the vectorised expectations over
    all M x D entries on the n x n tensor rule (:data:`ENTRY_ARRAYS` arrays of M D n^2 float64)
    and about 30 D x D and a few (M + d) x D work arrays. Python integers throughout (no
    overflow for any size)."""
    return 8.0 * (ENTRY_ARRAYS * M * D * n * n + 30 * D * D + 4 * (M + d) * D)


def population_gd_rows(vstar, groups, activation, eta, steps, logit_scale="D", P=None, n=96):
    """Population GD; per step t the pair (W_V, (C2, C3))."""
    return population_gd(vstar, groups, activation, eta, steps, logit_scale, P, n, keep_wv=True)[3]


def population_gd(vstar: np.ndarray, groups, activation: Activation, eta: float, steps: int,
                  logit_scale: str = "D", P: np.ndarray | None = None, n: int = 96,
                  keep_wv: bool = False):
    """Population GD from W_V = 0, W_KQ = 0; returns the list of (C1, C2, C3) read off the
    matrices (the projections of docs/interface.md) at steps 0..steps, the structure residuals and the losses
    (and, with ``keep_wv``, a fourth list: (W_V, (C2, C3)) per step)."""
    M, d = vstar.shape
    D = len(groups)
    P = np.eye(D) if P is None else P
    scale = D if logit_scale == "D" else math.sqrt(D)
    a_in = np.zeros((D, D))
    for i, g in enumerate(groups):
        a_in[list(g), i] = 1.0
    a_out = 1 - a_in
    s_star = a_in / a_in.sum(axis=0, keepdims=True)
    WV = np.zeros((M, d))
    WKQ = np.zeros((D, D))
    vnorm2 = np.sum(vstar * vstar)
    states, residuals, losses, kept = [], [], [], []
    for t in range(steps + 1):
        A = P.T @ WKQ @ P / scale
        S = np.exp(A - A.max(axis=0, keepdims=True))
        S /= S.sum(axis=0, keepdims=True)
        logits = P.T @ WKQ @ P
        C1 = np.sum(WV * vstar) / vnorm2
        C2 = np.sum(logits * a_in) / np.sum(a_in)
        C3 = -np.sum(logits * a_out) / np.sum(a_out)
        states.append((C1, C2, C3))
        if keep_wv:
            kept.append((WV.copy(), (C2, C3)))
        off_v = WV - C1 * vstar
        off_k = logits - C2 * a_in + C3 * a_out
        residuals.append(max(np.linalg.norm(off_v) / np.linalg.norm(WV) if np.any(WV) else 0.0,
                             np.linalg.norm(off_k) / np.linalg.norm(logits) if np.any(logits) else 0.0))
        # entry laws
        vv = np.sum(vstar * vstar, axis=1)[:, None]
        ww = np.sum(WV * WV, axis=1)[:, None]
        vw = np.sum(vstar * WV, axis=1)[:, None]
        ss_star = np.sum(s_star * s_star, axis=0)[None, :]
        ss = np.sum(S * S, axis=0)[None, :]
        sx = np.sum(s_star * S, axis=0)[None, :]
        a, b, c = vv * ss_star, ww * ss, vw * sx
        F, dFdb, dFdc = entry_expectations(activation, a, b, c, n)
        losses.append(0.5 * F.sum())
        if t == steps:
            break
        # dL/dW_V and dL/dS through b = ||w_m||^2 ||s_i||^2 and c = <v_m, w_m><s*_i, s_i>
        gb, gc = 0.5 * dFdb, 0.5 * dFdc
        grad_WV = 2 * (gb * ss).sum(axis=1)[:, None] * WV + (gc * sx).sum(axis=1)[:, None] * vstar
        grad_S = 2 * S * (gb * ww).sum(axis=0)[None, :] + s_star * (gc * vw).sum(axis=0)[None, :]
        # softmax Jacobian, column by column: dL/dA = S * (dL/dS - sum_k S_k dL/dS_k)
        grad_A = S * (grad_S - np.sum(S * grad_S, axis=0, keepdims=True))
        grad_WKQ = P @ grad_A @ P.T / scale
        WV = WV - eta * grad_WV
        WKQ = WKQ - eta * grad_WKQ
    return (states, residuals, losses, kept) if keep_wv else (states, residuals, losses)


def make_vstar(M: int, d: int, vstar_norm2: float, seed: int, row_norms=None) -> np.ndarray:
    """Gaussian V* with rows rescaled to the given relative norms (default: all equal), then
    to ||V*||_F^2 = vstar_norm2."""
    rng = np.random.default_rng(seed)
    vstar = rng.standard_normal((M, d))
    norms = np.ones(M) if row_norms is None else np.asarray(row_norms, dtype=float)
    vstar *= (norms / np.linalg.norm(vstar, axis=1))[:, None]
    return vstar * math.sqrt(vstar_norm2) / np.linalg.norm(vstar)


def crosscheck_smooth(config, groups, d: int, steps: int, seed: int = 0, positional: str = "identity",
                      row_norms=None):
    """Full-matrix population GD against the collapsed map of
    :mod:`rdyn.reduced_dynamics.model_a.smooth` (same D, K, M, eta). Returns a dict with
    ``max_rel_dev``, ``structure_residual``, ``row_norms_equal``, ``final_loss``, ``eta``."""
    from rdyn.reduced_dynamics.model_a.smooth import (Expectations, Numbers, choose_rule,
                                                      default_probes, eta_limit)

    vstar = make_vstar(config.M, d, config.vstar_norm2, seed, row_norms)
    D = config.D
    P = np.eye(D)
    if positional == "random":
        rng = np.random.default_rng(seed + 1)
        q, r = np.linalg.qr(rng.standard_normal((D, D)))
        P = q * np.sign(np.diag(r))
    eta = config.eta if config.eta is not None else eta_limit(config) / 2
    from rdyn.reduced_dynamics.runs.divergence import is_diverged

    with np.errstate(all="ignore"):   # an overflowing run is reported by the divergence rule
        full, residuals, full_losses = population_gd(vstar, groups, config.activation, eta, steps,
                                                     config.logit_scale, P)
        n, _ = choose_rule(config, None, default_probes(config, None, 1 / (2 * config.K)))
        ex = Expectations(config, Numbers(config.activation, None), float64_rule(n))
        C = (0.0, 0.0, 0.0)
        dev, losses, diverged = 0.0, [], None
        for t in range(steps + 1):
            if is_diverged((*full[t], *C)):   # divergence.py: compare up to the step before
                diverged = t
                break
            nxt = ex.step(*C, eta)
            losses.append(float(nxt[3][3]))
            for x_full, x_coll in zip(full[t], C):
                if x_coll != 0:
                    dev = max(dev, abs(x_full - x_coll) / abs(x_coll))
            C = nxt[:3]
    norms = np.linalg.norm(vstar, axis=1)
    equal = bool(np.max(norms) - np.min(norms) <= 1e-12 * np.max(norms))
    last = steps if diverged is None else diverged - 1   # diverged >= 1: step 0 is the zero state
    out = {"max_rel_dev": None if diverged is not None else dev,
           "structure_residual": None if diverged is not None else max(residuals),
           "row_norms_equal": equal, "diverged_at_step": diverged, "steps": last,
           "final_loss": {"full": float(full_losses[last]), "collapsed": losses[-1]}, "eta": eta,
           "nodes": n}
    if diverged is not None:
        return out
    if not equal:   # the generalisation: one C1 per class of equal row norms
        out["class_map"] = _class_map_deviation(config, vstar, groups, eta, steps, P, n)
    return out


def _class_map_deviation(config, vstar, groups, eta, steps, P, n) -> dict:
    """Full-matrix GD read off per class (C1_c = <W_V, V*_c>/||V*_c||^2, C2, C3) against
    :class:`rdyn.reduced_dynamics.model_a.smooth.ClassMap`: the largest relative deviation."""
    from rdyn.reduced_dynamics.model_a.smooth import ClassMap

    norms2 = np.sum(vstar * vstar, axis=1)
    cmap = ClassMap(config, norms2.tolist(), n)
    labels = np.zeros(len(norms2), dtype=int)
    for i, v in enumerate(norms2):
        labels[i] = next(k for k, (c, _) in enumerate(cmap.classes) if abs(v - c) <= 1e-12 * max(v, c))
    full = population_gd_rows(vstar, groups, config.activation, eta, steps, config.logit_scale, P, n)
    C1s, C2, C3 = [0.0] * len(cmap.classes), 0.0, 0.0
    dev = 0.0
    for t in range(steps + 1):
        WV, logits_state = full[t]
        for k in range(len(cmap.classes)):
            rows = labels == k
            read = np.sum(WV[rows] * vstar[rows]) / np.sum(vstar[rows] ** 2)
            if C1s[k] != 0:
                dev = max(dev, abs(read - C1s[k]) / abs(C1s[k]))
        for x_full, x_coll in zip(logits_state, (C2, C3)):
            if x_coll != 0:
                dev = max(dev, abs(x_full - x_coll) / abs(x_coll))
        C1s, C2, C3 = cmap.step(C1s, C2, C3, eta)
    return {"classes": len(cmap.classes), "max_rel_dev": dev}
