"""Proof sweep: :func:`rdyn.verification.proofs.engine.prove` over a grid of Model A instances
(``rdyn prove --grid``; docs/proofs.md, "Proof sweep"), with the per-statement table of
certified / refuted / undecided counts, printed and corrected (seed 000, Appendix D).

Grid syntax: that of ``rdyn sweep --grid`` (:mod:`rdyn.reduced_dynamics.model_a.grid`: ``KEY=VALUES``
separated by ``;``, a comma list or ``LO:HI:N``, Cartesian product, last key fastest) over the keys
D, K, activation (identity, relu, leaky), kappa, vstar_norm2, eta and logit_scale. ``eta`` also takes
the words ``paper`` (the papers' step-size condition ``min(K/D, K^3 (D-K)/(M D^3 (D+1)))`` of
Lemmas D.5 and D.9, ``rdyn prove``'s default) and ``half_limit`` (``eta_limit/2`` exactly; ``auto``
is a synonym, as in ``rdyn sweep``). Points outside the papers' hypotheses (``K >= D``,
``D <= 2K``, ``eta >= eta_limit``) are not instances: they are listed under ``skipped`` with the
hypothesis, as are points whose float64 T* exceeds the cost cap ``max_tstar`` (the iteration costs
about ``2 T*`` certified steps).

Each instance is proved by the single-instance engine; nothing here decides a verdict. The rows
keep each statement's verdict, smallest certified margins, the counterexample's step and ratio
(40 digits) and the undecided reason; :func:`table` counts the verdicts per statement.
"""
from __future__ import annotations

import json
import math
import re
import time
from dataclasses import dataclass
from fractions import Fraction

from rdyn.derivations.fields import FieldError
from rdyn.derivations.messages import error_kind
from rdyn.reduced_dynamics.model_a.batch import run_batch
from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, eta_limit_fraction
from rdyn.reduced_dynamics.model_a.grid import ALIASES, _values, grid_error, parse_grid
from rdyn.verification.claims.trajectories import paper_eta_within
from rdyn.verification.proofs import statements as st
from rdyn.verification.proofs.engine import DEFAULT_MAX_BOXES, Instance, prove

ETA_WORDS = ("paper", "half_limit", "auto")
# the most points a proof sweep takes (before the papers' hypotheses are applied), counted before any
# value list is combined: every instance costs at least PROVE_FIXED_S (about 2 s) of certified work, so
# 10^4 points are already more than 5 hours (rdyn sweep takes 10^6 float64 configurations)
MAX_GRID_POINTS = 10_000
GRID_KEYS = ("D", "K", "activation", "kappa", "vstar_norm2", "eta", "logit_scale")
ACTIVATIONS = ("identity", "relu", "leaky")
SCALES = ("D", "sqrtD")
VERDICTS = ("proved", "certified", "refuted", "undecided")


def paper_eta(D: int, K: int, vstar_norm2: float) -> float:
    """The papers' step-size condition ``min(K/D, K^3 (D-K)/(||V*||^2 D^3 (D+1)))`` (Lemmas D.5 and
    D.9) as the float ``rdyn prove`` uses by default: the largest whose decimal form satisfies it
    (:func:`rdyn.verification.claims.trajectories.paper_eta_within`)."""
    return paper_eta_within(D, K, vstar_norm2)


def instance_eta(rule: str, D: int, K: int, vstar_norm2: float, value: float | None = None):
    """The ``eta`` of a proof :class:`~rdyn.verification.proofs.engine.Instance` under a step-size
    ``rule``: the one place ``rdyn prove`` resolves eta (the single instance and every grid point).
    ``"given"``: ``value``; ``"paper"`` (``rdyn prove`` without ``--eta``, and ``eta=paper`` in a
    grid): :func:`paper_eta`; ``"half_limit"``: None, which the Instance reads as eta_limit/2
    exactly (``TeacherConfig.exact_step_size``; ``rdyn teacher``'s default, there in float64 by
    ``resolve_eta``). The outputs show both: ``instance.eta`` and the grid's ``eta_rule``."""
    if rule == "given":
        return value
    if rule == "paper":
        return paper_eta(D, K, vstar_norm2)
    if rule == "half_limit":
        return None
    raise ValueError(f"unknown eta rule {rule!r}")


@dataclass(frozen=True)
class GridPoint:
    """One instance of the grid and how its eta was chosen (``paper``, ``half_limit`` or
    ``given``)."""

    instance: Instance
    eta_rule: str


def _with_eta_words(exc: ValueError) -> ValueError:
    """A refusal of an eta value, with the words eta also takes."""
    words = " (eta: numbers, or the words paper and half_limit)"
    if isinstance(exc, FieldError):
        return FieldError(exc.field, exc.template + words, *exc.fields[1:])
    return grid_error("{grid}: " + str(exc) + words)


def check_grid(text: str, check_value=None) -> int:
    """Check a ``--grid`` text before anything is built and return its number of points: at least
    one ``KEY=VALUES`` entry (``';;'`` is refused, not read as the default grid), known keys, each
    given once, at most :data:`MAX_GRID_POINTS` points (the product of the value counts), and every
    value checked by ``check_value(key, value)`` (the option table: each value as the
    single-instance option ``--KEY`` would be; it raises ValueError with a one-line message).
    A FieldError of the field ``grid`` (one line; the API words it ``--grid``) otherwise."""
    if not isinstance(text, str) or not text.strip():
        raise grid_error("{grid} is empty: give KEY=VALUES entries joined by ';' (keys: " + ", ".join(GRID_KEYS) + ")")
    entries = [part for part in text.split(";") if part.strip()]
    if not entries:
        raise grid_error(f"{{grid}} {text!r} has no KEY=VALUES entry (keys: {', '.join(GRID_KEYS)})")
    counts, seen = {}, set()
    for part in entries:
        if "=" not in part:
            raise grid_error(f"{{grid}}: expected KEY=VALUES, got {part.strip()!r}")
        key, raw = part.split("=", 1)
        key = ALIASES.get(key.strip(), key.strip())
        if key == "sigma_prime_zero":
            raise grid_error("{grid}: key sigma_prime_zero does not apply to rdyn prove (sigma'(0) = 1)")
        if key not in GRID_KEYS:
            raise grid_error(f"{{grid}}: unknown key {key!r} (keys: {', '.join(GRID_KEYS)})")
        if key in seen:
            raise grid_error(f"{{grid}}: key {key} given twice")
        seen.add(key)
        items = [x.strip() for x in raw.split(",")]
        if key == "eta":
            words = [x for x in items if x in ETA_WORDS]
            rest = [x for x in items if x not in ETA_WORDS]
        else:
            words, rest = [], items
        if not words and not "".join(rest):
            raise grid_error(f"{{grid}}: no values for {key}")
        if ":" in raw and key not in ("activation", "logit_scale"):   # LO:HI:N: count before building
            bits = raw.strip().split(":")
            try:
                n = int(bits[2]) if len(bits) == 3 else 1
            except ValueError:
                n = 1
            if n > MAX_GRID_POINTS:
                raise grid_error(f"{{grid}}: range for {key} has {n} values; a proof sweep takes at most "
                                 f"{MAX_GRID_POINTS} points")
        try:
            values = _values(key, ",".join(rest)) if rest and "".join(rest) else []
        except ValueError as exc:
            if key != "eta":
                raise
            raise _with_eta_words(exc) from None
        if check_value is not None:
            for value in values:
                check_value(key, value)
        counts[key] = len(values) + len(words)
    size = math.prod(counts.values())
    if size > MAX_GRID_POINTS:
        raise grid_error(f"{{grid}} has {size} points (" + " x ".join(f"{k}: {n}" for k, n in counts.items())
                         + f"); a proof sweep takes at most {MAX_GRID_POINTS} (each instance is at least "
                         f"about 2 s of certified work)")
    return size


def parse(text: str) -> tuple[list[GridPoint], list[dict]]:
    """The grid's instances (in grid order) and the points skipped as outside the papers'
    hypotheses (``{"point": ..., "reason": ...}``). A one-line FieldError of the field ``grid``
    for bad syntax or values."""
    check_grid(text)   # empty, unknown keys, too many points: refused before the product is built

    words: list[str] = []
    numbers: list = []
    parts = []
    for part in text.split(";"):
        key = part.split("=", 1)[0].strip() if "=" in part else None
        if key is not None and ALIASES.get(key, key) == "eta":
            if words or numbers:
                raise grid_error("{grid}: key eta given twice")
            items = [s.strip() for s in part.split("=", 1)[1].split(",")]
            words = [s for s in items if s in ETA_WORDS]
            rest = [s for s in items if s not in ETA_WORDS]
            if len(set(words)) != len(words) or ("auto" in words and "half_limit" in words):
                raise grid_error(f"{{grid}}: eta word given twice in {part.strip()!r}")
            try:
                numbers = _values("eta", ",".join(rest)) if rest else []
            except ValueError as exc:
                raise _with_eta_words(exc) from None
            if not words and not numbers:
                raise grid_error("{grid}: no values for eta")
            continue
        if key == "sigma_prime_zero":
            raise grid_error("{grid}: key sigma_prime_zero does not apply to rdyn prove (sigma'(0) = 1)")
        parts.append(part)
    base = parse_grid(";".join(p for p in parts if p.strip()) or "D=12")
    rules = [("given", v) for v in numbers] + [("paper" if w == "paper" else "half_limit", None) for w in words]
    rules = rules or [("paper", None)]
    points, skipped = [], []
    for point in base:
        for rule, value in rules:
            D, K, act = point["D"], point["K"], point["activation"]
            kappa = point["kappa"] if act == "leaky" else 0.0
            shown = {"D": D, "K": K, "activation": act, "kappa": kappa if act == "leaky" else None,
                     "vstar_norm2": point["vstar_norm2"], "eta": rule if rule != "given" else value,
                     "logit_scale": point["logit_scale"]}
            if act not in ACTIVATIONS:
                raise grid_error(f"{{grid}}: activation must be one of {', '.join(ACTIVATIONS)} for rdyn prove, "
                                 f"got {act!r}")
            if point["logit_scale"] not in SCALES:
                raise grid_error(f"{{grid}}: logit_scale must be D or sqrtD, got {point['logit_scale']!r}")
            if not point["vstar_norm2"] > 0 or (act == "leaky" and not 0 <= kappa < 1):
                raise grid_error(f"{{grid}}: vstar_norm2 must be > 0 and kappa in [0, 1), got {shown}")
            if not 1 <= K < D:
                skipped.append({"point": shown, "reason": "K >= D (Lemma D.2: 1 <= K < D)"})
                continue
            if D <= 2 * K:
                skipped.append({"point": shown, "reason": "D <= 2K (p(0) = 1/D >= 1/(2K): T* = 0, no three "
                                                          "phases, Lemmas D.13-D.16)"})
                continue
            eta = instance_eta(rule, D, K, point["vstar_norm2"], value)
            if eta is not None:
                if not eta > 0:
                    raise grid_error(f"{{grid}}: eta must be > 0, got {eta!r}")
                limit = eta_limit_fraction(TeacherConfig(D=D, K=K, activation=act, kappa=kappa))
                if Fraction(repr(float(eta))) >= limit:
                    skipped.append({"point": shown, "reason": f"eta >= eta_limit = {float(limit):.6g} (the C1 "
                                                              f"update must contract)"})
                    continue
            inst = Instance(D=D, K=K, activation=act, kappa=kappa, vstar_norm2=point["vstar_norm2"], eta=eta,
                            logit_scale=point["logit_scale"])
            points.append(GridPoint(inst, rule))
    return points, skipped


def float_tstar(points: list[GridPoint], cap: int) -> list[int | None]:
    """T* of each instance from the float64 batch iteration (:func:`run_batch`), run for ``cap``
    steps (None: not reached by then). Used only to choose which instances to prove."""
    rows = run_batch([p.instance.config() for p in points], cap).rows
    return [r["T_star"] for r in rows]


def _fmt(x) -> float | None:
    return None if x is None else float(x)


def summary(point: GridPoint, report) -> dict:
    """One row of the sweep: the instance, T*, t1, seconds, boxes, and per statement the verdict
    with its certificate's margins, its counterexample's step and ratio, or its reason."""
    def row(r):
        c, x = r.certificate or {}, r.counterexample
        return {"key": r.statement.key, "label": r.statement.label, "form": r.statement.form,
                "side": r.statement.side, "verdict": r.verdict,
                "min_margin": _fmt(c.get("min_margin")), "margin_on_region": _fmt(c.get("margin_on_region")),
                "counterexample": None if x is None else {"step": x["step"], "ratio": x["ratio"]},
                "reason": r.reason}

    region = report.region or {}
    return {"instance": {**point.instance.to_dict(), "eta_rule": point.eta_rule}, "T_star": report.T_star,
            "t1": report.detail.get("t1"), "seconds": round(report.seconds, 3), "boxes": region.get("boxes"),
            "statements": [row(r) for r in report.results], "superseded": [row(r) for r in report.superseded],
            "error": None}


def prove_point(point: GridPoint, labels=None, max_steps=None, max_boxes=None, exact_budget: bool = False,
                float_route: bool = True) -> dict:
    """:func:`summary` of the engine's proof of one grid point (the task a Dask worker runs).
    ``exact_budget``: ``max_steps`` is honoured exactly (``rdyn prove --grid --max-steps``), not
    raised to T0; ``float_route``: the float route after t1 + 1, else arb from step 0
    (:func:`rdyn.verification.proofs.engine.prove`)."""
    report = prove(point.instance, labels, max_steps=max_steps,
                   max_boxes=DEFAULT_MAX_BOXES if max_boxes is None else max_boxes, exact_budget=exact_budget,
                   float_route=float_route)
    return summary(point, report)


def _error_row(point: GridPoint, exc: BaseException) -> dict:
    return {"instance": {**point.instance.to_dict(), "eta_rule": point.eta_rule}, "T_star": None, "t1": None,
            "seconds": None, "boxes": None, "statements": [], "superseded": [],
            "error": f"{error_kind(exc)}: {exc}".splitlines()[0]}


def instance_key(instance: dict) -> str:
    """The identity of a sweep file's row: its ``instance`` object (eta rule included) as text."""
    return json.dumps(instance, sort_keys=True)


def point_key(point: GridPoint) -> str:
    """The identity of a grid point in a sweep file (:func:`instance_key` of its row's ``instance``)."""
    return instance_key({**point.instance.to_dict(), "eta_rule": point.eta_rule})


def run(points: list[GridPoint], labels=None, *, max_steps=None, max_boxes=None, scheduler=None,
        progress=None, on_row=None, exact_budget: bool = False, done_rows: dict | None = None,
        float_route: bool = True) -> list[dict]:
    """Prove every point; rows in grid order. ``scheduler``: a Dask distributed scheduler address
    (or a ``Client``): one task per instance on its workers, submitted only after
    :func:`rdyn.reduced_dynamics.runs.dask_client.connect` has checked the cluster (else its
    one-line ``SchedulerError``); else one after another in this process. ``progress(i, n, row)``
    after each instance, in the order they finish; ``on_row(rows_so_far)`` too, the rows done so
    far in grid order (the CLI rewrites ``--out`` with them). An instance whose proof raises (on
    a worker: also a worker that died running it, ``KilledWorker``) is a row with ``error`` (and
    no verdicts); the sweep goes on. Interrupted, the tasks not finished are cancelled.
    ``done_rows`` (index -> row, ``--resume``): rows already proved, kept as they are and not run
    again; ``progress`` counts them as done."""
    rows: list = [None] * len(points)
    done = 0
    for i, row in (done_rows or {}).items():
        rows[i] = row
        done += 1
    todo = [i for i in range(len(points)) if rows[i] is None]

    def finish(i, row):
        nonlocal done
        rows[i] = row
        done += 1
        if progress is not None:
            progress(done, len(points), row)
        if on_row is not None:
            on_row([r for r in rows if r is not None])

    if scheduler is None:
        for i in todo:
            p = points[i]
            try:
                row = prove_point(p, labels, max_steps, max_boxes, exact_budget, float_route)
            except (ArithmeticError, AssertionError, ValueError) as exc:
                row = _error_row(p, exc)
            finish(i, row)
        return rows
    from distributed import KilledWorker, as_completed

    from rdyn.reduced_dynamics.runs.dask_client import connect

    with connect(scheduler, (__name__,)) as client:   # refused here, before any task, if unusable
        futures = {client.submit(prove_point, points[i], labels, max_steps, max_boxes, exact_budget, float_route,
                                 pure=False): i
                   for i in todo}
        try:
            for future in as_completed(futures, loop=client.loop):
                i = futures[future]
                try:
                    row = future.result()
                except (ArithmeticError, AssertionError, ValueError, KilledWorker) as exc:
                    row = _error_row(points[i], exc)
                finish(i, row)
        finally:   # interrupted (Ctrl-C, SIGTERM) or failed: nothing keeps running on the cluster
            client.cancel([f for f in futures if not f.done()])
    return rows


FORM_ORDER = {"printed": 0, "corrected": 1, "superseded": 2}
SIDE_ORDER = {None: 0, "lower": 1, "upper": 2}


def label_order(label: str) -> tuple:
    """Sort key of a ledger label: by lemma number (``Lemma D.9`` before ``Lemma D.10``), the bare
    label before its parts (``Lemma D.9``, then ``Lemma D.9 (increment)``)."""
    m = re.match(r"\s*(\D*?)\s*([A-Z]?)\.?(\d+)(.*)$", label)
    if m is None:
        return (label, "", 0, "")
    return (m.group(1), m.group(2), int(m.group(3)), m.group(4).strip())


def table(rows: list[dict]) -> list[dict]:
    """Verdict counts per statement, sorted by statement label (lemma number), then form (printed,
    corrected, superseded), then side: one dict ``{key, label, form, side, proved, certified,
    refuted, undecided}``; instances whose proof raised are not counted (see ``errors`` of
    :func:`result`)."""
    out = []
    for s in st.STATEMENTS + st.SUPERSEDED:
        counts = dict.fromkeys(VERDICTS, 0)
        seen = False
        for r in rows:
            for x in r["statements"] + r["superseded"]:
                if x["key"] == s.key:
                    counts[x["verdict"]] += 1
                    seen = True
        if seen:
            out.append({"key": s.key, "label": s.label, "form": "superseded" if s in st.SUPERSEDED else s.form,
                        "side": s.side, **counts})
    order = {s.key: i for i, s in enumerate(st.STATEMENTS + st.SUPERSEDED)}
    out.sort(key=lambda t: (label_order(t["label"]), FORM_ORDER.get(t["form"], 3), SIDE_ORDER.get(t["side"], 3),
                            order[t["key"]]))
    return out


def result(grid: str, points, skipped, rows, seconds: float, max_tstar=None, options: dict | None = None) -> dict:
    """The ``--json`` object of ``rdyn prove --grid``: ``complete`` is false (and ``counts.done`` below
    ``counts.instances``) in the file of a sweep that has not finished (``--out`` is rewritten after
    every instance; an interrupted sweep leaves it so, and ``--resume FILE`` continues it), and
    ``progress`` counts the instances ``done`` of the ``total`` (``counts.instances``).
    ``options``: the options the rows depend on (statement, max_steps, max_boxes, max_tstar), which
    ``--resume`` must match."""
    done = sum(1 for r in rows if r is not None)
    out = {"grid": grid, "max_tstar": max_tstar, "complete": done == len(points),
           "progress": {"done": done, "total": len(points)},
           "instances": [r for r in rows if r is not None], "skipped": skipped,
           "table": table([r for r in rows if r is not None]),
           "counts": {"instances": len(points), "skipped": len(skipped),
                      "errors": sum(1 for r in rows if r is not None and r["error"] is not None)},
           "seconds": round(seconds, 3)}
    if options is not None:
        out["options"] = options
    return out


SUPERSEDED_NAMES = {"D19.corrected.lower.superseded": "superseded (no lag factor)",
                    "D19.corrected.lower.lag1": "superseded (lag factor without exp(x/scale))"}


LEGEND = ("printed: the statement as the paper prints it; corrected: as corrected in the erratum; "
          "superseded: an earlier correction of the same statement, replaced by the corrected row above it "
          "(still decided and counted, to show why it was replaced; docs/proofs.md). Counts are instances.")


def markdown_table(res: dict) -> str:
    """The table of docs/proofs.md ("Proof sweep"): one line per statement (sorted as :func:`table`),
    then the legend (what printed, corrected and superseded mean) and, for a partial sweep file,
    how many instances it holds."""
    lines = ["| statement | key | form | side | proved | certified | refuted | undecided |",
             "| --- | --- | --- | --- | ---: | ---: | ---: | ---: |"]
    for t in res["table"]:
        form = SUPERSEDED_NAMES.get(t["key"], t["form"])
        lines.append(f"| {t['label']} | `{t['key']}` | {form} | {t['side'] or '–'} | {t['proved']} | {t['certified']} | "
                     f"{t['refuted']} | {t['undecided']} |")
    lines += ["", LEGEND]
    if res.get("complete") is False:
        lines.append(f"Partial sweep: {res['progress']['done']} of {res['progress']['total']} instances.")
    return "\n".join(lines)


def prove_grid(grid: str, labels=None, *, max_steps=None, max_boxes=None, max_tstar=None, scheduler=None,
               progress=None, on_row=None, on_tstars=None, float_route: bool = True) -> dict:
    """Parse ``grid``, drop the points beyond the cost cap, prove the rest (:func:`run`); the
    :func:`result` object. ``on_tstars(list)``: called with the float64 T* of the instances kept
    (only with ``max_tstar``, where they are computed) before any proof starts."""
    t0 = time.perf_counter()
    points, skipped = parse(grid)
    if max_tstar is not None and points:
        kept = []
        Ts = float_tstar(points, max_tstar + 1)
        for p, T in zip(points, Ts):
            if T is None:
                d = p.instance.to_dict()
                skipped.append({"point": {k: d[k] for k in ("D", "K", "activation", "kappa", "vstar_norm2", "eta",
                                                             "logit_scale")} | {"eta_rule": p.eta_rule},
                                "reason": f"float64 T* > --max-tstar {max_tstar} (cost cap)"})
            else:
                kept.append(p)
        points = kept
        if on_tstars is not None:
            on_tstars([T for T in Ts if T is not None])
    rows = run(points, labels, max_steps=max_steps, max_boxes=max_boxes, scheduler=scheduler, progress=progress,
               float_route=float_route, on_row=None if on_row is None else (lambda rs: on_row(result(grid, points, skipped, rs,
                                                                              time.perf_counter() - t0,
                                                                              max_tstar))))
    return result(grid, points, skipped, rows, time.perf_counter() - t0, max_tstar)


def dumps(res: dict) -> str:
    return json.dumps(res, allow_nan=False) + "\n"
