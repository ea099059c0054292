"""Model A with sigma = erf or GELU in float64: the collapsed map as a compiled closed form
(numba); the compiled event loop (:func:`_make_iterate`, also driving the compiled Gauss-Hermite
rule of :mod:`rdyn.reduced_dynamics.model_a.compiled_rule`). GELU's forms come from
:func:`rdyn.derivations.activations.closed_moments` ("gelu"); erf's are written below from the primitives
(fewer terms).

With Z ~ N(0, 1) the outer variable of :mod:`rdyn.reduced_dynamics.model_a.smooth`
(``Y2 = s2 Z``, ``E[sigma(r Y1) | Z] = erf(alpha Z)``, ``alpha = r rho / sqrt(1 + 2 r^2 s_res^2)``,
``rho = p / s2``) and ``beta = C1 r s2``, ``lambda = beta^2``, ``k = 2/sqrt(pi)``, every
expectation of the map is a combination of the sympy-derived primitives of
:func:`rdyn.derivations.activations.erf_primitives`:

* ``r m2 = k s2 (I1(alpha, lambda) - I1(beta, lambda))``,
* ``r m1 = k (rho I1(alpha, lambda) + s_res^2 r c G0(alpha^2 + lambda) - rho I1(beta, lambda))``
  with ``c = k / sqrt(1 + 2 r^2 s_res^2)`` (Stein's identity on the inner variable),
* ``dm2/dC1 = s2^2 (-2 k beta (I3(alpha, lambda) - I3(beta, lambda)) - k^2 G2(2 lambda))``,
* ``E[(sigma(r Y1) - sigma(C1 r Y2))^2] = J(a, a) - 2 J(alpha, beta) + J(beta, beta)``,
  ``a = r / sqrt(K)``.

The loop (:func:`iterate`) runs every step in compiled code with the events of the quadrature
path: T* (p >= level), t1 (sign of m2 at C1 / fraction), lost_at_step (multiplier
``1 + eta D dm2/dC1`` outside (-1, 1)), and captures the state at the requested steps.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from rdyn.derivations.generated import run_generated


@lru_cache(maxsize=1)
def compiled_primitives():
    """(I1, I3, G0, G2, J) compiled by numba from the sympy expressions."""
    import numba
    import sympy as sp

    from rdyn.derivations import activations as act

    forms = act.closed_forms("erf")
    args = {"I1": (act.alpha, act.lam), "I3": (act.alpha, act.lam), "G0": (act.lam,),
            "G2": (act.lam,), "J": (act.alpha, act.beta)}
    return tuple(numba.njit(sp.lambdify(args[name], forms[name], modules="math"))
                 for name in ("I1", "I3", "G0", "G2", "J"))


@lru_cache(maxsize=1)
def compiled_logit_gradients():
    import numba

    from rdyn.derivations.model_a.collapsed_general import logit_gradient_functions

    grad_in, grad_out = logit_gradient_functions()
    return numba.njit(grad_in), numba.njit(grad_out)


@lru_cache(maxsize=1)
def compiled_geometry():
    """(p, s2, s_res, rho) at e = exp(-(C2+C3)/scale): the attention, sd of Y2, the residual sd of
    Y1 given Y2, and p/s2 (model_a.smooth.Expectations.level, compiled)."""
    import numba

    @numba.njit(cache=False)
    def geometry(e, D, K):
        N = D - K
        p = 1.0 / (K + N * e)
        q = e * p
        s2 = math.sqrt(K * p * p + N * q * q)
        return p, s2, q * math.sqrt(N / K) / s2, p / s2

    return geometry


# the int64 loop counters of the compiled event loop (one array, so a chunk can stop and a
# later call, or a resumed run, continue bit-identically): step, t1, T*, lost_at_step, stop
# step, capture cursor, first diverged step (-1: not yet)
EV_T, EV_T1, EV_TSTAR, EV_LOST, EV_STOP, EV_CURSOR, EV_DIVERGED = range(7)


def start_counters(end: int) -> np.ndarray:
    """The counters of a run at step 0 (no event yet, stop at ``end``)."""
    return np.array([0, -1, -1, -1, int(end), 0, -1], dtype=np.int64)


def _make_iterate(moments, grad_in, grad_out):
    """The compiled event loop (:mod:`rdyn.reduced_dynamics.model_a.event_loop`) around
    ``moments(C1, e, D, K, r, z, w, work) -> (p, m1, m2, dm2, .., ..)`` (``z, w``: a
    Gauss-Hermite rule, ``work``: a 2 x n scratch array, so nothing is allocated per step;
    unused by the closed forms).

    ``state`` (C1, C2, C3) and ``ev`` (the counters, :data:`EV_T` ...) are advanced in place
    until the run ends (returns 1: stop step reached or diverged) or step ``chunk_end`` is
    reached before it is processed (returns 0); the next call continues from there, so a
    run cut into chunks is bit-identical to one call."""
    import numba

    from rdyn.reduced_dynamics.model_a.event_loop import loop_source

    source = loop_source(
        args="z, w, work",
        setup="r = math.sqrt(V / M)",
        moments="p, m1, m2, dm2, _, _ = moments(C1, e, D, K, r, z, w, work)",
        t1="""
            if t1 < 0 and t >= 1:
                m2f = moments(C1 / fraction, e, D, K, r, z, w, work)[2]
                if m2f <= 0.0:
                    t1 = t
            """,
        lost="""
            mult = 1.0 + eta * D * dm2
            if not (-1.0 < mult < 1.0):
                lost = t
            """)
    namespace = {"math": math, "moments": moments, "grad_in": grad_in, "grad_out": grad_out}
    run_generated(source, "model A compiled event loop", namespace)
    return numba.njit(cache=False)(namespace["iterate"])


@lru_cache(maxsize=1)
def compiled_iterate():
    """(iterate, moments) of erf's closed form (built once per process)."""
    import numba

    I1, I3, G0, G2, J = compiled_primitives()
    geometry = compiled_geometry()
    k = 2.0 / math.sqrt(math.pi)

    @numba.njit(cache=False)
    def moments(C1, e, D, K, r, z=None, w=None, work=None):
        p, s2, s_res, rho = geometry(e, D, K)
        spread = 1.0 + 2.0 * r * r * s_res * s_res
        alpha = r * rho / math.sqrt(spread)
        beta = C1 * r * s2
        lam = beta * beta
        m2 = k * s2 * (I1(alpha, lam) - I1(beta, lam)) / r
        m1 = k * (rho * I1(alpha, lam) + s_res * s_res * r * (k / math.sqrt(spread))
                  * G0(alpha * alpha + lam) - rho * I1(beta, lam)) / r
        dm2 = s2 * s2 * (-2.0 * k * beta * (I3(alpha, lam) - I3(beta, lam)) - k * k * G2(2.0 * lam))
        return p, m1, m2, dm2, alpha, beta

    return _make_iterate(moments, *compiled_logit_gradients()), moments


@lru_cache(maxsize=1)
def compiled_gelu_forms():
    """GELU's closed forms (:func:`rdyn.derivations.activations.closed_moments` ("gelu")) compiled
    as one function of (C1, r, rho, s_res, s2, W, K) returning (m1, m2, dm2, cross, square),
    common subexpressions shared (sympy cse)."""
    import numba
    import sympy as sp

    from rdyn.derivations import activations as act

    forms = act.closed_forms("gelu")
    args = (act.state_C1, act.state_r, act.state_rho, act.state_sres, act.state_s2, act.state_W,
            act.state_K)
    names = ("m1", "m2", "dm2", "cross", "square")
    return numba.njit(sp.lambdify(args, [forms[n] for n in names], modules="math", cse=True))


@lru_cache(maxsize=1)
def compiled_gelu_iterate():
    """(iterate, moments) of GELU's closed form (built once per process)."""
    import numba

    forms = compiled_gelu_forms()
    geometry = compiled_geometry()

    @numba.njit(cache=False)
    def moments(C1, e, D, K, r, z=None, w=None, work=None):
        p, s2, s_res, rho = geometry(e, D, K)
        W = math.sqrt(1.0 + r * r * s_res * s_res)
        m1, m2, dm2, cross, square = forms(C1, r, rho, s_res, s2, W, K)
        return p, m1, m2, dm2, cross, square

    return _make_iterate(moments, *compiled_logit_gradients()), moments


def excess_loss(C1: float, C2: float, C3: float, config) -> float:
    """M D / 2 (J(a, a) - 2 J(alpha, beta) + J(beta, beta)) at a state (float64)."""
    _, _, _, _, J = compiled_primitives()
    _, moments = compiled_iterate()
    e = math.exp(-(C2 + C3) / config.scale)
    r = config.row_norm
    *_, alpha, beta = moments(C1, e, float(config.D), float(config.K), r)
    a = r / math.sqrt(config.K)
    return config.M * config.D / 2 * (J(a, a) - 2 * J(alpha, beta) + J(beta, beta))


def compiled_loop(name: str):
    """The compiled event loop of erf's (``name == "erf"``) or GELU's closed form."""
    return (compiled_iterate() if name == "erf" else compiled_gelu_iterate())[0]


def loop_counters(loop, capture_steps: np.ndarray) -> np.ndarray:
    """The counters (``EV_*``) of the Python-side ``loop`` record for a compiled loop to go on
    from (the inverse of :func:`sync_loop`; first diverged step: none yet)."""
    ev = np.array([loop.t, -1 if loop.t1 is None else loop.t1,
                   -1 if loop.T_star is None else loop.T_star,
                   -1 if loop.lost is None else loop.lost, loop.stop_at, 0, -1], dtype=np.int64)
    ev[EV_CURSOR] = np.searchsorted(capture_steps, loop.t, side="left")
    return ev


def sync_loop(loop, state: np.ndarray, ev: np.ndarray, out: np.ndarray,
              capture_steps: np.ndarray) -> None:
    """Copy a compiled loop's state, event counters (``ev``, indexed by ``EV_*``) and the
    captures it wrote into ``out`` back into the Python-side ``loop`` record (shared by the
    closed-form loop here and the table route of :mod:`rdyn.reduced_dynamics.model_a.smooth_tables`)."""
    captured = dict(loop.captured)
    for i in range(int(np.searchsorted(capture_steps, loop.t, side="left")), int(ev[EV_CURSOR])):
        captured[int(capture_steps[i])] = tuple(float(v) for v in out[i])
    event = lambda k: None if ev[k] < 0 else int(ev[k])  # noqa: E731
    loop.state = [float(v) for v in state]
    loop.t, loop.t1, loop.T_star, loop.lost = (int(ev[EV_T]), event(EV_T1), event(EV_TSTAR),
                                               event(EV_LOST))
    loop.stop_at, loop.captured, loop.diverged = (int(ev[EV_STOP]), captured, event(EV_DIVERGED))


def advance_compiled(config, state: np.ndarray, ev: np.ndarray, chunk_end: int, eta: float,
                     fraction: float, level: float, default_run: bool, min_default: int,
                     end: int, capture_steps: np.ndarray, capture_out: np.ndarray,
                     loop=None) -> bool:
    """Advance ``state`` and the counters ``ev`` of a compiled loop in place up
    to step ``chunk_end`` or the end of the run (returns True when the run has ended: stop
    step reached or the next state diverged; the state is then the last finite one).
    ``loop``: (iterate, z, w), a loop of :func:`_make_iterate` and its Gauss-Hermite rule
    (:func:`rdyn.reduced_dynamics.model_a.compiled_rule.compiled_rule_loop`); None: erf's or
    GELU's closed form."""
    from rdyn.reduced_dynamics.runs.divergence import STATE_BOUND

    if loop is None:
        loop = (compiled_loop(config.activation.name), np.zeros(1), np.zeros(1))
    iterate, z, w = loop
    work = np.empty((2, z.shape[0]))
    return int(iterate(
        state, ev, int(chunk_end), float(eta), float(config.D), float(config.K),
        float(config.M), float(config.vstar_norm2), float(config.scale), float(fraction),
        float(level), bool(default_run), int(min_default), int(end), capture_steps, capture_out,
        float(STATE_BOUND), z, w, work)) == 1
