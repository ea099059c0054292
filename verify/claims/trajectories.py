"""Recorded Model A trajectories for the claims ledger (``rdyn.verification.checks.claims_a``).

One trajectory = one collapsed run (float64, docs/models_and_conventions.md conventions, softmax scale 1/D) from zero
to ``T* (1 + multiple)``, recorded at every step of the first phase (``t <= 4 t1 + 50``) and on
a geometric grid (40 points per doubling) together with each grid point's successor, so that
one-step increments ``Delta p``, ``Delta(C2+C3)``, ``Delta C1*`` are available everywhere.

Two step-size policies:

* ``default``: ``eta = eta_limit / 2`` (the default of ``rdyn teacher``);
* ``paper``: the paper's own conditions, ``eta = min(K/D, K^3 (D-K) / (||V*||^2 D^3 (D+1)))``:
  ``1 - eta D/K >= 0`` (Lemma D.5's contraction factor) and
  ``eta ||V*||^2 D (D+1) / (K^3 (D-K)) <= 1/D^2`` (Lemma D.9's bound on ``Delta(C2+C3)``,
  with ``M = ||V*||_F^2`` for unit rows ``v_m``).

``1 - K p`` is computed from ``e = exp(-(C2+C3)/D)`` as ``(D-K) e / (K + (D-K) e)`` (no
cancellation as ``p -> 1/K``, docs/numerics.md).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np

POINTS_PER_DOUBLING = 40


def papers_step_size(D: int, K: int, vstar_norm2: float = 1.0) -> Fraction:
    """The papers' step-size condition, exactly: the largest eta with Lemma D.5's ``1 - eta D/K >= 0`` and Lemma
    D.9's ``eta M D (D+1)/(K^3 (D-K)) <= 1/D^2``, ``min(K/D, K^3 (D-K)/(M D^3 (D+1)))``, with ``M = ||V*||^2`` the
    decimal form of the float given (as ``rdyn prove`` reads it)."""
    return min(_papers_bounds(D, K, vstar_norm2).values())


def _papers_bounds(D: int, K: int, vstar_norm2: float) -> dict:
    """The largest eta of each lemma's step-size condition, exactly: Lemma D.5's ``K/D`` and Lemma D.9's
    ``K^3 (D-K)/(M D^3 (D+1))`` (``M`` the decimal form of ``vstar_norm2``)."""
    M = Fraction(repr(float(vstar_norm2)))
    return {"lemma_D5": Fraction(K, D), "lemma_D9": Fraction(K**3 * (D - K)) / (M * D**3 * (D + 1))}


def paper_conditions(eta: float, D: int, K: int, vstar_norm2: float = 1.0) -> dict:
    """Whether ``eta`` (the decimal form of the float, the exact eta ``rdyn prove`` iterates with) satisfies each
    lemma's step-size condition, compared exactly: ``{"lemma_D5": bool, "lemma_D9": bool}``."""
    exact = Fraction(repr(float(eta)))
    return {name: exact <= bound for name, bound in _papers_bounds(D, K, vstar_norm2).items()}


def paper_eta(D: int, K: int, vstar_norm2: float = 1.0) -> float:
    """:func:`papers_step_size` rounded to the nearest float (the float64 runs' step size; it may lie above the
    condition by an ulp: ``rdyn prove`` takes :func:`paper_eta_within`, its ranges :func:`paper_eta_cover`)."""
    return min(K / D, K**3 * (D - K) / (vstar_norm2 * D**3 * (D + 1)))


def paper_eta_within(D: int, K: int, vstar_norm2: float = 1.0) -> float:
    """The largest float whose decimal form (``repr``, the exact eta ``rdyn prove`` iterates with) satisfies the
    papers' condition :func:`papers_step_size`: ``rdyn prove``'s default eta, inside both lemmas' hypotheses."""
    bound = papers_step_size(D, K, vstar_norm2)
    eta = float(bound)
    while Fraction(repr(eta)) > bound:
        eta = math.nextafter(eta, 0.0)
    return eta


def paper_eta_cover(D: int, K: int, vstar_norm2: float = 1.0) -> float:
    """The smallest float at or above :func:`papers_step_size` (as a binary value, the endpoint of a range's ball):
    a range ``(0, paper_eta_cover]`` contains every step size the papers' condition allows."""
    bound = papers_step_size(D, K, vstar_norm2)
    eta = float(bound)
    return eta if Fraction(eta) >= bound else math.nextafter(eta, math.inf)


@dataclass(frozen=True)
class Trajectory:
    """Arrays over the recorded steps ``t`` (sorted); ``nxt[i]`` is the index of ``t[i] + 1``
    (or -1 when that step was not recorded)."""

    D: int
    K: int
    activation: str
    policy: str
    eta: float
    vstar_norm2: float
    t1: int
    T_star: int
    t: np.ndarray
    C1: np.ndarray
    C23: np.ndarray  # C2 + C3
    p: np.ndarray
    one_minus_Kp: np.ndarray
    C1_star: np.ndarray
    loss: np.ndarray  # excess loss L(t) - L_opt at step t
    nxt: np.ndarray
    logit_scale: str = "D"
    kappa: float = 0.1  # Leaky ReLU slope (used by the leaky activation only)

    @property
    def scale(self) -> float:
        """The softmax scale: D or sqrt(D)."""
        return float(self.D) if self.logit_scale == "D" else math.sqrt(self.D)

    @property
    def name(self) -> str:
        scale = "" if self.logit_scale == "D" else ", logits/sqrtD"
        slope = f", kappa={self.kappa:g}" if self.activation == "leaky" else ""
        return f"D={self.D}, K={self.K}, {self.activation}{slope}, eta={self.eta:.4g} ({self.policy}){scale}"

    def where(self, i: int) -> dict:
        return {"config": self.name, "t": int(self.t[i]), "p": float(self.p[i]),
                "t_over_Tstar": float(self.t[i] / self.T_star)}

    def pairs(self) -> np.ndarray:
        """Indices i with a recorded successor."""
        return np.nonzero(self.nxt >= 0)[0]


def _grid(end: int) -> list[int]:
    n = int(math.ceil(math.log2(max(end, 2)) * POINTS_PER_DOUBLING))
    pts = np.unique(np.round(np.exp(np.linspace(0.0, math.log(end - 1), n))).astype(np.int64))
    return [int(x) for x in pts]


@lru_cache(maxsize=None)
def trajectory(D: int, K: int, activation: str = "relu", policy: str = "default",
               multiple: int = 64, vstar_norm2: float = 1.0, logit_scale: str = "D",
               kappa: float = 0.1) -> Trajectory:
    """The recorded run (deterministic; cached per argument tuple)."""
    from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, run

    eta = None if policy == "default" else paper_eta(D, K, vstar_norm2)
    cfg = TeacherConfig(D=D, K=K, activation=activation, eta=eta, vstar_norm2=vstar_norm2,
                        logit_scale=logit_scale, kappa=kappa)
    first = run(cfg)
    if first.T_star is None or first.t1 is None:
        raise RuntimeError(f"no T* / t1 for {cfg}")
    end = first.T_star * (1 + multiple)
    early = range(0, min(end, 4 * first.t1 + 50))
    grid = _grid(end)
    steps = sorted(set(early) | set(grid) | {g + 1 for g in grid if g + 1 <= end} | {first.T_star, first.T_star + 1})
    r = run(cfg, steps=end, record=steps)
    t = np.array(steps, dtype=np.int64)
    rec = [r.record[s] for s in steps]
    C1 = np.array([float(x.C1) for x in rec])
    C23 = np.array([float(x.C2) + float(x.C3) for x in rec])
    e = np.exp(-C23 / (D if logit_scale == "D" else math.sqrt(D)))
    one_minus = (D - K) * e / (K + (D - K) * e)
    index = {s: i for i, s in enumerate(steps)}
    nxt = np.array([index.get(s + 1, -1) for s in steps], dtype=np.int64)
    return Trajectory(D, K, activation, policy, float(r.eta), vstar_norm2, int(first.t1),
                      int(first.T_star), t, C1, C23, np.array([float(x.p) for x in rec]), one_minus,
                      np.array([float(x.C1_star) for x in rec]), np.array([float(x.loss) for x in rec]),
                      nxt, logit_scale, kappa)
