"""Certified iteration of Model A's collapsed map with python-flint ``arb`` balls.

Every state is a box X_t = (C1, C2, C3) of balls that provably contains the exact real-number
trajectory from C1 = C2 = C3 = 0 (parameters: D, K exact; eta, ||V*||_F^2, kappa, sigma'(0)
read as their decimal forms, eta = eta_limit / 2 exactly when not given). No radius is ever
dropped, so the phase boundaries are *certified*:

  t1 = min{t >= 1 : C1(t) >= t1_fraction * C1*(t)},   T* = min{t >= 0 : p(t) >= level}

is certified when, for the enclosure of the test quantity (C1 - fraction C1*, resp. p - level),
every step before the event is strictly negative and the event step is strictly
non-negative. Otherwise the result says "not certified" and gives the first step whose
enclosure contains 0 (the overlap).

The box advances by the one certified arb iteration,
:class:`rdyn.reduced_dynamics.certified.arb_iteration.ArbIteration`, in its mean-value form
(``rdyn prove`` steps the same iteration in its direct form); what is here is the pass's own:
the event certificates, the radius samples and the result. If the box straddles C1 = 0 (the branch is not determined) the
enclosure stops ("not certified").
"""
from __future__ import annotations

import os

from rdyn.reduced_dynamics.certified.arb_iteration import MEAN_VALUE, ArbIteration, BranchUndetermined
from rdyn.reduced_dynamics.certified.exact_inputs import exact_inputs
from rdyn.reduced_dynamics.certified.certificate import CertifiedResult, EventCertificate, relative_radius
from rdyn.reduced_dynamics.runs.driver import drive

CHUNK = 10000   # steps per chunk of the driver (the progress bar moves at its ends)


def companion_path(path: str) -> str:
    """The file next to a ``rdyn teacher --checkpoint`` file that holds the --certify pass's
    checkpoint: ``run.npz`` -> ``run.certify.npz``."""
    root, ext = os.path.splitext(path)
    return f"{root}.certify{ext or '.npz'}"


def certified_run(config, steps: int | None = None, thresholds=None, dps: int | None = 30,
                  prec: int | None = None, tstar_level=None, progress: bool = False,
                  backend: str = "arb", checkpoint: str | None = None,
                  checkpoint_every: float = 60.0, resume: str | None = None) -> CertifiedResult:
    """Iterate with certified enclosures; same definitions as :func:`rdyn.reduced_dynamics.model_a.dynamics.run`.

    ``prec`` (bits) overrides the precision derived from ``dps`` (dps * 3.33 + 40, as the arb
    path of ``run``). ``tstar_level`` overrides the T* level (string, arb ball or number;
    default: thresholds' level, 1/(2K) exactly). ``steps = None``: run to T*, then to
    max(2 T*, 1000) as ``run`` does. ``backend="interval64"``: the compiled float64 interval
    iteration of :mod:`rdyn.reduced_dynamics.certified.interval_pass` (``dps``/``prec`` ignored);
    only that backend takes ``checkpoint``/``checkpoint_every``/``resume`` (see
    :func:`~rdyn.reduced_dynamics.certified.interval_pass.certified_run_interval`).
    """
    if backend == "interval64":
        from rdyn.reduced_dynamics.certified.interval_pass import certified_run_interval

        return certified_run_interval(config, steps=steps, thresholds=thresholds,
                                      tstar_level=tstar_level, progress=progress,
                                      checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                                      resume=resume)
    if backend != "arb":
        raise ValueError(f"unknown certified backend {backend!r}")
    if checkpoint is not None or resume is not None:
        raise ValueError("the arb certified backend is not checkpointed (use interval64)")
    import flint

    from rdyn.reduced_dynamics.model_a.dynamics import MAX_STEPS, Thresholds

    thresholds = thresholds or Thresholds()
    old_prec = flint.ctx.prec
    prec = prec if prec is not None else int(dps * 3.33) + 40
    flint.ctx.prec = prec
    try:
        params, fraction, level = exact_inputs(config, thresholds, tstar_level)
        iteration = ArbIteration(config, params)
        run = _Pass(iteration, fraction, level, steps, steps if steps is not None else MAX_STEPS)
        bar = None
        if progress:
            from tqdm import tqdm
            import sys

            bar = tqdm(total=steps, unit="step", unit_scale=True, file=sys.stderr,
                       desc="rdyn certify")
        drive(run, chunk=CHUNK, bar=bar)
        state = tuple(run.box[:3])   # (C1, C2, C3)
        return CertifiedResult(steps=run.t, t1=run.t1, T_star=run.tstar, state=state, prec=prec,
                               radius_final=relative_radius(state),
                               radius_at_T_star=run.radius_at_tstar, radius_growth=run.growth,
                               stopped=run.stopped)
    finally:
        flint.ctx.prec = old_prec


class _Pass:
    """The pass as an engine of :func:`rdyn.reduced_dynamics.runs.driver.drive` (its loop state in
    attributes; not checkpointed): at every step the events are observed on the box, the radius
    sampled at powers of 2, then the box advanced; ``steps`` None: the end moves to
    max(2 T*, 1000) once T* is found."""

    def __init__(self, iteration, fraction, level, steps, end):
        self.iteration, self.fraction, self.level, self.steps, self.end = iteration, fraction, level, steps, end
        self.t1, self.tstar = EventCertificate("t1"), EventCertificate("T_star")
        self.box = iteration.start()
        self.t = 0
        self.stopped = None
        self.radius_at_tstar = None
        self.growth = []
        self.next_sample = 1
        self.finished = False

    def advance(self, _, n):
        """Steps until t is a multiple of n or the pass ends."""
        iteration, fraction, level, t1, tstar = self.iteration, self.fraction, self.level, self.t1, self.tstar
        k, c = iteration.kernels, iteration.c
        state, t, end, next_sample = self.box, self.t, self.end, self.next_sample
        try:
            while True:
                C1, C2, C3, _ = state
                if t >= 1 and t1.step is None:
                    t1.observe(t, C1 - fraction * k.c1_star(C2, C3, c))
                if tstar.step is None:
                    tstar.observe(t, k.attention(C2, C3, c) - level)
                    if tstar.step is not None:
                        self.radius_at_tstar = relative_radius(state[:3])
                        if self.steps is None:
                            end = max(2 * t, 1000)
                if t >= next_sample:
                    self.growth.append((t, relative_radius(state[:3])))
                    next_sample *= 2
                if t >= end:
                    self.finished = True
                    return
                try:
                    state = iteration.step(state, MEAN_VALUE)
                except BranchUndetermined:
                    self.stopped = f"branch of the map undetermined at step {t}: C1 = {C1}"
                    self.finished = True
                    return
                t += 1
                if t % n == 0:
                    return
        finally:
            self.box, self.t, self.end, self.next_sample = state, t, end, next_sample

    def done(self, _):
        return self.finished

    def position(self, _):
        return self.t

    def total(self, _):
        return self.end if self.steps is None and self.tstar.step is not None else None

    def save(self, path, _):
        raise ValueError("the arb certified backend is not checkpointed (use interval64)")
