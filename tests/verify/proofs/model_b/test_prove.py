"""`rdyn prove --paper B` (docs/proofs.md, "Model B"): Theorem B.3 at the printed and the corrected
eta_max over an S0 interval, gamma* by a Krawczyk test, the contraction factor R.

Pinned: the verdicts, the certified margins, the Krawczyk box and contraction bound, and the
printed eta_max's counterexample (S0, step, 40-digit ratio), which an independent mpmath
iteration of the alpha/beta recursion (not the gamma/S recursion the prover uses) reproduces.
"""
from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction

import pytest

import rdyn


@pytest.fixture(scope="module")
def default_b():
    """The default instance: Task 1, d = 16, n = 32, unnormalized target, S0 in [0.25, 16]."""
    return rdyn.prove(paper="B").to_dict()


def _by(data, label, form, quantity):
    (s,) = [s for s in data["statements"] if s["label"] == label and s["form"] == form and s["quantity"] == quantity]
    return s


def test_corrected_eta_max_is_certified_and_printed_is_refuted(default_b):
    d = default_b
    assert d["paper"] == "B" and d["constants"]["gamma_star_exact"] == "31/47"
    assert d["constants"]["kappa2"] == "47/8" and d["constants"]["kappa1"] == "2"
    for q, label in (("loss", "Theorem B.3 (eta_max)"), ("descent_lemma", "Theorem B.3 (Part 1)"),
                     ("gamma", "Theorem B.3 (eta_max)")):
        s = _by(d, label, "corrected", q)
        assert s["verdict"] == "certified", s
        assert s["certificate"]["S0"] == [0.25, 16.0]
    margins = {q: _by(d, "Theorem B.3 (Part 1)" if q == "descent_lemma" else "Theorem B.3 (eta_max)", "corrected",
                      q)["certificate"]["min_margin"] for q in ("loss", "descent_lemma", "gamma")}
    assert margins["loss"] == pytest.approx(0.0035250043131708035, rel=1e-9)
    assert margins["descent_lemma"] == pytest.approx(0.6244321549256642, rel=1e-9)
    assert margins["gamma"] == pytest.approx(0.6243279379743457, rel=1e-9)
    # the printed eta_max still gives a decreasing loss ...
    assert _by(d, "Theorem B.3 (eta_max)", "printed", "loss")["verdict"] == "certified"
    # ... but not Part 1's inequality, nor a monotone gamma (gamma overshoots gamma* at step 3)
    lemma = _by(d, "Theorem B.3 (Part 1)", "printed", "descent_lemma")
    mono = _by(d, "Theorem B.3 (eta_max)", "printed", "gamma")
    for s in (lemma, mono):
        assert s["verdict"] == "refuted"
        c = s["counterexample"]
        assert c["S0"].startswith("11.247074127197265625") and c["step"] == 2
    assert lemma["counterexample"]["ratio"] == "0.9999829910521653960756409839470474044097"
    assert mono["counterexample"]["ratio"] == "1.000000000001056710745955059134883906078"


def test_counterexample_by_an_independent_alpha_beta_iteration(default_b):
    """alpha' = alpha - eta beta F, beta' = beta - eta alpha F (B.2.3) at 60 digits, from alpha0 = 0,
    beta0 = sqrt(S0), eta = d/(8 kappa2 sqrt(1 + 16 gamma*^2)) (the printed first term binds here)."""
    import mpmath

    c = _by(default_b, "Theorem B.3 (eta_max)", "printed", "gamma")["counterexample"]
    with mpmath.workdps(60):
        d, k2, gs = 16, mpmath.mpf(47) / 8, mpmath.mpf(31) / 47
        S0 = mpmath.mpf(c["S0"])
        eta = min(d / (8 * k2 * mpmath.sqrt(1 + 16 * gs**2)), d / (2 * k2 * S0), d / (2 * k2 * mpmath.sqrt(2 * S0 * gs)))
        assert mpmath.almosteq(eta, mpmath.mpf(c["eta"]), rel_eps=mpmath.mpf(10) ** -38)
        alpha, beta = mpmath.mpf(0), mpmath.sqrt(S0)
        gammas = [alpha * beta]
        for _ in range(4):
            F = 2 * k2 * (alpha * beta - gs) / d
            alpha, beta = alpha - eta * beta * F, beta - eta * alpha * F
            gammas.append(alpha * beta)
        assert gammas[2] < gs < gammas[3]      # the overshoot the prover found (step 2 -> 3)
        assert mpmath.almosteq(gammas[3] / gs, mpmath.mpf(c["ratio"]), rel_eps=mpmath.mpf(10) ** -35)


def test_certified_margins_bound_every_step_of_real_trajectories(default_b):
    """The region contains every reachable state, so each step's slack along trajectories from
    S0 in the interval (mpmath, 50 digits, the alpha/beta recursion) is at least min_margin."""
    import mpmath

    margins = {q: _by(default_b, "Theorem B.3 (Part 1)" if q == "descent_lemma" else "Theorem B.3 (eta_max)",
                      "corrected", q)["certificate"]["min_margin"] for q in ("loss", "descent_lemma", "gamma")}
    with mpmath.workdps(50):
        d, k2, gs = 16, mpmath.mpf(47) / 8, mpmath.mpf(31) / 47
        for S0 in ("0.25", "1", "3.7", "11.25", "16"):
            S0 = mpmath.mpf(S0)
            eta = min(d / (8 * k2 * mpmath.sqrt(S0**2 + 16 * gs**2)), d / (2 * k2 * S0),
                      d / (2 * k2 * mpmath.sqrt(2 * S0 * gs)))
            alpha, beta = mpmath.mpf(0), mpmath.sqrt(S0)
            for _ in range(200):
                g, S = alpha * beta, alpha**2 + beta**2
                F = 2 * k2 * (g - gs) / d
                a1, b1 = alpha - eta * beta * F, beta - eta * alpha * F
                L0, L1 = k2 * (g - gs) ** 2, k2 * (a1 * b1 - gs) ** 2
                if L0 < mpmath.mpf(10) ** -40:
                    break
                assert 1 - L1 / L0 >= margins["loss"]
                bound = eta * d * S * F**2 / 2
                assert (L0 - L1 - bound) / bound >= margins["descent_lemma"] - 1e-30
                assert (gs - a1 * b1) / (gs - g) >= margins["gamma"]       # f = (g' - 1)/(g - 1)
                alpha, beta = a1, b1


def test_printed_eta_max_holds_below_the_crossover():
    """Below S0 = 4 sqrt(1 + 16 gamma*^2) (1 - k^2) the printed bound needs no correction for these
    statements (it is the S0 range near the crossover 11.2858 where gamma overshoots)."""
    d = rdyn.prove(paper="B", s0="0.25,11.2").to_dict()
    assert all(s["verdict"] == "certified" for s in d["statements"])


def test_krawczyk_box_and_contraction(default_b):
    for form, q in (("printed", 0.9178977090037693), ("corrected", 0.9797437684768648)):
        s = _by(default_b, "Theorem 4.2 (gamma*)", form, "fixed_point")
        assert s["verdict"] == "certified"
        c = s["certificate"]
        lo, hi = c["box"]
        assert lo < 31 / 47 < hi and c["width"] == pytest.approx(hi - lo)
        k_lo, k_hi = c["krawczyk_image"]
        assert lo < k_lo <= 31 / 47 <= k_hi < hi      # K(X) inside int X: existence and uniqueness
        assert c["contraction"] == pytest.approx(q, rel=1e-9) and c["contraction"] < 1
        assert c["gamma_star"] == "0.6595744680851063829787234042553191489362"


def test_eta_max_terms_are_the_derived_ones():
    """The prover's k-terms times d/(2 kappa2 gamma*) are rdyn.derivations.model_b.eta_max_derived's
    (corrected: its simplified min; printed: its printed min), at an exact point."""
    import flint
    import sympy as sp

    from rdyn.derivations import model_b as dm
    from rdyn.verification.proofs.model_b import instance as pb

    em = dm.eta_max_derived()
    point = {dm.d: 16, dm.kappa2: sp.Rational(47, 8), dm.gamma_star_sym: sp.Rational(31, 47), dm.S0: sp.Rational(9, 4)}
    old = flint.ctx.prec
    flint.ctx.prec = 200
    try:
        gs, k2 = pb.qball(Fraction(31, 47)), pb.qball(Fraction(47, 8))
        S0 = pb.qball(Fraction(9, 4))
        for form, key in (("corrected", "simplified"), ("printed", "printed")):
            want = [sp.N(t.subs(point), 50) for t in em[key].args]
            got = [pb.eta_of_k(t, gs, k2, 16) for t in pb.k_terms(form, S0, gs, k2, 16)]
            for w in want:
                assert any(abs(float(str(w)) - float(g.mid())) < 1e-14 * float(str(w)) for g in got), (form, w)
    finally:
        flint.ctx.prec = old


def test_kappa3_enclosure_agrees_with_the_quadrature():
    import flint

    from rdyn.verification.proofs.model_b.instance import kappa3_enclosure

    old = flint.ctx.prec
    flint.ctx.prec = 200
    try:
        k3 = kappa3_enclosure((4, 1, 1))
        # rdyn ln --model noln --target unnormalized --data spectrum --d 3 --spectrum 4,1,1 --dps 40
        # (Dirichlet quadrature, an independent route) reports kappa3 = 2.266388580125985076680105507180985901275
        from flint import arb

        assert k3.contains(arb("2.266388580125985076680105507180985901275"))
        assert float(k3.rad()) < 1e-23
        # d = 1 levels equal: ||S a|| = m exactly
        three = kappa3_enclosure((3, 3))
        assert three.contains(3) and float(three.rad()) < 1e-23
    finally:
        flint.ctx.prec = old


def test_normalized_target_on_a_spectrum():
    d = rdyn.prove(paper="B", target="normalized", d=3, spectrum="4,1,1").to_dict()
    assert d["constants"]["kappa3"].startswith("2.2663885801259850766801055071")
    assert all(s["verdict"] == "certified" for s in d["statements"] if s["form"] == "corrected")
    rstar = _by(d, "Theorem 4.6 (2)", "printed", "contraction")
    assert rstar["verdict"] == "certified"
    assert float(rstar["certificate"]["R_max"]) == pytest.approx(0.8868927045031966, rel=1e-12)


def test_contraction_factor_ln_and_looped():
    d = rdyn.prove(paper="B", model="ln", d=3, spectrum=(4, 1, 1)).to_dict()
    (s,) = d["statements"]
    assert s["verdict"] == "certified" and s["label"] == "Theorem 4.6 (1)"
    lo, hi = s["certificate"]["R"]
    assert lo <= 101 / 401 <= lo + 1e-15 and hi - 1e-15 <= 2 / 5 <= hi   # R(100), R(1) exactly
    assert s["certificate"]["power_method_ratio"] == "0.2500000000000000000000000000000000000000"
    d = rdyn.prove(paper="B", model="looped", d=3, spectrum="4,1,1", L=3, gamma="0.5,10").to_dict()
    (s,) = d["statements"]
    assert s["verdict"] == "certified" and s["certificate"]["L"] == 3
    assert float(s["certificate"]["R_max_L"]) == pytest.approx(0.125, rel=1e-30)   # R(0.5) = 1/2


def test_json_schema_and_cli_agree(default_b):
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(rdyn.schema("prove"))
    assert validator.is_valid(default_b)
    broken = json.loads(json.dumps(default_b))
    broken["statements"][1]["counterexample"] = None     # a refuted statement without its counterexample
    assert not validator.is_valid(broken)
    proc = subprocess.run([sys.executable, "-m", "rdyn", "prove", "--paper", "B", "--json"], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    cli = json.loads(proc.stdout)
    for a, b in zip(cli["statements"], default_b["statements"]):
        assert (a["verdict"], a["counterexample"]) == (b["verdict"], b["counterexample"])


@pytest.mark.parametrize("argv,needle", [
    (["--paper", "B", "--D", "9"], "--D applies only to --paper A"),
    (["--paper", "B", "--statement", "Lemma D.19"], "--statement applies only to --paper A"),
    (["--model", "ln"], "--model applies only to --paper B"),
    (["--paper", "B", "--model", "ln"], "needs --data spectrum"),
    (["--paper", "B", "--target", "normalized"], "--target normalized needs --data spectrum"),
    (["--paper", "B", "--d", "4", "--spectrum", "1,1,1,1"], "gamma* = 0"),
    (["--paper", "B", "--s0", "2,1"], "--s0: LO must not exceed HI"),
    (["--paper", "B", "--s0", "0,1"], "--s0: LO must be > 0"),
    (["--paper", "B", "--s0", "1,nan"], "--s0"),
    (["--paper", "B", "--L", "3"], "--L applies only to --paper B --model looped"),
    (["--paper", "B", "--gamma", "1,2"], "--gamma applies only to --paper B --model ln or looped"),
    (["--paper", "B", "--model", "ln", "--d", "3", "--spectrum", "2,2,2"], "one distinct eigenvalue"),
    (["--paper", "B", "--d", "3", "--spectrum", "2,1"], "expected d = 3"),
])
def test_bad_input_is_refused(argv, needle):
    proc = subprocess.run([sys.executable, "-m", "rdyn", "prove", *argv], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], proc.stderr


def test_api_refuses_like_the_cli():
    with pytest.raises(ValueError, match="applies only to --paper A"):
        rdyn.prove(paper="B", K=3)
    with pytest.raises(ValueError, match="--s0"):
        rdyn.prove(paper="B", s0=(3, 1))


@pytest.mark.parametrize("kwargs", [dict(d=4, n=8), dict(d=8, n=8), dict(d=2, n=2), dict(d=5, spectrum="5,4,3,2,1"),
                                    dict(d=16, n=32, s0="0.01,100")])
def test_same_verdicts_at_other_instances(kwargs):
    """Corrected: all certified (B.3 and gamma*); printed: the loss descent and gamma* certified,
    Part 1 and the monotone gamma refuted (near S0 = 4 sqrt(1 + 16 gamma*^2))."""
    d = rdyn.prove(paper="B", **kwargs).to_dict()
    for s in d["statements"]:
        want = "refuted" if s["form"] == "printed" and s["quantity"] in ("descent_lemma", "gamma") else "certified"
        assert s["verdict"] == want, (kwargs, s["label"], s["form"], s["quantity"], s["reason"])
        if want == "refuted":
            gs = float(d["constants"]["gamma_star"])
            crossover = 4 * (1 + 16 * gs * gs) ** 0.5
            assert 0.98 * crossover < float(s["counterexample"]["S0"]) < crossover


def test_box_budget_gives_undecided_never_a_pass():
    """With one box the branch and bound cannot split: what a single (whole-region) box decides
    stays certified (each evaluation is rigorous), the rest is undecided naming the budget."""
    d = rdyn.prove(paper="B", max_boxes=1).to_dict()
    b3 = [s for s in d["statements"] if s["label"].startswith("Theorem B.3")]
    undecided = [s for s in b3 if s["verdict"] == "undecided"]
    assert _by(d, "Theorem B.3 (eta_max)", "corrected", "loss") in undecided
    assert all("--max-boxes" in s["reason"] for s in undecided)
    # the printed form's counterexamples near the crossing S0_c are found without the boxes
    assert all(s["verdict"] in ("certified", "undecided") or s["form"] == "printed" for s in b3)
    proc = subprocess.run([sys.executable, "-m", "rdyn", "prove", "--paper", "B", "--max-boxes", "1"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1      # a corrected statement is not certified


@pytest.mark.parametrize("model,L,gamma_T", [
    # rdyn ln --model ln --data spectrum --d 3 --spectrum 4,1,1 --steps 100 --dps 30 (Dirichlet quadrature)
    ("ln", None, "0.735300075236997596381497605790"),
    # rdyn ln --model looped --L 2 --data spectrum --d 3 --spectrum 4,1,1 --steps 100 --dps 30
    ("looped", 2, "1.20409404859631317606047008582"),
])
def test_certified_training_contains_the_quadrature_run(model, L, gamma_T):
    """100 GD steps on arb balls with the rigorous 1-D integral: the ball of gamma_T (rho_T)
    contains the independent 30-digit run, gamma increases at every step, and R at gamma_T < 1."""
    kwargs = dict(paper="B", model=model, d=3, spectrum="4,1,1", steps=100)
    if L:
        kwargs["L"] = L
    d = rdyn.prove(**kwargs).to_dict()
    (s,) = d["statements"]
    c = s["certificate"]
    assert s["verdict"] == "certified" and c["increasing"] is True and c["steps"] == 100
    from decimal import Decimal

    assert c["gamma_T_radius"] < 1e-26
    # the ball (40-digit midpoint, radius) contains the 30-digit value, to half a unit of its last digit
    half_unit = Decimal(10) ** Decimal(gamma_T).as_tuple().exponent / 2
    assert abs(Decimal(c["gamma_T"]) - Decimal(gamma_T)) <= Decimal(c["gamma_T_radius"]) + half_unit
    g = float(gamma_T)
    assert c["R"][0] <= (1 + g) / (1 + 4 * g) <= c["R"][1]


def test_certified_training_on_three_and_four_levels_and_one_refused():
    """Three distinct eigenvalues: gamma_T by nested rigorous integrals (stick-breaking angles), certified, its
    ball holding rdyn ln's exact 30-digit value (--spectrum 3,2,1 --steps 3 --dps 30). Four (the looped model, the
    Laplace route): rho_T holds rdyn ln's value (--model looped --L 2 --spectrum 4,3,2,1 --steps 2 --dps 30, the
    Gaussian route at tolerance 1e-33). One level is refused before any work."""
    from decimal import Decimal

    d = rdyn.prove(paper="B", model="ln", d=3, spectrum="3,2,1", steps=3).to_dict()
    (s,) = d["statements"]
    c = s["certificate"]
    assert s["verdict"] == "certified" and c["increasing"] is True and "three-level spectrum" in s["statement"]
    assert (c["expectation_route"], c["nested_integrals"]) == ("stick_breaking", 2)
    assert abs(Decimal(c["gamma_T"]) - Decimal("0.0363961847257554436034778639277")) <= \
        Decimal(c["gamma_T_radius"]) + Decimal("1e-30")
    d = rdyn.prove(paper="B", model="looped", L=2, d=4, spectrum="4,3,2,1", steps=2).to_dict()
    (s,) = d["statements"]
    c = s["certificate"]
    assert s["verdict"] == "certified" and "four-level spectrum" in s["statement"]
    assert (c["expectation_route"], c["nested_integrals"]) == ("laplace", 1) and c["gamma_T_radius"] < 1e-30
    assert abs(Decimal(c["gamma_T"]) - Decimal("0.0474215314374713086559670871804")) <= \
        Decimal(c["gamma_T_radius"]) + Decimal("1e-30")
    proc = subprocess.run([sys.executable, "-m", "rdyn", "prove", "--paper", "B", "--model", "ln", "--data",
                           "spectrum", "--d", "3", "--spectrum", "2,2,2", "--steps", "2"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "one distinct eigenvalue" in proc.stderr
    assert proc.stderr.count("\n") == 1      # one line, no traceback


@pytest.mark.slow
def test_certified_training_at_G1s_longest_snapshot():
    """T = 2000 (about 40 s): the ball contains rdyn ln --dps 30's gamma_2000 (the Dirichlet quadrature)."""
    from decimal import Decimal

    d = rdyn.prove(paper="B", model="ln", d=3, spectrum="4,1,1", steps=2000).to_dict()
    c = d["statements"][0]["certificate"]
    assert c["increasing"] is True and c["gamma_T_radius"] < 1e-28
    assert abs(Decimal(c["gamma_T"]) - Decimal("2.91847139005880110642472970022")) <= \
        Decimal(c["gamma_T_radius"]) + Decimal("1e-29")
    assert c["R"][1] < 0.30917681 and c["R"][0] > 0.25     # above the power method's 1/4


# --------------------------------------------------------------------------- --eta-fraction (every eta <= eta_max)
VALIDATION_B = dict(paper="B", data="spectrum", d=4, spectrum="3,1,1,1", s0="0.25,16")   # strength.PROVE_B_INSTANCES


@pytest.fixture(scope="module", params=["unnormalized", "normalized"])
def theta_val(request):
    """The ledger's validation instance (Task 2, d = 4, spectrum 3,1,1,1, each target) at theta = 1 and over
    theta in [0.1, 1]."""
    kw = dict(VALIDATION_B, target=request.param)
    return request.param, rdyn.prove(**kw).to_dict(), rdyn.prove(eta_fraction="0.1,1", **kw).to_dict()


# (target) -> certified min_margin of (loss (1 - f^2)/(k sigma), Part 1, gamma) over S0 in [0.25, 16], theta in [0.1, 1]
THETA_MARGINS = {"unnormalized": (1.326218168268687, 0.3273099085915493, 0.3262181682686876),
                 "normalized": (1.3242550129916824, 0.32425602952027244, 0.32425501299168297)}
# (target) -> (holds_below, lowest counterexample theta) of the printed Part 1 and monotone gamma
THETA_FAILURE = {"unnormalized": (0.9963670910782402, 0.996875), "normalized": (0.9997328743439882, 0.9998797058237818)}


def test_eta_fraction_certifies_the_corrected_and_refutes_the_printed(theta_val):
    target, at_one, ranged = theta_val
    assert ranged["instance"]["eta_fraction"] == [0.1, 1.0] and "eta_fraction" not in at_one["instance"]
    margins = []
    for q in ("loss", "descent_lemma", "gamma"):
        s = _by(ranged, "Theorem B.3 (Part 1)" if q == "descent_lemma" else "Theorem B.3 (eta_max)", "corrected", q)
        assert s["verdict"] == "certified", s["reason"]
        c = s["certificate"]
        assert c["eta_fraction"] == [0.1, 1.0] and c["S0"] == [0.25, 16.0] and c["boxes"] > 0 and c["s0_boxes"] > 1
        margins.append(c["min_margin"])
    print(target, margins)
    assert margins == pytest.approx(THETA_MARGINS[target], rel=1e-9)
    # the printed loss descent holds on the whole range; Part 1 and the monotone gamma are refuted with the
    # counterexample of theta = 1 (the same as without --eta-fraction)
    assert _by(ranged, "Theorem B.3 (eta_max)", "printed", "loss")["verdict"] == "certified"
    for label, q in (("Theorem B.3 (Part 1)", "descent_lemma"), ("Theorem B.3 (eta_max)", "gamma")):
        old, new = _by(at_one, label, "printed", q), _by(ranged, label, "printed", q)
        assert old["verdict"] == new["verdict"] == "refuted"
        c = dict(new["counterexample"])
        tf = c.pop("theta_failure")
        assert c.pop("theta") == 1.0 and c == old["counterexample"]
        lo, hi = tf["counterexample_theta"]
        print(target, tf)
        assert 0.1 < tf["holds_below"] < lo <= hi == 1.0
        assert (tf["holds_below"], lo) == pytest.approx(THETA_FAILURE[target], rel=1e-12)


def _alpha_beta(S0, eta, d, k2, gs, steps):
    """gamma_t of alpha' = alpha - eta beta F, beta' = beta - eta alpha F (B.2.3; F = 2 kappa2 (gamma - gamma*)/d),
    from alpha0 = 0, beta0 = sqrt(S0), with (f_t, k sigma_t) where g' - 1 = f (g - 1), k sigma = 2 eta kappa2 S/d."""
    import mpmath

    alpha, beta = mpmath.mpf(0), mpmath.sqrt(S0)
    out = []
    for _ in range(steps):
        g, S = alpha * beta, alpha**2 + beta**2
        if g == gs:
            break
        F = 2 * k2 * (g - gs) / d
        alpha, beta = alpha - eta * beta * F, beta - eta * alpha * F
        out.append((g, alpha * beta, (alpha * beta - gs) / (g - gs), 2 * eta * k2 * S / d))
    return out


def test_theta_failure_by_an_independent_alpha_beta_iteration(theta_val):
    """At the lowest counterexample (theta, S0) gamma overshoots gamma*; just below holds_below it does not
    (at that S0: a sampled agreement with the certificate, which covers every S0)."""
    import mpmath

    target, _, ranged = theta_val
    tf = _by(ranged, "Theorem B.3 (eta_max)", "printed", "gamma")["counterexample"]["theta_failure"]
    with mpmath.workdps(60):
        d, k2 = 4, mpmath.mpf(3)
        gs = mpmath.mpf(ranged["constants"]["gamma_star"])
        S0 = mpmath.mpf(tf["lowest_S0"])
        eta_max = min(d / (8 * k2 * mpmath.sqrt(1 + 16 * gs**2)), d / (2 * k2 * S0),
                      d / (2 * k2 * mpmath.sqrt(2 * S0 * gs)))      # the printed eta_max
        theta = mpmath.mpf(tf["counterexample_theta"][0])
        over = [g1 > gs for _, g1, _, _ in _alpha_beta(S0, theta * eta_max, d, k2, gs, 60)]
        assert any(over)
        below = mpmath.mpf(tf["holds_below"]) * (1 - mpmath.mpf(10) ** -9)
        assert not any(g1 > gs for _, g1, _, _ in _alpha_beta(S0, below * eta_max, d, k2, gs, 400))


def test_theta_margins_bound_real_trajectories(theta_val):
    """The corrected certificate's margins over theta in [0.1, 1] bound each step's normalised slack along
    trajectories (mpmath, 50 digits) at several (S0, theta): loss (1 - f^2)/(k sigma), Part 1
    (1 - k sigma - f^2)/(k sigma), gamma f."""
    import mpmath

    target, _, ranged = theta_val
    m = {q: _by(ranged, "Theorem B.3 (Part 1)" if q == "descent_lemma" else "Theorem B.3 (eta_max)", "corrected",
                q)["certificate"]["min_margin"] for q in ("loss", "descent_lemma", "gamma")}
    with mpmath.workdps(50):
        d, k2 = 4, mpmath.mpf(3)
        gs = mpmath.mpf(ranged["constants"]["gamma_star"])
        for S0 in ("0.25", "1", "4.07", "8.9", "16"):
            S0 = mpmath.mpf(S0)
            eta_max = min(d / (8 * k2 * mpmath.sqrt(S0**2 + 16 * gs**2)), d / (2 * k2 * S0),
                          d / (2 * k2 * mpmath.sqrt(2 * S0 * gs)))
            for theta in ("0.1", "0.37", "1"):
                for g, _, f, ks in _alpha_beta(S0, mpmath.mpf(theta) * eta_max, d, k2, gs, 150):
                    if abs(g - gs) < mpmath.mpf(10) ** -40:
                        break
                    assert (1 - f * f) / ks >= m["loss"]
                    assert (1 - ks - f * f) / ks >= m["descent_lemma"] - 1e-30
                    assert f >= m["gamma"]


def test_eta_fraction_json_schema_and_cli(theta_val):
    jsonschema = pytest.importorskip("jsonschema")
    target, _, ranged = theta_val
    validator = jsonschema.Draft202012Validator(rdyn.schema("prove"))
    assert validator.is_valid(ranged)
    broken = json.loads(json.dumps(ranged))
    s = [s for s in broken["statements"] if s["verdict"] == "refuted"][0]
    del s["counterexample"]["theta_failure"]["holds_below"]
    assert not validator.is_valid(broken)
    broken = json.loads(json.dumps(ranged))
    broken["statements"][-2]["certificate"]["eta_fraction"] = [0.0, 1.0]     # theta must be > 0
    assert not validator.is_valid(broken)
    if target == "unnormalized":
        proc = subprocess.run([sys.executable, "-m", "rdyn", "prove", "--paper", "B", "--data", "spectrum", "--d", "4",
                               "--spectrum", "3,1,1,1", "--eta-fraction", "0.1,1"], capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert "eta_fraction = [0.1, 1.0]" in proc.stdout and "refuted at theta = 0.996875" in proc.stdout


def test_eta_fraction_one_is_the_default():
    """--eta-fraction 1,1 is eta = eta_max itself: the same statements and certificates as without it."""
    a = rdyn.prove(paper="B", s0="0.25,11.2").to_dict()
    b = rdyn.prove(paper="B", s0="0.25,11.2", eta_fraction="1,1").to_dict()

    def strip(d):
        return [{k: v for k, v in s.items() if k != "certificate"} for s in d["statements"]]

    assert strip(a) == strip(b) and a["instance"] == b["instance"]
    assert [s["certificate"]["min_margin"] for s in a["statements"]] == \
        [s["certificate"]["min_margin"] for s in b["statements"]]


def test_eta_fraction_small_theta():
    """theta down to 1e-100: the normalised slacks stay away from 0 (loss (1 - f^2)/(k sigma) -> 2)."""
    d = rdyn.prove(paper="B", eta_fraction="1e-100,0.5").to_dict()
    for s in d["statements"]:
        if s["label"].startswith("Theorem B.3"):
            assert s["verdict"] == "certified", s["reason"]
            assert s["certificate"]["eta_fraction"] == [1e-100, 0.5]
            if s["form"] == "corrected":
                assert s["certificate"]["min_margin"] > (1 if s["quantity"] == "loss" else 0.2)


@pytest.mark.parametrize("argv,needle", [
    (["--paper", "B", "--eta-fraction", "0,1"], "--eta-fraction: LO must be > 0"),
    (["--paper", "B", "--eta-fraction", "0.5,0.2"], "--eta-fraction: LO must not exceed HI"),
    (["--paper", "B", "--eta-fraction", "0.5,1.5"], "--eta-fraction: HI must be at most 1"),
    (["--paper", "B", "--eta-fraction", "1e-101,1"], "--eta-fraction: LO must be at least 1e-100"),
    (["--paper", "B", "--eta-fraction", "a,b"], "--eta-fraction must be two numbers"),
    (["--paper", "B", "--eta-fraction", "0.5"], "--eta-fraction must be two numbers"),
    (["--paper", "B", "--eta-fraction", "0.5,inf"], "--eta-fraction: LO and HI must be finite"),
    (["--eta-fraction", "0.5,1"], "--eta-fraction applies only to --paper B --model noln"),
    (["--paper", "B", "--model", "ln", "--data", "spectrum", "--d", "3", "--spectrum", "4,1,1", "--eta-fraction",
      "0.5,1"], "--eta-fraction applies only to --paper B --model noln"),
])
def test_eta_fraction_bad_input_is_refused(argv, needle):
    proc = subprocess.run([sys.executable, "-m", "rdyn", "prove", *argv], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], proc.stderr


def test_eta_fraction_below_one():
    """HI < 1: below the printed form's failure band everything is certified; reaching into it, the
    counterexample is one at theta <= HI, and an independent mpmath iteration reproduces its overshoot."""
    import mpmath

    d = rdyn.prove(eta_fraction="0.1,0.99", **VALIDATION_B).to_dict()
    assert all(s["verdict"] == "certified" for s in d["statements"]), [s["reason"] for s in d["statements"]]
    d = rdyn.prove(eta_fraction="0.1,0.999", **VALIDATION_B).to_dict()
    s = _by(d, "Theorem B.3 (eta_max)", "printed", "gamma")
    c = s["counterexample"]
    assert s["verdict"] == "refuted" and 0.99637 < c["theta"] <= 0.999
    assert c["theta_failure"]["counterexample_theta"][1] <= 0.999
    with mpmath.workdps(60):
        dd, k2, gs, S0 = 4, mpmath.mpf(3), mpmath.mpf(1) / 2, mpmath.mpf(c["S0"])
        eta = mpmath.mpf(c["theta"]) * min(dd / (8 * k2 * mpmath.sqrt(1 + 16 * gs**2)), dd / (2 * k2 * S0),
                                          dd / (2 * k2 * mpmath.sqrt(2 * S0 * gs)))
        assert mpmath.almosteq(eta, mpmath.mpf(c["eta"]), rel_eps=mpmath.mpf(10) ** -38)
        steps = _alpha_beta(S0, eta, dd, k2, gs, c["step"] + 1)
        assert steps[c["step"]][1] > gs and all(g1 <= gs for _, g1, _, _ in steps[:c["step"]])
        assert mpmath.almosteq(steps[c["step"]][1] / gs, mpmath.mpf(c["ratio"]), rel_eps=mpmath.mpf(10) ** -35)
