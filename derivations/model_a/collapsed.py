"""Model A: the collapsed (C1, C2, C3) dynamics of the teacher-model paper, derived.

Reproduces Lemma D.2 (with Lemmas D.4, D.8) of Zhang, Zhao, Gu, Cao (seed 000) under the
conventions of docs/models_and_conventions.md: ``X`` has iid N(0,1) entries, ``P = I`` (any orthogonal ``P`` gives the
same collapsed map), ``S = softmax_col(P^T W_KQ P / scale)`` with ``scale = D`` (seed) or
``sqrt(D)`` (conference version), loss ``1/2 E||Y - TF(X)||_F^2`` summed over all M*D entries,
``sigma'(0) = s0`` (default 1), full-batch GD from ``W_V = 0, W_KQ = 0``.

Derivation, step by step (each step is a sympy computation below):

1. Ansatz ``W_V = C1 V*``, ``W_KQ = C2 A_in - C3 A_out``. Column ``i`` of ``S`` puts weight
   ``p = 1/(K + (D-K) e)`` on each of its ``K`` in-group keys and ``q = e p`` on the others,
   where ``e = exp(-(C2 + C3)/scale)`` (:func:`attention_weights`).
2. For a row ``v_m`` of ``V*`` the teacher and student pre-activations of column ``i`` are
   ``||v_m|| Y1`` and ``C1 ||v_m|| Y2`` with ``Y1 = u/K``, ``Y2 = p u + q w``, ``u`` (the sum
   of the in-group projections ``<v_m, x_j>/||v_m||``) ~ N(0, K), ``w`` (out-group) ~ N(0, D-K).
   Their covariance is reduced to ``(sd1, sd2, theta)`` (:func:`pre_activation_geometry`);
   ``tan(theta) = e sqrt((D-K)/K)`` exactly, so no ``arccos`` near 1 and no ``1 - K p``.
3. Positive homogeneity of ``sigma`` pulls ``||v_m||`` out of every term, so the dynamics
   depend on ``V*`` only through ``||V*||_F^2 = vstar_norm2`` (:func:`residual_factor`).
4. ``<grad_{W_V} L, V*> = -D ||V*||_F^2 E[h Y2]`` with ``h = (sigma(Y1) - sigma(C1 Y2))
   sigma'(C1 Y2)`` (the per-column residual times slope).
5. ``dL/dS_{j,i} = -C1 ||V*||^2 E[h x_j']``; exchangeability gives ``E[h x_j'] = E[h Y1]``
   in-group and ``(E[h Y2] - p K E[h Y1])/q / (D-K)`` out-group; the softmax Jacobian
   then gives the logit gradient in closed form (:func:`logit_gradients`).
6. Projection onto the structure (docs/interface.md, "How a collapsed map relates to full-matrix GD")
   gives the update; ``E[h Y1]``, ``E[h Y2]`` come from :mod:`rdyn.derivations.gaussian`.

The branch ``C1 > 0`` is the one the paper analyses; ``C1 = 0`` (the first step, where
``sigma'(0)`` enters) and ``C1 < 0`` (reachable only for step sizes beyond stability) are
derived the same way.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from rdyn.derivations.reproducible import seeded

from rdyn.derivations import gaussian as g
from rdyn.derivations.gaussian import Y1, Y2, dsigma, sigma

# State, parameters and auxiliary quantities.
C1, C2, C3 = sp.symbols("C1 C2 C3", real=True)
D, K = sp.symbols("D K", positive=True, integer=True)
# Internally D = K + N with N = D - K > 0 out-group keys, so sympy can simplify square roots;
# every public expression is returned in D and K (N -> D - K).
N = sp.Symbol("N", positive=True, integer=True)
eta = sp.Symbol("eta", positive=True)
vstar_norm2 = sp.Symbol("vstar_norm2", positive=True)  # ||V*||_F^2
s0 = sp.Symbol("s0", nonnegative=True)  # sigma'(0)
kappa = g.kappa
out_group_ratio = sp.Symbol("e", positive=True)  # e = exp(-(C2+C3)/scale) = q/p
magnitude = sp.Symbol("c", positive=True)  # |C1| on the negative branch

BRANCHES = ("positive", "zero", "negative")
LOGIT_SCALES = {"D": D, "sqrtD": sp.sqrt(D)}


def logit_scale(name: str) -> sp.Expr:
    """The divisor of ``P^T W_KQ P`` inside the softmax: ``D`` (seed) or ``sqrt(D)``."""
    return LOGIT_SCALES[name]


def to_public(expr: sp.Expr) -> sp.Expr:
    """Internal form (in K and N = D - K) -> public form in D and K."""
    return expr.subs(N, D - K)


def to_internal(expr: sp.Expr) -> sp.Expr:
    """Public form in D and K -> internal form in K and N = D - K (for simplification)."""
    return expr.subs(D, K + N)


def attention_weights() -> tuple[sp.Expr, sp.Expr]:
    """(p, q): softmax weight of an in-group and of an out-group key (Lemma D.2's p(t)).

    Derived from the softmax of logits ``C2/scale`` (K keys) and ``-C3/scale`` (D-K keys),
    written with ``e = exp(-(C2+C3)/scale)``.
    """
    in_logit, out_logit = sp.symbols("in_logit out_logit", real=True)
    normaliser = K * sp.exp(in_logit) + N * sp.exp(out_logit)
    p = sp.exp(in_logit) / normaliser
    q = sp.exp(out_logit) / normaliser
    # divide through by exp(in_logit): e = exp(out_logit - in_logit)
    to_e = {out_logit: in_logit + sp.log(out_group_ratio)}
    return sp.simplify(p.subs(to_e)), sp.simplify(q.subs(to_e))


@dataclass(frozen=True)
class PreActivationGeometry:
    """Standard deviations and angle of (Y1, Y2) = (teacher, student/C1) pre-activations."""

    sd_teacher: sp.Expr
    sd_student: sp.Expr
    angle: sp.Expr  # theta, with cos(theta) = corr(Y1, Y2)
    covariance: sp.Matrix  # the covariance computed from the token weights

    def substitutions(self) -> dict:
        return {g.sd1: self.sd_teacher, g.sd2: self.sd_student, g.theta: self.angle}


@lru_cache(maxsize=None)
@seeded
def pre_activation_geometry() -> PreActivationGeometry:
    """Covariance of Y1 = u/K and Y2 = p u + q w, u ~ N(0,K), w ~ N(0,D-K), and its
    (sd1, sd2, theta) form; theta = atan2(sqrt(det), cov) simplifies to atan(e sqrt((D-K)/K))."""
    p, q = attention_weights()
    teacher_in, teacher_out = 1 / K, sp.Integer(0)  # S* weights of in/out-group keys
    cov = sp.Matrix([
        [K * teacher_in**2 + N * teacher_out**2, K * teacher_in * p + N * teacher_out * q],
        [K * teacher_in * p + N * teacher_out * q, K * p**2 + N * q**2],
    ]).applyfunc(sp.factor)
    sd_teacher = sp.sqrt(cov[0, 0])
    sd_student = sp.factor(sp.sqrt(cov[1, 1]))
    det = sp.factor(cov.det())
    tan_angle = sp.simplify(sp.sqrt(det) / cov[0, 1])
    return PreActivationGeometry(sd_teacher, sd_student, sp.atan(tan_angle), cov)


def residual_factor(branch: str) -> sp.Expr:
    """h = (sigma(Y1) - sigma(C1 Y2)) sigma'(C1 Y2) on a branch of the sign of C1.

    On ``zero`` the student pre-activation is identically 0, so ``sigma(0) = 0`` and
    ``sigma'(0) = s0`` (the convention of docs/models_and_conventions.md, exposed as ``--sigma-prime-zero``).
    On ``negative`` C1 = -c with c > 0.
    """
    if branch == "positive":
        student = C1 * Y2
    elif branch == "negative":
        student = -magnitude * Y2
    elif branch == "zero":
        return sigma(Y1) * s0
    else:
        raise ValueError(f"unknown branch {branch!r}")
    return (sigma(Y1) - sigma(student)) * dsigma(student)


def _branch_value(expr: sp.Expr, branch: str) -> sp.Expr:
    """Express a branch result in C1 (c = -C1 on the negative branch, C1 = 0 on zero)."""
    if branch == "negative":
        return expr.subs(magnitude, -C1)
    if branch == "zero":
        return expr.subs(C1, 0)
    return expr


@lru_cache(maxsize=None)
@seeded
def residual_moments(activation: str, branch: str) -> tuple[sp.Expr, sp.Expr]:
    """(E[h Y1], E[h Y2]) in terms of C1, e, D, K (and kappa, s0)."""
    act = g.ACTIVATIONS[activation]
    h = residual_factor(branch)
    geometry = pre_activation_geometry().substitutions()
    moments = []
    for factor in (Y1, Y2):
        value = g.expectation(sp.expand(h * factor), act)
        value = _branch_value(value, branch).subs(geometry)
        moments.append(sp.simplify(value))
    return tuple(moments)


@dataclass(frozen=True)
class LogitGradients:
    """dL/dA for an in-group and an out-group entry of one column (A = logits)."""

    in_group: sp.Expr
    out_group: sp.Expr


@lru_cache(maxsize=None)
@seeded
def logit_gradients_symbolic() -> LogitGradients:
    """Softmax-Jacobian step with E[h Y1], E[h Y2] kept as symbols.

    dl/dS_j = -C1 ||V*||^2 E[h x_j'] with x_j' = <v, x_j>/||v||; in-group E[h x_j'] = E[h u]/K
    = E[h Y1], out-group E[h w]/(D-K) with w = (Y2 - p K Y1)/q. Then
    dl/dA_j = S_j (dl/dS_j - sum_k S_k dl/dS_k).
    """
    hY1, hY2 = sp.symbols("hY1 hY2")
    p, q = attention_weights()
    grad_in = -C1 * vstar_norm2 * hY1
    grad_out = -C1 * vstar_norm2 * (hY2 - p * K * hY1) / q / N
    mean = K * p * grad_in + N * q * grad_out
    return LogitGradients(sp.factor(sp.simplify(p * (grad_in - mean))),
                          sp.factor(sp.simplify(q * (grad_out - mean))))


@dataclass(frozen=True)
class CollapsedMap:
    """The exact update (C1, C2, C3) -> (C1', C2', C3') on one branch, in terms of C1 and
    e = exp(-(C2+C3)/scale); see :func:`collapsed_map`."""

    activation: str
    branch: str
    scale: str
    C1_next: sp.Expr
    C2_next: sp.Expr
    C3_next: sp.Expr
    grad_WV_along_Vstar: sp.Expr  # <grad_{W_V} L, V*> / ||V*||_F^2
    grad_A_in: sp.Expr  # dL/dA, one in-group logit entry
    grad_A_out: sp.Expr  # dL/dA, one out-group logit entry


@lru_cache(maxsize=None)
@seeded
def collapsed_map(activation: str, branch: str = "positive", scale: str = "D") -> CollapsedMap:
    """Lemma D.2: the projection of one full-matrix GD step onto the collapsed structure.

    ``C1' = C1 - eta <grad_{W_V} L, V*>/||V*||^2``, ``C2' = C2 - eta <grad_{W_KQ} L, A_in>/||A_in||^2``,
    ``C3' = C3 - eta <grad_{W_KQ} L, -A_out>/||A_out||^2`` with ``grad_{W_KQ} = P (dL/dA) P^T / scale``,
    ``||A_in||^2 = D K`` and ``||A_out||^2 = D (D-K)``.
    """
    hY1, hY2 = residual_moments(activation, branch)
    symbolic = logit_gradients_symbolic()
    hs = {sp.Symbol("hY1"): hY1, sp.Symbol("hY2"): hY2}
    grad_in = sp.simplify(symbolic.in_group.subs(hs))
    grad_out = sp.simplify(symbolic.out_group.subs(hs))
    if branch == "zero":
        grad_in, grad_out = grad_in.subs(C1, 0), grad_out.subs(C1, 0)
    grad_wv = -(K + N) * hY2
    div = to_internal(logit_scale(scale))
    # <grad_WKQ, A_in>/||A_in||^2 = (D K grad_in/div)/(D K); likewise for -A_out.
    return CollapsedMap(
        activation, branch, scale,
        C1_next=to_public((C1 if branch != "zero" else sp.Integer(0)) - eta * grad_wv),
        C2_next=to_public(C2 - eta * grad_in / div),
        C3_next=to_public(C3 + eta * grad_out / div),
        grad_WV_along_Vstar=to_public(grad_wv),
        grad_A_in=to_public(grad_in),
        grad_A_out=to_public(grad_out),
    )


@lru_cache(maxsize=None)
@seeded
def excess_loss(activation: str, branch: str = "positive") -> sp.Expr:
    """L - 1/2 E||E||_F^2 = (D ||V*||^2 / 2) E[(sigma(Y1) - sigma(C1 Y2))^2] (Section 5 loss)."""
    act = g.ACTIVATIONS[activation]
    if branch == "zero":
        integrand = sigma(Y1) ** 2
    else:
        student = C1 * Y2 if branch == "positive" else -magnitude * Y2
        integrand = (sigma(Y1) - sigma(student)) ** 2
    value = g.expectation(sp.expand(integrand), act)
    value = _branch_value(value, branch).subs(pre_activation_geometry().substitutions())
    return to_public(sp.simplify((K + N) * vstar_norm2 / 2 * value))


@lru_cache(maxsize=None)
@seeded
def c1_fixed_point(activation: str) -> sp.Expr:
    """C1*(t): the fixed point of the C1 update at fixed p on the C1 > 0 branch (Lemma D.4's
    proxy, printed for the identity as (D-K)p/(DKp^2 - 2Kp + 1))."""
    m = collapsed_map(activation, "positive")
    (solution,) = sp.solve(sp.Eq(to_internal(m.C1_next), C1), C1)
    return to_public(sp.simplify(solution))


@lru_cache(maxsize=None)
@seeded
def c1_multiplier(activation: str) -> sp.Expr:
    """dC1(t+1)/dC1(t) at fixed p on the C1 > 0 branch (the map is affine in C1 there)."""
    return to_public(sp.simplify(sp.diff(to_internal(collapsed_map(activation, "positive").C1_next), C1)))


def student_variance_in_p() -> sp.Expr:
    """Var(Y2) = K p^2 + (1 - K p)^2/(D - K) as a function of the attention level p."""
    p = sp.Symbol("p", positive=True)
    return K * p**2 + (1 - K * p) ** 2 / N


@lru_cache(maxsize=None)
@seeded
def eta_limit(activation: str) -> sp.Expr:
    """Supremum of eta with |dC1'/dC1| < 1 for every p in [1/D, 1/K] (C1 > 0 branch).

    The multiplier is 1 - eta D m2 Var(Y2) with m2 = E[sigma(g)^2]; Var(Y2) is convex in p
    (second derivative 2K + 2K^2/(D-K) > 0), so its maximum over [1/D, 1/K] is at an endpoint.
    """
    p = sp.Symbol("p", positive=True)
    mult = to_internal(c1_multiplier(activation))
    geometry = pre_activation_geometry()
    var = student_variance_in_p()
    # the multiplier is affine in Var(Y2) = sd2^2: 1 - slope * Var(Y2)
    slope = sp.simplify((1 - mult) / geometry.sd_student**2)
    assert not slope.has(out_group_ratio), "multiplier is not affine in Var(Y2)"
    assert sp.simplify(sp.diff(var, p, 2)).is_positive
    endpoints = [sp.simplify(var.subs(p, 1 / (K + N))), sp.simplify(var.subs(p, 1 / K))]
    assert sp.simplify(endpoints[1] - endpoints[0] - N / ((K + N) * K)).is_zero
    (limit,) = sp.solve(sp.Eq(slope * endpoints[1], 2), eta)
    return to_public(sp.simplify(limit))


@lru_cache(maxsize=None)
@seeded
def c2_c3_invariant(activation: str, scale: str = "D") -> bool:
    """K (C2' - C2) = (D - K)(C3' - C3) on every branch, hence K C2 = (D-K) C3 along
    the trajectory from zero (the logit gradient of each column sums to zero)."""
    for branch in BRANCHES:
        m = collapsed_map(activation, branch, scale)
        if sp.simplify(to_internal(K * (m.C2_next - C2) - (D - K) * (m.C3_next - C3))) != 0:
            return False
    return True

