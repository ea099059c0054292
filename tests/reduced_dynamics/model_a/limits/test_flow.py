"""The eta -> 0 phase limits (rdyn.reduced_dynamics.model_a.limits.flow) against the exact map, and the derived
large-D asymptotics against the slow-manifold quadrature."""
import math

import pytest
import sympy as sp

from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, eta_limit


def test_vector_field_is_the_map_increment():
    """F(x) from the derivation equals (map(x) - x)/eta of the generated float64 kernels."""
    from rdyn.derivations.model_a.gradient_flow import flow_functions
    from rdyn.reduced_dynamics.model_a.kernels import kernels

    rhs, _, _, _ = flow_functions("relu", "D", "numpy")
    k = kernels("relu", "D", "float64")
    D, K, eta = 12, 3, 0.01
    c = k.prepare(D, K, eta, 1.0, 0.1, 1.0)
    for C1, C2 in ((0.7, 0.3), (2.5, 4.0)):
        C3 = K * C2 / (D - K)
        n1, n2, n3 = k.step(C1, C2, C3, c)
        f1, fs = rhs(C1, math.exp(-(C2 + C3) / D), D, K, 1.0, 0.1)
        assert (n1 - C1) / eta == pytest.approx(f1, rel=1e-12)
        assert ((n2 + n3) - (C2 + C3)) / eta == pytest.approx(fs, rel=1e-9)


def test_flow_order_against_map():
    """Relative error of tau_star/eta vs the map's T* shrinks like eta (order 1 +- 0.1); the
    modified equation's t1 error like eta^2."""
    from rdyn.verification.references.flow_accuracy import observed_order

    base = TeacherConfig(8, 2, "relu")
    limit = eta_limit(base)
    result = observed_order(base, limit / 8, limit / 32)
    assert result["order"]["err_T_flow"] == pytest.approx(1.0, abs=0.1)
    assert result["order"]["err_t1_modified"] == pytest.approx(2.0, abs=0.3)
    assert abs(result["small"]["err_T_modified"]) < 1e-8


def test_slow_matches_map_at_default_eta():
    """Slow manifold vs the exact map at the default eta (= eta_limit/2), D = 32: the
    relative error of eta T* is the flow's O(eta) error, measured 2.1e-7."""
    from rdyn.verification.references.flow_accuracy import compare

    row = compare(TeacherConfig(32, 4, "relu"), methods=("slow",))
    assert abs(row["err_T_slow"]) < 1e-6


def test_tau1_limit_relu():
    """tau1 -> 2 log 20 (C1 relaxes at rate 1/2 while p ~ 1/D); at D = 1e6 the slow value
    agrees to 1e-10."""
    from rdyn.reduced_dynamics.model_a.limits.flow import slow_limits

    limits = slow_limits(TeacherConfig(10**6, 4, "relu"))
    assert limits.tau1 == pytest.approx(2 * math.log(20), rel=1e-10)


def test_identity_expansion_closed_form():
    from rdyn.derivations.model_a.asymptotics import tau_star_expansion, late_loss_constant
    from rdyn.derivations.model_a import collapsed as ma

    x = tau_star_expansion("identity")
    assert sp.simplify(x.I0 - ma.K / ma.vstar_norm2) == 0
    assert x.I1 == 0
    _, _, c_L = late_loss_constant("identity", "D")
    assert sp.simplify(c_L - ma.K * ma.D**2 * (ma.D - ma.K) / 4) == 0


def test_identity_closed_form_vs_slow_quadrature():
    """identity: tau_star - tau1 = D (K N^2 + 2 K^2 N log(N/K) - K^3)/v (sympy integral) vs
    the numerical slow-manifold quadrature at D = 1e4 (differences: phase-one displacement
    and lag, measured 1e-12 relative)."""
    from rdyn.derivations.model_a.asymptotics import slow_integral_closed_form
    from rdyn.derivations.model_a import collapsed as ma
    from rdyn.reduced_dynamics.model_a.limits.flow import slow_limits

    closed = slow_integral_closed_form("identity")
    D, K = 10**4, 4
    value = float(closed.subs({ma.D: D, ma.K: K, ma.vstar_norm2: 1})) * D
    limits = slow_limits(TeacherConfig(D, K, "identity"))
    assert (limits.tau_star - limits.tau1) / value - 1 == pytest.approx(0, abs=1e-10)


def test_cli_refuses_map_options():
    from rdyn.cli import main

    assert main(["teacher", "--method", "slow", "--record", "3"]) == 2
    assert main(["teacher", "--method", "flow", "--dps", "20"]) == 2


@pytest.mark.slow
def test_relu_asymptotic_constant_vs_slow():
    """Two-term expansion K D (D-K)^2 (1 + (2/pi + 4 pi) sqrt(K/(D-K))) vs slow at 1e5, 1e6:
    deviation O(log D / D) (measured -3.5e-3, -4.7e-4)."""
    from rdyn.reduced_dynamics.model_a.limits.asymptotics import asymptotic_summary

    s = asymptotic_summary("relu", "D", 4, check_D=(10**5, 10**6))
    devs = [abs(c["rel_dev_two_term"]) for c in s["checks"]]
    assert devs[1] < 1e-3 and devs[1] < devs[0] / 5
    assert s["tau_star"]["exponent"] == 3


@pytest.mark.slow  # ~45 s of sympy series for the relu loss
def test_late_loss_constant_vs_map():
    """eta t loss(t) of the exact map -> c_L = K D^2 (D-K)/4 (relu, logits/D; derived on the
    slow manifold): 192 at D = 8, K = 2; the map gives 195.25 at t = 1e6 (+1.7%)."""
    from rdyn.derivations.model_a import collapsed as ma
    from rdyn.derivations.model_a.asymptotics import late_loss_constant
    from rdyn.reduced_dynamics.model_a.dynamics import run

    c_L = late_loss_constant("relu", "D")[2].subs({ma.D: 8, ma.K: 2})
    assert c_L == 192
    config = TeacherConfig(8, 2, "relu")
    value = float(run(config, steps=10**6).final.loss) * config.step_size * 10**6
    assert value / 192 - 1 == pytest.approx(0.0169, abs=2e-3)
