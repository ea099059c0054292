"""Iterating Model A's collapsed dynamics: float64 (numba), arbitrary precision (arb, mpmath).

One event loop (:func:`_make_advance`) serves every backend: numba compiles it for float64,
and the same Python function runs on python-flint ``arb`` (``--dps``, fast) or mpmath
(independent reference). It advances the state in chunks, so a driver can show progress,
checkpoint or stop between chunks, and a batch or compiled backend only has to supply
another ``advance``.

Definitions (docs/models_and_conventions.md, "Phase boundaries"):
``t1 = min{t >= 1 : C1(t) >= t1_fraction * C1*(t)}`` (Lemma D.13, default 0.95) and
``T* = min{t >= 0 : p(t) >= tstar_attention}`` (Lemma D.16, default 1/(2K)).
``lost_at_step`` is the first t in 0..N-1 where the C1 multiplier at p(t) leaves (-1, 1).
"""
from __future__ import annotations

from contextlib import contextmanager

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Callable, ClassVar, Sequence

import numpy as np

from rdyn.derivations.generated import run_generated
from rdyn.reduced_dynamics.runs.divergence import first_diverged_step, is_diverged
from rdyn.reduced_dynamics.model_a.engine import (RunResult, StateReport, assemble,  # noqa: F401
                                                  capture_steps as _capture_steps, drive_run,
                                                  progress_bar)
from rdyn.reduced_dynamics.model_a.kernels import (eta_limit_expression, eta_limit_source, kernel_source,
                                              kernels)

# Largest step count (``--steps``, and the end of a default run that has not reached T*).
# Every step counter is a 64-bit integer (numba int64 loop, int64 event/capture arrays,
# Python ints in checkpoints and JSON), so this is a time budget, not a representation
# limit: 1e12 float64 steps take about 15 hours at 2e7 steps/s.
MAX_STEPS = 10**12
STRIP_EVERY = 32
DD_DIGITS = 31         # digits reported by the double-double backend unless dps is given
NO_EVENT = -1


@dataclass(frozen=True)
class TeacherConfig:
    """Parameters of one collapsed Model A run (symbols as in docs/models_and_conventions.md, Model A).

    ``vstar_norm2`` is ||V*||_F^2; ``sigma_prime_zero`` is sigma'(0); ``logit_scale`` is the
    softmax divisor ("D" or "sqrtD"); ``kappa`` is used by the leaky activation only.
    ``eta = None`` means half of :func:`eta_limit` (:attr:`step_size`; the API resolves it once,
    by :func:`~rdyn.reduced_dynamics.model_a.request.resolve_eta`). Refusals are
    :class:`~rdyn.derivations.fields.FieldError` naming the field (their text is
    the same for every caller).
    """

    kind: ClassVar[str] = "homogeneous"   # the family (SmoothConfig: "smooth"): dispatch on it

    D: int
    K: int
    activation: str = "relu"
    kappa: float = 0.1
    eta: float | None = None
    vstar_norm2: float = 1.0
    sigma_prime_zero: float = 1.0
    logit_scale: str = "D"

    def __post_init__(self) -> None:
        from rdyn.derivations.fields import FieldError

        for name in ("kappa", "eta", "vstar_norm2", "sigma_prime_zero"):
            value = getattr(self, name)
            if value is not None and not math.isfinite(value):
                raise FieldError(name, f"{name} must be finite, got {value}")
        if not (1 <= self.K < self.D):
            raise FieldError("K", f"need 1 <= K < D, got D={self.D}, K={self.K}")
        if self.activation not in ("identity", "relu", "leaky"):
            hint = (" (a smooth activation is not a grid value: rdyn sweep --activation "
                    f"{self.activation} runs the whole grid with it)"
                    if self.activation in ("erf", "tanh", "gelu", "softplus", "sigmoid", "expr")
                    else "")
            raise FieldError("activation", f"unknown activation {self.activation!r}{hint}")
        if not (0 <= self.kappa < 1):
            raise FieldError("kappa", f"kappa must be in [0, 1), got {self.kappa}")
        if self.eta is not None and not (self.eta > 0):
            raise FieldError("eta", f"eta must be > 0, got {self.eta}")
        if not (self.vstar_norm2 > 0):
            raise FieldError("vstar_norm2", f"||V*||_F^2 must be > 0, got {self.vstar_norm2}")
        if self.logit_scale not in ("D", "sqrtD"):
            raise FieldError("logit_scale",
                             f"logit scale must be D or sqrtD, got {self.logit_scale!r}")

    @property
    def step_size(self) -> float:
        """eta, or eta_limit/2 when None (the homogeneous rule of :func:`~rdyn.
        reduced_dynamics.model_a.request.resolve_eta`)."""
        return self.eta if self.eta is not None else eta_limit(self) / 2

    def exact_step_size(self):
        """eta as an exact sympy number: the given float's decimal form, or eta_limit/2."""
        import sympy as sp

        if self.eta is not None:
            return sp.Rational(repr(self.eta))
        return eta_limit_exact(self) / 2


@dataclass(frozen=True)
class Thresholds:
    """Phase thresholds: C1 >= t1_fraction * C1* (t1) and p >= tstar_attention (T*)."""

    t1_fraction: float = 0.95
    tstar_attention: float | None = None  # None: 1/(2K)

    def attention(self, K: int) -> float:
        return 1.0 / (2 * K) if self.tstar_attention is None else self.tstar_attention


def attention_crossing(config: TeacherConfig, level: float) -> float:
    """The value of C2 + C3 at which p = 1/(K + (D-K) exp(-(C2+C3)/scale)) reaches ``level``
    (p is increasing in C2 + C3); +inf if p never reaches it (level >= 1/K)."""
    room = 1.0 / level - config.K
    if room <= 0:
        return math.inf
    scale = config.D if config.logit_scale == "D" else math.sqrt(config.D)
    return -scale * math.log(room / (config.D - config.K))


def eta_limit_exact(config: TeacherConfig):
    """Supremum of step sizes keeping the C1 multiplier in (-1, 1) for p in [1/D, 1/K]
    (derived: 2K / (D E[sigma(g)^2])), exact (kappa read as its decimal form)."""
    import sympy as sp

    from rdyn.derivations.model_a import collapsed as ma

    expr = eta_limit_expression(config.activation)
    return sp.nsimplify(expr.subs({ma.D: config.D, ma.K: config.K,
                                   ma.kappa: sp.Rational(repr(config.kappa))}))


@lru_cache(maxsize=None)
def _eta_limit_function(activation: str) -> Callable:
    namespace = {"F": math, "R": Fraction}
    run_generated(eta_limit_source(activation), f"eta_limit [{activation}]", namespace)
    return namespace["eta_limit"]


def eta_limit_fraction(config: TeacherConfig):
    """:func:`eta_limit_exact` as a ``fractions.Fraction`` (the same exact value, computed
    from the derived expression printed once into the source cache: no sympy when warm)."""
    value = _eta_limit_function(config.activation)(
        Fraction(config.D), Fraction(config.K), Fraction(repr(config.kappa)))
    return Fraction(value)


def eta_limit(config: TeacherConfig) -> float:
    """:func:`eta_limit_exact` in float64 (correctly rounded, as ``float`` of the exact value)."""
    return float(eta_limit_fraction(config))


# --------------------------------------------------------------------------------------------
# The event loop, written once; numba compiles it for float64.
# --------------------------------------------------------------------------------------------

def _make_advance(step: Callable, attention: Callable, c1_star: Callable,
                  multiplier: Callable) -> Callable:
    def advance(state, t, n, c, capture_steps, capture_out, cursor, events, settings):
        """Advance ``state`` (C1, C2, C3 at step t) by up to n steps; ``c`` = prepare(...).

        events = [t1, T_star, lost_at_step, end] (-1: not yet); settings = [t1_fraction,
        tstar_attention, check_stability, default_end, prefilter]: p is only evaluated once
        C2 + C3 >= prefilter (a bound a little below the exact crossing). Returns the new t.
        """
        C1 = state[0]
        C2 = state[1]
        C3 = state[2]
        for _ in range(n):
            if events[0] < 0 and t >= 1 and C1 >= settings[0] * c1_star(C2, C3, c):
                events[0] = t
            if events[1] < 0 and C2 + C3 >= settings[4] and attention(C2, C3, c) >= settings[1]:
                events[1] = t
                if settings[3] > 0:
                    events[3] = max(2 * t, 1000)
            if settings[2] > 0 and events[2] < 0 and t < events[3]:
                m = multiplier(C2, C3, c)
                if not (-1 < m < 1):
                    events[2] = t
            while cursor[0] < len(capture_steps) and capture_steps[cursor[0]] == t:
                capture_out[cursor[0], 0] = C1
                capture_out[cursor[0], 1] = C2
                capture_out[cursor[0], 2] = C3
                cursor[0] += 1
            if t >= events[3]:
                break
            C1, C2, C3 = step(C1, C2, C3, c)
            t += 1
        state[0] = C1
        state[1] = C2
        state[2] = C3
        return t

    return advance


_COMPILED_KERNELS = ("step", "attention", "c1_star", "multiplier")


def advance_module_source(activation: str, scale: str) -> str:
    """The module behind :func:`compiled_advance`: the generated kernels and the event loop
    of :func:`_make_advance`, each compiled by :func:`rdyn.reduced_dynamics.runs.kernel_cache.njit`
    (numba's default options, as ``numba.njit``), with the kernels as module globals."""
    from rdyn.reduced_dynamics.runs.kernel_cache import nested_function_source

    body = kernel_source(activation, scale)
    for name in _COMPILED_KERNELS:
        body = body.replace(f"\ndef {name}(", f"\n@njit\ndef {name}(")
    return ("import math as F\n\nfrom rdyn.reduced_dynamics.runs.kernel_cache import njit\n\nR = float\n\n"
            + body + "\n\n@njit\n" + nested_function_source(_make_advance, "advance"))


@lru_cache(maxsize=None)
def compiled_advance(activation: str, scale: str) -> Callable:
    """The float64 event loop, compiled by numba once and cached on disk
    (:mod:`rdyn.reduced_dynamics.runs.kernel_cache`; a warm process loads the machine code)."""
    from rdyn.reduced_dynamics.runs import kernel_cache

    source = kernel_cache.cached_source("model_a_advance", (activation, scale),
                                        lambda: advance_module_source(activation, scale))
    return kernel_cache.load_module("model_a_advance", source, "float64 Model A kernel").advance


def python_advance(activation: str, scale: str, backend: str) -> Callable:
    """The event loop on arb / mpmath numbers (the driver drops ball radii between chunks)."""
    k = kernels(activation, scale, backend)
    return _make_advance(k.step, k.attention, k.c1_star, k.multiplier)


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------

class _Numbers:
    """Conversion between Python floats / decimal strings and a backend's numbers."""

    def __init__(self, backend: str, dps: int | None):
        self.backend = backend
        self.dps = dps
        if backend == "arb":
            import flint

            self.make = lambda x: flint.arb(repr(x)) if isinstance(x, float) else flint.arb(x)
            self.strip = lambda x: x.mid()
        elif backend == "mpmath":
            import mpmath

            self.make = lambda x: mpmath.mpf(repr(x)) if isinstance(x, float) else mpmath.mpf(x)
            self.strip = lambda x: x
        else:
            self.make = float
            self.strip = lambda x: x

    def exact(self, value):
        """A sympy number at this backend's precision."""
        import sympy as sp

        return self.make(str(sp.N(value, self.dps + 20)))

    def to_mpf(self, x):
        if self.backend == "float64":
            return float(x)
        import mpmath

        if self.backend == "arb":
            return mpmath.mpf(x.mid().str(self.dps + 10, radius=False))
        return mpmath.mpf(x) if self.backend == "mpmath" else float(x)


def run_identity(config: TeacherConfig, steps: int | None, record: Sequence[int],
                 thresholds: Thresholds, backend: str, dps: int | None) -> dict:
    """Everything that determines a run's trajectory and report (the checkpoint identity).
    Keys are named after the ``rdyn teacher`` options."""
    return {"D": config.D, "K": config.K, "activation": config.activation,
            "kappa": config.kappa, "eta": config.eta, "vstar_norm2": config.vstar_norm2,
            "sigma_prime_zero": config.sigma_prime_zero, "logit_scale": config.logit_scale,
            "steps": steps, "record": sorted({int(s) for s in record}),
            "t1_fraction": thresholds.t1_fraction, "tstar_attention": thresholds.tstar_attention,
            "backend": backend, "dps": dps if backend != "float64" else None}


@dataclass
class _Loop:
    """The complete state of the driver loop between two chunks (what a checkpoint holds)."""

    t: int
    state: object          # float64: array (3,); arb / mpmath: list of 3 numbers
    events: object         # [t1, T_star, lost_at_step, end]
    cursor: object         # [index of the next capture step]
    capture_out: np.ndarray
    fixed_point_at: int | None = None
    diverged_at: int | None = None   # first step whose state diverged (divergence.py); the
    # loop then holds the state of the step before
    done: bool = False   # the run has ended (the end step, a fixed point or divergence); a
    # loaded checkpoint starts not done: its first chunk finds the end again

    @property
    def stop_at(self) -> int:
        """The step the run stops at (the engine's protocol, :mod:`.engine`)."""
        return int(self.events[3])

    def copy(self) -> "_Loop":
        return _Loop(self.t, self.state.copy(), self.events.copy(), self.cursor.copy(),
                     self.capture_out,  # entries past ``cursor`` are rewritten identically
                     self.fixed_point_at, self.diverged_at, self.done)


def _same_state(a, b) -> bool:
    """Bitwise equality of two loop states (arrays, or lists of mpf / arb midpoints)."""
    if isinstance(a, np.ndarray):
        return bool(np.array_equal(a, b))
    return all(x == y for x, y in zip(a, b))


def _save_loop(path: str, identity: dict, loop: _Loop, capture_steps) -> None:
    from rdyn.reduced_dynamics.runs import checkpoint
    from rdyn.reduced_dynamics._version import __version__

    exact = identity["backend"] not in ("float64", "dd")
    arrays = {
        "state": checkpoint.exact_array(loop.state) if exact else np.asarray(loop.state),
        "capture_out": checkpoint.exact_array(loop.capture_out) if exact else loop.capture_out,
        "capture_steps": np.asarray(capture_steps, dtype=np.int64),
    }
    meta = {"t": int(loop.t), "events": [int(e) for e in loop.events],
            "cursor": int(loop.cursor[0]), "rdyn_version": __version__,
            "fixed_point_at": loop.fixed_point_at}
    checkpoint.save(path, "teacher", identity, arrays, meta)


def _load_loop(path: str, identity: dict, capture_steps) -> _Loop:
    """The loop state saved at ``path`` (CheckpointError if it does not fit ``identity``).

    ``steps`` may differ from the checkpoint's when both are given and the new value is at
    least the saved step t (a finished run is extended; the result is bit-identical to one
    run with the new ``steps``, since :func:`log_grid` is prefix-stable); ``record`` may
    differ when every new record step before t was captured."""
    from rdyn.reduced_dynamics.runs import checkpoint

    arrays, meta = checkpoint.load(path, "teacher", identity, ignore=("steps", "record"))
    backend = identity["backend"]
    saved_steps = meta["saved_identity"].get("steps")
    steps = identity["steps"]
    if saved_steps != steps and (saved_steps is None or steps is None):
        show = lambda s: "(default)" if s is None else str(s)  # noqa: E731
        raise checkpoint.CheckpointError(
            f"checkpoint {path} was written with a different steps: {show(saved_steps)} in the "
            f"checkpoint, {show(steps)} now (only an explicit --steps can be raised)")
    def parse():
        counters = (int(meta["t"]), [int(e) for e in meta["events"]], [int(meta["cursor"])])
        saved_capture = [int(s) for s in np.asarray(arrays["capture_steps"]).ravel()]
        if backend in ("float64", "dd"):
            state = np.array(arrays["state"], dtype=np.float64)
            saved_out = np.array(arrays["capture_out"], dtype=np.float64)
        else:
            state = list(checkpoint.from_exact_array(arrays["state"], backend))
            saved_out = checkpoint.from_exact_array(arrays["capture_out"], backend)
        return counters, saved_capture, state, saved_out

    (t, events, cursor), saved_capture, state, saved_out = checkpoint.parsed(path, parse)
    checkpoint.check_state(path, len(state) == 3 and len(events) == 4
                           and saved_out.shape[:2] == (len(saved_capture), 3),
                           _state_values(state), "C1, C2, C3")
    if steps is not None and t > steps:
        raise checkpoint.CheckpointError(
            f"checkpoint {path} is at step {t}, beyond --steps {steps}")
    if backend == "arb" and saved_steps != steps and t % STRIP_EVERY != 0:
        # a single run drops the ball radii at multiples of STRIP_EVERY only
        raise checkpoint.CheckpointError(
            f"checkpoint {path} ends at step {t}; with --dps, --steps can be raised on resume "
            f"only from a multiple of {STRIP_EVERY} steps")
    capture_steps = [int(s) for s in capture_steps]
    if saved_capture != capture_steps:  # other steps or record: map the captures done
        where = {s: i for i, s in enumerate(saved_capture)}
        capture_out = np.full((len(capture_steps),) + saved_out.shape[1:], np.nan) \
            if backend in ("float64", "dd") \
            else np.empty((len(capture_steps), 3), dtype=object)
        done = 0
        for i, s in enumerate(capture_steps):
            if s >= t:
                break
            if s not in where or where[s] >= cursor[0]:
                raise checkpoint.CheckpointError(
                    f"checkpoint {path} has no state at step {s} (record steps before step "
                    f"{t} must have been recorded by the checkpointed run)")
            capture_out[i] = saved_out[where[s]]
            done = i + 1
        cursor = [done]
    else:
        capture_out = saved_out
    if steps is not None:
        events[3] = steps
    if backend in ("float64", "dd"):
        events, cursor = np.array(events, dtype=np.int64), np.array(cursor, dtype=np.int64)
    fixed = meta.get("fixed_point_at")
    return _Loop(t, state, events, cursor, capture_out, None if fixed is None else int(fixed))


@contextmanager
def working_precision(backend: str, dps: int | None):
    """The global precisions a backend computes with, set on entry and restored on exit:
    mpmath at ``dps + 12`` digits (reported values keep every digit), python-flint at
    ``3.33 dps + 40`` bits for "arb". A run's numbers then depend on ``dps`` alone, never on
    what the process did before."""
    if backend == "float64":
        yield
        return
    import flint
    import mpmath

    old_prec = flint.ctx.prec
    try:
        with mpmath.workdps(dps + 12):
            flint.ctx.prec = int(dps * 3.33) + 40
            yield
    finally:
        flint.ctx.prec = old_prec


def run(config: TeacherConfig, steps: int | None = None, record: Sequence[int] = (),
        thresholds: Thresholds = Thresholds(), backend: str = "float64", dps: int | None = None,
        progress: bool = False, chunk: int = 2_000_000, checkpoint: str | None = None,
        checkpoint_every: float = 60.0, resume: str | None = None,
        expected_steps: int | None = None) -> RunResult:
    """Iterate the collapsed map from C1 = C2 = C3 = 0 (see :func:`_run`), at the precision
    of :func:`working_precision`, whatever the caller's mpmath / flint state.
    ``expected_steps``: the progress bar's total of a run without ``steps`` until its stop
    step is known (the estimate of :mod:`rdyn.run_time`; 2 T* from the slow-manifold limit)."""
    if backend not in ("float64", "dd", "arb", "mpmath"):
        raise ValueError(f"unknown backend {backend!r}")
    if backend == "dd" and dps is None:
        dps = DD_DIGITS
    if backend != "float64" and dps is None:
        raise ValueError("arbitrary-precision backends need dps")
    with working_precision(backend, dps):
        return _run(config, steps, record, thresholds, backend, dps, progress, chunk,
                    checkpoint, checkpoint_every, resume, expected_steps)


def run_request(request) -> RunResult:
    """:func:`run` on a typed :class:`~rdyn.reduced_dynamics.model_a.request.Request` (its
    model's config and thresholds, its numerics' backend and dps, its control's steps, record,
    checkpointing and progress): the entry point of the API."""
    model, numerics, control = request.model, request.numerics, request.control
    return run(model.config, steps=control.steps, record=control.record,
               thresholds=model.thresholds, backend=numerics.backend, dps=numerics.dps,
               progress=control.progress, checkpoint=control.checkpoint,
               checkpoint_every=control.checkpoint_every, resume=control.resume,
               expected_steps=control.expected_steps)


def _run(config: TeacherConfig, steps: int | None = None, record: Sequence[int] = (),
         thresholds: Thresholds = Thresholds(), backend: str = "float64", dps: int | None = None,
         progress: bool = False, chunk: int = 2_000_000, checkpoint: str | None = None,
         checkpoint_every: float = 60.0, resume: str | None = None,
         expected_steps: int | None = None) -> RunResult:
    """Iterate the collapsed map from C1 = C2 = C3 = 0.

    ``steps = None`` runs to T* and then as many steps again (at least 1000 steps in all,
    at most ``MAX_STEPS``); before T* it stops early if the iterates become a fixed point of
    the map as evaluated in the backend's arithmetic (then T* is never reached:
    ``fixed_point_at`` is a step at which the state is such a fixed point). ``backend``:
    "float64" (numba), "dd" (compiled double-double, 106 bits, :mod:`reduced_dynamics.
    model_a.double_double_run`; ``dps`` (default 31) only sets the digits of the reported values, which are
    evaluated from the dd state with mpmath), "arb" (python-flint midpoints at ``dps`` digits
    plus guard bits) or "mpmath" (``dps`` + 12 digits).

    ``checkpoint``: file that receives the complete loop state (:mod:`reduced_dynamics.
    runs.checkpoint`, kind "teacher", identity :func:`run_identity`) between chunks, at most every
    ``checkpoint_every`` seconds, at the end, and on KeyboardInterrupt (then re-raised as
    :class:`rdyn.reduced_dynamics.runs.checkpoint.Interrupted` carrying the saved step). ``resume``:
    continue from such a file (CheckpointError if it was written for another configuration);
    the result is bit-identical to an uninterrupted run.
    """
    if steps is not None and not (0 <= steps <= MAX_STEPS):
        raise ValueError(f"steps must be in 0..{MAX_STEPS}")
    num = _Numbers("mpmath" if backend == "dd" else backend, dps)
    identity = run_identity(config, steps, record, thresholds, backend, dps)
    if backend == "mpmath":  # set by working_precision: a function of dps alone
        import mpmath

        identity["mpmath_prec_bits"] = mpmath.mp.prec
    limit = eta_limit(config)
    prefilter = attention_crossing(config, thresholds.attention(config.K))
    prefilter -= 1e-6 * (abs(prefilter) + 1)
    eta = config.step_size
    end = steps if steps is not None else MAX_STEPS
    capture_steps = _capture_steps(end, record)
    if backend == "float64":
        advance = compiled_advance(config.activation, config.logit_scale)
        state = np.zeros(3)
        params = (config.D, config.K, eta, config.vstar_norm2, config.kappa, config.sigma_prime_zero)
        capture_out = np.full((capture_steps.shape[0], 3), np.nan)
        settings = np.array([thresholds.t1_fraction, thresholds.attention(config.K),
                             float(eta >= limit * (1 - 1e-9)), float(steps is None), prefilter])
    elif backend == "dd":
        from rdyn.reduced_dynamics.model_a import double_double_run as mdd

        advance = mdd.dd_kernels(config.activation, config.logit_scale)["advance"]
        state = np.zeros((3, 2))
        capture_out = np.full((capture_steps.shape[0], 3, 2), np.nan)
        dd_constants, settings = mdd.dd_inputs(config, thresholds)
        settings[mdd.D_STAB] = float(eta >= limit * (1 - 1e-9))
        settings[mdd.D_DEFAULT_END] = float(steps is None)
        settings[mdd.D_PRE] = prefilter
        chunk = min(chunk, 1 << 19)
        params = [num.make(config.D), num.make(config.K), num.exact(config.exact_step_size()),
                  num.make(config.vstar_norm2), num.make(config.kappa),
                  num.make(config.sigma_prime_zero)]   # the mpmath kernels report observables
    else:
        advance = python_advance(config.activation, config.logit_scale, backend)
        state = [num.make(0)] * 3
        # integer parameters as backend numbers too: D/K on Python ints would be a float
        params = [num.make(config.D), num.make(config.K), num.exact(config.exact_step_size()), num.make(config.vstar_norm2),
                  num.make(config.kappa), num.make(config.sigma_prime_zero)]
        capture_out = np.empty((capture_steps.shape[0], 3), dtype=object)
        settings = [num.make(thresholds.t1_fraction), num.make(thresholds.attention(config.K)),
                    1 if eta >= limit * (1 - 1e-9) else 0, 1 if steps is None else 0,
                    num.make(prefilter)]
        # arb midpoints: the radius from the dependency effect grows ~1.25x per step
        # (docs/numerics.md); dropping it every STRIP_EVERY steps keeps it far below the guard bits.
        # A checkpoint is only taken between chunks, so a resume keeps this phase.
        chunk = STRIP_EVERY
    events = np.array([NO_EVENT, NO_EVENT, NO_EVENT, end], dtype=np.int64)
    cursor = np.zeros(1, dtype=np.int64)
    if backend in ("arb", "mpmath"):  # plain lists: numpy scalar indexing dominates a Python loop
        events, cursor, capture_steps = events.tolist(), cursor.tolist(), capture_steps.tolist()
    k = kernels(config.activation, config.logit_scale, num.backend)
    c = k.prepare(*params)
    c_report = c
    if backend == "float64":
        c = c_report = np.array(c, dtype=np.float64)
    elif backend == "dd":
        c = dd_constants
    loop = _Loop(0, state, events, cursor, capture_out)
    if resume is not None:
        loop = _load_loop(resume, identity, capture_steps)
    long_run = steps is None or steps > {"float64": 10**6, "dd": 10**5}.get(backend, 10**4)
    bar = progress_bar(progress and long_run, steps if steps is not None else expected_steps,
                       initial=loop.t)
    loop = _iterate(advance, loop, chunk, c, capture_steps, settings,
                    strip=num.strip if backend in ("arb", "mpmath") else None, bar=bar,
                    checkpoint=checkpoint, identity=identity, save_every=checkpoint_every,
                    stop_at_fixed_point=steps is None)
    t, state, events, cursor, capture_out = (loop.t, loop.state, loop.events, loop.cursor,
                                             loop.capture_out)
    # one more pass at the final step so events at t = end (t1, T*) are seen, without stepping
    events[3] = t
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        advance(state, t, 1, c, capture_steps, capture_out, cursor, events, settings)

    def observable(f, *args):
        """f(*args); nan where float64 overflows (math.exp of a state near the divergence
        bound): reported as null, never an exception."""
        try:
            return f(*args)
        except (OverflowError, ZeroDivisionError):
            return math.nan

    def report(tt, values) -> StateReport:
        c1, c2, c3 = values
        cr = c_report
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            values = (c1, c2, c3, observable(k.attention, c2, c3, cr),
                      observable(k.c1_star, c2, c3, cr), observable(k.loss, c1, c2, c3, cr))
        return StateReport(int(tt), *(num.to_mpf(v) for v in values))

    if backend == "dd":  # observables from the dd state (hi + lo exactly) with mpmath
        from rdyn.reduced_dynamics.numerics.double_double import dd_to_mpf

        strip = dd_to_mpf
    else:  # captured arb values are reported from their midpoints (as stored in a checkpoint)
        strip = num.strip
    captured = {int(s): tuple(strip(x) for x in capture_out[i])
                for i, s in enumerate(capture_steps) if s <= t}
    return assemble(
        RunResult, config=config, eta=eta, eta_limit=limit, backend=backend, t=t,
        t1=int(events[0]) if events[0] >= 0 else None,
        T_star=int(events[1]) if events[1] >= 0 else None,
        lost=int(events[2]) if events[2] >= 0 else None, captured=captured,
        final_state=tuple(strip(x) for x in state), record=record, report=report,
        loss=lambda values: report(0, values).loss, fixed_point_at=loop.fixed_point_at,
        diverged_at=None if loop.diverged_at is None else int(loop.diverged_at))


def _iterate(advance: Callable, loop: _Loop, chunk: int, c, capture_steps, settings,
             strip: Callable | None, bar, checkpoint: str | None, identity: dict,
             save_every: float, stop_at_fixed_point: bool = False) -> _Loop:
    """Advance ``loop`` chunk by chunk until the end step; returns the final loop state.

    The loop is the one Model A engine's (:func:`~rdyn.reduced_dynamics.model_a.engine.
    drive_run`), one chunk being the homogeneous provider's below: the ``advance`` kernel,
    divergence and the fixed-point stop. ``strip`` (arb) drops ball radii after every chunk.
    With a ``checkpoint`` path the loop is saved at most every ``save_every`` seconds between
    chunks, at the end, and on KeyboardInterrupt (the last complete chunk boundary; then
    :class:`~rdyn.reduced_dynamics.runs.checkpoint.Interrupted` is raised).

    ``stop_at_fixed_point`` (default runs): when a whole chunk before T* leaves the state
    bit-identical and one more step does too, the state is a fixed point of the map in this
    arithmetic, every later step is the same state and T* can never be reached: the loop
    stops there and sets ``loop.fixed_point_at``.
    """
    def chunk_of(loop: _Loop, n: int) -> _Loop:
        """One chunk: the ``advance`` kernel, then divergence (bisection to the last finite
        step) and the fixed-point stop; sets ``loop.done``."""
        boundary = loop.copy()
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            t_new = advance(loop.state, loop.t, n, c, capture_steps, loop.capture_out,
                            loop.cursor, loop.events, settings)
        if strip is not None:
            loop.state = [strip(x) for x in loop.state]
        if is_diverged(_state_values(loop.state)):
            loop = _last_finite(advance, boundary, t_new, c, capture_steps, settings, strip)
            loop.done = True
            return loop
        done = t_new == loop.t or t_new >= loop.events[3]
        if (stop_at_fixed_point and not done and loop.events[1] < 0
                and t_new - loop.t == n and _same_state(loop.state, boundary.state)):
            probe = loop.copy()
            probe.t = advance(probe.state, t_new, 1, c, capture_steps, probe.capture_out,
                              probe.cursor, probe.events, settings)
            if strip is not None:
                probe.state = [strip(x) for x in probe.state]
            if _same_state(probe.state, loop.state):
                loop.fixed_point_at = int(boundary.t)
                done = True
        loop.t = t_new
        loop.done = bool(done)
        return loop

    def write(path: str, loop: _Loop) -> None:
        _save_loop(path, identity, loop, capture_steps)

    return drive_run(chunk_of, write, loop, budget=MAX_STEPS, size=chunk, checkpoint=checkpoint,
                     checkpoint_every=save_every, bar=bar, bar_every=100_000)


def _state_values(state) -> list:
    """The numbers of a loop state (float64 (3,), dd (3, 2) hi/lo pairs, lists of mpf/arb)."""
    if isinstance(state, np.ndarray):
        return [state]
    return list(state)


def _last_finite(advance: Callable, boundary: "_Loop", t_bad: int, c, capture_steps, settings,
                 strip: Callable | None) -> "_Loop":
    """The loop at the step before the first diverged one (``diverged_at`` set), found by
    bisection from ``boundary`` (finite) to ``t_bad`` (diverged)."""
    def run_to(step: int) -> "_Loop":
        probe = boundary.copy()
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            probe.t = advance(probe.state, probe.t, step - probe.t, c, capture_steps,
                              probe.capture_out, probe.cursor, probe.events, settings)
        if strip is not None:
            probe.state = [strip(x) for x in probe.state]
        return probe

    def diverged_after(step: int) -> tuple[int, bool]:
        probe = run_to(step)
        return probe.t, is_diverged(_state_values(probe.state))

    bad = first_diverged_step(diverged_after, int(boundary.t), int(t_bad))
    loop = run_to(bad - 1)
    loop.diverged_at = bad
    return loop
