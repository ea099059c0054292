"""Model B, issue 14: exact Task 2 expectations for r <= 4 levels, QMC replicas, figures --paper B."""
from __future__ import annotations

import json
from fractions import Fraction

import mpmath
import pytest

from rdyn.reduced_dynamics.model_b import run as mb
from rdyn.reduced_dynamics.model_b import qmc as mq
from rdyn.verification.references import dirichlet_b as md

GAMMAS = (0.0, 0.5, 3.0, 40.0)


@pytest.mark.parametrize("spec", [(3, 1, 1, 1), (3, 2, 1), (4, 2, 2, 1, 1, 1, 1, 1), (4, 3, 2, 1),
                                  (4, 3, 3, 2, 1, 1, 1, 1)])
def test_exact_rule_matches_ascending_route_float64(spec):
    r = len(set(spec))
    ex = md.statistics(mb.exact_rule(spec), GAMMAS)
    ind = md.statistics(md.ascending_rule(spec, 80 if r <= 3 else 60), GAMMAS)
    assert md.max_rel(ex, ind) < (2e-14 if r == 2 else 2e-15)   # r = 2: the theta rule's floor


def test_exact_rule_matches_ascending_route_dps25_r3():
    with mpmath.workdps(30):
        ex = md.statistics(mb.exact_rule((3, 2, 1), 25), [mpmath.mpf(g) for g in GAMMAS])
        ind = md.statistics(md.ascending_rule((3, 2, 1), 48, 33), [mpmath.mpf(g) for g in GAMMAS])
    assert md.max_rel(ex, ind) < 1e-23


@pytest.mark.parametrize("spec,dps,n_ascending", [
    pytest.param((4, 3, 2, 1), 20, 48, marks=pytest.mark.slow),                # ~16 s
    pytest.param((4, 3, 3, 2, 1, 1, 1, 1), 30, 72, marks=pytest.mark.slow),   # ~1 min
])
def test_exact_rule_matches_ascending_route_at_dps_r4(spec, dps, n_ascending):
    """r = 4 at --dps: the mapped descending rule against plain Gauss-Jacobi in ascending
    stick-breaking coordinates (converging ~10^-0.44 per node: n set for 10^-(dps-2))."""
    with mpmath.workdps(dps + 5):
        gammas = [mpmath.mpf(g) for g in GAMMAS]
        ex = md.statistics(mb.exact_rule(spec, dps), gammas)
        ind = md.statistics(md.ascending_rule(spec, n_ascending, dps + 8), gammas)
    assert md.max_rel(ex, ind) < 10.0 ** (2 - dps)


@pytest.mark.parametrize("delta", [Fraction(1, 15), Fraction(1, 10**4), Fraction(1, 10**8)])
def test_mapped_beta_integrates_a_near_branch_point(delta):
    """E[(u + delta)^(-1/2)], u ~ Beta(1/2, 3/2): branch point at distance delta beyond u = 0.
    Reference: delta^(-1/2) 2F1(1/2, 1/2; 2; -1/delta) (mpmath). Plain Gauss-Jacobi with 40
    nodes is off by > 1e-4 at delta = 1e-4; the exponential map reaches 30 digits."""
    from rdyn.reduced_dynamics.model_b.dirichlet_rule import gauss_beta, mapped_beta

    a, b = Fraction(1, 2), Fraction(3, 2)
    with mpmath.workdps(40):
        dl = mpmath.mpf(delta.numerator) / delta.denominator
        ref = mpmath.hyp2f1(0.5, 0.5, 2, -1 / dl) / mpmath.sqrt(dl)
        u, rest, w = mapped_beta(60, a, b, delta, 35)
        got = mpmath.fsum(wi / mpmath.sqrt(ui + dl) for ui, wi in zip(u, w))
        assert abs(got - ref) < 1e-30 * ref
        assert all(abs(ui + ri - 1) < mpmath.mpf(10) ** -40 for ui, ri in zip(u, rest))
        x, wx = gauss_beta(40, a, b, 35)
        plain = mpmath.fsum(wi / mpmath.sqrt(xi + dl) for xi, wi in zip(x, wx))
        if delta <= Fraction(1, 10**4):
            assert abs(plain - ref) > 1e-4 * ref
    u, rest, w = mapped_beta(60, a, b, delta)            # float64
    assert abs(float((w / (u + float(delta)) ** 0.5).sum()) - float(ref)) < 1e-13 * float(ref)


def test_mpfr_means_equal_mpf_means_and_leave_no_state():
    """The gmpy2 evaluation of an mp rule agrees with mpf object arithmetic at the working
    precision, converts nodes bit for bit, and leaves gmpy2's context as it found it."""
    import gmpy2

    from rdyn.reduced_dynamics.numerics import mpfr_arrays

    before = gmpy2.get_context().precision
    rule = mb.exact_rule((3, 2, 1), 30)
    with mpmath.workdps(40):
        g = mpmath.mpf(7) / 3
        fast = rule.means(mb.ln_terms, g)
        slow = [rule.mean(v) for v in mb.ln_terms(rule, g)]
        assert all(abs(x - y) <= mpmath.mpf(10) ** -37 * abs(y) for x, y in zip(fast, slow))
        assert all(mpfr_arrays.to_mpf(mpfr_arrays.exact(v)) == v for v in rule.m2[:50])
    assert gmpy2.get_context().precision == before


def test_cli_ln_r4_at_dps30_agrees_with_float64(capsys):
    from rdyn import cli

    base = ["ln", "--json", "--data", "spectrum", "--d", "4", "--spectrum", "4,3,2,1", "--steps", "3"]
    assert cli.main([*base, "--dps", "30"]) == 0
    hi = json.loads(capsys.readouterr().out)
    assert cli.main(base) == 0
    lo = json.loads(capsys.readouterr().out)
    assert hi["expectation"] == "exact" and len(hi["loss"].replace("-", "").split("e")[0]) >= 31
    for k in ("alpha", "beta", "gamma", "loss", "kappa3"):
        assert abs(mpmath.mpf(hi[k]) - lo[k]) <= 2e-15 * abs(lo[k])


def test_exact_refused_where_gamma_can_be_negative(capsys):
    """The exact rules hold for gamma >= 0 (kinks at gamma = -1/lambda_i): alpha0*beta0 < 0
    runs ln/looped by qmc under auto and refuses --dps / --expectation exact (exit 2, one line);
    the no-LN layer (kappa constants only) stays exact."""
    from rdyn import cli

    base = ["ln", "--json", "--data", "spectrum", "--d", "3", "--steps", "2", "--alpha0", "-0.3"]
    assert cli.main([*base, "--spectrum", "3,2,1", "--samples", "256", "--replicas", "2"]) == 0
    assert json.loads(capsys.readouterr().out)["expectation"] == "qmc"
    for extra in (["--spectrum", "3,2,1", "--dps", "20"], ["--spectrum", "3,2,1", "--expectation", "exact"],
                  ["--spectrum", "3,1,1", "--model", "looped", "--expectation", "exact"]):
        assert cli.main([*base, *extra]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "alpha0*beta0" in err
    assert cli.main([*base, "--spectrum", "3,2,1", "--model", "noln", "--dps", "20"]) == 0
    assert json.loads(capsys.readouterr().out)["expectation"] == "exact"


def test_gamma_never_decreases_from_nonnegative_start():
    """The invariant behind exact_gamma_range: gamma_{t+1} >= gamma_t when gamma_t >= 0."""
    for a0, b0 in ((0.0, 1.0), (2.0, 0.5), (0.0, -1.0)):
        tr = mb.run(mb.Config(model="ln", data="spectrum", d=4, n=10, spectrum=(4, 3, 2, 1), eta=0.5,
                              steps=300, alpha0=a0, beta0=b0))
        assert all(g1 >= g0 >= 0 for g0, g1 in zip(tr.gamma, tr.gamma[1:]))


def test_exact_rule_reproduces_rational_dirichlet_moments_r4():
    rule = mb.exact_rule((4, 3, 3, 2, 1, 1, 1, 1))
    assert abs(rule.mean(rule.m1) - 16 / 8) < 1e-14            # tr S / d
    assert abs(rule.mean(rule.m2) - 42 / 8) < 1e-14            # tr S^2 / d


def test_qmc_replicas_cover_exact_value():
    cfg = mb.Config(model="ln", data="spectrum", d=4, n=10, spectrum=(4, 3, 2, 1), eta=0.5, steps=60,
                    samples=8192)
    ex = mb.run(cfg)
    assert ex.expectation == "exact"
    res = mq.run_replicas(mb.Config(**{**cfg.__dict__, "expectation": "qmc"}), replicas=8)
    tr = res.trajectory
    assert tr.expectation == "qmc" and res.points_per_replica == 1024
    for k in ("alpha", "beta", "gamma", "loss"):
        se = tr.std_error[k]
        assert 0 < se < 1e-3
        assert abs(getattr(tr, k)[-1] - float(getattr(ex, k)[-1])) < 5 * se


def test_looped_float64_two_level_matches_2f1():
    er, em = mb.exact_rule((3, 1, 1, 1)), mb.exact_rule((3, 1, 1, 1), 30)
    for L in (1, 10):
        for rho in (0.0, 0.7, 50.0, 1e6):
            g, dg = mb.looped_two_level(er, rho, L)
            with mpmath.workdps(30):
                G, dG = mb.looped_two_level(em, mpmath.mpf(rho), L)
            assert abs(g - G) <= 1e-14 * abs(G) and abs(dg - dG) <= 1e-13 * abs(dG)


def test_cli_qmc_json_and_refusals(capsys):
    from rdyn import cli

    rc = cli.main(["ln", "--json", "--d", "4", "--n", "6", "--steps", "5", "--samples", "512",
                   "--replicas", "4", "--record", "0,5"])
    obj = json.loads(capsys.readouterr().out)
    assert rc == 0 and obj["expectation"] == "qmc" and set(obj["std_error"]) == {"alpha", "beta", "gamma", "loss"}
    assert obj["replicas"] == 4 and set(obj["record"]) == {"0", "5"}
    for argv in (["--dps", "20"], ["--data", "spectrum", "--d", "3", "--spectrum", "3,2,1", "--replicas", "4"],
                 ["--expectation", "exact"], ["--model", "looped", "--data", "spectrum", "--d", "3",
                                              "--spectrum", "3,2,1", "--alpha0", "-0.5", "--dps", "20"]):
        rc = cli.main(["ln", "--steps", "1", *argv])
        err = capsys.readouterr().err
        assert rc == 2 and len(err.strip().splitlines()) == 1


@pytest.mark.filterwarnings("error::rdyn.verification.figures.layout.FigureLayoutWarning")
def test_figures_paper_b_quick(tmp_path):
    from rdyn.verification.figures.model_b import make_figures

    paths, table = make_figures(tmp_path, quick=True, steps=6)
    for p in paths.values():
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 10_000
    # the collapsed LN loss tracks the full-matrix GD loss (finite training sample: within 20%)
    assert table["final_loss"]["ln spectrum"] == pytest.approx(table["final_collapsed_loss"]["ln spectrum"], rel=0.2)


@pytest.mark.parametrize("model,target", [("ln", None), ("noln", "normalized"), ("noln", "unnormalized")])
def test_query_column_gradients_equal_full_backprop(model, target):
    """The figures' O(N d^2) single-layer gradients equal the all-columns back-propagation of
    rdyn.verification.references.full_matrix_b at random (unstructured) W, V."""
    import numpy as np

    from rdyn.verification.figures import model_b as mf
    from rdyn.verification.references import full_matrix_b as fm

    rng = np.random.default_rng(0)
    s = fm.FullSetup(model=model, target=target, d=3, n=5, samples=50)
    X, a = fm.sample(s)
    E0 = fm.embed(X, a)
    W, V = rng.standard_normal((6, 6)), rng.standard_normal((6, 6))
    Sa = np.einsum("mij,mj->mi", X @ X.transpose(0, 2, 1), a)
    tgt = Sa if target == "unnormalized" else Sa / np.linalg.norm(Sa, axis=1, keepdims=True)
    l1, gW1, gV1, _, _ = fm.loss_and_grads(W, V, E0, s, tgt, None)
    l2, gW2, gV2 = mf.query_column_grads(W, V, E0[:, :, -1], E0 @ E0.transpose(0, 2, 1), 3, tgt, model == "ln")
    assert abs(l1 - l2) <= 1e-13 * abs(l1)
    assert np.abs(gW1 - gW2).max() <= 1e-13 * np.abs(gW1).max()
    assert np.abs(gV1 - gV2).max() <= 1e-13 * np.abs(gV1).max()


@pytest.mark.slow  # ~1-2 min: two 2-D tanh-sinh integrals at 16 digits
def test_exact_rule_r4_matches_gamma_integral_route():
    rule = mb.exact_rule((4, 3, 2, 1))
    loss_i, dl_i = mb.ln_terms(rule, 0.5)
    L, dL = md.gamma_route((4, 3, 2, 1), 0.5, 16)
    assert md.max_rel([rule.mean(loss_i), rule.mean(dl_i)], [L, dL]) < 1e-13


def test_ln_loss_has_no_cancellation_at_large_gamma():
    """2 - 2 y^T t would lose all digits at gamma = 1e6 (loss ~ 6e-14); the derived stable form
    keeps float64 accuracy against the 30-digit rule."""
    from rdyn.derivations import model_b as dm

    assert dm.ln_loss_stable_identity_holds()
    rule, rule_mp = mb.exact_rule((3, 2, 1)), mb.exact_rule((3, 2, 1), 20)
    with mpmath.workdps(30):
        for g in (1e3, 1e6):
            lo = rule.mean(mb.ln_terms(rule, g)[0])
            ref = rule_mp.mean(mb.ln_terms(rule_mp, mpmath.mpf(g))[0])
            assert abs(lo - ref) <= 1e-14 * abs(ref)


def test_theta_rule_nodes_are_those_of_a_fresh_gauss_legendre_object():
    """The theta rule at dps reuses one mpmath Gauss-Legendre object (its node cache): the
    rule built twice, and its weights, are what a fresh object's nodes give, bit for bit."""
    from rdyn.reduced_dynamics.model_b import exact as ex

    first = ex.exact_rule((3, 1, 1), 25)
    again = ex.exact_rule((3, 1, 1), 25)
    assert [v._mpf_ for v in first.weights] == [v._mpf_ for v in again.weights]
    degree = {3 * 2 ** (m - 1): m for m in range(1, 12)}[first.nodes]
    with mpmath.workdps(35):
        fresh = mpmath.calculus.quadrature.GaussLegendre(mpmath.mp)
        pts = fresh.get_nodes(mpmath.mpf(0), mpmath.pi / 2, degree, mpmath.mp.prec)
        k, d = 1, 3   # the top level 3 once, d = 3
        norm = mpmath.beta(mpmath.mpf(k) / 2, mpmath.mpf(d - k) / 2)
        want = [w * 2 * mpmath.sin(th) ** (k - 1) * mpmath.cos(th) ** (d - k - 1) / norm for th, w in pts]
        masses = [mpmath.sin(th) ** 2 for th, _ in pts]
    assert [v._mpf_ for v in first.weights] == [v._mpf_ for v in want]
    assert [v._mpf_ for v in first.masses[:, 0]] == [v._mpf_ for v in masses]


@pytest.mark.parametrize("degree, prec", [(2, 60), (4, 87), (6, 136)])
def test_gmpy_gauss_legendre_nodes_are_mpmaths_bit_for_bit(degree, prec):
    from rdyn.reduced_dynamics.model_b.exact import _GmpyGaussLegendre

    mpmath_rule = mpmath.calculus.quadrature.GaussLegendre(mpmath.mp)
    gmpy_rule = _GmpyGaussLegendre(mpmath.mp)
    with mpmath.workprec(prec + 20):   # as get_nodes calls it
        want = mpmath_rule.calc_nodes(degree, prec)
        got = gmpy_rule.calc_nodes(degree, prec)
    assert len(got) == len(want) == 3 * 2 ** (degree - 1)
    assert [(x._mpf_, w._mpf_) for x, w in got] == [(x._mpf_, w._mpf_) for x, w in want]
    with mpmath.workprec(prec + 20):   # and on [0, pi/2], as the theta rule uses them
        want = mpmath_rule.get_nodes(mpmath.mpf(0), mpmath.pi / 2, degree, prec)
        got = gmpy_rule.get_nodes(mpmath.mpf(0), mpmath.pi / 2, degree, prec)
    assert [(x._mpf_, w._mpf_) for x, w in got] == [(x._mpf_, w._mpf_) for x, w in want]
