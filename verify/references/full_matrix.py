"""Model A's full student and teacher as real matrices: exact population GD and online SGD.

Reproduces the setting of Section 4.1 of the teacher-model paper (seed 000; docs/models_and_conventions.md, Model A)
without the collapse ansatz, so that the collapsed (C1, C2, C3) map can be checked against it:

* ``X`` in R^{d x D} with iid N(0,1) entries, teacher ``f*(X) = sigma(V* X S*)`` with
  ``S*[j, i] = 1{j in G^i} / |G^i|``, student ``TF(X) = sigma(W_V X S)``,
  ``S = softmax_col(P^T W_KQ P / scale)`` (``scale`` = D, or sqrt(D)), any orthogonal ``P``.
* ``population`` mode (exact, no sampling). For output row ``m`` and column ``i`` the pair
  ``(z*, z) = (v*_m^T X s*_i, w_m^T X s_i)`` is centred bivariate Gaussian with
  ``a = ||v*_m||^2 ||s*_i||^2``, ``b = ||w_m||^2 ||s_i||^2``, ``c = <v*_m, w_m> <s*_i, s_i>``
  (for iid N(0,1) ``X``: ``cov(a^T X b, c^T X d) = (a.c)(b.d)``). With
  ``F(a, b, c) = E[sigma(z*) sigma(z)]`` (``s_s`` of :mod:`rdyn.derivations.gaussian`) and
  ``m2 = E[sigma(g)^2]``, the excess loss is ``1/2 sum_{m,i} (m2 a + m2 b - 2 F)``. Its
  gradient follows by the chain rule through (b, c):
  ``dF/dc = E[sigma'(z*) sigma'(z)]`` (Price's theorem; ``ds_ds``) and, by positive
  homogeneity ``F(a, mu^2 b, mu c) = mu F``, ``2 b dF/db + c dF/dc = F``.
  The angle ``theta = atan2(sqrt(ab - c^2), c)`` is computed with ``ab - c^2`` written as a sum
  of two non-negative Lagrange-identity terms, so it is exact near ``theta = 0`` (the
  collapsed trajectory has ``w_m`` exactly parallel to ``v*_m``).
  Degenerate case ``w_m = 0`` (e.g. t = 0): the student pre-activation is identically 0, so
  ``sigma(0) = 0``, ``sigma'(0) = s0`` and ``E[sigma'(z*) sigma'(z)] = s0 E[sigma'(g)]``; the
  ``b`` term multiplies ``w_m = 0`` and the W_KQ gradient vanishes.
* Smooth activations (erf, tanh, gelu, softplus, sigmoid, a formula; ``activation`` names
  one of :data:`rdyn.derivations.activations.SMOOTH_ACTIVATIONS`, ``formula`` the ``expr``
  text): V* has rows of equal norm (the collapsed ansatz closes only then, docs/any_activation.md),
  the same bivariate laws (a, b, c) give the entry expectations
  ``F = E[(sigma(z*) - sigma(z))^2]``, ``dF/db``, ``dF/dc`` by Gauss-Hermite with Price's theorem
  (:func:`rdyn.verification.references.full_matrix_smooth.entry_expectations`; no homogeneity), and
  ``L = 1/2 sum F``, ``dL/db = dF/db / 2``, ``dL/dc = dF/dc / 2`` enter the same chain rule.
  ``sigma``, ``sigma'`` of the batches are the sympy-derived numpy functions.
* ``sgd`` mode: a fresh batch of ``N`` Gaussian inputs with labels ``f*(X) + noise_std E``
  each step (paper: N = 100), gradient of ``1/(2N) sum_n ||Y_n - TF(X_n)||_F^2`` by hand;
  the excess OOD loss uses a batch with iid Exp(1) input entries (Section 4.1:
  ``L_OOD - 1/(2N) sum_n ||Y_n - f*(X_n)||^2``).

Projections (docs/interface.md, "How a collapsed map relates to full-matrix GD"):
``C1 = <W_V, V*>/||V*||^2``, ``C2 = <P^T W_KQ P, A_in>/||A_in||^2``,
``C3 = -<P^T W_KQ P, A_out>/||A_out||^2`` with ``A_in[j, i] = 1{j in G^i}``, ``A_out = 1 - A_in``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Sequence

import numpy as np

NEGATIVE_SLOPE = {"identity": lambda kappa: 1.0, "relu": lambda kappa: 0.0,
                  "leaky": lambda kappa: kappa}


# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class FullModel:
    """Teacher and student architecture of Model A (docs/models_and_conventions.md). ``groups[i]`` is G^i (sizes may
    differ only for the beyond-the-paper study); ``P`` is the orthogonal positional matrix;
    ``activation`` identity, relu, leaky (``kappa``, ``sigma_prime_zero``) or a smooth one
    (``formula`` for ``expr``)."""

    vstar: np.ndarray  # V*, M x d
    groups: tuple  # tuple of tuples of key indices, one per query column
    P: np.ndarray  # D x D orthogonal
    activation: str = "relu"
    kappa: float = 0.1
    sigma_prime_zero: float = 1.0
    logit_scale: str = "D"
    formula: str | None = None

    def __post_init__(self):
        if self.activation not in NEGATIVE_SLOPE:
            _ = self.smooth   # a smooth activation (ValueError if it is none)
        elif self.formula is not None:
            raise ValueError("a formula goes with activation 'expr' only")
        if self.P.shape != (self.D, self.D):
            raise ValueError("P must be D x D")

    @property
    def D(self) -> int:
        return len(self.groups)

    @property
    def M(self) -> int:
        return self.vstar.shape[0]

    @property
    def d(self) -> int:
        return self.vstar.shape[1]

    @property
    def negative_slope(self) -> float:
        return float(NEGATIVE_SLOPE[self.activation](self.kappa))

    @property
    def smooth(self):
        """The :class:`~rdyn.derivations.activations.Activation` of a smooth sigma, else None."""
        if self.activation in NEGATIVE_SLOPE:
            return None
        from rdyn.derivations.activations import Activation

        return Activation(self.activation, self.formula)

    @property
    def scale(self) -> float:
        return float(self.D) if self.logit_scale == "D" else math.sqrt(self.D)


def make_model(groups: Sequence[Sequence[int]], M: int = 4, d: int = 8, vstar_norm2: float = 1.0,
               activation: str = "relu", kappa: float = 0.1, sigma_prime_zero: float = 1.0,
               logit_scale: str = "D", positional: str = "identity", seed: int = 0,
               formula: str | None = None) -> FullModel:
    """A model with Gaussian V* rescaled to ||V*||_F^2 = vstar_norm2 (a smooth activation:
    every row first scaled to the same norm, the convention of its collapsed map) and P = I or
    a Haar-random orthogonal matrix (QR of a Gaussian matrix with sign-corrected diagonal)."""
    rng = np.random.default_rng(seed)
    vstar = rng.standard_normal((M, d))
    if activation not in NEGATIVE_SLOPE:   # smooth: rows of equal norm
        vstar /= np.linalg.norm(vstar, axis=1, keepdims=True)
    vstar *= math.sqrt(vstar_norm2) / np.linalg.norm(vstar)
    D = len(groups)
    if positional == "identity":
        P = np.eye(D)
    elif positional == "random":
        q, r = np.linalg.qr(rng.standard_normal((D, D)))
        P = q * np.sign(np.diag(r))
    else:
        raise ValueError(f"unknown positional matrix {positional!r}")
    return FullModel(vstar, tuple(tuple(int(j) for j in g) for g in groups), P, activation,
                     kappa, sigma_prime_zero, logit_scale, formula)


def structure_matrices(groups) -> tuple[np.ndarray, np.ndarray]:
    """A_in[j, i] = 1{j in G^i} and A_out = 1 - A_in (P-basis; read-only arrays)."""
    return _structure_matrices(tuple(tuple(int(j) for j in g) for g in groups))


@lru_cache(maxsize=64)
def _structure_matrices(groups: tuple) -> tuple[np.ndarray, np.ndarray]:
    D = len(groups)
    a_in = np.zeros((D, D))
    for i, g in enumerate(groups):
        a_in[list(g), i] = 1.0
    a_out = 1.0 - a_in
    a_in.flags.writeable = False
    a_out.flags.writeable = False
    return a_in, a_out


def teacher_attention(groups) -> np.ndarray:
    """S*[j, i] = 1{j in G^i} / |G^i|."""
    a_in, _ = structure_matrices(groups)
    return a_in / a_in.sum(axis=0, keepdims=True)


def attention(model: FullModel, W_KQ: np.ndarray) -> np.ndarray:
    """S = softmax over keys (rows j) of each column of P^T W_KQ P / scale."""
    logits = model.P.T @ W_KQ @ model.P / model.scale
    logits = logits - logits.max(axis=0, keepdims=True)
    w = np.exp(logits)
    return w / w.sum(axis=0, keepdims=True)


def sigma(x: np.ndarray, negative_slope: float) -> np.ndarray:
    return np.where(x >= 0, x, negative_slope * x)


def sigma_prime(x: np.ndarray, negative_slope: float, at_zero: float) -> np.ndarray:
    """sigma'(x) with docs/models_and_conventions.md's convention sigma'(0) = at_zero (a parameter, default 1)."""
    return np.where(x > 0, 1.0, np.where(x < 0, negative_slope, at_zero))


def model_sigma(model: FullModel, x: np.ndarray) -> np.ndarray:
    """The model's sigma elementwise (piecewise linear, or the smooth activation's)."""
    act = model.smooth
    if act is None:
        return sigma(x, model.negative_slope)
    from rdyn.derivations.activations import numeric_functions

    return numeric_functions(act, "numpy")[0](x)


def model_sigma_prime(model: FullModel, x: np.ndarray) -> np.ndarray:
    """The model's sigma' elementwise (sigma'(0) = sigma_prime_zero for the piecewise-linear
    ones; a smooth activation's own derivative)."""
    act = model.smooth
    if act is None:
        return sigma_prime(x, model.negative_slope, model.sigma_prime_zero)
    from rdyn.derivations.activations import numeric_functions

    return numeric_functions(act, "numpy")[1](x)


def zero_state(model: FullModel) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros((model.M, model.d)), np.zeros((model.D, model.D))


# --------------------------------------------------------------------------------------------
# Exact population loss and gradient
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AngularForms:
    """F(a,b,c) = sqrt(a b) f(theta) and E[s'(z*) s'(z)] = g(theta), from rdyn.derivations.gaussian."""

    f: Callable
    g: Callable
    second_moment: float  # E[sigma(g)^2]
    mean_slope: float  # E[sigma'(g)]


@lru_cache(maxsize=None)
def angular_forms(activation: str, kappa: float) -> AngularForms:
    """Lambdify the ``s_s`` and ``ds_ds`` bivariate forms at sd1 = sd2 = 1 (homogeneity)."""
    import sympy as sp

    from rdyn.derivations import gaussian as gs

    subs = {gs.sd1: 1, gs.sd2: 1, gs.kappa: sp.Float(kappa, 30)}
    forms = []
    for name in ("s_s", "ds_ds"):
        expr = gs.bivariate_form(name, activation).subs(subs)
        fn = sp.lambdify(gs.theta, expr, "numpy")
        forms.append(lambda th, fn=fn: np.broadcast_to(np.asarray(fn(th), dtype=float), np.shape(th)))
    slope = NEGATIVE_SLOPE[activation](kappa)
    return AngularForms(forms[0], forms[1], (1 + slope**2) / 2, (1 + slope) / 2)


def _parallel_split(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row-wise (|x|^2, |y|^2, x.y, |x|^2 |y_perp|^2) for rows of x, y; the last is
    |x|^2|y|^2 - (x.y)^2 without cancellation."""
    xx = np.einsum("ij,ij->i", x, x)
    yy = np.einsum("ij,ij->i", y, y)
    xy = np.einsum("ij,ij->i", x, y)
    y_perp = y - (xy / xx)[:, None] * x
    return xx, yy, xy, xx * np.einsum("ij,ij->i", y_perp, y_perp)


@dataclass(frozen=True)
class PopulationResult:
    loss: float  # excess loss L - 1/2 E||E||^2
    grad_WV: np.ndarray
    grad_WKQ: np.ndarray


def population(model: FullModel, W_V: np.ndarray, W_KQ: np.ndarray,
               need_gradient: bool = True) -> PopulationResult:
    """Exact excess population loss and its gradient for arbitrary W_V, W_KQ (Section 2's
    population loss; see the module docstring for the derivation)."""
    S = attention(model, W_KQ)
    S_star = teacher_attention(model.groups)
    vv, ww, vw, row_perp = _parallel_split(model.vstar, W_V)  # over rows m
    tt, ss, ts, col_perp = _parallel_split(S_star.T, S.T)  # over columns i
    a = np.outer(vv, tt)
    b = np.outer(ww, ss)
    c = np.outer(vw, ts)
    if model.smooth is not None:   # entry expectations by quadrature (module docstring)
        from rdyn.verification.references.full_matrix_smooth import entry_expectations

        F, dF_db, dF_dc = entry_expectations(model.smooth, a, b, c)
        loss = 0.5 * float(np.sum(F))
        if not need_gradient:
            return PopulationResult(loss, None, None)
        return _population_gradient(model, W_V, S, S_star, ww, vw, ss, ts, 0.5 * dF_db,
                                    0.5 * dF_dc, loss)
    forms = angular_forms(model.activation, model.kappa)
    # ab - c^2 = (|v|^2|w|^2)(|s*|^2|s|^2) - (v.w)^2 (s*.s)^2 as non-negative terms
    det = np.outer(row_perp, tt * ss) + np.outer(vw**2, col_perp)
    live = np.broadcast_to((ww > 0)[:, None], a.shape)  # student row not identically zero
    theta = np.arctan2(np.sqrt(det), c)
    sd1, sd2 = np.sqrt(a), np.sqrt(b)
    f, g = forms.f(theta), forms.g(theta)
    cross = np.where(live, sd1 * sd2 * f, 0.0)  # E[s(z*) s(z)]
    m2 = forms.second_moment
    loss = 0.5 * float(np.sum(m2 * a + m2 * b - 2 * cross))
    if not need_gradient:
        return PopulationResult(loss, None, None)
    slope_corr = np.where(live, g, model.sigma_prime_zero * forms.mean_slope)
    dL_dc = -slope_corr
    with np.errstate(divide="ignore", invalid="ignore"):
        dL_db = np.where(live, m2 / 2 - sd1 * (f - np.cos(theta) * g) / (2 * np.where(live, sd2, 1)),
                         0.0)
    return _population_gradient(model, W_V, S, S_star, ww, vw, ss, ts, dL_db, dL_dc, loss)


def _population_gradient(model, W_V, S, S_star, ww, vw, ss, ts, dL_db, dL_dc, loss):
    """The chain rule from the per-entry dL/db, dL/dc (b = |w_m|^2 |s_i|^2,
    c = <v*_m, w_m> <s*_i, s_i>) to dL/dW_V and dL/dW_KQ."""
    grad_w = (2 * (dL_db @ ss))[:, None] * W_V + (dL_dc @ ts)[:, None] * model.vstar
    grad_s = (2 * (ww @ dL_db))[None, :] * S + (vw @ dL_dc)[None, :] * S_star  # columns i
    return PopulationResult(loss, grad_w, _logit_backprop(model, S, grad_s))


def _logit_backprop(model: FullModel, S: np.ndarray, grad_S: np.ndarray) -> np.ndarray:
    """dL/dW_KQ from dL/dS through the column softmax and A = P^T W_KQ P / scale."""
    grad_A = S * (grad_S - np.sum(S * grad_S, axis=0, keepdims=True))
    return model.P @ grad_A @ model.P.T / model.scale


# --------------------------------------------------------------------------------------------
# Sampled batches (Section 4.1 online SGD)
# --------------------------------------------------------------------------------------------

def teacher_output(model: FullModel, X: np.ndarray) -> np.ndarray:
    return model_sigma(model, model.vstar @ (X @ teacher_attention(model.groups)))


def sample_batch(model: FullModel, rng: np.random.Generator, size: int, noise_std: float,
                 inputs: str = "gaussian") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X, Y, f*(X)) with X entries iid N(0,1) (``gaussian``) or Exp(1) (``exponential``, the
    OOD batch) and Y = f*(X) + noise_std * E."""
    shape = (size, model.d, model.D)
    X = rng.standard_normal(shape) if inputs == "gaussian" else rng.exponential(1.0, shape)
    clean = teacher_output(model, X)
    return X, clean + noise_std * rng.standard_normal(clean.shape), clean


@dataclass(frozen=True)
class BatchResult:
    loss: float  # 1/(2N) sum ||Y - TF||^2
    excess: float  # 1/(2N) sum (||Y - TF||^2 - ||Y - f*||^2)
    grad_WV: np.ndarray
    grad_WKQ: np.ndarray


def batch(model: FullModel, W_V, W_KQ, X, Y, clean, need_gradient: bool = True) -> BatchResult:
    """Empirical loss 1/(2N) sum_n ||Y_n - TF(X_n)||_F^2 and its gradient (back-propagation)."""
    N = X.shape[0]
    S = attention(model, W_KQ)
    H = X @ S  # X S, shape (N, d, D)
    Z = W_V @ H  # (N, M, D)
    R = Y - model_sigma(model, Z)
    loss = 0.5 * float(np.sum(R * R)) / N
    excess = loss - 0.5 * float(np.sum((Y - clean) ** 2)) / N
    if not need_gradient:
        return BatchResult(loss, excess, None, None)
    dZ = -R * model_sigma_prime(model, Z) / N
    grad_w = np.tensordot(dZ, H, axes=([0, 2], [0, 2]))
    D = S.shape[0]
    grad_s = np.einsum("ak,ai->ki", X.reshape(-1, D), (W_V.T @ dZ).reshape(-1, D))  # sum X_n^T W_V^T dZ_n
    return BatchResult(loss, excess, grad_w, _logit_backprop(model, S, grad_s))


# --------------------------------------------------------------------------------------------
# Projection onto the collapsed structure
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Projection:
    C1: float
    C2: float
    C3: float
    residual_WV: float  # ||W_V - C1 V*|| / ||W_V|| (0 when W_V = 0)
    residual_WKQ: float  # ||B - C2 A_in + C3 A_out|| / ||B||, B = P^T W_KQ P (0 when B = 0)


def project(model: FullModel, W_V: np.ndarray, W_KQ: np.ndarray) -> Projection:
    """(C1, C2, C3) read off the full matrices and the relative off-structure norms."""
    a_in, a_out = structure_matrices(model.groups)
    B = model.P.T @ W_KQ @ model.P
    C1 = float(np.sum(W_V * model.vstar) / np.sum(model.vstar**2)) + 0.0
    C2 = float(np.sum(B * a_in) / np.sum(a_in))
    C3 = 0.0 - float(np.sum(B * a_out) / np.sum(a_out))
    nv, nb = np.linalg.norm(W_V), np.linalg.norm(B)
    rv = float(np.linalg.norm(W_V - C1 * model.vstar) / nv) if nv > 0 else 0.0
    rb = float(np.linalg.norm(B - C2 * a_in + C3 * a_out) / nb) if nb > 0 else 0.0
    return Projection(C1, C2, C3, rv, rb)


def cosine_similarity(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    return float(np.sum(a * b) / (na * nb)) if na > 0 and nb > 0 else 0.0


# --------------------------------------------------------------------------------------------
# Gradient descent driver
# --------------------------------------------------------------------------------------------

@dataclass
class Trajectory:
    """Per recorded step: projections, excess losses, cosine(W_V, V*); final matrices."""

    steps: list = field(default_factory=list)
    projections: list = field(default_factory=list)
    loss: list = field(default_factory=list)  # population excess (population mode) or batch excess
    ood_loss: list = field(default_factory=list)  # sgd mode only
    cosine: list = field(default_factory=list)
    W_V: np.ndarray | None = None
    W_KQ: np.ndarray | None = None
    diverged_at_step: int | None = None  # first step whose state left the float64-safe range


def gradient_descent(model: FullModel, eta: float, steps: int, mode: str = "population",
                     record: Sequence[int] | None = None, batch_size: int = 100,
                     noise_std: float = 1.0, seed: int = 0, init=None,
                     callback: Callable | None = None) -> Trajectory:
    """Simultaneous GD ``W <- W - eta grad`` for ``steps`` steps from ``init`` (default zero).

    ``mode = "population"`` uses :func:`population`; ``"sgd"`` draws a fresh Gaussian batch
    each step (and an Exp(1) OOD batch at recorded steps). ``record`` defaults to every step.
    A state that leaves the float64-safe range (:mod:`rdyn.reduced_dynamics.runs.divergence`) stops
    the run: ``diverged_at_step`` is that step, the trajectory ends at the step before.
    """
    from rdyn.reduced_dynamics.runs.divergence import is_diverged

    if mode not in ("population", "sgd"):
        raise ValueError(f"unknown mode {mode!r}")
    W_V, W_KQ = zero_state(model) if init is None else (init[0].copy(), init[1].copy())
    wanted = set(range(steps + 1)) if record is None else set(int(r) for r in record)
    rng = np.random.default_rng(seed + 7919)
    eval_rng = np.random.default_rng(seed + 104729)
    out = Trajectory()
    for t in range(steps + 1):
        if mode == "population":
            res = population(model, W_V, W_KQ, need_gradient=t < steps)
            loss = res.loss
        else:
            res = batch(model, W_V, W_KQ, *sample_batch(model, rng, batch_size, noise_std),
                        need_gradient=t < steps)
            loss = res.excess
        if t in wanted:
            out.steps.append(t)
            out.projections.append(project(model, W_V, W_KQ))
            out.loss.append(loss)
            out.cosine.append(cosine_similarity(W_V, model.vstar))
            if mode == "sgd":
                ood = batch(model, W_V, W_KQ, *sample_batch(model, eval_rng, batch_size, noise_std,
                                                             "exponential"), need_gradient=False)
                out.ood_loss.append(ood.excess)
        if callback is not None:
            callback(t, W_V, W_KQ)
        if t < steps:
            with np.errstate(over="ignore", invalid="ignore"):
                new_V, new_KQ = W_V - eta * res.grad_WV, W_KQ - eta * res.grad_WKQ
            if is_diverged((new_V, new_KQ)):
                out.diverged_at_step = t + 1
                break
            W_V, W_KQ = new_V, new_KQ
    out.W_V, out.W_KQ = W_V, W_KQ
    return out
