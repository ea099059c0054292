"""The one compiled event loop of Model A's float64 smooth runs, as generated source: the
closed forms of erf and GELU and the compiled Gauss-Hermite rule
(:func:`rdyn.reduced_dynamics.model_a.compiled._make_iterate`) and the tabulated moments
(:func:`rdyn.reduced_dynamics.model_a.smooth_tables.compiled_table_loop`) fill in only how a
step gets its moments; the events, captures, the map's update (``C1' = C1 + eta D m2``,
``C2' = C2 - eta g_in / scale``, ``C3' = C3 + eta g_out / scale``, the logit gradients of
:mod:`rdyn.derivations.model_a.collapsed_general`) and the divergence rule are written once, here.

The loop advances ``state`` (C1, C2, C3) and ``ev`` (the int64 counters
:data:`rdyn.reduced_dynamics.model_a.compiled.EV_T` ...) in place and returns 0 (step
``chunk_end`` reached before it was processed), 1 (the run ended: stop step reached or the
next state diverged) or 2 (the moments are not available yet: nothing of the step was done;
the tabulated route's missing tile). Events: T* (p >= level), t1 (t >= 1 and the sign of
m2 at C1 / fraction), lost_at_step (the multiplier ``1 + eta D dm2/dC1`` outside (-1, 1)).
"""
from __future__ import annotations

import textwrap

_TEMPLATE = '''
def iterate(state, ev, chunk_end, eta, D, K, M, V, scale, fraction, level, default_run,
            min_default, end, capture_steps, capture_out, bound, @ARGS@):
    N = D - K
    C1 = state[0]
    C2 = state[1]
    C3 = state[2]
    t = ev[0]
    t1 = ev[1]
    t_star = ev[2]
    lost = ev[3]
    stop = ev[4]
    cursor = ev[5]
    diverged = ev[6]
    status = 0
@SETUP@
    while True:
        if t >= chunk_end:
            break
        e = math.exp(-(C2 + C3) / scale)
@MOMENTS@
        if t_star < 0 and p >= level:
            t_star = t
            if default_run:
                stop = min(max(2 * t, min_default), end)
@T1@
        if lost < 0 and t < stop:
@LOST@
        while cursor < capture_steps.shape[0] and capture_steps[cursor] == t:
            capture_out[cursor, 0] = C1
            capture_out[cursor, 1] = C2
            capture_out[cursor, 2] = C3
            cursor += 1
        if t >= stop:
            status = 1
            break
        g_in = grad_in(C1, e, K, N, V, m1, m2)
        g_out = grad_out(C1, e, K, N, V, m1, m2)
        C1n, C2n, C3n = C1 + eta * D * m2, C2 - eta * g_in / scale, C3 + eta * g_out / scale
        # the divergence rule (reduced_dynamics/runs/divergence.py, STATE_BOUND): stop before it
        if not (abs(C1n) <= bound and abs(C2n) <= bound and abs(C3n) <= bound):
            diverged = t + 1
            status = 1
            break
        C1, C2, C3 = C1n, C2n, C3n
        t += 1
    state[0] = C1
    state[1] = C2
    state[2] = C3
    ev[0] = t
    ev[1] = t1
    ev[2] = t_star
    ev[3] = lost
    ev[4] = stop
    ev[5] = cursor
    ev[6] = diverged
    return status
'''


def loop_source(args: str, setup: str, moments: str, t1: str, lost: str) -> str:
    """The source of ``iterate`` (module docstring) with the route's parts filled in, each
    given as unindented code: ``args``, the route's extra parameters after ``bound``;
    ``setup``, run once before the loop; ``moments``, per step after ``e`` is known: sets
    ``p, m1, m2`` (may ``break`` with ``status = 2``); ``t1``: the t1 test (sets ``t1 = t``);
    ``lost``: run when ``lost < 0 and t < stop``, sets ``lost = t`` if the step is unstable.
    ``grad_in``, ``grad_out`` and ``math`` must be names of the module the source runs in."""
    def block(code: str, depth: int) -> str:
        body = textwrap.dedent(code).strip("\n") or "pass"   # an empty part is a no-op
        return textwrap.indent(body, "    " * depth)

    return (_TEMPLATE.replace("@ARGS@", args).replace("@SETUP@", block(setup, 1))
            .replace("@MOMENTS@", block(moments, 2)).replace("@T1@", block(t1, 2))
            .replace("@LOST@", block(lost, 3)))
