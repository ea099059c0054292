"""Model B (seed 003): the collapsed alpha/beta (looped: w/v) recursions, public surface.

``alpha' = alpha - eta beta F(gamma)``, ``beta' = beta - eta alpha F(gamma)``, simultaneous,
with ``F = L'(gamma)/d`` (derived in :mod:`rdyn.derivations.model_b`). One idea per module:

* :mod:`rdyn.reduced_dynamics.model_b.rule` the spectral rule (weighted nodes of the spectral measure of ``S`` seen from ``a``),
* :mod:`rdyn.reduced_dynamics.model_b.exact` exact Task 2 rules, :mod:`rdyn.reduced_dynamics.model_b.sampling` one Monte Carlo sample,
  :mod:`rdyn.reduced_dynamics.model_b.qmc` scrambled-Sobol replicas with error bars,
* :mod:`rdyn.reduced_dynamics.model_b.terms` per-sample loss terms, :mod:`rdyn.reduced_dynamics.model_b.looped` the looped model,
* :mod:`rdyn.reduced_dynamics.model_b.constants` kappa1..kappa4, Upsilon_3, :mod:`rdyn.reduced_dynamics.model_b.config` configuration and the
  choice of expectation, :mod:`rdyn.reduced_dynamics.model_b.iterate` the iteration on one rule,
  :mod:`rdyn.reduced_dynamics.model_b.series` its checkpoints, :mod:`rdyn.reduced_dynamics.model_b.analysis` derived reports.

This module re-exports the names callers use and holds :func:`run`, which chooses between one
rule (:func:`rdyn.reduced_dynamics.model_b.iterate.iterate`) and QMC replicas (:func:`rdyn.reduced_dynamics.model_b.qmc.run_replicas`).
"""
from __future__ import annotations

from typing import Callable

from rdyn.reduced_dynamics.model_b.analysis import contraction_ratio, fitted_exponent, test_spectrum, theorem_4_7
from rdyn.reduced_dynamics.model_b.config import (EXPECTATIONS, MODELS, Config, exact_gamma_range,
                                                  resolve_expectation)
from rdyn.reduced_dynamics.model_b.constants import Constants, constants, kappa_exact
from rdyn.reduced_dynamics.model_b.exact import (EXACT_NODE_LIMIT, MAX_EXACT_LEVELS, ExactUnavailable,
                                                 dirichlet_exact_rule, exact_rule, exact_supported)
from rdyn.reduced_dynamics.model_b.iterate import Trajectory, build_rule, gamma_star, iterate, step_terms
from rdyn.reduced_dynamics.model_b.looped import (looped_terms, looped_two_level, looped_two_level_hyp2f1,
                                                  upsilon1, upsilon1_two_level)
from rdyn.reduced_dynamics.model_b.rule import SpectralRule, distinct_levels, sqrt_elementwise
from rdyn.reduced_dynamics.model_b.sampling import monte_carlo_rule, sample_sphere_data
from rdyn.reduced_dynamics.model_b.series import run_identity
from rdyn.reduced_dynamics.model_b.terms import ln_terms, model_terms, noln_terms

__all__ = ["EXPECTATIONS", "MODELS", "Config", "Constants", "EXACT_NODE_LIMIT", "ExactUnavailable",
           "MAX_EXACT_LEVELS", "SpectralRule", "Trajectory", "build_rule", "constants",
           "contraction_ratio", "dirichlet_exact_rule", "distinct_levels", "exact_gamma_range",
           "exact_rule", "exact_supported", "fitted_exponent", "gamma_star", "iterate", "kappa_exact",
           "ln_terms", "looped_terms", "looped_two_level", "looped_two_level_hyp2f1", "model_terms",
           "monte_carlo_rule", "noln_terms", "resolve_expectation", "run", "run_identity",
           "sample_sphere_data", "sqrt_elementwise", "step_terms", "test_spectrum", "theorem_4_7",
           "upsilon1", "upsilon1_two_level"]


def run(cfg: Config, progress: Callable[[int], None] | None = None,
        rule: SpectralRule | None = None, checkpoint: str | None = None,
        checkpoint_every: float = 60.0, resume: str | None = None) -> Trajectory:
    """Run Model B: QMC replicas when :func:`resolve_expectation` says ``qmc`` (and no ``rule``
    is given), otherwise :func:`rdyn.reduced_dynamics.model_b.iterate.iterate` on ``rule`` or the exact / Monte Carlo
    rule of ``cfg`` (``checkpoint``/``resume``: see there; refused for qmc)."""
    if rule is None and resolve_expectation(cfg) == "qmc":
        if checkpoint is not None or resume is not None:
            raise ValueError("checkpoints apply to exact and monte_carlo expectations, not qmc")
        from rdyn.reduced_dynamics.model_b.qmc import run_replicas

        return run_replicas(cfg, cfg.replicas).trajectory
    return iterate(cfg, progress, rule, checkpoint, checkpoint_every, resume)
