"""Lemma D.13's t1 and Lemma D.17's T* as Theta(1/eta) for every step size of a box
(rdyn.verification.proofs.phase_times, decided by rdyn prove --eta LO:HI as D13.range.t1 and D17.range.tstar): the
certified constants a <= eta t <= b hold the t1 and T* of independent routes (rdyn prove's certified iteration at one
eta, rdyn teacher's float64 runs at smaller ones). The slow grid test compares T* with the proof sweep's record at all
264 instances."""
from __future__ import annotations

import math

import pytest

import rdyn
from rdyn.verification.proofs import eta_box as eb
from rdyn.verification.proofs import phase_times

CASES = [("relu", 9, 3, 0.02222222222222222), ("identity", 7, 2, 0.006), ("leaky", 10, 2, 0.005)]


def _bounds(activation, D, K, hi, label="Lemma D.13 (t1)"):
    cfg = eb.EtaBox(D=D, K=K, activation=activation, kappa=0.3 if activation == "leaky" else 0.0, vstar_norm2=1.0,
                    logit_scale="D", lo=0.0, hi=hi)
    rep = eb.prove(cfg, labels=[label])
    (result,) = rep.results
    key, name = {"Lemma D.13 (t1)": ("D13.range.t1", "eta_t1"), "Lemma D.17": ("D17.range.tstar", "eta_tstar")}[label]
    assert result.statement.key == key and result.verdict == "certified"
    (box,) = result.certificate["proved_boxes"]
    a, b = box["constants"][name]
    assert 0 < a < b and box["margin_on_region"] == a
    return a, b, box["constants"]["e_min_before_t1"]


@pytest.mark.parametrize("activation, D, K, hi", CASES)
def test_the_constants_hold_every_t1_and_tstar_an_independent_route_finds(activation, D, K, hi):
    a, b, e_min = _bounds(activation, D, K, hi)
    a_star, b_star, _ = _bounds(activation, D, K, hi, "Lemma D.17")
    assert b_star / a_star < 1.25           # Riemann sums of the crossing time: close at these sizes
    kappa = {"kappa": 0.3} if activation == "leaky" else {}
    proved = rdyn.prove(D=D, K=K, activation=activation, eta=hi, statement=["Lemma D.13 (attention)"], **kappa)
    t1, T_star = proved.to_dict()["t1"], proved.to_dict()["T_star"]
    assert a <= hi * t1 <= b, (a, hi * t1, b)
    assert a_star <= hi * T_star <= b_star, (a_star, hi * T_star, b_star)
    for eta in (hi / 7, hi / 50):      # float64 runs, a route that shares no code with the proof
        run = rdyn.teacher(D=D, K=K, activation=activation, eta=eta, steps=int(1.05 * b_star / eta), **kappa).to_dict()
        assert a <= eta * run["t1"] <= b, (eta, a, eta * run["t1"], b)
        assert a_star <= eta * run["T_star"] <= b_star, (eta, a_star, eta * run["T_star"], b_star)
        state = rdyn.teacher(D=D, K=K, activation=activation, eta=eta, steps=run["t1"], record=[run["t1"]],
                             **kappa).to_dict()["record"][str(run["t1"])]
        # the proof's other claim: e = exp(-(C2+C3)/D) stays at or above e_min up to t1
        assert math.exp(-(state["C2"] + state["C3"]) / D) >= e_min


def test_tstar_at_the_engines_pinned_instance():
    """ReLU D = 12, K = 3: the engine's certified T* = 1165870 at eta = 0.01 (test_engine.py) lies in the range's
    bounds, which are within 6% of each other."""
    a, b, _ = _bounds("relu", 12, 3, 0.010817307692307694, "Lemma D.17")
    assert a <= 0.01 * 1165870 <= b and b / a < 1.06


def test_the_bounds_are_eta_free_and_need_the_tube():
    """The same configuration over a smaller box gives the same a (up to HI's own term) and a b no larger; a box
    whose tube is not invariant (eta beyond 1/max lam) leaves t1 = Theta(1/eta) undecided."""
    a, b, _ = _bounds("relu", 9, 3, 0.02222222222222222)
    a2, b2, _ = _bounds("relu", 9, 3, 0.001)
    assert a <= a2 and b2 <= b and b - b2 < 0.05
    cfg = eb.EtaBox(D=9, K=3, activation="relu", kappa=0.0, vstar_norm2=1.0, logit_scale="D", lo=0.4, hi=0.6)
    rep = eb.prove(cfg, labels=["Lemma D.13 (t1)"], max_boxes=20000)
    assert [r.verdict for r in rep.results] == ["undecided"]


def test_bounds_refuse_what_they_cannot_show():
    """``bounds`` says None, not a number, when the slices' b_lo is not certainly positive (here: the kernels' lam
    replaced by 0 at e = 1)."""
    from flint import arb

    cfg = eb.EtaBox(D=9, K=3, activation="relu", kappa=0.0, vstar_norm2=1.0, logit_scale="D", lo=0.0, hi=0.02)
    f = eb.BoxField(cfg, eb.choose_tube(cfg), cfg.lo, cfg.hi)

    class NoPull:
        def __getattr__(self, name):
            return getattr(f.k, name)

        @staticmethod
        def alpha(E, c):
            return arb(1) + 0 * E       # lam = 1 - alpha = 0: C1 never moves, t1 does not exist

    assert phase_times.t1_bounds(f.k, f.c, f.scale, f._bz, cfg.hi) is not None
    assert phase_times.t1_bounds(NoPull(), f.c, f.scale, f._bz, cfg.hi) is None


def test_one_instance_refuses_the_range_statement(capsys):
    from rdyn.cli import main

    assert main(["prove", "--D", "9", "--K", "3", "--statement", "Lemma D.13 (t1)"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "decided over an --eta range only" in err[0]
