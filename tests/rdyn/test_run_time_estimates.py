"""The time estimates of smooth-activation ``rdyn teacher --dps`` and of ``rdyn ln --dps`` runs
(issue 20 item 2; rdyn/run_time.py): the models' arithmetic with fixed constants, and the line
(threshold monkeypatched, so nothing runs long), suppressed by --quiet."""
from __future__ import annotations

import pytest

from cli_runs import run_main
from rdyn import run_time as rt


def test_smooth_step_model(monkeypatch):
    monkeypatch.setattr(rt, "SMOOTH_NODE_S", {"erf": 1e-4, "tanh": 1e-5})
    monkeypatch.setattr(rt, "SMOOTH_KNEE_DPS", 100.0)
    # erf (closed inner average): n evaluations; at N = 400 the factor is 1 + 4^1.5 = 9
    assert rt.smooth_step_seconds("erf", 48, 400) == pytest.approx(48 * 1e-4 * 9, rel=1e-12)
    # tanh (tensor rule): n^2 evaluations; at N = 100 the factor is 2
    assert rt.smooth_step_seconds("tanh", 30, 100) == pytest.approx(900 * 1e-5 * 2, rel=1e-12)
    monkeypatch.setattr(rt, "kept_nodes", lambda n, dps: n)   # no pruning
    est = rt.smooth_teacher_estimate("tanh", 30, 950, 100, False)
    assert est.seconds == pytest.approx((950 + rt.SMOOTH_EXTRA_STEPS) * 0.018, rel=1e-12)
    assert est.line() == f"rdyn teacher: about {est.seconds:.0f} s (950 steps on 30 nodes at --dps 100)"


def test_smooth_certify_adds_the_certified_pass(monkeypatch):
    monkeypatch.setattr(rt, "SMOOTH_CERTIFY_FACTOR", {"gelu": 4.0})
    plain = rt.smooth_teacher_estimate("gelu", 64, 1000, 300, False)
    both = rt.smooth_teacher_estimate("gelu", 64, 1000, 300, True)
    assert both.seconds - plain.seconds == pytest.approx(1000 * 4.0 * rt.teacher_step_seconds(300))
    low = rt.smooth_teacher_estimate("gelu", 64, 1000, 300, False, lower_bound=True)
    assert low.line().startswith("rdyn teacher: more than") and "(at least 1000 steps" in low.line()


def test_every_smooth_activation_has_constants():
    from rdyn.options import SMOOTH_ACTIVATIONS

    for name in set(SMOOTH_ACTIVATIONS) | {"expr"}:
        assert rt.smooth_step_seconds(name, 32, 30) > 0
    assert set(rt.SMOOTH_CERTIFY_FACTOR) == {"erf", "gelu"}


@pytest.mark.parametrize("extra,expected", [
    ([], "rdyn teacher: about "), (["--certify"], "rdyn teacher: about ")])
def test_cli_prints_the_smooth_estimate_unless_quiet(capsys, monkeypatch, extra, expected):
    monkeypatch.setattr(rt, "ANNOUNCE_ABOVE_S", -1.0)   # every run "long"
    argv = ["teacher", "--activation", "erf", "--D", "6", "--K", "2", "--M", "2", "--eta", "0.2",
            "--steps", "3", "--dps", "20", "--json"] + extra
    rc, out, err = run_main(capsys, argv)
    assert rc == 0 and err.startswith(expected) and "3 steps on " in err and "at --dps 20)" in err
    rc, quiet_out, err = run_main(capsys, argv + ["--quiet"])
    assert rc == 0 and "rdyn teacher: about" not in err and quiet_out == out


def test_default_run_steps_come_from_a_float64_run():
    """Without --steps the smooth run stops at max(2 T*, 1000): the float64 pre-run's T*."""
    from rdyn.derivations.activations import Activation
    from rdyn.reduced_dynamics.model_a.dynamics import Thresholds
    from rdyn.reduced_dynamics.model_a.smooth import SmoothConfig, run

    cfg = SmoothConfig(D=6, K=2, activation=Activation("erf"), eta=0.2, M=2)
    steps, lower = rt.default_smooth_steps(cfg, Thresholds(), 1000)
    reference = run(cfg, None)
    assert not lower and steps == max(2 * reference.T_star, 1000)


def test_pruned_nodes_are_not_counted():
    """precise_rule drops nodes of weight < 10^-(N+5) of the largest: 86 of 128 at N = 30
    (the weights fall as exp(-x^2/2)), none of 48 at N = 100."""
    assert rt.kept_nodes(128, 30) == 86 and rt.kept_nodes(48, 100) == 48
    full = rt.smooth_step_seconds("tanh", 128, 30)
    assert rt.smooth_teacher_estimate("tanh", 128, 100, 30, False).seconds == pytest.approx(
        (100 + rt.SMOOTH_EXTRA_STEPS) * full * (86 / 128) ** 2)


def test_ln_theta_rule_model(monkeypatch):
    """N = 100: degrees 7, 8, 9 built (theta_start_degree 7, accepted two on), 192, 384, 768
    nodes: 192^2 + 384^2 + 768^2 = 774144."""
    from rdyn.reduced_dynamics.model_b.exact import theta_start_degree

    assert theta_start_degree(100) == 7 and theta_start_degree(1000) == 10
    monkeypatch.setattr(rt, "LN_THETA_BUILD_S", 1e-5)
    monkeypatch.setattr(rt, "LN_THETA_STEP_S", 1e-2)
    monkeypatch.setattr(rt, "LN_KNEE_DPS", 100.0)   # N factor 1 + 1 = 2
    est = rt.ln_estimate("ln", (4, 1, 1), 100, 200)
    assert est.seconds == pytest.approx(2 * (7.74144 + 2.0)) and est.line() == \
        "rdyn ln: about 19 s (a 768-node theta rule at --dps 100, 200 steps)"
    assert rt.ln_estimate("noln", (4, 1, 1), 100, 200).seconds == pytest.approx(2 * 7.74144)
    # N = 1000 starts at the cap: one degree-10 rule (1536 nodes), factor 1 + 10^1.5
    assert rt.ln_estimate("noln", (4, 1, 1), 1000, 10).seconds == pytest.approx(
        (1 + 1000 ** 0.5) * 1e-5 * 1536 ** 2)
    assert rt.ln_estimate("ln", (4, 1, 1), None, 200) is None          # float64
    assert rt.ln_estimate("ln", (2, 2, 2), 100, 200) is None           # one level: no rule


def test_ln_dirichlet_rule_model(monkeypatch):
    """3 distinct eigenvalues at N = 30: orders 27 and 33 (model_b.exact.dirichlet_orders),
    27^2 + 33^2 = 1818 nodes built, steps on 33^2 = 1089 (the rule the run uses)."""
    from rdyn.reduced_dynamics.model_b import run as mb
    from rdyn.reduced_dynamics.model_b.exact import dirichlet_orders

    assert dirichlet_orders(30) == (27, 33)
    assert mb.exact_rule((4, 2, 1), 30).nodes == 33 ** 2
    monkeypatch.setattr(rt, "LN_DIRICHLET_BUILD_S", 1e-3)
    monkeypatch.setattr(rt, "LN_DIRICHLET_STEP_S", 1e-5)
    est = rt.ln_estimate("ln", (4, 2, 1), 30, 100)
    assert est.seconds == pytest.approx(1.818 + 100 * 1089e-5)
    assert "1089-node rule at --dps 30, 100 steps" in est.line()
    # over the Dirichlet rule's node budget, more levels, the looped model with 3: Gaussian route
    for model, spec, dps in [("ln", (4, 3, 2, 1), 100), ("ln", (5, 4, 3, 2, 1), 30),
                             ("looped", (4, 2, 1), 30)]:
        assert "the Gaussian route" in rt.ln_estimate(model, spec, dps, 10, 3).line()


def test_ln_gaussian_route_model(monkeypatch):
    """S = 40067 single-layer nodes for (5,4,3,2,1) at N = 30 (model_b.gaussian.grid_nodes),
    r = 5, cost c per node and level: constants 1.6 c r S, then (steps + 1) c r S (ln), nothing
    more (noln), (steps + 2) c r T on the looped model's T-node grid."""
    from rdyn.reduced_dynamics.model_b.gaussian import grid_nodes

    monkeypatch.setattr(rt, "GAUSS_NODE_S", 1e-6)
    monkeypatch.setattr(rt, "GAUSS_KNEE_DPS", 30.0)   # N factor 1 + 1 = 2
    S, T = grid_nodes((5, 4, 3, 2, 1), 30), grid_nodes((5, 4, 3, 2, 1), 30, 4)
    assert S == 40067 and 100 < T < 1000
    c = 2e-6 * 5
    assert rt.ln_estimate("ln", (5, 4, 3, 2, 1), 30, 20).seconds == pytest.approx(c * S * (1.6 + 21))
    assert rt.ln_estimate("noln", (5, 4, 3, 2, 1), 30, 20).seconds == pytest.approx(c * S * 1.6)
    assert rt.ln_estimate("looped", (5, 4, 3, 2, 1), 30, 20, 4).seconds == pytest.approx(
        c * (1.6 * S + 22 * T))
    # float64 (issue 32: a large spectrum is slow in float64 too): 13 ns per node and level
    S64 = grid_nodes((5, 4, 3, 2, 1), None)
    assert rt.ln_estimate("ln", (5, 4, 3, 2, 1), None, 20).seconds == pytest.approx(
        rt.GAUSS_F64_NODE_S * 5 * S64 * (1.6 + 21))
    assert "nodes in float64, 20 steps" in rt.ln_estimate("ln", (5, 4, 3, 2, 1), None, 20).line()
    assert "40067 nodes at --dps 30, 20 steps" in rt.ln_estimate("ln", (5, 4, 3, 2, 1), 30, 20).line()


def test_ln_cli_prints_the_estimate_unless_quiet(capsys, monkeypatch):
    monkeypatch.setattr(rt, "ANNOUNCE_ABOVE_S", -1.0)   # every run "long"
    argv = ["ln", "--data", "spectrum", "--d", "3", "--spectrum", "4,1,1", "--steps", "3",
            "--dps", "20", "--json"]
    rc, out, err = run_main(capsys, argv)
    assert rc == 0 and err.startswith("rdyn ln: about ") and "theta rule at --dps 20, 3 steps)" in err
    rc, quiet_out, err = run_main(capsys, argv + ["--quiet"])
    assert rc == 0 and "rdyn ln: about" not in err and quiet_out == out
