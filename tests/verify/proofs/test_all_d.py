"""Lemma D.19 corrected, the lag lemma and D.18's lower side on the late-phase band, for every D >= D_1 and every
eta <= K/D
(verify/proofs/all_d.py, verify/proofs/late_chart.py; docs/proofs.md, "Every D: the late phase")."""
from __future__ import annotations

import json

import pytest

from rdyn.verification.proofs import all_d

KEYS = ("D19.all_D.lag", "D19.all_D.lower", "D19.all_D.upper", "D18.all_D.lower")
CASES = [("relu", 12, 3, 0.0), ("identity", 5, 1, 0.0), ("leaky", 12, 3, 0.1), ("relu", 3, 1, 0.0)]


@pytest.fixture(scope="module")
def reports():
    return {case: all_d.prove(all_d.AllD(d_lo=case[1], K=case[2], activation=case[0], kappa=case[3],
                                         vstar_norm2=1.0)) for case in CASES}


@pytest.mark.parametrize("case", CASES)
def test_the_band_statements_hold_for_every_d(reports, case):
    rep = reports[case]
    verdicts = {r.statement.key: r.verdict for r in rep.results}
    assert all(verdicts[k] == "certified" for k in KEYS), rep.proof.reason
    # Lemmas D.18 and D.19 themselves stay undecided: the entry into the band at T* is not shown for every D
    assert {verdicts[k] for k in all_d.ENTRY_OPEN} == {"undecided"}
    assert "needs the step from T* - 1" in next(r.reason for r in rep.results if r.statement.key == "D18.derived.upper")
    k = rep.proof.constants
    assert k["omega_lo"] < k["omega_hi"] and k["c_lag"] >= max(-k["omega_lo"], k["omega_hi"])
    assert 0 < k["q"] < 1
    assert rep.results[0].certificate["box"] == {"eta": [0.0, case[2] / case[1]], "D": [case[1], None],
                                                 "eta_times_D": [0.0, float(case[2])]}


def test_the_chart_limit_is_the_derived_one():
    """At y = 0 (D -> oo): x_hat = 1 and the drift's fixed point is omega_fix = M (1 + v)/K^3 (ReLU:
    C1* = 1 + v, lam = 1/(2K (1 + v)^2), u_coefficient = g2/K^2 with g2 = M/(2K^3)), exactly."""
    import sympy as sp

    from rdyn.verification.proofs import late_chart as lc
    from rdyn.verification.proofs import symbolic as sy

    c = lc.late_chart("relu")
    at0 = {lc.y: 0}
    assert sp.simplify(c.x_hat.subs(at0)) == 1
    fix = sy.sK**2 * c.star_v * c.u_coefficient / (c.lam * c.star)
    assert sp.simplify(fix.subs(at0) - sy.M * (1 + lc.v) / sy.sK**6) == 0
    assert c.slack_powers == (1, 1)
    assert lc.late_chart("identity").slack_powers == (2, 2)


def test_the_cached_facts_are_sympy_s():
    from rdyn.verification.proofs import late_chart as lc

    assert lc.chart_kernels("relu").facts == lc._facts.__wrapped__("relu")
    assert all(v for k, v in lc.chart_kernels("relu").facts.items() if k != "slack_powers")


def test_a_band_short_of_the_fixed_point_is_refused():
    """omega_fix(v = 1, h = 0) = 2M/K^3 (above): a band whose upper edge lies 1e-6 below it is not invariant,
    at any D_1; the same band 1e-3 above it holds for D >= 10^6."""
    edge = 2 / 27
    cfg = all_d.AllD(d_lo=10**6, K=3, activation="relu", kappa=0.0, vstar_norm2=1.0)
    refused = all_d.prove(cfg, band=all_d.Band(0.0, edge * (1 - 1e-6)))
    assert not refused.proof.invariant and refused.results[0].verdict == "undecided"
    held = all_d.prove(cfg, band=all_d.Band(0.03, edge * (1 + 1e-3)))
    assert held.proof.invariant and held.results[0].verdict == "certified"


def test_g2_made_tighter_is_refused():
    """x_hat = 1 at e = 0: a g2 1e-6 smaller fails D.19's upper side; the band and the lower side stand."""
    cfg = all_d.AllD(d_lo=12, K=3, activation="relu", kappa=0.0, vstar_norm2=1.0)
    rep = all_d.prove(cfg, mutate={"g2": 1 - 1e-6})
    verdicts = {r.statement.key: r.verdict for r in rep.results}
    assert verdicts["D19.all_D.upper"] == "undecided" and verdicts["D19.all_D.lag"] == "certified"
    assert verdicts["D19.all_D.lower"] == verdicts["D18.all_D.lower"] == "certified"


def test_a_fact_that_fails_leaves_everything_undecided(monkeypatch):
    from rdyn.verification.proofs import late_chart as lc

    kernels = lc.chart_kernels("relu")
    monkeypatch.setattr(all_d, "chart_kernels", lambda a: lc.ChartKernels(
        **{**kernels.__dict__, "facts": {**kernels.facts, "alpha_nonnegative": False}}))
    rep = all_d.prove(all_d.AllD(d_lo=12, K=3, activation="relu", kappa=0.0, vstar_norm2=1.0),
                      band=all_d.Band(-0.02, 0.1))
    assert {r.verdict for r in rep.results} == {"undecided"} and "alpha_nonnegative" in rep.proof.reason


@pytest.mark.parametrize("activation, d_lo, K, Ds", [("relu", 12, 3, (12, 40, 5000)), ("identity", 5, 1, (5, 100)),
                                                     ("leaky", 12, 3, (13, 1000))])
def test_one_step_of_the_catalogue_map_stays_in_the_band(reports, activation, d_lo, K, Ds):
    """An independent route: the per-D map of verify/proofs/kernels.py (the catalogue's C1 > 0 branch at one D,
    in (C1, x), no chart) at 400 bits, from points on the band's edges: the next state's omega lies in the
    band and Delta x/(eta g2 e^2) in [q, 1]."""
    import flint
    from flint import arb

    from rdyn.verification.proofs.kernels import kernels

    rep = reports[(activation, d_lo, K, 0.1 if activation == "leaky" else 0.0)]
    band, q = rep.band, rep.proof.constants["q"]
    k = kernels(activation, "D")
    with flint.ctx.workprec(400):
        for D in Ds:
            N = D - K
            for mu in (K, 1e-3):
                eta = arb(repr(mu)) / D
                c = k.prepare(arb(K).sqrt(), arb(N).sqrt(), eta, arb(1), arb("0.1" if activation == "leaky" else 0),
                              arb(1))
                g2 = k.eta_g2(c) / eta
                for v in (1.0, 0.3):
                    for omega in (band.omega_lo, band.omega_hi):
                        e = arb(K) * arb(v) / N
                        C1 = k.star(e, c) * (1 + arb(repr(omega)) * e**3 / N)
                        C1n, xn, dx, *_ = k.advance(C1, -arb(D) * e.log(), c)
                        en = (-xn / D).exp()
                        omega_next = N * (C1n / k.star(en, c) - 1) / en**3
                        X = dx / (eta * g2 * e * e)
                        assert band.omega_lo < omega_next < band.omega_hi, (D, mu, v, omega)
                        assert q < X <= 1, (D, mu, v, omega)


def test_the_verdicts_do_not_depend_on_the_callers_precision():
    import flint

    cfg = all_d.AllD(d_lo=12, K=3, activation="relu", kappa=0.0, vstar_norm2=1.0)
    a = all_d.prove(cfg).to_dict()
    with flint.ctx.workprec(300):
        b = all_d.prove(cfg).to_dict()
    for d in (a, b):
        d.pop("seconds"), d["region"].pop("seconds")
        for s in d["statements"]:
            s["certificate"].pop("seconds")
    assert a == b


def test_cli_json_follows_the_schema(capsys):
    from rdyn.cli import main
    from rdyn.schemas import validate

    assert main(["prove", "--D", "12:", "--K", "3", "--json"]) == 1     # Lemmas D.18, D.19 themselves: undecided
    data = json.loads(capsys.readouterr().out)
    validate("prove", data)
    assert data["box"]["D"] == [12, None] and data["instance"]["D_box"] == [12, None]
    keys = [s["key"] for s in data["statements"]]
    assert keys[:len(KEYS)] == list(KEYS) and sorted(keys[len(KEYS):]) == sorted(all_d.ENTRY_OPEN)


@pytest.mark.parametrize("args, message", [
    (["--D", "12:", "--eta", "0.01"], "omit --eta"),
    (["--D", "12:", "--logit-scale", "sqrtD"], "--logit-scale D only"),
    (["--D", "12:", "--statement", "Lemma D.17 (C1 band)"], "not decided for every D at once"),
    (["--D", "6:"], "--D must exceed 2K"),
    (["--D", "12:", "--route", "arb"], "not to an --eta range LO:HI or --D LO:"),
])
def test_bad_all_d_requests_are_refused_in_one_line(args, message, capsys):
    from rdyn.cli import main

    assert main(["prove", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err


def test_the_ledger_s_configurations_are_certified():
    """Every configuration the claims ledger cites for Lemma D.19's correction (verify/claims/strength.py,
    PROVE_ALL_D) is proved here: the three band statements certified, at D >= 2K + 1."""
    from rdyn.verification.claims import strength

    configs = strength.all_d_configs()
    assert len(configs) == 33 and "(33 configurations)" in strength.all_d_text()
    for c in configs:
        rep = all_d.prove(all_d.AllD(d_lo=c["D_from"], K=c["K"], activation=c["activation"], kappa=c["kappa"],
                                     vstar_norm2=c["vstar_norm2"]))
        verdicts = {r.statement.key: r.verdict for r in rep.results}
        assert all(verdicts[k] == "certified" for k in KEYS), (c, rep.proof.reason)


def test_sigterm_during_an_all_d_proof_is_one_line_without_a_checkpoint_hint():
    """SIGTERM mid-proof: exit 143 and one line that does not suggest --checkpoint (refused with --D LO:).
    Leaky ReLU with kappa = 0.99 runs through its whole box budget (about 30 s: the slack's y^1 term carries
    (1 - kappa)^2), so it is still running."""
    from signal_runs import signal_after

    code, out, err = signal_after(["prove", "--D", "12:", "--activation", "leaky", "--kappa", "0.99"], 6)
    assert code == 143
    last = err.strip().splitlines()[-1]
    assert "every D >= LO keeps no partial state" in last and "--checkpoint" not in last and "Traceback" not in err


def test_the_chart_refuses_d_at_most_2k():
    """alpha >= 0 is proved for y = sqrt(K/(D - K)) <= 1 only: D_1 <= 2K is refused before any work."""
    with pytest.raises(ValueError, match="D > 2K"):
        all_d.AllD(d_lo=6, K=3, activation="relu", kappa=0.0, vstar_norm2=1.0)


def test_progress_comes_once_per_20000_boxes(monkeypatch):
    """The CLI's progress lines: none for a proof of a few hundred boxes, one per PROGRESS_EVERY (20000) boxes
    otherwise (shown with a cadence of 2000, a tenth of the boxes)."""
    assert all_d.PROGRESS_EVERY == 20000
    cfg = all_d.AllD(d_lo=12, K=3, activation="relu", kappa=0.0, vstar_norm2=1.0)
    seen = []
    all_d.prove(cfg, progress=seen.append)
    assert seen == []
    monkeypatch.setattr(all_d, "PROGRESS_EVERY", 2000)
    all_d.prove(all_d.AllD(d_lo=12, K=3, activation="leaky", kappa=0.99, vstar_norm2=1.0), max_boxes=4500,
                progress=seen.append)
    assert len(seen) == 2 and 2000 <= seen[0] < 2006 and 4000 <= seen[1] < 4006
