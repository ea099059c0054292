"""Lemma D.13's t1 = Theta(1/eta) for every step size of a box (rdyn.verification.proofs.t1_scaling, decided by
rdyn prove --eta LO:HI as D13.range.t1): the certified constants a <= eta t1 <= b hold the t1 of independent
routes (rdyn prove's certified iteration at one eta, rdyn teacher's float64 run at smaller ones)."""
from __future__ import annotations

import math

import pytest

import rdyn
from rdyn.verification.proofs import eta_box as eb
from rdyn.verification.proofs import t1_scaling

CASES = [("relu", 9, 3, 0.02222222222222222), ("identity", 7, 2, 0.006), ("leaky", 10, 2, 0.005)]


def _bounds(activation, D, K, hi):
    cfg = eb.EtaBox(D=D, K=K, activation=activation, kappa=0.3 if activation == "leaky" else 0.0, vstar_norm2=1.0,
                    logit_scale="D", lo=0.0, hi=hi)
    rep = eb.prove(cfg, labels=["Lemma D.13 (t1)"])
    (result,) = rep.results
    assert result.statement.key == "D13.range.t1" and result.verdict == "certified"
    (box,) = result.certificate["proved_boxes"]
    a, b = box["constants"]["eta_t1"]
    assert 0 < a < b and box["margin_on_region"] == a
    return a, b, box["constants"]["e_min_before_t1"]


@pytest.mark.parametrize("activation, D, K, hi", CASES)
def test_the_constants_hold_every_t1_an_independent_route_finds(activation, D, K, hi):
    a, b, e_min = _bounds(activation, D, K, hi)
    kappa = {"kappa": 0.3} if activation == "leaky" else {}
    proved = rdyn.prove(D=D, K=K, activation=activation, eta=hi, statement=["Lemma D.13 (attention)"], **kappa)
    t1 = proved.to_dict()["t1"]
    assert a <= hi * t1 <= b, (a, hi * t1, b)
    for eta in (hi / 7, hi / 50):      # float64 runs, a route that shares no code with the proof
        run = rdyn.teacher(D=D, K=K, activation=activation, eta=eta, steps=int(60 / eta), **kappa).to_dict()
        assert a <= eta * run["t1"] <= b, (eta, a, eta * run["t1"], b)
        state = rdyn.teacher(D=D, K=K, activation=activation, eta=eta, steps=run["t1"], record=[run["t1"]],
                             **kappa).to_dict()["record"][str(run["t1"])]
        # the proof's other claim: e = exp(-(C2+C3)/D) stays at or above e_min up to t1
        assert math.exp(-(state["C2"] + state["C3"]) / D) >= e_min


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

    assert t1_scaling.bounds(f.k, f.c, f.scale, f._bz, cfg.hi) is not None
    assert t1_scaling.bounds(NoPull(), f.c, f.scale, f._bz, cfg.hi) is None


def test_one_instance_refuses_the_range_statement(capsys):
    from rdyn.cli import main

    assert main(["prove", "--D", "9", "--K", "3", "--statement", "Lemma D.13 (t1)"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "decided over an --eta range only" in err[0]
