"""``rdyn prove`` and the proof engine (rdyn.verification.proofs; docs/proofs.md).

* the reduced forms against the independent late-phase derivation (g2, q_min);
* the enclosure of B(z) = (z - atan z)/z^3 against mpmath at 50 digits;
* verdicts, certificate margins and counterexample ratios pinned (D = 9, K = 3 in the default
  suite; the Done-when instance D = 12, K = 3, eta = 0.01 marked slow): a change of the map, the
  constants or the method changes these digits and fails the test;
* the region proof fails when it should (a band that excludes the slow manifold; a corrected
  constant 1% too large);
* bad input: one line on stderr, exit 2, the hypothesis named.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest


def _prove(*argv):
    from rdyn.cli import main

    return main(["prove", *argv, "--json"])


@pytest.fixture(scope="module")
def d9():
    import rdyn

    return rdyn.prove(D=9, K=3).to_dict()


@pytest.fixture(scope="module")
def d9_arb():
    """The same proof by the 200-bit arb route from step 0 (counterexamples to 40 digits)."""
    import rdyn

    return rdyn.prove(D=9, K=3, route="arb").to_dict()


def _by(report, label, form, side, superseded=False):
    rows = report["superseded"] if superseded else report["statements"]
    return next(r for r in rows if (r["label"], r["form"], r["side"]) == (label, form, side))


def _key(report, key):
    return next(r for r in report["statements"] + report["superseded"] if r["key"] == key)


@pytest.mark.parametrize("activation,scale", [("identity", "D"), ("relu", "D"), ("relu", "sqrtD")])
def test_reduction_matches_late_phase_constants(activation, scale):
    """eta g2 read off the reduced map at e = 0 equals the late-phase g2 of
    rdyn.derivations.model_a.late_phase (a separate sympy limit on the slow manifold); q_min of the engine
    (the reduced map at e = K/(D-K), w = 0, in arb) equals increment_ratio_at_threshold."""
    import flint
    import sympy as sp
    from flint import arb

    from rdyn.derivations.model_a import late_phase as lp
    from rdyn.derivations.model_a import collapsed as ma
    from rdyn.verification.proofs import symbolic as sy
    from rdyn.verification.proofs.engine import Instance, constants
    from rdyn.verification.proofs.kernels import kernels

    r = sy.reduced(activation, scale)
    g2 = lp.late_phase(activation, scale).g2
    for D, K in ((9, 3), (20, 4)):
        mine = r.eta_g2.subs({sy.sK: sp.sqrt(K), sy.sN: sp.sqrt(D - K), sy.eta: 1, sy.M: 1})
        theirs = ma.to_internal(g2).subs({ma.N: D - K}).subs({ma.D: D, ma.K: K, ma.vstar_norm2: 1})
        assert sp.simplify(mine - theirs) == 0
        old = flint.ctx.prec
        flint.ctx.prec = 200
        try:
            k = kernels(activation, scale)
            c = k.prepare(arb(K).sqrt(), arb(D - K).sqrt(), arb(1) / 100, arb(1), arb(0), arb(1))
            q = constants(Instance(D, K, activation, 0.0, 1.0, 0.01, scale), k, c)["q_min"]
            ref = sp.N(ma.to_internal(lp.increment_ratio_at_threshold(activation, scale)).subs(
                {ma.N: D - K}).subs({ma.D: D, ma.K: K, ma.kappa: 0}), 50)
            assert abs(float(q.mid()) - float(ref)) < 1e-14 * float(ref)
            assert q.rad() < 1e-40
        finally:
            flint.ctx.prec = old


def test_b_enclosure_contains_the_function():
    import flint
    import mpmath
    from flint import arb

    from rdyn.verification.proofs.balls import b_enclosure

    old = flint.ctx.prec
    flint.ctx.prec = 200
    try:
        with mpmath.workdps(60):
            f = lambda z: (z - mpmath.atan(z)) / z**3 if z else mpmath.mpf(1) / 3  # noqa: E731
            for lo, hi in ((0.0, 1e-6), (1e-5, 2e-4), (0.01, 0.02), (0.3, 0.7), (0.9, 1.0)):
                b = b_enclosure(lo, hi)
                for z in (lo, hi, (lo + hi) / 2):
                    assert b.contains(arb(mpmath.nstr(f(mpmath.mpf(z)), 55))), (lo, hi, z)
                # tight: the width is within a factor of the true range (plus rounding)
                true_width = float(f(mpmath.mpf(lo)) - f(mpmath.mpf(hi)))
                assert float(2 * b.rad()) <= 4 * true_width + 1e-15
    finally:
        flint.ctx.prec = old


def test_d9_verdicts_margins_and_counterexamples(d9_arb):
    """D = 9, K = 3, ReLU, eta = the papers' condition (1/45 as the largest double whose decimal form is at most
    1/45: 0.02222222222222222), the arb route: every corrected statement certified, the printed D.18 sides and
    the printed D.19 upper side refuted; digits pinned."""
    r = d9_arb
    assert r["instance"]["eta_exact"] == "1111111111111111/50000000000000000"   # below 1/45 by 2e-18
    assert r["T_star"] == 156931
    assert r["instance"]["paper_conditions"] == {"lemma_D5": True, "lemma_D9": True}
    from rdyn.verification.claims import strength
    assert strength.unbacked_entries(strength.PROVE_INSTANCES[0], r) == []
    verdicts = {(s["label"], s["form"], s["side"]): s["verdict"] for s in r["statements"]}
    assert verdicts == {
        ("Lemma D.5", "printed", "upper"): "certified",
        ("Lemma D.13 (attention)", "printed", None): "certified",
        ("Lemma D.15", "printed", "lower"): "certified",
        ("Lemma D.17 (C1 band)", "printed", "lower"): "certified",
        ("Lemma D.17 (C1 band)", "printed", "upper"): "certified",
        ("Lemma D.18", "printed", "lower"): "refuted", ("Lemma D.18", "printed", "upper"): "refuted",
        ("Lemma D.18", "corrected", "lower"): "certified", ("Lemma D.18", "corrected", "upper"): "certified",
        ("Lemma D.19", "printed", "lower"): "certified", ("Lemma D.19", "printed", "upper"): "refuted",
        ("Lemma D.19", "corrected", "lower"): "certified", ("Lemma D.19", "corrected", "upper"): "certified",
        ("Lemma D.19", "corrected", None): "certified",
        ("Lemma D.4", "printed", "lower"): "certified", ("Lemma D.4", "printed", "upper"): "certified",
        ("Lemma D.8", "printed", None): "refuted", ("Lemma D.8", "corrected", None): "certified",
        ("Lemma D.9", "printed", "lower"): "certified", ("Lemma D.9", "printed", "upper"): "certified",
        ("Lemma D.9 (increment)", "printed", "upper"): "certified",
        ("Lemma D.10", "printed", None): "certified", ("Lemma D.10", "corrected", None): "certified",
        ("Lemma D.11", "printed", None): "certified", ("Lemma D.12", "printed", None): "certified",
        ("Lemma D.13 (C1 step)", "printed", "lower"): "certified",
        ("Lemma D.15 (proof)", "printed", None): "refuted", ("Lemma D.15 (proof)", "corrected", None): "proved",
        ("Lemma D.16", "printed", "upper"): "certified"}
    assert r["t1"] == 269
    # the late-phase rates' strength (verify/claims/strength.py, LATE_RATES_BY_PROVE): on R,
    # 0 <= (eta g2 - X)/(e eta g2) <= sup_on_region, so X = Delta x/e^2 -> eta g2 as e -> 0
    d19 = _by(r, "Lemma D.19", "corrected", "upper")["certificate"]
    assert d19["region_condition"] == "dx_upper"
    assert d19["sup_on_region"] == pytest.approx(3.224081808701158, rel=1e-9)
    assert d19["margin_on_region"] <= d19["sup_on_region"]
    d5 = _by(r, "Lemma D.5", "printed", "upper")["certificate"]
    assert d5["steps_checked"] == [2, 158500]          # step 1 has p = 1/D exactly: vacuous
    assert d5["min_margin"] == pytest.approx(0.5319297749690772, rel=1e-9)
    assert d5["margin_on_region"] == pytest.approx(0.36108012756568053, rel=1e-9)
    att = _by(r, "Lemma D.13 (attention)", "printed", None)["certificate"]
    assert att["T0"] == 269 and att["region"] is None and att["steps_checked"] == [0, 269]
    assert att["min_margin"] == pytest.approx(0.3657113259711048, rel=1e-9)
    d15 = _by(r, "Lemma D.15", "printed", "lower")["certificate"]
    assert d15["steps_checked"] == [269, 158500]
    assert d15["min_margin"] == pytest.approx(0.0003344041268197696, rel=1e-9)   # the 0.95 side at t1
    assert d15["margin_on_region"] == pytest.approx(0.049609506318058216, rel=1e-9)
    band = _by(r, "Lemma D.17 (C1 band)", "printed", "lower")["certificate"]
    assert band["steps_checked"] == [269, 158500]
    assert band["min_margin"] == pytest.approx(0.0003344041268197696, rel=1e-9)   # at t1
    assert band["margin_on_region"] == pytest.approx(0.04951870551208249, rel=1e-9)
    cx = _by(r, "Lemma D.19", "printed", "upper")["counterexample"]
    assert cx["step"] == 156931 and cx["ratio"].startswith("5.33407324930742459647748773810890675")
    cx = _by(r, "Lemma D.18", "printed", "lower")["counterexample"]
    assert cx["step"] == 280661 and cx["ratio"].startswith("1.00000352576617089605481994399121966")
    cx = _by(r, "Lemma D.18", "printed", "upper")["counterexample"]
    assert cx["step"] == 156932 and cx["ratio"].startswith("0.00111863168039541448572544418569622")
    sup = _key(r, "D19.corrected.lower.superseded")
    assert sup["verdict"] == "refuted" and sup["counterexample"]["step"] == 156931
    assert sup["counterexample"]["ratio"].startswith("0.99998982639171237520855551782751556")
    # the superseded corrections (R+- with a step of delay, the state-dependent lag factor): still certified
    for key, margin, region_margin in (
            ("D18.corrected.lower", 2.51815240768156e-06, 0.0013296735123731194),   # R- from T - T* - 1
            ("D18.corrected.upper", 8.912853920234985e-06, 0.06781369261443614),
            ("D19.corrected.lower", 5.302835828852719e-05, 0.0012275588815100489),   # factor 1 - |w| e^2
            ("D19.corrected.upper", 0.6287012492000064, 0.06784238107502459)):
        cert = _key(r, key)["certificate"]
        assert cert["T0"] == 158500 and cert["boxes"] == 2265   # every condition of the region proof, new ones included
        assert cert["min_margin"] == pytest.approx(margin, rel=1e-9)
        assert cert["margin_on_region"] == pytest.approx(region_margin, rel=1e-9)
        assert cert["region"]["e"][0] == 0.0 and 0 < cert["region"]["e"][1] < 0.5
    # the derived forms (lag lemma, D.19 with q_lag, D.18 summed from T*): steps T* .. T0, then the region
    for key, margin, region_margin in (
            ("D18.derived.lower", 0.0026052924905581296, 0.0017194568063132463),
            ("D18.derived.upper", 0.6310492276556317, 6.9873972135256764e-06),
            ("D19.derived.lag", 0.9403664321098754, 5.676472250735326e-08),
            ("D19.derived.lower", 0.0010507242566951572, 0.0017194568063132463)):
        cert = _key(r, key)["certificate"]
        assert cert["steps_checked"] == [156931, 158500] and cert["boxes"] == 2719, key
        assert cert["min_margin"] == pytest.approx(margin, rel=1e-9), key
        assert cert["margin_on_region"] == pytest.approx(region_margin, rel=1e-9), key
    k = _key(r, "D19.derived.lag")["certificate"]["constants"]
    assert k["c_lag"] == pytest.approx(0.004239137295547063, rel=1e-12)
    assert k["c_lag_steps"] == pytest.approx(0.0002527948817095655, rel=1e-9)
    assert k["q_lag"][0] == pytest.approx(0.3674051318215091, rel=1e-12) and k["q_lag"][0] < k["q_min"][0]


def _digits_agree(short: str, long: str) -> bool:
    """``short`` (certified digits) is ``long``'s value to within one unit of short's last digit."""
    from decimal import Decimal

    a, b = Decimal(short), Decimal(long)
    unit = Decimal(1).scaleb(a.as_tuple().exponent)
    return abs(a - b) <= unit


def test_float_route_reaches_the_arb_routes_verdicts(d9, d9_arb):
    """The float route (default) and the 200-bit arb route from step 0 decide every statement alike:
    the same verdicts, T*, t1, steps checked and counterexample steps; the float route's counterexample
    strings hold only certified digits (at least 8 significant), each within a unit of its last digit of
    the arb route's 40. A certified margin is a lower bound found on wider boxes (the float route's are
    about 1e-13 wide): never above the arb route's, and at most 1e-3 below it (the one-step statements'
    p(t+1) - p(t) at T0, and the lag constant's |C1/C1* - 1|/e^3, magnify that width most)."""
    assert (d9["T_star"], d9["t1"]) == (d9_arb["T_star"], d9_arb["t1"])
    for a, b in zip(d9["statements"] + d9["superseded"], d9_arb["statements"] + d9_arb["superseded"]):
        assert (a["key"], a["verdict"]) == (b["key"], b["verdict"])
        if b["counterexample"] is not None:
            ca, cb = a["counterexample"], b["counterexample"]
            assert ca["step"] == cb["step"], a["key"]
            for field in ("lhs", "rhs", "ratio"):
                digits = ca[field].lstrip("-0.").split("e")[0].replace(".", "")
                assert len(digits) >= 8 and _digits_agree(ca[field], cb[field]), (a["key"], field, ca[field])
        ca, cb = a["certificate"] or {}, b["certificate"] or {}
        assert ca.get("steps_checked") == cb.get("steps_checked"), a["key"]
        if cb.get("min_margin") is not None:
            assert cb["min_margin"] * (1 - 1e-3) <= ca["min_margin"] <= cb["min_margin"] * (1 + 1e-9), a["key"]
    assert d9["statements"][0]["counterexample"] is None


@pytest.mark.parametrize("D,K,activation,scale", [(7, 2, "identity", "D"), (7, 2, "relu", "sqrtD")])
def test_listed_instances_are_certified(D, K, activation, scale):
    """The ledger's ``certified`` strength lists these instances (rdyn.verification.claims.strength, with
    D = 9, K = 3 above and the slow D = 12 case below): every corrected statement is certified
    there and the printed D.19 upper side refuted."""
    import rdyn
    from rdyn.verification.claims import strength

    assert {"D": D, "K": K, "activation": activation, "vstar_norm2": 1.0, "eta": None,
            "logit_scale": scale} in strength.PROVE_INSTANCES
    r = rdyn.prove(D=D, K=K, activation=activation, logit_scale=scale).to_dict()
    for s in r["statements"]:
        if s["form"] == "corrected":
            assert s["verdict"] in ("certified", "proved"), (s["label"], s["side"], s["reason"], s["counterexample"])
    assert _by(r, "Lemma D.19", "printed", "upper")["verdict"] == "refuted"
    inst = {"D": D, "K": K, "activation": activation, "vstar_norm2": 1.0, "eta": None, "logit_scale": scale}
    assert strength.unbacked_entries(inst, r) == []   # the entries' scope: D.9's upper side
    # is refuted with logits/sqrt(D), and the scope of Lemma D.9 leaves that instance out
    assert (_by(r, "Lemma D.9", "printed", "upper")["verdict"] == "refuted") == (scale == "sqrtD")
    sup = _by(r, "Lemma D.19", "corrected", "upper")["certificate"]["sup_on_region"]
    assert sup is not None and 0 < sup < 1e6       # |X - eta g2| <= sup eta g2 e^m on R (the late rates' strength)
    assert len(strength.PROVE_INSTANCES) == 14   # these two, D = 9 (default suite), D = 12 (slow), and the
    # ten validation instances of tests/verify/proofs/test_sweep.py (slow)


@pytest.mark.slow
def test_done_when_instance():
    """The issue's instance: ReLU, D = 12, K = 3, ||V*||^2 = 1, eta = 0.01 (T* = 1165870). The
    corrected D.19 lower side as first stated fails at T* (ratio 0.99999897); restated with the lag
    factor 1 - e^{(C2+C3)/D} |C1/C1* - 1| it is certified; the printed D.18 lower side fails at step
    1689509. Pinned: the arb route's digits (docs/proofs.md's worked example); the float route (the
    default) reaches the same verdicts at the same steps."""
    import rdyn

    r = rdyn.prove(D=12, K=3, activation="relu", vstar_norm2=1, eta=0.01, route="arb").to_dict()
    fast = rdyn.prove(D=12, K=3, activation="relu", vstar_norm2=1, eta=0.01).to_dict()
    assert [(x["key"], x["verdict"], (x["counterexample"] or {}).get("step")) for x in fast["statements"]] == [
        (x["key"], x["verdict"], (x["counterexample"] or {}).get("step")) for x in r["statements"]]
    assert r["T_star"] == 1165870
    from rdyn.verification.claims import strength
    assert strength.unbacked_entries(strength.PROVE_INSTANCES[3], r) == []
    for key in ("D18.derived.lower", "D18.derived.upper", "D19.derived.lag", "D19.derived.lower",
                "D19.corrected.upper", "D18.corrected.lower", "D18.corrected.upper", "D19.corrected.lower"):
        assert _key(r, key)["verdict"] == "certified", key
    assert _key(r, "D19.corrected.lower")["certificate"]["min_margin"] == pytest.approx(
        1.557555135346952e-05, rel=1e-9)   # superseded: factor 1 - e^{x/D} |C1/C1* - 1|
    assert _key(r, "D19.derived.lower")["certificate"]["min_margin"] == pytest.approx(
        0.00038584624827113707, rel=1e-9)   # q_lag = q_min (1 - c_lag (K/(D-K))^2)
    assert _key(r, "D19.derived.lag")["certificate"]["constants"]["c_lag"] == pytest.approx(
        0.0034805217912517775, rel=1e-12)
    assert _by(r, "Lemma D.19", "corrected", "upper")["certificate"]["min_margin"] == pytest.approx(
        0.5181670493897649, rel=1e-9)
    cx = _by(r, "Lemma D.18", "printed", "lower")["counterexample"]
    assert cx["step"] == 1689509 and cx["ratio"].startswith("1.00000074640688931585520153205108004")
    cx = _by(r, "Lemma D.19", "printed", "upper")["counterexample"]
    assert cx["step"] == 1165870 and cx["ratio"].startswith("16.3901332461050383670067134719133938")
    cx = _by(r, "Lemma D.8", "printed", None)["counterexample"]
    assert cx["step"] == 344 and cx["ratio"].startswith("0.99930319899675231103771675273396525462")
    cx = _by(r, "Lemma D.15 (proof)", "printed", None)["counterexample"]   # 3 (D-K)/D^2 / 0.025 = 7.5 at t1
    assert cx["step"] == 599 and cx["ratio"].startswith("7.50000000000000000000000000000000000000")
    assert _by(r, "Lemma D.15 (proof)", "corrected", None)["verdict"] == "proved"
    for key, margin in ((("Lemma D.4", "printed", "lower"), 0.004105105269371144),
                        (("Lemma D.8", "corrected", None), 0.00020833333333333335),
                        (("Lemma D.9", "printed", "upper"), 0.006944259723853147),
                        (("Lemma D.10", "corrected", None), 1.319799790821484e-09),
                        (("Lemma D.11", "printed", None), 3.731065233854905e-09),
                        (("Lemma D.12", "printed", None), 1.7058897854665603e-06),
                        (("Lemma D.16", "printed", "upper"), 0.683894088658118)):
        cert = _by(r, *key)["certificate"]
        assert cert["min_margin"] == pytest.approx(margin, rel=1e-9), key
    assert _by(r, "Lemma D.13 (C1 step)", "printed", "lower")["certificate"]["min_margin"] == pytest.approx(
        1.0000588273152367, rel=1e-9)
    sup = _key(r, "D19.corrected.lower.superseded")["counterexample"]
    assert sup["step"] == 1165870 and sup["ratio"].startswith("0.99999897238854602982599448893804331")


def test_region_proof_fails_when_it_should():
    """A band that excludes the slow-manifold lag is not invariant; a q_min 1% too large is not
    shown on a region that reaches e = K/(D-K), where q(e) = q_min."""
    import flint
    from flint import arb

    from rdyn.verification.proofs import region as rg
    from rdyn.verification.proofs.engine import Instance, constants
    from rdyn.verification.proofs.kernels import kernels

    old = flint.ctx.prec
    flint.ctx.prec = 200
    try:
        inst = Instance(9, 3, "relu", 0.0, 1.0, 0.02, "D")
        k = kernels("relu", "D")
        c = k.prepare(arb(3).sqrt(), arb(6).sqrt(), arb(2) / 100, arb(1), arb(0), arb(1))
        consts = constants(inst, k, c)
        bm = rg.BoxMap(k, c, consts, consts["atan"])
        good = rg.Region(0.49, -0.002, 0.005)
        ok = rg.prove_region(bm, good, ("dx_upper", "dx_lower"), max_boxes=20000)
        assert ok.invariant and ok.decided == {"dx_upper": True, "dx_lower": True}
        bad = rg.prove_region(bm, rg.Region(0.49, 0.01, 0.02), (), max_boxes=2000)
        assert not bad.invariant and bad.reason
        big = dict(consts, q_min=consts["q_min"] * arb("1.01"))
        at_threshold = rg.Region(0.5, -0.002, 0.005)   # e_top = K/(D-K): q(e_top) = q_min
        worse = rg.prove_region(rg.BoxMap(k, c, big, big["atan"]), at_threshold, ("dx_lower",), max_boxes=3000)
        assert worse.invariant is False or worse.decided["dx_lower"] is False
    finally:
        flint.ctx.prec = old


@pytest.mark.parametrize("argv,needle", [
    (["--D", "12", "--K", "12"], "1 <= K < D"),
    (["--D", "6", "--K", "3"], "D must exceed 2K"),
    (["--eta", "2"], "eta_limit"),
    (["--statement", "Lemma D.99"], "--statement"),
    (["--kappa", "0.2"], "--kappa applies to --activation leaky only"),
    (["--dps", "30"], "--dps does not apply"),
    (["--max-boxes", "0"], "--max-boxes"),
])
def test_bad_input_is_refused(argv, needle):
    proc = subprocess.run([sys.executable, "-m", "rdyn", "prove", *argv], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], proc.stderr


def test_api_refuses_like_the_cli():
    import rdyn

    with pytest.raises(ValueError, match="1 <= K < D"):
        rdyn.prove(D=5, K=5)
    with pytest.raises(ValueError, match="unknown option"):
        rdyn.prove(D=9, K=3, samples=10)


def test_schema_rejects_an_undecided_without_reason(d9):
    jsonschema = pytest.importorskip("jsonschema")
    import rdyn

    validator = jsonschema.Draft202012Validator(rdyn.schema("prove"))
    assert validator.is_valid(d9)
    broken = json.loads(json.dumps(d9))
    broken["statements"][0].update(verdict="undecided", counterexample=None, certificate=None, reason=None)
    assert not validator.is_valid(broken)
    broken = json.loads(json.dumps(d9))
    broken["statements"][2]["verdict"] = "pass"
    assert not validator.is_valid(broken)


@pytest.mark.parametrize("stop_at", [100000, 200000])
def test_interrupted_proof_resumes_from_its_checkpoint(tmp_path, d9, stop_at):
    """Ctrl-C (a KeyboardInterrupt at step 100000, before T*; or at 200000, after T0 = 158500 and
    the region proof) saves the proof's state; the
    resumed proof reaches the same verdicts, margins and counterexamples as the uninterrupted one
    (D = 9, K = 3). A checkpoint written for another instance is refused, naming the option."""
    from rdyn.reduced_dynamics.runs.checkpoint import CheckpointError, Interrupted
    from rdyn.verification.proofs.engine import Instance, prove

    from rdyn.verification.proofs.sweep import paper_eta

    path = str(tmp_path / "proof.npz")
    inst = Instance(9, 3, "relu", 0.0, 1.0, paper_eta(9, 3, 1.0), "D")   # rdyn prove's default, as in d9

    def stop(t):
        if t >= stop_at:
            raise KeyboardInterrupt

    with pytest.raises(Interrupted) as info:
        prove(inst, checkpoint=path, progress=stop)
    assert info.value.step == stop_at
    resumed = prove(inst, checkpoint=path, resume=path).to_dict()
    for a, b in zip(resumed["statements"], d9["statements"]):
        assert a["verdict"] == b["verdict"], a["label"]
        ca, cb = a["certificate"] or {}, b["certificate"] or {}
        if cb.get("min_margin") is None:   # refuted or undecided: no certificate either way
            assert ca.get("min_margin") is None, a["label"]
        else:
            assert ca.get("min_margin") == pytest.approx(cb["min_margin"], rel=1e-12)
        assert (a["counterexample"] or {}).get("ratio") == (b["counterexample"] or {}).get("ratio")
    with pytest.raises(CheckpointError, match="instance"):
        prove(Instance(9, 3, "relu", 0.0, 1.0, 0.02, "D"), resume=path)


def test_d5_ratio_matches_the_ledger_expectations():
    """A/(A+B) of the proofs (p = 1/(K + N e), acos rewritten as atan) equals the ledger's mpmath
    A/F3 (rdyn.verification.checks.claims_a) at p in (1/D, 1/K), for ReLU and Leaky ReLU."""
    import flint
    import mpmath
    from flint import arb

    from rdyn.verification.checks.claims_a import _attention_functions
    from rdyn.verification.proofs.kernels import kernels

    old = flint.ctx.prec
    flint.ctx.prec = 200
    try:
        for activation, kappa in (("relu", 0.0), ("leaky", 0.3)):
            fA, fF3, _ = _attention_functions(activation)
            k = kernels(activation, "D")
            D, K = 12, 3
            c = k.prepare(arb(K).sqrt(), arb(D - K).sqrt(), arb(1) / 100, arb(1), arb(repr(kappa)), arb(1))
            for e in ("0.001", "0.2", "0.7", "0.999"):
                with mpmath.workdps(40):
                    p = 1 / (K + (D - K) * mpmath.mpf(e))
                    ref = fA(p, K, D - K, kappa) / fF3(p, K, D - K, kappa)
                mine = k.a_over_f3(arb(e), c)
                assert abs(float(mine.mid()) - float(ref)) < 1e-13, (activation, e)
    finally:
        flint.ctx.prec = old


@pytest.mark.parametrize("activation", ["identity", "relu"])
def test_corrected_d8_coefficient_is_the_maps_increment(activation):
    """Lemma D.8 corrected: eta (C1 M/D)((F4/p - F3)/K - C1 (F2_1 - p F1)) (Appendix F expectations, sympy
    at 40 digits) equals the derived map's Delta C2 = (D-K)/D Delta(C2+C3) (the arb kernel), so the
    corrected monotonicity statement Delta(C2+C3) >= 0 is the corrected coefficient's sign."""
    import flint
    import sympy as sp
    from flint import arb

    from rdyn.verification.proofs import symbolic as sy
    from rdyn.verification.proofs.kernels import kernels

    D, K, N = 12, 3, 9
    f = sy.f_functions(activation)
    values = {sy.sK: sp.sqrt(K), sy.sN: sp.sqrt(N), sy.kappa: 0}
    old = flint.ctx.prec
    flint.ctx.prec = 200
    try:
        k = kernels(activation, "D")
        c = k.prepare(arb(K).sqrt(), arb(N).sqrt(), arb(1) / 100, arb(1), arb(0), arb(1))
        for C1, x in (("0.7", "3"), ("1.2", "15")):
            _, _, dx, e, _, _ = k.advance(arb(C1), arb(x), c)
            ev = sp.exp(-sp.Rational(x) / D)
            at = {**values, sy.e: ev}
            F = {name: f[name].subs(at) for name in ("F1", "F2_1", "F3", "F4")}
            p = 1 / (K + N * ev)
            C = sp.Rational(C1)
            coefficient = C / D * ((F["F4"] / p - F["F3"]) / K - C * (F["F2_1"] - p * F["F1"]))
            mine = sp.N(coefficient / 100, 40)
            theirs = dx * N / D
            assert theirs.rad() < 1e-45
            assert abs(sp.N(mine - sp.Float(theirs.mid().str(45, radius=False), 45), 40)) < 1e-35 * abs(mine)
    finally:
        flint.ctx.prec = old
