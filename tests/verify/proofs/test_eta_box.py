"""rdyn prove --eta LO:HI: the lag lemma and the corrected Lemmas D.18/D.19 for every step size of a box
(rdyn.verification.proofs.eta_box; docs/proofs.md, "Every step size at once")."""
from __future__ import annotations

import json
import math

import pytest

from rdyn.verification.proofs import eta_box as eb

PAPER_ETA = 0.010817307692307694   # min(K/D, K^3 (D-K)/(M D^3 (D+1))) = 9/832 at D = 12, K = 3, M = 1, rounded up

CFG = eb.EtaBox(D=12, K=3, activation="relu", kappa=0.0, vstar_norm2=1.0, logit_scale="D", lo=0.0, hi=PAPER_ETA)


def test_the_range_covers_the_papers_condition():
    """The grid's upper end is the smallest float at or above the exact condition (the float nearest 9/832 lies
    below it, so a range up to that float would leave 9/832 itself unproved); one instance's default eta is the
    largest float whose decimal form lies within it."""
    from fractions import Fraction

    from rdyn.verification.claims.trajectories import paper_eta, paper_eta_cover, paper_eta_within, papers_step_size

    assert papers_step_size(12, 3) == Fraction(9, 832)
    assert Fraction(paper_eta(12, 3)) < Fraction(9, 832) <= Fraction(PAPER_ETA) == Fraction(paper_eta_cover(12, 3))
    assert Fraction(PAPER_ETA).limit_denominator(10**6) == Fraction(9, 832)
    assert Fraction(repr(paper_eta_within(9, 3))) <= Fraction(1, 45) < Fraction(repr(paper_eta(9, 3)))
    for D in range(3, 25):
        for K in range(1, (D - 1) // 2 + 1):
            bound = papers_step_size(D, K)
            assert Fraction(paper_eta_cover(D, K)) >= bound > Fraction(math.nextafter(
                paper_eta_cover(D, K), 0.0))
            within = paper_eta_within(D, K)
            assert Fraction(repr(within)) <= bound < Fraction(repr(math.nextafter(within, 1.0)))


@pytest.fixture(scope="module")
def report():
    return eb.prove(CFG)


def test_every_step_size_up_to_the_papers_eta(report):
    """ReLU D = 12, K = 3, every eta in (0, papers' eta], all five statements: one configuration of the grid
    the ledger's scope of Lemmas D.18 and D.19 names (strength.PROVE_ETA_GRID; all of it in the slow
    test_eta_box_grid.py)."""
    from rdyn.verification.claims import strength

    from rdyn.verification.proofs import statements as st

    assert set(strength.PROVE_ETA_GRID["labels"]) == {"Lemma D.10", "Lemma D.18", "Lemma D.19"}
    for label in strength.PROVE_ETA_GRID["labels"]:   # every correction of the label is decided
        assert {s.key for s in st.STATEMENTS if s.label == label and s.form == "corrected"} <= set(eb.STATEMENT_KEYS)
    for label in strength.ETA_GRID_ENTRIES:   # entries: every statement of the label is decided (printed ones)
        assert label in strength.PROVED_BY_PROVE
        assert {s.key for s in st.STATEMENTS if s.label == label} <= set(eb.STATEMENT_KEYS)
    # t1 = Theta(1/eta): decided over a range only (never per instance), the ledger's entry and the API agree
    from rdyn.api._prove import RANGE_ONLY_LABELS

    assert tuple(s.label for s in eb.RANGE_STATEMENTS) == RANGE_ONLY_LABELS
    # the ledger cites t1's; Lemma D.17's entry is the law in D, which T* = Theta(1/eta) at each configuration is not
    assert strength.ETA_RANGE_ONLY_ENTRIES == ("Lemma D.13 (t1)",)
    assert not {s.label for s in st.STATEMENTS} & set(RANGE_ONLY_LABELS)
    ours = {"activation": "relu", "D": 12, "K": 3, "kappa": 0.0, "vstar_norm2": 1.0, "logit_scale": "D",
            "eta": (CFG.lo, CFG.hi)}
    assert ours in strength.eta_box_configs()
    data = report.to_dict()
    assert data["box"] == {"eta": [0.0, PAPER_ETA], "D": [12, 12]}
    assert data["instance"]["eta"] is None and data["instance"]["eta_box"] == [0.0, PAPER_ETA]
    verdicts = {s["key"]: s["verdict"] for s in data["statements"]}
    assert verdicts == {k: "certified" for k in eb.STATEMENT_KEYS}
    for s in data["statements"]:
        c = s["certificate"]
        assert c["box"] == data["box"] and c["undecided_boxes"] == []
        assert [b["eta"] for b in c["proved_boxes"]] == [[0.0, PAPER_ETA]]
        k = c["proved_boxes"][0]["constants"]
        # c_lag is the tube's band, and q_lag = q_min (1 - c_lag (K/N)^2) exactly as the statement says
        band = c["proved_boxes"][0]["tube"]
        assert max(abs(band["w_lo"]), abs(band["w_hi"])) <= k["c_lag"] <= 1.00001 * max(abs(band["w_lo"]), abs(band["w_hi"]))
        q = k["q_min"][0] * (1 - k["c_lag"] / 9)
        assert k["q_lag"][0] <= q <= k["q_lag"][1] * (1 + 1e-15)
        if eb.CONDITION_OF[s["key"]] in ("structural", "band_lower_kept"):   # shown by sign, no margin
            assert c["margin_on_region"] is None
        else:
            assert c["margin_on_region"] is not None and c["margin_on_region"] >= 0
    # q_min = X(K/N, w = 0)/(eta g2) is the instance engine's constant, free of eta (0.4767701... at eta = 0.01)
    k = data["statements"][0]["certificate"]["proved_boxes"][0]["constants"]
    assert k["q_min"][0] == pytest.approx(0.4767701399096550, rel=1e-14)
    assert k["g2"][0] == pytest.approx(1 / 54, rel=1e-14)   # ReLU: g2 = M/(2 K^3)


@pytest.mark.parametrize("mutation, refused", [
    ({"g2": 1 - 1e-6}, {"D19.corrected.upper", "D18.derived.upper"}),
    ({"q_lag": 1 + 3.8e-4}, {"D19.derived.lower", "D18.derived.lower"}),
    ({"q_lag": 1 + 3.5e-4}, set()),
])
def test_a_constant_made_tighter_is_refused(mutation, refused):
    """D.19's upper constant g2 is sharp as e -> 0: made 1e-6 smaller, the statements that use it are
    not proved. The lower side's q_lag has a true slack of 3.69e-4 (relative) at e = K/N, w = w_hi
    (X/(eta g2) - q_lag = 1.76e-4 there): q_lag raised by 3.8e-4 is refused, by 3.5e-4 still proved,
    so the check is sharp to 1e-5 of the true minimum. One tube (a wider one would lower q_lag)."""
    rep = eb.prove(CFG, mutate=mutation, pads=(0.5,), max_boxes=100000)
    verdicts = {r.statement.key: r.verdict for r in rep.results}
    assert {k for k, v in verdicts.items() if v != "certified"} == refused


def test_the_step_formula_holds_the_exact_map():
    """w' - w = eta G and e - e' = eta H (the module's one-step identity), against the kernel's own
    step at eta = 0.01 and 0.3 at 200 bits: the balls overlap and eta G is narrow, so a wrong term
    of relative size 1e-5 would show."""
    import flint
    from flint import arb

    from rdyn.verification.proofs.balls import b_point

    old = flint.ctx.prec
    flint.ctx.prec = 200
    try:
        f = eb.BoxField(CFG, eb.choose_tube(CFG), 0.0, 0.01)
        k = f.k
        for eta_text in ("0.01", "0.3"):
            eta = arb(eta_text)
            c_eta = k.prepare(arb(3).sqrt(), arb(9).sqrt(), eta, arb(1), arb(0), arb(1))
            for e_text, w_text in (("0.999", "-0.9"), ("0.5", "0.001"), ("0.01", "-0.001"), ("0.3333", "0.0035")):
                e, w = arb(e_text), arb(w_text)
                C1 = k.star(e, f.c) * (1 + w * e**3)
                C1n, xn, *_ = k.advance(C1, -f.scale * e.log(), c_eta)
                en = (-xn / f.scale).exp()
                wn = (C1n / k.star(en, f.c) - 1) / en**3
                G, H, _ = f.step(e, w, k.dx_e2(e, w, b_point(f.cz * e), f.c), eta)
                assert (wn - w).overlaps(eta * G) and (e - en).overlaps(eta * H)
                assert float((eta * G).rad()) < 1e-3 * abs(float((eta * G).mid()))
                assert float((eta * H).rad()) < 1e-3 * abs(float((eta * H).mid()))
    finally:
        flint.ctx.prec = old


@pytest.mark.parametrize("eta", [0.1, PAPER_ETA * 20])
def test_the_tube_holds_a_float_trajectory(eta):
    """Every state from step 1 to 2 T* of the float64 iteration lies in the tube that the proof shows
    invariant (near the corner e = 1, C1 = 0 too): an independent look at the region's geometry."""
    from flint import arb

    from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, run

    tube = eb.choose_tube(CFG)
    f = eb.BoxField(CFG, tube, 0.0, eta)
    config = TeacherConfig(D=12, K=3, activation="relu", eta=eta)
    T_star = run(config).T_star
    steps = sorted(set(range(1, 300)) | {int(T_star * i / 400) for i in range(1, 801)} - {0})
    res = run(config, steps=steps[-1], record=steps)
    pieces = tube.pieces()
    for t in steps:
        r = res.record[t]
        e = math.exp(-(r.C2 + r.C3) / 12)
        w = (r.C1 / float(f.k.star(arb(e), f.c).mid()) - 1) / e**3
        a, b, la, lb, ha, hb = next(p for p in pieces if p[0] <= e <= p[1])
        low, high = la + (lb - la) * (e - a) / (b - a), ha + (hb - ha) * (e - a) / (b - a)
        assert low - 1e-9 <= w <= high + 1e-9, (t, e, w, low, high)


def test_lemma_d12_near_the_start_is_regular():
    """The box's Lemma D.12 uses (1 - e)^2 g'(e), which the kernel gives in a form regular at e = 1 (where
    Dp - 1 = 0 and g' itself is infinite): equal to (1 - e)^2 g' below 1, finite at 1, for ReLU and identity."""
    import flint
    from flint import arb

    from rdyn.verification.proofs.kernels import kernels

    old = flint.ctx.prec
    flint.ctx.prec = 200
    try:
        for activation in ("relu", "identity"):
            k = kernels(activation, "D")
            c = k.prepare(arb(3).sqrt(), arb(9).sqrt(), arb(1), arb(1), arb(0), arb(1))
            for e in ("0.3", "0.9", "0.999999"):
                E = arb(e)
                diff = k.g_prime_regular(E, c) - (1 - E) ** 2 * k.g_prime(E, c)
                assert abs(diff) < arb(10) ** -50
            assert k.g_prime_regular(arb(1), c).is_finite() and not k.g_prime(arb(1), c).is_finite()
    finally:
        flint.ctx.prec = old


def test_lemma_d13_c1_step_rests_on_an_identity(monkeypatch):
    """D.13's C1 step over a range: for 1 <= t < t1 it is beta (39/40 - rho) > 0 with beta = eta D F3/(K p) (a
    sympy identity in the kernels' facts), and t = 0 is first_c1 against D^2 F3(1)/(40 K). For the identity the
    first step is the C1 > 0 branch's (C1(1) = beta(e = 1)), so the relative slack at t = 0 is 39 exactly.
    Without the identity the statement is not decided."""
    cfg = eb.EtaBox(D=7, K=2, activation="identity", kappa=0.0, vstar_norm2=1.0, logit_scale="D", lo=0.0, hi=0.01)
    assert eb.k_facts(cfg)["beta_is_eta_D_F3_over_Kp"] is True
    rep = eb.prove(cfg, ["Lemma D.13 (C1 step)"])
    (result,) = rep.results
    assert result.verdict == "certified" and result.certificate["region_condition"] == "c1_step"
    assert result.certificate["margin_on_region"] == pytest.approx(39, rel=1e-12)
    facts = dict(eb.k_facts(cfg), beta_is_eta_D_F3_over_Kp=False)
    monkeypatch.setattr(eb, "k_facts", lambda cfg: facts)
    assert eb.prove(cfg, ["Lemma D.13 (C1 step)"]).results[0].verdict == "undecided"


def test_eta_structure_is_decided_exactly():
    """The facts eta_box rests on (Delta x, 1 - alpha, beta linear in eta; C1* free of it; the first step)."""
    from rdyn.verification.proofs.symbolic import eta_structure

    assert eta_structure("relu", "D") == {"dx": True, "one_minus_alpha": True, "beta": True, "star": True,
                                          "first_c1": True, "x_unchanged_at_C1_zero": True}


def test_cli_json_follows_the_schema(capsys):
    from rdyn.cli import main
    from rdyn.schemas import validate

    assert main(["prove", "--eta", f"0:{PAPER_ETA!r}", "--statement", "Lemma D.19", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    validate("prove", data)
    assert {s["key"] for s in data["statements"]} == {"D19.derived.lag", "D19.derived.lower", "D19.corrected.upper"}


def test_an_undecided_range_follows_the_schema(capsys):
    """A box budget too small: every statement undecided, its certificate listing the open sub-box (the
    schema allows a certificate for an undecided statement of a range)."""
    from rdyn.cli import main
    from rdyn.schemas import validate

    assert main(["prove", "--eta", "0:0.01", "--max-boxes", "200", "--statement", "Lemma D.19", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    validate("prove", data)
    for s in data["statements"]:
        assert s["verdict"] == "undecided" and s["certificate"]["proved_boxes"] == []
        assert [b["D"] for b in s["certificate"]["undecided_boxes"]] == [[12, 12]]


@pytest.mark.parametrize("args, message", [
    (["--eta", "0.02:0.01"], "with LO < HI"),
    (["--eta", "-1:0.01"], "with LO >= 0"),
    (["--eta", "0:1.5"], "below eta_limit"),
    (["--eta", "0:0.01", "--max-steps", "10"], "--max-steps applies only to one eta, not to an --eta range"),
    (["--eta", "0:0.01", "--statement", "Lemma D.15"], "not decided over an --eta range"),
    (["--eta", "0:0.01", "--D", "6"], "--D must exceed 2K"),
    (["--eta", "0:0.01", "--D", "6:13"], "--D must exceed 2K"),
    (["--eta", "0:0.01", "--D", "12:300"], "has 289 values of D, more than 256"),
    (["--D", "12:20"], "a --D range LO:HI applies only with an --eta range"),
    (["--D", "12:20", "--eta", "0.01"], "a --D range LO:HI applies only with an --eta range"),
    (["--eta", "0:0.6", "--D", "12:24"], "reaches outside the papers' hypotheses at D = 20"),
    # every D from 12: eta_limit = 4K/D (ReLU) reaches HI = 0.01 at D = 1200, a D of the range
    (["--eta", "0:0.01", "--D", "12:"], "at D = 1200 eta_limit = 0.01 <= HI"),
    (["--eta", "0:0.01", "--D", "12:", "--activation", "identity"], "at D = 600 eta_limit = 0.01 <= HI"),
])
def test_bad_ranges_are_refused_in_one_line(args, message, capsys):
    from rdyn.cli import main

    assert main(["prove", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err


def test_the_turning_point_of_c1_star_on_a_grid_point_is_still_enclosed():
    """Lemma D.10 corrected needs the zero e_c of dC1*/de. For the identity with D = 9K it is e = 1/4 exactly
    (sympy: C1*'(1/4) = 0 when D - K = 8K), a point of the search grid, where the ball's sign is undecided:
    the bracket grows past it instead of giving up (which left D.10 corrected undecided there)."""
    import flint
    import sympy as sp
    from flint import arb

    from rdyn.verification.proofs import symbolic as sy
    from rdyn.verification.proofs.engine import turning_point
    from rdyn.verification.proofs.kernels import kernels

    r = sy.reduced("identity", "D")
    assert sp.simplify(r.star_prime.subs({sy.e: sp.Rational(1, 4), sy.sN: 2 * sp.sqrt(2) * sy.sK})) == 0
    old = flint.ctx.prec
    flint.ctx.prec = 200
    try:
        k = kernels("identity", "D")
        for D, K in ((9, 1), (18, 2)):
            c = k.prepare(arb(K).sqrt(), arb(D - K).sqrt(), arb(1), arb(1), arb(0), arb(1))
            lo, hi = turning_point(k, c)
            assert lo < 0.25 < hi and hi - lo < 0.01
            assert k.star_prime(arb(lo), c) > 0 > k.star_prime(arb(hi), c)
    finally:
        flint.ctx.prec = old


def test_sigterm_during_a_range_proof_prints_what_is_decided():
    """SIGTERM mid-proof: exit 143, the JSON of the eta sub-boxes decided ("complete": false, the rest open boxes
    whose reason says interrupted) and one line that does not suggest --checkpoint (refused with a range).
    ReLU D = 48, K = 3 at the papers' eta runs through its whole box budget (about 20 s), so it is still running."""
    from rdyn.schemas import validate
    from signal_runs import signal_after

    code, out, err = signal_after(["prove", "--D", "48", "--K", "3", "--eta", "0:0.000224", "--json"], 6)
    assert code == 143 and "Traceback" not in err
    data = json.loads(out)
    validate("prove", data)
    assert data["complete"] is False
    for s in data["statements"]:
        assert s["verdict"] == "undecided"
        assert any(b["reason"].startswith("interrupted before eta in") for b in s["certificate"]["undecided_boxes"])
    last = err.strip().splitlines()[-1]
    assert "listed open: run it again" in last and "--checkpoint" not in last


def _scripted_prove_box(monkeypatch, stop_at: int):
    """``prove_box`` replaced: invariance fails on an eta box wider than 1/4 of (0, 0.004] (so the box is bisected
    twice: each of the four tubes of PADS tried on the three boxes that fail), holds on the quarters (the first tube);
    the ``stop_at``-th call raises KeyboardInterrupt (a signal mid-proof). Calls: 1-4 (0, .004], 5-8 and 9-12 its
    halves, 13-16 the quarters in order."""
    calls = []

    def fake(cfg, tube, *, max_boxes, conditions=None, **_):
        calls.append((cfg.D, cfg.lo, cfg.hi))
        if len(calls) == stop_at:
            raise KeyboardInterrupt
        ok = cfg.hi - cfg.lo <= 0.001 + 1e-12
        keys = ("lag", "dx_lower_qlag", "dx_upper", "increment_upper_psi", "structural", "c1_step")
        constants = {"c_lag": 0.01, "q_min": [0.5, 0.6], "q_lag": [0.4, 0.5], "g2": [1.0, 1.1]}
        return eb.BoxProof(cfg.lo, cfg.hi, ok, {c: ok for c in keys}, {c: 1.0 if ok else None for c in keys}, 10,
                           0.0, None if ok else "scripted", constants)
    monkeypatch.setattr(eb, "prove_box", fake)
    return calls


@pytest.mark.parametrize("stop_at, kept", [(1, []), (13, []), (14, [(0.0, 0.001)]),
                                           (16, [(0.0, 0.001), (0.001, 0.002), (0.002, 0.003)])])
def test_an_interrupted_eta_box_keeps_its_decided_sub_boxes(monkeypatch, stop_at, kept):
    """A signal after some eta sub-boxes are final: RangeInterrupted carries them as proved boxes, the rest of
    (0, 0.004] as open boxes (in order of eta, reason "interrupted before ..."), "complete": false; none is lost
    and none is claimed."""
    import rdyn
    from rdyn.api._prove import RangeInterrupted
    from rdyn.schemas import validate

    _scripted_prove_box(monkeypatch, stop_at)
    with pytest.raises(RangeInterrupted) as stopped:
        rdyn.prove(D=12, K=3, eta=(0.0, 0.004), statement=["Lemma D.19"])
    data = stopped.value.result.to_dict()
    validate("prove", data)
    assert data["complete"] is False
    for s in data["statements"]:
        c = s["certificate"]
        assert s["verdict"] == "undecided"
        assert [tuple(b["eta"]) for b in c["proved_boxes"]] == kept
        rest = [tuple(b["eta"]) for b in c["undecided_boxes"]]
        assert rest == [(kept[-1][1] if kept else 0.0, 0.004)]
        assert c["undecided_boxes"][0]["reason"].startswith("interrupted before eta in")


def test_an_interrupted_d_range_keeps_the_d_in_progress_in_part(monkeypatch):
    """--D 12:14: D = 12 whole (16 calls), the signal at D = 13's 14th call: D = 12 proved, D = 13's first quarter
    proved and the rest of its box open, D = 14 one open box; the CLI line names D = 13 as in part."""
    import rdyn
    from rdyn.api._prove import RangeInterrupted
    from rdyn.cli.prove import _kept

    _scripted_prove_box(monkeypatch, 30)
    with pytest.raises(RangeInterrupted) as stopped:
        rdyn.prove(D=(12, 14), K=3, eta=(0.0, 0.004), statement=["Lemma D.19"])
    data = stopped.value.result.to_dict()
    assert data["complete"] is False
    c = data["statements"][0]["certificate"]
    assert [(b["D"][0], tuple(b["eta"])) for b in c["proved_boxes"]] == [
        (12, (0.0, 0.001)), (12, (0.001, 0.002)), (12, (0.002, 0.003)), (12, (0.003, 0.004)), (13, (0.0, 0.001))]
    assert [(b["D"], tuple(b["eta"])) for b in c["undecided_boxes"]] == [([13, 13], (0.001, 0.004)),
                                                                         ([14, 14], (0.0, 0.004))]
    assert _kept(stopped.value.result.detail["report"]) == (
        "D = 12..12 are decided above, D = 13 in part (1 eta sub-boxes); the rest of the range is listed open: "
        "run it again for --D 13:14")


D_RANGE = dict(K=3, eta=(0.0, 0.004), statement=["Lemma D.19"])


def test_every_d_of_a_range_is_its_own_tube():
    """--D 12:13: each D proved by its own tube, the certificate the union of the two single-D certificates
    (same constants, sub-boxes tagged with their D), the box [12, 13]; JSON by the schema."""
    import rdyn
    from rdyn.schemas import validate

    data = rdyn.prove(D=(12, 13), **D_RANGE).to_dict()
    validate("prove", data)
    assert data["box"] == {"eta": [0.0, 0.004], "D": [12, 13]} and data["complete"] is True
    assert data["instance"]["D"] is None and data["instance"]["D_box"] == [12, 13]
    assert [t["D"] for t in data["region"]["tubes"]] == [12, 13]
    singles = {D: rdyn.prove(D=D, **D_RANGE).to_dict() for D in (12, 13)}
    for i, s in enumerate(data["statements"]):
        assert s["verdict"] == "certified" and s["certificate"]["undecided_boxes"] == []
        boxes = s["certificate"]["proved_boxes"]
        assert [b["D"] for b in boxes] == [[12, 12], [13, 13]]
        for b in boxes:
            one = singles[b["D"][0]]["statements"][i]["certificate"]["proved_boxes"]
            assert [b] == one   # the same sub-box, constants and margin as the single-D proof
        assert s["certificate"]["margin_on_region"] == min(b["margin_on_region"] for b in boxes)


def test_a_range_is_certified_only_when_every_d_is():
    """One D left open (its box budget too small) makes every statement of the range undecided, naming that D;
    an interrupted range lists the D not reached as one open box."""
    from rdyn.schemas import validate

    cfg = eb.EtaBox(**{**CFG.__dict__, "hi": 0.004})
    full = eb.prove(cfg, ["Lemma D.19"])
    starved = eb.prove(eb.EtaBox(**{**cfg.__dict__, "D": 13}), ["Lemma D.19"], max_boxes=500)
    assert all(r.verdict == "certified" for r in full.results)
    assert all(r.verdict == "undecided" for r in starved.results)
    data = eb.range_report(cfg, 13, [full, starved], ["Lemma D.19"], 1.0).to_dict()
    validate("prove", data)
    for s in data["statements"]:
        assert s["verdict"] == "undecided" and s["reason"].startswith("not shown for D = 13, eta in (0.0, 0.004]")
        assert [b["D"] for b in s["certificate"]["proved_boxes"]] == [[12, 12]]
    stopped = eb.range_report(cfg, 20, [full], ["Lemma D.19"], 1.0, interrupted=True)
    data = stopped.to_dict()
    validate("prove", data)
    assert data["complete"] is False and not stopped.all_corrected_certified
    for s in data["statements"]:
        assert s["certificate"]["undecided_boxes"] == [
            {"D": [13, 20], "eta": [0.0, 0.004], "reason": "interrupted before D = 13 was decided"}]


def test_sigterm_during_a_d_range_prints_the_d_decided():
    """SIGTERM after the first D of --D 12:24: exit 143, the JSON of the D decided (complete false, the rest
    one open box) on stdout, one line saying which D to run again."""
    import signal
    import subprocess
    import sys

    from rdyn.schemas import validate

    proc = subprocess.Popen([sys.executable, "-m", "rdyn", "prove", "--D", "12:24", "--K", "3", "--eta", "0:0.004",
                             "--statement", "Lemma D.19", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if line.startswith("rdyn prove: D = 12 (1 of 13)"):
            proc.send_signal(signal.SIGTERM)
            break
    out, err = proc.communicate(timeout=120)
    err = "".join(lines) + err
    assert proc.returncode == 143, err
    data = json.loads(out)
    validate("prove", data)
    assert data["complete"] is False and "Traceback" not in err
    first_open = data["statements"][0]["certificate"]["undecided_boxes"][0]["D"][0]
    assert 13 <= first_open <= 24
    assert err.strip().splitlines()[-1].endswith(f"run it again for --D {first_open}:24)")
