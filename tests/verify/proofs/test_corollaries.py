"""verify/proofs/corollaries.py: Lemma D.18's printed lower side refuted from the certified
corrected upper side, at the first step where the certified ratio exceeds 1 and every step after."""
from __future__ import annotations

from types import SimpleNamespace

from flint import arb

from rdyn.verification.proofs import corollaries

INST = SimpleNamespace(D=5, K=1)
CONSTS = {"eta": arb("0.005"), "M": arb(2), "eta_g2": arb("0.001"), "scale": arb(5)}


def _ratio(tau):
    """L/rhs at tau = T - T* (the module docstring's formulas, written out again)."""
    N, K, D = arb(4), arb(1), arb(5)
    R = (N / K) ** 2 + 2 * CONSTS["eta_g2"] * (tau + 1) / CONSTS["scale"]
    L = N / (K * (N + K * R.sqrt()))
    return L / (20 * D * N / (CONSTS["eta"] * K * CONSTS["M"] * tau))


def test_d18_printed_lower_is_refuted_from_the_first_step_the_ratio_passes_one():
    step, lhs, rhs, ratio = corollaries.d18_printed_lower(INST, CONSTS, T_star=1000)
    tau = step - 1000
    assert ratio > 1 and (lhs / rhs).overlaps(ratio) and _ratio(tau).overlaps(ratio)
    assert not _ratio(tau - 1) > 1                # the first such step (up to one step)
    assert _ratio(10 * tau) > ratio               # L/rhs increases with tau: false from here on


def test_certified_and_undecided_lookups():
    def result(key, verdict):
        return SimpleNamespace(statement=SimpleNamespace(key=key), verdict=verdict)

    results = [result("D18", "certified"), result("D19", "undecided"), result("D10", "refuted")]
    assert corollaries._certified(results, "D18") and not corollaries._certified(results, "D10")
    assert corollaries._undecided(results, "D19") is results[1]
    assert corollaries._undecided(results, "D18") is None
