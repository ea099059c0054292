"""Randomised quasi-Monte Carlo expectations for Model B, with honest error bars.

Where the expectation is not exact (Task 1 sphere data; Task 2 spectra beyond the exact range,
or the looped model with more than two distinct eigenvalues), each of ``R`` replicas draws an
independently scrambled Sobol point set (:class:`scipy.stats.qmc.Sobol`, Owen scrambling, seeds
spawned from ``seed`` by :class:`numpy.random.SeedSequence`) of ``2^m`` points, maps it to the
data by the inverse normal CDF (sphere: the ``d n`` Gaussian entries of ``X`` and the ``d`` of
``a``, normalised column-wise; spectrum: the ``d`` Gaussian coordinates of ``a`` in the eigenbasis
of ``S``, which is all that matters by rotation invariance), and runs a *full trajectory* of the
collapsed recursion with that fixed point set. The replicas are iid, each an unbiased-in-
expectation (RQMC) estimate, so the mean over replicas of any iterate carries the standard error
``std / sqrt(R)``. The randomisation makes this honest even though each trajectory is a
deterministic function of its point set; one fixed sample (``monte_carlo``) has no error bar on
alpha, beta, gamma at all.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy.special import ndtri
from scipy.stats import qmc

from rdyn.reduced_dynamics.model_b.config import Config
from rdyn.reduced_dynamics.model_b.constants import Constants
from rdyn.reduced_dynamics.model_b.iterate import Trajectory, iterate
from rdyn.reduced_dynamics.model_b.rule import SpectralRule, distinct_levels


def points_per_replica(samples: int, replicas: int) -> int:
    """Smallest power of two >= samples / replicas (Sobol nets are balanced at powers of 2)."""
    return 1 << max(1, math.ceil(math.log2(max(2, samples / replicas))))


def _gaussians(dim: int, m_log2: int, seed) -> np.ndarray:
    u = qmc.Sobol(d=dim, scramble=True, seed=np.random.default_rng(seed)).random_base2(m_log2)
    return ndtri(np.clip(u, 1e-300, 1 - 1e-16))


def _plain_gaussians(dim: int, npts: int, seed) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((npts, dim))


def replica_rule(data: str, d: int, n: int, spectrum, npts: int, seed, kind: str = "qmc") -> SpectralRule:
    """One replica's rule: ``npts`` scrambled-Sobol points (``kind="qmc"``) or iid Gaussian
    points (``kind="mc"``, the plain Monte Carlo baseline of the same construction)."""
    dim = d if data == "spectrum" else d * n + d
    if kind == "qmc":
        G = _gaussians(dim, int(round(math.log2(npts))), seed)
    else:
        G = _plain_gaussians(dim, npts, seed)
    if data == "spectrum":
        u = G / np.linalg.norm(G, axis=1, keepdims=True)
        lv = distinct_levels(spectrum)
        spec = np.array(spectrum)
        masses = np.stack([(u[:, spec == v] ** 2).sum(axis=1) for v, _ in lv], axis=1)
        levels = np.tile(np.array([float(v) for v, _ in lv]), (npts, 1))
    else:
        X = G[:, : d * n].reshape(npts, d, n)
        X = X / np.linalg.norm(X, axis=1, keepdims=True)
        a = G[:, d * n:]
        a = a / np.linalg.norm(a, axis=1, keepdims=True)
        S = np.einsum("mij,mkj->mik", X, X)
        lam, vec = np.linalg.eigh(S)
        c = np.einsum("mij,mi->mj", vec, a)
        levels, masses = lam[:, ::-1].copy(), (c * c)[:, ::-1].copy()
    return SpectralRule(levels, masses, np.full(npts, 1.0 / npts), "monte_carlo", False)


@dataclass
class ReplicaResult:
    """Mean over replicas (``trajectory``, a :class:`rdyn.reduced_dynamics.model_b.iterate.Trajectory` with
    ``expectation == "qmc"``) and per-step standard errors of alpha, beta, gamma, loss."""
    trajectory: Trajectory
    series_std_error: dict          # name -> np.ndarray over steps
    replicas: int
    points_per_replica: int


def _mean_se(rows):
    arr = np.array([[float(v) for v in row] for row in rows])
    R = arr.shape[0]
    return arr.mean(axis=0), arr.std(axis=0, ddof=1) / math.sqrt(R)


def run_replicas(cfg: Config, replicas: int = 16, kind: str = "qmc", progress=None) -> ReplicaResult:
    """R independent trajectories (``cfg.samples`` points in total, rounded up to R powers of
    two); mean and standard error of every iterate. ``kind="mc"``: iid points instead (baseline)."""
    if replicas < 2:
        raise ValueError("replicas must be at least 2")
    npts = points_per_replica(cfg.samples, replicas)
    seeds = np.random.SeedSequence(cfg.seed).spawn(replicas)
    trs = []
    for i, seed in enumerate(seeds):
        rule = replica_rule(cfg.data, cfg.d, cfg.n, cfg.spectrum, npts, seed, kind)
        trs.append(iterate(replace(cfg, dps=None), rule=rule))
        if progress:
            progress(i + 1)
    means, ses = {}, {}
    diverged = [t.diverged_at_step for t in trs if t.diverged_at_step is not None]
    length = min(len(t.loss) for t in trs)   # a diverged replica ends the common series
    with np.errstate(over="ignore", invalid="ignore"):
        for name in ("alpha", "beta", "gamma", "loss", "F"):
            means[name], ses[name] = _mean_se([getattr(t, name)[:length] for t in trs])
    c0 = trs[0].constants
    cm = {f: float(np.mean([float(getattr(t.constants, f)) for t in trs]))
          for f in ("kappa1", "kappa2", "kappa3", "kappa4", "upsilon3")}
    const = Constants(cm["kappa1"], cm["kappa2"], cm["kappa3"], cm["kappa4"], c0.kappa1_exact,
                         c0.kappa2_exact, cm["upsilon3"])
    gs = None if trs[0].gamma_star is None else float(np.mean([float(t.gamma_star) for t in trs]))
    u1 = None if trs[0].upsilon1 is None else float(np.mean([float(t.upsilon1) for t in trs]))
    final_se = {name: float(ses[name][-1]) for name in ("alpha", "beta", "gamma", "loss")}
    tr = Trajectory(list(means["alpha"]), list(means["beta"]), list(means["gamma"]),
                       list(means["loss"]), list(means["F"]), final_se, "qmc" if kind == "qmc" else "mc_replicas",
                       const, gs, u1, {"replicas": replicas, "points_per_replica": npts,
                                       "series_std_error": {k: ses[k] for k in ("alpha", "beta", "gamma", "loss")}})
    tr.diverged_at_step = min(diverged) if diverged else None
    return ReplicaResult(tr, {k: ses[k] for k in ("alpha", "beta", "gamma", "loss")}, replicas, npts)
