"""Certified (arb, radius-carrying) iteration of Model A: reduced_dynamics/certified.py."""
from __future__ import annotations

import json
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

flint = pytest.importorskip("flint")
from flint import arb  # noqa: E402

from reduced_dynamics.certified import certified_run  # noqa: E402
from reduced_dynamics.model_a import TeacherConfig, run  # noqa: E402
from reduced_dynamics.model_a_kernels import kernels  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SMALL = TeacherConfig(D=8, K=2, eta=0.5)          # T* = 4610, t1 = 11
PAPER = TeacherConfig(D=20, K=4, eta=0.5)         # T* = 163348 (NUMERICS.md)


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
        assert ball.contains(arb(str(x)))
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
    bad = _cli("--D", "8", "--K", "2", "--certify")
    assert bad.returncode == 2 and "--certify requires --dps" in bad.stderr
    assert bad.stderr.count("\n") == 1


@pytest.mark.parametrize("activation", ["identity", "relu", "leaky"])
@pytest.mark.parametrize("scale", ["D", "sqrtD"])
@pytest.mark.parametrize("C1", [1.1, -0.7])
def test_jacobian_matches_finite_differences(activation, scale, C1):
    """The generated Jacobian (sympy derivatives) against central differences of ``step``."""
    from reduced_dynamics.certified import jacobian_kernels

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
