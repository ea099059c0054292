"""Measured exponents and constants behind the papers' Theta-claims (``rdyn scaling``).

Claims (seed 000, Model A, docs/models_and_conventions.md conventions, softmax scale 1/D unless told otherwise):

* ``A.t1``     Lemma D.13   ``t1 = Theta(1/eta)``
* ``A.Tstar``  Lemma D.16   ``T* = Theta(K D^2 / (eta ||V*||_F^2))``
* ``A.loss``   Theorem 3.1  excess loss ``L(T) = Theta(K D^4 / (eta T))`` for ``T >> T*``

Claims (seed 003, Model B, collapsed recursion, Task 2 spectrum (3, 1, 1, 1)):

* ``B.ln.gamma`` ``gamma ~ t^(1/3)``, ``B.ln.alpha`` / ``B.ln.beta`` ``~ t^(1/6)`` (LN layer,
  Theorem 4.3); ``B.looped.rho`` ``rho = w v ~ t^(1/2)``, ``B.looped.w`` / ``B.looped.v``
  ``~ t^(1/4)`` (looped model, Theorem 4.1).

Definitions (units: GD steps): ``t1 = min{t >= 1 : C1(t) >= 0.95 C1*(t)}``,
``T* = min{t >= 0 : p(t) >= 1/(2K)}``; the excess loss is ``L - 1/2 E||E||_F^2``. The
late-time constant of ``A.loss`` is measured as ``T L(T)`` at ``T = m T*`` (the same multiple
``m`` for every configuration, so the leading ``O(T*/T)`` correction to ``T L(T)`` is nearly the
same factor everywhere and cancels from exponents); its ``T``-line measures ``L(T)`` at
``T = m T* 2^k`` along one run.

Design: every *line* varies one factor over a geometric range with the others fixed, for each
activation (identity, ReLU, LeakyReLU with kappa = 0.1). A line is ordered towards its
asymptotic end (``D``, ``T``, ``t`` increasing; ``K`` decreasing, ``K/D -> 0``; ``eta`` and
``||V*||_F^2`` decreasing, the slow, continuous-time limit); the *local exponent* is the log-log slope between its last two
points.

Fit: ordinary least squares of ``log y = log C + sum_i a_i log x_i``; 95% intervals are
Student-t intervals from the regression residuals (``dof = n - k - 1``). The data are
deterministic (no sampling noise): the interval measures how far the points depart from a pure
power law over the range (curvature, integer rounding of event times), not a statistical error.

Verdict: ``confirmed`` when the claimed exponent lies inside a 95% interval no wider than
+-10% of the claimed exponent (basis ``interval``; a wide interval from a curved line decides
nothing) or the local exponent at the asymptotic end is within 10% of it (basis ``local``);
else ``not confirmed``. The reported constant ``C`` is the prefactor of the
claimed form with the varied factor's exponent replaced by the fitted one (e.g. for the ``D``
line of ``A.Tstar``: ``T* = C K D^a / (eta ||V*||^2)``), so constants of confirmed lines of one
claim are comparable.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

ACTIVATIONS = ("identity", "relu", "leaky")
LEVEL = 0.95
LOCAL_TOLERANCE = 0.10  # relative, on the local exponent at the asymptotic end
LEAKY_KAPPA = 0.1


# ------------------------------------------------------------------------------------------
# The fit
# ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Fit:
    """Least-squares power law ``y = C prod_i x_i^{a_i}`` with t-based intervals."""

    exponents: tuple[float, ...]
    exponent_se: tuple[float, ...]
    exponent_ci: tuple[tuple[float, float], ...]
    log_constant: float
    log_constant_se: float
    log_constant_ci: tuple[float, float]
    residual_sd: float  # of log y
    n: int
    dof: int
    level: float = LEVEL

    @property
    def constant(self) -> float:
        return math.exp(self.log_constant)

    @property
    def constant_ci(self) -> tuple[float, float]:
        return _exp_interval(self.log_constant_ci)


def _exp_interval(interval: tuple[float, float]) -> tuple[float, float]:
    return tuple(math.exp(v) if math.isfinite(v) else (math.inf if v > 0 else 0.0) for v in interval)


def fit_power_law(x: Sequence, y: Sequence[float], level: float = LEVEL) -> Fit:
    """Fit ``log y = log C + sum_i a_i log x_i`` by least squares.

    ``x`` is a sequence of n values (one factor) or an (n, k) array (k factors); all values
    positive. Intervals: ``estimate +- t_{dof, (1+level)/2} * se`` with the residual variance
    ``s^2 = RSS / (n - k - 1)``; infinite when ``dof = 0``.
    """
    from scipy import stats

    X = np.asarray(x, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    Y = np.asarray(y, dtype=float)
    if X.shape[0] != Y.shape[0]:
        raise ValueError("x and y have different lengths")
    if np.any(X <= 0) or np.any(Y <= 0) or not (np.all(np.isfinite(X)) and np.all(np.isfinite(Y))):
        raise ValueError("power-law fit needs positive finite values")
    n, k = X.shape
    if n < k + 1:
        raise ValueError(f"need at least {k + 1} points for {k} exponents, got {n}")
    A = np.column_stack([np.ones(n), np.log(X)])
    ly = np.log(Y)
    coef, *_ = np.linalg.lstsq(A, ly, rcond=None)
    resid = ly - A @ coef
    dof = n - k - 1
    if dof > 0:
        s2 = float(resid @ resid) / dof
        cov = s2 * np.linalg.inv(A.T @ A)
        se = np.sqrt(np.maximum(np.diag(cov), 0.0))
        q = float(stats.t.ppf((1 + level) / 2, dof))
        half = q * se
    else:
        s2 = math.nan
        se = np.full(k + 1, math.inf)
        half = se
    ci = [(float(c - h), float(c + h)) for c, h in zip(coef, half)]
    return Fit(tuple(float(c) for c in coef[1:]), tuple(float(s) for s in se[1:]), tuple(ci[1:]),
               float(coef[0]), float(se[0]), ci[0], math.sqrt(s2) if dof > 0 else math.nan,
               n, dof, level)


def local_exponent(x: Sequence[float], y: Sequence[float]) -> float:
    """Log-log slope between the last two points (the asymptotic end of a line)."""
    return math.log(y[-1] / y[-2]) / math.log(x[-1] / x[-2])


def in_interval(value: float, interval: tuple[float, float], estimate: float) -> bool:
    """``value`` inside ``interval`` (widened by 1e-9 relative for exact synthetic data)."""
    pad = 1e-9 * max(1.0, abs(estimate))
    return interval[0] - pad <= value <= interval[1] + pad


def verdict(claimed: float, fit_exponent: float, interval: tuple[float, float], local: float,
            tolerance: float = LOCAL_TOLERANCE) -> tuple[str, str]:
    """(``confirmed`` / ``not confirmed``, basis): inside an interval of half-width at most
    ``tolerance * |claimed|``, or local exponent within ``tolerance`` (relative) of the claim."""
    basis = []
    narrow = (interval[1] - interval[0]) / 2 <= tolerance * abs(claimed)
    if narrow and in_interval(claimed, interval, fit_exponent):
        basis.append("interval")
    if math.isfinite(local) and abs(local - claimed) <= tolerance * abs(claimed):
        basis.append("local")
    return ("confirmed" if basis else "not confirmed"), "+".join(basis)


# ------------------------------------------------------------------------------------------
# Claims and sweep design
# ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Claim:
    """A printed Theta-claim: ``quantity = Theta(prod factor^exponent)``."""

    id: str
    model: str
    source: str
    statement: str
    quantity: str
    form: tuple[tuple[str, float], ...]  # claimed exponent of every factor

    def exponent(self, factor: str) -> float:
        return dict(self.form)[factor]


CLAIMS = {c.id: c for c in (
    Claim("A.t1", "A", "Zhang-Zhao-Gu-Cao (seed 000), Lemma D.13", "t1 = Theta(1/eta)", "t1",
          (("eta", -1.0),)),
    Claim("A.Tstar", "A", "Zhang-Zhao-Gu-Cao (seed 000), Lemma D.16",
          "T* = Theta(K D^2 / (eta ||V*||_F^2))", "T_star",
          (("K", 1.0), ("D", 2.0), ("eta", -1.0), ("vstar_norm2", -1.0))),
    Claim("A.loss", "A", "Zhang-Zhao-Gu-Cao (seed 000), Theorem 3.1",
          "excess loss = Theta(K D^4 / (eta T)), T >> T*", "loss",
          (("K", 1.0), ("D", 4.0), ("eta", -1.0), ("T", -1.0))),
    Claim("B.ln.gamma", "B", "Wu-Zhang-Cao (seed 003), Theorem 4.3", "LN layer: gamma ~ t^(1/3)",
          "gamma", (("t", 1 / 3),)),
    Claim("B.ln.alpha", "B", "Wu-Zhang-Cao (seed 003), Theorem 4.3", "LN layer: alpha ~ t^(1/6)",
          "alpha", (("t", 1 / 6),)),
    Claim("B.ln.beta", "B", "Wu-Zhang-Cao (seed 003), Theorem 4.3", "LN layer: beta ~ t^(1/6)",
          "beta", (("t", 1 / 6),)),
    Claim("B.looped.rho", "B", "Wu-Zhang-Cao (seed 003), Theorem 4.1", "looped: rho = w v ~ t^(1/2)",
          "rho", (("t", 1 / 2),)),
    Claim("B.looped.w", "B", "Wu-Zhang-Cao (seed 003), Theorem 4.1", "looped: w ~ t^(1/4)",
          "w", (("t", 1 / 4),)),
    Claim("B.looped.v", "B", "Wu-Zhang-Cao (seed 003), Theorem 4.1", "looped: v ~ t^(1/4)",
          "v", (("t", 1 / 4),)),
)}

FACTOR_LABELS = {"eta": "eta", "D": "D", "K": "K", "vstar_norm2": "||V*||^2", "T": "T", "t": "t"}


@dataclass(frozen=True)
class Line:
    """One sweep: the claim's quantity while ``factor`` takes ``values`` (ordered towards the
    asymptotic end), every other parameter fixed (``fixed``: TeacherConfig fields for Model A,
    model_b.Config fields for Model B). For the ``A.loss`` lines, ``multiple`` is m in
    ``T = m T*``; the ``T`` line's values are multiples of ``m T*``."""

    claim: str
    factor: str
    values: tuple
    fixed: tuple[tuple[str, Any], ...]
    activation: str | None = None
    multiple: int | None = None

    @property
    def settings(self) -> dict:
        return dict(self.fixed)

    @property
    def claimed_exponent(self) -> float:
        return CLAIMS[self.claim].exponent(self.factor)


def _eta_limit(D: int, K: int, activation: str, kappa: float, scale: str) -> float:
    from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, eta_limit

    return eta_limit(TeacherConfig(D=D, K=K, activation=activation, kappa=kappa, logit_scale=scale))


def _geometric(top: float, ks: Sequence[int]) -> tuple[float, ...]:
    return tuple(float(top * 2.0 ** -k) for k in ks)


def design_model_a(activation: str, quick: bool = False, logit_scale: str = "D",
                   kappa: float = LEAKY_KAPPA) -> tuple[Line, ...]:
    """The Model A lines for one activation (sizes chosen so the default report of all three
    activations takes about a minute of float64 iteration on one core; ``quick``: seconds)."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"unknown activation {activation!r}")
    kappa = kappa if activation == "leaky" else 0.1
    lim = lambda D, K: _eta_limit(D, K, activation, kappa, logit_scale)  # noqa: E731
    base = (("activation", activation), ("kappa", kappa), ("logit_scale", logit_scale))

    def line(claim, factor, values, multiple=None, **fixed):
        return Line(claim, factor, tuple(values), base + tuple(sorted(fixed.items())), activation, multiple)

    q = quick
    d_tstar = (8, 12, 16, 24, 32) if q else (8, 11, 16, 23, 32, 45, 64)
    d_loss = (8, 11, 16) if q else (8, 11, 16, 23, 32)
    m = 8 if q else 16
    return (
        line("A.t1", "eta", _geometric(lim(16, 2), range(1, 6 if q else 8)), D=16, K=2, vstar_norm2=1.0),
        line("A.Tstar", "D", d_tstar, K=2, vstar_norm2=1.0, eta=lim(d_tstar[-1], 2) / 2),
        line("A.Tstar", "K", (4, 2, 1) if q else (8, 4, 2, 1), D=16 if q else 32, vstar_norm2=1.0,
             eta=lim(16 if q else 32, 1) / 2),
        line("A.Tstar", "eta", _geometric(lim(16, 2), range(1, 5 if q else 7)), D=16, K=2, vstar_norm2=1.0),
        line("A.Tstar", "vstar_norm2", tuple(2.0 ** k for k in (range(2, -3, -1) if q else range(3, -4, -1))),
             D=16, K=2, eta=lim(16, 2) / 2),
        line("A.loss", "D", d_loss, m, K=2, vstar_norm2=1.0, eta=lim(d_loss[-1], 2) / 2),
        line("A.loss", "K", (4, 2, 1) if q else (8, 4, 2, 1), m, D=16 if q else 24, vstar_norm2=1.0,
             eta=lim(16 if q else 24, 1) / 2),
        line("A.loss", "eta", _geometric(lim(16, 2), range(1, 4 if q else 6)), m, D=16, K=2, vstar_norm2=1.0),
        line("A.loss", "T", tuple(2 ** k for k in range(4 if q else 5)), m, D=16, K=2, vstar_norm2=1.0,
             eta=lim(16, 2) / 2),
    )


MODEL_B_SPECTRUM = (3, 1, 1, 1)


def design_model_b(quick: bool = False) -> tuple[Line, ...]:
    """Model B lines: one trajectory per model (Task 2 spectrum (3,1,1,1), d = 4, n = 6, exact
    expectations, alpha0 = 0, beta0 = 1), sampled at t = T 2^-k, with eta = 2 (the asymptotic
    variable is eta t: a larger step reaches the asymptotic regime in fewer steps; the looped
    model with L = 2 costs about 2 ms per step)."""
    T_ln, T_loop = (20000, 500) if quick else (20000, 2000)
    ln = (("model", "ln"), ("eta", 2.0), ("steps", T_ln))
    loop = (("model", "looped"), ("L", 2), ("eta", 2.0), ("steps", T_loop))
    pts = lambda T: tuple(T // 2 ** k for k in range(6, -1, -1))  # noqa: E731
    return tuple(Line(c, "t", pts(dict(f)["steps"]), f) for c, f in (
        ("B.ln.gamma", ln), ("B.ln.alpha", ln), ("B.ln.beta", ln),
        ("B.looped.rho", loop), ("B.looped.w", loop), ("B.looped.v", loop)))


# ------------------------------------------------------------------------------------------
# Running the sweeps
# ------------------------------------------------------------------------------------------

def _config(line: Line, value):
    from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig

    fields = line.settings
    if line.factor in ("D", "K", "eta", "vstar_norm2"):
        fields[line.factor] = value
    return TeacherConfig(**fields)


RUNNERS = ("run", "batch")


def simulate(config, steps: int, record: Sequence[int] = (), runner: str = "run") -> dict:
    """``steps`` GD updates of one Model A configuration: {"t1", "T_star", "loss" (final),
    "record": {t: loss}}. ``runner``: "run" (:func:`rdyn.reduced_dynamics.model_a.dynamics.run`, compiled
    once per activation in a few seconds) or "batch" (:func:`rdyn.reduced_dynamics.model_a.batch.run_batch`,
    same generated step, rows equal bit for bit; its parallel kernel only pays off for many
    configurations at once, and the points of a line are run one after the other because each
    budget is extrapolated from the previous points)."""
    if runner == "batch":
        from rdyn.reduced_dynamics.model_a.batch import run_batch

        rows = {T: run_batch([config], T).rows[0] for T in sorted(set(record) | {steps})}
        row = rows[steps]
        return {"t1": row["t1"], "T_star": row["T_star"], "loss": row["loss"],
                "record": {T: r["loss"] for T, r in rows.items()}}
    if runner != "run":
        raise ValueError(f"unknown runner {runner!r}")
    from rdyn.reduced_dynamics.model_a.dynamics import run

    result = run(config, steps=steps, record=record)
    return {"t1": result.t1, "T_star": result.T_star, "loss": float(result.final.loss),
            "record": {T: float(r.loss) for T, r in result.record.items()}}


def find_event(config, event: str, guess: int | None = None, growth: int = 4,
               limit: int = 10**9, runner: str = "run") -> tuple[int, int]:
    """``t1`` or ``T*`` of one configuration: a first budget of ``1.3 guess`` steps (or 2000),
    multiplied by ``growth`` until the event is reached. Returns (event time, steps spent)."""
    if guess is None and event == "T_star" and runner == "run":
        from rdyn.reduced_dynamics.model_a.dynamics import run

        result = run(config)  # no budget: stops at max(2 T*, 1000)
        return result.T_star, result.steps
    budget = max(2000, int(1.3 * guess) + 100) if guess else 2000
    spent = 0
    while True:
        budget = min(budget, limit)
        value = simulate(config, budget, runner=runner)[event]
        spent += budget
        if value is not None:
            return value, spent
        if budget >= limit:
            raise RuntimeError(f"{event} not reached within {limit} steps for {config}")
        budget *= growth


def _extrapolate(x: list, y: list, x_next: float) -> float | None:
    if len(y) < 2:
        return None if not y else y[-1] * 2.0
    slope = math.log(y[-1] / y[-2]) / math.log(x[-1] / x[-2])
    return y[-1] * (x_next / x[-1]) ** slope


def event_line(line: Line, event: str, runner: str = "run") -> tuple[list, list, int]:
    """Event times (``t1`` or ``T_star``) along a line, in the line's order. Points are run
    cheapest first (increasing ``value ** claimed exponent``), each point's first budget
    extrapolating the previous two. Returns (x, events, steps spent)."""
    a = line.claimed_exponent
    order = sorted(range(len(line.values)), key=lambda i: float(line.values[i]) ** a)
    xs, ys, spent = [], [], 0
    for i in order:
        v = float(line.values[i])
        guess = _extrapolate(xs, ys, v)
        value, cost = find_event(_config(line, line.values[i]), event, guess, runner=runner)
        xs.append(v)
        ys.append(value)
        spent += cost
    by_index = dict(zip(order, ys))
    return [float(v) for v in line.values], [by_index[i] for i in range(len(order))], spent


def late_loss_line(line: Line, runner: str = "run") -> tuple[list, list, int]:
    """``A.loss`` lines. Factor D, K or eta: ``T L(T)`` at ``T = m T*``; factor T: ``L(T)``
    at ``T = m T* v`` (one run, losses recorded at those steps)."""
    m = line.multiple
    if line.factor == "T":
        cfg = _config(line, None)
        T_star, spent = find_event(cfg, "T_star", runner=runner)
        Ts = [int(m * T_star * v) for v in line.values]
        out = simulate(cfg, Ts[-1], record=Ts, runner=runner)
        return [float(T) for T in Ts], [out["record"][T] for T in Ts], spent + Ts[-1]
    _, stars, spent = event_line(line, "T_star", runner)
    xs, ys = [], []
    for v, T_star in zip(line.values, stars):
        T = m * T_star
        xs.append(float(v))
        ys.append(T * simulate(_config(line, v), T, runner=runner)["loss"])
        spent += T
    return xs, ys, spent


_B_CACHE: dict = {}


def model_b_line(line: Line) -> tuple[list, list, int]:
    """Model B: the quantity at t = values along one collapsed trajectory (cached per model)."""
    from rdyn.reduced_dynamics.model_b import run as mb

    s = line.settings
    key = line.fixed
    if key not in _B_CACHE:
        cfg = mb.Config(model=s["model"], data="spectrum", d=len(MODEL_B_SPECTRUM),
                        n=sum(MODEL_B_SPECTRUM), spectrum=MODEL_B_SPECTRUM, eta=s["eta"],
                        steps=s["steps"], L=s.get("L", 10))
        _B_CACHE.clear()
        _B_CACHE[key] = mb.run(cfg)
    tr = _B_CACHE[key]
    series = {"gamma": tr.gamma, "rho": tr.gamma, "alpha": tr.alpha, "w": tr.alpha,
              "beta": tr.beta, "v": tr.beta}[CLAIMS[line.claim].quantity]
    xs = [float(t) for t in line.values]
    return xs, [abs(float(series[int(t)])) for t in line.values], 0


def model_b_asymptotic_constant(line: Line) -> float:
    """The derived growth constant of the claim (gamma^3 ~ 12 eta Upsilon_3 t / d, LN;
    rho^2 ~ 4 eta Upsilon_1 t / d, looped; alpha ~ beta ~ sqrt(gamma), w ~ v ~ sqrt(rho))."""
    s = line.settings
    key = line.fixed
    model_b_line(line)
    tr = _B_CACHE[key]
    d = len(MODEL_B_SPECTRUM)
    q = CLAIMS[line.claim].quantity
    if s["model"] == "ln":
        g = (12 * s["eta"] * float(tr.constants.upsilon3) / d) ** (1 / 3)
        return g if q == "gamma" else math.sqrt(g)
    r = (4 * s["eta"] * float(tr.upsilon1) / d) ** 0.5
    return r if q == "rho" else math.sqrt(r)


def measure(line: Line, runner: str = "run") -> tuple[list, list, int]:
    """(factor values, quantity values, GD steps spent) for one line. (K must stay below D/2:
    p(0) = 1/D, so T* = 0 once 1/(2K) <= 1/D.)"""
    q = CLAIMS[line.claim].quantity
    if q in ("t1", "T_star"):
        return event_line(line, q, runner)
    if q == "loss":
        return late_loss_line(line, runner)
    return model_b_line(line)


# ------------------------------------------------------------------------------------------
# Extension beyond iteration: the eta -> 0 limit on the slow manifold
# ------------------------------------------------------------------------------------------

EXTEND_TOP = 2**20  # largest D of an extended line (quick: 2**14)
EXTEND_TOP_QUICK = 2**14
EXTENDABLE = (("A.Tstar", "D"),)  # (claim, factor) of the lines ``extend`` continues


@dataclass(frozen=True)
class Extension:
    """A ``T*`` D-line continued beyond what iteration reaches by the slow-manifold limit
    (:func:`rdyn.reduced_dynamics.model_a.limits.flow.slow_limits`, float64): ``T* ~ tau_star / eta`` at the
    line's eta, a real number (the eta -> 0 limit, not a step count).

    ``x``, ``y``, ``source``: the whole line, the iterated points (``"map"``, exact integer
    events) followed by the extension (``"slow_manifold"``); ``t1``: ``tau1 / eta`` of the
    extension points. ``overlap``: (D, map T*, slow tau_star/eta, relative difference) at every
    iterated D. ``fit``, ``local_exponent``: over the extension points only (reported apart
    from the iterated fit); ``derived_exponent``:
    :func:`rdyn.reduced_dynamics.model_a.limits.asymptotics.tau_star_exponent`."""

    x: tuple[float, ...]
    y: tuple[float, ...]
    source: tuple[str, ...]
    t1: tuple[float, ...]
    overlap: tuple[tuple[float, float, float, float], ...]
    fit: Fit
    local_exponent: float
    derived_exponent: float
    seconds: float

    @property
    def exponent(self) -> float:
        return self.fit.exponents[0]

    @property
    def max_overlap_difference(self) -> float:
        return max(abs(o[3]) for o in self.overlap)

    def as_dict(self) -> dict:
        return {"method": "slow_manifold", "x": list(self.x), "y": list(self.y),
                "source": list(self.source), "t1_extension": list(self.t1),
                "overlap": [{"D": d, "map": m, "limit": s, "relative_difference": r}
                            for d, m, s, r in self.overlap],
                "max_overlap_difference": self.max_overlap_difference,
                "range": [min(x for x, s in zip(self.x, self.source) if s != "map"), max(self.x)],
                "exponent": self.exponent, "exponent_ci": list(self.fit.exponent_ci[0]),
                "local_exponent": self.local_exponent,
                "derived_exponent": self.derived_exponent, "seconds": self.seconds,
                "note": "extension points: T* = tau_star/eta, the eta -> 0 (slow-manifold) limit "
                        "at the line's eta, a real number, not an iterated step count"}


def extension_values(line: Line, quick: bool = False) -> tuple[int, ...]:
    """Powers of two above the line's largest iterated D, up to ``EXTEND_TOP``."""
    top = EXTEND_TOP_QUICK if quick else EXTEND_TOP
    start = int(math.floor(math.log2(max(line.values)))) + 1
    return tuple(2**k for k in range(start, int(math.log2(top)) + 1))


def extend_line(line: Line, x: Sequence[float], y: Sequence[float], quick: bool = False,
                level: float = LEVEL) -> Extension:
    """Continue an iterated ``T*`` D-line (``x``, ``y``: its map events) by the slow-manifold
    limit: ``tau_star / eta`` at :func:`extension_values`, and at the iterated D for the
    overlap comparison."""
    from rdyn.reduced_dynamics.model_a.limits.asymptotics import tau_star_exponent
    from rdyn.reduced_dynamics.model_a.limits.flow import slow_limits

    if (line.claim, line.factor) not in EXTENDABLE:
        raise ValueError(f"line {line.claim} vs {line.factor} cannot be extended")
    start = time.perf_counter()
    limit = lambda D: slow_limits(_config(line, int(D)))  # noqa: E731
    overlap = []
    for D, T in zip(x, y):
        s = float(limit(D).T_star)
        overlap.append((float(D), float(T), s, s / float(T) - 1))
    xs, ys, t1s = [], [], []
    for D in extension_values(line, quick):
        r = limit(D)
        xs.append(float(D))
        ys.append(float(r.T_star))
        t1s.append(float(r.t1))
    fit = fit_power_law(xs, ys, level)
    return Extension(tuple(float(v) for v in x) + tuple(xs), tuple(float(v) for v in y) + tuple(ys),
                     ("map",) * len(x) + ("slow_manifold",) * len(xs), tuple(t1s), tuple(overlap),
                     fit, local_exponent(xs, ys),
                     float(tau_star_exponent(line.settings.get("logit_scale", "D"))),
                     time.perf_counter() - start)


# ------------------------------------------------------------------------------------------
# Results
# ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LineResult:
    """Fit of one line, with the verdict on the claimed exponent."""

    line: Line
    x: tuple[float, ...]
    y: tuple[float, ...]
    fit: Fit
    local_exponent: float
    constant: float
    constant_ci: tuple[float, float]
    constant_form: str
    verdict: str
    basis: str
    steps: int
    seconds: float
    extra: dict = field(default_factory=dict)
    extension: Extension | None = None

    @property
    def exponent(self) -> float:
        return self.fit.exponents[0]

    @property
    def exponent_ci(self) -> tuple[float, float]:
        return self.fit.exponent_ci[0]

    def as_dict(self) -> dict:
        c = CLAIMS[self.line.claim]
        return {
            "claim": c.id, "model": c.model, "source": c.source, "statement": c.statement,
            "quantity": c.quantity, "factor": self.line.factor,
            "activation": self.line.activation, "fixed": dict(self.line.fixed),
            "multiple_of_Tstar": self.line.multiple,
            "x": list(self.x), "y": list(self.y),
            "claimed_exponent": self.line.claimed_exponent,
            "exponent": self.exponent, "exponent_ci": list(self.exponent_ci),
            "exponent_se": self.fit.exponent_se[0],
            "local_exponent": self.local_exponent,
            "constant": self.constant, "constant_ci": list(self.constant_ci),
            "constant_form": self.constant_form,
            "residual_sd_log": self.fit.residual_sd, "points": self.fit.n,
            "verdict": self.verdict, "basis": self.basis,
            "steps": self.steps, "seconds": self.seconds, **self.extra,
            **({"extension": self.extension.as_dict()} if self.extension is not None else {}),
        }


def _normaliser(line: Line) -> tuple[float, str]:
    """Product of the fixed factors at their claimed exponents, and the constant's form."""
    c = CLAIMS[line.claim]
    s = line.settings
    if c.model == "A":  # fixed values as iterated (eta = None means eta_limit / 2)
        cfg = _config(line, line.values[0])
        s = {"D": cfg.D, "K": cfg.K, "eta": cfg.step_size, "vstar_norm2": cfg.vstar_norm2}
    norm = 1.0
    parts = []
    for factor, a in c.form:
        if factor == line.factor:
            parts.append(f"{FACTOR_LABELS[factor]}^a")
            continue
        if c.quantity == "loss" and factor == "T":
            parts.append("T^-1")  # T L(T) at T = m T*, or the T line itself
            continue
        norm *= float(s[factor]) ** a
        parts.append(f"{FACTOR_LABELS[factor]}^{a:g}")
    return norm, f"{c.quantity} = C * " + " * ".join(parts)


def analyse(line: Line, x: Sequence[float], y: Sequence[float], steps: int = 0,
            seconds: float = 0.0, level: float = LEVEL) -> LineResult:
    """Fit ``y = C' x^a`` and report ``C = C' / normaliser`` (see module docstring)."""
    fit = fit_power_law(x, y, level)
    local = local_exponent(x, y)
    norm, form = _normaliser(line)
    lo, hi = fit.constant_ci
    v, basis = verdict(line.claimed_exponent, fit.exponents[0], fit.exponent_ci[0], local)
    extra = {}
    if CLAIMS[line.claim].model == "B":
        extra["derived_asymptotic_constant"] = model_b_asymptotic_constant(line)
    return LineResult(line, tuple(float(v) for v in x), tuple(float(v) for v in y), fit, local,
                      fit.constant / norm, (lo / norm, hi / norm), form, v, basis, steps, seconds,
                      extra)


def run_line(line: Line, runner: str = "run", extend: bool = False,
             quick: bool = False) -> LineResult:
    """Measure and fit one line; ``extend``: continue a ``T*`` D-line by the slow-manifold
    limit (:func:`extend_line`; other lines are unchanged)."""
    import dataclasses

    start = time.perf_counter()
    x, y, steps = measure(line, runner)
    result = analyse(line, x, y, steps, time.perf_counter() - start)
    if extend and (line.claim, line.factor) in EXTENDABLE:
        result = dataclasses.replace(result, extension=extend_line(line, x, y, quick))
    return result


def design(model: str = "all", activations: Sequence[str] = ACTIVATIONS, quick: bool = False,
           logit_scale: str = "D", kappa: float = LEAKY_KAPPA) -> tuple[Line, ...]:
    """Every line of the report (Model A per activation, then Model B)."""
    lines: list[Line] = []
    if model in ("A", "all"):
        for a in activations:
            lines += design_model_a(a, quick, logit_scale, kappa)
    if model in ("B", "all"):
        lines += design_model_b(quick)
    return tuple(lines)


def report(model: str = "all", activations: Sequence[str] = ACTIVATIONS, quick: bool = False,
           logit_scale: str = "D", kappa: float = LEAKY_KAPPA,
           progress: Callable[[str], None] | None = None, runner: str = "run",
           extend: bool = False) -> tuple[LineResult, ...]:
    """Run and fit every line of :func:`design` (``extend``: see :func:`run_line`)."""
    lines = design(model, activations, quick, logit_scale, kappa)
    out = []
    for i, line in enumerate(lines, 1):
        if progress is not None:
            progress(f"[{i}/{len(lines)}] {line.claim} vs {line.factor}"
                     + (f" ({line.activation})" if line.activation else ""))
        out.append(run_line(line, runner, extend, quick))
    return tuple(out)


# ------------------------------------------------------------------------------------------
# Formatting
# ------------------------------------------------------------------------------------------

def _g(v: float, digits: int = 3) -> str:
    if v is None or not math.isfinite(v):
        return "inf" if v == math.inf else ("-inf" if v == -math.inf else "nan")
    return f"{v:.{digits}g}"


def format_table(results: Sequence[LineResult]) -> str:
    """A plain-text table: claim, quantity, factor, claimed / fitted exponent [95% CI], local
    exponent at the asymptotic end, constant C [95% CI], verdict."""
    header = ("claim", "act.", "factor", "claimed", "fitted [95% CI]", "local", "C [95% CI]", "verdict")
    rows = []
    for r in results:
        lo, hi = r.exponent_ci
        clo, chi = r.constant_ci
        act = {"identity": "id", "relu": "relu", "leaky": "leaky", None: "-"}[r.line.activation]
        rows.append((r.line.claim, act, FACTOR_LABELS[r.line.factor], _g(r.line.claimed_exponent),
                     f"{r.exponent:.3f} [{lo:.3f}, {hi:.3f}]", f"{r.local_exponent:.3f}",
                     f"{_g(r.constant)} [{_g(clo)}, {_g(chi)}]",
                     r.verdict + (f" ({r.basis})" if r.basis else "")))
    widths = [max(len(str(row[i])) for row in [header] + rows) for i in range(len(header))]
    fmt = lambda row: "  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip()  # noqa: E731
    lines = [fmt(header), fmt(tuple("-" * w for w in widths))] + [fmt(r) for r in rows]
    lines.append("")
    claims = list(dict.fromkeys(r.line.claim for r in results))
    lines += [f"{cid}: {CLAIMS[cid].statement}" for cid in claims]
    lines.append("C: prefactor of the claimed form with the varied factor's exponent replaced by "
                 "the fitted one; 95% t-intervals from the residuals (deterministic data: they "
                 "measure departure from a pure power law); local: log-log slope at the "
                 "asymptotic end; confirmed: claim inside an interval of half-width <= 10% of it, or local within 10%.")
    extended = [r for r in results if r.extension is not None]
    if extended:
        lines += ["", "Extended beyond iteration (slow-manifold limit T* = tau_star/eta at the line's "
                  "eta: real numbers, not step counts; fit over the extension points only):"]
        for r in extended:
            e = r.extension
            lo, hi = e.fit.exponent_ci[0]
            D_ext = [x for x, s in zip(e.x, e.source) if s != "map"]
            lines.append(
                f"  {r.line.claim} vs D ({r.line.activation}, logits/{r.line.settings.get('logit_scale', 'D')}): "
                f"map D={_g(min(r.x))}..{_g(max(r.x))}, slow D={D_ext[0]:.0f}..{D_ext[-1]:.0f} "
                f"({len(D_ext)} points): fitted {e.exponent:.3f} [{lo:.3f}, {hi:.3f}], "
                f"local {e.local_exponent:.4f}, derived {e.derived_exponent:g}; "
                f"slow vs map at the iterated D: max |rel. diff| {e.max_overlap_difference:.1e}")
    return "\n".join(lines)
