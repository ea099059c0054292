"""``rdyn verify`` checks from :mod:`rdyn.verification.references.scaling`: measured exponents and constants of the
papers' Theta-claims (Model A: t1, T*, late excess loss for identity / ReLU / LeakyReLU(0.1);
Model B: growth of gamma, alpha, beta and of the looped rho, w, v).

Per line (one factor varied geometrically, the rest fixed), two checks:

* ``S.<claim>.<factor>.<activation>.exponent`` — decided by the ledger's one decision rule,
  :mod:`rdyn.verification.claims.fit_rule` (``detail.fit_decision``): ``pass`` when the printed exponent
  lies in the 95% interval of the stabilised window, ``discrepancy`` when it is excluded by a
  narrow interval of a stabilised slope that is not moving towards it, and ``info`` when the
  rule says ``inconclusive`` (``rdyn verify`` has no inconclusive status: docs/interface.md; the claim
  text and ``detail.fit_decision.reason`` say what would decide it). Never ``fail``: the exponent
  claims are checked as printed. ``rdyn scaling``'s own "confirmed" (interval or local exponent
  within 10%) is a description of the measured line, not a verdict;
* ``S.<claim>.<factor>.<activation>.constant`` — ``info``: the constant C of the claimed form
  with its 95% interval.

The intervals come from deterministic data: they measure the departure from a pure power law
over the swept range, not sampling noise. ``quick`` (``rdyn verify --quick``) uses the quick
sizes and Model A with ReLU only (about 10 s); the full run uses the
default sizes of ``rdyn scaling`` for all three activations (about 2 minutes).
"""
from __future__ import annotations

from functools import lru_cache

from rdyn.verification.references import scaling
from rdyn.verification.checks.record import Check


def _tag(result: scaling.LineResult) -> str:
    line = result.line
    return f"S.{line.claim}.{line.factor}" + (f".{line.activation}" if line.activation else "")


def measured_name(result: scaling.LineResult) -> str:
    """What ``measured_values`` holds (the late-loss lines over D, K, eta hold T L(T) at
    T = m T*, the T line L(T) itself)."""
    q = scaling.CLAIMS[result.line.claim].quantity
    if q == "loss":
        return ("excess_loss_L(T)" if result.line.factor == "T"
                else f"T_times_excess_loss_at_T_eq_{result.line.multiple:g}_Tstar")
    return q


def line_checks(result: scaling.LineResult) -> list[Check]:
    """The exponent check and the constant check of one fitted line."""
    line = result.line
    claim = scaling.CLAIMS[line.claim]
    where = f"{line.activation}, " if line.activation else ""
    setting = ", ".join(f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}"
                        for k, v in line.fixed if k not in ("activation", "kappa") or line.activation == "leaky")
    label = scaling.FACTOR_LABELS[line.factor]
    lo, hi = result.exponent_ci
    claimed = line.claimed_exponent
    error = abs(result.exponent - claimed) / abs(claimed)
    from rdyn.verification.claims import fit_rule

    decision = fit_rule.decide(claimed, result.x, result.y).as_dict()
    # the deciding interval is the window's (fit rule); the fit over every point is context
    detail = {"claimed_exponent": claimed, "exponent": decision["exponent"],
              "exponent_ci95": decision["exponent_ci95"],
              "local_exponent": result.local_exponent, "basis": result.basis,
              "factor": line.factor, "factor_values": list(result.x),
              "measured_quantity": measured_name(result), "measured_values": list(result.y),
              "fit_decision": decision,
              "context_full_range_fit": {"role": "context", "exponent": result.exponent, "ci95": [lo, hi]}}
    exponent = Check(
        f"{_tag(result)}.exponent", claim.source,
        f"{claim.statement}: exponent of {label} is {claimed:g} ({where}{setting}); "
        f"{fit_rule.text(decision)} ({decision['reason']}); local {result.local_exponent:.3f}",
        fit_rule.VERIFY_STATUS[decision["verdict"]], error, None, detail)
    clo, chi = result.constant_ci
    extra = {k: v for k, v in result.extra.items()}
    constant = Check(
        f"{_tag(result)}.constant", claim.source,
        f"measured constant C in {result.constant_form} ({where}{setting}): "
        f"{result.constant:.4g} [{clo:.4g}, {chi:.4g}]",
        "info", None, None,
        {"constant": result.constant, "constant_ci95": [clo, chi], "form": result.constant_form,
         "fitted_exponent": result.exponent, **extra})
    return [exponent, constant]


@lru_cache(maxsize=None)
def checks(quick: bool = False, model: str = "all") -> tuple[Check, ...]:
    """Both checks of every line of ``scaling.design(model, ...)`` (model: "A", "B" or "all")."""
    out: list[Check] = []
    activations = ("relu",) if quick else scaling.ACTIVATIONS
    for result in scaling.report(model=model, activations=activations, quick=quick):
        out += line_checks(result)
    return tuple(out)
