"""What the ledger's ``proved`` and ``certified`` strengths rest on (verify/claims/strength.py;
docs/claims.md, "Strength"): each backing is re-established here, so a strength cannot outlive it.

* Model B: ``rdyn prove --paper B`` at every instance of ``PROVE_B_INSTANCES`` certifies the
  statements ``B3_STATEMENTS`` names (Theorem B.3 at the corrected eta_max), and refutes the
  printed eta_max's Part 1 (so the proof tells the two forms apart);
* Model A: the corrections ``rdyn prove`` certifies (tests/verify/proofs/test_engine.py, tests/verify/proofs/test_sweep.py
  run the proofs) and the sympy identities of ``rdyn.derivations.model_a.correction_identities`` (each
  difference simplifies to exactly 0; a mutated form does not).
"""
from __future__ import annotations

import pytest

import rdyn
from rdyn.verification.claims import strength


def _prove_kwargs(inst: dict) -> dict:
    return {k: v for k, v in inst.items()}


@pytest.mark.parametrize("index", range(len(strength.PROVE_B_INSTANCES)))
def test_model_b_instances_are_certified(index):
    inst = strength.PROVE_B_INSTANCES[index]
    d = rdyn.prove(**_prove_kwargs(inst)).to_dict()
    got = {(s["label"], s["form"], s["quantity"]): s for s in d["statements"]}
    lo, hi = (float(x) for x in inst["s0"].split(","))
    for label in strength.B_CORRECTIONS_BY_PROVE + strength.B_ENTRIES_BY_PROVE:
        for key in strength.B3_STATEMENTS[label]:
            s = got[key]
            assert s["verdict"] == "certified", (inst, key, s["reason"])
            assert s["certificate"]["S0"] == [lo, hi] and s["certificate"]["min_margin"] > 0
            # every eta = theta eta_max with theta in the instance's --eta-fraction (docs/proofs.md, Model B)
            assert s["certificate"]["eta_fraction"] == [float(x) for x in inst["eta_fraction"].split(",")]
    # the printed eta_max's Part 1 fails near the crossing S0 = 4 sqrt(1 + 16 gamma*^2) (inside every interval)
    assert got[("Theorem B.3 (Part 1)", "printed", "descent_lemma")]["verdict"] == "refuted"


def test_model_b_strengths():
    s, basis = strength.of_correction("B", "Theorem B.3 (eta_max)", ["B.noln.eta_max_descent.spectrum"])
    assert s == "proved" and [i["name"] for i in basis["identities"]][:2] == ["B3_recursion", "B3_delta"]
    cert = basis["also_certified"]
    assert cert["instances"][0]["spectrum"] == "3,1,1,1"
    assert {"label": "Theorem B.3 (Part 1)", "form": "corrected", "quantity": "descent_lemma"} in cert["statements"]
    assert strength.of_entry("B", "Theorem B.3 (Part 1)", "pass", ["B.claim.B3.descent"])[0] == "certified"
    s, basis = strength.of_correction("B", "Theorem B.3 (Part 3)", ["B.noln.eta_max_descent.normalized"])
    assert s == "proved" and len(basis["identities"]) == 6


def test_b3_step_bound_fails_with_the_printed_one():
    """The proof's step-size inequality 1/16 - k^2 (sigma0^2 + 4) >= 0 holds for every S0 at the corrected
    eta_max (an identity with a nonnegative right side) and fails at the printed one for large S0."""
    import sympy as sp

    gs, S0 = sp.Rational(1, 2), sp.Integer(10)
    for c, sign in ((S0**2, 1), (1, -1)):
        k = gs / (4 * sp.sqrt(c + 16 * gs**2))          # 2 eta kappa2 gamma*/d at eta = d/(8 kappa2 sqrt(c + 16 gamma*^2))
        value = sp.Rational(1, 16) - k**2 * ((S0 / gs) ** 2 + 4)
        assert sp.sign(value) == sign, (c, value)


def test_model_a_prove_strengths():
    for label in ("Lemma D.10", "Lemma D.17 (threshold)", "Lemma D.18"):
        s, basis = strength.of_correction("A", label, ["A.errata.D10"])
        assert s == "certified" and len(basis["instances"]) == len(strength.PROVE_INSTANCES)
    assert strength.of_entry("A", "Lemma D.10", "discrepancy", ["A.claim.D10"])[0] == "certified"
    # the threshold's entry (p(T*) >= 1/2 unreachable) is not what rdyn prove decides
    assert strength.of_entry("A", "Lemma D.17 (threshold)", "discrepancy", ["A.claim.D17.threshold"])[0] == "sampled"


@pytest.mark.parametrize("name", sorted(__import__("rdyn.derivations.model_a.correction_identities",
                                                   fromlist=["IDENTITIES"]).IDENTITIES))
def test_correction_identity_is_exact_and_the_printed_form_is_not(name):
    """The sympy identity behind a ``proved`` correction simplifies to exactly 0; with the printed form
    in place of the corrected one (S identity: K(D-K) for sqrt(K(D-K)); D.6: arctan without the
    square root and no sin(2 beta); D.8: + p F1; F.3-F.7: the variances where the restored form has
    standard deviations) it does not."""
    import sympy as sp

    from rdyn.derivations.model_a import correction_identities as ci

    assert sp.simplify(ci.difference(name)) == 0
    assert sp.simplify(ci.difference(name, mutated=True)) != 0


def test_proved_corrections_cite_their_identities():
    from rdyn.derivations.model_a import correction_identities as ci

    for label, names in (("Theorem 3.1 (proof: S identity)", ["S_identity"]),
                         ("Lemma D.6", ["D6_A_of_t.relu", "D6_A_of_t.leaky"]),
                         ("Lemma D.8", ["D8_coefficient.identity", "D8_coefficient.relu", "D8_coefficient.leaky"]),
                         ("Lemma F.3 (intermediate)", ["F3_restored"]), ("Lemma F.4 (intermediate)", ["F4_restored"]),
                         ("Lemma F.6 (intermediates)", ["F6_restored.conditional", "F6_restored.integral"]),
                         ("Lemma F.7 (intermediate)", ["F7_restored"])):
        s, basis = strength.of_correction("A", label, ["A.gradWKQ.relu"])
        assert s == "proved" and [i["name"] for i in basis["identities"]] == names
        assert all(i["domain"] == ci.IDENTITIES[i["name"]].domain for i in basis["identities"])
    for label in ("Theorem B.3 (eta_max)", "Theorem B.3 (Part 3)"):
        s, basis = strength.of_correction("B", label, [])
        assert s == "proved" and "linear convergence" in basis["identities"][0]["rewrites"]
    # a correction no identity proves keeps the strength of its checks
    assert strength.of_correction("A", "Lemma D.17", ["A.errata.Tstar"])[0] == "sampled"


@pytest.mark.slow   # ~20 s
def test_late_phase_rate_is_the_certified_limit():
    """The late-phase corrections' constants rest on e^2 tau -> scale/(2 g2) (rdyn.derivations.model_a.late_phase),
    the limit the certified region gives (e^-2/T -> 2 eta g2/scale): the two agree exactly, every
    activation and logit scale."""
    import sympy as sp

    from rdyn.derivations.model_a import late_phase as lp
    from rdyn.derivations.model_a import collapsed as ma

    for activation in ("identity", "relu", "leaky"):
        for scale, value in (("D", ma.D), ("sqrtD", sp.sqrt(ma.D))):
            lph = lp.late_phase(activation, scale)
            assert sp.simplify(lph.e_squared_times_tau - value / (2 * lph.g2)) == 0
            assert sp.simplify(lph.e_squared_times_tau - value / lph.g2) != 0


def test_late_rates_are_certified_except_the_large_D_law():
    for label in strength.LATE_RATES_BY_PROVE:
        s, basis = strength.of_correction("A", label, ["A.errata.late.excess_loss"])
        assert s == "certified" and "Stolz-Cesaro" in basis["by"] and basis["instances"]
    _, ood = strength.of_correction("A", "Section 4.1 (OOD slope)", ["A.errata.ood"])
    assert {i["logit_scale"] for i in ood["instances"]} == {"D"}
    assert strength.of_correction("A", "Lemma D.17", ["A.errata.Tstar"])[0] == "sampled"


def test_b3_argument_along_trajectories():
    """An independent numeric route for the proved B.3 statements: exact rational GD steps on
    (alpha, beta) at eta = eta_max (corrected, rounded down) times 1, 1/2, 1/10, from alpha_0 = 0,
    beta_0^2 = S0, for several S0 and gamma* (d = 16, kappa2 = 47/8): the loss decreases, Part 1 holds,
    gamma_t increases to gamma* without overshoot; at the printed eta_max near S0 = 4 sqrt(1 + 16 gamma*^2)
    gamma overshoots (so the check can fail)."""
    from fractions import Fraction as Fr
    import math

    d, k2 = 16, Fr(47, 8)

    def run(gs, S0, eta, steps=60):
        a, b = Fr(0), Fr(math.sqrt(S0)).limit_denominator(10**12)
        ok = True
        for _ in range(steps):
            g = a * b
            F = 2 * k2 * (g - gs) / d
            S = a * a + b * b
            a, b = a - eta * b * F, b - eta * a * F
            g1 = a * b
            L0, L1 = k2 * (g - gs) ** 2, k2 * (g1 - gs) ** 2
            ok &= (L1 < L0 or L0 == 0) and L1 - L0 <= -eta * d * S * F * F / 2 and g <= g1 <= gs
            a, b = Fr(a).limit_denominator(10**15), Fr(b).limit_denominator(10**15)
        return ok

    for gs in (Fr(31, 47), Fr(1, 10)):
        for S0 in (0.25, 1.0, 7.0, 40.0):
            emax = Fr(d / (8 * float(k2) * math.sqrt(S0 * S0 + 16 * float(gs) ** 2)) * (1 - 1e-12))
            for frac in (1, Fr(1, 2), Fr(1, 10)):
                assert run(gs, S0, emax * frac), (gs, S0, frac)
    gs = Fr(31, 47)
    S0c = 4 * math.sqrt(1 + 16 * float(gs) ** 2) * (1 - 0.5 * (float(gs) / 11.3) ** 2)
    printed = Fr(min(d / (8 * float(k2) * math.sqrt(1 + 16 * float(gs) ** 2)), d / (2 * float(k2) * S0c)))
    assert not run(gs, S0c, printed)


def test_t1_scaling_is_certified_over_ranges_only():
    """Lemma D.13's t1 = Theta(1/eta) is certified for every eta of the ranges of PROVE_ETA_GRIDS (rdyn prove's
    D13.range.t1, the slow grid tests) and at no single instance: its scope lists no instance and says why."""
    from rdyn.verification.claims import strength

    got, basis = strength.of_entry("A", "Lemma D.13 (t1)", "pass", ["S.A.t1.eta.relu.exponent"])
    scope = strength.scope(got, basis)
    assert got == "certified" and basis["instances"] == [] and basis["eta_boxes"] == list(strength.PROVE_ETA_GRIDS)
    assert scope["count"] == 0 and scope["instances"] == []
    assert scope["text"].startswith("certified at no single instance (a statement about every step size at once)")
    assert "396 configurations" in scope["text"] and "every D = 25..48 and K = 3, ReLU, identity (48 configurations)" \
        in scope["text"]
