"""Certified iteration of Model A's collapsed map in float64 interval arithmetic (numba).

The float64-interval sibling of :mod:`rdyn.reduced_dynamics.certified.arb_pass` (python-flint ``arb``):
same enclosure (mean-value form), same event definitions and certification rule, same
:class:`~rdyn.reduced_dynamics.certified.certificate.CertifiedResult`; about 100-500x faster, so a 10^8-step
certified run takes minutes. Entry point: :func:`certified_run_interval` (or
``certified_run(..., backend="interval64")``). The outward-rounded interval operations it
is built from (and what their rigour assumes: IEEE binary64, no libm, the enclosures of
exp and atan) are :mod:`rdyn.reduced_dynamics.certified.interval`.

The map and the enclosure
-------------------------
The interval code is printed by :func:`rdyn.derivations.codegen.emit_interval_ssa` from the same
derived sympy expressions as every other backend (:mod:`rdyn.derivations.model_a.catalog`): the C1 map g
and the C2 increment d of each branch (``C1_next_*``, ``C2_next_* - C2``), the Jacobian
entries of :func:`rdyn.reduced_dynamics.model_a.kernels.jacobian_source` (sympy derivatives), p and
C1*. The derived invariant K C2 = (D-K) C3 (C3 moves by rho = K/(D-K) times C2's move,
from C2 = C3 = 0) holds exactly for the real trajectory, so the state is (C1, C2) with
C3 = rho C2; the map F(C1, C2) = (g, C2 + d) has Jacobian

    [[g_C1, (1+rho) g_e e_C], [d_C1, 1 + (1+rho) d_e e_C]]   (e_C = -e/scale).

Box X_t = (c1 +- r1, m2 +- r2), where the centre m2 = s + l is a double-double (s, l) and
the radii are upward-rounded floats. Mean-value form (as arb_iteration.py): for a convex box Y
inside one branch (C1 > 0 or C1 < 0) with X_t contained in Y, F(X_t) is contained in
F(m) + J(Y) (X_t - m), m = (c1, s + l). F(m) is the interval evaluation at the point
(G for g, Dd for d); J(Y) is the interval Jacobian over Y. The new centre is c1' = mid(G),
and s + l + mid(Dd) is accumulated exactly by TwoSum (the one rounding, of l, is bounded
and added to r2), so 10^8 additions of increments ~1e-6 to C2 ~ 70 do not each cost an
ulp of C2 (2 ulp per step would be 1e-6 absolute after 10^8 steps, as large as the
per-step move of C2 + C3 near T*). J(Y) is reused while X_t stays in Y (checked before
every step, with directed rounding); Y is X_t widened in the direction of motion.

Events: as arb_pass.py (enclosure of C1 - fraction C1* resp. p - level strictly < 0 at
every step before, lower end >= 0 at the event step; else "not certified" with the first
overlapping enclosure). p is increasing in C2 + C3 = (1+rho) C2, so while the upper end of
C2 stays below a float C2pre at which the enclosure of p is strictly below the level
(verified once, in interval arithmetic), p - level is certainly negative and not
evaluated.
"""
from __future__ import annotations

import math
import time
from functools import lru_cache

import numpy as np

from rdyn.reduced_dynamics.certified.interval import (INF, NAN, PRIMITIVES, _jit, arb_to_interval, down,
                                                      iadd, imul, interval_ball, isub, up)
from rdyn.reduced_dynamics.model_a.kernels import interval_source
from rdyn.reduced_dynamics.runs.driver import drive

# --------------------------------------------------------------------------------------------
# The certified loop (numba)
# --------------------------------------------------------------------------------------------

# float state st[...]
S_C1, S_R1, S_S, S_L, S_R2, S_DC1, S_D = 0, 1, 2, 3, 4, 5, 6
S_Y1LO, S_Y1HI, S_Y2LO, S_Y2HI = 7, 8, 9, 10
S_AMAX, S_BMAX, S_GMAX, S_MMAX, S_BRANCH, S_JVALID = 11, 12, 13, 14, 15, 16
N_STATE = 17
# settings cfg[...]
G_RHO, G_ONEP, G_FRAC, G_LEVEL = 0, 2, 4, 6        # interval pairs (lo at i, hi at i + 1)
G_C2PRE, G_BLOCK, G_SCALE = 8, 9, 10
N_CFG = 11
# integer events ev[...]: per event (t1 at 0, T* at 5): step, ambiguous, overlap step, certified
E_STEP, E_AMB, E_OVL, E_CERT = 0, 1, 2, 3
E_T1, E_TS = 0, 5
E_END, E_DEFAULT_END, E_STOPPED, E_DONE, E_JAC, E_NGROWTH, E_NEXT = 10, 11, 12, 13, 14, 15, 16
N_EV = 17
# float event data evf[...]: overlap (lo, hi) of t1 at 0, of T* at 2; radius at T* at 4
F_T1, F_TS, F_RTS = 0, 2, 4
N_EVF = 5
STOP_BRANCH, STOP_NONFINITE = 1, 2


@_jit
def observe(ev, evf, base, fbase, t, lo, hi):
    """arb_pass.py's EventCertificate.observe on the enclosure [lo, hi]; True if the
    event step is set now."""
    if lo >= 0:
        sure = True
    elif hi < 0:
        return False
    else:
        sure = False
        if ev[base + E_AMB] == 0:
            ev[base + E_AMB] = 1
            ev[base + E_OVL] = t
            evf[fbase] = lo
            evf[fbase + 1] = hi
        if not (0.5 * lo + 0.5 * hi >= 0):
            return False
    ev[base + E_STEP] = t
    ev[base + E_CERT] = 1 if (sure and ev[base + E_AMB] == 0) else 0
    return True

@_jit
def relative_radius(c1, r1, s, r2):
    worst = 0.0
    if r1 > 0:
        worst = max(worst, r1 / abs(c1) if c1 != 0 else INF)
    if r2 > 0:
        worst = max(worst, r2 / abs(s) if s != 0 else INF)
    return worst


def _advance_template(st, t, n, c, cfg, ev, evf, growth):
    """Advance the certified box at step t by up to n steps; returns the new t.

    A template: its source is copied into each generated kernel module (where incr_positive,
    jac_positive, ... are that configuration's functions) and compiled there by numba.
    """
    rho = (cfg[G_RHO], cfg[G_RHO + 1])
    onep = (cfg[G_ONEP], cfg[G_ONEP + 1])
    frac = (cfg[G_FRAC], cfg[G_FRAC + 1])
    level = (cfg[G_LEVEL], cfg[G_LEVEL + 1])
    for _ in range(n):
        c1 = st[S_C1]
        r1 = st[S_R1]
        s = st[S_S]
        l = st[S_L]
        r2 = st[S_R2]
        C1b = (c1, c1) if r1 == 0 else (down(c1 - r1), up(c1 + r1))
        m2 = (s, s) if l == 0 else iadd((s, s), (l, l))
        C2b = m2 if r2 == 0 else (down(m2[0] - r2), up(m2[1] + r2))
        C3b = imul(rho, C2b)
        # ---- events at step t
        if t >= 1 and ev[E_T1 + E_STEP] < 0:
            v = isub(C1b, imul(frac, c1_star(C2b, C3b, c)[0]))
            observe(ev, evf, E_T1, F_T1, t, v[0], v[1])
        if ev[E_TS + E_STEP] < 0 and not (C2b[1] <= cfg[G_C2PRE]):
            v = isub(attention(C2b, C3b, c)[0], level)
            if observe(ev, evf, E_TS, F_TS, t, v[0], v[1]):
                evf[F_RTS] = relative_radius(c1, r1, s, r2)
                if ev[E_DEFAULT_END] > 0:
                    ev[E_END] = max(2 * t, 1000)
        if t >= ev[E_NEXT]:
            i = ev[E_NGROWTH]
            if i < growth.shape[0]:
                growth[i, 0] = t
                growth[i, 1] = relative_radius(c1, r1, s, r2)
                ev[E_NGROWTH] = i + 1
            ev[E_NEXT] = 2 * ev[E_NEXT]
        if t >= ev[E_END]:
            ev[E_DONE] = 1
            break
        # ---- one step of the map
        if c1 == 0 and r1 == 0:        # C1 = 0 exactly: the zero branch (d = 0 exactly)
            g, d = incr_zero(C1b, C2b, C3b, c)
            c1n = 0.5 * g[0] + 0.5 * g[1]
            st[S_C1] = c1n
            st[S_R1] = max(up(c1n - g[0]), up(g[1] - c1n))
            st[S_DC1] = c1n - c1
            st[S_JVALID] = 0.0
            t += 1
            continue
        if not (st[S_JVALID] > 0 and C1b[0] >= st[S_Y1LO] and C1b[1] <= st[S_Y1HI]
                and C2b[0] >= st[S_Y2LO] and C2b[1] <= st[S_Y2HI]):
            block = cfg[G_BLOCK]
            w1 = min(max(block * abs(st[S_DC1]) * 2.0, 1e-9 * abs(c1)), 1e-3 * abs(c1)) \
                + 16.0 * r1
            Y1 = (down(C1b[0] - w1), up(C1b[1] + w1))
            if not (Y1[0] > 0 or Y1[1] < 0):
                Y1 = C1b
            if Y1[0] > 0:
                branch = 1.0
            elif Y1[1] < 0:
                branch = -1.0
            else:
                ev[E_STOPPED] = STOP_BRANCH
                break
            w2 = min(max(block * abs(st[S_D]) * 2.0, 1e-12 * (abs(s) + 1.0)),
                     1e-3 * cfg[G_SCALE]) + 16.0 * r2
            if st[S_D] >= 0:
                Y2 = (down(C2b[0] - 1e-3 * w2), up(C2b[1] + w2))
            else:
                Y2 = (down(C2b[0] - w2), up(C2b[1] + 1e-3 * w2))
            Y3 = imul(rho, Y2)
            if branch > 0:
                J = jac_positive(Y1, Y2, Y3, c)
            else:
                J = jac_negative(Y1, Y2, Y3, c)
            b = imul(J[1], onep)
            h = iadd((1.0, 1.0), imul(J[3], onep))
            st[S_AMAX] = max(-J[0][0], J[0][1])
            st[S_BMAX] = max(-b[0], b[1])
            st[S_GMAX] = max(-J[2][0], J[2][1])
            st[S_MMAX] = max(-h[0], h[1])
            st[S_Y1LO] = Y1[0]
            st[S_Y1HI] = Y1[1]
            st[S_Y2LO] = Y2[0]
            st[S_Y2HI] = Y2[1]
            st[S_BRANCH] = branch
            st[S_JVALID] = 1.0
            ev[E_JAC] += 1
        # f(m): the map at the centre, then the mean-value correction J(Y) (X - m)
        m3 = imul(rho, m2)
        if st[S_BRANCH] > 0:
            g, d = incr_positive((c1, c1), m2, m3, c)
        else:
            g, d = incr_negative((c1, c1), m2, m3, c)
        c1n, rg = centre_radius(g)
        r1n = up(up(rg + up(st[S_AMAX] * r1)) + up(st[S_BMAX] * r2))
        dm, rd = centre_radius(d)
        s2, l2, errl = dd_add(s, l, dm)   # s + l + dm as a double-double
        r2n = up(up(up(st[S_MMAX] * r2) + up(st[S_GMAX] * r1)) + up(rd + errl))
        if not (r1n < INF and r2n < INF and abs(c1n) < INF and abs(s2) < INF
                and abs(l2) < INF):
            ev[E_STOPPED] = STOP_NONFINITE
            break
        st[S_C1] = c1n
        st[S_R1] = r1n
        st[S_S] = s2
        st[S_L] = l2
        st[S_R2] = r2n
        st[S_DC1] = c1n - c1
        st[S_D] = dm
        t += 1
    return t


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------

CHUNK = 1 << 18


def _save_certify(path, identity, t, st, ev, evf, growth, consts, cfg) -> None:
    from rdyn.reduced_dynamics.runs import checkpoint
    from rdyn.reduced_dynamics._version import __version__

    arrays = dict(zip(_CHECKPOINT_ARRAYS, (st, ev, evf, growth, consts, cfg)))
    checkpoint.save(path, "certify", identity, arrays, {"t": int(t), "rdyn_version": __version__})


def _load_certify(path, identity, consts, cfg):
    """(t, (st, ev, evf, growth)) from a certify checkpoint; CheckpointError if it does not
    fit (other identity, other constants or settings, wrong shapes)."""
    from rdyn.reduced_dynamics.runs import checkpoint

    arrays, meta = checkpoint.load(path, "certify", identity)
    try:
        loaded = {n: arrays[n] for n in _CHECKPOINT_ARRAYS}
        t = int(meta["t"])
    except (KeyError, TypeError, ValueError) as exc:
        raise checkpoint.CheckpointError(f"checkpoint {path} is incomplete ({exc})") from None
    shapes = {"st": ((N_STATE,), np.float64), "ev": ((N_EV,), np.int64),
              "evf": ((N_EVF,), np.float64), "growth": ((64, 2), np.float64)}
    for name, (shape, dtype) in shapes.items():
        if loaded[name].shape != shape or loaded[name].dtype != dtype:
            raise checkpoint.CheckpointError(f"checkpoint {path} has arrays of the wrong shape")
    # the constants are a function of the identity; different ones mean other kernels
    if not (np.array_equal(loaded["consts"], consts) and np.array_equal(loaded["cfg"], cfg)):
        raise checkpoint.CheckpointError(
            f"checkpoint {path} was written with other constants (another rdyn version?)")
    return t, tuple(np.array(loaded[n]) for n in ("st", "ev", "evf", "growth"))


class _Certify:
    """The compiled pass as an engine of :func:`rdyn.reduced_dynamics.runs.driver.drive`: the
    state is ``(t, st, ev, evf, growth)`` (the arrays changed in place by one compiled call of
    ``advance`` per chunk of ``CHUNK`` steps; an interrupt inside it saves the chunk-start
    copies); a checkpoint holds the state exactly (see :func:`certified_run_interval`)."""

    def __init__(self, advance, consts, cfg, identity):
        self.kernel, self.consts, self.cfg, self.identity = advance, consts, cfg, identity

    def advance(self, state, n):
        t, st, ev, evf, growth = state
        return (self.kernel(st, t, n, self.consts, self.cfg, ev, evf, growth), st, ev, evf, growth)

    def done(self, state):
        ev = state[2]
        return bool(ev[E_DONE] or ev[E_STOPPED])

    def position(self, state):
        return state[0]

    def snapshot(self, state):
        t, st, ev, evf, growth = state
        return (t, st.copy(), ev.copy(), evf.copy(), growth.copy())

    def save(self, path, state):
        _save_certify(path, self.identity, *state, self.consts, self.cfg)
        return int(state[0])


def certify_identity(config, steps, thresholds, tstar_level, block) -> dict:
    """Everything that determines a certified interval run (the checkpoint identity)."""
    return {"D": config.D, "K": config.K, "activation": config.activation,
            "kappa": config.kappa, "eta": config.eta, "vstar_norm2": config.vstar_norm2,
            "sigma_prime_zero": config.sigma_prime_zero, "logit_scale": config.logit_scale,
            "steps": steps, "t1_fraction": thresholds.t1_fraction,
            "tstar_attention": thresholds.tstar_attention,
            "tstar_level": None if tstar_level is None else str(tstar_level),
            "block": block, "backend": "interval64"}


_CHECKPOINT_ARRAYS = ("st", "ev", "evf", "growth", "consts", "cfg")


def certified_run_interval(config, steps: int | None = None, thresholds=None, tstar_level=None,
                           progress: bool = False, block: int = 4096,
                           checkpoint: str | None = None, checkpoint_every: float = 60.0,
                           resume: str | None = None):
    """Certified iteration in float64 interval arithmetic; same definitions, rule and result
    type as :func:`rdyn.reduced_dynamics.certified.arb_pass.certified_run` (``prec`` = 53, ``backend`` =
    "interval64"). ``block``: the Jacobian enclosure is reused over boxes sized for about
    that many steps (a speed setting only). ``steps = None``: run to T*, then to
    max(2 T*, 1000).

    ``checkpoint``: file (:mod:`rdyn.reduced_dynamics.runs.checkpoint`, kind "certify", identity
    :func:`certify_identity`) that receives the complete loop state (the float and integer
    arrays of the loop, stored exactly, and the step) between chunks of ``CHUNK`` steps, at
    most every ``checkpoint_every`` seconds, at the end, and on KeyboardInterrupt (then
    :class:`~rdyn.reduced_dynamics.runs.checkpoint.Interrupted` is raised). ``resume``: continue from
    such a file; the certificate is bit-identical to an uninterrupted run (``seconds``
    counts this process only)."""
    import flint
    from flint import arb

    from rdyn.reduced_dynamics.certified.exact_inputs import exact_inputs
    from rdyn.reduced_dynamics.certified.certificate import CertifiedResult, EventCertificate
    from rdyn.reduced_dynamics.model_a.dynamics import MAX_STEPS, Thresholds, attention_crossing

    thresholds = thresholds or Thresholds()
    kern = interval_kernels(config.activation, config.logit_scale)
    advance = kern["advance"]
    old_prec = flint.ctx.prec
    flint.ctx.prec = 256
    try:
        params, fraction, level = exact_inputs(config, thresholds, tstar_level)
        consts = np.array([arb_to_interval(arb(v)) for v in kern["prepare"](*params)])
        rho = arb(config.K) / (config.D - config.K)
        onep = arb(config.D) / (config.D - config.K)
        cfg = np.zeros(N_CFG)
        cfg[G_RHO:G_RHO + 2] = arb_to_interval(rho)
        cfg[G_ONEP:G_ONEP + 2] = arb_to_interval(onep)
        cfg[G_FRAC:G_FRAC + 2] = arb_to_interval(fraction)
        cfg[G_LEVEL:G_LEVEL + 2] = arb_to_interval(level)
        cfg[G_BLOCK] = float(block)
        cfg[G_SCALE] = config.D if config.logit_scale == "D" else math.sqrt(config.D)
        cfg[G_C2PRE] = -INF
        # prefilter: a C2 below which p < level is certain (p increases with C2 + C3)
        crossing = attention_crossing(config, float(level.mid()))
        if math.isfinite(crossing):
            c2pre = crossing * (config.D - config.K) / config.D * (1 - 1e-7) - 1e-9
            r = (cfg[G_RHO], cfg[G_RHO + 1])
            pre = (c2pre, c2pre)
            p = kern["attention"](pre, imul(r, pre), consts)[0]
            if p[1] < cfg[G_LEVEL]:
                cfg[G_C2PRE] = c2pre
        st = np.zeros(N_STATE)
        ev = np.full(N_EV, -1, dtype=np.int64)
        for base in (E_T1, E_TS):
            ev[base + E_AMB] = 0
            ev[base + E_CERT] = 0
        ev[E_END] = steps if steps is not None else MAX_STEPS
        ev[E_DEFAULT_END] = 1 if steps is None else 0
        ev[E_STOPPED] = 0
        ev[E_DONE] = 0
        ev[E_JAC] = 0
        ev[E_NGROWTH] = 0
        ev[E_NEXT] = 1
        evf = np.full(N_EVF, NAN)
        growth = np.zeros((64, 2))
        bar = None
        if progress:
            import sys

            from tqdm import tqdm

            bar = tqdm(total=steps, unit="step", unit_scale=True, file=sys.stderr,
                       desc="rdyn certify (interval64)")
        t = 0
        identity = certify_identity(config, steps, thresholds, tstar_level, block)
        if resume is not None:
            t, (st, ev, evf, growth) = _load_certify(resume, identity, consts, cfg)
            if bar is not None:
                bar.update(t)
        start = time.perf_counter()
        t, st, ev, evf, growth = drive(_Certify(advance, consts, cfg, identity), (t, st, ev, evf, growth),
                                       chunk=CHUNK, checkpoint=checkpoint,
                                       checkpoint_every=checkpoint_every, bar=bar)
        elapsed = time.perf_counter() - start

        def event(name, base, fbase):
            cert = EventCertificate(name)
            cert.step = int(ev[base + E_STEP]) if ev[base + E_STEP] >= 0 else None
            cert.certified = bool(ev[base + E_CERT]) and cert.step is not None
            if ev[base + E_AMB]:
                cert._ambiguous = True
                cert.overlap_step = int(ev[base + E_OVL])
                cert.overlap = interval_ball(evf[fbase], evf[fbase + 1])
            return cert

        c1, r1, s, l, r2 = st[S_C1], st[S_R1], st[S_S], st[S_L], st[S_R2]
        C1 = arb(c1, r1) if r1 > 0 else arb(c1)
        C2 = arb(s) + arb(l) + (arb(0, r2) if r2 > 0 else 0)
        state = (C1, C2, rho * C2)
        stopped = None
        if ev[E_STOPPED] == STOP_BRANCH:
            stopped = f"branch of the map undetermined at step {t}: C1 = {C1}"
        elif ev[E_STOPPED] == STOP_NONFINITE:
            stopped = f"enclosure not finite at step {t + 1}"
        rel = 0.0
        if r1 > 0:
            rel = max(rel, r1 / abs(c1) if c1 != 0 else INF)
        if r2 > 0:
            rel = max(rel, r2 / abs(s) if s != 0 else INF)
        result = CertifiedResult(
            steps=t, t1=event("t1", E_T1, F_T1), T_star=event("T_star", E_TS, F_TS),
            state=state, prec=53, radius_final=rel,
            radius_at_T_star=None if ev[E_TS + E_STEP] < 0 else float(evf[F_RTS]),
            radius_growth=[(int(a), float(b)) for a, b in growth[:ev[E_NGROWTH]]],
            stopped=stopped, backend="interval64")
        result.jacobian_evaluations = int(ev[E_JAC])
        result.seconds = elapsed
        return result
    finally:
        flint.ctx.prec = old_prec


# --------------------------------------------------------------------------------------------
# Generated module (cached on disk, so numba's cache can keep the machine code)
# --------------------------------------------------------------------------------------------

_KERNEL_FUNCTIONS = ("incr_positive", "incr_negative", "incr_zero", "jac_positive",
                     "jac_negative", "attention", "c1_star")


def generated_module_source(activation: str, scale: str) -> str:
    """The text of the generated module: :func:`interval_source` (interval functions
    compiled with :func:`rdyn.reduced_dynamics.runs.kernel_cache.njit`, ``prepare`` on arb balls) and the certified loop
    ``advance`` (the source of :func:`_advance_template`)."""
    from rdyn.reduced_dynamics.runs import kernel_cache

    arithmetic = sorted(set(PRIMITIVES) | {"INF"})
    loop_names = sorted({"observe", "relative_radius"} |
                        {n for n in globals() if n[:2] in ("S_", "G_", "E_", "F_") and n[2:].isupper()
                         or n.startswith("STOP_")})
    imports = [
        "from flint import arb as R",
        "from rdyn.derivations.codegen import arb_namespace",
        "from rdyn.reduced_dynamics.certified.interval import (" + ", ".join(arithmetic) + ")",
        "from rdyn.reduced_dynamics.certified.interval_pass import (" + ", ".join(loop_names) + ")",
        "F = arb_namespace()",
    ]
    return kernel_cache.assemble_module("rdyn.reduced_dynamics.certified.interval_pass", imports,
                                        interval_source(activation, scale), _KERNEL_FUNCTIONS,
                                        _advance_template)


@lru_cache(maxsize=None)
def interval_kernels(activation: str, scale: str) -> dict:
    """``prepare`` (arb), the compiled interval functions and ``advance`` for one
    configuration, from the generated module cached by :mod:`rdyn.reduced_dynamics.runs.kernel_cache`
    (source and machine code checked on load, rebuilt when stale or corrupt)."""
    from rdyn.reduced_dynamics.runs import kernel_cache

    source = kernel_cache.cached_source("interval", (activation, scale),
                                        lambda: generated_module_source(activation, scale))
    module = kernel_cache.load_module("interval", source, "interval64 certified kernels")
    return {n: getattr(module, n) for n in ("prepare", "advance") + _KERNEL_FUNCTIONS}
