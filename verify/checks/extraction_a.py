"""The restored readings of Model A's statements in which the text extraction of seed 000 plausibly
lost a symbol (ids ``A.extraction.*``; the table of readings and the decision are
:mod:`rdyn.verification.claims.extraction`).

The extraction of seed 000 contains no root sign at all: wherever the paper writes ``sqrt(u)`` the
text shows ``u``. Each check below evaluates one statement with the lost symbol put back
(the *restored* reading) by an exact sympy computation or a 30-digit comparison against the derived
quantity; the statement as extracted is decided by the ledger's existing checks. A check's status is
``pass`` when the restored reading holds, ``discrepancy`` when it is contradicted as well (the
paper's own error then remains), ``fail`` when rdyn's computation disagrees with itself. Every
check takes the restored form as a formula string (read by :func:`rdyn.derivations.formula.parse`),
so a wrong restoration is refused by the same computation.

* ``A.extraction.S_identity.restored`` (proof of Theorem 3.1): ``||S - S*||_F = D (1-Kp)/sqrt(K(D-K))``
  squared equals the sum of squares the seed prints beside it, ``D K (1/K - p)^2 + D (D-K) (1-Kp)^2/(D-K)^2``
  (and ``||S - S*||_F^2`` is that sum: the line sets the unsquared norm equal to it), exactly; with the
  printed ``D^{5/2}/(eta M (T - T*))`` of the same line: the restored identity times the paper's own
  Lemma D.18 rate has D-exponent 5/2 (the printed order), the extracted one 2.
* ``A.extraction.step3.restored`` (Section 5, Step 3): ``||S - S*||_F, ||W_V - V*||_F = Theta(1/sqrt(T))``
  against the derived late-phase leading terms (T-exponent of derived/restored, exact limit), and the
  step's own inference "convergence of the matrices ... suggests loss Theta(1/T)" under the mean-squared
  loss: the T-exponent of the derived loss over the square of the restored matrix rate is 0 (with the
  extracted ``1/T`` it is 1).
* ``A.extraction.D18.restored``, ``A.extraction.S_D52.restored`` (Lemma D.18, the D^{5/2} line of the proof
  of Theorem 3.1): the bounds with the root over their whole denominator, ``1/K - 20 D(D-K)/sqrt(eta K M
  (T-T*)) <= p(T) <= 1/K - D(D-K)/(2e sqrt(eta K M (T-T*)))`` and ``Theta(D^{5/2}/sqrt(eta M (T-T*)))``, against
  the derived leading terms of ``1/K - p`` and ``||S - S*||_F``: the T-exponents are 0 (the rate is right with
  the root), but the limits of derived/bound as T -> oo have D-exponent -1/2: the printed order in D is too
  large by sqrt(D), the upper side of D.18 fails for large D (``discrepancy``: the paper's error remains).
  Internal evidence for the root: D.18 (p C1)'s printed ``400 D^2 (D-K)^2/(eta M (T-T*))`` is ``(1/K)(1-Kp)^2``
  with the restored bound (exactly), not with the extracted one (``..._p_C1_term`` in the detail).
* ``A.extraction.ood_rate.restored`` (Section 4.1 on Theorem 3.2): ``O(1/sqrt(T))`` against the derived
  worst case over Theorem 3.2's class of Y (:mod:`rdyn.derivations.model_a.ood_excess`: ``B sqrt(2 q2) e``,
  ``e^2 ~ c_e/(eta T)``; T-exponent of derived/restored, exact limit, every activation), and the same
  sentence's "approximate -0.5 slopes" of the OOD curves, which validate ``O(1/sqrt(T))`` (exponent -1/2)
  and contradict the extracted ``O(1/T)``.
* ``A.extraction.D6.arctan``, ``.arctan.restored`` (Lemma D.6): the arctan argument as extracted,
  ``K(D-K) p/(1-Kp)``, and restored, ``sqrt(K(D-K)) p/(1-Kp)``, against the derived ``tan(beta) =
  cot(acos(sqrt(a/(a+b))))`` of the Gaussian engine's closed form (``a = K p^2``, ``b = (1-Kp)^2/(D-K)``).
* ``A.extraction.D6.restored.<activation>``: Lemma D.6's ``A(t)`` with the restored argument against
  the engine's ``E[x1 s(x1) s'(x1+x2)]`` at 40 random points, 30 digits: still different, by exactly the
  ``(1-kappa)^2 K p^2 sin(2 beta)/(4 pi)`` term the print lacks (``discrepancy``: the paper's error).
* ``A.extraction.D10.restored`` (Lemma D.10): the condition ``p(t) <= 1/(2 pi sqrt(D K))``. C1*(p) increases
  for p below p_c (the zero of dC1*/dp; identity ``p_c = 1/sqrt(DK)`` by sympy solve, exactly above the
  restored threshold: ``(p_c - r) sqrt(DK) = 1 - 1/(2 pi)``; ReLU, Leaky ReLU: p_c by bisection at 30
  digits, compared with r at every listed size), and the condition is met by some p >= 1/D iff
  ``D >= 4 pi^2 K`` (``(r D)^2 = D/(4 pi^2 K)``, exact). At the non-vacuous sizes the sign of dC1*/dp is
  sampled on ``[1/D, r]``.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from rdyn.verification.checks.record import Check, digits_of

PAPER = "Zhang-Zhao-Gu-Cao (seed 000)"
ACTIVATIONS = ("identity", "relu", "leaky")
LEAKY_KAPPA = 0.1
_D, _K, _p, _T, _M, _eta, _kappa = sp.symbols("D K p T M eta kappa", positive=True)
_SYMBOLS = {"D": _D, "K": _K, "p": _p, "T": _T, "M": _M, "eta": _eta, "kappa": _kappa}

S_RESTORED = "D*(1 - K*p)/sqrt(K*(D - K))"
S_EXTRACTED = "D*(1 - K*p)/(K*(D - K))"
S_SUM_PRINTED = "D*K*(1/K - p)**2 + D*(D - K)*(1 - K*p)**2/(D - K)**2"   # printed beside it (seed line 235)
D18_RATE_PRINTED = "K*20*D*(D - K)/(eta*K*M*T)"   # 1 - Kp <= K (20 D (D-K)/(eta K M (T - T*))), Lemma D.18
OOD_RESTORED = "1/sqrt(T)"
OOD_EXTRACTED = "1/T"
OOD_PRINTED_SLOPE = sp.Rational(-1, 2)       # "excess OOD loss curves have approximate -0.5 slopes" (Section 4.1)
STEP3_RESTORED = "1/sqrt(T)"
STEP3_EXTRACTED = "1/T"
D6_RESTORED = "sqrt(K*(D - K))*p/(1 - K*p)"
D6_EXTRACTED = "K*(D - K)*p/(1 - K*p)"
D10_RESTORED = "1/(2*pi*sqrt(D*K))"
D10_EXTRACTED = "1/(2*pi*D*K)"
# (D, K, activation): the validation sizes of A.errata.D10, and sizes with D >= 4 pi^2 K (non-vacuous)
D10_SIZES = ((8, 2, "relu"), (20, 4, "relu"), (8, 2, "identity"), (12, 3, "leaky"),
             (80, 2, "identity"), (80, 2, "relu"), (160, 4, "relu"), (120, 3, "leaky"))


def form(text: str) -> sp.Expr:
    """A printed or restored form (a formula string in D, K, p, T, M, eta, kappa), read by rdyn's parser."""
    from rdyn.derivations.formula import parse

    return parse(text, _SYMBOLS, what="reading", symbolic_exponents=True)


def exponent_at_infinity(expr: sp.Expr, var: sp.Symbol) -> sp.Expr:
    """lim var d/dvar log(expr) as var -> oo: the exponent of expr in var."""
    return sp.limit(sp.simplify(var * sp.diff(sp.log(expr), var)), var, sp.oo)


def _check(id: str, source: str, claim: str, status: str, detail: dict, max_error: float | None = None) -> Check:
    return Check(id, f"{PAPER}, {source}", claim, status, max_error, digits_of(max_error), detail)


# ------------------------------------------------------------------------------------------
# proof of Theorem 3.1: the S identity
# ------------------------------------------------------------------------------------------

def s_identity_restored_check(restored: str = S_RESTORED) -> Check:
    """``A.extraction.S_identity.restored`` (module docstring)."""
    r, x, total = form(restored), form(S_EXTRACTED), form(S_SUM_PRINTED)
    N, w = sp.symbols("N w", positive=True)
    on_domain = {_D: _K + N, _p: (1 - w) / _K}            # D > K, p < 1/K
    squared_equal = sp.simplify((r**2 - total).subs(on_domain)) == 0
    nonnegative = bool(sp.simplify(r.subs(on_domain)).is_nonnegative)
    extracted_equal = sp.simplify((x**2 - total).subs(on_domain)) == 0
    # the printed D^{5/2} of the same line: (||S - S*||_F/(1 - Kp)) times Lemma D.18's printed 1 - Kp
    rate = form(D18_RATE_PRINTED)
    d_restored = exponent_at_infinity(sp.simplify(r / (1 - _K * _p) * rate), _D)
    d_extracted = exponent_at_infinity(sp.simplify(x / (1 - _K * _p) * rate), _D)
    holds = squared_equal and nonnegative and d_restored == sp.Rational(5, 2)
    return _check(
        "A.extraction.S_identity.restored", "proof of Theorem 3.1 (S identity, lost square root restored)",
        f"restored ||S - S*||_F = {restored}: its square equals the printed sum of squares "
        f"({'exactly' if squared_equal else 'NOT'}), and with Lemma D.18's printed rate it gives the printed "
        f"D^(5/2) (D-exponent {d_restored}; as extracted {d_extracted})",
        "pass" if holds else "discrepancy",
        {"restored_form": restored, "extracted_form": S_EXTRACTED, "printed_sum_of_squares": S_SUM_PRINTED,
         "lost_symbol": "the square root of K(D-K) (and the square of the norm set equal to the sum)",
         "restored_squared_equals_sum": bool(squared_equal), "restored_nonnegative": nonnegative,
         "extracted_squared_equals_sum": bool(extracted_equal),
         "D_exponent_with_lemma_D18_restored": str(d_restored), "D_exponent_with_lemma_D18_extracted": str(d_extracted),
         "printed_D_exponent": "5/2", "method": "exact sympy (D = K + N, p = (1 - w)/K, N, w > 0); sympy limit"})


# ------------------------------------------------------------------------------------------
# Section 5, Step 3
# ------------------------------------------------------------------------------------------

def step3_restored_check(restored: str = STEP3_RESTORED) -> Check:
    """``A.extraction.step3.restored`` (module docstring): every activation, logits/D."""
    from rdyn.verification.checks.errata_a import SYMBOLS, asymptote

    sub = {SYMBOLS[n]: _SYMBOLS[n] for n in ("D", "K", "M", "eta", "T", "kappa")}
    r, x = form(restored), form(STEP3_EXTRACTED)
    rows, holds = {}, True
    for act in ACTIVATIONS:
        s, wv, loss = (asymptote(q, act).xreplace(sub) for q in ("S_error_F", "WV_error_F", "excess_loss"))
        row = {"S_error_F": str(exponent_at_infinity(s / r, _T)), "WV_error_F": str(exponent_at_infinity(wv / r, _T)),
               "loss_over_rate_squared": str(exponent_at_infinity(loss / r**2, _T)),
               "loss_over_extracted_rate_squared": str(exponent_at_infinity(loss / x**2, _T))}
        rows[act] = row
        holds &= all(row[k] == "0" for k in ("S_error_F", "WV_error_F", "loss_over_rate_squared"))
    return _check(
        "A.extraction.step3.restored", "Section 5, Step 3 (lost square root restored)",
        f"restored ||S - S*||_F, ||W_V - V*||_F = Theta({restored}): T-exponents of derived/restored "
        f"{'0' if holds else 'not 0'}; the loss Theta(1/T) follows from it under the squared loss "
        f"(as extracted, 1/T matrices would give 1/T^2: exponent {rows['relu']['loss_over_extracted_rate_squared']})",
        "pass" if holds else "discrepancy",
        {"restored_form": restored, "extracted_form": STEP3_EXTRACTED,
         "lost_symbol": "the square root of T: Theta(1/sqrt(T))",
         "T_exponent_of_derived_over_restored": rows,
         "derived": {a: {q: str(asymptote(q, a)) for q in ("S_error_F", "WV_error_F", "excess_loss")}
                     for a in ACTIVATIONS},
         "method": "exact sympy limits of the logarithmic derivative; derived leading terms: "
                   "rdyn.derivations.model_a.late_phase (logits/D)"})


# ------------------------------------------------------------------------------------------
# Lemma D.18 and the D^{5/2} line
# ------------------------------------------------------------------------------------------

D18_LOWER_RESTORED = "20*D*(D - K)/sqrt(eta*K*M*T)"           # 1/K - p <= this (lower side of p)
D18_UPPER_RESTORED = "D*(D - K)/(2*exp(1)*sqrt(eta*K*M*T))"   # 1/K - p >= this (upper side of p)
S_D52_RESTORED = "D**(5/2)/sqrt(eta*M*T)"
D18_PC1_TERM_PRINTED = "400*D**2*(D - K)**2/(eta*M*T)"        # Lemma D.18 (p C1), second term


def d18_restored_checks(lower: str = D18_LOWER_RESTORED, upper: str = D18_UPPER_RESTORED,
                        s_d52: str = S_D52_RESTORED) -> list[Check]:
    """``A.extraction.D18.restored`` and ``A.extraction.S_D52.restored`` (module docstring)."""
    from rdyn.verification.checks.errata_a import SYMBOLS, asymptote

    sub = {SYMBOLS[n]: _SYMBOLS[n] for n in ("D", "K", "M", "eta", "T", "kappa")}
    lo, up, s52 = form(lower), form(upper), form(s_d52)
    # D.18 (p C1): (1/K)(1 - Kp)^2 with 1 - Kp = K (1/K - p) at the lower side's bound
    pc1 = form(D18_PC1_TERM_PRINTED)
    pc1_restored = sp.simplify((_K * lo) ** 2 / _K - pc1) == 0
    pc1_extracted = sp.simplify((_K * form("20*D*(D - K)/(eta*K*M*T)")) ** 2 / _K - pc1) == 0
    rows, s_rows, ok_d18, ok_s = {}, {}, True, True
    for act in ACTIVATIONS:
        gap = asymptote("one_over_K_minus_p", act).xreplace(sub)
        r_lo, r_up = (sp.simplify(sp.limit(gap / b, _T, sp.oo)) for b in (lo, up))
        row = {"T_exponent_lower": str(exponent_at_infinity(gap / lo, _T)),
               "T_exponent_upper": str(exponent_at_infinity(gap / up, _T)),
               "limit_derived_over_lower_bound": sp.sstr(r_lo), "limit_derived_over_upper_bound": sp.sstr(r_up),
               "D_exponent_of_limit_upper": str(exponent_at_infinity(r_up, _D)),
               "D_exponent_of_limit_lower": str(exponent_at_infinity(r_lo, _D)),
               "upper_side_holds_as_T_to_oo_iff_D_at_most": [sp.sstr(d) for d in sp.solve(sp.Eq(r_up, 1), _D)]}
        rows[act] = row
        # the lower side holds as T -> oo iff r_lo <= 1, the upper iff r_up >= 1 (for every D: D-exponent 0 needed)
        ok_d18 &= (row["T_exponent_lower"] == row["T_exponent_upper"] == "0"
                   and row["D_exponent_of_limit_upper"] == "0" and row["D_exponent_of_limit_lower"] == "0")
        s = asymptote("S_error_F", act).xreplace(sub)
        s_rows[act] = {"T_exponent": str(exponent_at_infinity(s / s52, _T)),
                       "D_exponent": str(exponent_at_infinity(s / s52, _D))}
        ok_s &= s_rows[act]["T_exponent"] == "0" and s_rows[act]["D_exponent"] == "0"
    t_right = all(r["T_exponent_lower"] == "0" for r in rows.values())
    return [
        _check("A.extraction.D18.restored", "Lemma D.18 (lost square root restored)",
               f"restored 1/K - {lower} <= p(T) <= 1/K - {upper}: T-exponents of derived/bound "
               f"{'0 (the rate is right)' if t_right else 'not 0'}; the limits have D-exponent "
               f"{rows['relu']['D_exponent_of_limit_upper']}: as T -> oo the upper side holds only for D <= "
               f"{', '.join(rows['relu']['upper_side_holds_as_T_to_oo_iff_D_at_most'])} (ReLU), the lower side with "
               f"room 1/(20 sqrt(D)); D.18 (p C1)'s printed "
               f"400 D^2 (D-K)^2/(eta M (T-T*)) is (1/K)(1-Kp)^2 at the restored bound "
               f"({'exactly' if pc1_restored else 'NOT'}; at the extracted one {'exactly' if pc1_extracted else 'not'})",
               "pass" if ok_d18 else "discrepancy",
               {"restored_form": {"lower": lower, "upper": upper}, "lost_symbol": "the square root of eta K M (T - T*)",
                "per_activation": rows, "p_C1_term_is_the_square_of_the_restored_bound": bool(pc1_restored),
                "p_C1_term_is_the_square_of_the_extracted_bound": bool(pc1_extracted),
                "method": "exact sympy limits; derived leading term of 1/K - p: rdyn.derivations.model_a.late_phase"}),
        _check("A.extraction.S_D52.restored", "proof of Theorem 3.1 (D^{5/2} line, lost square root restored)",
               f"restored ||S - S*||_F = Theta({s_d52}): exponents of derived/restored T {s_rows['relu']['T_exponent']}, "
               f"D {s_rows['relu']['D_exponent']}",
               "pass" if ok_s else "discrepancy",
               {"restored_form": s_d52, "lost_symbol": "the square root of eta M (T - T*)",
                "exponents_of_derived_over_restored": s_rows,
                "method": "exact sympy limits; derived leading term: rdyn.derivations.model_a.late_phase"})]


# ------------------------------------------------------------------------------------------
# Section 4.1 on Theorem 3.2: the OOD rate
# ------------------------------------------------------------------------------------------

def ood_rate_restored_check(restored: str = OOD_RESTORED) -> Check:
    """``A.extraction.ood_rate.restored`` (module docstring)."""
    from rdyn.derivations.model_a import collapsed as ma
    from rdyn.derivations.model_a import ood_excess as oe

    r, x = form(restored), form(OOD_EXTRACTED)
    rows, holds = {}, True
    for act in ACTIVATIONS:
        der = oe.ood_excess(act)
        lead = der.rate(der.sup_coefficient).xreplace({oe.T: _T, oe.eta: _eta})
        row = {"worst_case_over_restored": str(exponent_at_infinity(lead / r, _T)),
               "worst_case_over_extracted": str(exponent_at_infinity(lead / x, _T)),
               "worst_case_leading_term": sp.sstr(ma.to_public(lead))}
        rows[act] = row
        holds &= row["worst_case_over_restored"] == "0"
    slope_restored = exponent_at_infinity(r, _T)
    slope_extracted = exponent_at_infinity(x, _T)
    holds &= slope_restored == OOD_PRINTED_SLOPE
    return _check(
        "A.extraction.ood_rate.restored", "Section 4.1 / Theorem 3.2 (rate, lost square root restored)",
        f"restored O({restored}): T-exponent of the derived worst case over Theorem 3.2's class of Y over it "
        f"{rows['relu']['worst_case_over_restored']} (as extracted {rows['relu']['worst_case_over_extracted']}); "
        f"its exponent {slope_restored} is the '-0.5 slopes' the same sentence says validate it (as extracted "
        f"{slope_extracted})",
        "pass" if holds else "discrepancy",
        {"restored_form": restored, "extracted_form": OOD_EXTRACTED, "lost_symbol": "the square root of T",
         "T_exponent_of_derived_over_form": rows, "printed_slope_of_the_curves": str(OOD_PRINTED_SLOPE),
         "exponent_restored": str(slope_restored), "exponent_extracted": str(slope_extracted),
         "method": "exact sympy limits; derived worst case: rdyn.derivations.model_a.ood_excess (logits/D)"})


# ------------------------------------------------------------------------------------------
# Lemma D.6
# ------------------------------------------------------------------------------------------

def d6_derived_tan_beta() -> sp.Expr:
    """tan(beta) of Lemma D.6's angle, from the Gaussian engine's ``acos(sqrt(a)/sqrt(a+b)) = pi/2 - beta``
    (a = K p^2, b = (1-Kp)^2/(D-K)): cot(acos(x)) = x/sqrt(1 - x^2)."""
    a, b = sp.symbols("a b", positive=True)
    x = sp.sqrt(a) / sp.sqrt(a + b)
    tan_beta = sp.simplify(x / sp.sqrt(1 - x**2))          # cot(acos(x)), 0 < x < 1
    return tan_beta.subs({a: _K * _p**2, b: (1 - _K * _p) ** 2 / (_D - _K)}, simultaneous=True)


def d6_arctan_checks(restored: str = D6_RESTORED) -> list[Check]:
    """``A.extraction.D6.arctan`` (the argument as extracted) and ``.arctan.restored``."""
    derived = d6_derived_tan_beta()
    N, w = sp.symbols("N w", positive=True)
    on_domain = {_D: _K + N, _p: (1 - w) / _K}
    out = []
    for suffix, text in (("", D6_EXTRACTED), (".restored", restored)):
        ratio = sp.simplify((derived / form(text)).subs(on_domain))
        equal = sp.simplify(ratio - 1) == 0
        reading = "restored" if suffix else "as extracted"
        out.append(_check(
            f"A.extraction.D6.arctan{suffix}", f"Lemma D.6 (arctan argument, {reading})",
            f"the arctan argument {text} ({reading}) {'equals' if equal else 'differs from'} the derived "
            f"tan(beta) = sqrt(a/b) (ratio {sp.sstr(ratio.subs({N: _D - _K, w: 1 - _K * _p}))})",
            "pass" if equal else "discrepancy",
            {"printed" if not suffix else "restored_form": text, "derived": sp.sstr(derived),
             "derived_over_form": sp.sstr(sp.simplify(ratio.subs({N: _D - _K, w: 1 - _K * _p}))),
             "lost_symbol": "the square root of K(D-K)",
             "method": "exact sympy: tan(beta) = cot(acos(sqrt(a/(a+b)))), a = K p^2, b = (1-Kp)^2/(D-K)"}))
    return out


def d6_restored_a_checks(restored: str = D6_RESTORED, points: int = 40) -> list[Check]:
    """``A.extraction.D6.restored.<activation>``: the printed A(t) with the restored arctan argument
    against the engine (module docstring)."""
    import mpmath

    from rdyn.derivations import gaussian as g
    from rdyn.derivations.model_a import attention_angle as aa

    arg = form(restored)
    rng = np.random.default_rng(61)
    out = []
    for activation in ("relu", "leaky"):
        c0 = (1 + _kappa) ** 2 / 4 if activation == "leaky" else sp.Rational(1, 4)
        c1 = (1 - _kappa) ** 2 / (2 * sp.pi) if activation == "leaky" else 1 / (2 * sp.pi)
        printed = _K * _p**2 * (c0 + c1 * sp.atan(arg))         # Lemma D.6 as printed, argument restored
        missing = _K * _p**2 * c1 * sp.sin(2 * sp.atan(form(D6_RESTORED))) / 2
        f_printed = sp.lambdify((_D, _K, _p, _kappa), printed, "mpmath")
        f_missing = sp.lambdify((_D, _K, _p, _kappa), missing, "mpmath")
        f_engine = sp.lambdify((g.a_var, g.b_var, g.kappa), g.appendix_f(aa.A_NAME, activation), "mpmath")
        worst_gap, worst_residual = mpmath.mpf(0), mpmath.mpf(0)
        with mpmath.workdps(30):
            for _ in range(points):
                K = int(rng.integers(1, 9))
                D = K + int(rng.integers(1, 60))
                u = mpmath.mpf(float(rng.uniform(0.001, 0.999)))
                pv = mpmath.mpf(1) / D + (mpmath.mpf(1) / K - mpmath.mpf(1) / D) * u
                kv = mpmath.mpf(float(rng.uniform(0, 0.95))) if activation == "leaky" else mpmath.mpf(0)
                engine = f_engine(K * pv**2, (1 - K * pv) ** 2 / (D - K), kv)
                gap = engine - f_printed(D, K, pv, kv)
                worst_gap = max(worst_gap, abs(gap) / abs(engine))
                worst_residual = max(worst_residual, abs(gap - f_missing(D, K, pv, kv)) / abs(engine))
        gap, residual = float(worst_gap), float(worst_residual)
        status = "pass" if gap < 1e-25 else ("discrepancy" if residual < 1e-25 else "fail")
        out.append(_check(
            f"A.extraction.D6.restored.{activation}", "Lemma D.6 (A(t), arctan argument restored)",
            f"{activation}: A(t) as printed with the restored argument {restored} differs from the derived "
            f"E[s(pu) s'(y) pu] (relative up to {gap:.2g}) by exactly the missing K p^2 c1 sin(2 beta)/2 term "
            f"(residual {residual:.1g}, 30 digits, {points} points)" if status == "discrepancy" else
            f"{activation}: A(t) with the restored argument {restored} against the derived E[s(pu) s'(y) pu] "
            f"(relative {gap:.2g}, residual after the sin(2 beta) term {residual:.2g})",
            status,
            {"restored_form": sp.sstr(printed), "missing_term": sp.sstr(missing),
             "relative_difference": gap, "residual_after_missing_term": residual, "points": points,
             "derived": "rdyn.derivations.gaussian.appendix_f('E[x1 s(x1) s'(x1+x2)]'), a = K p^2, b = (1-Kp)^2/(D-K)",
             "note": "the sin(2 beta) term is missing in either reading of the arctan argument: the paper's error"},
            gap))
    return out


# ------------------------------------------------------------------------------------------
# Lemma D.10
# ------------------------------------------------------------------------------------------

def _identity_p_c() -> sp.Expr:
    """p_c = the zero of dC1*/dp for the identity (errata_a.identity_p_c) in this module's symbols D, K."""
    from rdyn.derivations.model_a import collapsed as ma
    from rdyn.verification.checks.errata_a import identity_p_c

    return identity_p_c().xreplace({ma.D: _D, ma.K: _K})


def _e_of_p(p, D, K):
    return (1 / p - K) / (D - K)


def d10_restored_check(restored: str = D10_RESTORED, sizes=D10_SIZES) -> Check:
    """``A.extraction.D10.restored`` (module docstring)."""
    import mpmath

    from rdyn.verification.checks.errata_a import c1_star_slope

    r = form(restored)
    p_c_identity = _identity_p_c()
    exact_gap = sp.simplify((p_c_identity - r) * sp.sqrt(_D * _K))
    below_identity = bool(exact_gap.is_positive)
    # non-vacuous iff r >= 1/D: (r D)^2 against D/(4 pi^2 K)
    non_vacuous_form = sp.simplify((r * _D) ** 2 - _D / (4 * sp.pi**2 * _K))
    non_vacuous_iff = non_vacuous_form == 0
    f_r = sp.lambdify((_D, _K), r, "mpmath")
    derivative = {act: c1_star_slope(act) for act in ACTIVATIONS}
    rows, holds = [], below_identity
    with mpmath.workdps(30):
        for D, K, act in sizes:
            kappa = LEAKY_KAPPA if act == "leaky" else 0.0
            d = lambda x: derivative[act](x, D, K, 1, kappa)  # noqa: E731  dC1*/de (< 0: C1* increasing in p)
            grid = [mpmath.mpf(j) / 400 for j in range(1, 401)]
            signs = [d(x) for x in grid]
            change = [i for i in range(len(grid) - 1) if signs[i] > 0 >= signs[i + 1] or signs[i] < 0 <= signs[i + 1]]
            lo, hi = grid[change[0]], grid[change[0] + 1]
            for _ in range(100):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if (d(mid) > 0) == (d(lo) > 0) else (lo, mid)
            p_c = 1 / (K + (D - K) * (lo + hi) / 2)
            rv = f_r(D, K)
            applies = rv >= mpmath.mpf(1) / D
            increasing = True
            if applies:   # C1* increasing on [1/D, r]: dC1*/de < 0 at 200 points of p there
                ps = [mpmath.mpf(1) / D + (rv - mpmath.mpf(1) / D) * j / 199 for j in range(200)]
                increasing = all(d(_e_of_p(pv, D, K)) < 0 for pv in ps)
            holds &= bool(rv < p_c) and increasing and len(change) == 1
            rows.append({"D": D, "K": K, "activation": act, "kappa": kappa if act == "leaky" else None,
                         "restored_threshold": float(rv), "p_c": float(p_c), "one_over_D": 1 / D,
                         "non_vacuous": bool(applies), "C1star_increasing_up_to_threshold": bool(increasing),
                         "threshold_below_p_c": bool(rv < p_c), "zeros_of_derivative": len(change)})
    holds &= any(row["non_vacuous"] for row in rows)   # a condition no p >= 1/D meets says nothing
    return _check(
        "A.extraction.D10.restored", "Lemma D.10 (lost square root restored)",
        f"restored condition p(t) <= {restored}: below p_c (identity exactly, (p_c - r) sqrt(DK) = "
        f"{sp.sstr(exact_gap)}; ReLU, Leaky ReLU at {len(rows)} sizes), so C1* increases while it holds; met by "
        + ("some p >= 1/D iff D >= 4 pi^2 K" if non_vacuous_iff else
           f"some p >= 1/D at {sum(row['non_vacuous'] for row in rows)} of the sizes"),
        "pass" if holds else "discrepancy",
        {"restored_form": restored, "extracted_form": D10_EXTRACTED, "p_c_identity": sp.sstr(p_c_identity),
         "identity_gap_times_sqrt_DK": sp.sstr(exact_gap), "threshold_below_p_c_identity": below_identity,
         "non_vacuous_iff_D_ge_4_pi2_K": bool(non_vacuous_iff), "per_size": rows,
         "lost_symbol": "the square root of D K",
         "method": "identity: sympy solve and exact simplification; ReLU, Leaky ReLU (kappa 0.1): the zero of "
                   "the derived dC1*/de by bisection at 30 digits, the sign of dC1*/de at 200 points of [1/D, r]"})


def checks() -> tuple[Check, ...]:
    return (s_identity_restored_check(), step3_restored_check(), *d18_restored_checks(), ood_rate_restored_check(),
            *d6_arctan_checks(),
            *d6_restored_a_checks(), d10_restored_check())
