"""Model A's collapsed dynamics for a smooth activation (erf, tanh, GELU, softplus, sigmoid, a
user formula): iteration in float64 and at ``--dps``, phases t1 and T*, C1*, stability.

The map is the one derived in :mod:`rdyn.derivations.model_a.collapsed_general` (closure of
``W_V = C1 V*`` for M rows of equal norm ``r = sqrt(vstar_norm2 / M)``):
``C1' = C1 + eta D m2``, and the logit gradients of :func:`rdyn.derivations.model_a.collapsed.
logit_gradients_symbolic` with ``(hY1, hY2) = (m1, m2)``, where

    m_k = E[h Y_k] / r,   h = (sigma(r Y1) - sigma(C1 r Y2)) sigma'(C1 r Y2),

``Y1 = u/K``, ``Y2 = p u + q w`` (u ~ N(0, K), w ~ N(0, D-K) independent), and the excess loss
``M D / 2 E[(sigma(r Y1) - sigma(C1 r Y2))^2]``. No positive homogeneity is used.

Quadrature (the expectations, every step): write ``Y2 = s2 Z1`` and, given ``Z1``,
``Y1 = mu(Z1) + s_res Z2`` with ``mu = (p/s2) Z1``, ``s_res = q sqrt((D-K)/K) / s2`` (exact:
``Var(Y1) - p^2/Var(Y2) = (D-K) q^2 / (K Var(Y2))``, no cancellation as p -> 1/K). The outer
integral over Z1 is an n-point Gauss-Hermite rule; the inner one (over Z2, only the teacher term
``sigma(r Y1)`` depends on it) is the closed-form smoothing of
:func:`rdyn.derivations.activations.smoothing` for erf and GELU (1-D in all), else the same rule
(a tensor rule, n^2 evaluations of sigma per step; in float64 the run evaluates it compiled,
:mod:`rdyn.reduced_dynamics.model_a.compiled_rule`, and this numpy step is the fallback for a
formula numba cannot compile). ``E[h Y1]`` uses Stein's identity on the inner variable where
the smoothing is closed: ``E[sigma(r Y1) Y1 | Z1] = mu S0 + s_res^2 r S1``.
``E[sigma(r Y1)^2]`` does not change (Var Y1 = 1/K), computed once.

The node count n is chosen once per run (:func:`choose_rule`): the smallest n of a ladder whose
results agree with the next order to the tolerance (float64: 1e-13 relative; ``dps``:
10^-(dps+2)) at probe states (p = 1/D, the T* level, near 1/K; C1 = 0, C1*(p), 1.5 C1*(p)).
"""
from __future__ import annotations

import math
import sys
from contextlib import nullcontext
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import ClassVar, Sequence

import numpy as np

from rdyn.derivations.activations import Activation, numeric_functions, smoothing_functions
from rdyn.derivations.model_a.collapsed_general import logit_gradient_functions
from rdyn.reduced_dynamics.runs.divergence import is_diverged
from rdyn.derivations.generated import run_generated
from rdyn.reduced_dynamics.model_a.gauss_hermite import GaussRule, float64_rule, precise_rule
from rdyn.reduced_dynamics.model_a.engine import RunResult
from rdyn.derivations.fields import FieldError

FLOAT64_LADDER = (12, 16, 24, 32, 48, 64, 96, 128, 192, 256)
PRECISE_LADDER = (16, 24, 32, 48, 64, 96, 128, 160, 192, 256, 320, 384)
# the most digits a smooth --dps run takes: its rule check compares float errors with
# 10^-(dps+2) (a normal float up to dps ~ 305), and the ladder's end (384 nodes) is about what
# 300 digits need (erf at --dps 250: 320 nodes, 133 s for 3 steps on 2 shared cores)
SMOOTH_DPS_MAX = 300
FLOAT64_TOLERANCE = 1e-13
MAX_DEFAULT_STEPS = 10**7   # a run without steps stops at 2 T*, at most here
# float64 runs of these go through compiled closed forms (reduced_dynamics/model_a/compiled.py):
# erf's, GELU's 1-D sums; the others through the compiled tensor rule (compiled_rule.py)
COMPILED = ("erf", "gelu")


@dataclass(frozen=True)
class SmoothConfig:
    """One collapsed run: sizes, activation, step size, ||V*||_F^2 over M equal rows.
    Refusals are :class:`~rdyn.reduced_dynamics.model_a.request.FieldError` naming the field."""

    kind: ClassVar[str] = "smooth"   # the family (TeacherConfig: "homogeneous"): dispatch on it

    D: int
    K: int
    activation: Activation
    eta: float | None = None
    vstar_norm2: float = 1.0
    M: int = 1
    logit_scale: str = "D"

    def __post_init__(self):
        if not (1 <= self.K < self.D):
            raise FieldError("K", f"need 1 <= K < D, got D={self.D}, K={self.K}")
        if self.M < 1:
            raise FieldError("M", "{M} must be >= 1")
        if not (self.vstar_norm2 > 0 and math.isfinite(self.vstar_norm2)):
            raise FieldError("vstar_norm2", "{vstar_norm2} must be a finite number > 0")

    @property
    def row_norm(self) -> float:
        return math.sqrt(self.vstar_norm2 / self.M)

    @property
    def scale(self) -> float:
        return float(self.D) if self.logit_scale == "D" else math.sqrt(self.D)


# --------------------------------------------------------------------------------------------
# Backends: float64 numpy arrays, or object arrays of arb balls / mpf numbers
# --------------------------------------------------------------------------------------------

def _numpy_smoothing(name: str):
    """``smoothing_functions(name, "numpy")`` (erf's and GELU's closed inner averages) through
    the source cache of :mod:`rdyn.reduced_dynamics.runs.kernel_cache`: sympy derives them
    (about 1.5 s of integration) once per machine; a warm process reads the printed numpy
    source back (sealed by its sha256) instead."""
    import inspect

    from rdyn.reduced_dynamics.runs import kernel_cache

    if name not in COMPILED:
        return None

    def generate():
        funcs = smoothing_functions(name, "numpy")
        return "".join(inspect.getsource(f).replace("_lambdifygenerated", f"S{k}") + "\n"
                       for k, f in enumerate(funcs))

    from scipy.special import erf

    namespace = {"numpy": np, "erf": erf}
    run_generated(kernel_cache.cached_source("smoothing_numpy", (name,), generate),
                  f"smoothing [{name}]", namespace)
    return namespace["S0"], namespace["S1"]


def _exp_or_inf(v: float) -> float:
    """math.exp, inf where it overflows (as numpy's and numba's exp): a state whose attention
    exponent -(C2 + C3)/scale exceeds 709 has e = inf, p = 0 in float64 (AttentionLevel), and a
    step from it leaves a non-finite state, a divergence (divergence.py), not an OverflowError."""
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf


class Numbers:
    """Scalar construction and elementwise functions of one backend."""

    def __init__(self, activation: Activation, dps: int | None):
        self.dps = dps
        if dps is None:
            self.kind = "float64"
            self.make = float
            self.sqrt, self.exp = math.sqrt, _exp_or_inf
            funcs = numeric_functions(activation, "numpy")
            self.sigma, self.dsigma, self.d2sigma = funcs
            smooth = _numpy_smoothing(activation.name)
        else:
            self.kind = "arb" if activation.name != "expr" else "mpmath"
            self.bits = int(math.ceil((dps + 12) * 3.3219280948873626))
            if self.kind == "arb":
                import flint

                self.make = lambda v: flint.arb(v) if isinstance(v, str) else flint.arb(repr(v)) if isinstance(v, float) else flint.arb(v)
                self.sqrt = lambda v: v.sqrt()
                self.exp = lambda v: v.exp()
            else:
                import mpmath

                self.make = lambda v: mpmath.mpf(repr(v)) if isinstance(v, float) else mpmath.mpf(v)
                self.sqrt, self.exp = mpmath.sqrt, mpmath.exp
            funcs = numeric_functions(activation, self.kind, self.bits)
            self.sigma, self.dsigma, self.d2sigma = (np.frompyfunc(f, 1, 1) for f in funcs)
            smooth = smoothing_functions(activation.name, self.kind, self.bits)
            if smooth is not None:
                smooth = tuple(np.frompyfunc(f, 2, 1) for f in smooth)
        self.smoothing = smooth

    def to_float(self, v) -> float:
        if self.kind == "arb":
            return float(v.mid())
        return float(v)

    def to_mpf(self, v):
        import mpmath

        if self.kind == "float64":
            return float(v)
        # created at the run's digits (an mpf keeps the precision of its creation; at the
        # default 53 bits a --dps run would report float64 digits)
        with mpmath.workdps(self.dps + 10):
            if self.kind == "arb":
                return mpmath.mpf(v.mid().str(self.dps + 10, radius=False))
            return +mpmath.mpf(v)

    def strip(self, v):
        return v.mid() if self.kind == "arb" else v

    def rule(self, n: int) -> GaussRule:
        if self.kind == "float64":
            return float64_rule(n)
        return precise_rule(n, self.dps, self.make)

    def precision(self):
        """Context manager setting python-flint's precision for the arb backend."""
        if self.kind == "arb":
            import flint

            return flint.ctx.workprec(self.bits)
        if self.kind == "mpmath":
            import mpmath

            return mpmath.workprec(self.bits)

        return nullcontext()


# --------------------------------------------------------------------------------------------
# The expectations at one attention level
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class AttentionLevel:
    """Everything that depends on (C2 + C3) only: p, q, e, the outer nodes of Y2 and the teacher's
    conditional averages E[sigma(r Y1) | Z1], E[sigma(r Y1) Y1 | Z1]."""

    e: object
    p: object
    q: object
    y2: np.ndarray
    mu: np.ndarray
    teacher_mean: np.ndarray
    teacher_y1: np.ndarray
    # E[Var(sigma(r Y1) | Z1)] >= 0: the part of the excess loss no student state removes
    # (Expectations.moments: the loss in a form without cancellation)
    teacher_var: object = 0.0


class Expectations:
    """The Gaussian expectations of the collapsed map for one config, backend and rule."""

    def __init__(self, config: SmoothConfig, num: Numbers, rule: GaussRule):
        self.config, self.num, self.rule = config, num, rule
        mk = num.make
        self.D, self.K, self.N = mk(config.D), mk(config.K), mk(config.D - config.K)
        self.M = mk(config.M)
        self.V = mk(config.vstar_norm2)
        self.r = num.sqrt(self.V / self.M)
        self.scale = self.D if config.logit_scale == "D" else num.sqrt(self.D)
        self.w, self.z = rule.weights, rule.nodes
        self.teacher_square = teacher_square(config, num)  # E[sigma(r Y1)^2], once

    @property
    def _grad_in(self):   # derived on first use (sympy, ~1 s): the tabulated route needs none
        return logit_gradient_functions()[0]

    @property
    def _grad_out(self):
        return logit_gradient_functions()[1]

    def level(self, e) -> AttentionLevel:
        num, r, K, N = self.num, self.r, self.K, self.N
        p = 1 / (K + N * e)
        # e * p -> 1/N as e -> inf (float64: e = inf where exp overflowed, and p = 0)
        q = e * p if num.kind != "float64" or e != math.inf else 1 / N
        s2 = num.sqrt(K * p * p + N * q * q)
        y2 = self.z * s2
        mu = self.z * (p / s2)
        s_res = q * num.sqrt(N / K) / s2
        if num.smoothing is not None:
            S0, S1 = num.smoothing
            a_mu = mu * r
            mean = S0(a_mu, r * s_res)
            slope = S1(a_mu, r * s_res)
            mean_y1 = mu * mean + slope * (s_res * s_res * r)
            # E[sigma^2] - E[E[sigma | Z1]^2]: a variance, >= 0; a negative difference is
            # rounding (a level where sigma(r Y1) is nearly a function of Z1, p -> 1/K)
            var = self.teacher_square - np.dot(self.w, mean * mean)
            if num.to_float(var) < 0:
                var = var * 0
        else:
            y1 = np.add.outer(mu, self.z * s_res)
            A = num.sigma(y1 * r)
            mean = A @ self.w
            mean_y1 = (A * y1) @ self.w
            dev = A - mean[:, None]   # the rule's own conditional variances: sums of squares
            var = np.dot(self.w, (dev * dev) @ self.w)
        return AttentionLevel(e, p, q, y2, mu, mean, mean_y1, var)

    def moments(self, C1, lvl: AttentionLevel, derivative: bool = True):
        """(m1, m2, dm2/dC1, excess loss) at state C1 and attention level ``lvl``."""
        num, w, r = self.num, self.w, self.r
        b = C1 * r
        arg = lvl.y2 * b
        B, B1 = num.sigma(arg), num.dsigma(arg)
        resid = lvl.teacher_mean - B
        m2 = np.dot(w, resid * B1 * lvl.y2) / r
        m1 = np.dot(w, B1 * (lvl.teacher_y1 - B * lvl.mu)) / r
        dm2 = None
        if derivative:
            B2 = num.d2sigma(arg)
            dm2 = np.dot(w, lvl.y2 * lvl.y2 * (resid * B2 - B1 * B1))
        # excess loss E[(sigma(r Y1) - B)^2] = E[(T - B)^2] + E[Var(sigma(r Y1) | Z1)] (T: the
        # teacher's conditional mean): a sum of squares, never negative. The expanded form
        # E[sigma^2] - 2 E[T B] + E[B^2] cancels to rounding (relative to ||V*||^2 D) when the
        # student fits (p -> 1/K, C1 -> C1*): it gave -3e85 at ||V*||^2 = 1e100
        square = np.dot(w, resid * resid) + lvl.teacher_var
        loss = self.M * self.D / 2 * square
        return m1, m2, dm2, loss

    def m2_only(self, C1, lvl: AttentionLevel):
        num, r = self.num, self.r
        arg = lvl.y2 * (C1 * r)
        return np.dot(self.w, (lvl.teacher_mean - num.sigma(arg)) * num.dsigma(arg) * lvl.y2) / r

    def step(self, C1, C2, C3, eta):
        """One GD step of the collapsed map; also returns (m1, m2, dm2, loss, level) at the
        input state."""
        e = self.num.exp(-(C2 + C3) / self.scale)
        lvl = self.level(e)
        m1, m2, dm2, loss = self.moments(C1, lvl)
        if self.num.kind == "float64" and e == math.inf:
            # the attention exponent left float64's range: the compiled and tabulated routes'
            # exp gives inf and their next state nan, a divergence (divergence.py); so does this
            # step (the state itself, at p = 0, is still reported)
            return math.nan, math.nan, math.nan, (m1, m2, dm2, loss, lvl)
        args = (C1, e, self.K, self.N, self.V, m1, m2)
        g_in, g_out = self._grad_in(*args), self._grad_out(*args)
        return (C1 + eta * self.D * m2, C2 - eta * g_in / self.scale,
                C3 + eta * g_out / self.scale, (m1, m2, dm2, loss, lvl))

    def c1_star(self, lvl: AttentionLevel, start=None):
        """C1*(p): the positive root of m2(C1) = 0 at fixed p (the fixed point of the C1
        update), by bracketing in float64 then Newton at the backend's precision."""
        num = self.num
        f = lambda c: num.to_float(self.m2_only(num.make(c), lvl))  # noqa: E731
        lo, hi = 0.0, 1.0 if start is None else max(float(start), 1e-3)
        if f(0.0) <= 0:
            return num.make(0.0)
        while f(hi) > 0:
            lo, hi = hi, 2 * hi
            if hi > 1e12:
                return num.make(math.inf)
        for _ in range(200):   # bisection to float64 resolution
            mid = (lo + hi) / 2
            if mid in (lo, hi):
                break
            if f(mid) > 0:
                lo = mid
            else:
                hi = mid
        c = num.make(hi)
        if num.kind != "float64":
            for _ in range(8):   # Newton at the working precision
                _, m2, dm2, _ = self.moments(c, lvl)
                c = c - m2 / dm2
        else:
            _, m2, dm2, _ = self.moments(c, lvl)
            if dm2 != 0:
                c = c - m2 / dm2
        return c


def teacher_square(config: SmoothConfig, num: Numbers):
    """E[sigma(r Y1)^2], Y1 ~ N(0, 1/K): a constant of the run. float64: 256-point
    Gauss-Hermite; at dps: mpmath tanh-sinh quadrature on (-inf, 0, inf) at dps + 12 digits
    (an independent route from the run's rule)."""
    if num.kind == "float64":
        rule = float64_rule(256)
        return float(np.dot(rule.weights, num.sigma(rule.nodes * (config.row_norm / math.sqrt(config.K))) ** 2))
    import mpmath

    from rdyn.derivations.activations import numeric_functions as functions

    sigma = functions(config.activation, "mpmath")[0]
    with mpmath.workdps(num.dps + 12):
        scale = mpmath.sqrt(mpmath.mpf(config.vstar_norm2) / config.M / config.K)
        value = mpmath.quad(lambda z: sigma(scale * z) ** 2 * mpmath.npdf(z), [-mpmath.inf, 0, mpmath.inf])
        text = mpmath.nstr(value, num.dps + 10, strip_zeros=False)
    return num.make(text)


# --------------------------------------------------------------------------------------------
# Node count
# --------------------------------------------------------------------------------------------

def _probe_levels(config: SmoothConfig, tstar_level: float) -> list[float]:
    """e values of the probe states: p = 1/D, the T* level, p = 0.999/K."""
    K, N = config.K, config.D - config.K
    es = [1.0]
    for p in (tstar_level, 0.999 / K):
        if 1 / config.D < p < 1 / K:
            es.append((1 / p - K) / N)
    return es


def default_probes(config: SmoothConfig, dps: int | None, tstar_level: float) -> list:
    """Probe states (e, C1). float64: p = 1/D, the T* level, 0.999/K, each at C1 = 0, C1*(p),
    1.25 C1*(p). At dps: the start of the run (p = 1/D; C1 = 0, C1*(1/D)); the run adds its
    final state a posteriori (:func:`run`)."""
    ref = Expectations(config, Numbers(config.activation, None), float64_rule(128))
    probes = []
    levels = _probe_levels(config, tstar_level) if dps is None else [1.0]
    for e in levels:
        lvl = ref.level(e)
        star = float(ref.c1_star(lvl))
        if not math.isfinite(star):
            star = 1.0
        probes += [(e, c) for c in ((0.0, star, 1.25 * star) if dps is None else (0.0, star))]
    return probes


def choose_rule(config: SmoothConfig, dps: int | None, probes: list, start: int = 0) -> tuple[int, float]:
    """(n, estimated error): the smallest n of the ladder (from index ``start``) whose results
    agree with the next order to the tolerance at every probe state (e, C1) (a function of
    the config, dps and probes only). ValueError (one line, with the estimate) if the ladder's
    end is not enough."""
    if dps is not None and dps > SMOOTH_DPS_MAX:
        raise FieldError("dps", f"{{dps}} {dps}: smooth activations run at most {{dps}} "
                                f"{SMOOTH_DPS_MAX}")
    num = Numbers(config.activation, dps)
    ladder = (FLOAT64_LADDER if dps is None else PRECISE_LADDER)[start:]
    tol = FLOAT64_TOLERANCE if dps is None else 10.0 ** (-(dps + 2))
    error = math.inf
    with num.precision():

        def values(n):
            ex = Expectations(config, num, num.rule(n))
            out = []
            for e, c in probes:
                lvl = ex.level(num.make(e))
                m1, m2, _, loss = ex.moments(num.make(c), lvl, derivative=False)
                out += [m1, m2, loss]
            return out

        previous = values(ladder[0]) if len(ladder) > 1 else []
        for n, n_next in zip(ladder, ladder[1:]):
            current = values(n_next)
            error = max(float(abs(a - b)) / (1 + float(abs(b))) for a, b in zip(previous, current))
            if error <= tol:
                return n_next, error
            previous = current
    digits = "float64" if dps is None else f"{dps} digits"
    kink = _kink(config.activation)
    if kink is not None:   # a jump in sigma'' (abs, sign, Max, ...): no row norm helps
        remedy = (f"{kink}, so the rule converges only slowly at any row norm; use a smooth "
                  "formula (e.g. x/sqrt(1+x**2) instead of x/(1+abs(x)))")
    elif dps is not None:
        remedy = "lower {dps}"
    else:
        remedy = (f"a smaller row norm sqrt(vstar_norm2 / M) = {config.row_norm:.3g} (lower "
                  "{vstar_norm2} or raise {M}) makes sigma(r Y) smoother")
    raise FieldError("activation", f"{{activation}} {config.activation.label}: the Gauss-Hermite "
                     f"rule does not reach {digits} with {ladder[-1]} nodes (estimated error "
                     f"{error:.1e}); {remedy}", "dps", "vstar_norm2", "M")


def _kink(activation: Activation) -> str | None:
    """A user formula whose sigma, sigma' or sigma'' contains a non-smooth function (abs, sign,
    Max, Min, Heaviside, Piecewise): "sigma'' = ... (abs)"-style text naming it, else None."""
    if activation.formula is None:
        return None
    import sympy as sp

    from rdyn.derivations.activations import derivatives, parse_expression

    kinds = (sp.Abs, sp.sign, sp.Max, sp.Min, sp.Heaviside, sp.Piecewise)
    for name, form in zip(("sigma", "sigma'", "sigma''"),
                          derivatives(parse_expression(activation.formula))):
        found = sorted({type(a).__name__ for a in form.atoms(*kinds)})
        if found:
            return (f"{name} of {activation.formula} contains {', '.join(found)} (not smooth where "
                    "its argument is 0)")
    return None


# --------------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------------

@dataclass
class SmoothRun(RunResult):
    """A run's result (the fields of :class:`~rdyn.reduced_dynamics.model_a.dynamics.RunResult`; ``config``
    is a :class:`SmoothConfig`) plus the Gauss-Hermite rule: ``nodes`` and the estimated
    relative error ``quadrature_error``."""

    nodes: int = 0
    quadrature_error: float = 0.0
    route: str = "rule"
    table_error: float | None = None


ROUTES = ("auto", "table", "exact")


def table_route(config: SmoothConfig, dps: int | None, route: str = "auto") -> bool:
    """Whether a run takes the tabulated moments (:mod:`rdyn.reduced_dynamics.model_a.smooth_tables`):
    every float64 run ("auto" and "table" alike; erf and GELU too: their compiled closed forms
    cost 4-5 s of numba compilation in every process and step slower than the tiles), unless
    ``route`` is "exact" (the closed forms of erf and GELU, the compiled Gauss-Hermite rule of
    the others)."""
    if route not in ROUTES:
        raise ValueError(f"route must be one of {', '.join(ROUTES)}, got {route!r}")
    return dps is None and route != "exact"


def eta_limit(config: SmoothConfig, points: int = 17) -> float:
    """sup eta with |1 + eta D dm2/dC1| < 1 at the fixed point C1*(p), over a grid of
    ``points`` attention levels p in [1/D, 1/K) (Chebyshev-spaced in p; grid maximum of the
    curvature, float64): 2 / (D max_p (-dm2/dC1(C1*(p), p))). Independent of ``config.eta``;
    a pure float64 function of the rest, so computed once per configuration (the request's
    default eta and the run's reported eta_limit share it)."""
    return _eta_limit(replace(config, eta=None), points)


@lru_cache(maxsize=64)
def _eta_limit(config: SmoothConfig, points: int) -> float:
    ex = Expectations(config, Numbers(config.activation, None), float64_rule(96))
    K, N = config.K, config.D - config.K
    worst = 0.0
    lo, hi = 1 / config.D, 1 / K
    for j in range(points):
        p = lo + (hi - lo) * (1 - math.cos(math.pi * j / (points - 1))) / 2
        p = min(p, hi * (1 - 1e-6))
        e = (1 / p - K) / N
        lvl = ex.level(e)
        star = float(ex.c1_star(lvl))
        if not math.isfinite(star):
            continue
        _, _, dm2, _ = ex.moments(star, lvl)
        worst = max(worst, -float(dm2))
    return 2 / (config.D * worst) if worst > 0 else math.inf


@np.errstate(all="ignore")   # float64 over/underflow gives inf/nan, caught by the divergence
# rule and reported as such: no numpy RuntimeWarning leaks (docs/input_rules.md, Overflow)
def run(config: SmoothConfig, steps: int | None, record: Sequence[int] = (), t1_fraction: float = 0.95,
        tstar_attention: float | None = None, dps: int | None = None, progress: bool = False,
        max_default_steps: int = MAX_DEFAULT_STEPS, min_default_steps: int = 1000,
        checkpoint: str | None = None, checkpoint_every: float = 60.0,
        resume: str | None = None, on_rule=None, route: str = "auto",
        eta: float | None = None) -> SmoothRun:
    """Iterate from C1 = C2 = C3 = 0. ``steps = None``: to T*, then as many again (at least
    ``min_default_steps``, at most ``max_default_steps``). At ``dps`` the node count chosen at
    the start is checked a posteriori at the final state against the next order; if they
    disagree, the run is repeated with the rule that agrees there.

    ``checkpoint``: file receiving the loop state (:mod:`rdyn.reduced_dynamics.
    runs.smooth_checkpoint`) between chunks, at most every ``checkpoint_every`` seconds, at the end
    and on KeyboardInterrupt (then :class:`rdyn.reduced_dynamics.runs.checkpoint.Interrupted`).
    ``resume``: continue from such a file (CheckpointError if written for another run; a
    checkpoint of a repeated ``dps`` run resumes that repetition); the result is bit-identical
    to an uninterrupted run. ``on_rule(n)``: called once the node count n is chosen, before
    the loop, and again before a repetition with more nodes (the API prints its time
    estimate there; it may return the run's estimated step count, the progress bar's total
    until the stop step is known). ``eta``: the step size as resolved by
    :func:`~rdyn.reduced_dynamics.model_a.request.resolve_eta` (a request's ``model.eta``);
    None: resolved here by the same rule (``config.eta``, else half of :func:`eta_limit`). The
    checkpoint identity keeps ``config.eta`` (None for the default step size)."""
    from rdyn.reduced_dynamics.runs.smooth_checkpoint import run_identity, saved_rule

    level = 1.0 / (2 * config.K) if tstar_attention is None else tstar_attention
    probes = default_probes(config, dps, level)
    n, qerr = choose_rule(config, dps, probes)
    backend = "float64" if dps is None else Numbers(config.activation, dps).kind
    if table_route(config, dps, route):   # a checkpoint of the tabulated route resumes only it
        backend = "float64 table"

    def identity(nodes):
        return run_identity(config, steps, record, t1_fraction, tstar_attention, dps, backend,
                            nodes, min_default_steps, max_default_steps)

    if resume is not None and dps is not None:   # a checkpoint of a repeated run (larger n)
        saved_n, saved_err = saved_rule(resume, identity(n))
        if saved_n in PRECISE_LADDER and PRECISE_LADDER.index(saved_n) > PRECISE_LADDER.index(n):
            n, qerr = saved_n, saved_err
    store = None if checkpoint is None else (checkpoint, checkpoint_every)
    for _ in range(4):
        expected = on_rule(n) if on_rule is not None else None   # estimated steps, or None
        result = _run(config, steps, record, t1_fraction, level, dps, progress, max_default_steps,
                      min_default_steps, n, qerr, store, resume, identity(n),
                      probes if table_route(config, dps, route) else None, expected, eta)
        resume = None
        if dps is None:
            return result
        # a posteriori: at the final state, the rule used (n) against the previous order
        final = result.final
        if result.diverged_at_step is not None or not float(final.p) > 0:
            # a diverged run (its last state may be far outside any rule's reach: nothing
            # computed from it is reported) or p below float64's range: no probe there
            return result
        e_final = (1 / float(final.p) - config.K) / (config.D - config.K)
        start = max(PRECISE_LADDER.index(n) - 1, 0)
        n_check, err = choose_rule(config, dps, probes + [(e_final, float(final.C1))], start)
        if n_check == n:
            return replace(result, quadrature_error=max(qerr, err))
        n, qerr = n_check, err
    return result


def run_request(request) -> SmoothRun:
    """:func:`run` on a typed :class:`~rdyn.reduced_dynamics.model_a.request.Request` (its
    model's config and thresholds, its numerics' dps and route, its control's steps, record,
    step budgets, checkpointing, progress and ``on_rule``): the entry point of the API."""
    model, numerics, control = request.model, request.numerics, request.control
    budget = {} if control.max_default_steps is None else \
        {"max_default_steps": control.max_default_steps}
    return run(model.config, control.steps, control.record, model.thresholds.t1_fraction,
               model.thresholds.tstar_attention, numerics.dps, progress=control.progress,
               min_default_steps=control.min_default_steps, checkpoint=control.checkpoint,
               checkpoint_every=control.checkpoint_every, resume=control.resume,
               on_rule=control.on_rule, route=numerics.route, eta=model.eta, **budget)


# steps per chunk between checkpoint / interrupt points: the compiled closed forms, the float64
# quadrature loop (numpy fallback), the quadrature loop at --dps; "rule": lattice points per
# chunk of the compiled tensor rule (steps: that over n^2; n = 128: 256 steps, some 10 ms), so
# Ctrl-C / SIGTERM land soon
CHUNK = {"compiled": 1 << 17, "float64": 512, "precise": 16, "rule": 1 << 22}


def _run(config, steps, record, t1_fraction, level, dps, progress, max_default_steps,
         min_default_steps, n, qerr, store=None, resume=None, identity=None,
         table_probes=None, expected_steps=None, eta=None) -> SmoothRun:
    from rdyn.reduced_dynamics.model_a.engine import (StateReport, assemble, capture_steps,
                                                      drive_run, progress_bar)
    from rdyn.reduced_dynamics.runs.smooth_checkpoint import SmoothLoop, load_loop, save_loop, saved_table_error

    limit = eta_limit(config)
    # the request's eta (resolve_eta); a direct call without it: the same rule
    eta_f = eta if eta is not None else config.eta if config.eta is not None else limit / 2
    num = Numbers(config.activation, dps)
    end = steps if steps is not None else max_default_steps
    grid = set(int(s) for s in capture_steps(end, record))
    with num.precision():
        ex = Expectations(config, num, num.rule(n))
        table = None
        if table_probes is not None:   # the tabulated moments (smooth_tables.py)
            table = make_table_route(config, n, table_probes)
            advance = table.advancer(eta_f, t1_fraction, level, steps is None,
                                     min_default_steps, end, grid)
            chunk, route = CHUNK["compiled"], None
        else:
            route = _compiled_loop(config, n) if num.kind == "float64" else False   # numba loops
        if table is not None:
            pass
        elif route is not False:
            advance = _compiled_advance(config, eta_f, t1_fraction, level, steps is None,
                                        min_default_steps, end, grid, route)
            chunk = CHUNK["compiled"] if route is None else max(CHUNK["rule"] // (n * n), 1)
        else:
            advance = _quadrature_advance(ex, num, config, steps is None, grid, eta_f,
                                          t1_fraction, level, min_default_steps,
                                          max_default_steps)
            chunk = CHUNK["float64" if dps is None else "precise"]
        zero = num.make(0.0)
        loop = SmoothLoop(0, [zero, zero, zero], stop_at=end)
        prior_table_error = None
        if resume is not None:
            loop = load_loop(resume, identity, num.kind)
            prior_table_error = saved_table_error(resume, identity)

        def table_error_so_far():
            """The largest tile error of the whole run: this process's tiles and, after a resume,
            those built before the interruption."""
            if table is None:
                return None
            return table.error if prior_table_error is None else max(prior_table_error, table.error)

        def write(path, snapshot):
            save_loop(path, identity, snapshot, qerr, table_error_so_far())

        # total: the steps asked, or the default run's most until its stop step is known
        bar = progress_bar(progress and (steps is None or steps > 20000),
                           steps or expected_steps or end, initial=loop.t, mininterval=1.0,
                           leave=False)

        def chunk_of(loop, size: int):
            advance(loop, loop.t + size)
            return loop

        loop = drive_run(chunk_of, write, loop, budget=end, size=chunk,
                         checkpoint=None if store is None else store[0],
                         checkpoint_every=60.0 if store is None else store[1], bar=bar)

        def observables(values):
            c1, c2, c3 = values
            lvl = ex.level(num.exp(-(c2 + c3) / ex.scale))
            return lvl, ex.moments(c1, lvl, derivative=False)[3]

        def report(tt, values) -> StateReport:
            c1, c2, c3 = values
            lvl, loss = observables(values)
            star = ex.c1_star(lvl, start=num.to_float(c1) if num.to_float(c1) > 0 else None)
            return StateReport(int(tt), *(num.to_mpf(v) for v in (c1, c2, c3, lvl.p, star, loss)))

        final_state = tuple(loop.state)
        captured = dict(loop.captured)
        captured[loop.t] = final_state   # the final state is on the loss curve
        return assemble(
            SmoothRun, config=config, eta=eta_f, eta_limit=limit,
            backend="float64" if dps is None else num.kind, t=loop.t, t1=loop.t1,
            T_star=loop.T_star, lost=loop.lost, captured=captured, final_state=final_state,
            record=record, report=report, loss=lambda values: num.to_mpf(observables(values)[1]),
            diverged_at=loop.diverged, nodes=n, quadrature_error=qerr,
            route="rule" if table is None else "table", table_error=table_error_so_far())


def make_table_route(config: SmoothConfig, n: int, probes):
    """The tabulated route of a float64 run (:class:`rdyn.reduced_dynamics.model_a.
    smooth_tables.TableRoute`) on the n-point rule, with the exact route's compiled advance
    for states beyond the table's lattice."""
    from rdyn.reduced_dynamics.model_a.smooth_tables import TableRoute

    def exact_advance(eta_f, t1_fraction, level, default_run, min_default_steps, end, grid):
        route = _compiled_loop(config, n)
        if route is False:
            raise FieldError("activation", f"{{activation}} {config.activation.label}: the "
                             "state left the table's reach and the formula does not compile "
                             "under numba; use {route} exact", "route")
        return _compiled_advance(config, eta_f, t1_fraction, level, default_run,
                                 min_default_steps, end, grid, route)

    ex = Expectations(config, Numbers(config.activation, None), float64_rule(n))
    return TableRoute(config, n, probes, ex, exact_advance)


def _compiled_loop(config: SmoothConfig, n: int):
    """The float64 run's compiled loop: None for erf and GELU (their closed forms,
    :mod:`rdyn.reduced_dynamics.model_a.compiled`), else (iterate, z, w), the n-point tensor
    rule compiled (:mod:`rdyn.reduced_dynamics.model_a.compiled_rule`); False (one line on
    stderr) if the formula does not compile under numba: the numpy step then."""
    from rdyn.reduced_dynamics.model_a.compiled_rule import compiled_rule_loop

    if config.activation.name in COMPILED:
        return None
    loop = compiled_rule_loop(config.activation, n)
    if loop is None:
        print(f"rdyn: --activation {config.activation.label} does not compile under numba; "
              "float64 steps run on the numpy Gauss-Hermite step (slower)", file=sys.stderr)
        return False
    return loop


def _compiled_advance(config, eta_f, t1_fraction, level, default_run, min_default_steps, end,
                      grid, compiled_loop=None):
    """``advance(loop, chunk_end)`` on a compiled float64 loop: erf's or GELU's closed form
    (``compiled_loop`` None) or the compiled tensor rule (``compiled_loop`` = (iterate, z, w),
    :func:`_compiled_loop`)."""
    from rdyn.reduced_dynamics.model_a import compiled as mc

    capture_steps = np.array(sorted(grid), dtype=np.int64)

    def advance(loop, chunk_end):
        state = np.array([float(v) for v in loop.state])
        ev = mc.loop_counters(loop, capture_steps)
        out = np.full((capture_steps.shape[0], 3), np.nan)
        done = mc.advance_compiled(config, state, ev, chunk_end, eta_f, t1_fraction, level,
                                   default_run, min_default_steps, end, capture_steps, out,
                                   compiled_loop)
        mc.sync_loop(loop, state, ev, out, capture_steps)
        loop.done = done

    return advance


def _quadrature_advance(ex: Expectations, num: Numbers, config: SmoothConfig, default_run: bool,
                        grid, eta_f, t1_fraction, level, min_default_steps, max_default_steps):
    """``advance(loop, chunk_end)`` on the quadrature (any backend): the step loop with the
    events t1, T*, lost_at_step and the captured states."""
    eta = num.make(repr(eta_f)) if num.kind != "float64" else eta_f
    fraction = num.make(repr(t1_fraction)) if num.kind != "float64" else t1_fraction

    def advance(loop, chunk_end):
        C1, C2, C3 = loop.state
        t, t1, T_star, lost, stop_at = loop.t, loop.t1, loop.T_star, loop.lost, loop.stop_at
        captured = dict(loop.captured)
        diverged, done = None, False
        while t < chunk_end:
            C1n, C2n, C3n, (_, _, dm2, _, lvl) = ex.step(C1, C2, C3, eta)
            if T_star is None and num.to_float(lvl.p) >= level:
                T_star = t
                if default_run:
                    stop_at = min(max(2 * t, min_default_steps), max_default_steps)
            if t1 is None and t >= 1 and num.to_float(ex.m2_only(C1 / fraction, lvl)) <= 0:
                t1 = t
            if lost is None and t < stop_at and not (-1 < 1 + eta_f * config.D * num.to_float(dm2) < 1):
                lost = t
            if t in grid or t == stop_at:
                captured[t] = (C1, C2, C3)
            if t >= stop_at:
                done = True
                break
            if is_diverged((C1n, C2n, C3n)):   # divergence.py: stop at the last finite state
                diverged, done = t + 1, True
                captured[t] = (C1, C2, C3)
                break
            C1, C2, C3 = (num.strip(v) for v in (C1n, C2n, C3n))
            t += 1
        loop.state, loop.t, loop.t1, loop.T_star, loop.lost = [C1, C2, C3], t, t1, T_star, lost
        loop.stop_at, loop.captured, loop.diverged, loop.done = stop_at, captured, diverged, done

    return advance


# --------------------------------------------------------------------------------------------
# Unequal row norms: one C1 per class of equal norms (the closed generalisation)
# --------------------------------------------------------------------------------------------

def row_norm_classes(row_norms2: Sequence[float], rel_tol: float = 1e-12) -> list[tuple[float, int]]:
    """(squared norm, count) of each class of rows with equal norms (to ``rel_tol``), in order
    of first appearance."""
    classes: list[list] = []
    for v in row_norms2:
        for c in classes:
            if abs(v - c[0]) <= rel_tol * max(v, c[0]):
                c[1] += 1
                break
        else:
            classes.append([float(v), 1])
    return [(v, n) for v, n in classes]


class ClassMap:
    """The collapsed map with one C1 per class of equal row norms (float64 quadrature).

    Derivation (:mod:`rdyn.derivations.model_a.collapsed_general`, step 1): each row moves along itself
    with the coefficient ``-D E[h_r Y2] / r`` of its own norm, so ``W_V = sum_c C1_c V*_c``
    (``V*_c``: the rows of class c) is closed: ``C1_c' = C1_c + eta D m2(C1_c; r_c)``. The logit
    gradients are linear in ``C1 ||V*||^2 (hY1, hY2)``, and sum over classes:
    ``(hY1, hY2) -> sum_c M_c r_c^2 C1_c (m1_c, m2_c)`` with ``C1 = ||V*||^2 = 1``."""

    def __init__(self, config: SmoothConfig, row_norms2: Sequence[float], n: int):
        self.config = config
        self.classes = row_norm_classes(row_norms2)
        num = Numbers(config.activation, None)
        self.parts = [Expectations(replace(config, M=count, vstar_norm2=count * norm2), num,
                                   float64_rule(n)) for norm2, count in self.classes]
        self._grad_in, self._grad_out = logit_gradient_functions()

    def step(self, C1s: Sequence[float], C2: float, C3: float, eta: float):
        c = self.config
        e = math.exp(-(C2 + C3) / c.scale)
        H1 = H2 = 0.0
        new = []
        for (norm2, count), ex, C1 in zip(self.classes, self.parts, C1s):
            m1, m2, _, _ = ex.moments(C1, ex.level(e), derivative=False)
            H1 += count * norm2 * C1 * m1
            H2 += count * norm2 * C1 * m2
            new.append(C1 + eta * c.D * m2)
        K, N = float(c.K), float(c.D - c.K)
        g_in = self._grad_in(1.0, e, K, N, 1.0, H1, H2)
        g_out = self._grad_out(1.0, e, K, N, 1.0, H1, H2)
        return new, C2 - eta * g_in / c.scale, C3 + eta * g_out / c.scale
