"""Model B's experiments as the paper ran them (seed 003, Section 5 "Experimental Setup"): the
single-layer transformer with LN (4.5) or without LN (4.3), full 2d x 2d matrices W and V,
trained by minibatch SGD on a fixed training set and evaluated on an independent test set.

What is taken from the paper (Section 5): Task 1 (columns uniform on S^(d-1)) and Task 2
(X = R U, U with m_i copies of e_i, R Haar); a training set of 10000 points and a test set of
2000; SGD with learning rate eta = 0.1 and batch size 128; the initialisation of Theorem 4.1
(W12 = 0, V21 = I, every other block 0); d = 16, n = 32 for the figures of Section 5 and
Appendix G.2, d in {8, 16}, n in {16, 32, 64} for Figure 3.

Conventions (not stated in the extraction): one step is one batch; the batches of an epoch
are consecutive slices of a fresh permutation of the training set (the last one shorter,
as a data loader without ``drop_last``); the loss of a batch is the mean over its samples of
``||y - y_target||_2^2`` (B.2's ``E||.||^2``, the normalisation of rdyn's collapsed
recursion); "training loss" is that loss over the whole training set, evaluated at recorded
steps; Task 2's multiplicities are rdyn's figure convention (:data:`TASK2_SPECTRUM`); the
number of steps is chosen by the caller (the extraction states "an epoch number of 2000" and,
for Figures 1 and 5, "2000 training iterations": rdyn reads 2000 as steps).

The network: for one layer only the last column ``e = (0, a)`` of the output is read, and
``E E^T = blockdiag(S, a a^T)`` with ``S = X X^T``, so the output is
``z = e + V blockdiag(S, a a^T) W e``, ``y = (z/||z||)[d:]`` (LN; the whole column is
normalised, as in :mod:`rdyn.verification.references.full_matrix_b`) or ``y = z[d:]`` (no LN).
The hand-written gradient below is checked against the full back-propagation of
``full_matrix_b.loss_and_grads`` (tests/verify/references/test_sgd_b.py). Each data point is stored as
``(S, a)`` only (O(d^2) per point), so the paper's sizes run in seconds.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from rdyn.verification.references.full_matrix_b import haar_orthogonal

#: Task 2 multiplicities m_1..m_d at d = 16 (n = 32): rdyn's convention (the extraction does not print them)
TASK2_SPECTRUM = (5, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1)


@dataclass(frozen=True)
class SGDSetup:
    model: str = "ln"                 # "ln" (4.5) or "noln" (4.3)
    target: str = "normalized"        # "normalized" (S a/||S a||) or "unnormalized" (S a)
    data: str = "sphere"              # Task 1 "sphere" or Task 2 "spectrum"
    d: int = 16
    n: int = 32
    spectrum: tuple[int, ...] | None = None
    train: int = 10000
    test: int = 2000
    batch: int = 128
    eta: float = 0.1
    steps: int = 2000
    alpha0: float = 0.0
    beta0: float = 1.0
    seed: int = 0
    records: int = 14                 # recorded steps (log-spaced from 1, plus 0)


@dataclass(frozen=True)
class DataSet:
    S: np.ndarray        # (N, d, d)
    a: np.ndarray        # (N, d)
    target: np.ndarray   # (N, d)


@dataclass(frozen=True)
class SGDRun:
    setup: SGDSetup
    record_steps: tuple[int, ...]
    train_loss: tuple[float, ...]      # mean over the training set at each recorded step
    train_se: tuple[float, ...]        # standard error of that mean
    test_loss: tuple[float, ...]
    test_se: tuple[float, ...]
    gap_z: tuple[float, ...]           # (test - train)/sqrt(se_train^2 + se_test^2)
    alpha: np.ndarray                  # tr(W12)/d after each step (steps + 1 values)
    beta: np.ndarray                   # tr(V21)/d
    W: np.ndarray                      # final matrices
    V: np.ndarray
    inactive_max_abs: float            # largest |entry| outside W12, V21 over the whole run
    test_per_sample_final: np.ndarray  # per-sample test losses at the last step
    kappas_train: tuple[float, float, float]   # kappa1, kappa2, kappa3 of the training set (B.2)
    kappas_test: tuple[float, float, float]

    @property
    def gamma(self) -> np.ndarray:
        return self.alpha * self.beta


def make_data(setup: SGDSetup, size: int, rng: np.random.Generator) -> DataSet:
    """``size`` points of the task, stored as (S, a, y_target)."""
    S, a = _draw_inputs(setup, size, rng)
    return DataSet(S, a, _targets(setup.target, S, a))


def _targets(target: str, S: np.ndarray, a: np.ndarray) -> np.ndarray:
    sa = np.einsum("mij,mj->mi", S, a)
    return sa / np.linalg.norm(sa, axis=1, keepdims=True) if target == "normalized" else sa


@lru_cache(maxsize=4)
def _seeded_sets(data: str, d: int, n: int, spectrum, train: int, test: int, seed: int):
    """The training and test inputs of :func:`run` and the generator's state after drawing them: they
    depend on the task, the sizes and the seed, not on the model or the target, so the runs of one
    task share them (read-only arrays)."""
    setup = SGDSetup(data=data, d=d, n=n, spectrum=spectrum, train=train, test=test, seed=seed)
    rng = np.random.default_rng(seed)
    sets = [_draw_inputs(setup, size, rng) for size in (train, test)]
    for S, a in sets:
        S.flags.writeable = a.flags.writeable = False
    return sets, rng.bit_generator.state


def _draw_inputs(setup: SGDSetup, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    d = setup.d
    if setup.data == "spectrum":
        m = np.asarray(setup.spectrum, dtype=float)
        Q = haar_orthogonal(rng, size, d)
        S = np.einsum("mij,j,mkj->mik", Q, m, Q)
    else:
        S = np.empty((size, d, d))
        for lo in range(0, size, 2000):          # X in chunks: n may be 64
            X = rng.standard_normal((min(2000, size - lo), d, setup.n))
            X /= np.linalg.norm(X, axis=1, keepdims=True)
            S[lo:lo + len(X)] = X @ X.transpose(0, 2, 1)
    a = rng.standard_normal((size, d))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    return S, a


def kappas(data: DataSet) -> tuple[float, float, float]:
    """B.2's kappa1 = E[a^T S a], kappa2 = E||S a||^2, kappa3 = E||S a|| over the set."""
    sa = np.einsum("mij,mj->mi", data.S, data.a)
    return (float(np.mean(np.einsum("mi,mi->m", data.a, sa))), float(np.mean(np.einsum("mi,mi->m", sa, sa))),
            float(np.mean(np.linalg.norm(sa, axis=1))))


def _forward(W, V, S, a, d, normalize):
    B = len(a)
    e = np.zeros((B, 2 * d))
    e[:, d:] = a
    u = e @ W.T
    w = np.empty_like(u)
    w[:, :d] = np.einsum("mij,mj->mi", S, u[:, :d])
    w[:, d:] = a * np.einsum("mi,mi->m", a, u[:, d:])[:, None]
    z = e + w @ V.T
    if normalize:
        nz = np.linalg.norm(z, axis=1, keepdims=True)
        return e, w, z / nz, nz
    return e, w, z, None


def per_sample_loss(W, V, data: DataSet, d: int, normalize: bool) -> np.ndarray:
    """``||y - y_target||^2`` per point."""
    out = []
    for lo in range(0, len(data.a), 4096):
        _, _, o, _ = _forward(W, V, data.S[lo:lo + 4096], data.a[lo:lo + 4096], d, normalize)
        r = o[:, d:] - data.target[lo:lo + 4096]
        out.append(np.einsum("mi,mi->m", r, r))
    return np.concatenate(out)


def loss_and_grads(W, V, S, a, target, d: int, normalize: bool):
    """Mean loss over the batch and its gradients in W and V (the last-column back-propagation)."""
    e, w, o, nz = _forward(W, V, S, a, d, normalize)
    B = len(a)
    r = o[:, d:] - target
    g = np.zeros_like(o)
    g[:, d:] = 2 * r / B
    gz = (g - o * np.einsum("mi,mi->m", o, g)[:, None]) / nz if normalize else g
    gV = gz.T @ w
    gw = gz @ V
    gu = np.empty_like(gw)
    gu[:, :d] = np.einsum("mij,mj->mi", S, gw[:, :d])
    gu[:, d:] = a * np.einsum("mi,mi->m", a, gw[:, d:])[:, None]
    gW = gu.T @ e
    return float(np.einsum("mi,mi->", r, r) / B), gW, gV


def record_steps(steps: int, records: int) -> tuple[int, ...]:
    return tuple(sorted({0, steps} | set(np.unique(np.geomspace(1, max(steps, 1), records).astype(int)).tolist())))


def run(setup: SGDSetup) -> SGDRun:
    """SGD from Theorem 4.1's initialisation (see the module docstring); one seed for the
    training set, the test set and the batch order."""
    d = setup.d
    sets, state = _seeded_sets(setup.data, d, setup.n, setup.spectrum, setup.train, setup.test, setup.seed)
    train, test = (DataSet(S, a, _targets(setup.target, S, a)) for S, a in sets)
    rng = np.random.default_rng(setup.seed)
    rng.bit_generator.state = state
    normalize = setup.model == "ln"
    W = np.zeros((2 * d, 2 * d))
    V = np.zeros((2 * d, 2 * d))
    W[:d, d:] = setup.alpha0 * np.eye(d)
    V[d:, :d] = setup.beta0 * np.eye(d)
    active_W = np.zeros((2 * d, 2 * d), dtype=bool)
    active_W[:d, d:] = True
    active_V = np.zeros((2 * d, 2 * d), dtype=bool)
    active_V[d:, :d] = True
    rec = record_steps(setup.steps, setup.records)
    rec_set = set(rec)
    tr_l, tr_se, te_l, te_se, gap = [], [], [], [], []
    alpha, beta = np.empty(setup.steps + 1), np.empty(setup.steps + 1)
    inactive = 0.0
    order, pos = rng.permutation(setup.train), 0
    last = None
    for t in range(setup.steps + 1):
        alpha[t], beta[t] = np.trace(W[:d, d:]) / d, np.trace(V[d:, :d]) / d
        if t in rec_set:
            lt = per_sample_loss(W, V, train, d, normalize)
            le = per_sample_loss(W, V, test, d, normalize)
            s1, s2 = lt.std(ddof=1) / np.sqrt(lt.size), le.std(ddof=1) / np.sqrt(le.size)
            tr_l.append(float(lt.mean()))
            tr_se.append(float(s1))
            te_l.append(float(le.mean()))
            te_se.append(float(s2))
            gap.append(float((le.mean() - lt.mean()) / np.hypot(s1, s2)))
            last = le
        if t == setup.steps:
            break
        if pos >= setup.train:
            order, pos = rng.permutation(setup.train), 0
        idx = order[pos:pos + setup.batch]
        pos += setup.batch
        _, gW, gV = loss_and_grads(W, V, train.S[idx], train.a[idx], train.target[idx], d, normalize)
        W -= setup.eta * gW
        V -= setup.eta * gV
        inactive = max(inactive, float(np.abs(W[~active_W]).max()), float(np.abs(V[~active_V]).max()))
    return SGDRun(setup, rec, tuple(tr_l), tuple(tr_se), tuple(te_l), tuple(te_se), tuple(gap), alpha, beta,
                  W, V, inactive, last, kappas(train), kappas(test))


def gamma_star(target: str, k1: float, k2: float, k3: float) -> float:
    """B.2.1/B.2.2: the minimiser of the no-LN loss L(gamma) = E||a + gamma S a - y_target||^2."""
    return (k3 - k1) / k2 if target == "normalized" else 1 - k1 / k2


def gamma_star_se(target: str, data: DataSet) -> tuple[float, float]:
    """gamma* of the set's kappas and its standard error as an estimate of the population value
    (delta method on the per-point a^T S a, ||S a||^2, ||S a||)."""
    sa = np.einsum("mij,mj->mi", data.S, data.a)
    x1 = np.einsum("mi,mi->m", data.a, sa)
    x2 = np.einsum("mi,mi->m", sa, sa)
    x3 = np.sqrt(x2)
    k1, k2, k3 = x1.mean(), x2.mean(), x3.mean()
    g = gamma_star(target, k1, k2, k3)
    if target == "normalized":
        grad = np.array([-1 / k2, -(k3 - k1) / k2**2, 1 / k2])
    else:
        grad = np.array([-1 / k2, k1 / k2**2, 0.0])
    cov = np.cov(np.vstack([x1, x2, x3])) / len(x1)
    return float(g), float(np.sqrt(grad @ cov @ grad))
