"""Model B, issue 23: exact Task 2 expectations for any number of distinct eigenvalues
(Gaussian quadratic-form route), looped model included."""
from __future__ import annotations

import json
from dataclasses import replace

import mpmath
import pytest

from rdyn.reduced_dynamics.model_b import run as mb
from rdyn.reduced_dynamics.model_b import gaussian as gq
from rdyn.reduced_dynamics.model_b.gaussian_route import GaussianRoute
from rdyn.verification.references import gaussian_route_b as vg

D16 = vg.D16
GAMMAS = (0.0, 0.5, 3.0, 40.0)


@pytest.mark.parametrize("spec", [(3, 2, 1), (4, 3, 2, 1), (4, 3, 3, 2, 1, 1, 1, 1)])
def test_route_equals_dirichlet_rule_float64(spec):
    got = vg.route_statistics(spec, GAMMAS)
    ref = vg.rule_statistics(mb.exact_rule(spec), GAMMAS)
    assert vg.max_error(got, ref, len(GAMMAS)) < 5e-15


def test_route_equals_dirichlet_rule_dps20():
    with mpmath.workdps(25):
        gs = [mpmath.mpf("0.5")]
        got = vg.route_statistics((4, 3, 2, 1), gs, 20)
        ref = vg.rule_statistics(mb.exact_rule((4, 3, 2, 1), 20), gs)
    assert vg.max_error(got, ref, len(gs)) < 1e-21


def test_looped_route_equals_2f1():
    """r = 2: Dist^2 and its derivative against the 2F1 closed form (float64 and dps 25)."""
    route = GaussianRoute((3, 1, 1, 1), None, 10)
    for rho in (0.0, 0.3, 7.0, 1e4):
        got = route.looped_means(rho)
        with mpmath.workdps(30):
            ref = mb.looped_two_level_hyp2f1(rho, 10, 3, 1, 1, 4)
        assert abs(got[0] - ref[0]) <= 2e-15 * abs(ref[0]) and abs(got[1] - ref[1]) <= 2e-15 * abs(ref[1])
    with mpmath.workdps(30):
        route = GaussianRoute((3, 1, 1, 1), 25, 10)
        rho = mpmath.mpf(7)
        got, ref = route.looped_means(rho), mb.looped_two_level_hyp2f1(rho, 10, 3, 1, 1, 4)
        assert abs(got[0] - ref[0]) < 1e-25 * ref[0] and abs(got[1] - ref[1]) < 1e-25 * abs(ref[1])


def test_estimate_is_checked_and_bounds_the_error():
    """The a-posteriori estimate is below the tolerance, the value is within the tolerance of a
    20-digit-more accurate one, and a tolerance no estimate can meet is refused."""
    with mpmath.workdps(45):
        lo, hi = GaussianRoute(D16, 12), GaussianRoute(D16, 32)
        a, b = lo.ln_means(mpmath.mpf(2)), hi.ln_means(mpmath.mpf(2))
        assert abs(a[1] - b[1]) <= lo.grid.tol * abs(b[1]) and abs(a[0] - b[0]) <= lo.grid.tol
        assert 0 < lo.worst_estimate <= lo.grid.tol
    refused = GaussianRoute(D16, None)
    object.__setattr__(refused.grid, "tol", -1.0)   # no estimate can meet it
    with pytest.raises(gq.QuadratureError):
        refused.ln_means(0.0)


def test_auto_is_exact_for_any_task2_spectrum():
    for model in ("ln", "noln", "looped"):
        cfg = mb.Config(model=model, data="spectrum", d=16, n=sum(D16), spectrum=D16, L=3,
                        target="normalized" if model == "noln" else None)
        assert mb.resolve_expectation(cfg) == "exact"
    assert isinstance(mb.build_rule(mb.Config(model="looped", data="spectrum", d=4, n=10,
                                              spectrum=(4, 3, 2, 1), L=3)), GaussianRoute)
    assert isinstance(mb.build_rule(mb.Config(data="spectrum", d=4, n=10, spectrum=(4, 3, 2, 1))),
                      mb.SpectralRule)    # r <= 4: the Dirichlet rule stays (faster)
    with pytest.raises(mb.ExactUnavailable):
        mb.resolve_expectation(mb.Config(data="sphere", expectation="exact"))


def test_cli_d16_example_is_exact_and_within_qmc_error_bars(capsys):
    """Issue 23's example: exact, within 4 QMC standard errors (2^16 points) after 50 steps."""
    from rdyn import cli

    argv = ["ln", "--data", "spectrum", "--d", "16", "--spectrum", ",".join(map(str, D16)), "--steps", "50", "--json"]
    assert cli.main(argv) == 0
    ex = json.loads(capsys.readouterr().out)
    assert ex["expectation"] == "exact" and ex["std_error"] is None
    assert ex["quadrature"]["route"] == "gaussian" and ex["quadrature"]["max_relative_estimate"] <= 1e-15
    assert cli.main(argv + ["--expectation", "qmc", "--samples", str(2 ** 16)]) == 0
    q = json.loads(capsys.readouterr().out)
    for k in ("alpha", "beta", "gamma", "loss"):
        assert abs(ex[k] - q[k]) < 4 * q["std_error"][k], k


def test_noln_normalized_r5_constants_match_qmc():
    cfg = mb.Config(model="noln", target="normalized", data="spectrum", d=16, n=sum(D16), spectrum=D16, steps=20)
    ex = mb.run(cfg)
    q = mb.run(replace(cfg, expectation="qmc", samples=2 ** 15))
    assert ex.expectation == "exact"
    assert abs(ex.gamma[-1] - q.gamma[-1]) < 4 * q.std_error["gamma"]
    assert abs(ex.gamma_star - q.gamma_star) < 1e-3


def test_looped_r4_float64_equals_dps25_and_qmc():
    cfg = mb.Config(model="looped", data="spectrum", d=4, n=10, spectrum=(4, 3, 2, 1), L=3, steps=50)
    f64 = mb.run(cfg)
    hi = mb.run(replace(cfg, dps=25))
    assert f64.expectation == hi.expectation == "exact"
    for k in ("alpha", "beta", "gamma", "loss"):
        assert abs(getattr(f64, k)[-1] - getattr(hi, k)[-1]) < 1e-13 * abs(getattr(hi, k)[-1]), k
    assert abs(f64.upsilon1 - hi.upsilon1) < 1e-13 * hi.upsilon1
    q = mb.run(replace(cfg, expectation="qmc", samples=2 ** 16))
    for k in ("alpha", "beta", "gamma", "loss"):
        assert abs(f64.__dict__[k][-1] - q.__dict__[k][-1]) < 4 * q.std_error[k], k


@pytest.mark.slow   # 50 steps at dps 25 with r = 5: ~2-4 s per step
def test_d16_float64_equals_dps25():
    cfg = mb.Config(model="ln", data="spectrum", d=16, n=sum(D16), spectrum=D16, steps=50)
    f64, hi = mb.run(cfg), mb.run(replace(cfg, dps=25))
    for k in ("alpha", "beta", "gamma"):
        assert abs(getattr(f64, k)[-1] - getattr(hi, k)[-1]) < 1e-13 * abs(getattr(hi, k)[-1]), k
    assert abs(f64.loss[-1] - hi.loss[-1]) < 1e-15


def test_d16_float64_equals_dps25_first_steps():
    """Two steps of the d = 16 example at dps 25 (the slow test runs 50)."""
    cfg = mb.Config(model="ln", data="spectrum", d=16, n=sum(D16), spectrum=D16, steps=2, eta=2.0)
    f64, hi = mb.run(cfg), mb.run(replace(cfg, dps=25))
    for k in ("alpha", "beta", "gamma"):
        assert abs(getattr(f64, k)[-1] - getattr(hi, k)[-1]) < 1e-14 * abs(getattr(hi, k)[-1]), k
    assert abs(f64.constants.kappa3 - hi.constants.kappa3) < 1e-15 * hi.constants.kappa3


def test_route_identities_are_derived():
    from rdyn.derivations.model_b import gaussian_route_identities

    assert gaussian_route_identities() == {"gap_Q1Q2": True, "gap_Q0Q1": True, "gaussian_moments": True,
                                           "gamma_representation": True, "polar_weights": True}


LAPLACE_IDENTITIES = {"ln_in_gammas": True, "gap_in_gammas": True, "looped_in_gammas": True, "gamma_moments": True,
                      "gamma_representation": True, "ln_angles": True, "looped_angle": True}


@pytest.mark.parametrize("levels", [2, pytest.param(3, marks=pytest.mark.slow)])
def test_the_certified_laplace_routes_identities_are_derived(levels):
    """verify/proofs/model_b/training.py's laplace_F rests on these (two levels: 2 s of sympy; three: 10 s, slow)."""
    from rdyn.derivations.model_b import laplace_route_identities

    assert laplace_route_identities(levels) == LAPLACE_IDENTITIES


def test_grid_nodes_are_the_built_grids():
    """The pure sizing (no allocation) equals the grid a run builds: single layers, looped."""
    for spec, dps, L in [((5, 4, 3, 2, 1), None, None), ((4, 3, 2, 1, 1), 20, None),
                         ((4, 3, 2), 25, 3), ((6, 1, 1, 2, 3), None, 10)]:
        assert gq.grid_nodes(spec, dps, L) == GaussianRoute(spec, dps, L).nodes
    # the sizes the time estimates and docs quote (single layers; dps^2 growth)
    assert gq.grid_nodes((5, 4, 3, 2, 1), 30) == 40067
    assert gq.grid_nodes((4, 3, 2, 1, 1), 200) == 1646195


def test_tolerance_never_underflows():
    """log(1/tol) is formed without tol (a float 10^-(dps+3) is 0.0 beyond dps ~ 320); dps above
    the route's limit is refused by the route itself, not by a float error."""
    assert gq.log_inverse_tolerance(1000) == pytest.approx(1003 * 2.302585092994046, rel=1e-15)
    assert gq.tolerance(gq.GAUSSIAN_DPS_MAX) == 10.0 ** -(gq.GAUSSIAN_DPS_MAX + 3) > 0
    with pytest.raises(mb.ExactUnavailable, match="at most --dps 200"):
        GaussianRoute((5, 4, 3, 2, 1), 320)
    with mpmath.workdps(60):
        tol = GaussianRoute((5, 4, 3, 2, 1), 40).tolerance    # 10^-43 at 50 digits
        assert abs(tol * mpmath.mpf(10) ** 43 - 1) < mpmath.mpf(10) ** -49


def test_blocked_sums_equal_one_block(monkeypatch):
    """single_layer_means in tau blocks (bounded memory) gives the one-block values: to the
    working precision at dps 20 (blocks of about 50 tau rows), bit for bit in float64 where the
    grid fits one block."""
    spec, g = (4, 3, 2, 1, 1), mpmath.mpf("0.7")
    one = GaussianRoute(spec, 20).ln_means(g)
    monkeypatch.setattr(gq, "CHUNK_ELEMENTS", 10_000)
    blocked = GaussianRoute(spec, 20).ln_means(g)
    for a, b in zip(one, blocked):
        assert abs(a - b) <= mpmath.mpf(10) ** -27 * abs(a)
    monkeypatch.setattr(gq, "CHUNK_ELEMENTS", 10**9)
    f_one = GaussianRoute(spec, None).ln_means(0.7)
    monkeypatch.setattr(gq, "CHUNK_ELEMENTS", 10_000)
    f_blocked = GaussianRoute(spec, None).ln_means(0.7)
    assert f_one == pytest.approx(f_blocked, rel=4e-16)


def test_help_states_the_route_limits():
    """rdyn.options quotes the routes' --dps limits in --help; they are the routes' constants."""
    from rdyn import options
    from rdyn.reduced_dynamics.model_a.smooth import SMOOTH_DPS_MAX

    assert options.GAUSSIAN_ROUTE_DPS_MAX == gq.GAUSSIAN_DPS_MAX
    assert options.SMOOTH_DPS_MAX == SMOOTH_DPS_MAX


# ------------------------------------------------------------------ rounding-aware tolerance (issue 32)

def _looped_coefficients(route, rho):
    """V, W, U of GaussianRoute.looped_means at ``rho`` (float64)."""
    lam, L = route.levels, route.L
    den = 1 + rho * lam[0]
    z = [(1 + rho * lv) / den for lv in lam]
    V = [1.0] + [zp ** (2 * L) for zp in z[1:]]
    U = [0.0] + [2 * L * z[p] ** (2 * L - 1) * (lam[p] - lam[0]) / den ** 2 for p in range(1, len(lam))]
    return V, [0.0] + V[1:], U


def test_rounding_bound_arithmetic_on_a_fixed_input():
    """looped_rounding_bound on two terms: u (10 + 1.5 d + 2 r + (2 + r)|log Phi| + (4 + d/2)|tau|)
    per term with d = 3, r = 2: 22.5 u (tau = 0, log Phi = -1) and 41.5 u (tau = 2, log Phi =
    -3); |f| = 1, 2; the fine sum 105.5 u, the coarse (first node, doubled) 45 u, the final
    roundings 2 u |fine| = 6 u: 156.5 u, times pref 1/2."""
    from types import SimpleNamespace

    import numpy as np

    grid = SimpleNamespace(v=np.exp(np.array([0.0, 2.0])), tau_coarse=np.array([True, False]))
    got = gq.looped_rounding_bound(grid, np.array([1.0, -2.0]), 0.5, np.array([-1.0, -3.0]), [2, 1])
    assert got == pytest.approx(78.25 * 2.0 ** -53, rel=1e-12)


def test_looped_L200_at_rounding_level_is_answered_and_equals_dps20():
    """--spectrum 4,3,2 at L = 200: Dist^2' at rho = 0 has |fine - coarse| = 1.8e-15 > 1e-15
    (the fine and coarse sums differ by rounding: once refused with "use qmc"); it is within
    the float64 rounding bound, so it is answered, and it equals the 20-digit route (10^-23
    tolerance, no float64 rounding) to the bound."""
    f64 = GaussianRoute((4, 3, 2), None, 200)
    with mpmath.workdps(30):
        hi = GaussianRoute((4, 3, 2), 20, 200)
        for rho in (0.0, 0.3, 3.0):
            V, W, U = _looped_coefficients(f64, rho)
            _, estimate, rounding = gq.product_ratio_mean(f64.grid, f64.multiplicities, V,
                                                          [True, False, False], U)
            got, ref = f64.looped_means(rho), hi.looped_means(mpmath.mpf(rho))
            for g, r in zip(got, ref):
                assert abs(g - float(r)) <= 2e-13 * abs(float(r)), (rho, g, r)
            if rho == 0.0:   # the case the fixed 1e-15 tolerance refused
                assert estimate > f64.grid.tol and estimate <= rounding
    assert f64.worst_rounding is not None and f64.worst_rounding < 1e-13


def test_genuine_quadrature_failure_is_still_refused():
    """A grid three times too coarse (spacing 6 h): |fine - coarse| is a quadrature error far
    above the rounding bound, and it is refused, not accepted as rounding."""
    import numpy as np

    route = GaussianRoute((4, 3, 2), None, 200)
    layout = gq.looped_layout((4, 3, 2), 200, None)
    coarse = gq.TauLayout(layout.tau0, 6 * layout.h, 2 * (layout.n_lo // 12), 2 * (layout.n_hi // 12))
    v, w, mask = gq._tau_grid(coarse, False, 53)
    object.__setattr__(route, "grid", replace(route.grid, v=v, tau_weights=w, tau_coarse=mask))
    V, W, U = _looped_coefficients(route, 0.3)
    _, estimate, rounding = gq.product_ratio_mean(route.grid, route.multiplicities, V,
                                                  [True, False, False], U)
    assert estimate > 1e3 * rounding and np.isfinite(estimate)
    with pytest.raises(gq.QuadratureError, match="rounding bound"):
        route.looped_means(0.3)


def test_cli_looped_L200_answers_with_its_rounding_bound(capsys):
    """rdyn ln --model looped --spectrum 4,3,2 --L 200: answered (exit 0), the JSON states the
    rounding bound under which an estimate above 1e-15 was accepted, and alpha, gamma and the
    loss equal the --dps 20 run's."""
    import rdyn
    from rdyn import cli

    jsonschema = pytest.importorskip("jsonschema")
    argv = ["ln", "--model", "looped", "--data", "spectrum", "--d", "3", "--spectrum", "4,3,2",
            "--L", "200", "--steps", "5", "--json", "--quiet"]
    assert cli.main(argv) == 0
    f64 = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator(rdyn.schema("ln")).validate(f64)
    q = f64["quadrature"]
    assert q["tolerance"] == 1e-15 < q["max_relative_estimate"] <= q["rounding_bound"] < 1e-13
    assert cli.main(argv + ["--dps", "20"]) == 0
    hi = json.loads(capsys.readouterr().out)
    for k in ("alpha", "gamma", "loss"):
        assert abs(f64[k] - float(hi[k])) <= 1e-12 * abs(float(hi[k])), k
