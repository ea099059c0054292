"""Model A's collapsed map in compiled double-double arithmetic (``--precision dd``).

The kernels are printed from the same derived sympy expressions as every other backend:
:func:`rdyn.reduced_dynamics.model_a.kernels.interval_source` with ``op="d"`` (the SSA printer
of :mod:`rdyn.derivations.codegen` naming operations ``dadd, dmul, ddiv, dexp, datan, ...``),
evaluated on the dd numbers of :mod:`rdyn.reduced_dynamics.numerics.double_double`; the constants are
computed by the generated ``prepare`` on python-flint ``arb`` balls at 256 bits and rounded
to dd. The map is the generated step's: C1' = g(C1, e), C2' = C2 + d(C1, e),
C3' = C3 + (K/(D-K)) d(C1, e), with the branch chosen by the sign of C1.

The event loop :func:`_advance_template` is :func:`rdyn.reduced_dynamics.model_a.dynamics._make_advance`
with dd comparisons (same events, same order, same capture and end rules), so
:func:`rdyn.reduced_dynamics.model_a.dynamics.run` drives it like the float64 loop: ``state`` is a (3, 2)
array of (hi, lo) pairs, ``capture_out`` an (n, 3, 2) array.

Accuracy: each dd operation has relative error of a few u^2 (u^2 = 2^-106 = 1.2e-32); over
N steps the C2 sum accumulates about sqrt(N) such errors if they are independent, N at
worst. Measured against the 30-digit arb path (tests/reduced_dynamics/test_long_horizons.py): see
docs/long_horizons.md.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from rdyn.reduced_dynamics.numerics import double_double

# settings[...] of the dd loop
D_STAB, D_DEFAULT_END, D_PRE, D_FRAC, D_LEVEL, D_RATIO = 0, 1, 2, 3, 5, 7
N_DSETTINGS = 9


def _advance_template(state, t, n, c, capture_steps, capture_out, cursor, events, settings):
    """Advance the dd state (C1, C2, C3 at step t) by up to n steps; returns the new t.

    events = [t1, T_star, lost_at_step, end]; settings: see ``D_*`` (stability check flag,
    default-end flag, float prefilter on C2 + C3, then the dd pairs t1_fraction,
    tstar_attention and K/(D-K)). A template: compiled inside the generated module.
    """
    frac = (settings[D_FRAC], settings[D_FRAC + 1])
    level = (settings[D_LEVEL], settings[D_LEVEL + 1])
    ratio = (settings[D_RATIO], settings[D_RATIO + 1])
    C1 = (state[0, 0], state[0, 1])
    C2 = (state[1, 0], state[1, 1])
    C3 = (state[2, 0], state[2, 1])
    for _ in range(n):
        if events[0] < 0 and t >= 1 and dge(C1, dmul(frac, c1_star(C2, C3, c)[0])):
            events[0] = t
        if (events[1] < 0 and C2[0] + C3[0] >= settings[D_PRE]
                and dge(attention(C2, C3, c)[0], level)):
            events[1] = t
            if settings[D_DEFAULT_END] > 0:
                events[3] = max(2 * t, 1000)
        if settings[D_STAB] > 0 and events[2] < 0 and t < events[3]:
            m = multiplier(C2, C3, c)[0]
            if not (dge(m, (-1.0, 0.0)) and not dge(m, (1.0, 0.0))
                    and not (m[0] == -1.0 and m[1] == 0.0)):
                events[2] = t
        while cursor[0] < len(capture_steps) and capture_steps[cursor[0]] == t:
            i = cursor[0]
            capture_out[i, 0, 0] = C1[0]
            capture_out[i, 0, 1] = C1[1]
            capture_out[i, 1, 0] = C2[0]
            capture_out[i, 1, 1] = C2[1]
            capture_out[i, 2, 0] = C3[0]
            capture_out[i, 2, 1] = C3[1]
            cursor[0] += 1
        if t >= events[3]:
            break
        if C1[0] > 0:
            g, d = incr_positive(C1, C2, C3, c)
        elif C1[0] == 0:
            g, d = incr_zero(C1, C2, C3, c)
        else:
            g, d = incr_negative(C1, C2, C3, c)
        C1 = g
        C2 = dadd(C2, d)
        C3 = dadd(C3, dmul(ratio, d))
        t += 1
    state[0, 0] = C1[0]
    state[0, 1] = C1[1]
    state[1, 0] = C2[0]
    state[1, 1] = C2[1]
    state[2, 0] = C3[0]
    state[2, 1] = C3[1]
    return t


_KERNEL_FUNCTIONS = ("incr_positive", "incr_negative", "incr_zero", "attention", "c1_star",
                     "multiplier")


def generated_module_source(activation: str, scale: str) -> str:
    """The generated module: the dd kernels (numba, cached), ``prepare`` (arb) and
    ``advance`` (the source of :func:`_advance_template`)."""
    from rdyn.reduced_dynamics.runs.kernel_cache import assemble_module
    from rdyn.reduced_dynamics.model_a.kernels import interval_source

    imports = [
        "from flint import arb as R",
        "from rdyn.derivations.codegen import arb_namespace",
        "from rdyn.reduced_dynamics.numerics.double_double import (" + ", ".join(double_double.PRIMITIVES) + ")",
        "from rdyn.reduced_dynamics.model_a.double_double_run import (" + ", ".join(
            n for n in globals() if n.startswith("D_")) + ")",
        "F = arb_namespace()",
    ]
    return assemble_module("rdyn.reduced_dynamics.model_a.double_double_run", imports,
                           interval_source(activation, scale, "d"), _KERNEL_FUNCTIONS,
                           _advance_template)


@lru_cache(maxsize=None)
def dd_kernels(activation: str, scale: str) -> dict:
    """``prepare`` (arb), the compiled dd functions and ``advance`` for one configuration,
    from the generated module cached by :mod:`rdyn.reduced_dynamics.runs.kernel_cache` (source and
    machine code checked on load, rebuilt when stale or corrupt)."""
    from rdyn.reduced_dynamics.runs import kernel_cache

    source = kernel_cache.cached_source("dd", (activation, scale),
                                        lambda: generated_module_source(activation, scale))
    module = kernel_cache.load_module("dd", source, "double-double Model A kernels")
    return {n: getattr(module, n) for n in ("prepare", "advance") + _KERNEL_FUNCTIONS}


def dd_inputs(config, thresholds) -> tuple[np.ndarray, np.ndarray]:
    """(constants c as an (n, 2) dd array, settings without the flags/prefilter filled):
    the parameters as in the certified backends (:func:`rdyn.reduced_dynamics.certified.exact_inputs.
    exact_inputs`: eta exact, the others their decimal forms), evaluated at 256 bits."""
    import flint
    from flint import arb

    from rdyn.reduced_dynamics.certified.exact_inputs import exact_inputs

    kern = dd_kernels(config.activation, config.logit_scale)
    with flint.ctx.workprec(256):
        params, fraction, level = exact_inputs(config, thresholds)
        consts = np.array([double_double.dd_of(arb(v)) for v in kern["prepare"](*params)])
        settings = np.zeros(N_DSETTINGS)
        settings[D_FRAC:D_FRAC + 2] = double_double.dd_of(fraction)
        settings[D_LEVEL:D_LEVEL + 2] = double_double.dd_of(level)
        settings[D_RATIO:D_RATIO + 2] = double_double.dd_of(arb(config.K) / (config.D - config.K))
    return consts, settings
