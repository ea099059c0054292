"""Interval branch and bound: the one search loop of the region proofs (:mod:`.region`, :mod:`.eta_box`,
:mod:`.all_d`).

A box of parameter or state space carries the conditions still to be shown on it. The loop takes the box
pushed last, drops the conditions that have failed elsewhere, and evaluates the rest on it
(:attr:`Rules.evaluate`: a sign and the certified lower and upper ends of each condition's ball). A
condition with sign 1 is *shown* on the box, and its ends are recorded (the margin is the least lower end,
over the boxes recorded). The conditions left have *failed* when one of them is certainly negative there
(:attr:`Rules.negative_fails`; no sub-box can show it) or the box is too small to split
(:attr:`Rules.too_small`): each is dropped everywhere, and a failed :attr:`Rules.fatal` condition (the
invariance of the region, say) ends the search. Otherwise the box is split (:attr:`Rules.split`) and its
parts carry the conditions left (:attr:`Rules.carry` ``"open"``), or every condition not failed
(``"all"``, for proofs whose conditions are evaluated together anyway).

Every evaluation counts one box against the budget; the search stops before the evaluation that would
exceed it (:attr:`Search.exhausted`). A split may evaluate its parts itself (to choose the side that helps
most) and hand their results down with them; those count too. Margins are recorded on every box where a
condition is shown (``margins_at = "shown"``) or only on the boxes that are not split further (``"leaf"``).
What a result *means* (which failures refute, the wording of a reason) is the caller's: this module only
searches.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

SHOWN, OPEN, NEGATIVE = 1, 0, -1


@dataclass(frozen=True)
class Rules:
    """How one proof searches its boxes.

    ``evaluate(box, pending) -> {condition: (sign, low, high)}`` for each pending condition: sign 1 when the
    condition is certainly positive on the box, -1 when certainly negative, 0 otherwise; ``low`` and
    ``high`` the ends of its ball (floats, or None when it has none to record).
    ``split(box, left, results) -> (parts, evaluations)``: the parts as ``(box, results or None)`` in the
    order they are pushed (the last is searched first), and the evaluations the split made itself.
    """

    evaluate: Callable
    split: Callable
    too_small: Callable
    fatal: frozenset = frozenset()
    negative_fails: bool = True
    carry: str = "open"            # "open" | "all"
    margins_at: str = "shown"      # "shown" | "leaf"


@dataclass
class Search:
    """The outcome: ``shown[c]`` is False once c failed; ``low``/``high`` the least lower and greatest upper
    ends recorded (inf and -inf when none); ``failures`` each failed condition's first box, in the order they
    failed, with its sign there and whether the failure was fatal; ``exhausted`` the ``(box, pending)`` at which
    the budget ran out, ``stack`` the ``(box, pending)`` still open then (or when a fatal failure ended it)."""

    shown: dict
    low: dict
    high: dict
    failures: dict
    boxes: int
    exhausted: tuple | None
    stack: list

    @property
    def ended_by(self):
        """The fatal failure that ended the search, as ``(condition, box, sign)``, or None."""
        return next(((c, box, sign) for c, (box, sign, fatal) in self.failures.items() if fatal), None)


def search(roots, conditions, rules: Rules, *, max_boxes: int, progress=None, progress_every: int = 0) -> Search:
    """Branch and bound from ``roots`` (boxes, pushed in order) for ``conditions`` (see the module
    docstring). ``progress(boxes)`` each time the count passes a multiple of ``progress_every``."""
    conditions = tuple(conditions)
    shown = {c: True for c in conditions}
    low = {c: math.inf for c in conditions}
    high = {c: -math.inf for c in conditions}
    failures: dict = {}
    stack = [(box, conditions, None) for box in roots]
    boxes, reported = 0, 0
    while stack:
        box, carried, results = stack.pop()
        pending = tuple(c for c in (conditions if rules.carry == "all" else carried) if shown[c])
        if not pending:
            continue
        if boxes >= max_boxes:
            return Search(shown, low, high, failures, boxes, (box, pending), [(b, p) for b, p, _ in stack])
        if results is None:
            boxes += 1
            results = rules.evaluate(box, pending)
        if progress is not None and progress_every and boxes // progress_every > reported:
            reported = boxes // progress_every
            progress(boxes)
        left = tuple(c for c in pending if results[c][0] != SHOWN)
        if rules.margins_at == "shown":
            _record(low, high, results, (c for c in pending if c not in left))
        failing = left and (rules.too_small(box)
                            or rules.negative_fails and any(results[c][0] == NEGATIVE for c in left))
        if failing:
            for c in left:
                shown[c] = False
                failures[c] = (box, results[c][0], c in rules.fatal)
            if rules.fatal.intersection(left):
                return Search(shown, low, high, failures, boxes, None, [(b, p) for b, p, _ in stack])
        if not left or failing:
            if rules.margins_at == "leaf":
                _record(low, high, results, (c for c in pending if shown[c]))
            continue
        parts, evaluations = rules.split(box, left, results)
        boxes += evaluations
        stack += [(part, left, part_results) for part, part_results in parts]
    return Search(shown, low, high, failures, boxes, None, [])


def _record(low: dict, high: dict, results: dict, names) -> None:
    for c in names:
        _, lo, hi = results[c]
        if lo is not None:
            low[c] = min(low[c], lo)
        if hi is not None:
            high[c] = max(high[c], hi)
