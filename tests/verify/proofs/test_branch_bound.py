"""verify/proofs/branch_bound.py: the search on a problem small enough to follow by hand.

Boxes are intervals [a, b] of [0, 1], halved; a box narrower than 0.1 is too small. The conditions are
affine, so their balls are exact: ``x > 0.3`` is ``[a - 0.3, b - 0.3]``. With the last-pushed box searched first,
``x > 0.3`` goes: [0, 1] open; [.5, 1] shown (low .2); [0, .5] open; [.25, .5] open; [.375, .5] shown (.075);
[.25, .375] open; [.3125, .375] shown (.0125); [.25, .3125] open and too small: failed (8 boxes); [0, .25] is
then not evaluated (nothing pending on it). The region proofs' own pins are in test_region.py, test_eta_box.py,
test_all_d.py and the golden outputs (tests/project)."""
from __future__ import annotations

import pytest

from rdyn.verification.proofs import branch_bound as bb

# condition: (slope, offset, loss): the ball of slope x + offset on [a, b], its lower end lowered by loss (b - a)
# (an enclosure that is loose on wide boxes, as interval arithmetic is)
AFFINE = {"x>0.3": (1.0, -0.3, 0.0), "x<0.3": (-1.0, 0.3, 0.0), "loose": (0.0, 1.5, 1.0)}


def _ball(name, box):
    slope, offset, loss = AFFINE[name]
    ends = sorted((slope * box[0] + offset, slope * box[1] + offset))
    return ends[0] - loss * (box[1] - box[0]), ends[1]


def _evaluate(calls):
    def evaluate(box, pending):
        calls.append(box)
        out = {}
        for c in pending:
            lo, hi = _ball(c, box)
            out[c] = (bb.SHOWN if lo > 0 else bb.NEGATIVE if hi < 0 else bb.OPEN, lo, hi)
        return out
    return evaluate


def _halves(box, left, results):
    m = (box[0] + box[1]) / 2
    return [((box[0], m), None), ((m, box[1]), None)], 0


def _rules(calls, **kw):
    return bb.Rules(_evaluate(calls), _halves, lambda box: box[1] - box[0] < 0.1, **kw)


def test_a_condition_followed_by_hand():
    calls = []
    found = bb.search([(0.0, 1.0)], ["x>0.3"], _rules(calls), max_boxes=100)
    assert calls == [(0.0, 1.0), (0.5, 1.0), (0.0, 0.5), (0.25, 0.5), (0.375, 0.5), (0.25, 0.375),
                     (0.3125, 0.375), (0.25, 0.3125)]
    assert found.boxes == 8 and found.shown == {"x>0.3": False}
    assert found.low["x>0.3"] == pytest.approx(0.0125, abs=1e-15) and found.high["x>0.3"] == pytest.approx(0.7)
    assert found.failures == {"x>0.3": ((0.25, 0.3125), bb.OPEN, False)}
    assert found.exhausted is None and found.ended_by is None


def test_a_fatal_failure_ends_the_search_with_the_rest_open():
    found = bb.search([(0.0, 1.0)], ["x>0.3"], _rules([], fatal=frozenset({"x>0.3"})), max_boxes=100)
    assert found.boxes == 8 and found.ended_by == ("x>0.3", (0.25, 0.3125), bb.OPEN)
    assert found.stack == [((0.0, 0.25), ("x>0.3",))]


def test_a_certainly_negative_condition_fails_at_once_unless_told_otherwise():
    """``x < 0.3`` is certainly negative on [.5, 1], the second box: failed there. Without ``negative_fails`` the
    search splits on until a box is too small: [.75, 1], [.875, 1], then [.9375, 1] fails (5 boxes)."""
    found = bb.search([(0.0, 1.0)], ["x<0.3"], _rules([]), max_boxes=100)
    assert found.boxes == 2 and found.failures == {"x<0.3": ((0.5, 1.0), bb.NEGATIVE, False)}
    slow = bb.search([(0.0, 1.0)], ["x<0.3"], _rules([], negative_fails=False), max_boxes=100)
    assert slow.failures == {"x<0.3": ((0.9375, 1.0), bb.NEGATIVE, False)} and slow.boxes == 5


def test_the_budget_stops_before_the_evaluation_that_would_exceed_it():
    calls = []
    found = bb.search([(0.0, 1.0)], ["x>0.3"], _rules(calls), max_boxes=3)
    assert found.boxes == 3 and len(calls) == 3 and found.shown == {"x>0.3": True}
    assert found.exhausted == ((0.25, 0.5), ("x>0.3",))
    assert found.stack == [((0.0, 0.25), ("x>0.3",))]


@pytest.mark.parametrize("carry, margins_at, boxes, low", [("open", "shown", 8, 0.5), ("all", "shown", 9, 0.5),
                                                            ("all", "leaf", 9, 1.0)])
def test_what_a_part_carries_and_where_margins_are_recorded(carry, margins_at, boxes, low):
    """``loose`` (the ball [1.5 - (b - a), 1.5]) is shown on [0, 1] at once, lower end 0.5. Carried "open", it is
    never evaluated again; carried "all", it is evaluated on every box, [0, .25] too (9 boxes). Recorded at the
    leaves only ([.5, 1], [.375, .5], [.3125, .375], the failed [.25, .3125] and [0, .25]), its least lower end
    is that of [.5, 1], 1.0."""
    calls = []
    found = bb.search([(0.0, 1.0)], ["x>0.3", "loose"], _rules(calls, carry=carry, margins_at=margins_at),
                      max_boxes=100)
    assert found.boxes == len(calls) == boxes and found.shown == {"x>0.3": False, "loose": True}
    assert found.low["loose"] == low


def test_a_split_may_evaluate_its_parts_and_hand_them_down():
    """A split that evaluates both halves (2 boxes each time) and passes their results on: the search does not
    evaluate them again, and counts every evaluation."""
    calls = []
    evaluate = _evaluate(calls)

    def split(box, left, results):
        m = (box[0] + box[1]) / 2
        parts = [(b, evaluate(b, left)) for b in ((box[0], m), (m, box[1]))]
        return parts, 2

    rules = bb.Rules(evaluate, split, lambda box: box[1] - box[0] < 0.1)
    found = bb.search([(0.0, 1.0)], ["x>0.3"], rules, max_boxes=100)
    assert len(calls) == found.boxes == 9   # the root, then 4 splits of 2 halves each
    assert len(set(calls)) == len(calls)
