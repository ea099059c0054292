"""``rdyn.prove``: computer-assisted proofs of Model A's induction statements for one instance
(rdyn.verification.proofs; docs/proofs.md)."""
from __future__ import annotations

import contextlib
import json
import math
import time
from fractions import Fraction

from rdyn.api._common import options
from rdyn.option_types import ProveOptions
from rdyn.api._signature import api_function
from rdyn.output import UsageError


@api_function("prove")
def prove(**kwargs):
    """For one Model A instance, prove or refute the papers' statements that hold for all steps
    up to t1 or after t1 / T* (Lemma D.13's attention bound, Lemma D.17's C1 band, Lemmas D.18
    and D.19, each side, printed and corrected): certified arb iteration to
    T0, then an invariant region in (e, w) by interval branch and bound. Verdicts ``certified``,
    ``refuted`` (with a certified counterexample at 40 digits), ``undecided`` (never a pass).
    With ``grid="D=...;K=...;eta=paper,half_limit"`` every instance of the grid is proved (the proof
    sweep, docs/proofs.md): the result has ``instances``, ``skipped``, ``table`` and ``counts``.
    ``paper="B"``: Model B (Theorem B.3 at the printed and corrected eta_max over an S0 range,
    gamma* by a Krawczyk test, the contraction factor R; docs/proofs.md, "Model B").
    """
    return run(options("prove", kwargs))


def hypotheses(v: ProveOptions) -> dict:
    """The instance's options after the papers' hypotheses are checked (UsageError naming the
    hypothesis otherwise): 1 <= K < D (Lemma D.2), D > 2K (T* > 0), 0 < eta < eta_limit (the C1 update contracts at
    every attention level; the papers' step-size conditions of Lemmas D.5 and D.9 are stricter).
    The default eta is the papers' condition min(K/D, K^3 (D-K)/(||V*||^2 D^3 (D+1)))."""
    D, K = v.D, v.K
    if isinstance(D, tuple):
        raise TypeError("hypotheses takes one D (a --D range is box_hypotheses')")
    _check_sizes(D, K)
    kappa = 0.1 if v.kappa is None else v.kappa
    M = v.vstar_norm2
    from rdyn.verification.proofs.sweep import instance_eta

    # the one resolution of rdyn prove's eta (also every grid point's): no --eta is the papers'
    # condition here, unlike rdyn teacher's eta_limit/2 (resolve_eta); the JSON shows which
    eta = instance_eta("paper" if v.eta is None else "given", D, K, M, v.eta)
    limit = _eta_limit(v, kappa)

    if Fraction(repr(float(eta))) >= limit:
        raise UsageError(f"--eta {eta!r} is outside the papers' hypotheses: the C1 update must contract at "
                         f"every attention level, eta < eta_limit = {float(limit):.6g} (Lemma D.5 assumes "
                         f"1 - eta D/K >= 0)")
    import dataclasses

    from rdyn.verification.claims.trajectories import paper_conditions

    return {**{f.name: getattr(v, f.name) for f in dataclasses.fields(v)}, "kappa": kappa, "eta": eta,
            "eta_limit": float(limit), "eta_given": v.eta is not None,
            "paper_conditions": paper_conditions(eta, D, K, M)}


def _check_sizes(D: int, K: int) -> None:
    if not 1 <= K < D:
        raise UsageError(f"--K must satisfy 1 <= K < D (Lemma D.2: each query attends to K of the D "
                         f"tokens), got D={D}, K={K}")
    if D <= 2 * K:
        raise UsageError(f"--D must exceed 2K (Lemmas D.13-D.16: p(0) = 1/D must lie below the threshold "
                         f"1/(2K) of T*, so that T* > 0), got D={D}, K={K}")


def _eta_limit(v: ProveOptions, kappa: float, D: int | None = None):
    """eta_limit (an exact Fraction) of the instance's configuration (at ``D``, default ``v.D``)."""
    from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, eta_limit_fraction

    return eta_limit_fraction(TeacherConfig(D=v.D if D is None else D, K=v.K, activation=v.activation,
                                            kappa=kappa if v.activation == "leaky" else 0.0))


BOX_LABELS = ("Lemma D.4", "Lemma D.5", "Lemma D.8", "Lemma D.9", "Lemma D.9 (increment)", "Lemma D.10",
              "Lemma D.11", "Lemma D.12", "Lemma D.13 (attention)", "Lemma D.13 (C1 step)", "Lemma D.16",
              "Lemma D.17 (C1 band)", "Lemma D.18", "Lemma D.19", "Lemma D.13 (t1)", "Lemma D.17")   # an --eta range
RANGE_ONLY_LABELS = ("Lemma D.13 (t1)", "Lemma D.17")   # t1, T* = Theta(1/eta): about every eta, never one instance


def box_hypotheses(v: ProveOptions):
    """The :class:`~rdyn.verification.proofs.eta_box.EtaBox` of an ``--eta LO:HI`` run (at ``--D LO:HI``: the
    configuration at D = LO) and the range's last D, after the papers' hypotheses are checked for every eta and
    every D of the box (UsageError naming the one that fails): the sizes as for one instance (D > 2K at the
    range's LO), at most :data:`~rdyn.options.table.D_RANGE_MAX` values of D, a finite D range (``HI <
    eta_limit(D)`` fails for large D: ``D eta_limit(D)`` is a constant), ``HI < eta_limit(D)`` at every D, and
    ``--statement`` one of :data:`BOX_LABELS`."""
    from rdyn.options.table import D_RANGE_MAX
    from rdyn.verification.proofs.eta_box import EtaBox

    d_lo, d_hi = v.D if isinstance(v.D, tuple) else (v.D, v.D)
    _check_sizes(d_lo, v.K)
    kappa = 0.1 if v.kappa is None else v.kappa
    if not isinstance(v.eta, tuple):
        raise TypeError("box_hypotheses needs an --eta range")
    lo, hi = v.eta
    if d_hi is None:
        raise UsageError(_unbounded_d(v, kappa, d_lo, lo, hi))
    if d_hi - d_lo + 1 > D_RANGE_MAX:
        raise UsageError(f"--D {d_lo}:{d_hi} has {d_hi - d_lo + 1} values of D, more than {D_RANGE_MAX} (each D is "
                         f"its own box proof of seconds to minutes): split the range")
    for D in range(d_lo, d_hi + 1):
        _check_eta_below_limit(v, kappa, D, lo, hi)
    for label in v.statement or ():
        if label not in BOX_LABELS:
            raise UsageError(f"--statement {label!r} is not decided over an --eta range (only "
                             f"{', '.join(repr(x) for x in BOX_LABELS)}; the others need an instance's trajectory: "
                             f"give one --eta)")
    return EtaBox(D=d_lo, K=v.K, activation=v.activation, kappa=kappa if v.activation == "leaky" else 0.0,
                  vstar_norm2=v.vstar_norm2, logit_scale=v.logit_scale, lo=float(lo), hi=float(hi)), d_hi


def _check_eta_below_limit(v: ProveOptions, kappa: float, D: int, lo: float, hi: float) -> None:
    limit = _eta_limit(v, kappa, D)
    if Fraction(repr(float(hi))) >= limit:
        at = f" at D = {D}" if isinstance(v.D, tuple) else ""
        raise UsageError(f"--eta {lo!r}:{hi!r} reaches outside the papers' hypotheses{at}: every eta of the range must "
                         f"lie below eta_limit = {float(limit):.6g} (the C1 update contracts at every attention level)")


def _unbounded_d(v: ProveOptions, kappa: float, d_lo: int, lo: float, hi: float) -> str:
    """Why ``--D LO:`` is refused: ``D eta_limit(D)`` is a constant c, so ``HI < eta_limit(D)`` fails at
    ``D = ceil(c/HI)``, checked exactly there (the witness is a D of the range)."""
    c = _eta_limit(v, kappa, d_lo) * d_lo
    witness = max(d_lo, math.ceil(c / Fraction(repr(float(hi)))))
    limit = _eta_limit(v, kappa, witness)
    where = (f" at D = {witness} eta_limit = {float(limit):.6g} <= HI, and eta_limit(D) falls like 1/D; "
             if Fraction(repr(float(hi))) >= limit else " ")
    return (f"--D {d_lo}: (every D >= {d_lo}) with --eta {lo!r}:{hi!r} reaches outside the papers' "
            f"hypotheses:{where}no fixed step-size range lies below eta_limit(D) for every D; omit --eta (every "
            f"eta <= K/D, scaled with D: the late phase for every D >= {d_lo}) or give a finite range --D {d_lo}:HI")


ALL_D_LABELS = ("Lemma D.18", "Lemma D.19")   # the statements --D LO: decides (without --eta)


def all_d_hypotheses(v: ProveOptions):
    """The :class:`~rdyn.verification.proofs.all_d.AllD` of ``--D LO:`` without ``--eta``, after the papers'
    hypotheses are checked (UsageError naming the one that fails): D > 2K at LO (then ``K/(D - K) <= 1`` at every
    D, which the chart's ``alpha >= 0`` uses), logits/D (the chart is derived for it), and ``--statement`` one of
    :data:`ALL_D_LABELS`."""
    from rdyn.verification.proofs.all_d import AllD

    if not isinstance(v.D, tuple) or v.D[1] is not None:
        raise TypeError("all_d_hypotheses takes --D LO: (every D >= LO)")
    d_lo = v.D[0]
    _check_sizes(d_lo, v.K)
    if v.eta is not None:
        raise UsageError(f"--D {d_lo}: (every D >= {d_lo}) decides every eta with eta D <= K at once (the step size "
                         f"scaled with D); omit --eta, or give one D, or a finite range --D {d_lo}:HI with an --eta "
                         f"range")
    if v.logit_scale != "D":
        raise UsageError(f"--D {d_lo}: (every D >= {d_lo}) is decided for --logit-scale D only (the late phase's "
                         f"chart is derived for logits/D); give --logit-scale D or a finite range --D {d_lo}:HI with "
                         f"an --eta range")
    for label in v.statement or ():
        if label not in ALL_D_LABELS:
            raise UsageError(f"--statement {label!r} is not decided for every D at once (only "
                             f"{', '.join(repr(x) for x in ALL_D_LABELS)}); give a finite range --D {d_lo}:HI with an "
                             f"--eta range, or one D")
    kappa = 0.1 if v.kappa is None else v.kappa
    return AllD(d_lo=d_lo, K=v.K, activation=v.activation, kappa=kappa if v.activation == "leaky" else 0.0,
                vstar_norm2=v.vstar_norm2)


def run_all_d(v: ProveOptions, note=None):
    """``rdyn prove --D LO:`` without ``--eta``: :mod:`rdyn.verification.proofs.all_d` (Lemma D.19 corrected and
    the lag lemma on the late-phase band, for every D >= LO and every eta <= K/D; Lemma D.19 itself undecided: the
    entry into the band at T* is not shown for every D)."""
    from rdyn.result import Result
    from rdyn.verification.proofs import all_d

    cfg = all_d_hypotheses(v)
    if note is not None:
        note(f"proving on the late-phase band for every D >= {cfg.d_lo} and every eta <= K/D (one chart with "
             f"y = sqrt(K/(D - K)) from 0; seconds)")
    progress = None if note is None else (lambda boxes: note(f"{boxes} boxes"))
    report = all_d.prove(cfg, labels=v.statement, max_boxes=v.max_boxes, progress=progress)
    return Result(report.to_dict(), None, detail={"report": report})


class RangeInterrupted(KeyboardInterrupt):
    """``rdyn prove --eta LO:HI`` (and ``--D LO:HI``) stopped by SIGINT/SIGTERM: ``result`` holds every eta
    sub-box (and every D) decided before it; the rest are open boxes ("complete": false). Also ``--paper B
    --steps N``: ``result`` holds the statement at the steps certified before the signal."""

    def __init__(self, result):
        super().__init__("interrupted")
        self.result = result


def run_box(v: ProveOptions, note=None):
    """``rdyn prove --eta LO:HI``: the box proof of :mod:`rdyn.verification.proofs.eta_box`."""
    from rdyn.result import Result
    from rdyn.verification.proofs import eta_box

    cfg, d_hi = box_hypotheses(v)
    progress = None if note is None else (lambda boxes: note(f"{boxes} boxes") if boxes % 50000 == 0 else None)
    t0 = time.perf_counter()
    in_progress: list = []   # the eta sub-boxes final so far of the D being proved: (D, BoxProof, Tube)

    def interrupted(decided):   # keep every sub-box decided; the rest open boxes ("complete": false)
        seconds = time.perf_counter() - t0
        if in_progress:
            at = eta_box.EtaBox(**{**cfg.__dict__, "D": in_progress[0][0]})
            decided = decided + [eta_box.box_report(at, [(p, t) for _, p, t in in_progress], v.statement, seconds,
                                                    interrupted=True)]
        report = (eta_box.range_report(cfg, d_hi, decided, v.statement, seconds, interrupted=True)
                  if isinstance(v.D, tuple) else
                  decided[0] if decided else eta_box.box_report(cfg, [], v.statement, seconds, interrupted=True))
        return RangeInterrupted(Result(report.to_dict(), None, detail={"report": report}))

    def box_done(D, proof, tube):
        in_progress.append((D, proof, tube))

    if not isinstance(v.D, tuple):
        if note is not None:
            note(f"proving for every eta in ({cfg.lo!r}, {cfg.hi!r}] (a tube of the whole trajectory; seconds, a few "
                 f"minutes at most within --max-boxes)")
        try:
            report = eta_box.prove(cfg, labels=v.statement, max_boxes=v.max_boxes, progress=progress,
                                   done=lambda p, t: box_done(cfg.D, p, t))
        except KeyboardInterrupt as exc:
            raise interrupted([]) from exc
        return Result(report.to_dict(), None, detail={"report": report})
    n = d_hi - cfg.D + 1
    if note is not None:
        note(f"proving for every D in [{cfg.D}, {d_hi}] and every eta in ({cfg.lo!r}, {cfg.hi!r}]: {n} tubes, one per "
             f"D (each seconds, a few minutes at most within --max-boxes)")

    decided = []

    def done(D, rep):
        in_progress.clear()   # first: a signal in between loses the sub-boxes of D, never counts them twice
        decided.append(rep)
        if note is not None:
            verdicts = [r.verdict for r in rep.results]
            summary = ("certified" if all(x == "certified" for x in verdicts)
                       else f"{verdicts.count('undecided')} undecided")
            note(f"D = {D} ({D - cfg.D + 1} of {n}): {summary}, {rep.seconds:.1f} s")
    try:
        report = eta_box.prove_d_range(cfg, d_hi, labels=v.statement, max_boxes=v.max_boxes, progress=progress,
                                       done=done, box_done=box_done)
    except KeyboardInterrupt as exc:
        raise interrupted(decided) from exc
    return Result(report.to_dict(), None, detail={"report": report})


def run(options_: ProveOptions, progress=None, grid_progress=None, note=None):
    if options_.paper == "B":
        from rdyn.api._prove_b import run_b

        return run_b(options_, note)
    from rdyn.result import Result

    only_range = [label for label in options_.statement or () if label in RANGE_ONLY_LABELS]
    if only_range and not isinstance(options_.eta, tuple):
        raise UsageError(f"--statement {only_range[0]!r} is decided over an --eta range only (Theta(1/eta) is a "
                         f"statement about every step size at once: give --eta LO:HI)")
    if options_.grid is not None:
        return run_grid(options_, grid_progress, note)
    if isinstance(options_.eta, tuple):
        return run_box(options_, note)
    if isinstance(options_.D, tuple):   # --D LO: without --eta (the options refuse LO:HI without an --eta range)
        return run_all_d(options_, note)
    from rdyn.verification.proofs.engine import Instance, prove as engine_prove

    v = hypotheses(options_)
    inst = Instance(D=v["D"], K=v["K"], activation=v["activation"],
                    kappa=v["kappa"] if v["activation"] == "leaky" else 0.0,
                    vstar_norm2=v["vstar_norm2"], eta=v["eta"], logit_scale=v["logit_scale"])
    from rdyn.api._common import checkpoint_errors

    if v["resume"] is None:   # the checkpoint's options passed these checks when it was written
        estimate = budget_plan(v, inst)   # a run that cannot be honoured: refused before any work
        if progress is not None:   # the command line: the time estimate first
            from rdyn.run_time import announce

            announce(estimate, quiet=False)
    with checkpoint_errors():
        report = engine_prove(inst, labels=v["statement"], max_steps=v["max_steps"], max_boxes=v["max_boxes"],
                              float_route=v["route"] == "float", progress=progress, checkpoint=v["checkpoint"],
                              checkpoint_every=60.0 if v["checkpoint_every"] is None else v["checkpoint_every"],
                              resume=v["resume"], exact_budget=True)
    data = report.to_dict()
    data["instance"]["paper_conditions"] = v["paper_conditions"]
    return Result(data, None, detail={"report": report})


def budget_plan(v: dict, inst):
    """The budgets of one instance, checked before any certified work against its float64 T*
    (:func:`rdyn.run_time.prove_tstar`): UsageError (one line, naming the option that would change
    it) when the certified iteration would stop short of T0 (T* not finite, or T0 beyond its cap of
    1e9 steps: ``--eta``) or ``--max-steps`` is below T0 (the region needs the state at T0).
    Returns the time estimate."""
    from rdyn.run_time import PROVE_HARD_CAP, _duration, prove_estimate, prove_tstar
    from rdyn.verification.proofs.engine import default_T0

    T_star, how = prove_tstar(inst.config())
    if v["eta_given"]:
        which = f"--eta {v['eta']!r}"
    else:
        which = f"--D {v['D']} --K {v['K']} (default --eta {v['eta']:.3g}, the papers' condition)"
    fix = f"give a larger --eta (below eta_limit = {v['eta_limit']:.6g})" + (" or a smaller --D" if which[2] == "D"
                                                                            else "")
    if T_star is None:
        raise UsageError(f"{which}: T* is over the iteration's cap of {PROVE_HARD_CAP:.0e} certified steps "
                         f"({how}); {fix}")
    T0 = default_T0(int(T_star))   # not capped (run_time.prove_T0 is): the cap is checked here
    approx = "" if how == "float64" else "about "
    if T0 > PROVE_HARD_CAP:
        raise UsageError(f"{which}: T* is about {T_star:.3g} steps ({how.replace('the ', '')}), beyond the certified "
                         f"iteration's cap of {PROVE_HARD_CAP:.0e} steps (about "
                         f"{_duration(prove_estimate([PROVE_HARD_CAP], route=v['route']).seconds)}): it would stop "
                         f"short of T0; {fix}")
    if v["max_steps"] is not None and v["max_steps"] < T0:
        raise UsageError(f"--max-steps {v['max_steps']} is below T0 = {approx}{T0} (T* = {approx}{int(T_star)} from "
                         f"{how}, plus max(1000, T*/100)), the steps needed to reach the invariant region; raise it or "
                         f"omit it")
    return prove_estimate([T_star], route=v["route"])


@contextlib.contextmanager
def _cluster(address, module: str):
    """The checked ``distributed.Client`` for ``--scheduler`` (None without one): the cluster's
    one-line SchedulerError (reduced_dynamics/runs/dask_client.py) becomes a
    UsageError (exit 2), raised before any work."""
    if address is None:
        yield None
        return
    from rdyn.reduced_dynamics.runs.dask_client import SchedulerError, connect

    try:
        with connect(address, (module,)) as client:
            yield client
    except SchedulerError as exc:
        raise UsageError(f"--scheduler {address}: {exc}") from None


GRID_OPTIONS = ("statement", "max_steps", "max_boxes", "max_tstar", "route")   # what a sweep file's rows depend on


def grid_options(v: ProveOptions) -> dict:
    return {"statement": None if v.statement is None else sorted(v.statement), "max_steps": v.max_steps,
            "max_boxes": v.max_boxes, "max_tstar": v.max_tstar, "route": v.route}


def load_sweep_file(path, v: ProveOptions) -> dict:
    """``--resume FILE`` with ``--grid``: the sweep file (``--out`` of an earlier, interrupted run), checked
    to be for this grid and these options (UsageError naming the one that differs). Returns it."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"--resume {path}: not a proof-sweep file of rdyn prove --grid --out "
                         f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None
    if not isinstance(data, dict) or not isinstance(data.get("instances"), list) or "grid" not in data:
        raise UsageError(f"--resume {path}: not a proof-sweep file of rdyn prove --grid --out (with --grid, "
                         "--resume takes the --out file of an interrupted sweep; a --checkpoint file resumes one "
                         "instance, without --grid)")
    if data["grid"] != v.grid:
        raise UsageError(f"--resume {path} holds the sweep of --grid {data['grid']!r}, not {v.grid!r}")
    saved = data.get("options")
    if not isinstance(saved, dict):
        raise UsageError(f"--resume {path} does not record the sweep's options (written by an older rdyn); rerun "
                         "the grid")
    now = grid_options(v)
    for name in GRID_OPTIONS:
        if saved.get(name, "arb" if name == "route" else None) != now[name]:   # older files: the arb route
            flag = "--" + name.replace("_", "-")

            def shown(x):
                return "(default)" if x is None or (name == "max_boxes" and x == 200000) else repr(x)
            raise UsageError(f"--resume {path} was written with {flag} {shown(saved.get(name))}, not "
                             f"{shown(now[name])}; give the same options")
    return data


def plan_grid(points, skipped, v: ProveOptions, note=None):
    """Before any proof: the float64 T* of every instance (:func:`rdyn.run_time.prove_grid_tstars`),
    and the instances that cannot be decided within the budgets moved to ``skipped`` with the reason
    (T* over ``--max-tstar``; T0 beyond the iteration's cap of 1e9 steps; T0 over ``--max-steps``,
    which is honoured exactly). Returns (kept points, their T*). UsageError when every instance is
    skipped, naming the option that would change it."""
    from rdyn.run_time import PROVE_HARD_CAP, prove_grid_tstars
    from rdyn.verification.proofs.engine import default_T0

    Ts = prove_grid_tstars([p.instance.config() for p in points], cap=v.max_tstar, progress=note)
    kept, kept_T = [], []
    why: dict[str, str] = {}
    for p, (T, how) in zip(points, Ts):
        reason = option = None
        if T is None and how == "cap":
            reason, option = f"float64 T* > --max-tstar {v.max_tstar} (cost cap)", "--max-tstar"
        elif T is None:
            reason, option = f"{how}: the certified iteration would stop short of T*", "eta"
        else:
            T0 = default_T0(int(T))
            approx = "" if how == "float64" else "about "
            if v.max_tstar is not None and T > v.max_tstar:
                reason, option = f"T* {approx or '= '}{T:.6g} ({how}) > --max-tstar {v.max_tstar} (cost cap)", \
                    "--max-tstar"
            elif T0 > PROVE_HARD_CAP:
                reason, option = (f"T* {approx or '= '}{T:.3g} ({how}): T0 is beyond the certified iteration's cap "
                                  f"of {PROVE_HARD_CAP:.0e} steps; the proof would stop short of T0", "eta")
            elif v.max_steps is not None and T0 > v.max_steps:
                reason, option = (f"T0 = {approx}{T0} > --max-steps {v.max_steps} (the steps needed to reach the "
                                  f"invariant region)", "--max-steps")
        if reason is None:
            kept.append(p)
            kept_T.append(T)
            continue
        d = p.instance.to_dict()
        skipped.append({"point": {k: d[k] for k in ("D", "K", "activation", "kappa", "vstar_norm2", "eta",
                                                     "logit_scale")} | {"eta_rule": p.eta_rule}, "reason": reason})
        why.setdefault(option or "eta", reason)
    if points and not kept:
        option, reason = next(iter(why.items()))
        fix = {"--max-tstar": "raise --max-tstar", "--max-steps": "raise --max-steps or omit it",
               "eta": "give larger eta values in the grid (eta=half_limit)"}[option]
        raise UsageError(f"--grid: every instance is skipped before any work (e.g. {reason}); {fix}")
    return kept, kept_T


def run_grid(v: ProveOptions, progress=None, note=None):
    """``rdyn prove --grid``: every instance of the grid (verify/proofs/sweep.py; docs/proofs.md,
    "Proof sweep"). Before any proof: the grid is parsed (its size and every value were checked
    by the option table), every instance's float64 T* computed and the instances the budgets
    cannot take skipped (:func:`plan_grid`), and ``note(text)`` (the command line: a line on stderr)
    gets the time estimate. ``progress(i, n, row)`` after each instance. With ``out`` the JSON
    object is rewritten (whole, atomically) after every instance, with ``"complete": false`` until
    the last; with ``resume`` (a sweep file) the instances it holds are kept and not proved again
    (``out`` defaults to it). An ``out`` that cannot be written (a full disk) does not stop the
    sweep: the result is rescued at the end (``write_rescued``)."""
    from rdyn.options.engine_errors import usage_errors
    from rdyn.options import check_output_path
    from rdyn.output import warn, write_rescued, write_text_atomic
    from rdyn.result import Result
    from rdyn.verification.proofs import sweep as sw

    t_start = time.perf_counter()
    with usage_errors():
        points, skipped = sw.parse(v.grid)            # bad syntax or values: refused before any work
    if not points:
        raise UsageError("--grid has no instance inside the papers' hypotheses (1 <= K < D, D > 2K, "
                         "eta < eta_limit); every point is skipped")
    previous = None
    out = v.out
    if v.resume is not None:
        previous = load_sweep_file(v.resume, v)
        if out is None:
            out = v.resume
            check_output_path("--resume", out)   # rewritten after every instance
    with _cluster(v.scheduler, sw.__name__) as client:   # an unusable --scheduler: refused before any work
        points, Ts = plan_grid(points, skipped, v, note)
        done_rows = {}
        if previous is not None:
            by_key = {sw.instance_key(r["instance"]): r for r in previous["instances"]
                      if isinstance(r, dict) and isinstance(r.get("instance"), dict) and r.get("error") is None}
            done_rows = {i: by_key[sw.point_key(p)] for i, p in enumerate(points) if sw.point_key(p) in by_key}
        if note is not None:
            from rdyn.run_time import ANNOUNCE_ABOVE_S, prove_estimate

            todo_T = [T for i, T in enumerate(Ts) if i not in done_rows]
            head = (f"{len(points)} instance{'s' if len(points) != 1 else ''} to prove" + (f" ({len(done_rows)} already in {v.resume})" if done_rows
                                                            else "") + f", {len(skipped)} skipped")
            if todo_T:
                est = prove_estimate(todo_T, route=v.route)
                note(f"{head}; " + (est.line().split(": ", 1)[1] if est.seconds > ANNOUNCE_ABOVE_S else
                                    f"about {est.seconds:.0f} s"))
            else:
                note(head)
        base = 0.0 if previous is None else float(previous.get("seconds") or 0.0)
        failed: list[OSError] = []   # the first write error of --out (reported once; the result is rescued at the end)
        state = {"rows": [done_rows[i] for i in sorted(done_rows)]}

        def result_of(rows):
            return sw.result(v.grid, points, skipped, rows, base + time.perf_counter() - t_start, v.max_tstar,
                             options=grid_options(v))

        def on_row(rows):
            state["rows"] = rows
            if out is None or failed:
                return
            try:
                write_text_atomic(out, sw.dumps(result_of(rows)))
            except OSError as exc:
                failed.append(exc)
                warn(f"cannot write --out {out} ({exc.strerror or exc}); the sweep goes on and its result is "
                     "saved elsewhere at the end")

        try:
            rows = sw.run(points, v.statement, max_steps=v.max_steps, max_boxes=v.max_boxes, scheduler=client,
                          progress=progress, on_row=on_row, exact_budget=True, done_rows=done_rows,
                          float_route=v.route == "float")
        except KeyboardInterrupt:   # keep every finished row, marked partial ("complete": false)
            if out is not None:
                text = sw.dumps(result_of(state["rows"]))
                write_rescued("--out", out, lambda p: write_text_atomic(p, text))
            raise
    data = result_of(rows)
    if out is not None:
        text = sw.dumps(data)
        write_rescued("--out" if v.out is not None else "--resume", out, lambda p: write_text_atomic(p, text),
                      None if v.json else text)
    certified = all(x["verdict"] in ("proved", "certified") for r in data["instances"]
                    for x in r["statements"] if x["form"] == "corrected") and data["counts"]["errors"] == 0
    return Result(data, None, detail={"markdown": sw.markdown_table(data), "all_corrected_certified": certified,
                                      "out": out})

