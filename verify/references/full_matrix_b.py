"""Full-matrix cross-check of Model B: NumPy GD on all eight d x d blocks of W and V.

The network is implemented on real matrices, independently of the collapsed algebra: for
each layer ``Z = E + V E E^T W E`` (every column), ``E <- LN(Z)`` (column-wise l2
normalisation) or ``E <- Z`` without LN, with hand-written back-propagation through all
columns and all layers. Loss on one large fixed sample of ``(X, a)``:
``||y - y_target||^2`` (single layers) or ``Dist^2(y_L, top eigenspace of S)`` (looped), with
``y`` the bottom half of the last column. Gradient descent on full ``W, V`` from
``W12 = alpha0 I, V21 = beta0 I``, other blocks zero. Reported:

* ``zero_blocks_max_abs``: the largest |entry| of the six blocks that must stay zero (exactly 0),
* ``off_identity``: ``||W12 - tr(W12)/d I||_F`` (and V21) at the end, with the expected size
  from sampling (``eta * sum_t sqrt(mean_i ||offId g_i||^2 / N)`` of the per-sample gradients),
* ``first_step_projection_rel_error``: at step 0 (structure exact) ``tr(grad_W12)/d`` against
  ``beta F`` and ``tr(grad_V21)/d`` against ``alpha F`` on the same sample (rounding level),
* ``max_rel_dev_same_sample``: largest relative difference between ``alpha = tr(W12)/d``,
  ``beta = tr(V21)/d`` read off the matrices and the collapsed recursion whose expectation is
  taken over the same sample (the difference is second order in the off-identity part),
* ``max_rel_dev_population``: the same against the population (exact or other-seed) recursion.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rdyn.reduced_dynamics.model_b import run as mb


@dataclass(frozen=True)
class FullSetup:
    model: str = "ln"
    target: str | None = None
    data: str = "sphere"
    d: int = 4
    n: int = 8
    spectrum: tuple[int, ...] | None = None
    L: int = 1
    eta: float = 0.1
    steps: int = 20
    alpha0: float = 0.0
    beta0: float = 1.0
    samples: int = 20000
    seed: int = 0


def haar_orthogonal(rng: np.random.Generator, N: int, d: int) -> np.ndarray:
    """N Haar-distributed d x d orthogonal matrices: QR of a Gaussian matrix, the signs of R's
    diagonal moved into Q (Mezzadri's correction; without it Q is not Haar)."""
    G = rng.standard_normal((N, d, d))
    Q, R = np.linalg.qr(G)
    return Q * np.sign(np.diagonal(R, axis1=1, axis2=2))[:, None, :]


def sample(setup: FullSetup):
    """(X, a) with X: (N, d, n) unit columns (sphere, or R U for a spectrum), a: (N, d)."""
    rng = np.random.default_rng(setup.seed)
    N, d = setup.samples, setup.d
    if setup.data == "spectrum":
        U = np.concatenate([np.tile(np.eye(d)[:, [i]], (1, m)) for i, m in enumerate(setup.spectrum)], axis=1)
        X = haar_orthogonal(rng, N, d) @ U
    else:
        X = rng.standard_normal((N, d, setup.n))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
    a = rng.standard_normal((N, d))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    return X, a


def embed(X, a):
    N, d, n = X.shape
    E = np.zeros((N, 2 * d, n + 1))
    E[:, :d, :n] = X
    E[:, d:, n] = a
    return E


def loss_and_grads(W, V, E0, setup: FullSetup, target, P_perp):
    """Mean loss and gradients (W, V) plus per-sample W12/V21 gradients."""
    d = setup.d
    normalize = setup.model != "noln"
    layers = setup.L if setup.model == "looped" else 1
    tape, E = [], E0
    for _ in range(layers):
        A = E @ E.transpose(0, 2, 1)
        WE = W @ E
        C = A @ WE
        Z = E + V @ C
        nz = np.linalg.norm(Z, axis=1, keepdims=True) if normalize else None
        out = Z / nz if normalize else Z
        tape.append((E, A, WE, C, out, nz))
        E = out
    y = E[:, d:, -1]
    if setup.model == "looped":
        r = np.einsum("mij,mj->mi", P_perp, y)
        loss_i = (r * r).sum(axis=1)
        g_y = 2 * r
    else:
        r = y - target
        loss_i = (r * r).sum(axis=1)
        g_y = 2 * r
    N = E.shape[0]
    g = np.zeros_like(E)
    g[:, d:, -1] = g_y / N
    gW_i = np.zeros((N, 2 * d, 2 * d))
    gV_i = np.zeros((N, 2 * d, 2 * d))
    for (Ein, A, WE, C, out, nz) in reversed(tape):
        gZ = (g - out * (out * g).sum(axis=1, keepdims=True)) / nz if normalize else g
        gV_i += gZ @ C.transpose(0, 2, 1)
        gC = V.T @ gZ
        gA = gC @ WE.transpose(0, 2, 1)
        gWE = A @ gC
        gW_i += gWE @ Ein.transpose(0, 2, 1)
        g = gZ + W.T @ gWE + (gA + gA.transpose(0, 2, 1)) @ Ein
    return loss_i.mean(), gW_i.sum(axis=0), gV_i.sum(axis=0), gW_i[:, :d, d:] * N, gV_i[:, d:, :d] * N


def _off_identity(M):
    d = M.shape[-1]
    return M - np.trace(M, axis1=-2, axis2=-1)[..., None, None] / d * np.eye(d)


def run(setup: FullSetup) -> dict:
    d = setup.d
    X, a = sample(setup)
    S = X @ X.transpose(0, 2, 1)
    lam, vec = np.linalg.eigh(S)
    Sa = np.einsum("mij,mj->mi", S, a)
    target = Sa / np.linalg.norm(Sa, axis=1, keepdims=True) if setup.target != "unnormalized" else Sa
    top = lam >= lam[:, -1:] * (1 - 1e-10)
    Vtop = vec * top[:, None, :]
    P_perp = np.eye(d) - Vtop @ Vtop.transpose(0, 2, 1)
    E0 = embed(X, a)
    W = np.zeros((2 * d, 2 * d))
    V = np.zeros((2 * d, 2 * d))
    W[:d, d:] = setup.alpha0 * np.eye(d)
    V[d:, :d] = setup.beta0 * np.eye(d)
    # same-sample collapsed rule: spectral measure of each sample (grouped by numerical ties)
    c = np.einsum("mij,mi->mj", vec, a)
    rule_same = mb.SpectralRule(lam[:, ::-1], (c * c)[:, ::-1], np.full(len(a), 1.0 / len(a)), "monte_carlo")
    if setup.model == "looped":   # put the whole top eigenspace mass in column 0
        m = (c * c)[:, ::-1]
        top_r = top[:, ::-1]
        masses = np.concatenate([(m * top_r).sum(axis=1, keepdims=True), np.where(top_r, 0, m)[:, 1:]], axis=1)
        rule_same = mb.SpectralRule(lam[:, ::-1], masses, rule_same.weights, "monte_carlo")
    cfg = mb.Config(model=setup.model, target=setup.target or ("normalized" if setup.model == "noln" else None),
                    data=setup.data, d=d, n=setup.n if setup.data == "sphere" else sum(setup.spectrum),
                    spectrum=setup.spectrum, L=setup.L, eta=setup.eta, steps=setup.steps,
                    alpha0=setup.alpha0, beta0=setup.beta0, samples=setup.samples, seed=setup.seed + 1,
                    expectation="monte_carlo")
    pop = mb.run(cfg)
    first_step = None
    zero_max, dev_same, dev_pop, expected_off = 0.0, 0.0, 0.0, 0.0
    al, be = setup.alpha0, setup.beta0
    blocks = [(slice(0, d), slice(0, d)), (slice(d, None), slice(0, d)), (slice(d, None), slice(d, None))]
    vblocks = [(slice(0, d), slice(0, d)), (slice(0, d), slice(d, None)), (slice(d, None), slice(d, None))]
    losses = []
    for t in range(setup.steps):
        loss, gW, gV, gW12_i, gV21_i = loss_and_grads(W, V, E0, setup, target, P_perp)
        losses.append(loss)
        expected_off += setup.eta * np.sqrt((np.linalg.norm(_off_identity(gW12_i), axis=(1, 2)) ** 2).mean()
                                            / setup.samples)
        # collapsed step on the same sample
        _, dl = mb.model_terms(setup.model, rule_same, al * be, cfg.target, setup.L)
        F = dl.mean() / d
        if t == 0:   # structure exact here: the projection identity holds to rounding
            proj = np.trace(gW[:d, d:]) / d, np.trace(gV[d:, :d]) / d
            want = be * F, al * F
            first_step = max(abs(p - w) / max(abs(w), 1e-300) for p, w in zip(proj, want) if w != 0)
        al, be = al - setup.eta * be * F, be - setup.eta * al * F
        W -= setup.eta * gW
        V -= setup.eta * gV
        zero_max = max(zero_max, max(np.abs(W[b]).max() for b in blocks),
                       max(np.abs(V[b]).max() for b in vblocks))
        a_read, b_read = np.trace(W[:d, d:]) / d, np.trace(V[d:, :d]) / d
        scale = max(abs(al), abs(be))
        dev_same = max(dev_same, abs(a_read - al) / scale, abs(b_read - be) / scale)
        dev_pop = max(dev_pop, abs(a_read - float(pop.alpha[t + 1])) / scale,
                      abs(b_read - float(pop.beta[t + 1])) / scale)
    off_W = float(np.linalg.norm(_off_identity(W[:d, d:])))
    off_V = float(np.linalg.norm(_off_identity(V[d:, :d])))
    return {"zero_blocks_max_abs": float(zero_max), "first_step_projection_rel_error": first_step,
            "off_identity_W12": off_W, "off_identity_V21": off_V,
            "expected_off_identity_W12": float(expected_off),
            "alpha_read": float(np.trace(W[:d, d:]) / d), "beta_read": float(np.trace(V[d:, :d]) / d),
            "alpha_collapsed_same_sample": float(al), "beta_collapsed_same_sample": float(be),
            "max_rel_dev_same_sample": float(dev_same), "max_rel_dev_population": float(dev_pop),
            "population_expectation": pop.expectation, "loss_first": float(losses[0]) if losses else None,
            "samples": setup.samples, "steps": setup.steps}
