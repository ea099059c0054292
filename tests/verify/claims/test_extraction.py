"""Extraction readings (verify/claims/extraction.py): both readings of a statement with a plausibly lost
symbol, the one decision of whose error a discrepancy is, and the two counts of the summary."""
from __future__ import annotations

import json

import sympy as sp

from rdyn.derivations.formula import parse
from rdyn.verification.checks import extraction_a as xa
from rdyn.verification.checks.record import Check
from rdyn.verification.claims import errata, extraction
from rdyn.verification.claims import ledger as claims

_SYM = {n: sp.Symbol(n, positive=True) for n in
        ("D", "K", "p", "T", "M", "eta", "a", "b", "c", "x", "z1", "z2", "d", "kappa2", "g", "S0", "pi_")}


def _f(text):
    return parse(text, _SYM, what="test form", symbolic_exponents=True)


# printed (as extracted) and derived form of every Model A and B discrepancy with a formula, in the
# variables of the printed statement; entries without one (a sign, a numeric step, a fitted slope) below
FORMS = {
    ("A", "Theorem 3.1 (proof: S identity)"): (xa.S_EXTRACTED, xa.S_RESTORED),
    ("A", "Theorem 3.1 (Step 3)"): ("1/T", "1/sqrt(T)"),
    ("A", "Theorem 3.1 (Step 3, W_V)"): ("1/T", "1/sqrt(T)"),
    ("A", "Theorem 3.1 (proof: D^{5/2} order)"): ("D**(5/2)/(eta*M*T)", "D**(3/2)*sqrt(D - K)/sqrt(eta*M*T)"),
    ("A", "Theorem 3.1 (loss)"): ("K*D**4/(eta*T)", "D**2*K*(D - K)/(4*T*eta)"),
    ("A", "Lemma D.6"): (xa.D6_EXTRACTED, None),            # derived: xa.d6_derived_tan_beta()
    ("A", "Lemma D.10"): (xa.D10_EXTRACTED, "1/sqrt(D*K)"),
    ("A", "Lemma D.17"): ("K*D**2/(eta*M)", "K*D*(D - K)**2/(eta*M)"),
    ("A", "Lemma D.17 (threshold)"): ("1/2", "1/(2*K)"),
    ("A", "Lemma D.18"): ("D*(D - K)/(eta*K*M*T)", "(D - K)*sqrt(D*K/(2*M*eta*T))/K"),
    ("A", "Lemma D.19"): ("eta*M/(K**3*D**3)", "eta*M/K**3"),
    ("A", "Lemma F.3 (intermediate)"): ("a*z1 + b*z2", "sqrt(a)*z1 + sqrt(b)*z2"),
    ("A", "Lemma F.4 (intermediate)"): ("a*b", "sqrt(a*b)"),
    ("A", "Lemma F.6 (intermediates)"): ("x/c", "x/sqrt(c)"),
    ("A", "Lemma F.7 (intermediate)"): ("exp(-x**2/(2*a))/(2*pi_*a)", "exp(-x**2/(2*a))/sqrt(2*pi_*a)"),
    ("A", "Section 4.1 (OOD rate)"): ("1/T", "1/sqrt(T)"),       # the worst case over Theorem 3.2's class of Y
    ("A", "Theorem 3.2"): ("1/T", "1/sqrt(T)"),
    ("B", "Theorem B.3 (eta_max)"): ("d/(8*kappa2*sqrt(1 + 16*g**2))", "d/(8*kappa2*sqrt(S0**2 + 16*g**2))"),
    ("B", "Theorem B.3 (Part 1)"): ("d/(8*kappa2*sqrt(1 + 16*g**2))", "d/(8*kappa2*sqrt(S0**2 + 16*g**2))"),
}
NO_FORMULA = {("A", "Lemma D.8"): "a sign", ("A", "Lemma D.15 (proof)"): "a numeric step",
              ("A", "Section 4.1 (OOD slope)"): "a fitted slope", ("B", "Theorem B.3 (Part 3)"): "a symbol"}


def test_every_discrepancy_a_lost_symbol_explains_has_both_readings():
    """Scan of the ledger's classified discrepancies: where dropping a root sign, an exponent or a subscript
    from the derived form gives the printed one, the entry must be in the readings table, plausible."""
    assert set(errata.CLASSIFICATION) <= set(FORMS) | set(NO_FORMULA), "a new discrepancy needs its forms here"
    explained = {}
    for key, (printed, derived) in FORMS.items():
        # Lemma D.6's derived tan(beta) holds |1 - Kp| = 1 - Kp (p < 1/K)
        d = xa.d6_derived_tan_beta().replace(sp.Abs, lambda u: u) if derived is None else _f(derived)
        kind = extraction.explained_by_lost_symbol(_f(printed), d)
        if kind is not None:
            explained[key] = kind
    assert explained == {key: "square root" for key in (
        ("A", "Theorem 3.1 (proof: S identity)"), ("A", "Theorem 3.1 (Step 3)"), ("A", "Theorem 3.1 (Step 3, W_V)"),
        ("A", "Lemma D.6"), ("A", "Lemma D.10"), ("A", "Lemma F.3 (intermediate)"), ("A", "Lemma F.4 (intermediate)"),
        ("A", "Lemma F.6 (intermediates)"), ("A", "Lemma F.7 (intermediate)"), ("A", "Section 4.1 (OOD rate)"),
        ("A", "Theorem 3.2"), ("A", "Lemma D.18"))}
    # an entry is covered by the readings printed by it or whose extracted checks decide it
    by_check = {(e.paper, e.label) for e in claims.LEDGER for r in extraction.READINGS if r.plausible
                and e.paper == r.paper and set(r.extracted_checks) & set(e.decide)}
    plausible = {(r.paper, r.label) for r in extraction.READINGS if r.plausible} | by_check
    missing = set(explained) - plausible
    assert not missing, f"a lost symbol explains these, but they have no restored reading: {missing}"
    # the scan sees a lost exponent and a lost subscript too
    assert extraction.explained_by_lost_symbol(_f("a*b"), _f("a**2*b")) == "exponent"
    x_1 = sp.Symbol("x_1", positive=True)
    assert extraction.explained_by_lost_symbol(sp.Symbol("x", positive=True) + 1, x_1 + 1) == "subscript"


def test_readings_table_is_well_formed():
    labels = {(e.paper, e.label) for e in claims.LEDGER}
    from rdyn.verification.checks.registry import GROUPS, id_matches

    declared = [p for g in GROUPS for p in g.ids]
    for r in extraction.READINGS:
        assert (r.paper, r.label) in labels and r.cause in errata.ROOT_CAUSES, r.label
        assert r.lost_symbol in extraction.LOST_SYMBOLS and r.why and r.extracted != r.restored
        assert r.extracted_checks and r.restored_checks
        # the extracted checks are filed under the reading's cause (one cause per error)
        for pattern in r.extracted_checks:
            concrete = pattern.replace("*", "x")
            assert errata.cause_of_check(concrete) == r.cause, (r.label, pattern)
        for pattern in r.extracted_checks + r.restored_checks:   # every check is produced by some group
            assert any(id_matches(pattern.replace("*", "relu"), d) for d in declared), pattern
    assert {r.paper for r in extraction.READINGS} == {"A"}       # seed 003 keeps every root sign


def _c(id, status, **detail):
    return Check(id, "s", f"claim {id}", status, None, None, {"printed": "x", "derived": "y", **detail})


def _run(restored_status="pass"):
    """Check records for the S identity, D^{5/2}, Lemma D.6 and Lemma D.8 entries and their readings."""
    exps = {"relu": {"T": "1/2", "D": "-1/2", "M": "1/2", "eta": "1/2"}}
    return [_c("A.claim.S_identity", "discrepancy"), _c("A.extraction.S_identity.restored", restored_status),
            _c("A.errata.S_identity", "pass"),
            _c("A.errata.derived.S_D52", "discrepancy", exponent_of_derived_over_printed=exps),
            _c("A.extraction.D6.arctan", "discrepancy"), _c("A.extraction.D6.arctan.restored", "pass"),
            _c("A.extraction.D6.restored.relu", "discrepancy"), _c("A.A_of_t.readable.relu", "pass"),
            _c("A.gradWKQ.identity", "discrepancy"), _c("A.gradWKQ.relu", "pass"), _c("A.gradWKQ.leaky", "pass")]


def _validate(obj):
    import importlib.resources

    import jsonschema

    schema = json.loads(importlib.resources.files("rdyn").joinpath("schemas/claims.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(obj)


def _ledger(run):
    ledger = claims.evaluate("A", quick=True, run_checks=lambda only, model, quick: run)
    obj = json.loads(json.dumps(ledger.to_dict(), default=str))
    return ledger, obj, {c["label"]: c for c in obj["claims"]}


def test_the_restored_reading_decides_whose_error_it_is():
    ledger, obj, by = _ledger(_run("pass"))
    _validate(obj)
    assert claims.cause_conflicts(obj) == []
    s = by["Theorem 3.1 (proof: S identity)"]
    assert s["kind"] == "extraction_suspect" and s["root_causes"] == ["S_norm_sqrt"]
    assert s["extraction"]["origins"] == {"S_norm_sqrt": "extraction"}
    reading = s["extraction"]["readings"][0]
    assert reading["extracted_reading"] == {"verdict": "discrepancy", "checks": ["A.claim.S_identity"]}
    assert reading["restored_reading"]["verdict"] == "pass" and reading["attribution"] == "extraction"
    assert s["correction"]["kind"] == "extraction_suspect"
    # the D^{5/2} order keeps the paper's rate error; the identity it rests on is the extraction's, listed after
    d52 = by["Theorem 3.1 (proof: D^{5/2} order)"]
    assert d52["kind"] == "wrong_rate" and d52["root_causes"] == ["late_rate_1_minus_Kp", "S_norm_sqrt"]
    # Lemma D.6: the arctan's root is the extraction's, the missing sin(2 beta) term the paper's
    d6 = by["Lemma D.6"]
    assert d6["kind"] == "wrong_formula" and d6["root_causes"] == ["A_of_t_printed", "D6_arctan_sqrt"]
    assert d6["extraction"]["origins"] == {"D6_arctan_sqrt": "extraction", "A_of_t_printed": "paper"}
    # a reading that is not plausible (a flipped sign) is evaluated but never moves the blame
    d8 = by["Lemma D.8"]
    assert d8["kind"] == "sign" and d8["extraction"]["readings"][0]["restored_reading"]["verdict"] == "pass"
    assert d8["extraction"]["readings"][0]["attribution"] == "paper" and not d8["extraction"]["readings"][0]["plausible"]
    causes = obj["root_causes"]["A"]
    assert {k: v["origin"] for k, v in causes.items()} == {
        "S_norm_sqrt": "extraction", "late_rate_1_minus_Kp": "paper", "A_of_t_printed": "paper",
        "D6_arctan_sqrt": "extraction", "D8_sign": "paper"}
    summary = obj["summary"]["A"]
    assert (summary["paper_errors"], summary["extraction_losses"]) == (3, 2)
    assert summary["discrepancies_by_origin"] == {"paper": 3, "extraction": 1}
    assert summary["paper_errors"] + summary["extraction_losses"] == summary["root_causes"]
    # non-discrepancies carry no extraction object
    assert all(c["extraction"] is None for c in obj["claims"] if c["verdict"] != "discrepancy")


def test_a_restored_reading_that_fails_or_did_not_run_blames_the_paper():
    for run in (_run("discrepancy"), [c for c in _run() if c.id != "A.extraction.S_identity.restored"]):
        _, obj, by = _ledger(run)
        s = by["Theorem 3.1 (proof: S identity)"]
        assert s["kind"] == "wrong_formula" and s["extraction"]["origins"] == {"S_norm_sqrt": "paper"}
        assert s["extraction"]["readings"][0]["attribution"] == "paper"
        assert obj["summary"]["A"]["extraction_losses"] == 1       # D.6's arctan only
        _validate(obj)


def test_the_summary_text_counts_both():
    from rdyn.verification.claims import errata_writer, report

    ledger, obj, _ = _ledger(_run("pass"))
    line = extraction.origin_counts_text("A", obj["summary"]["A"])
    assert line.startswith("Model A: 4 discrepancies from 5 root causes: 3 errors of the paper (3 entries) and 2 suspected "
                           "losses of the text extraction (1 entries")
    assert line in report.root_cause_lines(ledger)[0]
    assert "2 suspected losses of the text extraction" in errata_writer.markdown(ledger)


def test_the_readings_checks_run_with_their_entries():
    entry = next(e for e in claims.LEDGER if e.label == "Lemma D.10")
    assert {"A.claim.D10", "A.extraction.D10.restored", "A.errata.D10"} <= set(claims.globs([entry]))
    r = claims.judge(entry, [_c("A.claim.D10", "discrepancy"), _c("A.extraction.D10.restored", "pass"),
                             _c("A.errata.D10", "pass", expression={"identity": "1/sqrt(D*K)"})])
    assert r.kind == "extraction_suspect" and r.evidence["checks"]["A.extraction.D10.restored"]["role"] == "context"
