"""Model B, issue 14: exact Task 2 expectations for r <= 4 levels, QMC replicas, figures --paper B."""
from __future__ import annotations

import json

import mpmath
import pytest

from reduced_dynamics import model_b as mb
from reduced_dynamics import model_b_qmc as mq
from verify import model_b_dirichlet as md

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
                                              "--spectrum", "3,2,1", "--dps", "20"]):
        rc = cli.main(["ln", "--steps", "1", *argv])
        err = capsys.readouterr().err
        assert rc == 2 and len(err.strip().splitlines()) == 1


def test_figures_paper_b_quick(tmp_path):
    from verify.model_b_figures import make_figures

    paths, table = make_figures(tmp_path, quick=True, steps=6)
    for p in paths.values():
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 10_000
    # the collapsed LN loss tracks the full-matrix GD loss (finite training sample: within 20%)
    assert table["final_loss"]["ln spectrum"] == pytest.approx(table["final_collapsed_loss"]["ln spectrum"], rel=0.2)


@pytest.mark.parametrize("model,target", [("ln", None), ("noln", "normalized"), ("noln", "unnormalized")])
def test_query_column_gradients_equal_full_backprop(model, target):
    """The figures' O(N d^2) single-layer gradients equal the all-columns back-propagation of
    verify.model_b_full_matrix at random (unstructured) W, V."""
    import numpy as np

    from verify import model_b_figures as mf
    from verify import model_b_full_matrix as fm

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
    from derivations import model_b as dm

    assert dm.ln_loss_stable_identity_holds()
    rule, rule_mp = mb.exact_rule((3, 2, 1)), mb.exact_rule((3, 2, 1), 20)
    with mpmath.workdps(30):
        for g in (1e3, 1e6):
            lo = rule.mean(mb.ln_terms(rule, g)[0])
            ref = rule_mp.mean(mb.ln_terms(rule_mp, mpmath.mpf(g))[0])
            assert abs(lo - ref) <= 1e-14 * abs(ref)
