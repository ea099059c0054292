"""Beyond the paper: is Model A's collapsed manifold attracting? Does the collapse need |G^i| = K?

Lemma D.2 of the teacher-model paper (seed 000) shows that population GD *from zero* stays on
``W_V = C1 V*``, ``P^T W_KQ P = C2 A_in - C3 A_out``. Two questions it leaves open:

1. Attraction. Start full population GD (:mod:`rdyn.verification.references.full_matrix`) from a small random
   off-structure point and follow the off-structure norms
   ``off_V = ||W_V - C1 V*||`` and ``off_KQ = ||B_c - c A_c||`` where ``B_c`` is
   ``B = P^T W_KQ P`` with each column's mean removed (adding a constant to a column of the
   logits does not change the softmax, so that part of ``W_KQ`` is a gauge direction with zero
   gradient; it is neither attracted nor repelled) and ``A_c`` the column-centred ``A_in``.
   Per phase (``[0, t1)``, ``[t1, T*)``, ``[T*, end]``, from the collapsed run's t1 and T*,
   docs/models_and_conventions.md, "Phase boundaries") the rate is the mean per-step log change
   ``(log off(end) - log off(start)) / (end - start)``: negative = attracting (nan once the
   norm has reached the float64 rounding floor, 1e-12 of its largest value).
2. Unequal group sizes. With ``|G^i|`` not all equal (``S*[j, i] = 1/|G^i|``), GD from zero
   leaves span{A_in, A_out}: :func:`unequal_groups_residual` reports the relative structure
   residual of ``W_KQ`` (``W_V`` stays parallel to ``V*``, which the study also reports).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rdyn.verification.references import full_matrix as fm


def centred_off_structure(model: fm.FullModel, W_V: np.ndarray, W_KQ: np.ndarray) -> tuple[float, float]:
    """(off_V, off_KQ): norms of the non-collapsed parts, W_KQ taken modulo column constants."""
    a_in, _ = fm.structure_matrices(model.groups)
    B = model.P.T @ W_KQ @ model.P
    Bc = B - B.mean(axis=0, keepdims=True)
    Ac = a_in - a_in.mean(axis=0, keepdims=True)
    off_kq = Bc - (np.sum(Bc * Ac) / np.sum(Ac * Ac)) * Ac
    c1 = np.sum(W_V * model.vstar) / np.sum(model.vstar**2)
    return float(np.linalg.norm(W_V - c1 * model.vstar)), float(np.linalg.norm(off_kq))


@dataclass(frozen=True)
class PhaseRate:
    phase: str
    start: int
    end: int
    rate_V: float  # mean d log(off_V)/dt over the phase
    rate_KQ: float  # mean d log(off_KQ)/dt over the phase


@dataclass(frozen=True)
class AttractionStudy:
    t1: int | None
    T_star: int | None
    steps: int
    off_V: np.ndarray  # per step 0..steps
    off_KQ: np.ndarray
    rates: tuple  # of PhaseRate


def attraction_study(groups, activation: str = "relu", vstar_norm2: float = 20.0,
                     eta: float | None = None, steps: int = 2000, epsilon: float = 1e-3,
                     M: int = 3, d: int = 4, kappa: float = 0.1, positional: str = "random",
                     seed: int = 0) -> AttractionStudy:
    """Population GD from W = epsilon * (random Gaussian, unit Frobenius norm per matrix)."""
    from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, run as run_collapsed

    D, K = len(groups), len(groups[0])
    config = TeacherConfig(D=D, K=K, activation=activation, kappa=kappa, eta=eta,
                           vstar_norm2=vstar_norm2)
    model = fm.make_model(groups, M=M, d=d, vstar_norm2=vstar_norm2, activation=activation,
                          kappa=kappa, positional=positional, seed=seed)
    rng = np.random.default_rng(seed + 1)
    W_V0, W_KQ0 = rng.standard_normal((M, d)), rng.standard_normal((D, D))
    init = (epsilon * W_V0 / np.linalg.norm(W_V0), epsilon * W_KQ0 / np.linalg.norm(W_KQ0))
    off = []
    fm.gradient_descent(model, config.step_size, steps, init=init, record=(),
                        callback=lambda t, W_V, W_KQ: off.append(centred_off_structure(model, W_V, W_KQ)))
    off_V, off_KQ = np.array(off).T
    collapsed = run_collapsed(config, steps=steps)
    bounds = [0, collapsed.t1 or steps, collapsed.T_star or steps, steps]
    bounds = [min(max(b, bounds[0]), steps) for b in bounds]
    rates = []
    for name, lo, hi in zip(("[0, t1)", "[t1, T*)", "[T*, end]"), bounds[:-1], bounds[1:]):
        if hi > lo:
            rates.append(PhaseRate(name, lo, hi, _log_rate(off_V, lo, hi), _log_rate(off_KQ, lo, hi)))
    return AttractionStudy(collapsed.t1, collapsed.T_star, steps, off_V, off_KQ, tuple(rates))


ROUNDING_FLOOR = 1e-12  # relative to the largest value of the series


def _log_rate(series: np.ndarray, lo: int, hi: int) -> float:
    """Mean log change per step over [lo, hi], stopped where the series reaches the rounding
    floor; nan if it is already there at ``lo``."""
    floor = ROUNDING_FLOOR * float(np.max(series))
    below = np.nonzero(series[lo:hi + 1] <= floor)[0]
    if below.size:
        hi = lo + int(below[0])
    if hi <= lo or series[lo] <= floor:
        return math.nan
    return float((math.log(series[hi]) - math.log(series[lo])) / (hi - lo))


@dataclass(frozen=True)
class UnequalGroups:
    residual_WV: float  # max over steps of ||W_V - C1 V*|| / ||W_V||
    residual_WKQ: float  # max over steps of the relative off-structure norm of W_KQ


def unequal_groups_residual(groups, activation: str = "relu", vstar_norm2: float = 20.0,
                            eta: float = 0.5, steps: int = 300, M: int = 3, d: int = 4,
                            positional: str = "identity", seed: int = 0) -> UnequalGroups:
    """Population GD from zero with the given (unequal) groups; largest structure residuals."""
    model = fm.make_model(groups, M=M, d=d, vstar_norm2=vstar_norm2, activation=activation,
                          positional=positional, seed=seed)
    traj = fm.gradient_descent(model, eta, steps)
    return UnequalGroups(max(p.residual_WV for p in traj.projections),
                         max(p.residual_WKQ for p in traj.projections))


def main() -> None:  # pragma: no cover - a report, run as python -m rdyn.verification.references.manifold
    from rdyn.reduced_dynamics.model_a.presets import preset_groups

    for task, D, K in (("gcn", 8, 3), ("sts", 8, 2), ("cnn", 8, 2)):
        for act in ("relu", "leaky", "identity"):
            s = attraction_study(preset_groups(task, D, K), act)
            text = "; ".join(f"{r.phase} V {r.rate_V:+.3e} KQ {r.rate_KQ:+.3e}" for r in s.rates)
            print(f"{task} D={D} K={K} {act}: t1={s.t1} T*={s.T_star} off_V {s.off_V[0]:.1e}->"
                  f"{s.off_V[-1]:.1e} off_KQ {s.off_KQ[0]:.1e}->{s.off_KQ[-1]:.1e} | {text}")
    groups = [[0, 1] if i % 2 == 0 else [0, 1, 2] for i in range(8)]
    u = unequal_groups_residual(groups)
    print(f"unequal groups (sizes 2 and 3), D=8: residual W_V {u.residual_WV:.2e}, "
          f"W_KQ {u.residual_WKQ:.2e}")


if __name__ == "__main__":
    main()
