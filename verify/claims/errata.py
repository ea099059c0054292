"""Errata data for the claims ledger (docs/interface.md, "rdyn claims", corrections): the
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
         "unreachable_threshold", "notation", "extraction_suspect", "other")
QUANTITIES = ("excess_loss", "S_error_F", "WV_error_F", "one_minus_Kp", "p", "T_star", "t1",
              "delta_C2_plus_C3", "eta_max", "ood_excess_loss", "other")
RELATIONS = ("asymptotic", "upper_bound", "lower_bound", "equal", "condition")

@dataclass(frozen=True)
class RootCause:
    """One distinct error: what it is (``statement``), the derivation that shows it
    (``derivation``), and the ``rdyn verify`` checks whose discrepancy exhibits it (``checks``,
    id patterns). A discrepant check belongs to exactly one cause, so an error decides every
    entry under one id; an entry decided by several discrepant checks lists each cause."""

    statement: str
    derivation: str
    checks: tuple[str, ...]


ROOT_CAUSES: dict[str, RootCause] = {
    "late_rate_1_minus_Kp": RootCause(
        "in phase 3, 1 - K p decays like T^(-1/2), not 1/T; every quantity linear in 1 - K p or C1 - 1 "
        "inherits T^(-1/2) (and the D-order that comes with it); as extracted (every root sign lost) Lemma D.18 and "
        "the D^{5/2} line read 1/T: with the root over their denominators they read T^(-1/2) and keep an order in D "
        "too large by sqrt(D) (A.extraction.D18.restored, A.extraction.S_D52.restored)",
        "rdyn.derivations.model_a.late_phase: on the slow manifold the increment of x = C2 + C3 is eta g2 e^2 (1 + O(e)) "
        "with e = exp(-x/D), so e^(-2) ~ 2 g2 eta T/D and 1 - K p = (D-K) e/(K + (D-K) e) ~ ((D-K)/K) e; "
        "checked against the collapsed map (A.errata.late.*) and by the exponents of derived/printed "
        "(A.errata.derived.*)",
        ("A.errata.derived.S_D52", "A.errata.derived.D18", "A.claim.phase3.p_lower.*", "A.claim.phase3.p_upper.*", "A.claim.phase3.pC1*",
         "A.claim.step3.S_exponent.*", "A.claim.step3.WV_exponent.*")),
    "step3_sqrt_T": RootCause(
        "Step 3 of Section 5 as extracted: ||S - S*||_F, ||W_V - V*||_F = Theta(1/T); with the square root the "
        "extraction plausibly lost, Theta(1/sqrt(T)), the derived late-phase rate and the only reading under which "
        "the loss Theta(1/T) the step infers from it follows under the squared loss",
        "T-exponents of the derived leading terms over 1/sqrt(T) are 0 and of the derived loss over its square 0 "
        "(exact sympy limits, A.extraction.step3.restored); as extracted the exponent differs "
        "(A.errata.derived.S_step3, A.errata.derived.WV_step3)",
        ("A.errata.derived.S_step3", "A.errata.derived.WV_step3")),
    "late_increment_D_power": RootCause(
        "the late increment of C2 + C3 is eta g2 e^(-2(C2+C3)/D) with g2 = M/K^3 (identity), M (1 + kappa^2)/(2K^3) "
        "(Leaky ReLU; ReLU at kappa = 0): no 1/D^3",
        "rdyn.derivations.model_a.late_phase (g2 from the expansion of the collapsed map at e -> 0); the printed "
        "eta M/(K^3 D^3) has D-exponent -3 against 0 (A.errata.derived.D19); two-sided bounds checked on the map "
        "(A.errata.bound.D19)",
        ("A.errata.derived.D19", "A.claim.phase3.dC23_*")),
    "loss_D_order": RootCause(
        "Theorem 3.1's excess loss is Theta(K D^2 (D-K)/(eta T)) (order D^3), not K D^4/(eta T); the printed D^4 "
        "follows neither from the derivation nor from Lemma D.19 as printed (whose g2/D^3 would give about "
        "K D^5 (D-K)/(eta T))",
        "rdyn.derivations.model_a.late_phase: the excess loss is quadratic in e near the teacher, L - L_opt ~ c_L e^2 "
        "(c_L its derived second-order coefficient), with e^(-2) ~ 2 g2 eta T/D, so L - L_opt ~ c_L D/(2 g2 eta T) "
        "= K D^2 (D-K)/(4 eta T) for every activation; exponent of derived/printed in D is -1 "
        "(A.errata.derived.loss_theorem31)",
        ("A.errata.derived.loss_theorem31", "A.claim.step3.loss_exponent.*")),
    "Tstar_logit_scale": RootCause(
        "with the seed's softmax scale 1/D, eta T* grows like K D (D-K)^2/||V*||^2 (D^3); the printed D^2 is the "
        "order for the conference version's scale 1/sqrt(D)",
        "rdyn.derivations.model_a.asymptotics.tau_star_expansion: eta T* -> tau_star = D (D-K)^2 (I0 + I1 (D-K)^(-1/2)) "
        "(logits/D; 1/D of it with logits/sqrtD); D-exponent 3 against the printed 2 (A.flow.Tstar_exponent.D)",
        ("A.flow.Tstar_exponent.*", "A.claim.Tstar_D_exponent.*", "A.Tstar.D_exponent.*", "S.A.Tstar.D.*")),
    "S_norm_sqrt": RootCause(
        "||S - S*||_F has sqrt(K (D-K)) in the denominator, not K (D-K)",
        "each of the D columns of S has K entries p and D-K entries (1 - K p)/(D-K); S* has 1/K and 0: "
        "||S - S*||_F^2 = D [K (1/K - p)^2 + (D-K) q^2] = D^2 (1 - K p)^2/(K (D-K)) (sympy, A.claim.S_identity; "
        "explicit matrices, A.errata.S_identity)",
        ("A.claim.S_identity",)),
    "p_threshold_half": RootCause(
        "p(t) < 1/K, so p >= 1/2 is unreachable for K >= 2; the reachable threshold is 1/(2K)",
        "p = 1/(K + (D-K) e) with e = exp(-(C2+C3)/D) > 0 gives p < 1/K (A.claim.D17.threshold); p crosses 1/(2K) "
        "at T* on every validation trajectory (A.errata.p_threshold)",
        ("A.claim.D17.threshold",)),
    "D10_condition": RootCause(
        "p(t) >= 1/D > 1/(2 pi D K): Lemma D.10's condition never holds",
        "p starts at 1/D and increases (A.claim.D10); C1*(p) increases up to p_c = 1/sqrt(D K) for the identity "
        "(sympy root of dC1*/dp, A.errata.D10)",
        ("A.claim.D10",)),
    "D15_numeric_step": RootCause(
        "3(D-K)/D^2 <= 0.025 holds only for D^2 >= 120 (D-K), at none of the presets",
        "40 D^2 (3(D-K)/D^2 - 1/40) = 120 (D-K) - D^2 (sympy), and every D <= 400 (A.errata.D15_condition)",
        ("A.claim.D15.numeric",)),
    "ood_slope": RootCause(
        "the excess OOD loss of the population dynamics decays like 1/T (slope -1 on log-log axes), not with "
        "slope -0.5",
        "with iid Exp(1) inputs every argument is positive, so the excess is an exact quadratic form in "
        "(C1 p - 1/K, C1 q) with C1 p - 1/K = O(e^2) and C1 q ~ e/K: excess ~ c e^2 ~ 1/T (A.errata.ood)",
        ("A.claim.sec4.ood_slope",)),
    "ood_worst_case_rate": RootCause(
        "Theorem 3.2 over its class of Y (bounded second moments) converges like T^(-1/2) in the worst case, not "
        "O(1/T): the excess L_OOD - 1/2 E||Y - f*||^2 = Q - E<Y - f*, TF - f*> has a cross term linear in the "
        "attention error (~ T^(-1/2)); it vanishes only for special Y (e.g. f*(X) + independent noise)",
        "rdyn.derivations.model_a.ood_excess: u = TF - f* = e w + O(e^2), w = z_out/K, e^2 ~ c_e/(eta T); by "
        "Cauchy-Schwarz the sup over E||Y - f*||^2 <= B^2 is Q + B sqrt(2Q) = B sqrt(2 q2) e + O(e^2), attained by "
        "the fixed Y = f*(X) - B w/(sqrt(D) ||w||) (ratio 1, sympy); Monte Carlo of the network's losses with that Y "
        "agrees with the exact form and the leading term (A.claim.thm32.rate)",
        ("A.claim.thm32.rate",)),
    "A_of_t_printed": RootCause(
        "Lemma D.6's printed A(t) lacks the (1-kappa)^2 K p^2 sin(2 beta)/(4 pi) term of the Gaussian expectation it "
        "stands for (in either reading of the arctan argument)",
        "rdyn.derivations.model_a.attention_angle: A = E[sigma(p u) sigma'(y) p u] = (1+kappa)^2 K p^2/4 + (1-kappa)^2 K p^2 "
        "(beta + sin(2 beta)/2)/(2 pi), beta = arctan(sqrt(K(D-K)) p/(1-Kp)); against quadrature (A.A_of_t.*)",
        ("A.A_of_t.relu", "A.A_of_t.leaky", "A.extraction.D6.restored.*")),
    "D6_arctan_sqrt": RootCause(
        "Lemma D.6 as extracted has arctan(K(D-K) p/(1-Kp)); the derived angle is arctan(sqrt(K(D-K)) p/(1-Kp)): "
        "a square root the extraction plausibly lost",
        "tan(beta) = cot(acos(sqrt(a/(a+b)))) with a = K p^2, b = (1-Kp)^2/(D-K) (the Gaussian engine's angle), "
        "exactly sqrt(K(D-K)) p/(1-Kp) (sympy, A.extraction.D6.arctan[.restored])",
        ("A.extraction.D6.arctan",)),
    "D8_sign": RootCause(
        "Lemma D.8's in-group gradient coefficient has - p F1 where the print has + p F1",
        "sympy gradient of the collapsed loss (A.gradWKQ.identity) and Monte Carlo of the full-matrix gradient "
        "(A.map.mc.*)",
        ("A.gradWKQ.*",)),
    "F34_variance_for_sd": RootCause(
        "Lemmas F.3, F.4 as extracted write the variances a, b (and ab) where the standardised form needs the "
        "standard deviations: sqrt(a) z1 + sqrt(b) z2 and sqrt(ab); a square root the text extraction plausibly "
        "lost (the paper's own F.1 has E[x^2] = a, so a, b are variances)",
        "x1 = sqrt(a) z1, x2 = sqrt(b) z2 with z iid N(0,1); the printed form by Monte Carlo (2e6 samples, "
        "a = 2, b = 1/2) differs from the derived expectation (rdyn.derivations.gaussian.appendix_f) by about 10 and "
        "45 standard errors, the restored form agrees (A.printedF.F3[.restored], A.printedF.F4[.restored])",
        ("A.printedF.F3", "A.printedF.F4")),
    "F67_Phi_sqrt_c": RootCause(
        "Lemmas F.6, F.7 as extracted write Phi((x1+x2)/c) for P(x3 >= -(x1+x2)) with x3 ~ N(0, c): the argument "
        "needs sqrt(c), a square root the extraction plausibly lost",
        "P(x3 >= -y) = Phi(y/sqrt(c)); by quadrature the printed steps differ from the derived expectation and "
        "agree to 1e-15 with sqrt(c) restored (A.printedF.F6_*, A.printedF.F7_phi)",
        ("A.printedF.F6_*", "A.printedF.F7_phi")),
    "F7_density_sqrt": RootCause(
        "Lemma F.7 as extracted writes the N(0, a) density as e^{-x^2/(2a)}/(2 pi a): the normalisation is "
        "(2 pi a)^(-1/2), a square root the extraction plausibly lost",
        "by quadrature (Gauss-Hermite inner integral) the printed densities give 1/(2 pi sqrt(ab)) times the "
        "derived value; with (2 pi a)^(-1/2), (2 pi b)^(-1/2) they agree to 1e-15 (A.printedF.F7_density)",
        ("A.printedF.F7_density",)),
    "B3_eta_max_S0": RootCause(
        "Theorem B.3's first eta_max term is d/(8 kappa2 sqrt(S0^2 + 16 gamma*^2)); the print has 1 for S0^2 "
        "(equal only for S0 = 1), and with it Part 1 fails (a certified counterexample of rdyn prove --paper B)",
        "the descent expansion of Part 1 (L'' = 2 kappa2) bounds the eta^2 terms by (1/2) eta d S_t F^2 when "
        "eta <= d/(8 kappa2 sqrt(S0^2 + 16 gamma*^2)) (a sufficient condition: the B3_* identities of "
        "rdyn.derivations.model_a.correction_identities; sympy, B.noln.eta_max; descent at that step, "
        "B.noln.eta_max_descent.*); at the printed eta_max rdyn prove --paper B refutes Part 1 "
        "(B.claim.B3.part1_prove)",
        ("B.noln.eta_max", "B.claim.B3.part1_prove")),
    "B3_Upsilon2": RootCause(
        "Theorem B.3 Part 3 writes Upsilon_2, a symbol the paper never defines, where the step-size bound needs "
        "kappa2 = E||S a||^2",
        "Part 1's expansion has L''(gamma) = 2 kappa2, so kappa2 enters the bound; none of the defined Upsilon, "
        "Upsilon_1, Upsilon_3 equals kappa2 (B.claim.B3.upsilon2, Task 2 spectrum)",
        ("B.claim.B3.upsilon2",)),
}


def cause_text(cause: str) -> str:
    """One line: the cause's statement (empty for an unknown id)."""
    rc = ROOT_CAUSES.get(cause)
    return rc.statement if rc is not None else ""


def cause_of_check(check_id: str) -> str | None:
    """The one root cause whose checks match ``check_id`` (None if none; ValueError if two)."""
    from rdyn.verification.checks.registry import id_matches

    found = [name for name, rc in ROOT_CAUSES.items() if any(id_matches(check_id, g) for g in rc.checks)]
    if len(found) > 1:
        raise ValueError(f"check {check_id} belongs to several root causes: {found}")
    return found[0] if found else None


RATE_VARIABLES = ("T", "D", "K", "eta")


def exponent_differs(check) -> bool:
    """The check shows an exponent in T, D, K or eta differing from the printed one: a nonzero
    exponent of derived/printed, a derived D-exponent other than the printed, or a deciding fit
    that the rule calls a discrepancy."""
    from rdyn.verification.claims.fit_rule import deciding_fits

    d = check.detail if isinstance(check.detail, dict) else {}
    exps = d.get("exponent_of_derived_over_printed")
    if isinstance(exps, dict):
        rows = exps.values() if all(isinstance(v, dict) for v in exps.values()) else [exps]
        if any(str(row.get(v, "0")) != "0" for row in rows for v in RATE_VARIABLES):
            return True
    if "derived_D_exponent" in d and "printed_D_exponent" in d and d["derived_D_exponent"] != d["printed_D_exponent"]:
        return True
    return any(f["verdict"] == "discrepancy" for _, f in deciding_fits(d))


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


_LATE_VALID = ("T -> oo at the D, K, activation and eta of each listed instance (T >= T_star); the form shown is "
               "for logits/D (the logits/sqrt(D) form, outside the paper's model, is in the check's detail)")


def _late(quantity: str, what: str, rate: str) -> CorrectionSpec:
    return CorrectionSpec(
        f"{what} ~ the derived leading term below (late-phase law: {rate}; its constant per activation)",
        quantity, "asymptotic", "T->oo", _LATE_VALID,
        (f"A.errata.late.{quantity}", f"A.errata.late.{quantity}.sqrtD"),
        expression_from=f"A.errata.late.{quantity}", logit_scale="D")


# Theorem 3.2 and Section 4.1's rate state one bound (the excess OOD loss over the theorem's class of Y)
_OOD_WORST_CASE = CorrectionSpec("for every X, Y with E||Y - f*(X)||_F^2 <= B^2: L_OOD - 1/2 E||Y - f*(X)||_F^2 <= Q + B sqrt(2 Q) "
    "= Theta(T^(-1/2)), Q = 1/2 E||TF - f*||_F^2 = Theta(1/T); the leading term below (Section 4.1's "
    "OOD inputs) is attained by the fixed Y = f*(X) - B w/(sqrt(D) ||w||), w = z_out/K; O(1/T) holds "
    "iff the cross term's first order vanishes, E<Y - f*(X), z_out>_F = 0 (e.g. Y = f*(X) + noise "
    "independent of X)", "ood_excess_loss", "upper_bound", "T->oo",
    "T -> oo, every Y with bounded second moments (B^2 = E||Y - f*||^2); the leading term for Section "
    "4.1's OOD inputs (iid Exp(1), STS teacher, v* = (1/2)(1,1,1,1), M = 1), logits/D",
    ("A.claim.thm32.worst_case",), expression_from="A.claim.thm32.worst_case", logit_scale="D")


CLASSIFICATION: dict[tuple[str, str], Classification] = {
    ("A", "Theorem 3.1 (loss)"): Classification(
        "wrong_rate", "loss_D_order",
        _late("excess_loss", "L(T) - L_opt", "Theta(K D^2 (D-K)/(eta T)), not K D^4/(eta T)")),
    ("A", "Theorem 3.1 (Step 3)"): Classification(
        "wrong_rate", "late_rate_1_minus_Kp",
        _late("S_error_F", "||S^(T) - S*||_F", "Theta(T^(-1/2))")),
    ("A", "Theorem 3.1 (Step 3, W_V)"): Classification(
        "wrong_rate", "late_rate_1_minus_Kp",
        _late("WV_error_F", "||W_V^(T) - V*||_F", "Theta(T^(-1/2))")),
    ("A", "Theorem 3.1 (proof: D^{5/2} order)"): Classification(  # also S_norm_sqrt (the identity it rests on)
        "wrong_rate", "late_rate_1_minus_Kp",
        _late("S_error_F", "||S^(T) - S*||_F", "Theta(D^{3/2} (D-K)^{1/2}/sqrt(eta ||V*||^2 T)), "
              "not D^{5/2}/(eta ||V*||^2 T)")),
    ("A", "Theorem 3.1 (proof: S identity)"): Classification(
        "wrong_formula", "S_norm_sqrt",
        CorrectionSpec("||S - S*||_F = D (1 - K p)/sqrt(K (D-K)) (from the attention structure)", "S_error_F",
                       "equal", None, "p in [1/D, 1/K), so at each step t", ("A.errata.S_identity",),
                       expression="D*(1 - K*p)/sqrt(K*(D - K))",
                       tex=r"\|S - S^*\|_F = \frac{D\,(1 - Kp)}{\sqrt{K(D-K)}}")),
    ("A", "Lemma D.17"): Classification(
        "wrong_rate", "Tstar_logit_scale",
        CorrectionSpec("In the flow limit eta -> 0 and then as D -> oo: eta T* = D^a (D-K)^2 (I0 + I1 (D-K)^(-1/2) + "
                       "o((D-K)^(-1/2))) with a = 1 for logits/D (the paper's model; Theta(K D^3/(eta ||V*||^2)), not "
                       "the printed D^2) and a = 0 for logits/sqrt(D) (outside the paper's model; there the printed "
                       "Theta(K D^2/(eta ||V*||^2)) is the order); I0 = K/||V*||^2 (identity, ReLU), "
                       "K/(||V*||^2 (1 + kappa^2)) (Leaky ReLU), I1 = 0 (identity), "
                       "(2 + 4 pi^2) K^(3/2)/(pi ||V*||^2) (ReLU), "
                       "(2 K^(3/2)/(pi ||V*||^2)) (2 pi^2 (1+kappa^2)/(1-kappa^2)^2 + (1-kappa)^2/(1+kappa^2)^2) "
                       "(Leaky ReLU, fixed kappa in [0, 1)). Identity at finite D: the exact slow-manifold integral "
                       "J = int_{K/(D-K)}^1 de/(e H0) = D^a (K/||V*||^2) ((D-K)^2 - K^2 + 2 K (D-K) log((D-K)/K)) "
                       "(H0 = -d(log e)/dtau on the slow manifold C1 = C1*, e = exp(-(C2+C3)/scale)) is the better value: against the flow's "
                       "tau_star (Radau, ||V*||^2 = 1) J/tau_star - 1 = -1.4e-3, -2.8e-4, -4.6e-6 at (D, K) = (8, 2), "
                       "(12, 3), (50, 3) with logits/D and -1.1e-2, -3.3e-3, -2.3e-4 with logits/sqrt(D), while the "
                       "leading term D^a (D-K)^2 K/||V*||^2 is 26% to 39% below tau_star at the same sizes",
                       "T_star", "asymptotic", "D->oo",
                       "eta -> 0 first (T* = tau_star/eta up to O(eta) relative), then D -> oo at fixed K, kappa and "
                       "||V*||^2; the expression is for logits/D (expression_sqrtD: logits/sqrt(D))",
                       ("A.errata.Tstar", "A.errata.Tstar.identity_proof", "A.errata.Tstar.relu_proof"),
                       expression_from="A.errata.Tstar",
                       logit_scale="D")),
    ("A", "Lemma D.18"): Classification(
        "wrong_rate", "late_rate_1_minus_Kp",
        CorrectionSpec("For T >= T*: 1/K - (D-K)/(K(D-K+K sqrt(R_lo(T)))) <= p(T) <= 1/K - (D-K)/(K(D-K+K sqrt(R_hi(T)))), "
                       "R_lo(T) = ((D-K)/K)^2 + 2 q_lag eta g2 (T - T*)/D, R_hi(T) = ((D-K)/K)^2 + (2 eta g2/D) "
                       "(psi(2 eta g2/D) + psi(2 eta g2 (K/(D-K))^2/D) (T - T*)), psi(v) = (exp(v) - 1)/v, "
                       "q_lag = q_min (1 - c_lag (K/(D-K))^2) (g2, q_min as defined above; c_lag the lag lemma's "
                       "constant, `constants`). Derived by summing the corrected Lemma D.19 from T*: "
                       "exp(2(C2+C3)/D) grows per step by the factor exp(2 Delta(C2+C3)/D), so by at least "
                       "2 q_lag eta g2/D and at most (2 eta g2/D) psi(2 eta g2 (K/(D-K))^2/D); exp(2(C2+C3)/D) at T* "
                       "lies between ((D-K)/K)^2 (p(T*) >= 1/(2K)) and ((D-K)/K)^2 + (2 eta g2/D) psi(2 eta g2/D) "
                       "(p(T*-1) < 1/(2K), one step); 1/K - p = (D-K) e/(K(K + (D-K) e)), e = exp(-(C2+C3)/D) "
                       "(rdyn.derivations.model_a.late_phase_bounds). Both sides are Theta(T^(-1/2)); the printed "
                       "bounds are Theta(1/T). Superseded (`superseded`): R+-(T) with an ad-hoc step of delay "
                       "(T - T* - 1 in R-, T - T* + 1 in R+), certified per instance but not derived from D.19",
                       "p", "lower_bound", None,
                       "T >= T* (p >= 1/(2K)); certified by rdyn prove at every step T >= T* for the instances "
                       "it certified (its statements D18.derived.lower/upper, c_lag from its D19.derived.lag), and "
                       "by a range of rdyn prove --eta, for every eta of the ranges in the scope (c_lag the band of its "
                       "invariant tube); "
                       "sampled along the validation trajectories of A.errata.bound.D18 (c_lag sampled there); "
                       "logits/D (sqrtD: D -> sqrt(D) in R_lo, R_hi, in the check's detail)",
                       ("A.errata.bound.D18", "A.errata.bound.D18.sqrtD",
                        "A.errata.late.one_over_K_minus_p", "A.errata.late.one_over_K_minus_p.sqrtD"),
                       expression_from="A.errata.bound.D18", logit_scale="D")),
    ("A", "Lemma D.19"): Classification(
        "wrong_rate", "late_increment_D_power",
        CorrectionSpec("For T >= T*: q_lag eta g2 e^{-2(C2+C3)/D} <= Delta(C2+C3) <= eta g2 e^{-2(C2+C3)/D}, "
                       "q_lag = q_min (1 - c_lag (K/(D-K))^2) (g2, q_min as defined above). Lag lemma: "
                       "|C1/C1* - 1| <= c_lag e^{-3(C2+C3)/D} for every T >= T* (C1* the fixed point of the C1 "
                       "update at p(T)); c_lag is certified per instance by rdyn prove (the largest "
                       "|C1/C1* - 1| e^{3(C2+C3)/D} over the steps T* .. T0 and over its invariant region; values "
                       "in `constants`). The lag enters through the factor 1 - e^{(C2+C3)/D} |C1/C1* - 1| of the "
                       "slow-manifold bound (Delta(C2+C3) is sensitive to C1 with relative rate about "
                       "-e^{(C2+C3)/D}); with the lag lemma it is at least 1 - c_lag e^{-2(C2+C3)/D} >= "
                       "1 - c_lag (K/(D-K))^2 (e^{-(C2+C3)/D} <= K/(D-K) for T >= T*), which gives q_lag, state-free "
                       "(rdyn.derivations.model_a.late_phase_bounds). No 1/D^3. Superseded (`superseded`): the "
                       "lower side without the lag (q_min: false at T*, ratio 0.99999897 at ReLU, D = 12, K = 3, "
                       "eta = 0.01, a certified counterexample of rdyn prove), with the factor 1 - |C1/C1* - 1| "
                       "(false at T* when D >= 6K or so), and with the state-dependent factor "
                       "1 - e^{(C2+C3)/D} |C1/C1* - 1| (true where certified, but not a bound without the lag lemma). "
                       "Delta(C2+C3) ~ eta g2 e^{-2(C2+C3)/D} as T -> oo",
                       "delta_C2_plus_C3", "lower_bound", None,
                       "T >= T* (p >= 1/(2K)); certified by rdyn prove at every step T >= T* for the instances it "
                       "certified (statements D19.derived.lag, D19.derived.lower, D19.corrected.upper; c_lag and "
                       "q_lag > 0 in its certificate), and by a range of rdyn prove --eta, for every eta of the ranges in "
                       "the scope (c_lag the band of its invariant tube); sampled along the validation trajectories of "
                       "A.errata.bound.D19 (c_lag sampled there); logits/D (sqrtD: exponent -2(C2+C3)/sqrt(D), "
                       "g2 times sqrt(D))",
                       ("A.errata.bound.D19", "A.errata.bound.D19.sqrtD",
                        "A.errata.late.delta_C2_plus_C3", "A.errata.late.delta_C2_plus_C3.sqrtD"),
                       expression_from="A.errata.bound.D19", logit_scale="D")),
    ("A", "Lemma D.17 (threshold)"): Classification(
        "unreachable_threshold", "p_threshold_half",
        CorrectionSpec("p(T*) >= 1/(2K) (reached; p(t) < 1/K for all t and p -> 1/K)", "p", "condition", None,
                       "T* the first step with p >= 1/(2K) at each listed instance (p < 1/K is exact: "
                       "1/K - p = N e/(K (K + N e)) > 0)", ("A.errata.p_threshold",),
                       expression="1/(2*K)", tex=r"p(T^*) \ge \frac{1}{2K}")),
    ("A", "Lemma D.10"): Classification(
        "vacuous_condition", "D10_condition",
        CorrectionSpec("C1*(t) is monotonically increasing w.r.t. t while p(t) <= p_c, with p_c = 1/sqrt(D K) "
                       "(identity) and p_c the root of dC1*/dp = 0 for ReLU (0.2364 at D=8, K=2; 0.1046 at "
                       "D=20, K=4) and Leaky ReLU (0.1597 at D=12, K=3, kappa=0.1), below 1/sqrt(DK); it "
                       "decreases after", "p", "condition", None,
                       "along the trajectory of each listed instance, and by a range of rdyn prove --eta, for every "
                       "eta of the ranges in the scope. The proof sweep (docs/proofs.md: ReLU and identity, K < D <= 24, "
                       "D > 2K, logits/D) certified it at 262 of 264 instances at eta_limit/2 and at all 264 at the "
                       "papers' eta; the two others (identity D = 9, K = 1 and D = 18, K = 2, eta_limit/2) were "
                       "undecided while the search for p_c gave up on a grid point where "
                       "dC1*/dp = 0 exactly (p_c = 1/(3K) at D = 9K), and are certified since it brackets past it. "
                       "p_c = 1/sqrt(D K) for the identity is an exact root of dC1*/dp (sympy); the ReLU and Leaky "
                       "ReLU p_c are numeric, per instance (values in the check)",
                       ("A.errata.D10",), expression_from="A.errata.D10")),
    ("A", "Lemma D.15 (proof)"): Classification(
        "false_step", "D15_numeric_step",
        CorrectionSpec("3(D-K)/D^2 <= 0.025 holds iff D^2 >= 120 (D - K) (e.g. D >= 116 for K = 4); the step "
                       "needs this as an extra condition", "other", "condition", None, "every D > K >= 1",
                       ("A.errata.D15_condition",), expression="D**2 - 120*(D - K)",
                       tex=r"D^2 \ge 120\,(D-K)")),
    ("A", "Section 4.1 (OOD slope)"): Classification(
        "wrong_rate", "ood_slope",
        CorrectionSpec("L_OOD - L*_OOD ~ the derived leading term below, a 1/T decay (slope -1 on log-log axes, not "
                       "-0.5) for the population dynamics: with iid Exp(1) inputs "
                       "and v* = (1/2)(1,1,1,1) every argument is positive, the excess is an exact quadratic form in "
                       "(C1 p - 1/K, C1 q) and C1 p - 1/K = O(e^2)", "ood_excess_loss", "asymptotic", "T->oo",
                       "T -> oo, Section 4.1's OOD inputs (iid Exp(1), STS teacher, v* = (1/2)(1,1,1,1), M = 1), "
                       "logits/D", ("A.errata.ood",), expression_from="A.errata.ood", logit_scale="D")),
    ("A", "Theorem 3.2"): Classification("wrong_rate", "ood_worst_case_rate", _OOD_WORST_CASE),
    ("A", "Section 4.1 (OOD rate)"): Classification("wrong_rate", "ood_worst_case_rate",
                                                    dataclasses.replace(_OOD_WORST_CASE)),  # its own label
    ("A", "Lemma D.6"): Classification(
        "wrong_formula", "A_of_t_printed",
        CorrectionSpec("A(t) = E[sigma(p u) sigma'(y) p u] = (1+kappa)^2 K p^2/4 + (1-kappa)^2 K p^2 (beta + sin(2 beta)/2)/(2 pi) "
                       "with beta = arctan(sqrt(K(D-K)) p/(1-Kp)) (ReLU: kappa = 0): the printed arctan argument "
                       "lacks the square root and the sin(2 beta) term is missing; coefficients derived by "
                       "rdyn.derivations.model_a.attention_angle", "other", "equal", None,
                       "every p in [1/D, 1/K), K < D; ReLU and Leaky ReLU (identity: A = K p^2 as printed)",
                       ("A.A_of_t.readable.*", "A.gauss.*", "A.F3_is_A_plus_B.*"),
                       expression_from="A.A_of_t.readable.*")),
    ("A", "Lemma D.8"): Classification(
        "sign", "D8_sign",
        CorrectionSpec("in-group coefficient of grad_{W_KQ} L is -(C1 M/D)((F4/p - F3)/K - C1 (F2_1 - p F1)) for every "
                       "activation, F1..F4 being that activation's Appendix F expectations (identity: the closed form "
                       "below, sympy; ReLU and Leaky ReLU: equal to the gradient derived from the collapsed map at 30 "
                       "digits, A.gradWKQ.relu/leaky, whose arctan closed forms are too long to typeset)", "other",
                       "equal", None, "every state on the C1 > 0 branch; identity, ReLU and Leaky ReLU",
                       ("A.map.mc.*", "A.gradWKQ.relu", "A.gradWKQ.leaky"), expression_from="A.gradWKQ.identity")),
    ("A", "Lemma F.3 (intermediate)"): Classification(
        "wrong_formula", "F34_variance_for_sd",
        CorrectionSpec("E[x1 s(x1) s'(x1+x2)] = a E[z1^2 1{z1 >= 0} 1{sqrt(a) z1 + sqrt(b) z2 >= 0}] (the extraction "
                       "lost the square roots of the variances a, b)", "other", "equal", None,
                       "every a, b > 0 (checked by Monte Carlo at a = 2, b = 1/2; the printed form agrees only when a = b)",
                       ("A.printedF.F3.restored",),
                       tex=r"E[x_1\sigma(x_1)\sigma'(x_1+x_2)] = a\,E\left[z_1^2 1_{\{z_1\ge 0\}}"
                           r"1_{\{\sqrt{a}z_1 + \sqrt{b}z_2 \ge 0\}}\right]")),
    ("A", "Lemma F.4 (intermediate)"): Classification(
        "wrong_formula", "F34_variance_for_sd",
        CorrectionSpec("E[x2 s(x1) s'(x1+x2)] = sqrt(ab) E[z1 z2 1{z1 >= 0} 1{sqrt(a) z1 + sqrt(b) z2 >= 0}] (the "
                       "extraction lost the square roots)", "other", "equal", None,
                       "every a, b > 0 (checked by Monte Carlo at a = 2, b = 1/2)", ("A.printedF.F4.restored",),
                       tex=r"E[x_2\sigma(x_1)\sigma'(x_1+x_2)] = \sqrt{ab}\,E\left[z_1 z_2 1_{\{z_1\ge 0\}}"
                           r"1_{\{\sqrt{a}z_1 + \sqrt{b}z_2 \ge 0\}}\right]")),
    ("A", "Lemma F.6 (intermediates)"): Classification(
        "wrong_formula", "F67_Phi_sqrt_c",
        CorrectionSpec("E[x1 s(x1+x2) s'(x1+x2+x3)] = a/(a+b) E[x4^2 1{x4 >= 0} Phi(x4/sqrt(c))] = a int_0^oo z^2 "
                       "Phi(lambda z) phi(z) dz with lambda = sqrt((a+b)/c) (the extraction lost the square root of c)",
                       "other", "equal", None, "every a, b, c > 0 (checked by quadrature at a = 2, b = 1/2, c = 3)",
                       ("A.printedF.F6_*.restored",),
                       tex=r"\frac{a}{a+b}E\left[x_4^2 1_{\{x_4\ge 0\}}\Phi\left(\frac{x_4}{\sqrt{c}}\right)\right]"
                           r" = a\int_0^\infty z^2\Phi\left(\sqrt{(a+b)/c}\,z\right)\phi(z)\,dz")),
    ("A", "Lemma F.7 (intermediate)"): Classification(
        "wrong_formula", "F7_density_sqrt",
        CorrectionSpec("E[x2 s(x1) s'(x1+x2+x3)] = int_0^oo x1 (2 pi a)^(-1/2) e^{-x1^2/(2a)} (int x2 Phi((x1+x2)/sqrt(c)) "
                       "(2 pi b)^(-1/2) e^{-x2^2/(2b)} dx2) dx1 (the extraction lost three square roots)", "other",
                       "equal", None, "every a, b, c > 0 (checked by quadrature at a = 2, b = 1/2, c = 3)",
                       ("A.printedF.F7_*.restored",),
                       tex=r"\int_0^\infty \frac{x_1 e^{-x_1^2/(2a)}}{\sqrt{2\pi a}}\left(\int "
                           r"\frac{x_2 e^{-x_2^2/(2b)}}{\sqrt{2\pi b}}\Phi\left(\frac{x_1+x_2}{\sqrt{c}}\right)"
                           r"dx_2\right)dx_1")),
    ("B", "Theorem B.3 (eta_max)"): Classification(
        "wrong_formula", "B3_eta_max_S0",
        CorrectionSpec("a sufficient step size is eta_max = d/(8 kappa2 sqrt(S0^2 + 16 gamma*^2)): for every "
                       "0 < eta <= eta_max the loss decreases, gamma_t increases to gamma* and Part 1 holds (not "
                       "'iff': smaller bounds are not shown to be necessary). The printed min's other two terms, "
                       "d/(2 kappa2 S0) and d/(2 kappa2 sqrt(2 S0 gamma*)), are always larger than this one "
                       "(B3_min_redundant.second, .third: exact for every S0, gamma*, kappa2, d > 0) and are dropped",
                       "eta_max", "upper_bound", None,
                       "no-LN layer, both targets, alpha0 = 0, S0 = beta0^2 > 0",
                       ("B.noln.eta_max_descent.*",), expression="d/(8*kappa2*sqrt(S0**2 + 16*gamma_star**2))",
                       tex=r"\eta_{\max} = \frac{d}{8\kappa_2\sqrt{S_0^2 + 16(\gamma^\star)^2}}")),
    ("B", "Theorem B.3 (Part 1)"): Classification(
        "wrong_formula", "B3_eta_max_S0",
        CorrectionSpec("Part 1, L(gamma_{t+1}) - L(gamma_t) <= -(1/2) eta d S_t F(gamma_t)^2, holds for every "
                       "0 < eta <= d/(8 kappa2 sqrt(S0^2 + 16 gamma*^2)) (sufficient); at the printed eta_max it "
                       "fails (rdyn prove --paper B: S0 = 11.2470741..., step 2, Task 1 d = 16, n = 32)",
                       "eta_max", "upper_bound", None, "no-LN layer, both targets, alpha0 = 0, S0 = beta0^2 > 0",
                       ("B.claim.B3.descent",), expression="d/(8*kappa2*sqrt(S0**2 + 16*gamma_star**2))",
                       tex=r"0 < \eta \le \frac{d}{8\kappa_2\sqrt{S_0^2 + 16(\gamma^\star)^2}}")),
    ("B", "Theorem B.3 (Part 3)"): Classification(  # also B3_eta_max_S0 (S0^2 for 1)
        "notation", "B3_Upsilon2",
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
    expression, tex, upper, more = spec.expression, spec.tex, None, {}
    for pattern in (spec.expression_from,) if spec.expression_from else ():
        sources = [c for c in checks if id_matches(c.id, pattern)]
        upper = next((c.detail["upper_expression"] for c in sources if "upper_expression" in c.detail), upper)
        for name in ("constants", "superseded"):   # the symbols beyond the contract's, the replaced forms
            more = {**more, **{name: c.detail[name] for c in sources if name in c.detail}}
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
    out.update(more)
    if not deciding:
        out["reason"] = f"no check matching {list(spec.checks)} ran"
    sqrtd = _sqrtd_expressions(spec, checks)
    if sqrtd:
        out.update(sqrtd)
    from rdyn.verification.claims import strength

    out["strength"], out["strength_basis"] = strength.of_correction(*_LABEL_OF.get(id(spec), ("", "")),
                                                                    [c.id for c in deciding])
    out["scope"] = strength.scope(out["strength"], out["strength_basis"])
    out["valid"] = f"{out['scope']['text']}. Conditions: {spec.valid}"
    return out


def _sqrtd_expressions(spec: CorrectionSpec, checks: Sequence) -> dict:
    """``expression_sqrtD`` (and ``upper_expression_sqrtD``) of a correction whose expression is for logits/D: the
    logits/sqrt(D) form (outside the paper's model) from the ``.sqrtD`` sibling of its source check, or from the
    source's ``expression_sqrtD``; empty when neither ran."""
    from rdyn.verification.checks.registry import id_matches

    if spec.logit_scale != "D" or not spec.expression_from:
        return {}
    out = {}
    for c in checks:
        if id_matches(c.id, spec.expression_from + ".sqrtD"):
            pairs = (("expression_sqrtD", c.detail.get("expression")),
                     ("upper_expression_sqrtD", c.detail.get("upper_expression")))
        elif id_matches(c.id, spec.expression_from) and "expression_sqrtD" in c.detail:
            pairs = (("expression_sqrtD", c.detail["expression_sqrtD"]),)
        else:
            continue
        for key, value in pairs:
            if isinstance(value, dict):
                out[key] = {a: _spec_symbols(v) for a, v in value.items()}
            elif isinstance(value, str):
                out[key] = _spec_symbols(value)
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


def causes_of(result) -> tuple[list[str], list]:
    """(root causes, discrepant deciding checks) of a discrepancy: one cause per discrepant
    deciding check (:func:`cause_of_check`), in order, without repeats; ``unclassified`` for a
    check no cause claims."""
    ev = result.evidence.get("checks", {})
    discrepant = [c for c in result.records
                  if ev.get(c.id, {}).get("role") == "decides" and ev[c.id].get("counted_as") == "discrepancy"]
    causes: list[str] = []
    for c in discrepant:
        cause = cause_of_check(c.id) or "unclassified"
        if cause not in causes:
            causes.append(cause)
    return causes, discrepant


def attach(result, checks: Sequence):
    """``result`` (a discrepancy) with its kind, root causes, their origins and its correction (None if
    none derived). The causes come from the discrepant deciding checks (:func:`causes_of`); whose error
    each is, the paper's or the extraction's, is decided by
    :func:`rdyn.verification.claims.extraction.decide` (both readings of a statement with a plausibly
    lost symbol). An entry whose every cause is the extraction's is ``extraction_suspect``; otherwise the
    paper's causes come first, the primary ``root_cause`` being the classification's when it is among
    them, and ``kind`` is ``wrong_rate`` whenever a deciding check of the paper's shows an exponent in T,
    D, K or eta differing (:func:`exponent_differs`), else the classification's."""
    from rdyn.verification.claims import extraction

    causes, discrepant = causes_of(result)
    for c in discrepant:  # the cause each discrepant deciding check shows, in the evidence
        result.evidence["checks"][c.id]["root_cause"] = cause_of_check(c.id) or "unclassified"
    decision = extraction.decide(result.entry.paper, result.entry.label, discrepant, cause_of_check, checks)
    result = dataclasses.replace(result, extraction=decision.to_dict())
    cls = CLASSIFICATION.get((result.entry.paper, result.entry.label))
    ours = decision.paper_causes
    if cls is None:
        kind = "extraction_suspect" if decision.extraction_only else "other"
        ordered = list(decision.causes) or ["unclassified"]
        return dataclasses.replace(result, kind=kind, root_cause=ordered[0], root_causes=ordered)
    if decision.extraction_only:
        primary, kind = (cls.root_cause if cls.root_cause in decision.causes else decision.causes[0]), "extraction_suspect"
    else:
        primary = cls.root_cause if cls.root_cause in ours else (ours[0] if ours else cls.root_cause)
        paper_checks = [c for c in discrepant if (cause_of_check(c.id) or "unclassified") in ours]
        kind = "wrong_rate" if any(exponent_differs(c) for c in paper_checks) else cls.kind
    causes = [primary] + [c for c in (decision.causes or causes) if c != primary]
    cls = dataclasses.replace(cls, kind=kind, root_cause=primary)
    if cls.correction is None:
        return dataclasses.replace(result, kind=kind, root_cause=primary, root_causes=causes)
    from rdyn.verification.checks.registry import id_matches

    records = [c for c in checks if any(id_matches(c.id, g) for g in cls.correction.checks)]
    return dataclasses.replace(result, kind=kind, root_cause=primary, root_causes=causes,
                               correction=correction_object(cls.correction, cls, checks), correction_records=records)

