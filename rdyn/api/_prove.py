"""``rdyn.prove``: computer-assisted proofs of Model A's induction statements for one instance
(rdyn.verification.proofs; docs/proofs.md)."""
from __future__ import annotations

import contextlib

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
    from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, eta_limit_fraction

    D, K = v.D, v.K
    if not 1 <= K < D:
        raise UsageError(f"--K must satisfy 1 <= K < D (Lemma D.2: each query attends to K of the D "
                         f"tokens), got D={D}, K={K}")
    if D <= 2 * K:
        raise UsageError(f"--D must exceed 2K (Lemmas D.13-D.16: p(0) = 1/D must lie below the threshold "
                         f"1/(2K) of T*, so that T* > 0), got D={D}, K={K}")
    kappa = 0.1 if v.kappa is None else v.kappa
    M = v.vstar_norm2
    from rdyn.verification.proofs.sweep import paper_eta

    paper = paper_eta(D, K, M)
    eta = paper if v.eta is None else v.eta
    limit = eta_limit_fraction(TeacherConfig(D=D, K=K, activation=v.activation,
                                             kappa=kappa if v.activation == "leaky" else 0.0))
    from fractions import Fraction

    if Fraction(repr(float(eta))) >= limit:
        raise UsageError(f"--eta {eta!r} is outside the papers' hypotheses: the C1 update must contract at "
                         f"every attention level, eta < eta_limit = {float(limit):.6g} (Lemma D.5 assumes "
                         f"1 - eta D/K >= 0)")
    import dataclasses

    return {**{f.name: getattr(v, f.name) for f in dataclasses.fields(v)}, "kappa": kappa, "eta": eta,
            "paper_conditions": {
        "lemma_D5": eta <= K / D, "lemma_D9": eta * M * D * (D + 1) / (K**3 * (D - K)) <= 1 / D**2}}


def run(options_: ProveOptions, progress=None, grid_progress=None):
    if options_.paper == "B":
        from rdyn.api._prove_b import run_b

        return run_b(options_)
    from rdyn.result import Result

    if options_.grid is not None:
        return run_grid(options_, grid_progress)
    from rdyn.verification.proofs.engine import Instance, prove as engine_prove

    v = hypotheses(options_)
    inst = Instance(D=v["D"], K=v["K"], activation=v["activation"],
                    kappa=v["kappa"] if v["activation"] == "leaky" else 0.0,
                    vstar_norm2=v["vstar_norm2"], eta=v["eta"], logit_scale=v["logit_scale"])
    from rdyn.api._common import checkpoint_errors

    if progress is not None and v["resume"] is None:   # the command line: the time estimate first
        from rdyn.run_time import announce, prove_instance_estimate

        announce(prove_instance_estimate(inst.config()), quiet=False)
    with checkpoint_errors():
        report = engine_prove(inst, labels=v["statement"], max_steps=v["max_steps"], max_boxes=v["max_boxes"],
                              progress=progress, checkpoint=v["checkpoint"],
                              checkpoint_every=60.0 if v["checkpoint_every"] is None else v["checkpoint_every"],
                              resume=v["resume"])
    data = report.to_dict()
    data["instance"]["paper_conditions"] = v["paper_conditions"]
    return Result(data, None, detail={"report": report})


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


def run_grid(v: ProveOptions, progress=None):
    """``rdyn prove --grid``: every instance of the grid (verify/proofs/sweep.py; docs/proofs.md,
    "Proof sweep"). ``progress(i, n, row)`` after each instance. With ``out`` the JSON object is
    rewritten (whole, atomically) after every instance."""
    from rdyn.api._common import usage_errors
    from rdyn.output import write_text_atomic
    from rdyn.result import Result
    from rdyn.verification.proofs import sweep as sw

    with usage_errors():
        points, _ = sw.parse(v.grid)            # bad syntax or values: refused before any work
    if not points:
        raise UsageError("--grid has no instance inside the papers' hypotheses (1 <= K < D, D > 2K, "
                         "eta < eta_limit); every point is skipped")
    on_row = None if v.out is None else (lambda res: write_text_atomic(v.out, sw.dumps(res)))
    with _cluster(v.scheduler, sw.__name__) as client:   # an unusable --scheduler: refused before any work
        on_tstars = None
        if progress is not None:   # the command line: the estimate (T* known only with --max-tstar)
            import sys

            from rdyn.run_time import PROVE_FIXED_S, PROVE_STEP_S, announce, prove_estimate

            def on_tstars(Ts):
                announce(prove_estimate(Ts), quiet=False)
            if v.max_tstar is None:
                print(f"rdyn prove: {len(points)} instances; no time estimate without --max-tstar (each costs "
                      f"about {PROVE_FIXED_S:g} s + {PROVE_STEP_S * 1e6:g} us per step up to T* + T*/100)",
                      file=sys.stderr)
        data = sw.prove_grid(v.grid, v.statement, max_steps=v.max_steps, max_boxes=v.max_boxes,
                             max_tstar=v.max_tstar, scheduler=client, progress=progress, on_row=on_row,
                             on_tstars=on_tstars)
    if v.out is not None:
        write_text_atomic(v.out, sw.dumps(data))
    certified = all(x["verdict"] in ("proved", "certified") for r in data["instances"]
                    for x in r["statements"] if x["form"] == "corrected") and data["counts"]["errors"] == 0
    return Result(data, None, detail={"markdown": sw.markdown_table(data), "all_corrected_certified": certified})
