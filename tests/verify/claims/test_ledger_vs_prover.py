"""No ledger entry contradicts rdyn prove's verdict on the same statement: an entry backed by the prover
(Model A: strength.PROVED_BY_PROVE; Model B: strength.B_ENTRIES_BY_PROVE) is a discrepancy where the prover
refutes the printed statement, and not a discrepancy where it certifies every side of it."""
import pytest

import rdyn
from rdyn.verification.claims import ledger as claims
from rdyn.verification.claims import strength


def contradictions(entries: dict, statements: list) -> list[str]:
    """(label -> (ledger verdict, kind)) against the prover's statements (label, form, verdict, statement):
    the printed form refuted on any side but the entry not a discrepancy, or certified on every side but the
    entry a discrepancy or a fail. A printed statement the prover certifies *as vacuous* (its hypothesis
    never holds, Lemma D.10) is true and says nothing: a pass or a discrepancy (the vacuous condition, or
    the extraction reading that restores it) both agree with it, a fail does not."""
    out = []
    for label, (verdict, _kind) in entries.items():
        printed = [s for s in statements if s["label"] == label and s["form"] == "printed"]
        verdicts = [s["verdict"] for s in printed]
        vacuous = bool(printed) and all("vacuous" in s.get("statement", "") for s in printed)
        if "refuted" in verdicts and verdict != "discrepancy":
            out.append(f"{label}: rdyn prove refutes the printed statement, the ledger says {verdict}")
        elif (verdicts and all(v in ("certified", "proved") for v in verdicts) and verdict in ("discrepancy", "fail")
              and not (vacuous and verdict == "discrepancy")):
            out.append(f"{label}: rdyn prove certifies the printed statement, the ledger says {verdict}")
    return out


def test_contradictions_are_found():
    st = [{"label": "Theorem B.3 (Part 1)", "form": "printed", "verdict": "refuted", "statement": "Part 1"}]
    assert contradictions({"Theorem B.3 (Part 1)": ("pass", None)}, st)
    assert not contradictions({"Theorem B.3 (Part 1)": ("discrepancy", "wrong_formula")}, st)
    ok = [{"label": "Lemma D.13 (attention)", "form": "printed", "verdict": "certified", "statement": "p <= ..."}]
    assert contradictions({"Lemma D.13 (attention)": ("discrepancy", "wrong_rate")}, ok)
    # Lemma D.10: certified as vacuous (p > 1/(2 pi D K) for all t) is the ledger's vacuous_condition
    d10 = [{"label": "Lemma D.10", "form": "printed", "verdict": "certified",
            "statement": "C1*(t+1) >= C1*(t) whenever p(t) <= 1/(2 pi D K): vacuous, decided as p(t) > 1/(2 pi D K)"}]
    assert not contradictions({"Lemma D.10": ("discrepancy", "vacuous_condition")}, d10)
    assert not contradictions({"Lemma D.10": ("discrepancy", "extraction_suspect")}, d10)
    assert contradictions({"Lemma D.10": ("fail", None)}, d10)


def test_model_b_ledger_agrees_with_rdyn_prove():
    """rdyn prove --paper B at its default instance and at the ledger's validation instance (Task 2, d = 4)."""
    from rdyn.verification.checks import claims_b as cb

    check = cb.b3_part1_prove_check()
    judged = [claims.judge(e, [check]) for e in claims.entries("B") if e.label in strength.B_ENTRIES_BY_PROVE]
    verdicts = {r.entry.label: (r.verdict, r.kind) for r in judged}
    assert verdicts == {"Theorem B.3 (Part 1)": ("discrepancy", "wrong_formula")}
    for options in ({"paper": "B"}, {"paper": "B", "data": "spectrum", "d": 4, "spectrum": "3,1,1,1"}):
        statements = rdyn.prove(**options).to_dict()["statements"]
        assert contradictions(verdicts, statements) == [], options


@pytest.mark.slow
def test_model_a_ledger_agrees_with_rdyn_prove():
    """Model A's prover-backed entries from the quick ledger's checks against rdyn prove at the pinned
    instance D = 9, K = 3 (ReLU, the papers' eta)."""
    selected = [e for e in claims.entries("A") if e.label in strength.PROVED_BY_PROVE]
    ledger = claims.evaluate("A", quick=True, run_checks=lambda only, model, quick: __import__(
        "rdyn.verification.checks.registry", fromlist=["run_checks"]).run_checks(
            only=claims.globs(selected), model=model, quick=quick))
    verdicts = {c.entry.label: (c.verdict, c.kind) for c in ledger.claims if c.entry.label in strength.PROVED_BY_PROVE}
    assert set(verdicts) == set(strength.PROVED_BY_PROVE)
    statements = rdyn.prove(D=9, K=3).to_dict()["statements"]
    assert contradictions(verdicts, statements) == []
