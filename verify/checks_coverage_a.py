"""Model A statements of Appendix D.1-D.2 that had no ledger entry (issue 19, item 5; ids ``A.cover.*``).

* ``A.cover.C1_update.<activation>``: Lemma D.2's C1 update in the printed form
  ``C1(t+1) - C1(t) = eta D F3/(K p) (1 - C1/C1*)`` with the printed definition
  ``C1* = F3/(K p F1)`` (Lemma D.4's proxy), against the derived collapsed map
  (:func:`rdyn.derivations.catalog.model_a_expressions`) with ``F1``, ``F3`` the Appendix F
  expectations: exact in sympy for the identity; for ReLU and Leaky ReLU (arctan / arccos
  forms sympy does not cancel) at 40 random points at 30 digits.
* ``A.cover.D13_step``: the step bound in the proof of Lemma D.13,
  ``C1(t+1) - C1(t) >= eta D F3/(40 K p)`` for every ``t < t1``, along the validation
  trajectories (identity, ReLU, Leaky ReLU; the paper's step-size conditions and the default).
"""
from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

from rdyn.verification.report import Check, digits_of

PAPER = "Zhang-Zhao-Gu-Cao (seed 000)"
ACTIVATIONS = ("identity", "relu", "leaky")


def _printed_forms(activation: str):
    """(derived increment, printed increment, derived C1*, printed C1*) in K, N, p, C1, eta, kappa."""
    from rdyn.derivations import model_a as ma
    from rdyn.derivations.catalog import model_a_expressions
    from rdyn.verification.checks_model_a import _f_values, _in_p, p_sym

    x = model_a_expressions(activation)
    F = _f_values(activation)
    K, D = ma.K, ma.K + ma.N
    star_printed = F["F3"] / (K * p_sym * F["F1"])
    inc_printed = ma.eta * D * F["F3"] / (K * p_sym) * (1 - ma.C1 / star_printed)
    return _in_p(x["C1_next_positive"]) - ma.C1, inc_printed, _in_p(x["C1_star"]), star_printed


def c1_update_checks() -> list[Check]:
    from rdyn.derivations import model_a as ma
    from rdyn.verification.checks_model_a import p_sym

    rng = np.random.default_rng(192)
    out = []
    for activation in ACTIVATIONS:
        inc, inc_p, star, star_p = _printed_forms(activation)
        if activation == "identity":
            exact = sp.simplify(inc - inc_p) == 0 and sp.simplify(star - star_p) == 0
            worst, how = (0.0 if exact else 1.0), "sympy, exact"
        else:
            args = (ma.K, ma.N, p_sym, ma.C1, ma.eta, ma.kappa)
            fs = [sp.lambdify(args, f, "mpmath") for f in (inc, inc_p, star, star_p)]
            worst = mpmath.mpf(0)
            with mpmath.workdps(30):
                for _ in range(40):
                    K = int(rng.integers(1, 8))
                    N = int(rng.integers(1, 50))
                    p = mpmath.mpf(1) / (K + N) + (mpmath.mpf(1) / K - mpmath.mpf(1) / (K + N)) * mpmath.mpf(
                        float(rng.uniform(0.001, 0.999)))
                    C1 = mpmath.mpf(float(rng.uniform(0.01, 3)))
                    eta, kappa = mpmath.mpf(float(rng.uniform(0.01, 1))), mpmath.mpf(float(rng.uniform(0, 0.9)))
                    a, b, c, d = (f(K, N, p, C1, eta, kappa) for f in fs)
                    worst = max(worst, abs(a - b) / abs(a), abs(c - d) / abs(c))
            worst, how = float(worst), "40 random points, mpmath 30 digits"
        out.append(Check(
            f"A.cover.C1_update.{activation}", f"{PAPER}, Lemma D.2 / D.4 (C1 update, C1* definition)",
            f"C1(t+1) - C1(t) = eta D F3/(K p) (1 - C1/C1*) and C1* = F3/(K p F1) ({activation}; {how}: "
            f"relative error {worst:.1e})",
            "pass" if worst < 1e-25 else "discrepancy", worst, digits_of(worst) if worst else None,
            {"measured": worst, "method": how}))
    return out


def d13_step_check(quick: bool) -> Check:
    """Lemma D.13's step bound along the trajectories, for every recorded t < t1."""
    from rdyn.derivations import model_a as ma
    from rdyn.verification.checks_errata_a import _trajectory
    from rdyn.verification.checks_model_a import _f_values, p_sym

    specs = ((8, 2, "relu", "paper"), (8, 2, "relu", "default"), (20, 4, "relu", "default"),
             (8, 2, "identity", "default"), (12, 3, "leaky", "default"))
    if not quick:
        specs += ((12, 3, "identity", "paper"), (10, 2, "leaky", "paper"))
    rows, ok = [], True
    for D, K, act, pol in specs:
        tr = _trajectory(D, K, act, pol)
        F3 = sp.lambdify((ma.K, ma.N, p_sym, ma.kappa), _f_values(act)["F3"], "numpy")
        i = np.nonzero((tr.t < tr.t1) & (tr.nxt >= 0))[0]
        step = tr.C1[tr.nxt[i]] - tr.C1[i]
        bound = tr.eta * D * F3(K, D - K, tr.p[i], tr.kappa) / (40 * K * tr.p[i])
        ratio = step / bound
        ok &= bool(len(i) > 0 and np.all(ratio >= 1))
        rows.append({"config": tr.name, "t1": tr.t1, "steps_checked": int(len(i)),
                     "min_step_over_bound": float(ratio.min()), "at_t": int(tr.t[i][np.argmin(ratio)])})
    worst = min(r["min_step_over_bound"] for r in rows)
    return Check("A.cover.D13_step", f"{PAPER}, proof of Lemma D.13 (C1 step)",
                 f"C1(t+1) - C1(t) >= eta D F3/(40 K p) for every t < t1 on {len(rows)} trajectories: "
                 f"min step/bound {worst:.3g}", "pass" if ok else "discrepancy", None, None,
                 {"measured": worst, "per_config": rows})


def checks(quick: bool = False) -> tuple[Check, ...]:
    return tuple(c1_update_checks()) + (d13_step_check(quick),)
