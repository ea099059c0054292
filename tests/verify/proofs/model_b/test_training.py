"""verify/proofs/model_b/training.py: certified GD training of the LN layer and the looped model on spectra with
two or more distinct eigenvalues, by stick-breaking angles and by the Laplace route."""
from __future__ import annotations

import json

import pytest

from rdyn.reduced_dynamics.model_b.config import Config
from rdyn.reduced_dynamics.model_b.iterate import iterate
from rdyn.verification.proofs.model_b.training import certified_training


def test_the_certified_gamma_contains_the_float64_iteration():
    gamma, increasing, _ = certified_training("ln", (4, 1, 1), 3, 0.1, 50)
    trajectory = iterate(Config(model="ln", data="spectrum", d=3, spectrum=(4, 1, 1), eta=0.1, steps=50))
    float64 = float(trajectory.gamma[-1])
    assert increasing
    assert abs(float(gamma.mid()) - float64) < 1e-12 * float64 and float(gamma.rad()) < 1e-30


def test_a_huge_step_is_certified_as_it_is():
    """--eta has no upper bound for ln and looped (docs/proofs.md, Model B): five steps at eta = 1e300 give a finite
    ball of gamma_T near 1.3557e299 (relative radius about 3e-15), pinned; gamma does not increase at every step."""
    gamma, increasing, _ = certified_training("ln", (3, 1, 1, 1), 4, 1e300, 5)
    assert gamma.is_finite() and not increasing
    assert 1.35567436817e299 < float(gamma.mid()) < 1.35567436818e299
    assert float(gamma.rad()) < 1e-13 * float(gamma.mid())


# rdyn ln --model ln --data spectrum --d 3 --spectrum 3,2,1 --steps T --dps 30 (the exact Dirichlet rule, an
# independent route): gamma_T at T = 3 (ln) and T = 2 (looped, --L 2)
THREE_LEVELS = {("ln", None, 3): "0.0363961847257554436034778639277",
                ("looped", 2, 2): "0.0508282182313059537018206424480"}


@pytest.mark.parametrize("model,L,steps", sorted(THREE_LEVELS, key=str))
def test_three_levels_contain_the_exact_rule(model, L, steps):
    """Three distinct eigenvalues (nested rigorous integrals): the ball of gamma_T (rho_T) holds the exact
    Dirichlet rule's 30-digit value, and gamma increases at every step."""
    from decimal import Decimal

    gamma, increasing, _ = certified_training(model, (3, 2, 1), 3, 0.1, steps, L=L)
    mid, rad = Decimal(gamma.mid().str(40, radius=False)), Decimal(gamma.rad().str(5, radius=False))
    assert increasing and rad < Decimal("1e-30")
    assert abs(mid - Decimal(THREE_LEVELS[(model, L, steps)])) <= rad + Decimal("1e-30")


def test_two_level_integral_is_the_one_dimensional_one():
    """level_F on two levels is the 1-D integral (w_2 = 1 - w_1): F at one gamma, against mpmath quadrature
    of (2/B) int f sin^(k1-1) cos^(k2-1) at 30 digits."""
    import flint
    import mpmath
    from flint import arb

    from rdyn.verification.proofs.model_b.training import level_F

    old = flint.ctx.prec
    flint.ctx.prec = 128
    try:
        value = level_F("ln", (4, 1, 1), 3)(arb("0.05"))
    finally:
        flint.ctx.prec = old
    with mpmath.workdps(30):
        x, l1, l2 = mpmath.mpf("0.05"), 4, 1

        def f(th):
            w = mpmath.sin(th) ** 2
            m1, m2 = l1 * w + l2 * (1 - w), l1 ** 2 * w + l2 ** 2 * (1 - w)
            r2 = 1 + 2 * x * m1 + x * x * m2
            return -2 * (m2 - m1 ** 2) / (mpmath.sqrt(m2) * r2 ** mpmath.mpf(1.5)) * mpmath.cos(th)
        reference = 2 * mpmath.quad(f, [0, mpmath.pi / 2]) / mpmath.beta(mpmath.mpf(1) / 2, 1) / 3
        assert abs(float(value.mid()) - float(reference)) < 1e-25 * abs(float(reference)) + 1e-30


@pytest.mark.parametrize("model,r,route", [("ln", 2, "stick_breaking"), ("ln", 3, "stick_breaking"),
                                           ("ln", 4, "laplace"), ("ln", 12, "laplace"),
                                           ("looped", 2, "stick_breaking"), ("looped", 3, "laplace"),
                                           ("looped", 12, "laplace")])
def test_the_route_has_the_fewer_nested_integrals(model, r, route):
    """Stick-breaking needs r - 1 nested integrals, the Laplace route 1 (looped) or 2 (ln); a tie goes to
    stick-breaking."""
    from rdyn.verification.proofs.model_b.training import route_of

    assert route_of(model, r) == route


@pytest.mark.parametrize("model,spectrum,L,x", [
    ("ln", (4, 1, 1), None, "0.05"), pytest.param("ln", (3, 2, 1), None, "1.3", marks=pytest.mark.slow),
    ("looped", (4, 1, 1), 2, "0.05"), ("looped", (4, 1, 1), 2, "1.3"),
    pytest.param("looped", (3, 2, 1), 2, "0.05", marks=pytest.mark.slow), ("looped", (3, 2, 1), 2, "1.3")])
def test_the_two_routes_enclose_the_same_value(model, spectrum, L, x):
    """F by stick-breaking angles and by the Laplace route (different variables, different integrands): both balls
    are below 1e-32 wide and overlap, so they agree to about 32 digits. (The LN layer at three levels, 17 s, and the
    looped model's second point at three levels are slow.)"""
    import flint
    from flint import arb

    from rdyn.verification.proofs.model_b.training import laplace_F, stick_breaking_F

    with flint.ctx.workprec(128):
        angles = stick_breaking_F(model, spectrum, len(spectrum), L)(arb(x))
        laplace = laplace_F(model, spectrum, len(spectrum), L)(arb(x))
    assert angles.overlaps(laplace)
    assert max(float(angles.rad()), float(laplace.rad())) < 1e-32 * abs(float(angles.mid()))


# rdyn ln --data spectrum --spectrum S --steps T --dps 30: ln, four levels, by the exact Dirichlet rule; looped, six
# levels (--L 10), and ln, five levels, by the Gaussian route (a-posteriori estimate below 1e-37 at tolerance 1e-33)
MANY_LEVELS = {("ln", (4, 3, 2, 1), None, 1): "0.0160193226098144966988018957498",
               ("looped", (6, 5, 4, 3, 2, 1), 10, 20): "0.320236302790725614576466534947",
               ("ln", (5, 4, 3, 2, 1), None, 2): "0.0336334299052645918284535416610"}


@pytest.mark.parametrize("model,spectrum,L,steps", [
    key if key[0] == "looped" else pytest.param(*key, marks=pytest.mark.slow) for key in MANY_LEVELS])
def test_four_or_more_levels_contain_rdyn_lns_value(model, spectrum, L, steps):
    """Four or more distinct eigenvalues (the Laplace route): the certified gamma_T (rho_T) holds rdyn ln's
    30-digit value, gamma increases at every step. (The LN layer, 8-10 s a step at four levels, is slow; the default
    suite compares its Laplace route with stick-breaking at two levels.)"""
    from decimal import Decimal

    gamma, increasing, _ = certified_training(model, spectrum, len(spectrum), 0.1, steps, L=L)
    mid, rad = Decimal(gamma.mid().str(40, radius=False)), Decimal(gamma.rad().str(5, radius=False))
    assert increasing and rad < Decimal("1e-24")    # 20 looped steps: 3e-26; the LN layer's: below 1e-31
    assert abs(mid - Decimal(MANY_LEVELS[(model, spectrum, L, steps)])) <= rad + Decimal("1e-30")


def test_the_mean_value_form_keeps_long_runs_tight():
    """F over a ball is F(mid) + F'(ball) (ball - mid): over 200 steps of the looped model (L = 10, three levels)
    the ball of rho_T stays below 1e-29 (evaluating the integrand on the ball itself, it grew about 7% a step, to
    3.4e-12 at step 200 and 2.8e-6 at step 400, and a 1000-step run reported R < 1 refuted). And F's ball at a ball
    of x is no wider than |F'| times its radius (plus F's own at a point)."""
    import flint
    from flint import arb

    from rdyn.verification.proofs.model_b.training import laplace_F

    gamma, increasing, _ = certified_training("looped", (3, 2, 1), 3, 0.1, 200, L=10)
    assert increasing and float(gamma.rad()) < 1e-29
    with flint.ctx.workprec(128):
        F = laplace_F("looped", (4, 3, 2, 1), 4, 10)
        ball, point = F(arb("0.3", "1e-20")), F(arb("0.3"))
    assert ball.overlaps(point) and float(ball.rad()) < 0.61 * 1e-20     # |F'(0.3)| = 0.6038...


def test_a_run_whose_ball_outgrows_the_bound_stops_and_says_so(monkeypatch):
    """The iteration stops when gamma's ball is wider than MAX_RELATIVE_RADIUS of gamma (BallTooWide, with the
    step); rdyn prove then says undecided, naming the step, instead of deciding R from a ball too wide."""
    import rdyn
    from rdyn.verification.proofs.model_b import training

    monkeypatch.setattr(training, "MAX_RELATIVE_RADIUS", 1e-40)
    with pytest.raises(training.BallTooWide) as stopped:
        certified_training("looped", (4, 1, 1), 3, 0.1, 50, L=2)
    assert stopped.value.step == 1      # gamma_0 = 0 exactly; gamma_1 = -eta F(0) carries F's radius, 1e-35
    (s,) = rdyn.prove(paper="B", model="looped", L=2, d=3, spectrum="4,1,1", steps=50).to_dict()["statements"]
    assert s["verdict"] == "undecided" and s["certificate"] is None
    assert s["reason"].startswith("the certified iteration stopped at step 1 of 50")


# --------------------------------------------------------------------------- an interrupted --steps run
def _interrupt_at(step: int):
    def progress(t):
        if t == step:
            raise KeyboardInterrupt   # what rdyn/signals.py raises on SIGINT/SIGTERM, between two steps
    return progress


def test_an_interrupted_run_keeps_the_steps_certified_before_it():
    """KeyboardInterrupt after step 7 of 50 propagates (the loop is drive()'s); the last state on_step saw is
    gamma_7, the very ball of a 7-step run."""
    seen = []
    with pytest.raises(KeyboardInterrupt):
        certified_training("looped", (4, 1, 1), 3, 0.1, 50, L=2, progress=_interrupt_at(7), on_step=seen.append)
    gamma7, increasing, _ = certified_training("looped", (4, 1, 1), 3, 0.1, 7, L=2)
    t, _, _, gamma, inc = seen[-1]
    assert t == 7 and inc is increasing is True
    assert gamma.mid() == gamma7.mid() and gamma.rad() == gamma7.rad()


def test_an_interrupted_proof_reports_the_statement_at_the_steps_done():
    """prove_model_b stopped after step 3 of 40: interrupted_report ("complete": false, steps_done 3) has the
    contraction statement at rho_3, certified, with the 3-step run's ball; it follows the JSON Schema. Stopped before
    the first step: undecided, saying so."""
    from rdyn.schemas import validate
    from rdyn.verification.proofs.model_b import prove as prove_b
    from rdyn.verification.proofs.model_b.instance import BInstance

    inst = BInstance(model="looped", data="spectrum", d=3, spectrum=(4, 1, 1), n=6, steps=40, L=2)
    seen = []
    with pytest.raises(KeyboardInterrupt):
        prove_b.prove_model_b(inst, progress=_interrupt_at(3), on_step=seen.append)
    report = prove_b.interrupted_report(inst, seen[-1], 1.5)
    validate("prove", report)
    assert report["complete"] is False and report["steps_done"] == 3
    (s,) = report["statements"]
    c = s["certificate"]
    assert s["verdict"] == "certified" and (c["steps"], c["steps_asked"]) == (3, 40)
    assert "rho_t after the t = 3 of the 40 GD steps" in s["statement"]
    whole = prove_b.prove_model_b(BInstance(model="looped", data="spectrum", d=3, spectrum=(4, 1, 1), n=6, steps=3, L=2))
    assert "complete" not in whole
    (w,) = whole["statements"]
    assert (c["gamma_T"], c["gamma_T_radius"], c["R"]) == (w["certificate"]["gamma_T"],
                                                           w["certificate"]["gamma_T_radius"], w["certificate"]["R"])
    report = prove_b.interrupted_report(inst, None, 0.2)
    validate("prove", report)
    (s,) = report["statements"]
    assert report["steps_done"] == 0 and s["verdict"] == "undecided" and s["certificate"] is None
    assert "interrupted before the first of the 40" in s["reason"]


@pytest.mark.parametrize("sig,code,as_json", [("SIGTERM", 143, True), ("SIGINT", 130, False)])
def test_a_signal_during_steps_prints_what_was_certified(sig, code, as_json):
    """A real run stopped by SIGTERM (JSON) or SIGINT (text) after about 4 s: exit 143 or 130, the statement at the
    steps certified so far on stdout ("complete": false, valid JSON), one stderr line saying how many."""
    import signal

    from signal_runs import signal_after

    argv = ["prove", "--paper", "B", "--model", "looped", "--L", "2", "--data", "spectrum", "--d", "3",
            "--spectrum", "4,1,1", "--steps", "20000"] + (["--json"] if as_json else [])
    got, out, err = signal_after(argv, 4, getattr(signal, sig))
    assert got == code and "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert "interrupted after" in last and "of 20000 certified GD steps" in last
    done = int(last.split("interrupted after ")[1].split()[0])
    assert done > 0
    if as_json:
        from rdyn.schemas import validate

        data = json.loads(out)
        validate("prove", data)
        assert data["complete"] is False and data["steps_done"] == done
        assert data["statements"][0]["certificate"]["steps"] == done
    else:
        assert out.startswith("[certified ] Theorem 4.7") and f"steps = {done}, steps_asked = 20000" in out
