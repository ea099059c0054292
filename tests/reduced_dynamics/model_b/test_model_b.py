"""Model B (seed 003): derivations, collapsed iterator, full-matrix cross-check, CLI."""
from __future__ import annotations

import json
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy as sp

from rdyn.derivations import model_b as dm
from rdyn.reduced_dynamics.model_b import run as mb
from rdyn.reduced_dynamics.model_b import looped as model_b_looped
from rdyn import cli
from rdyn.verification.checks import model_b as ck
from rdyn.verification.references import full_matrix_b as fm

SPEC = (3, 1, 1, 1)


# ------------------------------------------------------------------------------ derivations
def test_ln_F_reduces_to_two_statistics():
    assert dm.ln_gradient_identity_holds()
    assert dm.noln_gradient_identity_holds()


def test_recursion_identities_B23():
    assert all(dm.recursion_identities().values())


def test_kappa_task1_rational():
    k = dm.kappa_task1()
    assert k["kappa1"].subs({dm.n: 32, dm.d: 16}) == 2
    assert k["kappa2"].subs({dm.n: 32, dm.d: 16}) == sp.Rational(47, 8)
    assert mb.kappa_exact("sphere", 16, 32, None) == (Fraction(2), Fraction(47, 8))
    assert mb.kappa_exact("spectrum", 4, 6, SPEC) == (Fraction(3, 2), Fraction(3))


def test_noln_closed_forms_match_printed():
    col, pg, pl = dm.noln_collapsed(), dm.printed_gamma_star(), dm.printed_irreducible_loss()
    for t in ("normalized", "unnormalized"):
        assert sp.simplify(col[t]["gamma_star"] - pg[t]) == 0
        assert sp.simplify(col[t]["irreducible_loss"] - pl[t]) == 0


def test_growth_limits():
    gl = dm.growth_limits()
    assert sp.simplify(gl["ln_gamma3_aSgh"] + 2 * (dm.m2 - dm.m1**2) / dm.m2**2) == 0
    assert gl["ln_increment_cubes_per_C"] == 6 * dm.eta
    assert gl["looped_increment_squares_per_C"] == 4 * dm.eta


# ------------------------------------------------------------------------------ iterator
def test_exact_rule_moments_are_rational_at_dps30():
    rule = mb.exact_rule(SPEC, 30)
    with mpmath.workdps(30):
        assert abs(rule.mean(rule.m1) - mpmath.mpf(3) / 2) < mpmath.mpf(10) ** -28
        assert abs(rule.mean(rule.m2) - 3) < mpmath.mpf(10) ** -28
        assert abs(rule.weights.sum() - 1) < mpmath.mpf(10) ** -28


def test_exact_iterates_match_independent_quadrature_20_digits():
    cfg = mb.Config(model="ln", data="spectrum", d=4, n=6, spectrum=SPEC, eta=0.5, steps=5, dps=30)
    tr = mb.run(cfg)
    ref = ck.independent_iterates("ln", SPEC, 0.5, 5, 30)
    with mpmath.workdps(40):
        for t in range(6):
            assert abs(tr.beta[t] - ref[t][1]) / abs(ref[t][1]) < mpmath.mpf(10) ** -20
            if t:
                assert abs(tr.alpha[t] - ref[t][0]) / abs(ref[t][0]) < mpmath.mpf(10) ** -20


@pytest.mark.parametrize("L,start", [(3, (0, 1)), (10, (10, 10))])
def test_looped_exact_matches_independent_quadrature(L, start):
    cfg = mb.Config(model="looped", data="spectrum", d=4, n=6, spectrum=SPEC, L=L, eta=0.5, steps=3,
                    dps=30, alpha0=start[0], beta0=start[1])
    tr = mb.run(cfg)
    ref = ck.independent_iterates("looped", SPEC, 0.5, 3, 30, L, *start)
    with mpmath.workdps(40):
        assert abs(tr.alpha[-1] - ref[-1][0]) / abs(ref[-1][0]) < mpmath.mpf(10) ** -20
        assert abs(tr.loss[-1]) > 0


def test_numeric_checks_pass():
    bad = [(c.id, c.max_error) for c in ck.numeric_checks() if c.status == "fail"]
    assert bad == []


def test_monte_carlo_within_5_standard_errors_of_exact():
    mc = mb.monte_carlo_rule("spectrum", 4, 6, SPEC, 20000, 3)
    ex = mb.exact_rule(SPEC)
    for g in (0.0, 1.0):
        for model, L in (("ln", 1), ("looped", 2)):
            vals = mb.model_terms(model, mc, g, None, L)[0]
            exact = ex.mean(mb.model_terms(model, ex, g, None, L)[0])
            assert abs(vals.mean() - exact) < 5 * mc.std_error(vals)
    sph = mb.monte_carlo_rule("sphere", 8, 12, None, 20000, 1)
    assert abs(sph.m2.mean() - 12 * 19 / 64) < 5 * sph.std_error(sph.m2)
    assert abs(sph.m1.mean() - 1.5) < 5 * sph.std_error(sph.m1)


def test_invariants_along_trajectory():
    cfg = mb.Config(model="ln", data="spectrum", d=4, n=6, spectrum=SPEC, eta=0.5, steps=40, dps=25,
                    alpha0=0.3, beta0=1.0)
    tr = mb.run(cfg)
    eta = mpmath.mpf("0.5")
    with mpmath.workdps(25):
        for t in range(40):
            a, b, F = tr.alpha[t], tr.beta[t], tr.F[t]
            S, D = a * a + b * b, b * b - a * a
            D1 = tr.beta[t + 1] ** 2 - tr.alpha[t + 1] ** 2
            assert abs(D1 - (1 - eta**2 * F**2) * D) < mpmath.mpf(10) ** -22
            assert abs(S * S - D * D - 4 * tr.gamma[t] ** 2) < mpmath.mpf(10) ** -22
            assert F <= 0


def test_noln_converges_to_gamma_star_with_positive_loss():
    for tgt in ("normalized", "unnormalized"):
        tr = mb.run(mb.Config(model="noln", target=tgt, data="spectrum", d=4, n=6, spectrum=SPEC,
                              eta=0.5, steps=400))
        assert abs(tr.gamma[-1] - tr.gamma_star) < 1e-12
        assert tr.loss[-1] > 0.01
    tr = mb.run(mb.Config(model="noln", target="unnormalized", data="spectrum", d=4, n=6, spectrum=SPEC,
                          eta=0.5, steps=0))
    assert tr.gamma_star == pytest.approx(1 - 1.5 / 3)


def test_single_distinct_eigenvalue_is_fixed_point():
    tr = mb.run(mb.Config(model="ln", data="spectrum", d=3, n=6, spectrum=(2, 2, 2), steps=5))
    assert tr.alpha[-1] == 0 and tr.loss[-1] == pytest.approx(0, abs=1e-15)


# ------------------------------------------------------------------------------ full matrix
@pytest.mark.parametrize("model,target,L", [("ln", None, 1), ("noln", "unnormalized", 1), ("looped", None, 2)])
def test_full_matrix_structure(model, target, L):
    r = fm.run(fm.FullSetup(model=model, target=target, L=L, steps=4, samples=3000))
    assert r["zero_blocks_max_abs"] == 0.0
    assert r["first_step_projection_rel_error"] < 1e-12
    assert r["max_rel_dev_same_sample"] < 1e-2
    assert r["off_identity_W12"] < 3 * r["expected_off_identity_W12"]


# ------------------------------------------------------------------------------ checks
def test_symbolic_checks_status():
    status = {c.id: c.status for c in ck.symbolic_checks()}
    assert status.pop("B.noln.eta_max") == "discrepancy"
    assert set(status.values()) == {"pass"}


# ------------------------------------------------------------------------------ CLI
def _run(capsys, argv):
    rc = cli.main(["ln", *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_cli_json_contract(capsys):
    rc, out, _ = _run(capsys, ["--json", "--data", "spectrum", "--d", "4", "--spectrum", "3,1,1,1",
                               "--steps", "20", "--eta", "0.5"])
    assert rc == 0
    obj = json.loads(out)
    for key in ("alpha", "beta", "gamma", "loss", "kappa1", "kappa2", "kappa3", "gamma_star",
                "expectation", "std_error"):
        assert key in obj
    assert obj["expectation"] == "exact" and obj["std_error"] is None and obj["gamma_star"] is None
    assert obj["kappa1"] == 1.5 and obj["kappa2"] == 3.0
    rc, out, _ = _run(capsys, ["--json", "--dps", "25", "--model", "noln", "--target", "unnormalized",
                               "--steps", "5", "--samples", "1000"])
    obj = json.loads(out)
    assert obj["gamma_star"] == "6.595744680851063829787234e-1"   # 1 - kappa1/kappa2 = 31/47
    assert obj["kappa2"].startswith("5.875000000")


@pytest.mark.parametrize("argv", [
    ["--model", "ln", "--target", "normalized"], ["--L", "3"], ["--d", "4", "--spectrum", "1,2,0,3"],
    ["--d", "4", "--spectrum", "1,2,3"], ["--d", "8", "--n", "4"], ["--alpha0", "0", "--beta0", "0"],
    ["--d", "2", "--spectrum", "1,2", "--n", "5"], ["--eta", "0"], ["--eta", "-1"],
    ["--data", "spectrum"]])
def test_cli_bad_input_exit_2(capsys, argv):
    rc, out, err = _run(capsys, argv + ["--steps", "1", "--samples", "100"])
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_compiled_looped_terms_match_numpy_path():
    r = mb.monte_carlo_rule("sphere", 6, 9, None, 1500, 0)
    small = mb.SpectralRule(r.levels[:800], r.masses[:800], r.weights[:800], "monte_carlo")
    for rho in (0.0, 0.7, 40.0):
        fast = model_b_looped._looped_terms_f64(r.levels.copy(), r.masses.copy(), rho, 10)
        slow = mb.looped_terms(small, rho, 10)
        assert np.allclose(fast[0][:800], slow[0], rtol=1e-13, atol=1e-15)
        assert np.allclose(fast[1][:800], slow[1], rtol=1e-12, atol=1e-15)


def test_cli_rational_constants_keep_all_digits(capsys):
    rc, out, _ = _run(capsys, ["--json", "--dps", "30", "--model", "noln", "--target", "unnormalized",
                               "--data", "spectrum", "--d", "3", "--spectrum", "2,1,1", "--steps", "3"])
    obj = json.loads(out)
    assert obj["kappa1"] == "1." + "3" * 29          # 4/3
    assert obj["kappa2"] == "2." + "0" * 29          # (4+1+1)/3
    assert obj["gamma_star"] == "3.33333333333333333333333333333e-1"   # 1 - (4/3)/2 = 1/3
