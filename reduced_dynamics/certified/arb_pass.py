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

Why not just run the generated ``step`` on balls: C1 enters its own update several times, so
ball arithmetic overestimates (the dependency effect) and the radius grows ~1.25x per step
(docs/numerics.md). Instead a mean-value form is used. Within one branch of the map (C1 > 0 or
C1 < 0) f is smooth, so for x, m in X_t, f(x) = f(m) + J(xi)(x - m) with xi on the segment
[m, x], which lies in the convex box X_t. Hence

  f(X_t)  is contained in  f([m]) + J(X_t) . (X_t - m),

where m = mid(X_t) is a point ball, f([m]) is the generated ``step`` on point balls (only
rounding radius) and J(X_t) is a ball enclosure of the Jacobian over the whole box, printed
by :mod:`rdyn.derivations.codegen` from the sympy derivatives of the same derived expressions
(:func:`rdyn.reduced_dynamics.model_a.kernels.jacobian_source`). The map is written as C1' = g(C1, e), C2' = C2 + d(C1, e),
C3' = C3 + r d(C1, e) with e = exp(-(C2 + C3)/scale) and r = K/(D - K) (the generated step),
so with e_C = de/dC2 = de/dC3 = -e/scale:

  J = [[g_C1, g_e e_C, g_e e_C], [d_C1, 1 + d_e e_C, d_e e_C], [r d_C1, r d_e e_C, 1 + r d_e e_C]].

The product is evaluated in ball arithmetic, then the result re-centred. If the box straddles
C1 = 0 (the branch is not determined) the enclosure stops ("not certified"). Step 0 -> 1 is
exact input (C1 = 0 is a point), so the zero branch is evaluated directly.
"""
from __future__ import annotations

from functools import lru_cache

from rdyn.derivations import codegen
from rdyn.reduced_dynamics.certified.exact_inputs import exact_inputs
from rdyn.derivations.generated import run_generated
from rdyn.reduced_dynamics.certified.certificate import CertifiedResult, EventCertificate, relative_radius
from rdyn.reduced_dynamics.model_a.kernels import jacobian_source

@lru_cache(maxsize=None)
def jacobian_kernels(activation: str, scale: str):
    """(prepare, jacobian_positive, jacobian_negative) on arb balls."""
    backend = codegen.arb_backend()
    namespace = run_generated(jacobian_source(activation, scale),
                              f"model A jacobian [{activation}/{scale}/arb]", backend.namespace())
    return namespace["prepare"], namespace["jacobian_positive"], namespace["jacobian_negative"]


def companion_path(path: str) -> str:
    """The file next to a ``rdyn teacher --checkpoint`` file that holds the --certify pass's
    checkpoint: ``run.npz`` -> ``run.certify.npz``."""
    import os

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
    iteration of :mod:`rdyn.reduced_dynamics.certified.interval` (``dps``/``prec`` ignored);
    only that backend takes ``checkpoint``/``checkpoint_every``/``resume`` (see
    :func:`~rdyn.reduced_dynamics.certified.interval.certified_run_interval`).
    """
    if backend == "interval64":
        from rdyn.reduced_dynamics.certified.interval import certified_run_interval

        return certified_run_interval(config, steps=steps, thresholds=thresholds,
                                      tstar_level=tstar_level, progress=progress,
                                      checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                                      resume=resume)
    if backend != "arb":
        raise ValueError(f"unknown certified backend {backend!r}")
    if checkpoint is not None or resume is not None:
        raise ValueError("the arb certified backend is not checkpointed (use interval64)")
    import flint
    from flint import arb

    from rdyn.reduced_dynamics.model_a.dynamics import MAX_STEPS, Thresholds
    from rdyn.reduced_dynamics.model_a.kernels import kernels

    thresholds = thresholds or Thresholds()
    old_prec = flint.ctx.prec
    prec = prec if prec is not None else int(dps * 3.33) + 40
    flint.ctx.prec = prec
    try:
        k = kernels(config.activation, config.logit_scale, "arb")
        jprepare, jac_pos, jac_neg = jacobian_kernels(config.activation, config.logit_scale)
        params, fraction, level = exact_inputs(config, thresholds, tstar_level)
        c = k.prepare(*params)
        cj = jprepare(*params)
        ratio = arb(config.K) / (config.D - config.K)
        t1 = EventCertificate("t1")
        tstar = EventCertificate("T_star")
        end = steps if steps is not None else MAX_STEPS
        state = (arb(0), arb(0), arb(0))
        stopped = None
        radius_at_tstar = None
        growth = []
        next_sample = 1
        bar = None
        if progress:
            from tqdm import tqdm
            import sys

            bar = tqdm(total=steps, unit="step", unit_scale=True, file=sys.stderr,
                       desc="rdyn certify")
        t = 0
        while True:
            C1, C2, C3 = state
            if t >= 1 and t1.step is None:
                t1.observe(t, C1 - fraction * k.c1_star(C2, C3, c))
            if tstar.step is None:
                tstar.observe(t, k.attention(C2, C3, c) - level)
                if tstar.step is not None:
                    radius_at_tstar = relative_radius(state)
                    if steps is None:
                        end = max(2 * t, 1000)
            if t >= next_sample:
                growth.append((t, relative_radius(state)))
                next_sample *= 2
            if t >= end:
                break
            if all(x.rad() == 0 for x in state):
                state = k.step(C1, C2, C3, c)   # exact input (t = 0): any branch, directly
            else:
                if C1 > 0:
                    a, b, g, h = jac_pos(C1, C2, C3, cj)
                elif C1 < 0:
                    a, b, g, h = jac_neg(C1, C2, C3, cj)
                else:
                    stopped = f"branch of the map undetermined at step {t}: C1 = {C1}"
                    break
                m1, m2, m3 = arb(C1.mid()), arb(C2.mid()), arb(C3.mid())
                f1, f2, f3 = k.step(m1, m2, m3, c)
                d1, d2, d3 = C1 - m1, C2 - m2, C3 - m3
                de = d2 + d3
                state = (f1 + a * d1 + b * de,
                         f2 + g * d1 + d2 + h * de,
                         f3 + ratio * (g * d1 + h * de) + d3)
            t += 1
            if bar is not None and t % 10000 == 0:
                bar.update(10000)
        if bar is not None:
            bar.close()
        return CertifiedResult(steps=t, t1=t1, T_star=tstar, state=state, prec=prec,
                               radius_final=relative_radius(state),
                               radius_at_T_star=radius_at_tstar, radius_growth=growth,
                               stopped=stopped)
    finally:
        flint.ctx.prec = old_prec
