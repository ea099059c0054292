"""Theorem B.3 Part 1 decided by rdyn prove --paper B (verify/checks/claims_b.py), and its correction."""
from rdyn.verification.checks import claims_b as cb
from rdyn.verification.claims import ledger as claims


def test_part1_at_the_printed_eta_max_is_refuted_by_the_prover():
    c = cb.b3_part1_prove_check()
    assert (c.id, c.status) == ("B.claim.B3.part1_prove", "discrepancy")
    cex = c.detail["printed_form"]["counterexample"]
    # the certified counterexample: S0 = 11.2470741..., step 2, the needed decrease not reached
    assert abs(float(cex["S0"]) - 11.2470741) < 1e-6 and cex["step"] == 2 and float(cex["ratio"]) < 1
    assert c.detail["corrected_form"]["verdict"] == "certified"
    entry = next(e for e in claims.LEDGER if (e.paper, e.label) == ("B", "Theorem B.3 (Part 1)"))
    result = claims.judge(entry, [c])
    assert result.verdict == "discrepancy" and result.root_causes == ["B3_eta_max_S0"]
    strength, basis = result.strength()
    assert strength == "certified" and basis["prover_verdict"] == "refuted"
    assert basis["statements"] == [{"label": "Theorem B.3 (Part 1)", "form": "printed", "quantity": "descent_lemma"}]


def test_eta_max_correction_is_sufficient_and_drops_only_proved_redundant_terms():
    from rdyn.verification.claims.errata import CLASSIFICATION

    fix = CLASSIFICATION[("B", "Theorem B.3 (eta_max)")].correction
    assert "sufficient" in fix.statement and "iff" not in fix.statement.replace("'iff'", "")
    assert fix.expression == "d/(8*kappa2*sqrt(S0**2 + 16*gamma_star**2))" and fix.relation == "upper_bound"
    from rdyn.derivations.model_a import correction_identities as ci

    names = [i.name for i in ci.for_label("B", "Theorem B.3 (eta_max)")]
    assert {"B3_min_redundant.second", "B3_min_redundant.third"} <= set(names)


def test_prover_verdict_is_in_the_claims_schema():
    import jsonschema

    import rdyn

    schema = rdyn.schema("claims")
    basis = jsonschema.Draft202012Validator({**schema, "$ref": "#/$defs/strength_basis"})
    top = set(schema.get("required", []))
    good = {"prover_verdict": "refuted", "statements": [{"label": "x", "form": "printed", "quantity": "q"}]}
    errors = [e for e in basis.iter_errors(good) if e.validator != "required" or not top]
    assert not [e for e in errors if "prover_verdict" in str(e.path)]
    bad = [e for e in basis.iter_errors({"prover_verdict": "pass"}) if "prover_verdict" in list(e.path)]
    assert bad
