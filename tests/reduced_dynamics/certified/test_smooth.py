"""Certified (arb) iteration of Model A for erf and GELU: reduced_dynamics/certified/smooth.py."""
from __future__ import annotations

import json
from functools import lru_cache

import mpmath
import pytest

flint = pytest.importorskip("flint")
from flint import arb  # noqa: E402

from rdyn import cli  # noqa: E402
from rdyn.derivations import activations as act  # noqa: E402
from rdyn.derivations.activations import Activation  # noqa: E402
from rdyn.reduced_dynamics.model_a import smooth as ms  # noqa: E402
from rdyn.reduced_dynamics.certified.smooth import certified_smooth_run  # noqa: E402

STEPS = 80


def _config(name, D=8, K=2, M=2, vstar_norm2=1.0, eta=0.2):
    return ms.SmoothConfig(D=D, K=K, activation=Activation(name), eta=eta,
                           vstar_norm2=vstar_norm2, M=M)


@lru_cache(maxsize=None)
def _certified(name, steps=STEPS):
    return certified_smooth_run(_config(name), 0.2, steps)


def _ball_of(x, digits):
    """x (an mpf of a --dps run) as an arb ball of its digits, at the test's own precisions."""
    with mpmath.workdps(digits + 10), flint.ctx.workprec(int(3.33 * digits) + 64):
        return arb(mpmath.nstr(x, digits + 5))


@pytest.mark.parametrize("name", ["erf", "gelu"])
def test_centre_agrees_with_float64_and_dps30(name):
    cert = _certified(name)
    assert cert.certified and cert.stopped is None and cert.steps == STEPS
    f64 = ms.run(_config(name), STEPS)
    mp30 = ms.run(_config(name), STEPS, dps=30)
    assert (cert.t1.step, cert.T_star.step) == (f64.t1, f64.T_star) == (mp30.t1, mp30.T_star)
    assert cert.t1.step is not None
    for ball, x, y in zip(cert.state, (f64.final.C1, f64.final.C2, f64.final.C3),
                          (mp30.final.C1, mp30.final.C2, mp30.final.C3)):
        centre = float(ball.mid())
        assert abs(centre - x) <= 1e-13 * abs(x)        # compiled float64 closed form
        with mpmath.workdps(40):                        # 30-digit quadrature route
            assert abs(mpmath.mpf(ball.mid().str(40, radius=False)) - y) <= mpmath.mpf(10) ** -28 * abs(y)
    # the radius: far below the 30 digits asked for
    assert cert.radius_final < 1e-33


@pytest.mark.parametrize("name", ["erf", pytest.param("gelu", marks=pytest.mark.slow)])
def test_enclosure_contains_dps60_trajectory(name):
    cert = _certified(name)
    ref = ms.run(_config(name), STEPS, dps=60)     # Gauss-Hermite at 60 digits, independent route
    for ball, x in zip(cert.state, (ref.final.C1, ref.final.C2, ref.final.C3)):
        assert ball.rad() > 0
        assert ball.contains(_ball_of(x, 60))


def test_tstar_and_t1_certified_and_equal_to_float64():
    """erf, D = 6, K = 2, ||V*||^2 = 2, default eta: t1 = 1, T* = 200, default run to 1000."""
    c = ms.SmoothConfig(D=6, K=2, activation=Activation("erf"), vstar_norm2=2.0)
    f64 = ms.run(c, None)
    cert = certified_smooth_run(c, f64.eta, None)
    assert (f64.t1, f64.T_star, f64.steps) == (1, 200, 1000)
    assert cert.certified and (cert.t1.step, cert.T_star.step, cert.steps) == (1, 200, 1000)
    assert cert.radius_final < 1e-30 and cert.radius_at_T_star < 1e-30
    for ball, x in zip(cert.state, (f64.final.C1, f64.final.C2, f64.final.C3)):
        assert abs(float(ball.mid()) - x) <= 1e-12 * abs(x)


def test_overlap_when_the_level_is_p_at_a_step():
    """T* level = p(200) to 110 digits (from a 500-bit enclosure): p - level contains 0 at 200
    (the run's own enclosure, about 280 bits, is far wider than the level's error)."""
    c = ms.SmoothConfig(D=6, K=2, activation=Activation("erf"), vstar_norm2=2.0)
    eta = ms.run(c, 1).eta
    fine = certified_smooth_run(c, eta, 200, prec=500)
    with flint.ctx.workprec(500):
        _, C2, C3 = fine.state
        p = 1 / (arb(2) + arb(4) * (-(C2 + C3) / 6).exp())
        assert p.rad() < arb(10) ** -120
        level = p.mid().str(110, radius=False)
    cert = certified_smooth_run(c, eta, 210, tstar_level=level)
    assert not cert.T_star.certified and not cert.certified
    assert cert.T_star.overlap_step == 200 and cert.T_star.overlap.contains(0)
    assert cert.t1.certified and cert.t1.step == 1   # the other event is unaffected
    assert "T_star not certified: at step 200" in cert.text()


def test_low_precision_is_not_certified_and_stops_at_a_branch_point():
    c = _config("erf")
    coarse = certified_smooth_run(c, 0.2, 400, prec=8)
    assert not coarse.certified and coarse.stopped.startswith("branch point at step")
    assert coarse.t1.overlap_step is not None
    overlap = certified_smooth_run(c, 0.2, 400, prec=16)
    assert not overlap.certified and overlap.stopped is None and overlap.t1.overlap_step == 12
    ok = certified_smooth_run(c, 0.2, 400, prec=20)     # then the answer is the true one
    assert ok.certified and ok.t1.step == 13


def test_adaptive_precision_restarts_when_the_radius_grows():
    """GELU's default run (D = 6, K = 2, ||V*||^2 = 2) outgrows the first 140 bits in the late
    phase; the restart is at a precision that keeps 30 digits to the end."""
    c = ms.SmoothConfig(D=6, K=2, activation=Activation("gelu"), vstar_norm2=2.0)
    eta = ms.run(c, 1).eta
    first = certified_smooth_run(c, eta, 1210, prec=140)
    assert first.radius_final > 1e-30
    cert = certified_smooth_run(c, eta, 1210)
    assert cert.prec > 140 and cert.radius_final < 1e-30 and cert.certified
    assert (cert.t1.step, cert.T_star.step) == (12, 605)


def test_guarded_arb_functions_refuse_branch_points():
    y = act.sp.Symbol("y", real=True)
    root = act.guarded_arb_lambdify((y,), act.sp.sqrt(1 + y))
    assert root(arb(3)).contains(2)
    with pytest.raises(act.BranchPointError, match="not certainly positive"):
        root(arb(-1, 0.5))
    inverse = act.guarded_arb_lambdify((y,), 1 / (y - 1))
    with pytest.raises(act.BranchPointError, match="contains 0"):
        inverse(arb(1, 0.25))
    square = act.guarded_arb_lambdify((y,), y**2 + act.sp.pi)
    value = square(arb(0, 1e-3))       # a product, never nan (python-flint issue #426)
    assert value.is_finite() and value.contains(arb.pi())


def test_erf_moments_closed_form_equals_the_compiled_primitives():
    """closed_moments('erf') (the generic route, as GELU's) against the compiled float64
    combination of erf_primitives at a few states."""
    import math

    from rdyn.reduced_dynamics.model_a.compiled import compiled_geometry, compiled_iterate

    _, moments = compiled_iterate()
    forms = act.closed_forms("erf")
    args = (act.state_C1, act.state_r, act.state_rho, act.state_sres, act.state_s2,
            act.state_W, act.state_K)
    f = act.sp.lambdify(args, [forms[k] for k in ("m1", "m2", "dm2")], "mpmath")
    width = act.sp.lambdify(act.s, forms["width"], "mpmath")
    r = math.sqrt(0.5)
    for C1, e in ((0.0, 1.0), (0.7, 0.3), (-0.4, 0.05), (2.5, 0.001)):
        _, s2, s_res, rho = compiled_geometry()(e, 8.0, 2.0)
        ref = moments(C1, e, 8.0, 2.0, r)[1:4]
        with mpmath.workdps(30):
            got = f(C1, r, rho, s_res, s2, mpmath.sqrt(width(r * s_res)), 2)
        for a, b in zip(got, ref):
            assert abs(float(a) - b) <= 1e-13 * (1 + abs(b))


def test_cli_certify_gelu_json_and_text(capsys):
    argv = ["teacher", "--activation", "gelu", "--D", "8", "--K", "2", "--M", "2",
            "--vstar-norm2", "1", "--eta", "0.2", "--steps", str(STEPS), "--certify", "--quiet"]
    assert cli.main(argv + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["certified"] is True and out["certified_backend"] == "arb"
    assert out["certificate"]["t1"]["step"] == out["t1"] and out["certificate"]["stopped"] is None
    enclosure = out["certificate"]["final_enclosure"]
    for key in ("C1", "C2", "C3"):
        assert abs(enclosure[key]["mid"] - out["final"][key]) <= 1e-13 * abs(out["final"][key])
        assert 0 < enclosure[key]["rad"] < 1e-33 * abs(out["final"][key])
    assert cli.main(argv) == 0
    text = capsys.readouterr().out
    assert "certified: yes (backend arb: 140-bit arb balls" in text
    assert "final enclosure (step 80): C1 in [" in text


def test_certify_refused_for_a_formula(capsys):
    """tanh, softplus, sigmoid and formulas built from entire functions and tanh are certified
    by the strip quadrature (tests/reduced_dynamics/certified/test_strip.py); a formula with a kink is refused
    in one line saying why."""
    assert cli.main(["teacher", "--activation-expr", "x + abs(x)**3/10", "--certify"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1
    assert "Abs(x)" in err and "not analytic" in err


def test_cli_certify_dps_json_carries_every_digit(capsys):
    """With --dps 30 the enclosure's midpoint is printed with 30 correct digits (the arb
    midpoint converted exactly, not through mpmath's default 53 bits), equal to the
    30-digit quadrature run's final state."""
    argv = ["teacher", "--activation", "gelu", "--D", "8", "--K", "2", "--M", "2", "--eta", "0.2",
            "--steps", "30", "--dps", "30", "--certify", "--quiet", "--json"]
    assert cli.main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    with mpmath.workdps(40):
        for key in ("C1", "C2", "C3"):
            mid = mpmath.mpf(out["certificate"]["final_enclosure"][key]["mid"])
            final = mpmath.mpf(out["final"][key])
            assert abs(mid - final) <= mpmath.mpf(10) ** -28 * abs(final), key
