"""Issue 22: Model A with smooth activations (erf, tanh, GELU, softplus, sigmoid, a formula).

Independent routes: the homogeneous engine (identity written as the formula "x"), full-matrix
population GD (Price's theorem per output entry), finite differences of the restricted loss,
mpmath quadrature of the closed-form smoothings, and the --dps path against float64.
"""
from __future__ import annotations

import json
import math

import mpmath
import numpy as np
import pytest

import rdyn
from rdyn import cli
from rdyn.derivations import activations as act
from rdyn.reduced_dynamics.model_a import smooth as ms
from rdyn.reduced_dynamics.model_a.gauss_hermite import float64_rule, precise_rule
from rdyn.reduced_dynamics.model_a.presets import preset_groups
from rdyn.verification.references.full_matrix_smooth import crosscheck_smooth

KEYS = ("C1", "C2", "C3", "p", "C1_star", "loss")


def _config(name, **kw):
    base = dict(D=8, K=2, activation=act.Activation(name), eta=0.2, vstar_norm2=1.0, M=2)
    base.update(kw)
    return ms.SmoothConfig(**base)


def test_formula_x_reproduces_the_homogeneous_identity_map():
    """The general derivation (no homogeneity) with sigma(x) = x against the sympy engine of
    the homogeneous activations: same trajectory to rounding, for any M."""
    a = rdyn.teacher(activation_expr="x", D=8, K=2, eta=0.2, steps=300, M=3, vstar_norm2=2.0,
                     quiet=True)
    b = rdyn.teacher(activation="identity", D=8, K=2, eta=0.2, steps=300, vstar_norm2=2.0,
                     quiet=True)
    for k in KEYS:
        assert a.final[k] == pytest.approx(b.final[k], rel=1e-13, abs=0), k
    assert a.t1 == b.t1
    assert a.stability.eta_limit == pytest.approx(b.stability.eta_limit, rel=1e-4)


@pytest.mark.parametrize("name", ["erf", "gelu"])
def test_dps30_agrees_with_float64(name):
    c = _config(name)
    f = ms.run(c, 150)
    r = ms.run(c, 150, dps=30)
    for k in KEYS:
        x, y = getattr(f.final, k), getattr(r.final, k)
        assert abs(mpmath.mpf(x) - y) <= 1e-12 * abs(y), k
    assert (f.t1, f.T_star) == (r.t1, r.T_star)
    assert r.quadrature_error < 1e-31


@pytest.mark.slow
@pytest.mark.parametrize("name", ["erf", "tanh", "gelu"])
def test_done_when_commands_agree_float64_vs_dps30(name, capsys):
    argv = ["teacher", "--activation", name, "--D", "8", "--K", "2", "--M", "2",
            "--vstar-norm2", "1", "--eta", "0.2", "--steps", "400", "--json", "--quiet"]
    assert cli.main(argv) == 0
    f = json.loads(capsys.readouterr().out)
    assert cli.main(argv + ["--dps", "30"]) == 0
    r = json.loads(capsys.readouterr().out)
    for k in KEYS:
        assert abs(mpmath.mpf(f["final"][k]) - mpmath.mpf(r["final"][k])) <= 1e-12 * abs(mpmath.mpf(r["final"][k]))


@pytest.mark.parametrize("name", ["erf", "tanh", "softplus"])
def test_full_matrix_population_gd_matches_with_equal_row_norms(name):
    g = preset_groups("sts", 8, 2)
    out = crosscheck_smooth(_config(name), g, d=4, steps=25)
    assert out["row_norms_equal"]
    assert out["max_rel_dev"] < 1e-12
    assert out["structure_residual"] < 1e-12


def test_unequal_row_norms_break_the_ansatz():
    g = preset_groups("sts", 8, 2)
    out = crosscheck_smooth(_config("erf"), g, d=4, steps=25, row_norms=[1.0, 2.0])
    assert not out["row_norms_equal"]
    assert out["max_rel_dev"] > 1e-3 and out["structure_residual"] > 1e-3


def test_crosscheck_cli_reports_unequal_row_norms(capsys):
    argv = ["crosscheck", "--activation", "gelu", "--D", "8", "--K", "2", "--M", "3", "--d", "4",
            "--eta", "0.2", "--steps", "10", "--vstar-row-norms", "1,3,3", "--json"]
    assert cli.main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["row_norms_equal"] is False and data["max_rel_dev"] > 1e-4
    # the generalisation (one C1 per class of equal norms) closes at round-off
    assert data["class_map"]["classes"] == 2 and data["class_map"]["max_rel_dev"] < 1e-12
    import jsonschema

    jsonschema.validate(data, rdyn.schema("crosscheck"))


@pytest.mark.parametrize("name", ["tanh", "gelu", "sigmoid"])
def test_step_is_the_gradient_of_the_restricted_loss(name):
    """C1' - C1 = -eta dL/dC1 / ||V*||^2, C2' - C2 = -eta dL/dC2 / (D K),
    C3' - C3 = -eta dL/dC3 / (D (D - K)) (the projections of docs/interface.md), with dL/dC by central
    differences of the excess loss of the same expectations at 30 digits."""
    c = _config(name, D=6, K=2, M=3, vstar_norm2=1.5)
    num = ms.Numbers(c.activation, 30)
    with num.precision():
        ex = ms.Expectations(c, num, num.rule(96))
        state = [num.make(v) for v in ("0.7", "1.3", "0.65")]
        eta = num.make("0.1")
        nxt = ex.step(*state, eta)[:3]
        h = num.make("1e-9")

        def loss(s):
            return ex.step(*s, eta)[3][3]

        norms = (c.vstar_norm2, c.D * c.K, c.D * (c.D - c.K))
        for k in range(3):
            up, down = list(state), list(state)
            up[k] += h
            down[k] -= h
            grad = (loss(up) - loss(down)) / (2 * h)
            expected = state[k] - eta * grad / norms[k]
            assert abs(num.to_float(nxt[k] - expected)) < 1e-14, (k, nxt[k], expected)


@pytest.mark.parametrize("name", ["erf", "gelu"])
def test_closed_form_smoothings_against_quadrature(name):
    S0, S1 = act.smoothing_functions(name, "mpmath")
    sigma, dsigma, _ = act.numeric_functions(act.Activation(name), "mpmath")
    with mpmath.workdps(30):
        for m, s in (("0.3", "0.7"), ("-1.2", "0.05"), ("2.5", "1.9")):
            m, s = mpmath.mpf(m), mpmath.mpf(s)
            for closed, f in ((S0, sigma), (S1, dsigma)):
                ref = mpmath.quad(lambda z: f(m + s * z) * mpmath.npdf(z), [-mpmath.inf, 0, mpmath.inf])
                assert abs(closed(m, s) - ref) < mpmath.mpf(10) ** -27 * (1 + abs(ref))


def test_precise_gauss_hermite_rule_is_exact_for_polynomials():
    with mpmath.workdps(30):
        rule = precise_rule(24, 30, mpmath.mpf, prune=0.0)
        for k in range(0, 47, 2):
            moment = mpmath.fsum(w * z**k for z, w in zip(rule.nodes, rule.weights))
            exact = mpmath.fac2(k - 1) if k else 1
            assert abs(moment / exact - 1) < mpmath.mpf(10) ** -28, k
    f = float64_rule(24)
    assert abs(np.dot(f.weights, f.nodes**4) - 3) < 1e-13


def test_expression_validation():
    assert act.parse_expression("x*tanh(x)") == act.x * act.sp.tanh(act.x)
    for bad, words in (("y + x", "only the symbol x"), ("1/x", "cannot be evaluated"),
                       ("x +", "cannot parse"), ("7", "does not depend on x"),
                       ("exp(x**2)", "x")):
        with pytest.raises(ValueError, match=words):
            act.parse_expression(bad)


@pytest.mark.parametrize("argv, words", [
    # tanh, softplus, sigmoid and formulas analytic on a strip are certified since issue 31
    # (tests/reduced_dynamics/certified/test_strip.py); atan has branch points at +-i
    (["teacher", "--activation-expr", "x + atan(x)", "--certify"], "--certify is not available"),
    (["teacher", "--activation", "erf", "--sigma-prime-zero", "0.5"], "--sigma-prime-zero applies"),
    (["teacher", "--M", "3"], "--M applies to the smooth activations only"),
    (["teacher", "--activation-expr", "x*tanh(x)", "--D", "8", "--K", "2"], "sigma'(0) = 0"),
    (["teacher", "--activation", "expr"], "--activation expr needs --activation-expr"),
    # besselj of a non-constant order: sympy cannot print d/dn J_n (was a traceback; numpy
    # evaluates besselj(n, x) of an integer n through scipy.special.jv since issue 40)
    (["teacher", "--activation-expr", "x + besselj(x, x)"], "integer order"),
    # a kink of sigma': sigma'' holds a Dirac delta with a non-zero factor
    (["teacher", "--activation-expr", "Abs(x) + x"], None),
    (["teacher", "--activation", "gelu", "--method", "slow", "--dps", "20"], "--dps is not available"),
    (["crosscheck", "--vstar-row-norms", "1,1,1,1"], "--vstar-row-norms applies to the smooth"),
])
def test_refusals_are_one_line(argv, words, capsys):
    assert cli.main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and (words is None or words in err), err


def test_null_dirac_deltas_are_removed_and_kinks_kept():
    """Max(x, 0)**3 is C^2: its sigma'' = 6 Heaviside(x) Max(0, x) (the delta term
    3 delta(x) Max(0, x)^2 is the zero distribution); Max(x, 0)**2 has a kink in sigma'
    (sigma'' jumps, no delta: Heaviside only); Max(x, 0) + x/2 has sigma'' = delta(x), kept."""
    sp, x = act.sp, act.x
    _, d1, d2 = act.derivatives(sp.Max(x, 0) ** 3 + x)
    assert not d1.has(sp.DiracDelta) and not d2.has(sp.DiracDelta)
    for value in (-0.7, 0.4, 1.9):
        assert float(d2.subs(x, value)) == pytest.approx(6 * max(value, 0), abs=1e-15)
    assert act.derivatives(sp.Max(x, 0) + x / 2)[2].has(sp.DiracDelta)


def test_teacher_reaches_t_star_and_reports_quadrature():
    r = rdyn.teacher(activation="softplus", D=8, K=2, quiet=True)
    assert r.T_star is not None and r.t1 is not None and r.t1 < r.T_star
    assert r.final["C1"] == pytest.approx(r.final["C1_star"], rel=1e-3)
    assert r.quadrature["error_estimate"] <= 1e-13
    assert r.model["M"] == 1 and r.model["activation"] == "softplus"
    # eta defaults to half the (grid) stability limit; the multiplier stays inside (-1, 1)
    assert r.eta == pytest.approx(r.stability.eta_limit / 2)
    assert r.stability.lost_at_step is None


def test_stability_limit_is_where_the_multiplier_reaches_minus_one():
    c = _config("tanh")
    limit = ms.eta_limit(c)
    ex = ms.Expectations(c, ms.Numbers(c.activation, None), float64_rule(64))
    worst = 0.0
    for p in np.linspace(1 / c.D, 1 / c.K * (1 - 1e-6), 41):
        lvl = ex.level((1 / p - c.K) / (c.D - c.K))
        star = ex.c1_star(lvl)
        worst = max(worst, -ex.moments(star, lvl)[2])
    # the 17-point grid maximum is at most the 41-point one, and close to it
    assert 1 + limit * c.D * (-worst) <= -1 + 1e-2
    assert math.isfinite(limit) and limit > 0


def quadrature_loop(ex, num, c, steps, eta):
    """The Gauss-Hermite step loop (the route of the non-compiled activations) for ``steps``
    steps in one chunk: (t, t1, T*, lost, captured {steps: state}, diverged)."""
    from rdyn.reduced_dynamics.runs.smooth_checkpoint import SmoothLoop

    advance = ms._quadrature_advance(ex, num, c, False, {steps}, eta, 0.95, 1 / (2 * c.K), 1000,
                                     10**7)
    loop = SmoothLoop(0, [0.0, 0.0, 0.0], stop_at=steps)
    advance(loop, steps + 1)
    assert loop.done
    return loop.t, loop.t1, loop.T_star, loop.lost, loop.captured, loop.diverged


def test_compiled_erf_closed_form_equals_the_quadrature_loop():
    """erf in float64 runs the compiled closed form (reduced_dynamics/model_a/compiled.py); the
    Gauss-Hermite loop (the route of the other activations) gives the same trajectory."""
    from rdyn.reduced_dynamics.model_a.compiled import compiled_iterate, excess_loss

    c = _config("erf")
    _, moments = compiled_iterate()
    ex = ms.Expectations(c, ms.Numbers(c.activation, None), float64_rule(96))
    for C1, e in ((0.0, 1.0), (0.6, 0.8), (1.1, 0.05), (2.0, 0.3)):
        m1, m2, dm2, loss = ex.moments(C1, ex.level(e))
        _, M1, M2, DM2, _, _ = moments(C1, e, 8.0, 2.0, c.row_norm)
        assert (M1, M2, DM2) == pytest.approx((m1, m2, dm2), rel=1e-13, abs=1e-15)
        assert excess_loss(C1, 0.0, -c.D * math.log(e), c) == pytest.approx(loss, rel=1e-13)
    compiled = ms.run(c, 300)
    num = ms.Numbers(c.activation, None)
    t, t1, t_star, lost, captured, diverged = quadrature_loop(ex, num, c, 300, 0.2)
    assert diverged is None
    assert (t, t1, t_star, lost) == (300, compiled.t1, compiled.T_star, compiled.lost_at_step)
    for value, key in zip(captured[300], ("C1", "C2", "C3")):
        assert value == pytest.approx(getattr(compiled.final, key), rel=1e-13)


def test_erf_primitives_against_quadrature():
    I1, I3, G0, G2, J = (act.lambdify_for(args, act.erf_primitives()[name], "mpmath")
                         for name, args in (("I1", (act.alpha, act.lam)), ("I3", (act.alpha, act.lam)),
                                            ("G0", (act.lam,)), ("G2", (act.lam,)),
                                            ("J", (act.alpha, act.beta))))
    with mpmath.workdps(30):
        a, b, l = mpmath.mpf("0.7"), mpmath.mpf("1.3"), mpmath.mpf("0.45")

        def E(f):
            return mpmath.quad(lambda z: f(z) * mpmath.npdf(z), [-mpmath.inf, 0, mpmath.inf])

        pairs = ((I1(a, l), E(lambda z: z * mpmath.erf(a * z) * mpmath.exp(-l * z * z))),
                 (I3(a, l), E(lambda z: z**3 * mpmath.erf(a * z) * mpmath.exp(-l * z * z))),
                 (G0(l), E(lambda z: mpmath.exp(-l * z * z))),
                 (G2(l), E(lambda z: z * z * mpmath.exp(-l * z * z))),
                 (J(a, b), E(lambda z: mpmath.erf(a * z) * mpmath.erf(b * z))))
        for closed, ref in pairs:
            assert abs(closed - ref) < mpmath.mpf(10) ** -26


def test_compiled_gelu_loop_equals_the_numpy_loop():
    c = _config("gelu")
    compiled = ms.run(c, 300)
    ex = ms.Expectations(c, ms.Numbers(c.activation, None), float64_rule(compiled.nodes))
    t, t1, t_star, lost, captured, diverged = quadrature_loop(ex, ms.Numbers(c.activation, None), c,
                                                              300, 0.2)
    assert diverged is None
    assert (t1, t_star, lost) == (compiled.t1, compiled.T_star, compiled.lost_at_step)
    for value, key in zip(captured[300], ("C1", "C2", "C3")):
        assert value == pytest.approx(getattr(compiled.final, key), rel=1e-13)


def test_closed_form_cache_equals_a_fresh_derivation():
    """derivations/_activation_catalog.py (python -m rdyn.derivations.activations) is the
    srepr of the derivation, so the compiled loops never run stale forms."""
    fresh = act.derive_closed_forms()
    for activation in ("erf", "gelu"):
        cached = act.closed_forms(activation)
        assert set(cached) == {name for a, name in fresh if a == activation}
        for name, expr in cached.items():
            assert act.sp.srepr(expr) == act.sp.srepr(fresh[(activation, name)]), (activation, name)


@pytest.mark.parametrize("argv", [
    ["teacher", "--activation", "erf", "--eta", "1e300", "--steps", "50"],      # compiled loop
    ["teacher", "--activation", "softplus", "--eta", "1e300", "--steps", "50"],  # quadrature loop
    ["crosscheck", "--activation", "gelu", "--eta", "1e300", "--steps", "10", "--D", "8", "--K", "2"],
])
def test_smooth_runs_that_overflow_report_divergence(argv, capsys):
    """The divergence rule (reduced_dynamics/runs/divergence.py) holds for the smooth activations too:
    exit 3, diverged_at_step 1, no t1/T*/agreement figures, no numpy warning, valid JSON."""
    import warnings

    import jsonschema

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rc = cli.main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert rc == 3 and "RuntimeWarning" not in err
    obj = json.loads(out)
    jsonschema.validate(obj, rdyn.schema(argv[0]))
    assert obj["diverged_at_step"] == 1 and obj["divergence_reason"]
    if argv[0] == "teacher":
        assert obj["t1"] is None and obj["T_star"] is None and obj["loss_slope"] is None
    else:
        assert obj["max_rel_dev"] is None and obj["structure_residual"] is None
