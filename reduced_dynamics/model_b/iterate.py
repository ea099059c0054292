"""Iterating Model B's collapsed recursion on one rule (exact or one Monte Carlo sample).

``alpha' = alpha - eta beta F(gamma)``, ``beta' = beta - eta alpha F(gamma)``, simultaneous, with
``F = L'(gamma)/d`` (derived in :mod:`rdyn.derivations.model_b`). QMC runs many such trajectories
(:mod:`rdyn.reduced_dynamics.model_b.qmc`); :func:`rdyn.reduced_dynamics.model_b.run.run` chooses.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import math
from typing import Any, Callable

import mpmath
import numpy as np

from rdyn.reduced_dynamics.runs.driver import StepLines, drive
from rdyn.reduced_dynamics.runs.divergence import is_diverged

from rdyn.reduced_dynamics.model_b.config import Config, exact_moments_only, resolve_expectation
from rdyn.reduced_dynamics.model_b.constants import Constants, constants, gaussian_constants
from rdyn.reduced_dynamics.model_b.exact import ExactUnavailable, exact_rule, uses_gaussian_route
from rdyn.reduced_dynamics.model_b.gaussian_route import GaussianRoute
from rdyn.reduced_dynamics.model_b.looped import looped_terms, looped_two_level, looped_two_level_step, two_level_exact, upsilon1, upsilon1_two_level
from rdyn.reduced_dynamics.model_b.rule import NullContext, SpectralRule, sqrt_elementwise
from rdyn.reduced_dynamics.model_b.sampling import monte_carlo_rule
from rdyn.reduced_dynamics.model_b.series import SERIES, load_series, run_identity, save_series
from rdyn.reduced_dynamics.model_b.terms import ln_terms


@dataclass
class Trajectory:
    """Iterates t = 0..steps (alpha, beta, gamma) and loss at each step."""
    alpha: list
    beta: list
    gamma: list
    loss: list
    F: list
    std_error: float | None
    expectation: str
    constants: Constants
    gamma_star: Any = None
    upsilon1: Any = None
    extras: dict = field(default_factory=dict)
    # the first step whose state (alpha, beta, gamma) or loss diverged (divergence.py): the
    # series then end at the step before (or hold step 0 alone when it diverged at step 0)
    diverged_at_step: int | None = None


def build_rule(cfg: Config) -> SpectralRule | GaussianRoute:
    """The rule of an exact or one-sample Monte Carlo run (qmc:
    :func:`rdyn.reduced_dynamics.model_b.qmc.run_replicas`). Exact Task 2 runs use
    :func:`exact_rule` where it exists (single layers r <= MAX_EXACT_LEVELS within its node
    budget, looped r <= 2) and the Gaussian route otherwise (:func:`uses_gaussian_route`)."""
    kind = resolve_expectation(cfg)
    if kind == "exact" and cfg.data == "spectrum":
        if uses_gaussian_route(cfg.spectrum, cfg.model):
            return GaussianRoute(cfg.spectrum, cfg.dps, cfg.L if cfg.model == "looped" else None)
        try:
            return exact_rule(cfg.spectrum, cfg.dps)
        except ExactUnavailable:
            if cfg.model == "looped":
                raise
            return GaussianRoute(cfg.spectrum, cfg.dps, None)
    if kind == "qmc":
        raise ValueError("qmc expectations run R trajectories: use rdyn.reduced_dynamics.model_b.qmc.run_replicas")
    return monte_carlo_rule(cfg.data, cfg.d, cfg.n, cfg.spectrum, cfg.samples, cfg.seed)


def _num(x, mp: bool):
    return mpmath.mpf(x) if mp else float(x)


def step_terms(cfg: Config, rule: SpectralRule, const: Constants) -> Callable:
    """``g -> (loss, F, per-sample loss or None)`` for the chosen model."""
    d = cfg.d
    if isinstance(rule, GaussianRoute) and cfg.model == "ln":
        def f(g):
            loss, dl = rule.ln_means(g)
            return loss, dl / d, None
    elif isinstance(rule, GaussianRoute) and cfg.model == "looped":
        def f(g):
            G, dG = rule.looped_means(g)
            return G, dG / d, None
    elif cfg.model == "ln" and rule.mp:
        def f(g):
            loss, dl = rule.means(ln_terms, g)
            return loss, dl / d, None
    elif cfg.model == "ln":
        def f(g):
            loss_i, dl_i = ln_terms(rule, g)
            return rule.mean(loss_i), rule.mean(dl_i) / d, loss_i
    elif cfg.model == "looped" and two_level_exact(rule) and not rule.mp:
        f = looped_two_level_step(rule, cfg.L, d)
    elif cfg.model == "looped" and two_level_exact(rule):
        def f(g):
            G, dG = looped_two_level(rule, g, cfg.L)
            return G, dG / d, None
    elif cfg.model == "looped":
        def f(g):
            loss_i, dl_i = looped_terms(rule, g, cfg.L)
            return rule.mean(loss_i), rule.mean(dl_i) / d, loss_i
    else:
        mp = rule.mp or (exact_moments_only(cfg) and cfg.dps is not None)
        k1 = (mpmath.mpf(const.kappa1_exact.numerator) / const.kappa1_exact.denominator) if mp \
            else float(const.kappa1_exact)
        k2 = (mpmath.mpf(const.kappa2_exact.numerator) / const.kappa2_exact.denominator) if mp \
            else float(const.kappa2_exact)
        if cfg.target == "unnormalized":
            def f(g):
                return (1 + 2 * (g - 1) * k1 + (g - 1) ** 2 * k2,
                        2 * (k1 + (g - 1) * k2) / d, None)
        else:
            k3, k4 = const.kappa3, const.kappa4
            per_sample = rule.kind != "exact"
            if per_sample:
                m1, m2 = rule.m1, rule.m2
                sq2 = sqrt_elementwise(m2)

            def f(g):
                loss = 2 - 2 * k4 + 2 * g * (k1 - k3) + g * g * k2
                return loss, 2 * (k1 + g * k2 - k3) / d, (-2 * m1 / sq2 - 2 * g * sq2) if per_sample else None
    return f


def gamma_star(cfg: Config, const: Constants, mp: bool):
    if cfg.model != "noln":
        return None
    k1 = _num(const.kappa1_exact.numerator, mp) / const.kappa1_exact.denominator
    k2 = _num(const.kappa2_exact.numerator, mp) / const.kappa2_exact.denominator
    if cfg.target == "unnormalized":
        return 1 - k1 / k2
    return (const.kappa3 - k1) / k2


# steps per chunk of the driver (a chunk ends at a multiple: the progress line every
# PROGRESS_EVERY steps falls on a chunk's end); a checkpoint is due at most this many steps late
CHUNK = 8
PROGRESS_EVERY = 200


class _Steps:
    """The recursion as an engine of :mod:`rdyn.reduced_dynamics.runs.driver`; the state is the
    ``series`` dict (alpha, beta, gamma to step t, loss and F to t - 1; a checkpoint keeps
    its consistent part, :func:`~rdyn.reduced_dynamics.model_b.series.save_series`). A diverged
    step ends the run at the last finite step (``diverged``; no final checkpoint)."""

    def __init__(self, f: Callable, eta, steps: int, identity: dict, use_mp: bool, finished: bool):
        self.f, self.eta, self.steps, self.identity, self.use_mp = f, eta, steps, identity, use_mp
        self.finished = finished
        self.per_sample = None
        self.diverged = None

    def done(self, series: dict) -> bool:
        return self.finished

    def position(self, series: dict) -> int:
        return len(series["loss"])

    def save(self, path: str, series: dict) -> int:
        return save_series(path, self.identity, series, self.use_mp)

    def final_save(self, series: dict) -> bool:
        return self.diverged is None   # a diverged run keeps the last checkpoint

    def advance(self, series: dict, n: int) -> dict:
        f, eta = self.f, self.eta
        A, B, G, Ls, Fs = (series[name] for name in SERIES)
        a, b = A[-1], B[-1]
        t = len(Ls)
        stop = (t // n + 1) * n   # the chunk ends at a multiple of n
        while t < stop:
            try:
                with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                    loss, F, self.per_sample = f(a * b)
            except OverflowError:  # a Python float power beyond float64: diverged
                loss, F, self.per_sample = math.inf, math.inf, None
            if is_diverged((a, b, a * b, loss, F)):
                self.diverged = t
                if t > 0:  # the series end at the last finite step (Ls has t entries)
                    del A[t:], B[t:], G[t:]
                else:
                    Ls.append(loss), Fs.append(F)
                self.per_sample = None
                self.finished = True
                break
            Ls.append(loss)
            Fs.append(F)
            if t == self.steps:
                self.finished = True
                break
            with np.errstate(over="ignore", invalid="ignore"):
                a, b = a - eta * b * F, b - eta * a * F
            A.append(a), B.append(b), G.append(a * b)
            t += 1
        return series


def iterate(cfg: Config, progress: Callable[[int], None] | None = None,
            rule: SpectralRule | None = None, checkpoint: str | None = None,
            checkpoint_every: float = 60.0, resume: str | None = None) -> Trajectory:
    """Iterate the collapsed recursion ``cfg.steps`` times (simultaneous updates) on one rule
    (``rule``, or :func:`build_rule`: exact or one Monte Carlo sample).

    ``checkpoint``: file that receives the trajectory so far (:mod:`reduced_dynamics.
    runs.checkpoint`, kind "ln", identity :func:`run_identity`) at most every ``checkpoint_every``
    seconds, at the end, and on KeyboardInterrupt (re-raised as
    :class:`rdyn.reduced_dynamics.runs.checkpoint.Interrupted`). ``resume``: continue from such a file;
    the Trajectory is bit-identical to an uninterrupted run. ``cfg.steps`` may exceed the
    checkpoint's (a finished run is extended, bit-identical to one run with the larger steps).
    """
    rule = rule or build_rule(cfg)
    identity = run_identity(cfg, rule)
    use_mp = rule.mp or (exact_moments_only(cfg) and cfg.dps is not None)
    ctx = mpmath.workdps(cfg.dps + 5) if use_mp else NullContext()
    with ctx:
        const = (gaussian_constants(rule, cfg.d, cfg.spectrum) if isinstance(rule, GaussianRoute)
                 else constants(rule, cfg.data, cfg.d, cfg.n, cfg.spectrum))
        f = step_terms(cfg, rule, const)
        a, b = _num(cfg.alpha0, use_mp), _num(cfg.beta0, use_mp)
        eta = (mpmath.mpf(str(cfg.eta)) if use_mp else float(cfg.eta))
        series = {"alpha": [a], "beta": [b], "gamma": [a * b], "loss": [], "F": []}
        if resume is not None:
            series = load_series(resume, identity, use_mp)
        A, B, G, Ls, Fs = (series[name] for name in SERIES)
        engine = _Steps(f, eta, cfg.steps, identity, use_mp, finished=len(Ls) > cfg.steps)
        bar = None if not progress else StepLines(progress, PROGRESS_EVERY, len(Ls), cfg.steps)
        drive(engine, series, chunk=CHUNK, checkpoint=checkpoint,
              checkpoint_every=checkpoint_every, bar=bar)
        per_sample, diverged = engine.per_sample, engine.diverged
        se = rule.std_error(per_sample) if per_sample is not None else None
        if cfg.model == "noln" and cfg.target == "unnormalized":
            se = None
        ups1 = None
        if cfg.model == "looped":
            if isinstance(rule, GaussianRoute):
                ups1 = rule.upsilon1()
            else:
                ups1 = upsilon1_two_level(rule, cfg.L) if two_level_exact(rule) else upsilon1(rule, cfg.L)
        gs = gamma_star(cfg, const, use_mp)
    kind = "exact" if (rule.kind == "exact" or exact_moments_only(cfg)) else "monte_carlo"
    extras = {}
    if isinstance(rule, GaussianRoute):
        extras["quadrature"] = {"route": "gaussian", "nodes": rule.nodes, "tolerance": rule.tolerance,
                                "max_relative_estimate": float(rule.worst_estimate)}
        if rule.worst_rounding is not None:   # float64 looped model: estimates at rounding level
            extras["quadrature"]["rounding_bound"] = float(rule.worst_rounding)
    return Trajectory(A, B, G, Ls, Fs, se, kind, const, gs, ups1, extras, diverged)
