"""The derived collapsed map: exact properties and the cached catalog."""
import pytest
import sympy as sp

from rdyn.derivations.model_a import collapsed as ma
from rdyn.derivations.model_a.catalog import ACTIVATION_NAMES, SCALE_NAMES, derive_model_a, model_a_expressions

p = sp.Symbol("p", positive=True)


def in_p(expr):
    return sp.simplify(ma.to_internal(expr).subs(ma.out_group_ratio, (1 / p - ma.K) / ma.N))


def test_geometry_angle_is_stable_form():
    geo = ma.pre_activation_geometry()
    assert sp.simplify(sp.tan(geo.angle) - ma.out_group_ratio * sp.sqrt(ma.N / ma.K)) == 0


def test_c1_star_identity_matches_printed():
    derived = in_p(model_a_expressions("identity")["C1_star"])
    printed = (ma.D - ma.K) * p / (ma.D * ma.K * p**2 - 2 * ma.K * p + 1)
    assert sp.simplify(derived - ma.to_internal(printed)) == 0


def test_eta_limits_exact():
    x = {a: model_a_expressions(a)["eta_limit"] for a in ACTIVATION_NAMES}
    assert sp.simplify(x["identity"] - 2 * ma.K / ma.D) == 0
    assert sp.simplify(x["relu"] - 4 * ma.K / ma.D) == 0
    assert sp.simplify(x["leaky"] - 4 * ma.K / (ma.D * (1 + ma.kappa**2))) == 0


def test_c1_star_tends_to_one_at_convergence():
    # p -> 1/K (e -> 0): the student recovers V* exactly, for every activation
    for a in ACTIVATION_NAMES:
        assert sp.simplify(model_a_expressions(a)["C1_star"].subs(ma.out_group_ratio, 0)) == 1


def test_loss_vanishes_at_the_teacher():
    for a in ACTIVATION_NAMES:
        loss = model_a_expressions(a)["loss_positive"]
        assert sp.simplify(loss.subs({ma.out_group_ratio: 0, ma.C1: 1})) == 0


def test_initial_loss():
    # t = 0: student output 0, loss = D ||V*||^2 E[sigma(g)^2] / (2K)
    for a, m2 in (("identity", 1), ("relu", sp.Rational(1, 2))):
        loss = model_a_expressions(a)["loss_positive"].subs({ma.C1: 0, ma.out_group_ratio: 1})
        assert sp.simplify(loss - ma.D * ma.vstar_norm2 * m2 / (2 * ma.K)) == 0


@pytest.mark.parametrize("activation, scale", [
    pytest.param(a, s, marks=() if (a, s) == ("relu", "D") else pytest.mark.slow)
    for a in ACTIVATION_NAMES for s in SCALE_NAMES])
def test_catalog_equals_fresh_derivation(activation, scale):
    """The cached expressions can never drift from the sympy derivation (ReLU with the seed's
    1/D scale in the default run, every activation and scale with ``-m slow``; about 13 s each)."""
    cached = model_a_expressions(activation, scale)
    fresh = derive_model_a(activation, scale)
    assert cached.keys() == fresh.keys()
    for name in fresh:
        assert sp.srepr(cached[name]) == sp.srepr(fresh[name]), (activation, scale, name)
