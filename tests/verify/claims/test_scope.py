"""Every correction and every ledger verdict says exactly what its strength covers (``scope``,
verify/claims/strength.py; docs/claims.md, "Strength") and its wording claims no more: under a
``certified``, ``sampled`` or ``fitted`` strength no statement or validity text quantifies over every D, K,
eta, activation or instance; a certified scope lists its instances (logits/sqrt(D) ones marked outside the
paper's model); an exact comparison resting on the certified late-phase law is no stronger than it."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from rdyn.verification.checks.record import Check
from rdyn.verification.claims import errata, strength

# Corrections whose statement and validity another change owns; their wording is checked there.
OTHER_OWNER: set = set()

# a universal quantifier over a parameter of the instance (not over the steps t of one trajectory)
WIDE = re.compile(r"\b(every|any|all|each|arbitrary)\s+(D\b|K\b|eta\b|M\b|kappa\b|activations?\b|sizes?\b|"
                  r"parameters?\b|logit scales?\b|instances?\b|D\s*>|\|\|V\*\|\|)|\bboth logit scales\b|"
                  r"\bfor all (D|K|eta|sizes)\b", re.IGNORECASE)
REPO = Path(__file__).resolve().parents[3]


def wider_than_scope(text: str, strength_name: str, scope: dict | None = None) -> list[str]:
    """The phrases of ``text`` that quantify over more than a ``strength_name`` verdict covers (none under
    ``proved``, whose domain is every parameter value it states; "every eta" where the scope has step-size
    ranges proved at once, ``eta_boxes``)."""
    if strength_name == "proved":
        return []
    ranges = bool(scope and scope.get("eta_boxes"))
    return [m.group(0) for m in WIDE.finditer(text)
            if not (ranges and re.fullmatch(r"(every|all|each)\s+eta", m.group(0), re.IGNORECASE))]


def _records(spec: errata.CorrectionSpec) -> list[Check]:
    """One passing record per check pattern of ``spec`` (a ``*`` read as ``relu``), the expression source with a
    placeholder expression."""
    out = []
    for pattern in spec.checks + ((spec.expression_from,) if spec.expression_from else ()):
        cid = pattern.replace("*", "relu")
        if any(c.id == cid for c in out):
            continue
        out.append(Check(cid, "test", "placeholder", "pass", detail={"expression": "1/K"}))
    return out


CORRECTIONS = [(key, cls) for key, cls in errata.CLASSIFICATION.items() if cls.correction is not None]


@pytest.mark.parametrize("key,cls", CORRECTIONS, ids=[f"{p}:{label}" for (p, label), _ in CORRECTIONS])
def test_wording_is_no_wider_than_the_scope(key, cls):
    if key in OTHER_OWNER:
        pytest.skip("OTHER-OWNER: D.18/D.19 wording is revised by another change; remove this skip with it")
    spec = cls.correction
    fix = errata.correction_object(spec, cls, _records(spec))
    scope = fix["scope"]
    assert scope == strength.scope(fix["strength"], fix["strength_basis"])
    assert scope["covers"] in strength.SCOPE_COVERS
    # the printed validity starts with exactly what backs the correction
    assert fix["valid"].startswith(scope["text"] + ". Conditions: ")
    assert wider_than_scope(spec.valid, fix["strength"], scope) == [], (key, spec.valid)
    assert wider_than_scope(spec.statement, fix["strength"], scope) == [], (key, spec.statement)
    if fix["strength"] == "certified":
        assert scope["count"] == len(fix["strength_basis"]["instances"]) > 0
        assert all(text in scope["text"] for text in scope["instances"])
    if fix["strength"] == "proved":
        assert scope["domain"] == fix["strength_basis"]["domain"] and scope["text"] == f"proved for {scope['domain']}"
    _validate_correction(fix)


def _validate_correction(fix: dict) -> None:
    """``fix`` against the schema's correction definition (rdyn/schemas/claims.schema.json, Draft 2020-12)."""
    import importlib.resources
    import json

    import jsonschema

    schema = json.loads(importlib.resources.files("rdyn").joinpath("schemas/claims.schema.json").read_text())
    sub = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": "#/$defs/correction"}
    jsonschema.Draft202012Validator(sub).validate(fix)
    broken = {**fix, "scope": {**fix["scope"], "covers": "everything"}}
    assert not jsonschema.Draft202012Validator(sub).is_valid(broken)


def test_the_wording_test_fails_on_wide_wording():
    """The check above can fail: the former texts of D.10 and the late-phase rates are wider than certified."""
    assert wider_than_scope("every D > K >= 1 (identity closed form)", "certified") == ["every D"]
    assert wider_than_scope("T -> oo at fixed D, K; any eta for which the map converges", "certified") == ["any eta"]
    assert wider_than_scope("every K >= 1, both logit scales", "certified") == ["every K", "both logit scales"]
    assert wider_than_scope("every activation", "sampled") == ["every activation"]
    assert wider_than_scope("p(t) < 1/K for all t", "certified") == []
    assert wider_than_scope("every D > K >= 1", "proved") == []


def test_certified_scope_lists_instances_and_marks_the_other_scale():
    s, basis = strength.of_correction("A", "Lemma D.10", ["A.errata.D10"])
    scope = strength.scope(s, basis)
    assert scope["covers"] == "listed_instances" and scope["count"] == len(strength.PROVE_INSTANCES) == 14
    assert scope["text"].startswith("certified at the 14 instances listed (activation, D, K, eta, logit scale) only: ")
    assert "relu D=9 K=3 the papers' eta logits/D" in scope["instances"]
    sqrt_d = [i for i in strength.PROVE_INSTANCES if i["logit_scale"] == "sqrtD"]
    assert len(scope["outside_model"]) == len(sqrt_d) == 4
    assert all(t.endswith("logits/sqrt(D) [outside the paper's model]") for t in scope["outside_model"])
    b_scope = strength.scope(*strength.of_entry("B", "Theorem B.3 (Part 1)", "pass", ["B.claim.B3.descent"]))
    assert b_scope["count"] == len(strength.PROVE_B_INSTANCES) and "theta in [0.1, 1]" in b_scope["text"]
    assert strength.scope(None, None) is None


def test_d10_validity_matches_the_proof_sweep():
    """D.10's validity names what the proof sweep's table (docs/proofs.md) recorded: its certified counts and
    the instances it left undecided at eta_limit/2, which are certified since the turning point's search
    brackets a grid point where dC1*/de = 0 (tests/verify/proofs/test_sweep.py: KNOWN_UNDECIDED is empty)."""
    row = next(line for line in (REPO / "docs" / "proofs.md").read_text().splitlines()
               if "`D10.corrected`" in line)
    half, paper = (re.fullmatch(r"\s*(\d+) / (\d+) / (\d+) / (\d+)\s*", cell).groups()
                   for cell in row.strip().strip("|").split("|")[-2:])
    valid = errata.CLASSIFICATION[("A", "Lemma D.10")].correction.valid
    assert f"{half[1]} of {sum(map(int, half))} instances at eta_limit/2" in valid
    # the papers' eta column: the whole grid by the float route, every instance certified
    assert int(paper[1]) == sum(map(int, paper)) == 264 and f"all {paper[1]} at the papers' eta" in valid
    assert int(half[3]) == 2 and int(paper[3]) == 0
    assert ("the two others (identity D = 9, K = 1 and D = 18, K = 2, eta_limit/2) were "
            "undecided" in valid and "are certified since" in valid)


def test_exact_comparison_on_the_late_law_is_certified_not_proved():
    """Theorem 3.1's D-order (an exact comparison of derived and printed forms) rests on the late-phase law,
    certified per instance: the entry's strength is certified at those instances, its basis says why."""
    for label, check in (("Theorem 3.1 (loss)", "A.errata.derived.loss_theorem31"),
                         ("Theorem 3.1 (Step 3)", "A.errata.derived.S_step3")):
        s, basis = strength.of_entry("A", label, "discrepancy", [check])
        assert s == "certified" and basis["instances"] == [dict(i) for i in strength.PROVE_INSTANCES]
        assert "certified at these instances only" in basis["exact_comparison"]
        assert "exact comparison resting on the late-phase law" in strength.scope(s, basis)["text"]
    # an exact identity not resting on the late law stays proved
    assert strength.of_entry("A", "Lemma D.12 (C1* for the identity)", "pass", ["A.C1star.identity"])[0] == "proved"


def test_tstar_law_is_not_proved_and_names_every_unchecked_step():
    from rdyn.derivations.model_a.tstar_law import UNCHECKED_STEPS

    ids = ["A.errata.Tstar", "A.errata.Tstar.identity_proof", "A.errata.Tstar.relu_proof"]
    for s, basis in (strength.of_correction("A", "Lemma D.17", ids),
                     strength.of_entry("A", "Lemma D.17", "discrepancy", ["A.flow.Tstar_exponent.D"] + ids[1:])):
        assert s == "sampled"
        assert basis["not_proved"][:len(UNCHECKED_STEPS)] == [t for _, t in UNCHECKED_STEPS]
        assert basis["proved_part"]["checks"] == ids[1:]
        text = strength.scope(s, basis)["text"]
        assert text.startswith("sampled: ") and all(t in text for _, t in UNCHECKED_STEPS)
    # without the ReLU check its part is named as not checked
    _, basis = strength.of_correction("A", "Lemma D.17", ids[:2])
    assert basis["not_proved"][-1].startswith("ReLU and Leaky ReLU: no part checked")
