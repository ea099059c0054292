"""Readings of printed statements in which the text extraction plausibly lost a symbol (docs/claims.md,
"Extraction readings"), and the one decision of whose error a discrepancy is: the paper's or the
extraction's.

The extraction of seed 000 contains no root sign at all: where the paper writes ``sqrt(u)`` the text
shows ``u`` (the radicand stays). A discrepancy such a lost symbol explains is evaluated in two readings,
each decided by checks that compute it (exact sympy comparisons, quadrature, Monte Carlo, trajectories):

* *as extracted*: the ledger's deciding checks (their discrepancy is the entry's);
* *restored*: the statement with the lost symbol put back (``A.extraction.*`` of
  :mod:`rdyn.verification.checks.extraction_a`, ``A.printedF.*.restored`` of
  :mod:`rdyn.verification.checks.printed_f`, and the derived forms the other checks compute).

:data:`READINGS` is the table (one row per lost symbol: the entry that prints it, both forms, the lost
symbol, what the seed prints around it, whether the loss is plausible and why, the root cause its
discrepancy is filed under, the checks of each reading). :func:`decide` is the one decision, called by
:func:`rdyn.verification.claims.errata.attach` for every discrepancy: a discrepant deciding check that a
plausible reading's extracted checks match is the extraction's when every check of the restored reading
ran and passed, else the paper's. An entry whose every discrepant check is the extraction's is
``extraction_suspect``; otherwise the verdict on the authors is the restored reading's (the paper's
causes first, the extraction's listed after them).

A reading marked not plausible is still evaluated both ways and shown, but never moves the blame: the
extraction of seed 000 drops root signs and keeps their radicands, it does not flip signs or drop plain
factors. Seed 003 (Model B) is extracted as LaTeX source with every ``\\sqrt``, subscript and exponent
intact: no reading applies to it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

LOST_SYMBOLS = ("square root", "subscript", "exponent", "factor", "sign")


@dataclass(frozen=True)
class Reading:
    """One statement with a possibly lost symbol: ``extracted`` and ``restored`` forms, the checks that
    decide each (id patterns), and the root cause (:data:`rdyn.verification.claims.errata.ROOT_CAUSES`)
    whose checks show the extracted form's discrepancy."""

    paper: str
    label: str                 # the ledger entry that prints the statement
    cause: str
    lost_symbol: str           # one of LOST_SYMBOLS (what kind of symbol)
    symbol: str                # which symbol, in words
    extracted: str
    restored: str
    seed_text: str             # what the extraction prints there
    plausible: bool
    why: str                   # why the loss is plausible (or why a restoration is not)
    extracted_checks: tuple[str, ...]
    restored_checks: tuple[str, ...]
    remains: str = ""          # what the restored reading still contradicts (the paper's error), if anything


_NO_ROOT = "the extraction of seed 000 contains no root sign anywhere (every sqrt(u) reads u)"

READINGS: tuple[Reading, ...] = (
    Reading(
        "A", "Theorem 3.1 (proof: S identity)", "S_norm_sqrt", "square root", "sqrt of K(D-K); the square of the norm",
        "||S - S*||_F = D (1-Kp)/(K(D-K)) = sum_{i1,i} (S_{i1,i} - S*_{i1,i})^2",
        "||S - S*||_F = D (1-Kp)/sqrt(K(D-K)), ||S - S*||_F^2 = sum_{i1,i} (S_{i1,i} - S*_{i1,i})^2",
        "S^{(T)} - S^{*}_{F} = \\frac{D}{K ( D - K )} (1 - K p (T)) = Θ (\\frac{D ^{\\frac{5}{2}}}{...}), "
        "= i_{1} = 1 \\sum D i = 1 \\sum D (S_{i_{1}, i}^{(T)} - S_{i_{1}, i}^{*})^{2} = D K (\\frac{1}{K} - p (T))^{2} + ...",
        True,
        f"{_NO_ROOT}; the same line lost its norm bars and the square of the norm it sets equal to a sum of "
        "squares; the radicand K(D-K) stands where the root was; and the line's own D^{5/2} follows from the "
        "restored identity with Lemma D.18's printed rate (D-exponent 5/2), not from the extracted one (2)",
        ("A.claim.S_identity",), ("A.extraction.S_identity.restored", "A.errata.S_identity")),
    *(Reading(
        "A", label, "step3_sqrt_T", "square root", "sqrt of T",
        f"{what} = Theta(1/T)", f"{what} = Theta(1/sqrt(T))",
        "we can further obtain that ∥ S^{(T)} - S^{*} ∥_{F}, ∥ W_{V}^{(T)} - V^{*} ∥_{F} = Θ (\\frac{1}{T}) . Under "
        "mean-squared loss, the Θ (\\frac{1}{T}) convergence of the matrices ... directly suggests that loss will "
        "decay at the rate of Θ (\\frac{1}{T})",
        True,
        f"{_NO_ROOT}; the step's own inference (matrices converging at the printed rate 'directly suggest' a "
        "Theta(1/T) loss under the squared loss) holds only with Theta(1/sqrt(T)) matrices, the derived late-phase "
        "rate; the Appendix's statements with explicit (T - T*) denominators (Lemma D.18, the D^{5/2} line) keep "
        "the 1/T rate and stay the paper's error",
        (check,), ("A.extraction.step3.restored",))
      for label, what, check in (("Theorem 3.1 (Step 3)", "||S^(T) - S*||_F", "A.errata.derived.S_step3"),
                                 ("Theorem 3.1 (Step 3, W_V)", "||W_V^(T) - V*||_F", "A.errata.derived.WV_step3"))),
    Reading(
        "A", "Lemma D.18", "late_rate_1_minus_Kp", "square root", "sqrt of the denominator eta K M (T - T*)",
        "1/K - 20 D(D-K)/(eta K M (T-T*)) <= p(T) <= 1/K - D(D-K)/(2e eta K M (T-T*))",
        "1/K - 20 D(D-K)/sqrt(eta K M (T-T*)) <= p(T) <= 1/K - D(D-K)/(2e sqrt(eta K M (T-T*)))",
        "\\frac{1}{K} - \\frac{20 D ( D - K )}{η K \\sum _{m = 1}^{M} ∥ v _{m}^{*} ∥ _{2}^{2} ( T - T ^{*} )} \\leq p (T) ...",
        True,
        f"{_NO_ROOT}; Lemma D.18 (p C1) prints the term 400 D^2 (D-K)^2/(eta M (T-T*)), which is (1/K)(1-Kp)^2 at the "
        "restored bound exactly and not at the extracted one (its square would have (T-T*)^2), and the same line's "
        "40 K(D-K)/(eta K M (T-T*)) keeps the K = sqrt(K) sqrt(K) a root over the denominator leaves",
        ("A.errata.derived.D18",), ("A.extraction.D18.restored",),
        remains="the order in D: with the root the rate in T is the derived T^(-1/2), but 1/K - p is (D-K) "
                "sqrt(D/(2 K M eta T)) (ReLU), smaller than the bounds' D(D-K)/sqrt(eta K M T) by sqrt(D): the upper "
                "side holds as T -> oo only for D <= 4 e^2 (ReLU) and fails right after T* in either reading "
                "(A.extraction.D18.restored): the paper's error"),
    Reading(
        "A", "Theorem 3.1 (proof: D^{5/2} order)", "late_rate_1_minus_Kp", "square root",
        "sqrt of the denominator eta M (T - T*)",
        "||S - S*||_F = Theta(D^{5/2}/(eta M (T-T*)))", "||S - S*||_F = Theta(D^{5/2}/sqrt(eta M (T-T*)))",
        "= Θ (\\frac{D ^{\\frac{5}{2}}}{η \\sum _{m = 1}^{M} ∥ v _{m}^{*} ∥ _{2}^{2} ( T - T ^{*} )})",
        True,
        f"{_NO_ROOT}; it is the restored Lemma D.18 bound times the restored S identity (D^2 sqrt(D-K)/sqrt(eta M (T-T*)))",
        ("A.errata.derived.S_D52",), ("A.extraction.S_D52.restored",),
        remains="the order in D: the derived ||S - S*||_F is D^(3/2) (D-K)^(1/2)/sqrt(eta M T) (order D^2), not D^(5/2) "
                "(A.extraction.S_D52.restored): the paper's error, inherited from Lemma D.18's D-order"),
    Reading(
        "A", "Section 4.1 (OOD rate)", "ood_worst_case_rate", "square root", "sqrt of T",
        "L_OOD - 1/2 E||Y - f*(X)||^2 = O(1/T) (Theorem 3.2)", "L_OOD - 1/2 E||Y - f*(X)||^2 = O(1/sqrt(T)) (Theorem 3.2)",
        "excess OOD loss curves have approximate - 0.5 slopes . These observations validate the Θ (1/ T) "
        "convergence rate in Theorem 3.1, and O (1/ T) convergence rate in Theorem 3.2",
        True,
        f"{_NO_ROOT}; the same sentence reads the training curves' slope -1 as Theta(1/T) and the OOD curves' "
        "'approximate -0.5 slopes' as validating Theorem 3.2's rate, which they do only for O(1/sqrt(T)), the "
        "derived worst case over the theorem's class of Y",
        ("A.claim.thm32.rate",), ("A.extraction.ood_rate.restored", "A.claim.thm32.worst_case")),
    Reading(
        "A", "Lemma D.6", "D6_arctan_sqrt", "square root", "sqrt of K(D-K) in the arctan argument",
        "arctan(K(D-K) p/(1-Kp))", "arctan(sqrt(K(D-K)) p/(1-Kp))",
        "arctan (\\frac{K ( D - K ) p ( t )}{1 - K p ( t )})",
        True,
        f"{_NO_ROOT}; the radicand K(D-K) stands where sqrt(K(D-K)) = tan(beta) (1-Kp)/p belongs, the pattern "
        "of the S identity",
        ("A.extraction.D6.arctan",), ("A.extraction.D6.arctan.restored",),
        remains="the sin(2 beta) term: A(t) with the restored argument still differs from the derived expectation "
                "by exactly (1-kappa)^2 K p^2 sin(2 beta)/(4 pi) (A.extraction.D6.restored.*): the paper's error "
                "(A_of_t_printed)"),
    Reading(
        "A", "Lemma D.10", "D10_condition", "square root", "sqrt of D K",
        "C1*(t) increasing while p(t) <= 1/(2 pi D K)", "C1*(t) increasing while p(t) <= 1/(2 pi sqrt(D K))",
        "C_{1}^{*} (t) is monotonically increasing w.r.t t when p (t) \\leq \\frac{1}{2 π D K}",
        True,
        f"{_NO_ROOT}; as extracted the condition is never met (p >= 1/D > 1/(2 pi D K)); restored it lies below "
        "the derived turning point p_c of C1* (identity 1/sqrt(DK)), so the lemma is true, and it is met by some "
        "p >= 1/D iff D >= 4 pi^2 K (not at the presets of Section 4)",
        ("A.claim.D10",), ("A.extraction.D10.restored", "A.errata.D10")),
    Reading(
        "A", "Lemma D.17", "Tstar_logit_scale", "square root", "sqrt of D in the softmax scale of (2.4)",
        "T* = Theta(K D^2/(eta ||V*||^2)) with the logits Z^T W_KQ Z/D of (2.4)",
        "T* = Theta(K D^2/(eta ||V*||^2)) with the logits Z^T W_KQ Z/sqrt(D) (the conference version's scale)",
        "TF (Z; W_{V}; W_{K Q}) = σ (W_{V} Z S (\\frac{Z ^{⊤} W _{K Q} Z}{D}))",
        True,
        f"{_NO_ROOT}, so the extracted (2.4) cannot tell 1/D from 1/sqrt(D): the scale's every occurrence (D.1's "
        "eta/D, D.9's exp(-(C2+C3)/D), D.19's exponent) reads the same either way; with logits/sqrt(D) the derived "
        "order of T* is the printed D^2 (with logits/D it is D^3); every other verdict of Model A is the same "
        "under both scales (the corrections state both)",
        ("A.flow.Tstar_exponent.D",),
        ("A.flow.Tstar_exponent.sqrtD", "A.errata.Tstar.relu_proof", "A.errata.Tstar.identity_proof")),
    Reading(
        "A", "Lemma F.3 (intermediate)", "F34_variance_for_sd", "square root", "sqrt of the variances a, b",
        "a E[z1^2 1{z1 >= 0} 1{a z1 + b z2 >= 0}]", "a E[z1^2 1{z1 >= 0} 1{sqrt(a) z1 + sqrt(b) z2 >= 0}]",
        "E [x_{1} σ (x_{1}) σ^{'} (x_{1} + x_{2})] = ... a z_{1} + b z_{2} ...",
        True, f"{_NO_ROOT}; a, b are variances (F.1 prints E[x^2] = a), so the standardised form needs sqrt(a), sqrt(b)",
        ("A.printedF.F3",), ("A.printedF.F3.restored",)),
    Reading(
        "A", "Lemma F.4 (intermediate)", "F34_variance_for_sd", "square root", "sqrt of ab and of the variances a, b",
        "ab E[z1 z2 1{z1 >= 0} 1{a z1 + b z2 >= 0}]", "sqrt(ab) E[z1 z2 1{z1 >= 0} 1{sqrt(a) z1 + sqrt(b) z2 >= 0}]",
        "E [x_{2} σ (x_{1}) σ^{'} (x_{1} + x_{2})] = a b E [...]",
        True, f"{_NO_ROOT}; a, b are variances (F.1 prints E[x^2] = a)",
        ("A.printedF.F4",), ("A.printedF.F4.restored",)),
    Reading(
        "A", "Lemma F.6 (intermediates)", "F67_Phi_sqrt_c", "square root", "sqrt of the variance c",
        "Phi((x1+x2)/c), Phi(x4/c)", "Phi((x1+x2)/sqrt(c)), Phi(x4/sqrt(c))",
        "Φ (\\frac{x _{1} + x _{2}}{c})",
        True, f"{_NO_ROOT}; x3 has variance c, so P(x3 >= -y) = Phi(y/sqrt(c))",
        ("A.printedF.F6_conditional", "A.printedF.F6_integral"), ("A.printedF.F6_*.restored",)),
    Reading(
        "A", "Lemma F.7 (intermediate)", "F67_Phi_sqrt_c", "square root", "sqrt of the variance c",
        "Phi((x1+x2)/c)", "Phi((x1+x2)/sqrt(c))", "Φ (\\frac{x _{1} + x _{2}}{c})",
        True, f"{_NO_ROOT}; x3 has variance c", ("A.printedF.F7_phi",), ("A.printedF.F7_phi.restored",)),
    Reading(
        "A", "Lemma F.7 (intermediate)", "F7_density_sqrt", "square root", "sqrt of 2 pi a and 2 pi b",
        "e^{-x^2/(2a)}/(2 pi a)", "e^{-x^2/(2a)}/sqrt(2 pi a)", "\\frac{1}{2 π a} e^{- \\frac{x _{1}^{2}}{2 a}}",
        True, f"{_NO_ROOT}; the N(0, a) density is normalised by (2 pi a)^(-1/2)",
        ("A.printedF.F7_density",), ("A.printedF.F7_density.restored",)),
    # evaluated both ways, not plausible as a loss of the extraction
    Reading(
        "A", "Lemma D.17 (threshold)", "p_threshold_half", "factor", "the K of 1/(2K)",
        "p(T*) >= 1/2", "p(T*) >= 1/(2K)", "such that p (T^{*}) \\geq \\frac{1}{2}",
        False,
        "the extraction drops root signs and keeps their radicands; it drops no plain factor elsewhere (Section "
        "D.2's own text prints the threshold intact: 'continuing until p(t) reaches \\frac{1}{2 K}'): a typo of "
        "the statement",
        ("A.claim.D17.threshold",), ("A.errata.p_threshold",)),
    Reading(
        "A", "Lemma D.8", "D8_sign", "sign", "the sign of p F1",
        "- (C1 M/D)((F4/p - F3)/K - C1 (F2_1 + p F1))", "- (C1 M/D)((F4/p - F3)/K - C1 (F2_1 - p F1))",
        "- \\frac{C _{1} ( t ) M}{D} (\\frac{1}{K} (...) - C_{1} (t) (F_{2, 1}^{(t)} + p (t) F_{1}^{(t)}))",
        False,
        "the extraction displaced the leading signs of the aligned display ('= + = -') but prints the sign "
        "inside the parenthesis as an explicit '+': a flipped sign is not a lost symbol",
        ("A.gradWKQ.identity",), ("A.gradWKQ.relu", "A.gradWKQ.leaky")),
)


def _matches(check_id: str, patterns: Sequence[str]) -> bool:
    from rdyn.verification.checks.registry import id_matches

    return any(id_matches(check_id, p) for p in patterns)


def readings(paper: str | None = None, label: str | None = None) -> tuple[Reading, ...]:
    """The readings printed by one entry (every reading when both are None)."""
    return tuple(r for r in READINGS if paper in (None, r.paper) and label in (None, r.label))


def patterns(paper: str, label: str) -> tuple[str, ...]:
    """Every check pattern the entry's readings need (extracted and restored): the ledger runs them and
    shows them as context."""
    out: list[str] = []
    for r in readings(paper, label):
        for p in r.extracted_checks + r.restored_checks:
            if p not in out:
                out.append(p)
    return tuple(out)


def _verdict(records: Sequence) -> str:
    """The verdict of one reading from the records of its checks: ``not_run`` when none ran, else
    fail > discrepancy > pass (an ``info`` counts as pass)."""
    if not records:
        return "not_run"
    statuses = [c.status for c in records]
    return "fail" if "fail" in statuses else ("discrepancy" if "discrepancy" in statuses else "pass")


def _ran_every(patterns_: Sequence[str], checks: Sequence) -> bool:
    return all(any(_matches(c.id, (p,)) for c in checks) for p in patterns_)


@dataclass(frozen=True)
class ReadingVerdict:
    """One reading evaluated: the verdict of each reading and whose error the extracted discrepancy is."""

    reading: Reading
    extracted: str             # verdict of the statement as extracted
    restored: str              # verdict of the restored statement
    attribution: str           # "extraction" or "paper"
    extracted_ids: tuple[str, ...]
    restored_ids: tuple[str, ...]

    def to_dict(self) -> dict:
        r = self.reading
        return {"label": r.label, "cause": r.cause, "lost_symbol": r.lost_symbol, "symbol": r.symbol,
                "extracted": r.extracted, "restored": r.restored, "seed_text": r.seed_text,
                "plausible": r.plausible, "why": r.why, "remains": r.remains or None,
                "extracted_reading": {"verdict": self.extracted, "checks": list(self.extracted_ids)},
                "restored_reading": {"verdict": self.restored, "checks": list(self.restored_ids)},
                "attribution": self.attribution}


def evaluate(reading: Reading, checks: Sequence) -> ReadingVerdict:
    """Both readings of one statement from the checks that ran. The extracted discrepancy is the
    extraction's iff the loss is plausible, the extracted reading is a discrepancy and every pattern of
    the restored reading ran and passed."""
    extracted = [c for c in checks if _matches(c.id, reading.extracted_checks)]
    restored = [c for c in checks if _matches(c.id, reading.restored_checks)]
    ev, rv = _verdict(extracted), _verdict(restored)
    by_extraction = (reading.plausible and ev == "discrepancy" and rv == "pass"
                     and _ran_every(reading.restored_checks, checks))
    return ReadingVerdict(reading, ev, rv, "extraction" if by_extraction else "paper",
                          tuple(c.id for c in extracted), tuple(c.id for c in restored))


@dataclass(frozen=True)
class Decision:
    """Whose error each cause of one discrepancy is, and the readings evaluated for it."""

    causes: tuple[str, ...]            # paper's first, then the extraction's (each in the order given)
    origins: dict                      # cause -> "paper" | "extraction"
    readings: tuple[ReadingVerdict, ...]

    @property
    def paper_causes(self) -> tuple[str, ...]:
        return tuple(c for c in self.causes if self.origins[c] == "paper")

    @property
    def extraction_only(self) -> bool:
        """Every cause is a suspected loss of the extraction: the kind is ``extraction_suspect``."""
        return bool(self.causes) and not self.paper_causes

    def to_dict(self) -> dict:
        return {"origins": dict(self.origins), "readings": [r.to_dict() for r in self.readings]}


def decide(paper: str, label: str, discrepant: Sequence, cause_of, checks: Sequence) -> Decision:
    """The one decision for a discrepancy: ``discrepant`` are its discrepant deciding checks,
    ``cause_of(check_id)`` their root causes, ``checks`` every check that ran. A discrepant check is the
    extraction's iff a reading whose extracted patterns match it attributes it to the extraction
    (:func:`evaluate`); a cause is the extraction's iff every discrepant check showing it is. The
    readings evaluated are the entry's own and those whose extracted checks decide it."""
    relevant = [r for r in READINGS if r.paper == paper and (
        r.label == label or any(_matches(c.id, r.extracted_checks) for c in discrepant))]
    verdicts = tuple(evaluate(r, checks) for r in relevant)
    origins: dict[str, str] = {}
    order: list[str] = []
    for c in discrepant:
        cause = cause_of(c.id) or "unclassified"
        mine = [v for v in verdicts if _matches(c.id, v.reading.extracted_checks)]
        origin = "extraction" if mine and all(v.attribution == "extraction" for v in mine) else "paper"
        origins[cause] = "paper" if origins.get(cause) == "paper" else origin
        if cause not in order:
            order.append(cause)
    causes = tuple(c for c in order if origins[c] == "paper") + tuple(c for c in order if origins[c] == "extraction")
    return Decision(causes, origins, verdicts)


# ------------------------------------------------------------------------------------------
# which printed forms a lost symbol explains
# ------------------------------------------------------------------------------------------

def drop_one_symbol(expr) -> list[tuple[str, object]]:
    """Every form obtained from ``expr`` (sympy) by losing one symbol: a square root (``sqrt(u)`` -> ``u``,
    also ``u^(k/2)`` -> ``u^k``; and every root sign at once, as the extraction of seed 000 reads), an
    exponent (``u^k`` -> ``u``) or a subscript (``x_i`` -> ``x``). Each as (kind of lost symbol, form)."""
    import sympy as sp

    out: list[tuple[str, object]] = []
    roots = {node: node.args[0] ** (node.args[1] * 2) for node in sp.preorder_traversal(expr)
             if isinstance(node, sp.Pow) and node.args[1].is_Rational and node.args[1].q == 2}
    if roots:                                                   # every root sign at once, as seed 000 reads
        out.append(("square root", expr.xreplace(roots)))
    for node in sp.preorder_traversal(expr):
        if isinstance(node, sp.Pow):
            base, e = node.args
            if e.is_Rational and e.q == 2:                      # a root sign: u^(k/2) -> u^k
                out.append(("square root", expr.xreplace({node: base ** (e * 2)})))
            elif e != -1:                                       # an exponent: u^k -> u (1/u^k -> 1/u)
                out.append(("exponent", expr.xreplace({node: base ** sp.sign(e)})))
        if isinstance(node, sp.Symbol) and "_" in node.name:
            out.append(("subscript", expr.xreplace({node: sp.Symbol(node.name.split("_")[0], **node.assumptions0)})))
    return out


def explained_by_lost_symbol(printed, derived) -> str | None:
    """The kind of lost symbol that turns ``derived`` into ``printed`` (sympy expressions, equal up to a
    constant factor), or None."""
    import sympy as sp

    for kind, form in drop_one_symbol(derived):
        ratio = sp.simplify(form / printed)
        if not ratio.free_symbols and ratio != 0:
            return kind
    return None


def origin_counts_text(paper: str, row: dict) -> str:
    """One sentence of a ledger summary row (:meth:`rdyn.verification.claims.ledger.Ledger.summary`): the
    paper's errors and the suspected losses of the text extraction, counted separately."""
    by = row.get("discrepancies_by_origin") or {"paper": row["discrepancies"], "extraction": 0}
    return (f"Model {paper}: {row['discrepancies']} discrepancies from {row['root_causes']} root causes: "
            f"{row.get('paper_errors', row['root_causes'])} errors of the paper ({by['paper']} entries) and "
            f"{row.get('extraction_losses', 0)} suspected losses of the text extraction ({by['extraction']} entries, "
            f"extraction_suspect: the statement with the lost symbol restored holds)")
