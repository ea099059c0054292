"""Sampled rules of Model B: one fixed Monte Carlo sample of the spectral measure (``seed``)."""
from __future__ import annotations

import numpy as np

from rdyn.reduced_dynamics.model_b.rule import SpectralRule, distinct_levels


SPHERE_CHUNK = 20000   # sphere samples drawn at once (sample_sphere_data)
SOBOL_MAX_DIMENSION = 21201  # scipy.stats.qmc.Sobol's direction numbers


def sphere_sample_bytes(d: int, n: int, points: int) -> float:
    """Bytes held at once while ``points`` sphere samples are drawn and reduced to their
    spectral rule: the d x n Gaussian matrix X and its normalised copy, S = X X^T and its
    eigenvectors (d x d each), in float64."""
    return 8.0 * points * (2.0 * d * n + 2.0 * d * d)


def sample_sphere_data(d: int, n: int, samples: int, rng: np.random.Generator):
    """``X`` with iid uniform unit columns and ``a`` uniform: yields (X, a) chunks."""
    chunk = max(1, min(samples, SPHERE_CHUNK))
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
