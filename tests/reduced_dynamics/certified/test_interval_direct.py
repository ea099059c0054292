"""The direct form of the certified iteration on float64 intervals
(reduced_dynamics/certified/interval_direct.py, the kernels of verify/proofs/kernels.py's
interval_direct_source): its boxes and by-products contain the exact trajectory (a 40-digit run,
``rdyn teacher --dps 40``), and they are narrow."""
from __future__ import annotations

from functools import lru_cache

import pytest

# the compiled kernels take about 2.5 minutes of numba compilation on a fresh checkout (cached after)
pytestmark = pytest.mark.slow

flint = pytest.importorskip("flint")
from flint import arb  # noqa: E402

from rdyn.reduced_dynamics.certified.interval import interval_ball  # noqa: E402
from rdyn.reduced_dynamics.certified.interval_direct import COLUMNS, STOP_BRANCH, IntervalDirect  # noqa: E402
from rdyn.verification.proofs.engine import Instance  # noqa: E402

RELU = Instance(12, 3, activation="relu", eta=0.01)   # rdyn prove's Done-when instance (T* = 1165870)
FAST = Instance(8, 2, eta=0.5)                        # T* = 4610, a fast map (contraction ~0.4 a step)


def params(inst):
    """The arguments of the kernels' ``prepare``, as verify/proofs/engine.py builds them."""
    eta = inst.exact_eta()
    kappa = inst.kappa if inst.activation == "leaky" else 0.0
    return (arb(inst.K).sqrt(), arb(inst.D - inst.K).sqrt(), arb(int(eta.p)) / int(eta.q),
            arb(repr(float(inst.vstar_norm2))), arb(repr(float(kappa))), arb(1))


def iteration(inst) -> IntervalDirect:
    """The float route of ``inst``, prepared as rdyn prove prepares its arb kernels (200 bits)."""
    from rdyn.verification.proofs.kernels import interval_direct_source, kernels

    old, flint.ctx.prec = flint.ctx.prec, 200
    try:
        k = kernels(inst.activation, inst.logit_scale)
        p = params(inst)
        return IntervalDirect(interval_direct_source(inst.activation, inst.logit_scale), p, k.first_c1(k.prepare(*p)))
    finally:
        flint.ctx.prec = old


@lru_cache(maxsize=None)
def records(inst, steps: int):
    """The record of steps 1 .. steps (row t - 1: step t)."""
    it = iteration(inst)
    rec = it.advance(steps)
    assert it.stopped == 0 and rec.shape == (steps, 2 * len(COLUMNS))
    return rec


def reference(inst, samples):
    """(C1, x) at the sample steps and at the steps after them, from the 40-digit arb run."""
    import mpmath

    from rdyn.reduced_dynamics.model_a.dynamics import run

    steps = sorted(set(samples) | {t + 1 for t in samples})
    ref = run(inst.config(), steps=steps[-1], record=steps, backend="arb", dps=40)

    def ball(v):   # the record's value to 40 digits, widened by 1e-38 (relative) for the run's own error
        b = arb(mpmath.nstr(v, 40))
        return b + arb(0, abs(float(v)) * 1e-38)

    return {t: (ball(ref.record[t].C1), ball(ref.record[t].C2) + ball(ref.record[t].C3)) for t in steps}


@pytest.mark.parametrize("inst, samples", [(FAST, (1, 2, 11, 100, 1000, 4610)),
                                           (RELU, (1, 2, 50, 599, 5000, 30000)),
                                           (Instance(9, 3, activation="identity", eta=0.05), (1, 3, 400, 8000)),
                                           (Instance(9, 3, activation="leaky", kappa=0.1, eta=0.05,
                                                     logit_scale="sqrtD"), (1, 3, 400, 8000))])
def test_enclosures_contain_the_40_digit_trajectory(inst, samples):
    """lo <= exact <= hi for C1, x, and the step's Delta x = x(t+1) - x(t) and e = exp(-x/scale) at
    each sample step t, exact = ``rdyn teacher --dps 40``'s trajectory (error ~1e-37); the intervals
    are narrow (relative half-width below 1e-12 here: x is kept as a double-double centre, so the rounding
    of x + Delta x no longer adds to its width)."""
    old, flint.ctx.prec = flint.ctx.prec, 200
    try:
        ref = reference(inst, samples)
        rec = records(inst, max(samples) + 1)
        scale = arb(inst.D) if inst.logit_scale == "D" else arb(inst.D).sqrt()
        for t in samples:
            row = rec[t - 1]
            C1, x = ref[t]
            exact = {"C1": C1, "x": x, "dx": ref[t + 1][1] - x, "e": (-x / scale).exp()}
            for j, name in enumerate(COLUMNS[:4]):
                box = interval_ball(row[2 * j], row[2 * j + 1])
                # a point box (C1(1), x(1): exact input) is the exact value
                assert box.contains(exact[name]) or box.rad() == 0 and exact[name].contains(box), \
                    (inst, t, name, box, exact[name])
                if name != "x" or t > 1:   # x(1) = 0 exactly
                    assert float(box.rad()) <= 1e-12 * abs(float(exact[name].mid())), (inst, t, name, box)
            # the state's next box is the next row's
            assert interval_ball(rec[t][0], rec[t][1]).contains(ref[t + 1][0])
    finally:
        flint.ctx.prec = old


def test_by_products_are_the_maps_coefficients():
    """C1(t+1) lies in C1(t) (1 + (alpha - 1)) + beta evaluated on the recorded intervals (the
    by-products are those of the step's own box)."""
    rec = records(RELU, 600)
    for t in (1, 10, 300, 599):
        row = rec[t - 1]
        C1, a1, b0 = (interval_ball(row[2 * j], row[2 * j + 1]) for j in (0, 4, 5))
        assert (C1 * (1 + a1) + b0).overlaps(interval_ball(rec[t][0], rec[t][1]))


def test_stops_where_the_branch_is_not_certain():
    """A box with C1 <= 0 possible is not stepped: the loop stops there (C1 > 0 branch only)."""
    it = iteration(RELU)
    it.st[1] = 0.5
    it.st[0] = -0.5
    assert it.advance(10).shape[0] == 0 and it.stopped == STOP_BRANCH and it.t == 1


@pytest.mark.parametrize("inst", [RELU, FAST])
def test_a_wide_box_encloses_the_map_on_it(inst):
    """On a box of relative width ~1e-6 (where the mean-value terms, not the rounding, make the
    widths), the recorded by-products and the next box contain the arb direct form's values at
    the box's corners and centre (every point of the box: mean-value form)."""
    from rdyn.verification.proofs.kernels import kernels

    it = iteration(inst)
    it.advance(300, record=False)
    (a, b), (u, v) = it.state()
    c1, x = 0.5 * (a + b), 0.5 * (u + v)
    old, flint.ctx.prec = flint.ctx.prec, 200
    try:   # the box handed over as arb balls (the state keeps x as a double-double centre and a radius)
        it.set_state(interval_ball(c1 * (1 - 1e-6), c1 * (1 + 1e-6)), interval_ball(x * (1 - 1e-6), x * (1 + 1e-6)),
                     it.t)
    finally:
        flint.ctx.prec = old
    row = it.advance(1)[0]
    (na, nb), (nu, nv) = it.state()
    old, flint.ctx.prec = flint.ctx.prec, 200
    try:
        k = kernels(inst.activation, inst.logit_scale)
        c = k.prepare(*params(inst))
        for C1p in (c1 * (1 - 1e-6), c1, c1 * (1 + 1e-6)):
            for xp in (x * (1 - 1e-6), x, x * (1 + 1e-6)):
                C1n, xn, dx, e, a1, b0 = k.advance(arb(C1p), arb(xp), c)
                for j, value in ((2, dx), (3, e), (4, a1), (5, b0)):
                    assert interval_ball(row[2 * j], row[2 * j + 1]).contains(value), (j, C1p, xp)
                assert interval_ball(na, nb).contains(C1n) and interval_ball(nu, nv).contains(xn)
        # and the box is not much wider than the image (the form is tight to first order)
        assert nb - na < 1e-5 * c1 and nv - nu < 1e-5 * x
    finally:
        flint.ctx.prec = old


def test_atan_of_a_narrow_interval_from_one_evaluation():
    """iatan_narrow (the direct route's atan) contains arb's atan at both ends of intervals of
    several widths and signs, is never narrower than the exact range, and is within the stated
    excess (a1 - a0) a^2/(1 + a^2) (plus rounding) of iatan's enclosure."""
    import random

    from rdyn.reduced_dynamics.certified.interval import iatan, iatan_narrow

    rng = random.Random(5)
    old, flint.ctx.prec = flint.ctx.prec, 200
    try:
        _check_atan(rng, iatan, iatan_narrow)
    finally:
        flint.ctx.prec = old


def _check_atan(rng, iatan, iatan_narrow):
    for _ in range(300):
        a0 = rng.uniform(-30, 30) * 10 ** rng.uniform(-8, 0)
        a1 = a0 + abs(a0) * 10 ** rng.uniform(-16, -2) + 1e-300
        lo, hi = iatan_narrow((a0, a1))
        assert arb(lo) <= arb(a0).atan() and arb(hi) >= arb(a1).atan(), (a0, a1, lo, hi)
        wide = iatan((a0, a1))
        excess = (a1 - a0) * max(a0 * a0, a1 * a1) / (1 + min(a0 * a0, a1 * a1))
        assert hi - wide[1] <= excess + 1e-14 * abs(hi) + 1e-300, (a0, a1)


def test_no_fma_contraction():
    """Assumption (A1) of interval.py for this route's compiled step and loop: multiplications are
    separate roundings (mulsd), never fused multiply-adds."""
    import numba
    import numpy as np

    it = iteration(RELU)
    step = numba.njit(it.module.direct_step.py_func)   # fresh: numba shows no cached machine code
    x = (1.0, 1.0)
    step(x, x, it.c)
    loop = numba.njit(it.module.advance.py_func)
    loop(it.st.copy(), 2, it.c, np.empty((2, 12)))
    for fn in (step, loop):
        (asm,) = fn.inspect_asm().values()
        assert "mulsd" in asm and "fma" not in asm.lower()


def test_exp_of_a_narrow_interval_from_one_evaluation():
    """iexp_narrow (the direct route's exp) contains arb's exp at both ends of intervals of
    widths up to 1 (and of wider ones, through iexp), and exceeds iexp's upper end by at most its
    d^2 term (plus rounding)."""
    import random

    from rdyn.reduced_dynamics.certified.interval import iexp, iexp_narrow

    rng = random.Random(7)
    old, flint.ctx.prec = flint.ctx.prec, 200
    try:
        for _ in range(300):
            a0 = rng.uniform(-60, 60)
            a1 = a0 + 10 ** rng.uniform(-17, 0.5) * max(1.0, abs(a0))
            lo, hi = iexp_narrow((a0, a1))
            assert arb(lo) <= arb(a0).exp() and arb(hi) >= arb(a1).exp(), (a0, a1, lo, hi)
            wide = iexp((a0, a1))
            d = a1 - a0
            if d <= 1:
                assert hi - wide[1] <= wide[1] * (d * d + 1e-14) + 1e-300, (a0, a1)
            else:
                assert hi == wide[1]
    finally:
        flint.ctx.prec = old
