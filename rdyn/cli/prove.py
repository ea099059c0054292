"""Computer-assisted proofs of Model A's induction statements for one instance (docs/proofs.md).

For each statement (seed 000, Appendix D: Lemmas D.4, D.5, D.8-D.12 and D.16 for all t, D.13's
attention bound and C1 step up to t1, D.15, D.17's C1 band and D.15's proof step after t1, Lemmas
D.18 and D.19 after T*, each side, printed and corrected): steps up to T0 are decided by the certified arb iteration of the collapsed map (radii ~1e-45 at
200 bits; from t1 to T0 some statements a block of steps at a time); steps t >= T0 by an invariant region in e = exp(-(C2+C3)/scale),
w = (C1/C1* - 1)/e^3 proved by interval branch and bound. Verdicts:
  certified   rigorous for this instance (certificate: T0, region, boxes, min_margin, seconds)
  refuted     a certified counterexample (step, state, lhs, rhs, ratio to 40 digits)
  undecided   a budget ran out (reason says where); never a pass
  proved      a symbolic identity for every D > K (Lemma D.15's proof step, corrected)
--max-steps N is honoured exactly (the iteration stops at step N at the latest); a budget below
T0, or an instance whose T0 is beyond the iteration's cap of 1e9 steps, is refused before any work
(estimated from the float64 T*), and the time estimate is printed first.
With --checkpoint FILE the iteration's state (and the region proof) is saved periodically, at the
end and on Ctrl-C (exit 130, printing the command that resumes); --resume FILE continues it,
keeping everything certified before the interruption.
With --grid GRID every instance of the grid is proved in turn (or on a Dask --scheduler, checked
before any task), and the table of verdict counts per statement is printed (--json: every
instance's verdicts, the skipped points and the table; docs/proofs.md, "Proof sweep"); --out FILE
is rewritten after every instance ("complete": false until the last), so an interrupted sweep keeps
what it proved, and --resume FILE continues it. Before any proof the float64 T* of every instance
gives the time estimate; instances over --max-tstar, with T0 over --max-steps or beyond the cap
are skipped, with the reason.
--eta LO:HI (LO >= 0) proves the lag lemma and the corrected Lemmas D.18 and D.19 for every eta in
(LO, HI] at once, without iterating: an invariant tube in (e, w) that holds the whole trajectory from
step 1, shown by branch and bound with eta a ball (docs/proofs.md, "Every step size at once"); the
certificate names the box, the sub-boxes proved and any left open with why. With it, --D LO:HI proves
the same for every D of the range (each D its own tube; at most 256 values; Ctrl-C prints the D decided
so far); --D LO: (every D >= LO) is refused: eta_limit(D) falls like 1/D, so no fixed eta range lies
inside the hypotheses for every D.
Exit status 0 when every corrected statement is certified, 1 otherwise, 2 for bad input.

--paper B (seed 003; docs/proofs.md, "Model B"): --model noln (default): Theorem B.3 at the
printed and the corrected eta_max for every S0 = beta_0^2 in --s0 (loss descent, Part 1's
descent inequality, gamma monotone), by exact step 0 and interval branch and bound over
(S0, g = gamma/gamma*, delta = (beta^2 - alpha^2)/gamma*); gamma* (Theorem 4.2) by a Krawczyk
test with the contraction bound |g'| < 1; R* (Theorem 4.6 (2)) with --data spectrum. --model ln
or looped: the contraction factor R = (1 + gamma l_(r+1))/(1 + gamma l_1) over --gamma, or at the
gamma_T of --steps GD steps certified by arb iteration (spectra with two or more distinct eigenvalues).
--eta-fraction LO,HI (noln): Theorem B.3 for every eta = theta eta_max(S0), theta in [LO, HI], by
branch and bound over (S0, theta) boxes; a refuted printed statement also reports the theta below
which it is certified and the lowest theta of its counterexamples.
"""
from __future__ import annotations

import sys

from rdyn.option_types import ProveOptions

NAME = "prove"


def run(values: ProveOptions, args) -> int:
    from rdyn.api._prove import RangeInterrupted, run as api_run

    def progress(t):
        if t % 1000000 == 0:
            print(f"rdyn prove: step {t}", file=sys.stderr)

    if values.paper == "B":
        return run_b(values)

    finished = [0, None]   # instances proved so far, of n

    def grid_progress(i, n, row):
        finished[:] = [i, n]
        inst = row["instance"]
        what = row["error"] or f"T* = {row['T_star']}, {row['seconds']} s"
        print(f"rdyn prove: {i}/{n} D={inst['D']} K={inst['K']} {inst['activation']} eta={inst['eta_rule']}: {what}",
              file=sys.stderr)

    def note(text):
        print(f"rdyn prove: {text}", file=sys.stderr, flush=True)

    try:
        res = api_run(values, progress=progress, grid_progress=grid_progress, note=note)
    except KeyboardInterrupt as exc:
        if values.grid is not None:   # no checkpoint with --grid: --out holds the rows done, marked partial
            i, n = finished
            out = values.out if values.out is not None else values.resume
            if out is not None:
                kept = (f"; {out} holds their rows (\"complete\": false); continue with: "
                        f"{grid_resume_command(sys.argv, str(out))}")
            else:
                kept = "; --out FILE keeps the rows of an interrupted sweep"
            print(f"rdyn prove: interrupted after {i}{'' if n is None else f' of {n}'} instances{kept}",
                  file=sys.stderr)
            return 130
        if isinstance(exc, RangeInterrupted):   # --eta LO:HI: every eta sub-box (and D) decided before the signal
            _print_box(exc.result, exc.result.to_dict(), values.json)
            print(f"rdyn {NAME}: interrupted ({_kept(exc.result.detail['report'])})", file=sys.stderr)
            return 130
        if isinstance(values.D, tuple):   # --D LO: without --eta: --checkpoint does not apply to a box
            print(f"rdyn {NAME}: interrupted (a proof over every D >= LO keeps no partial state; it takes "
                  "seconds: run it again)", file=sys.stderr)
            return 130
        from rdyn.cli.teacher import interrupted

        return interrupted(NAME, exc, values.checkpoint)
    data = res.to_dict()
    if values.grid is not None:
        c = data["counts"]
        print(f"rdyn prove: {data['progress']['done']} of {c['instances']} instances, {c['skipped']} skipped, "
              f"{c['errors']} errors, "
              f"{data['seconds']:.1f} s", file=sys.stderr)
        print(res.to_json() if values.json else res.detail["markdown"])
        return 0 if res.detail["all_corrected_certified"] else 1
    if data.get("box") is not None:
        return _print_box(res, data, values.json)
    print(f"rdyn prove: {data['seconds']:.1f} s (T* = {data['T_star']})", file=sys.stderr)
    if values.json:
        print(res.to_json())
    else:
        for r in data["statements"] + [dict(x, form="superseded") for x in data["superseded"]]:
            head = f"[{r['verdict']:10s}] {r['label']} {r['form']} {r['side'] or ''}: {r['statement']}"
            print(head)
            if r["certificate"]:
                c = r["certificate"]
                region = ("" if c["margin_on_region"] is None
                          else f", margin on region = {c['margin_on_region']:.6g}")
                blocks = ("" if not c.get("blocks")
                          else f", {c['blocks']} blocks (margin {c['margin_on_blocks']:.6g})")
                print(f"{'':13s}T0 = {c['T0']}, boxes = {c['boxes']}, min_margin = {c['min_margin']:.6g}"
                      f"{region}{blocks}, {c['seconds']} s")
                if c.get("constants") and c["constants"].get("q_lag"):   # the lag lemma's constants
                    k = c["constants"]
                    print(f"{'':13s}c_lag = {k['c_lag']!r}, q_lag in [{k['q_lag'][0]!r}, {k['q_lag'][1]!r}]")
            if r["counterexample"]:
                c = r["counterexample"]
                print(f"{'':13s}step {c['step']}: lhs = {c['lhs']}, rhs = {c['rhs']}, ratio = {c['ratio']}")
            if r["reason"]:
                print(f"{'':13s}{r['reason']}")
    report = res.detail["report"]
    return 0 if report.all_corrected_certified else 1


def _kept(report) -> str:
    """What an interrupted ``--eta LO:HI`` run keeps (printed above, "complete": false) and what to run again."""
    from rdyn.verification.proofs.eta_box import BoxReport

    if isinstance(report, BoxReport):   # one D: the eta sub-boxes final before the signal
        n = len(report.proofs)
        kept = f"{n} eta sub-box{'' if n == 1 else 'es'} decided above" if n else "no eta sub-box was decided"
        return f"{kept}; the rest of the box is listed open: run it again"
    whole = [r for r in report.reports if not r.interrupted]
    d_lo, d_next = report.cfg.D, report.cfg.D + len(whole)
    kept = f"D = {d_lo}..{d_next - 1} are decided above" if whole else "no D was decided"
    if len(report.reports) > len(whole):
        kept += f", D = {d_next} in part ({len(report.reports[-1].proofs)} eta sub-boxes)"
    return f"{kept}; the rest of the range is listed open: run it again for --D {d_next}:{report.d_hi}"


def _print_box(res, data: dict, as_json: bool) -> int:
    """The result of ``--eta LO:HI`` (and ``--D LO:HI``): each statement for every eta (and D) of the box, with
    its constants."""
    lo, hi = data["box"]["eta"]
    d_lo, d_hi = data["box"]["D"]
    sizes = f"D = {d_lo}" if d_lo == d_hi else f"every D in [{d_lo}, {d_hi}]"
    etas = f"every eta in ({lo!r}, {hi!r}]"
    if d_hi is None:   # --D LO: every D >= LO, every eta <= K/D
        sizes, etas = f"every D >= {d_lo}", f"every eta with eta D <= {data['box']['eta_times_D'][1]!r}"
    print(f"rdyn prove: {data['seconds']:.1f} s ({etas}, {sizes}, "
          f"{data['region']['boxes']} boxes)", file=sys.stderr)
    at = "" if d_lo == d_hi else "D = {D}, "
    if as_json:
        print(res.to_json())
    else:
        for r in data["statements"]:
            print(f"[{r['verdict']:10s}] {r['label']} {r['form']} {r['side'] or ''}: {r['statement']}")
            c = r["certificate"]
            for b in c["proved_boxes"]:
                k = b["constants"]
                margin = "" if b["margin_on_region"] is None else f", margin on region = {b['margin_on_region']:.6g}"
                if d_hi is None:
                    print(f"{'':13s}{sizes}, {etas}: {b['boxes']} boxes{margin}; band omega in "
                          f"[{k['omega_lo']!r}, {k['omega_hi']!r}], c_lag = {k['c_lag']!r}, q = {k['q']!r}")
                    continue
                what = (f"eta t1 in [{k['eta_t1'][0]!r}, {k['eta_t1'][1]!r}]" if r["key"] == "D13.range.t1" else
                        f"eta T* in [{k['eta_tstar'][0]!r}, {k['eta_tstar'][1]!r}]" if r["key"] == "D17.range.tstar"
                        else f"c_lag = {k['c_lag']!r}, q_lag in [{k['q_lag'][0]!r}, {k['q_lag'][1]!r}]")
                print(f"{'':13s}{at.format(D=b['D'][0])}every eta in ({b['eta'][0]!r}, {b['eta'][1]!r}]: "
                      f"{b['boxes']} boxes{margin}; {what}")
            for b in c["undecided_boxes"]:
                where = "" if d_lo == d_hi else (f"D >= {b['D'][0]}, " if b["D"][1] is None else
                                                 f"D = {b['D'][0]}, " if b["D"][0] == b["D"][1]
                                                 else f"D in [{b['D'][0]}, {b['D'][1]}], ")
                print(f"{'':13s}open: {where}eta in ({b['eta'][0]!r}, {b['eta'][1]!r}]: {b['reason']}")
    return 0 if res.detail["report"].all_corrected_certified else 1


def grid_resume_command(argv, out: str) -> str:
    """The command that continues an interrupted sweep: the same arguments with ``--resume OUT``
    and without ``--out OUT`` (``--resume FILE`` rewrites FILE; an --out naming the file that
    --resume reads is refused)."""
    from rdyn.reduced_dynamics.runs.checkpoint import resume_command

    kept, skip = [], False
    for i, token in enumerate(argv):
        if skip:
            skip = False
            continue
        if token == "--out" and i + 1 < len(argv) and argv[i + 1] == out:
            skip = True
            continue
        if token == f"--out={out}":
            continue
        kept.append(token)
    return resume_command(kept, NAME, out)


def run_b(values: ProveOptions) -> int:
    """--paper B: the Model B statements (text: one line per statement and its certificate,
    counterexample or reason). SIGINT/SIGTERM during --steps prints the statement at the steps
    certified before it ("complete": false) and exits 130 (143 for SIGTERM)."""
    from rdyn.api._prove import RangeInterrupted, run as api_run
    from rdyn.api._prove_b import all_certified

    def note(text):
        print(f"rdyn prove --paper B: {text}", file=sys.stderr, flush=True)

    try:
        res = api_run(values, note=note)
    except RangeInterrupted as stop:
        data = stop.result.to_dict()
        _print_b(stop.result, data, values.json)
        print(f"rdyn prove --paper B: interrupted after {data['steps_done']} of {values.steps} certified GD steps "
              f"(the statement at step {data['steps_done']} is printed, \"complete\": false; no checkpoint: run "
              f"again for all {values.steps})", file=sys.stderr)
        return 130
    data = res.to_dict()
    print(f"rdyn prove --paper B: {data['seconds']:.1f} s", file=sys.stderr)
    _print_b(res, data, values.json)
    return 0 if all_certified(data) else 1


def _print_b(res, data: dict, as_json: bool) -> None:
    """The Model B report on stdout: its JSON, or one line per statement and its certificate,
    counterexample or reason."""
    if as_json:
        print(res.to_json())
        return
    for r in data["statements"]:
        print(f"[{r['verdict']:10s}] {r['label']} {r['form']}: {r['statement']}")
        c = r["certificate"]
        if c:
            keys = [k for k in ("S0", "eta_fraction", "gamma", "steps", "steps_asked",
                                "gamma_T", "increasing", "box", "width", "krawczyk_image",
                                "contraction", "R", "boxes", "s0_boxes", "min_margin", "seconds") if k in c]
            print(f"{'':13s}" + ", ".join(f"{k} = {c[k]}" for k in keys))
        if r["counterexample"]:
            c = r["counterexample"]
            theta = "" if c.get("theta") is None else f", theta = {c['theta']!r}"
            print(f"{'':13s}S0 = {c['S0']}{theta}, step {c['step']}: lhs = {c['lhs']}, rhs = {c['rhs']}, "
                  f"ratio = {c['ratio']}")
            if c.get("theta_failure"):
                print(f"{'':13s}{c['theta_failure']['text']}")
        if r["reason"]:
            print(f"{'':13s}{r['reason']}")
