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
Expectations are exact (Gauss-Legendre at the working precision) for --data spectrum with at
most two distinct eigenvalues, otherwise Monte Carlo on one fixed sample (--samples, --seed);
std_error is the standard error of the final loss (null when exact). --dps applies only
to exact expectations (a Monte Carlo mean carries about 16 meaningful digits). All quantities
are dimensionless; steps are GD iterations.
"""
from __future__ import annotations

from rdyn.output import format_real

NAME = "ln"


def run(values: dict, args) -> int:
    from rdyn.api._ln import run as api_run
    from rdyn.cmd_teacher import interrupted

    try:
        res = api_run(values)
    except KeyboardInterrupt as exc:
        return interrupted(NAME, exc, values["checkpoint"])
    if values["json"]:
        print(res.to_json())
        return 0
    cfg, tr = res.detail["config"], res.detail["trajectory"]
    result = res._data
    print(f"rdyn ln: model={cfg.model}" + (f" target={cfg.target}" if cfg.target else "")
          + f" data={cfg.data} d={cfg.d} n={cfg.n} eta={cfg.eta} steps={cfg.steps}"
          + f" expectation={tr.expectation}")
    names = ("w", "v", "rho") if cfg.model == "looped" else ("alpha", "beta", "gamma")
    for key, name in zip(("alpha", "beta", "gamma"), names):
        print(f"  {name:12s} {format_real(result[key])}")
    print(f"  {'loss':12s} {format_real(result['loss'])}"
          + (f" +- {format_real(result['std_error'], 3)}" if result["std_error"] is not None else ""))
    for key in ("kappa1", "kappa2", "kappa3", "gamma_star"):
        if result[key] is not None:
            print(f"  {key:12s} {format_real(result[key])}")
    for block in ("contraction", "growth", "theorem_4_7"):
        if block in result:
            items = ", ".join(f"{k}={format_real(v, 6) if not isinstance(v, dict) else v}"
                              for k, v in result[block].items() if k != "claimed")
            print(f"  {block}: {items}")
    return 0
