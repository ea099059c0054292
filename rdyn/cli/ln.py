"""Model B (seed 003): collapsed GD dynamics of attention with/without layer normalisation.

Symbols. X in R^{d x n} has unit-norm columns, S = X X^T; a is uniform on S^{d-1}.
Collapsed structure: W12 = alpha I, V21 = beta I, all other blocks zero; gamma = alpha*beta
(looped model: w, v, rho = w v, reported under the keys alpha, beta, gamma).
Recursion (simultaneous): alpha' = alpha - eta beta F(gamma), beta' = beta - eta alpha F(gamma),
F = L'(gamma)/d = tr(grad_W12 L)/(d beta). Losses carry no factor 1/2.
  ln      : LN layer, loss E||h/||h|| - S a/||S a||| |^2, h = a + gamma S a.
  noln    : no-LN layer, loss E||a + gamma S a - y_target||^2, target normalized S a/||S a||
            or unnormalized S a.
  looped  : L looped LN layers, loss E[Dist^2(y_L, top eigenspace of S)].
kappa1 = E[a^T S a], kappa2 = E||S a||^2 (exact rationals), kappa3 = E||S a||.
Expectations (--expectation auto): exact (quadrature at the working precision) for --data
spectrum, any number of distinct eigenvalues (Gaussian quadratic-form route beyond the
Dirichlet rule's 4 levels, single layers, and the looped model's 2) and, for ln and looped, gamma0 = alpha0*beta0 >= 0 (the rules are exact for gamma >= 0 and the
trajectory stays there; kinks at gamma = -1/lambda_i), otherwise randomised quasi-Monte Carlo: --replicas R independent scrambled-Sobol point sets
(--samples points in total), each a full trajectory; the reported values are the replica means
and std_error their standard errors (object: alpha, beta, gamma, loss). monte_carlo: one
fixed sample, std_error of the final loss only. --dps needs an exact expectation. All quantities
are dimensionless; steps are GD iterations.
"""
from __future__ import annotations

import sys

from rdyn.option_types import LnOptions
from rdyn.output import format_real

NAME = "ln"


def run(values: LnOptions, args) -> int:
    from rdyn.api._ln import run as api_run
    from rdyn.cli.teacher import DIVERGED_EXIT, interrupted

    try:
        res = api_run(values)
    except KeyboardInterrupt as exc:
        return interrupted(NAME, exc, values.checkpoint)
    diverged = res.diverged_at_step is not None
    if diverged:
        print(f"rdyn ln: diverged at step {res.diverged_at_step}: {res.divergence_reason}; "
              "the values are those of the step before, no fitted or theorem figures "
              "(exit status 3)", file=sys.stderr)
    if values.json:
        print(res.to_json())
        return DIVERGED_EXIT if diverged else 0
    cfg, tr = res.detail["config"], res.detail["trajectory"]
    result, dps = res._data, res._dps  # at --dps N the values print with N significant digits
    print(f"rdyn ln: model={cfg.model}" + (f" target={cfg.target}" if cfg.target else "")
          + f" data={cfg.data} d={cfg.d} n={cfg.n} eta={cfg.eta} steps={cfg.steps}"
          + f" expectation={tr.expectation}")
    names = ("w", "v", "rho") if cfg.model == "looped" else ("alpha", "beta", "gamma")
    for key, name in zip(("alpha", "beta", "gamma"), names):
        print(f"  {name:12s} {format_real(result[key], dps=dps)}")
    if tr.expectation == "qmc":
        print(f"  qmc: {result['replicas']} replicas x {result['points_per_replica']} points")
    se = result["std_error"]
    if isinstance(se, dict):
        for key, name in zip(("alpha", "beta", "gamma"), names):
            print(f"  {name + ' SE':12s} {format_real(se[key], 3)}")
    print(f"  {'loss':12s} {format_real(result['loss'], dps=dps)}"
          + (f" +- {format_real(se['loss'] if isinstance(se, dict) else se, 3)}" if se is not None else ""))
    for key in ("kappa1", "kappa2", "kappa3", "gamma_star"):
        if result[key] is not None:
            print(f"  {key:12s} {format_real(result[key], dps=dps)}")
    for block in ("contraction", "growth", "theorem_4_7"):
        if block in result:
            items = ", ".join(f"{k}={format_real(v, 6) if not isinstance(v, dict) else v}"
                              for k, v in result[block].items() if k != "claimed")
            print(f"  {block}: {items}")
    if diverged:
        print(f"  DIVERGED at step {res.diverged_at_step}: values at step {cfg.steps}")
    return DIVERGED_EXIT if diverged else 0
