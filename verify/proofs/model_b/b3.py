"""Theorem B.3 for every S0 of an interval, at eta = eta_max (:func:`prove_b3`) and at every
eta = theta eta_max (:func:`prove_b3_theta`): branch and bound over S0 (or (S0, theta)) boxes
(:mod:`rdyn.verification.proofs.model_b.boxes`) with counterexample searches
(:mod:`rdyn.verification.proofs.model_b.counterexample`), and the statement rows (verdict,
certificate, counterexample, reason)."""
from __future__ import annotations

import heapq
import math
import time

from rdyn.verification.proofs.model_b.boxes import Tally, s0_box_decide, theta_box_decide
from rdyn.verification.proofs.model_b.counterexample import (SEARCH_STEPS, crossing_candidates, theta_candidates,
                                                          trajectory_counterexample)
from rdyn.verification.proofs.model_b.instance import ETA_MAX_TEXT, FORMS, NolnConstants

STATEMENTS_B3 = (
    ("loss", "the loss decreases at every step: L(gamma_{t+1}) < L(gamma_t) while gamma_t != gamma*"),
    ("descent_lemma", "Part 1: L(gamma_{t+1}) - L(gamma_t) <= -(1/2) eta d S_t F(gamma_t)^2 at every step"),
    ("gamma", "gamma_t increases monotonically to gamma* (gamma_t <= gamma_{t+1} <= gamma*)"),
)
MIN_S0_WIDTH = 2.0 ** -24       # relative width below which an S0 box is not split further


def prove_b3(cst: NolnConstants, s0: tuple, *, max_boxes: int = 200_000, forms=FORMS):
    """Decide the statements of Theorem B.3 for every S0 in [s0[0], s0[1]], at each form of eta_max.

    S0 boxes are bisected while a statement is not carried on them; once a box is narrow
    (relative width < 2^-10) its midpoint is also iterated
    (:func:`~rdyn.verification.proofs.model_b.counterexample.trajectory_counterexample`), and
    a statement certainly false there is refuted and no longer drives the splitting. Returns a list
    of statement dicts (label, form, side, statement, quantity, verdict, certificate,
    counterexample, reason)."""
    out = []
    for form in forms:
        t0 = time.perf_counter()
        tally = Tally()
        todo = [(float(s0[0]), float(s0[1]))]
        refuted: dict = {}
        margin = {n: None for n, _ in STATEMENTS_B3}
        failing = {n: [] for n, _ in STATEMENTS_B3}
        tried = 0
        while todo:
            lo, hi = todo.pop()
            tally.s0_boxes += 1
            res, mg, _region = s0_box_decide(form, lo, hi, cst, tally, max_boxes)
            undecided = [n for n in res if n not in refuted and not res[n]]
            narrow = (hi - lo) <= 2.0 ** -10 * max(abs(hi), 1e-300)
            if undecided and narrow:
                tried += 1
                refuted.update(trajectory_counterexample(form, (lo + hi) / 2, cst, tuple(undecided)))
                undecided = [n for n in undecided if n not in refuted]
            if undecided and (hi - lo) > MIN_S0_WIDTH * max(abs(hi), 1e-300) and \
                    tally.boxes + tally.s0_boxes < max_boxes:   # region and S0 boxes: one budget
                m = (lo + hi) / 2
                todo += [(m, hi), (lo, m)]
                continue
            _fold_box(res, mg, margin, failing, (lo, hi))
        open_names = tuple(n for n, _ in STATEMENTS_B3 if failing[n] and n not in refuted)
        if open_names and form == "printed":
            # the printed form fails (if at all) just below the crossing S0_c = 4 sqrt(1 + 16 gamma*^2)
            # of its first two terms, in a window of relative width ~ k^2 (k = gamma*/S0_c; docs/proofs.md)
            # that can be narrower than the smallest S0 box: try points there
            for point in crossing_candidates(cst):
                if s0[0] <= point <= s0[1]:
                    tried += 1
                    got = trajectory_counterexample(form, point, cst, tuple(n for n in open_names if n not in refuted))
                    refuted.update(got)
        seconds = time.perf_counter() - t0
        for name, text in STATEMENTS_B3:
            base = {"label": "Theorem B.3 (Part 1)" if name == "descent_lemma" else "Theorem B.3 (eta_max)",
                    "form": form, "side": None, "statement": f"{text}, eta = eta_max ({form}: {ETA_MAX_TEXT[form]})",
                    "quantity": name}
            if name in refuted:
                out.append(_b3_row(base, cst, counterexample=refuted[name]))
            elif not failing[name]:
                out.append(_b3_row(base, cst, certificate={
                    "S0": [float(s0[0]), float(s0[1])], "region": region_text(), "boxes": tally.boxes,
                    "s0_boxes": tally.s0_boxes, "min_margin": margin[name], "seconds": round(seconds, 3)}))
            else:
                lo, hi = failing[name][0]
                out.append(_b3_row(base, cst, reason=(
                    f"not carried on S0 in [{lo!r}, {hi!r}] ({len(failing[name])} S0 boxes: "
                    f"{_budget_text(tally, max_boxes, 'S0 boxes')}); no counterexample within {SEARCH_STEPS} steps "
                    f"from the midpoints of the {tried} narrow S0 boxes and crossing points tried")))
    return out


def _fold_box(res: dict, mg: dict, margin: dict, failing: dict, box: tuple) -> list:
    """Fold one decided box into the running margins; record ``box`` under each statement it does not
    carry. Returns those statements."""
    failed = []
    for n in res:
        if res[n]:
            if mg[n] is not None:
                margin[n] = mg[n] if margin[n] is None else min(margin[n], mg[n])
        else:
            failing[n].append(box)
            failed.append(n)
    return failed


def _budget_text(tally, max_boxes: int, boxes: str) -> str:
    """Why a box was left open: the budget, or boxes already at the smallest width."""
    if tally.boxes + tally.s0_boxes >= max_boxes:
        return "the box budget (--max-boxes: region and S0 boxes) ran out"
    return f"{boxes} of relative width {MIN_S0_WIDTH:.1e} do not carry it"


def _b3_row(base: dict, cst, counterexample=None, certificate=None, reason=None) -> dict:
    """One B.3 statement: refuted (with ``counterexample``), certified (``certificate``) or undecided
    (``reason``, plus the radius of gamma* when it is a ball: a smaller failure cannot be certified)."""
    if counterexample is not None:
        return {**base, "verdict": "refuted", "certificate": None, "counterexample": counterexample, "reason": None}
    if certificate is not None:
        return {**base, "verdict": "certified", "certificate": certificate, "counterexample": None, "reason": None}
    if cst.gamma_star_exact is None:
        reason += (f" (gamma* is a ball of radius {float(cst.gamma_star.rad()):.1e}: a failure smaller than that "
                   "cannot be certified)")
    return {**base, "verdict": "undecided", "certificate": None, "counterexample": None, "reason": reason}


NARROW = 2.0 ** -10               # relative width of a narrow S0 (theta) box: its midpoint is iterated
MAP_WIDTH = 2.0 ** -14            # --eta-fraction: relative width to which a refuted statement's boxes are split
MAP_STEPS = 64                    # steps of the search that maps where a refuted statement fails


def _rel(lo: float, hi: float) -> float:
    return (hi - lo) / max(abs(hi), 1e-300)


def prove_b3_theta(cst: NolnConstants, s0: tuple, eta_fraction: tuple, *, max_boxes: int = 200_000, forms=FORMS):
    """Theorem B.3's statements for every S0 in ``s0`` and every ``eta = theta eta_max(S0)``,
    ``theta`` in ``eta_fraction`` = (LO, HI) (``rdyn prove --paper B --eta-fraction``; docs/proofs.md,
    Model B): branch and bound over (S0, theta) boxes
    (:func:`~rdyn.verification.proofs.model_b.boxes.theta_box_decide`), taken by increasing theta, each
    split while a statement is not carried on it, in the coordinate on which k sigma0 = theta
    k_max(S0) sigma0 varies more (theta geometrically while it spans a factor > 2).

    A statement not yet refuted is searched for a counterexample at the midpoint of every narrow
    box (relative widths <= 2^-10), as at theta = 1; with HI = 1 the theta = 1 proof
    (:func:`prove_b3`) runs first, and its counterexample is the one reported; for the printed form
    the points of :func:`~rdyn.verification.proofs.model_b.counterexample.theta_candidates` are tried
    too. A refuted statement keeps splitting its boxes down to 2^-14, with a 64-step search at each
    midpoint, until one box of that width fails (boxes come by increasing theta, so that fixes the
    theta below which it is certified) and not above the lowest theta refuted: ``theta_failure`` in
    the counterexample gives that theta and the range of theta of the counterexamples found."""
    lo_t, hi_t = float(eta_fraction[0]), float(eta_fraction[1])
    out = []
    for form in forms:
        t0 = time.perf_counter()
        refuted: dict = {}
        if hi_t == 1.0:    # the theta = 1 proof: its counterexamples are those reported (default unchanged)
            for st in prove_b3(cst, s0, max_boxes=max_boxes, forms=(form,)):
                if st["verdict"] == "refuted":
                    refuted[st["quantity"]] = dict(st["counterexample"], theta=1.0)
        tally = Tally()
        # boxes by increasing theta: the first refuted statement's box that stays failing fixes the
        # theta below which it is certified, and boxes above the lowest refuted theta are not refined
        todo = [(lo_t, float(s0[0]), float(s0[1]), hi_t)]
        margin = {n: None for n, _ in STATEMENTS_B3}
        failing = {n: [] for n, _ in STATEMENTS_B3}
        fail_theta = {n: [] for n, _ in STATEMENTS_B3}
        settled = {n: False for n, _ in STATEMENTS_B3}
        for n, c in refuted.items():
            fail_theta[n].append((1.0, c["S0"]))
        tried = 0
        if form == "printed":
            # the printed statements fail first (in theta) at the crossing S0_c of the first two terms:
            # try theta = 1 - j k_c^2/8 there (k_c = gamma*/S0_c; docs/proofs.md, Model B)
            for point, theta in theta_candidates(cst, lo_t, hi_t):
                if s0[0] <= point <= s0[1]:
                    names = tuple(n for n, _ in STATEMENTS_B3 if n != "loss")
                    got = trajectory_counterexample(form, point, cst, names, steps=MAP_STEPS, theta=theta)
                    for n, c in got.items():
                        refuted.setdefault(n, c)
                        fail_theta[n].append((theta, repr(point)))
        while todo:
            tl, lo, hi, th = heapq.heappop(todo)
            tally.s0_boxes += 1
            res, mg, sens = theta_box_decide(form, lo, hi, tl, th, cst, tally, max_boxes)
            undecided = [n for n in res if not res[n]]
            narrow = _rel(lo, hi) <= NARROW and _rel(tl, th) <= NARROW
            open_ = [n for n in undecided if n not in refuted]
            mapped = [n for n in undecided if n in refuted]
            sm, tm = (lo + hi) / 2, (tl + th) / 2
            if open_ and narrow:
                tried += 1
                got = trajectory_counterexample(form, sm, cst, tuple(open_), theta=tm)
                for n, c in got.items():
                    refuted[n] = c
                    fail_theta[n].append((tm, repr(sm)))
                open_ = [n for n in open_ if n not in got]
            elif mapped and not open_ and all(settled[n] or tl >= min(fail_theta[n])[0] for n in mapped):
                # the theta below which it holds is settled (boxes come by increasing theta), or the box
                # lies above the lowest theta already refuted: it cannot narrow the bracket of theta_c
                for n in res:
                    if res[n]:      # a statement carried here keeps this box's margin
                        if mg[n] is not None:
                            margin[n] = mg[n] if margin[n] is None else min(margin[n], mg[n])
                    else:
                        failing[n].append((lo, hi, tl, th))
                continue
            elif mapped:
                for n in trajectory_counterexample(form, sm, cst, tuple(mapped), steps=MAP_STEPS, theta=tm):
                    fail_theta[n].append((tm, repr(sm)))
            budget = tally.boxes + tally.s0_boxes < max_boxes   # region and (S0, theta) boxes: one budget
            split_open = budget and open_ and max(_rel(lo, hi), _rel(tl, th)) > MIN_S0_WIDTH
            # widths weighted by how much k sigma0 = theta k_max(S0) sigma0 varies over the box (a refuted
            # statement's boxes are split down to MAP_WIDTH in these weighted widths)
            ws, wt = sens * _rel(lo, hi), _rel(tl, th)
            split_map = budget and mapped and max(ws, wt) > MAP_WIDTH
            if split_open or split_map:
                if ws >= wt or (split_open and wt <= MIN_S0_WIDTH):
                    m = (lo + hi) / 2
                    heapq.heappush(todo, (tl, m, hi, th))
                    heapq.heappush(todo, (tl, lo, m, th))
                else:     # geometric while theta spans more than a factor 2 (LO can be 1e-100)
                    m = math.sqrt(tl * th) if th > 2 * tl else (tl + th) / 2
                    heapq.heappush(todo, (m, lo, hi, th))
                    heapq.heappush(todo, (tl, lo, hi, m))
                continue
            for n in _fold_box(res, mg, margin, failing, (lo, hi, tl, th)):
                settled[n] = settled[n] or n in mapped
        seconds = time.perf_counter() - t0
        for name, text in STATEMENTS_B3:
            base = {"label": "Theorem B.3 (Part 1)" if name == "descent_lemma" else "Theorem B.3 (eta_max)",
                    "form": form, "side": None,
                    "statement": f"{text}, eta = theta eta_max for every theta in [{lo_t!r}, {hi_t!r}] "
                                 f"({form}: {ETA_MAX_TEXT[form]})",
                    "quantity": name}
            if name in refuted:
                below = min((b[2] for b in failing[name]), default=hi_t)
                (t_min, s_min), t_max = min(fail_theta[name]), max(fail_theta[name])[0]
                cex = dict(refuted[name])
                cex["theta_failure"] = {
                    "holds_below": below, "counterexample_theta": [t_min, t_max], "lowest_S0": s_min,
                    "counterexamples": len(fail_theta[name]),
                    "text": f"certified for every S0 in [{s0[0]!r}, {s0[1]!r}] and every theta in "
                            f"[{lo_t!r}, {below!r}); refuted at theta = {t_min!r}, S0 = {s_min} (the lowest of "
                            f"{len(fail_theta[name])} counterexamples found, at theta up to {t_max!r})"}
                out.append(_b3_row(base, cst, counterexample=cex))
            elif not failing[name]:
                out.append(_b3_row(base, cst, certificate={
                    "S0": [float(s0[0]), float(s0[1])], "eta_fraction": [lo_t, hi_t],
                    "region": region_text() + "; eta = theta eta_max(S0), R enclosed per (S0, theta) box",
                    "boxes": tally.boxes, "s0_boxes": tally.s0_boxes, "min_margin": margin[name],
                    "seconds": round(seconds, 3)}))
            else:
                lo, hi, tl, th = failing[name][0]
                out.append(_b3_row(base, cst, reason=(
                    f"not carried on S0 in [{lo!r}, {hi!r}], theta in [{tl!r}, {th!r}] ({len(failing[name])} boxes: "
                    f"{_budget_text(tally, max_boxes, '(S0, theta) boxes')}); no counterexample within {SEARCH_STEPS} "
                    f"steps from the midpoints of the {tried} narrow boxes tried")))
    return out


def region_text() -> str:
    return ("t = 0 exact; t >= 1: {|g - 1| <= |1 - k sigma0|, 0 <= delta <= (1 - k^2) sigma0} (g <= 1 where the step "
            "factor f >= 0), g = gamma/gamma*, delta = (beta^2 - alpha^2)/gamma*, k = 2 eta kappa2 gamma*/d")
