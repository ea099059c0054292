"""``rdyn.prove(paper="B", ...)``: computer-assisted proofs for Model B (seed 003;
rdyn.verification.proofs.model_b; docs/proofs.md, "Model B")."""
from __future__ import annotations

import math
import time

from rdyn.option_types import ProveOptions
from rdyn.options import integral
from rdyn.output import UsageError, require

MAX_SPECTRUM_ENTRIES = 64      # kappa3's rigorous integral multiplies one factor per distinct level
ETA_FRACTION_MIN = 1e-100      # --eta-fraction LO: the branch and bound's double intervals underflow near 1e-160
# --s0 LO: below about 1e-13 the region's double-precision enclosures no longer decide the S0 boxes near LO
# (measured at the default Task 1 instance: LO = 1e-13 certifies everything in 0.7 s, LO = 1e-14 and below
# split S0 boxes and search trajectories for minutes); 1e-12 keeps a factor 10 of headroom
S0_MIN = 1e-12
# --steps: seconds of CPU per certified GD step (level_F's rigorous integrals, F at the ball's midpoint and F' over
# the ball; bench/bench_prove_b.py on 2 shared cores, 2026-12-07), plus the start (imports, kernels).
# Stick-breaking angles, by levels and model: 1-D for two levels, 9-10 ms (ln) and 8 ms (looped); nested 2-D for
# three, 1.8-2.0 s (ln, spectrum 3,2,1). The Laplace route (every other case) grows with the number r of levels:
# looped, one integral of r factors (4-7 ms at r = 3, 33-37 ms at r = 6: about 6 ms times r); ln, two nested
# integrals over r(r-1)/2 pairs (8-10 s at r = 4: about 0.6 s times r^2)
STICK_BREAKING_STEP_S = {2: {"ln": 0.015, "looped": 0.025}, 3: {"ln": 2.0}}
LAPLACE_STEP_S = {"ln": (0.6, 2), "looped": (0.006, 1)}     # (seconds, power of r)
TRAIN_START_S = 1.0
PROGRESS_EVERY = 1000          # --steps: a progress line every this many steps


def _range(raw, flag: str, default: tuple, *, positive: bool) -> tuple[float, float]:
    """LO,HI (text or a pair) as two finite floats with 0 < LO <= HI (0 <= LO for --gamma)."""
    if raw is None:
        return default
    items = raw.split(",") if isinstance(raw, str) else list(raw)
    try:
        lo, hi = (float(x) for x in items)
    except (TypeError, ValueError):
        raise UsageError(f"{flag} must be two numbers LO,HI, got {raw!r}") from None
    require(math.isfinite(lo) and math.isfinite(hi), f"{flag}: LO and HI must be finite, got {raw!r}")
    require(lo <= hi, f"{flag}: LO must not exceed HI, got {raw!r}")
    require(lo > 0 if positive else lo >= 0, f"{flag}: LO must be {'> 0' if positive else '>= 0'}, got {raw!r}")
    require(hi <= 1e12, f"{flag}: HI must be at most 1e12, got {raw!r}")
    return lo, hi


def instance(v: ProveOptions):
    """Validate the --paper B options (UsageError naming the option or the paper's hypothesis)
    and build the :class:`~rdyn.verification.proofs.model_b.instance.BInstance`."""
    from rdyn.verification.proofs.model_b.contraction import top_levels
    from rdyn.verification.proofs.model_b.instance import BInstance

    model = v.model or "noln"
    data = v.data or ("spectrum" if v.spectrum is not None else "sphere")
    require(v.spectrum is None or data == "spectrum", "--spectrum requires --data spectrum")
    d = 16 if v.d is None else v.d
    spectrum = None
    if data == "spectrum":
        require(v.spectrum is not None, "--data spectrum requires --spectrum m1,...,md")
        raw = v.spectrum
        entries = raw.split(",") if isinstance(raw, str) else list(raw or ())
        parsed = tuple(integral(m) for m in entries)
        require(None not in parsed, f"--spectrum must be integers (m1,...,md), got {raw!r}")
        spectrum = tuple(int(m) for m in parsed if m is not None)
        require(len(spectrum) == d, f"--spectrum has {len(spectrum)} entries, expected d = {d}")
        require(all(0 < m <= 10**6 for m in spectrum), "--spectrum entries must be integers in 1..1000000")
        n = sum(spectrum)
        require(v.n is None or v.n == n, f"--n {v.n} differs from sum(spectrum) = {n}")
    else:
        n = 32 if v.n is None else v.n
        require(n >= d, f"--n ({n}) must be at least --d ({d}) for sphere data")
    target = (v.target or "unnormalized") if model == "noln" else None
    if model == "noln":
        require(target == "unnormalized" or data == "spectrum",
                "--target normalized needs --data spectrum: gamma* = (kappa3 - kappa1)/kappa2 with "
                "kappa3 = E||S a||, which rdyn encloses rigorously only for a fixed spectrum")
        require(spectrum is None or len(set(spectrum)) <= MAX_SPECTRUM_ENTRIES,
                f"--spectrum: at most {MAX_SPECTRUM_ENTRIES} distinct multiplicities for the rigorous kappa3")
        from rdyn.reduced_dynamics.model_b.constants import kappa_exact

        k1, k2 = kappa_exact(data, d, n, spectrum)
        require(k2 > k1, f"kappa2 = kappa1 = {k1} (X with orthonormal columns): gamma* = 0 and gamma_t = 0 for "
                         "all t; Theorem B.3 assumes the non-degenerate case 0 < gamma* < 1 (B.2.2)")
        if target == "normalized":   # gamma* = (kappa3 - kappa1)/kappa2 (0.1 s for the rigorous kappa3)
            import flint

            from rdyn.verification.proofs.model_b.instance import PREC_BITS, kappa3_enclosure, qball

            old, flint.ctx.prec = flint.ctx.prec, PREC_BITS
            try:
                positive = bool(kappa3_enclosure(spectrum) > qball(k1))
            finally:
                flint.ctx.prec = old
            require(positive, "gamma* = (kappa3 - kappa1)/kappa2 is not certainly > 0 for this spectrum; Theorem "
                              "B.3 assumes 0 < gamma* (B.2.2)")
    else:
        require(data == "spectrum", f"--model {model} needs --data spectrum: the contraction factor R = (1 + gamma "
                                    "l_(r+1))/(1 + gamma l_1) is over the eigenvalues of a fixed S")
        require(top_levels(spectrum)[2] is not None, "--spectrum has one distinct eigenvalue: the top eigenspace is "
                                                     "all of R^d and R = 1 (no l_(r+1) < l_1)")
    s0 = _range(v.s0, "--s0", (0.25, 16.0), positive=True)
    require(s0[0] >= S0_MIN, f"--s0: LO must be at least {S0_MIN:g} (below it the region's double-precision "
            f"enclosures no longer decide the S0 boxes, and the branch and bound does not finish), got {v.s0!r}")
    eta_fraction = _range(v.eta_fraction, "--eta-fraction", (1.0, 1.0), positive=True)
    require(eta_fraction[1] <= 1, f"--eta-fraction: HI must be at most 1 (eta = theta eta_max, theta <= 1), "
                                  f"got {v.eta_fraction!r}")
    require(eta_fraction[0] >= ETA_FRACTION_MIN, f"--eta-fraction: LO must be at least {ETA_FRACTION_MIN:g} (k sigma "
            f"~ theta^2 underflows the double-precision enclosures near 1e-160), got {v.eta_fraction!r}")
    gamma = _range(v.gamma, "--gamma", (1.0, 100.0), positive=False) if model != "noln" else None
    L = (10 if v.L is None else v.L) if model == "looped" else None
    return BInstance(model=model, target=target or "unnormalized", data=data, d=d, n=n, spectrum=spectrum, L=L,
                     s0=s0, eta_fraction=eta_fraction, gamma_range=gamma, steps=v.steps,
                     eta=0.1 if v.eta is None else v.eta)


def train_step_seconds(model: str, levels: int) -> float:
    """Seconds per certified GD step of ``model`` on a spectrum with ``levels`` distinct eigenvalues, by the route
    :func:`~rdyn.verification.proofs.model_b.training.level_F` takes (:data:`STICK_BREAKING_STEP_S`,
    :data:`LAPLACE_STEP_S`)."""
    from rdyn.verification.proofs.model_b.training import route_of

    if route_of(model, levels) == "stick_breaking":
        return STICK_BREAKING_STEP_S[levels][model]
    seconds, power = LAPLACE_STEP_S[model]
    return seconds * levels ** power


def train_estimate(model: str, steps: int, levels: int = 2):
    """The time of ``--paper B --model ln|looped --steps N`` on a spectrum with ``levels`` distinct
    eigenvalues (:func:`train_step_seconds` per certified step)."""
    from rdyn.run_time import RunTimeEstimate

    per_step = train_step_seconds(model, levels)
    return RunTimeEstimate("prove --paper B", TRAIN_START_S + steps * per_step,
                           f"{steps} certified GD steps of the {model} model at about "
                           f"{per_step * 1e3:.0f} ms each", steps=steps)


def run_b(v: ProveOptions, note=None):
    """``note(text)`` (the command line): the time estimate before a run of ``--steps`` (printed when
    it exceeds 10 s) and a progress line every :data:`PROGRESS_EVERY` steps. SIGINT/SIGTERM during
    ``--steps`` raises :class:`rdyn.api._prove.RangeInterrupted` holding the report of the steps
    certified so far (``"complete": false``, ``steps_done``). The branch and bound runs
    of --model noln take about a second (their S0 and region boxes together stay within --max-boxes)."""
    from rdyn.api._prove import RangeInterrupted
    from rdyn.result import Result
    from rdyn.run_time import ANNOUNCE_ABOVE_S
    from rdyn.verification.proofs.model_b.prove import interrupted_report, prove_model_b

    inst = instance(v)
    progress = None
    if inst.model != "noln" and inst.steps is not None and note is not None:
        est = train_estimate(inst.model, inst.steps, len(set(inst.spectrum)))
        if est.seconds > ANNOUNCE_ABOVE_S:
            note(est.line().split(": ", 1)[1])
        progress = _progress_every(PROGRESS_EVERY, inst.steps, note)
    last = [None]   # the state after the last whole certified step of --steps
    t0 = time.perf_counter()
    try:
        data = prove_model_b(inst, max_boxes=v.max_boxes, progress=progress, on_step=lambda s: last.__setitem__(0, s))
    except KeyboardInterrupt:
        if inst.model == "noln" or inst.steps is None:
            raise
        report = interrupted_report(inst, last[0], time.perf_counter() - t0)   # "complete": false
        raise RangeInterrupted(Result(report, None, detail={"paper": "B"})) from None
    return Result(data, None, detail={"paper": "B"})


def all_certified(data: dict) -> bool:
    """Exit status 0: every corrected (and every single-form) statement is proved or certified."""
    return all(s["verdict"] in ("proved", "certified") for s in data["statements"] if s["form"] != "printed"
               or s["label"].startswith(("Theorem 4.6", "Theorem 4.7")))


def _progress_every(every: int, steps: int, note):
    """A step callback that notes ``step t of STEPS`` every ``every`` steps before the last."""
    def progress(t):
        if t % every == 0 and t < steps:
            note(f"step {t} of {steps}")
    return progress
