"""Errata data for the claims ledger (issue 19; docs/interface.md, "rdyn claims", corrections): the
classification of every discrepancy (``kind``, ``root_cause``) and the corrected statements.

A correction is data plus checks: :class:`CorrectionSpec` names the quantity, relation, limit
and validity in words, and the checks (ids of ``rdyn verify`` records, usually ``A.errata.*``
from :mod:`rdyn.verification.checks.errata_a`) that decide it. Expressions that come from a
derivation are not written here: ``expression_from`` names the check whose ``detail`` holds
the derived ``expression`` (an object per activation) and ``tex``; only statements with no
constant to derive (conditions, a square root) carry a literal expression. The correction's
``verdict`` is ``pass`` when every deciding check passes, ``fail`` otherwise.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Sequence

KINDS = ("wrong_rate", "wrong_constant", "wrong_formula", "sign", "vacuous_condition", "false_step",
         "unreachable_threshold", "notation", "other")
QUANTITIES = ("excess_loss", "S_error_F", "WV_error_F", "one_minus_Kp", "p", "T_star", "t1",
              "delta_C2_plus_C3", "eta_max", "ood_excess_loss", "other")
RELATIONS = ("asymptotic", "upper_bound", "lower_bound", "equal", "condition")

# root cause id -> one line (what the one cause is)
ROOT_CAUSES = {
    "late_rate_1_minus_Kp": "in phase 3, 1 - K p decays like T^(-1/2), not 1/T (the late-phase law "
                            "e^-2 ~ 2 g2 eta T/scale for e = exp(-(C2+C3)/scale)); every quantity linear "
                            "in 1 - K p or C1 - 1 inherits T^(-1/2)",
    "late_increment_D_power": "the late increment of C2 + C3 is eta g2 e^{-2(C2+C3)/D} with g2 = ||V*||^2/K^3 "
                              "(identity), ||V*||^2 (1 + kappa^2)/(2K^3) (Leaky ReLU; ReLU at kappa = 0): "
                              "no 1/D^3; the excess-loss constant l2 D/(2 g2) = K D^2 (D-K)/4 follows",
    "Tstar_logit_scale": "with the seed's softmax scale 1/D, eta T* grows like K D (D-K)^2/||V*||^2 "
                         "(D^3); the printed D^2 is the order for the conference version's scale 1/sqrt(D)",
    "S_norm_sqrt": "||S - S*||_F has sqrt(K (D-K)) in the denominator, not K (D-K)",
    "p_threshold_half": "p(t) < 1/K, so p >= 1/2 is unreachable for K >= 2; the reachable threshold is 1/(2K)",
    "D10_condition": "p(t) >= 1/D > 1/(2 pi D K): Lemma D.10's condition never holds",
    "D15_numeric_step": "3(D-K)/D^2 <= 0.025 holds only for D^2 >= 120 (D-K), at none of the presets",
    "ood_slope": "the excess OOD loss decays like 1/T (slope -1 on log-log axes), not with slope -0.5",
    "A_of_t_printed": "Lemma D.6's printed A(t) differs from the Gaussian expectation it stands for",
    "D8_sign": "Lemma D.8's in-group gradient coefficient has - p F1 where the print has + p F1",
    "B3_eta_max_S0": "Theorem B.3's first eta_max term is d/(8 kappa2 sqrt(S0^2 + 16 gamma*^2)); the print "
                     "has 1 for S0^2 (equal only for S0 = 1) and Part 3 writes Upsilon_2 for kappa2",
}


@dataclass(frozen=True)
class CorrectionSpec:
    statement: str
    quantity: str
    relation: str
    limit: str | None
    valid: str
    checks: tuple[str, ...]
    expression: Any = None          # literal expression (str or per-activation dict), or None
    expression_from: str | None = None  # check id whose detail holds "expression" (and "tex")
    tex: str | None = None
    logit_scale: str | None = None


@dataclass(frozen=True)
class Classification:
    kind: str
    root_cause: str
    correction: CorrectionSpec | None = None


_LATE_VALID = ("T >= T_star, T -> oo at fixed D, K; any eta for which the map converges (checked at "
               "the default eta = eta_limit/2 and inside the paper's step-size conditions); logits/D "
               "(the sqrtD form is in the check's detail)")


def _late(quantity: str, what: str, rate: str) -> CorrectionSpec:
    return CorrectionSpec(
        f"{what} ~ expression (derived late-phase law: {rate}, constant in `expression`, per activation)",
        quantity, "asymptotic", "T->oo", _LATE_VALID,
        (f"A.errata.late.{quantity}", f"A.errata.late.{quantity}.sqrtD"),
        expression_from=f"A.errata.late.{quantity}", logit_scale="D")


CLASSIFICATION: dict[tuple[str, str], Classification] = {
    ("A", "Theorem 3.1 (loss)"): Classification(
        "wrong_constant", "late_increment_D_power",
        _late("excess_loss", "L(T) - L_opt", "Theta(K D^2 (D-K)/(eta T)), not K D^4/(eta T)")),
    ("A", "Theorem 3.1 (Step 3)"): Classification(
        "wrong_rate", "late_rate_1_minus_Kp",
        _late("S_error_F", "||S^(T) - S*||_F", "Theta(T^(-1/2))")),
    ("A", "Theorem 3.1 (Step 3, W_V)"): Classification(
        "wrong_rate", "late_rate_1_minus_Kp",
        _late("WV_error_F", "||W_V^(T) - V*||_F", "Theta(T^(-1/2))")),
    ("A", "Theorem 3.1 (proof: D^{5/2} order)"): Classification(
        "wrong_rate", "late_rate_1_minus_Kp",
        _late("S_error_F", "||S^(T) - S*||_F", "Theta(D^{3/2} (D-K)^{1/2}/sqrt(eta ||V*||^2 T)), "
              "not D^{5/2}/(eta ||V*||^2 T)")),
    ("A", "Theorem 3.1 (proof: S identity)"): Classification(
        "wrong_formula", "S_norm_sqrt",
        CorrectionSpec("||S - S*||_F = D (1 - K p)/sqrt(K (D-K)) (from the attention structure)", "S_error_F",
                       "equal", None, "every t (p in [1/D, 1/K))", ("A.errata.S_identity",),
                       expression="D*(1 - K*p)/sqrt(K*(D - K))",
                       tex=r"\|S - S^*\|_F = \frac{D\,(1 - Kp)}{\sqrt{K(D-K)}}")),
    ("A", "Lemma D.17"): Classification(
        "wrong_rate", "Tstar_logit_scale",
        CorrectionSpec("T* ~ expression as D -> oo: eta T* = D (D-K)^2 (I0 + I1 (D-K)^(-1/2)) with I0 = K/||V*||^2 "
                       "(identity, ReLU), K/(||V*||^2 (1 + kappa^2)) (Leaky ReLU), I1 = 0 (identity), "
                       "(2 + 4 pi^2) K^(3/2)/(pi ||V*||^2) (ReLU), "
                       "(2 K^(3/2)/(pi ||V*||^2)) (2 pi^2 (1+kappa^2)/(1-kappa^2)^2 + (1-kappa)^2/(1+kappa^2)^2) "
                       "(Leaky ReLU, fixed kappa in [0, 1)); "
                       "Theta(K D^3/(eta ||V*||^2)) with logits/D, and 1/D of it, Theta(K D^2/(eta ||V*||^2)) "
                       "as printed, with logits/sqrtD",
                       "T_star", "asymptotic", "D->oo",
                       "eta -> 0 (T* = tau_star/eta up to O(eta) relative), K (and kappa) fixed, D -> oo",
                       ("A.errata.Tstar",), expression_from="A.errata.Tstar", logit_scale="D")),
    ("A", "Lemma D.18"): Classification(
        "wrong_rate", "late_rate_1_minus_Kp",
        CorrectionSpec("For T >= T* + 1: p(T) >= expression and p(T) <= upper_expression, i.e. "
                       "(D-K)/(K(D-K+K sqrt(R+))) <= 1/K - p(T) <= (D-K)/(K(D-K+K sqrt(R-))) with "
                       "R+ = ((D-K)/K)^2 + 2 g2 eta (T-T*+1)/D, R- = ((D-K)/K)^2 + 2 q_min g2 eta (T-T*)/D "
                       "(g2 = M/K^3 identity, M (1+kappa^2)/(2K^3) Leaky ReLU, kappa = 0 ReLU; q_min = q(K/(D-K)) "
                       "of the derived increment ratio, as in Lemma D.19's correction). Both sides are "
                       "Theta(T^(-1/2)); the printed bounds are Theta(1/T). Tight along the validation "
                       "trajectories: the upper side is at most 1.38 times, the lower side at least 0.895 times "
                       "1/K - p; as T -> oo, 1/K - p ~ sqrt(D) (D-K)/sqrt(K M eta T) (ReLU)",
                       "p", "lower_bound", None,
                       "T >= T* + 1 (p >= 1/(2K)); checked inside the paper's step-size conditions and at "
                       "eta = eta_limit/2; logits/D (sqrtD: D -> sqrt(D) in R+-, in the check's detail)",
                       ("A.errata.bound.D18", "A.errata.bound.D18.sqrtD",
                        "A.errata.late.one_over_K_minus_p", "A.errata.late.one_over_K_minus_p.sqrtD"),
                       expression_from="A.errata.bound.D18", logit_scale="D")),
    ("A", "Lemma D.19"): Classification(
        "wrong_constant", "late_increment_D_power",
        CorrectionSpec("For T >= T*: expression (1 - |C1/C1* - 1|) <= Delta(C2 + C3) <= upper_expression, i.e. "
                       "q_min eta g2 e^{-2(C2+C3)/D} (1 - |C1/C1* - 1|) <= Delta(C2+C3) <= eta g2 e^{-2(C2+C3)/D} "
                       "(C1* the fixed point of the C1 update at p(T); the lag factor is needed: the derivation "
                       "assumed C1 = C1*, and without it the lower side fails at T* itself, e.g. ratio "
                       "0.99999897 at ReLU, D = 12, K = 3, eta = 0.01, a certified counterexample of rdyn prove; "
                       "`expression` is the lower side on the slow manifold C1 = C1*) (g2 = M/K^3 identity, "
                       "M (1+kappa^2)/(2K^3) Leaky ReLU, kappa = 0 ReLU; q_min = ((D-K)/D)^2 identity, "
                       "((D-K)/D)^2 (1 - b/pi)(1 - b/pi + sqrt(K/(D-K))/pi) ReLU with b = arctan sqrt(K/(D-K))): "
                       "no 1/D^3. The two sides differ by 1/q_min (2.1 at D = 4K, 5.0 at D = 2K, -> 1 as "
                       "D/K -> oo); Delta(C2+C3) ~ eta g2 e^{-2(C2+C3)/D} as T -> oo",
                       "delta_C2_plus_C3", "lower_bound", None,
                       "T >= T* (p >= 1/(2K)), with the lag factor on the lower side; certified by rdyn prove "
                       "for the instances in `strength_basis` (docs/proofs.md); checked inside the paper's "
                       "step-size conditions and at eta = eta_limit/2; logits/D (sqrtD: exponent "
                       "-2(C2+C3)/sqrt(D), g2 times sqrt(D))",
                       ("A.errata.bound.D19", "A.errata.bound.D19.sqrtD",
                        "A.errata.late.delta_C2_plus_C3", "A.errata.late.delta_C2_plus_C3.sqrtD"),
                       expression_from="A.errata.bound.D19", logit_scale="D")),
    ("A", "Lemma D.17 (threshold)"): Classification(
        "unreachable_threshold", "p_threshold_half",
        CorrectionSpec("p(T*) >= 1/(2K) (reached; p(t) < 1/K for all t and p -> 1/K)", "p", "condition", None,
                       "every K >= 1, both logit scales", ("A.errata.p_threshold",),
                       expression="1/(2*K)", tex=r"p(T^*) \ge \frac{1}{2K}")),
    ("A", "Lemma D.10"): Classification(
        "vacuous_condition", "D10_condition",
        CorrectionSpec("C1*(t) is monotonically increasing w.r.t. t while p(t) <= p_c, with p_c = 1/sqrt(D K) "
                       "(identity) and p_c the root of dC1*/dp = 0 for ReLU (0.2364 at D=8, K=2; 0.1046 at "
                       "D=20, K=4) and Leaky ReLU (0.1597 at D=12, K=3, kappa=0.1), below 1/sqrt(DK); it "
                       "decreases after", "p", "condition", None,
                       "every D > K >= 1 (identity closed form; ReLU and Leaky ReLU numerically, values in the check)",
                       ("A.errata.D10",), expression_from="A.errata.D10")),
    ("A", "Lemma D.15 (proof)"): Classification(
        "false_step", "D15_numeric_step",
        CorrectionSpec("3(D-K)/D^2 <= 0.025 holds iff D^2 >= 120 (D - K) (e.g. D >= 116 for K = 4); the step "
                       "needs this as an extra condition", "other", "condition", None, "every D > K >= 1",
                       ("A.errata.D15_condition",), expression="D**2 - 120*(D - K)",
                       tex=r"D^2 \ge 120\,(D-K)")),
    ("A", "Section 4.1 (OOD slope)"): Classification(
        "wrong_rate", "ood_slope",
        CorrectionSpec("L_OOD - L*_OOD ~ expression (slope -1 on log-log axes, not -0.5): with iid Exp(1) inputs "
                       "and v* = (1/2)(1,1,1,1) every argument is positive, the excess is an exact quadratic form in "
                       "(C1 p - 1/K, C1 q) and C1 p - 1/K = O(e^2)", "ood_excess_loss", "asymptotic", "T->oo",
                       "T -> oo, Section 4.1's OOD inputs (iid Exp(1), STS teacher, v* = (1/2)(1,1,1,1), M = 1), "
                       "logits/D", ("A.errata.ood",), expression_from="A.errata.ood", logit_scale="D")),
    ("A", "Lemma D.6"): Classification(
        "wrong_formula", "A_of_t_printed",
        CorrectionSpec("A(t) = E[sigma(p u) sigma'(y) p u] = (1+kappa)^2 K p^2/4 + (1-kappa)^2 K p^2 (beta + sin(2 beta)/2)/(2 pi) "
                       "with beta = arctan(sqrt(K(D-K)) p/(1-Kp)) (ReLU: kappa = 0): the printed arctan argument "
                       "lacks the square root and the sin(2 beta) term is missing; coefficients derived by "
                       "rdyn.derivations.attention_angle", "other", "equal", None,
                       "every p in [1/D, 1/K), K < D; ReLU and Leaky ReLU (identity: A = K p^2 as printed)",
                       ("A.A_of_t.readable.*", "A.gauss.*", "A.F3_is_A_plus_B.*"),
                       expression_from="A.A_of_t.readable.*")),
    ("A", "Lemma D.8"): Classification(
        "sign", "D8_sign",
        CorrectionSpec("in-group coefficient of grad_{W_KQ} L is -(C1 M/D)((F4/p - F3)/K - C1 (F2_1 - p F1)) "
                       "(identity closed form in `expression`)", "other", "equal", None,
                       "every state on the C1 > 0 branch", ("A.map.mc.*",), expression_from="A.gradWKQ.identity")),
    ("B", "Theorem B.3 (eta_max)"): Classification(
        "wrong_formula", "B3_eta_max_S0",
        CorrectionSpec("eta_max = min{d/(8 kappa2 sqrt(S0^2 + 16 gamma*^2)), d/(2 kappa2 S0), "
                       "d/(2 kappa2 sqrt(2 S0 gamma*))}", "eta_max", "equal", None,
                       "no-LN layer, both targets, S0 = alpha0^2 + beta0^2 > 0",
                       ("B.noln.eta_max_descent.*",), expression_from="B.noln.eta_max")),
    ("B", "Theorem B.3 (Part 3)"): Classification(
        "notation", "B3_eta_max_S0",
        CorrectionSpec("0 < eta <= d/(8 kappa2 sqrt(S0^2 + 16 gamma*^2)) (kappa2 = E||S a||^2, not Upsilon_2; "
                       "S0^2, not 1)", "eta_max", "upper_bound", None,
                       "no-LN layer, both targets, S0 = alpha0^2 + beta0^2 > 0", ("B.noln.eta_max_descent.*",),
                       expression="d/(8*kappa2*sqrt(S0**2 + 16*gamma_star**2))",
                       tex=r"0 < \eta \le \frac{d}{8\kappa_2\sqrt{S_0^2 + 16(\gamma^\star)^2}}")),
}


_LABEL_OF = {id(cls.correction): key for key, cls in CLASSIFICATION.items() if cls.correction is not None}


def correction_object(spec: CorrectionSpec, cls: Classification, checks: Sequence) -> dict:
    """The correction object (docs/interface.md) from the spec and the checks that ran."""
    from rdyn.verification.checks.registry import id_matches

    deciding = [c for c in checks if any(id_matches(c.id, g) for g in spec.checks)]
    expression, tex, upper = spec.expression, spec.tex, None
    for pattern in (spec.expression_from,) if spec.expression_from else ():
        sources = [c for c in checks if id_matches(c.id, pattern)]
        upper = next((c.detail["upper_expression"] for c in sources if "upper_expression" in c.detail), upper)
        found = {}
        for c in sources:
            value = c.detail.get("expression", c.detail.get("derived"))
            if isinstance(value, str) and len(sources) > 1:  # one check per activation: A.x.<activation>
                found[c.id.rsplit(".", 1)[-1]] = _spec_symbols(value)
                tex = c.detail.get("tex", tex)  # the last activation's (the most general, e.g. leaky's kappa form)
            elif value is not None:
                expression = _spec_symbols(value) if isinstance(value, str) else value
                tex = c.detail.get("tex", tex)
        if found:
            expression = found
        if isinstance(expression, str) and tex is None:
            tex = _latex(expression)
    verdict = "pass" if deciding and all(c.status == "pass" for c in deciding) else "fail"
    out = {"statement": spec.statement, "tex": tex, "kind": cls.kind, "root_cause": cls.root_cause,
           "quantity": spec.quantity, "relation": spec.relation, "limit": spec.limit, "valid": spec.valid,
           "expression": expression, "checks": [c.id for c in deciding], "verdict": verdict}
    if spec.logit_scale is not None:
        out["logit_scale"] = spec.logit_scale
    if upper is not None:  # two-sided bound: relation lower_bound, this is the upper side
        out["upper_expression"] = ({a: _spec_symbols(v) for a, v in upper.items()} if isinstance(upper, dict)
                                   else _spec_symbols(upper))
    if not deciding:
        out["reason"] = f"no check matching {list(spec.checks)} ran"
    from rdyn.verification.claims import strength

    out["strength"], out["strength_basis"] = strength.of_correction(*_LABEL_OF.get(id(spec), ("", "")),
                                                                    [c.id for c in deciding])
    return out


def _spec_symbols(text: str) -> str:
    """A derived sympy string in the vocabulary of docs/interface.md (M for ||V*||_F^2)."""
    return text.replace("vstar_norm2", "M")


def _latex(text: str) -> str | None:
    import sympy as sp

    from rdyn.derivations.formula import parse, symbols_in

    try:
        return sp.latex(parse(text, symbols_in(text), what="correction", symbolic_exponents=True,
                              max_length=4000, max_nodes=2000))
    except ValueError:
        return None



def attach(result, checks: Sequence):
    """``result`` (a discrepancy) with its kind, root cause and correction (None if none derived)."""
    cls = CLASSIFICATION.get((result.entry.paper, result.entry.label))
    if cls is None:
        return dataclasses.replace(result, kind="other", root_cause="unclassified")
    if cls.correction is None:
        return dataclasses.replace(result, kind=cls.kind, root_cause=cls.root_cause)
    from rdyn.verification.checks.registry import id_matches

    records = [c for c in checks if any(id_matches(c.id, g) for g in cls.correction.checks)]
    return dataclasses.replace(result, kind=cls.kind, root_cause=cls.root_cause,
                               correction=correction_object(cls.correction, cls, checks), correction_records=records)


def correction_globs(paper: str = "all") -> list[str]:
    """Check patterns every correction needs (added to the ledger's run)."""
    out: list[str] = []
    for (p, _), cls in CLASSIFICATION.items():
        if cls.correction is not None and paper in ("all", p):
            out += [g for g in cls.correction.checks if g not in out]
    return out
