"""Certified (arb, radius-carrying) iteration of Model A: reduced_dynamics/certified/arb_pass.py."""
from __future__ import annotations

import json
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import mpmath
import pytest

flint = pytest.importorskip("flint")
from flint import arb  # noqa: E402

from rdyn.reduced_dynamics.certified.arb_pass import certified_run  # noqa: E402
from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, run  # noqa: E402
from rdyn.reduced_dynamics.model_a.kernels import kernels  # noqa: E402

from checkout import ROOT
SMALL = TeacherConfig(D=8, K=2, eta=0.5)          # T* = 4610, t1 = 11
PAPER = TeacherConfig(D=20, K=4, eta=0.5)         # T* = 163348 (docs/numerics.md)


@lru_cache(maxsize=None)
def small_certified(prec=None, steps=None):
    return certified_run(SMALL, steps=steps, dps=30, prec=prec)


def test_small_case_certified_and_equal_to_float64_and_dps():
    cert = small_certified()
    f64 = run(SMALL)
    mp = run(SMALL, backend="arb", dps=30)
    assert cert.certified
    assert (cert.t1.step, cert.T_star.step) == (f64.t1, f64.T_star) == (mp.t1, mp.T_star)
    assert (cert.t1.step, cert.T_star.step) == (11, 4610)
    assert cert.steps == f64.steps == 2 * 4610
    # the float64 final state lies in (or within float64 rounding of) the certified box
    for ball, x in zip(cert.state, (f64.final.C1, f64.final.C2, f64.final.C3)):
        assert abs(float(ball.mid()) - x) <= 1e-12 * abs(x)


def test_box_contains_high_precision_trajectory():
    cert = certified_run(SMALL, steps=3000, dps=30)
    ref = run(SMALL, steps=3000, backend="arb", dps=80)  # midpoints at 80 digits
    for ball, x in zip(cert.state, (ref.final.C1, ref.final.C2, ref.final.C3)):
        assert ball.rad() > 0
        # every digit of the 80-digit reference, at the test's own precisions (not global state)
        old, flint.ctx.prec = flint.ctx.prec, 320
        try:
            with mpmath.workdps(90):
                assert ball.contains(arb(str(x)))
        finally:
            flint.ctx.prec = old
        # the box is tight: well below 30 digits' worth of relative width
        assert float(ball.rad()) < 1e-33 * abs(float(x))


def test_radius_growth_bounded():
    cert = small_certified()
    assert cert.radius_at_T_star < 1e-36          # 139-bit balls: 2^-139 = 1.4e-42
    assert cert.radius_final < 1e-36
    growth = dict(cert.radius_growth)
    # rounding accumulates about linearly in t, not geometrically (dependency effect)
    assert growth[8192] / growth[1024] < 64


def test_naive_ball_iteration_blows_up():
    """Why the mean-value form: the generated step on balls inflates the radius per step."""
    old = flint.ctx.prec
    flint.ctx.prec = 139
    try:
        k = kernels("relu", "D", "arb")
        c = k.prepare(arb(20), arb(4), arb("0.5"), arb(1), arb("0.1"), arb(1))
        s = (arb(0), arb(0), arb(0))
        for _ in range(200):
            s = k.step(*s, c)
        naive = float(s[0].rad()) / abs(float(s[0].mid()))
    finally:
        flint.ctx.prec = old
    cert = certified_run(PAPER, steps=200, dps=30)
    assert naive > 1e10 * cert.radius_final


def test_refuses_when_level_equals_p_at_a_step():
    """T* level = p(4610) to 70 digits: the enclosure of p - level contains 0 there."""
    ref = run(SMALL, steps=4610, record=[4610], backend="arb", dps=60)
    import mpmath

    with mpmath.workdps(80):
        level = mpmath.nstr(ref.record[4610].p, 70)
    cert = certified_run(SMALL, steps=4620, dps=30, tstar_level=level)
    assert not cert.T_star.certified
    assert cert.T_star.overlap_step == 4610
    assert cert.T_star.overlap.contains(0)
    assert not cert.certified
    assert cert.t1.certified  # the other event is unaffected


def test_refuses_at_low_precision():
    cert = small_certified(prec=24, steps=4700)
    assert not cert.certified
    assert cert.T_star.overlap_step is not None
    assert abs(cert.T_star.overlap_step - 4610) <= 2
    # 30 bits suffice here, and then the answer is the true one
    ok = small_certified(prec=30, steps=4700)
    assert ok.certified and ok.T_star.step == 4610


def test_paper_case_certified_tstar():
    """D=20, K=4, ReLU, eta=0.5: certified T* = 163348, equal to float64 and --dps 30."""
    steps = 163348 + 1
    cert = certified_run(PAPER, steps=steps, dps=30)
    f64 = run(PAPER, steps=steps)
    mp = run(PAPER, steps=steps, backend="arb", dps=30)
    assert cert.certified
    assert cert.T_star.step == f64.T_star == mp.T_star == 163348
    assert cert.t1.step == f64.t1 == mp.t1
    assert cert.radius_at_T_star < 1e-33


def _cli(*argv):
    return subprocess.run([sys.executable, "-m", "rdyn", "teacher", *argv], cwd=ROOT,
                          capture_output=True, text=True)


def test_cli_certify():
    out = _cli("--D", "8", "--K", "2", "--eta", "0.5", "--dps", "30", "--certify", "--json",
               "--quiet")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["certified"] is True
    assert (data["t1"], data["T_star"]) == (11, 4610)
    assert isinstance(data["radius"], str) and float(data["radius"]) < 1e-36
    assert data["certified_backend"] == "arb"


@pytest.mark.parametrize("activation", ["identity", "relu", "leaky"])
@pytest.mark.parametrize("scale", ["D", "sqrtD"])
@pytest.mark.parametrize("C1", [1.1, -0.7])
def test_jacobian_matches_finite_differences(activation, scale, C1):
    """The generated Jacobian (sympy derivatives) against central differences of ``step``."""
    from rdyn.reduced_dynamics.certified.arb_iteration import jacobian_kernels

    D, K = 12, 3
    fk = kernels(activation, scale, "float64")
    c = fk.prepare(D, K, 0.3, 1.5, 0.2, 1.0)
    prep, jpos, jneg = jacobian_kernels(activation, scale)
    cj = prep(arb(D), arb(K), arb("0.3"), arb("1.5"), arb("0.2"), arb(1))
    x = [C1, 2.0, 0.5]
    J = (jpos if C1 > 0 else jneg)(*(arb(v) for v in x), cj)
    a, b, g, h = (float(v.mid()) for v in J)
    r = K / (D - K)
    expected = [[a, b, b], [g, 1 + h, h], [r * g, r * h, 1 + r * h]]
    step = 1e-6
    for j in range(3):
        up, down = list(x), list(x)
        up[j] += step
        down[j] -= step
        column = [(u - d) / (2 * step) for u, d in zip(fk.step(*up, c), fk.step(*down, c))]
        for i in range(3):
            assert column[i] == pytest.approx(expected[i][j], rel=1e-6, abs=1e-8), (i, j)


def test_leaky_sqrtd_certified_equals_float64():
    cfg = TeacherConfig(D=8, K=2, activation="leaky", kappa=0.2, logit_scale="sqrtD")
    f64 = run(cfg)
    cert = certified_run(cfg, steps=f64.steps, dps=20)
    assert cert.certified
    assert (cert.t1.step, cert.T_star.step) == (f64.t1, f64.T_star)
    assert f64.T_star is not None


# --------------------------------------------------------------------------------------------
# interval64: the compiled float64 interval backend (reduced_dynamics/certified/interval_pass.py)
# --------------------------------------------------------------------------------------------

from rdyn.reduced_dynamics.certified.interval import atan_bounds, exp_bounds  # noqa: E402
from rdyn.reduced_dynamics.certified.interval_pass import certified_run_interval, interval_kernels  # noqa: E402


@lru_cache(maxsize=None)
def interval_result(cfg, steps=None):
    return certified_run_interval(cfg, steps=steps)


def test_interval64_paper_case_equals_arb_and_float64():
    """D=20, K=4, ReLU, eta=0.5: T* = 163348 (certified by arb in
    test_paper_case_certified_tstar), t1 = 11, now certified by float64 intervals."""
    cert = interval_result(PAPER, 163348 + 1)
    f64 = run(PAPER, steps=163348 + 1)
    assert cert.certified and cert.backend == "interval64"
    assert (cert.t1.step, cert.T_star.step) == (f64.t1, f64.T_star) == (11, 163348)
    assert cert.radius_at_T_star < 1e-12
    assert cert.t1.certified and cert.T_star.certified


@pytest.mark.parametrize("cfg", [
    SMALL,
    pytest.param(TeacherConfig(D=8, K=2, activation="identity"),
                 marks=pytest.mark.slow),  # ~16 s: compiles the identity interval kernels
    TeacherConfig(D=8, K=2, activation="leaky", kappa=0.2, logit_scale="sqrtD"),
], ids=["relu", "identity", "leaky-sqrtD"])
def test_interval64_equals_arb_certified(cfg):
    f64 = run(cfg)
    steps = f64.T_star + 1
    fast = certified_run(cfg, steps=steps, backend="interval64")
    ball = small_certified(None, steps) if cfg == SMALL else certified_run(cfg, steps=steps, dps=20)
    assert fast.certified and ball.certified
    assert (fast.t1.step, fast.T_star.step) == (ball.t1.step, ball.T_star.step) \
        == (f64.t1, f64.T_star)
    assert f64.T_star is not None
    for box, b in zip(fast.state, ball.state):   # both contain the exact state: they overlap
        assert box.overlaps(b)
        assert float(box.rad()) < 1e-11 * abs(float(b.mid()))


@pytest.mark.parametrize("cfg", [SMALL, TeacherConfig(D=8, K=2, activation="leaky", kappa=0.2,
                                                      eta=0.3, logit_scale="sqrtD")],
                         ids=["relu", "leaky-sqrtD"])
def test_interval64_boxes_contain_mpmath_trajectory(cfg):
    """lo <= exact <= hi at sampled steps, exact = 50-digit mpmath iterates."""
    import mpmath

    samples = [1, 2, 5, 11, 50, 300, 2000]
    ref = run(cfg, steps=samples[-1], record=samples, backend="mpmath", dps=50)
    for t in samples:
        cert = certified_run_interval(cfg, steps=t)
        assert cert.steps == t
        exact = (ref.record[t].C1, ref.record[t].C2, ref.record[t].C3)
        for box, x in zip(cert.state, exact):
            assert box.contains(arb(mpmath.nstr(x, 45))), (t, box, x)
            lo, hi = mpmath.mpf(box.lower().str(30, radius=False)), \
                mpmath.mpf(box.upper().str(30, radius=False))
            assert lo <= x <= hi or box.rad() == 0


def test_interval64_refuses_when_level_equals_p_at_a_step():
    ref = run(SMALL, steps=4610, record=[4610], backend="arb", dps=60)
    import mpmath

    with mpmath.workdps(80):
        level = mpmath.nstr(ref.record[4610].p, 70)
    cert = certified_run_interval(SMALL, steps=4620, tstar_level=level)
    assert not cert.T_star.certified and not cert.certified
    assert cert.T_star.overlap_step == 4610
    assert cert.T_star.overlap.contains(0)
    assert cert.t1.certified
    # the same level nudged by 1e-9 below p(4610): certified again, at 4610
    with mpmath.workdps(80):
        lower = mpmath.nstr(ref.record[4610].p - mpmath.mpf("1e-9"), 70)
    ok = certified_run_interval(SMALL, steps=4620, tstar_level=lower)
    assert ok.certified and ok.T_star.step == 4610


def test_exp_atan_enclosures_against_mpmath():
    """Enclosures from + - * / only, including underflow, overflow and subnormal arguments."""
    import math

    import mpmath
    import numpy as np

    rng = np.random.default_rng(7)
    xs = list(rng.uniform(-800, 720, 400)) + list(rng.uniform(-3, 3, 300)) + [
        0.0, -0.0, 5e-324, -5e-324, 1e-300, -744.44, -745.1332191019411, -745.2, -746.0,
        -746.1, -1000.0, -708.3964185322641, -708.4, 709.0, 709.78, 709.79, 710.0, 1e308,
        -1e308, math.inf, -math.inf]
    with mpmath.workdps(50):
        for x in xs:
            lo, hi = exp_bounds(x)
            assert lo <= hi and lo >= 0
            assert mpmath.mpf(lo) <= mpmath.exp(x) <= mpmath.mpf(hi), x
            if 1e-300 < lo and hi < 1e300:
                assert hi - lo <= 32 * np.spacing(lo)      # tight: a few ulps
        assert exp_bounds(-1000.0) == (0.0, 5e-324)         # underflow: [0, tiny]
        assert exp_bounds(800.0)[1] == math.inf
        assert all(math.isnan(v) for v in exp_bounds(math.nan))
        ys = list(rng.uniform(-6, 6, 400)) + list(
            10.0 ** rng.uniform(-320, 308, 300) * rng.choice([-1, 1], 300)) + [
            0.0, 5e-324, -5e-324, 2.0 ** -1022, 1 / 32, 1 / 16, 15 / 16, 1.0, -1.0, 1e308,
            math.inf, -math.inf]
        for y in ys:
            lo, hi = atan_bounds(y)
            assert mpmath.mpf(lo) <= mpmath.atan(y) <= mpmath.mpf(hi), y
            if abs(lo) > 1e-300:
                assert hi - lo <= 64 * np.spacing(abs(lo))


def test_interval64_exp_underflow_gives_p_equal_one_over_K():
    """C2 + C3 huge: e = exp(-(C2+C3)/D) underflows; the enclosure [0, tiny] keeps p valid."""
    import numpy as np

    from rdyn.reduced_dynamics.certified.interval import arb_to_interval

    k = interval_kernels("relu", "D")
    old = flint.ctx.prec
    flint.ctx.prec = 256
    try:
        consts = np.array([arb_to_interval(arb(v)) for v in k["prepare"](
            arb(20), arb(4), arb("0.5"), arb(1), arb("0.1"), arb(1))])
    finally:
        flint.ctx.prec = old
    (p,) = k["attention"]((1e5, 1e5), (2.5e4, 2.5e4), consts)
    assert p[0] <= 0.25 <= p[1] and p[1] - p[0] < 1e-15
    (c1s,) = k["c1_star"]((1e5, 1e5), (2.5e4, 2.5e4), consts)
    assert c1s[0] <= c1s[1] and np.isfinite(c1s).all()


def test_interval64_no_fma_contraction():
    """Assumption (A1): the compiled interval code uses no fused multiply-add."""
    import numba
    import numpy as np

    from rdyn.reduced_dynamics.certified.interval import exp_bounds as cached_exp

    # fresh (uncached) compilations: numba cannot show the machine code of cached functions
    step = numba.njit(interval_kernels("relu", "D")["incr_positive"].py_func)
    x = (1.0, 1.0)
    step(x, x, x, np.ones((40, 2)))
    fresh_exp = numba.njit(cached_exp.py_func)
    fresh_exp(0.5)
    for fn in (step, fresh_exp):
        (asm,) = fn.inspect_asm().values()
        assert "mulsd" in asm and "fma" not in asm.lower()


def test_cli_certify_interval64_default():
    out = _cli("--D", "8", "--K", "2", "--eta", "0.5", "--certify", "--json", "--quiet")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["certified"] is True and data["certified_backend"] == "interval64"
    assert (data["t1"], data["T_star"]) == (11, 4610)
    assert 0 < data["radius"] < 1e-12
    assert data["certificate"]["backend"] == "interval64"
    assert "backend interval64" in interval_result(SMALL, 4611).text()


@pytest.mark.parametrize("bits", [139, 3400, 13500])
def test_exact_ball_contains_irrational_values_at_any_precision(bits):
    """exact_ball contains the exact irrational value and stays tight at 40 to 4000 digits (its
    radius is formed in arb: a float 10.0**(2 - digits) is 0.0 beyond ~300 digits, where only
    the decimal's own conversion radius then covered the value)."""
    import flint
    import sympy as sp

    from rdyn.reduced_dynamics.certified.exact_inputs import exact_ball

    old = flint.ctx.prec
    flint.ctx.prec = bits + 200       # the references, far tighter than the balls under test
    references = [flint.arb(2).sqrt(), flint.arb.pi() / 7]
    flint.ctx.prec = bits
    try:
        for value, exact in zip([sp.sqrt(2), sp.pi / 7], references):
            ball = exact_ball(value)
            assert ball.rad() > 0 and ball.contains(exact)
            assert ball.rad() < abs(exact) * flint.arb(2) ** (-bits + 8)   # still tight
    finally:
        flint.ctx.prec = old
