"""verify/proofs/region.py: the branch and bound of a region proof, pinned at ReLU D = 9, K = 3, eta = 0.02
(a band that holds, one that is not invariant, a condition not shown at the region's edge, a budget that runs
out): the verdicts, margins, suprema, boxes and reasons, digit for digit."""
from __future__ import annotations

import flint
import pytest
from flint import arb

from rdyn.verification.proofs import region as rg
from rdyn.verification.proofs.engine import Instance, constants
from rdyn.verification.proofs.kernels import kernels


@pytest.fixture(scope="module")
def box_map():
    with flint.ctx.workprec(200):
        inst = Instance(9, 3, "relu", 0.0, 1.0, 0.02, "D")
        k = kernels("relu", "D")
        c = k.prepare(arb(3).sqrt(), arb(6).sqrt(), arb(2) / 100, arb(1), arb(0), arb(1))
        consts = constants(inst, k, c)
    return k, c, consts


def _prove(box_map, region, conditions, max_boxes, q_factor=None):
    k, c, consts = box_map
    if q_factor is not None:
        consts = dict(consts, q_min=consts["q_min"] * arb(q_factor))
    with flint.ctx.workprec(200):
        r = rg.prove_region(rg.BoxMap(k, c, consts, consts["atan"]), region, conditions, max_boxes=max_boxes)
    return r.invariant, r.decided, r.margins, r.sups, r.boxes, r.reason


def test_a_band_that_holds(box_map):
    assert _prove(box_map, rg.Region(0.49, -0.002, 0.005), ("dx_upper", "dx_lower"), 20000) == (
        True, {"dx_upper": True, "dx_lower": True}, {"dx_upper": 0.07315552048385142, "dx_lower": 0.00150260585360229},
        {"dx_upper": 3.166223099455238, "dx_lower": 1.847726498730481}, 2171, None)


def test_a_band_that_excludes_the_lag_is_not_invariant(box_map):
    assert _prove(box_map, rg.Region(0.49, 0.01, 0.02), (), 2000) == (
        False, {}, {}, {}, 2000,
        "box budget 2000 exhausted at e in [0.489907, 0.489907], w in [0.0101172, 0.0101172] (pending: invariant)")


def test_a_q_min_one_percent_too_large_is_not_shown_at_the_edge(box_map):
    """e_top = K/(D-K): q(e_top) = q_min there, so q_min 1% larger fails at the box touching e_top."""
    assert _prove(box_map, rg.Region(0.5, -0.002, 0.005), ("dx_lower",), 3000, q_factor="1.01") == (
        True, {"dx_lower": False}, {"dx_lower": None}, {"dx_lower": None}, 2408,
        "dx_lower not shown on the box e in [0.5, 0.5], w in [0.005, 0.005]")


def test_a_budget_that_runs_out_decides_nothing(box_map):
    assert _prove(box_map, rg.Region(0.49, -0.002, 0.005), ("dx_upper", "dx_lower"), 300) == (
        False, {"dx_upper": False, "dx_lower": False}, {"dx_upper": None, "dx_lower": None},
        {"dx_upper": None, "dx_lower": None}, 300,
        "box budget 300 exhausted at e in [0.458418, 0.459375], w in [-0.002, -0.00189062] (pending: invariant)")
