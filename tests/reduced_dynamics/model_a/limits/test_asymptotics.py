"""Issue 31: `rdyn asymptotics --activation NAME` for the smooth activations
(derivations/model_a/asymptotics.py smooth_leading, reduced_dynamics/model_a/limits/asymptotics.py
smooth_asymptotic_summary): the leading constant I0 of tau_star, tau1's limit and c_L, checked
against the identity's derivation, exact relations between activations, closed forms against
30-digit quadrature, and the slow-manifold quadrature of the map at large D."""
from __future__ import annotations

import json

import pytest
import sympy as sp

from rdyn import cli
from rdyn.derivations.model_a import asymptotics as da
from rdyn.derivations.activations import Activation
from rdyn.reduced_dynamics.model_a.limits import asymptotics as asy


def test_identity_as_a_formula_gives_the_identity_derivation():
    """sigma = x through the smooth route: A = kappa_s = 1, B = 0, so I0 = K/v and Q = 1, the
    values of the identity's own matched expansion (tau_star_expansion, rate 1)."""
    s = asy.smooth_asymptotic_summary(Activation("expr", "x"), K=3, vstar_norm2=2.0, check_D=())
    identity = da.tau_star_expansion("identity").I0.subs({da.K: 3, da.v: 2})
    assert identity == sp.Rational(3, 2)
    assert sp.Float(s["tau_star"]["I0_digits"], 30) == pytest.approx(1.5, rel=1e-28)
    assert s["tau1"]["rate_limit"] == str(da.phase_one_rate_limit("identity")) == "1"


def test_sigmoid_is_tanh_at_half_the_scale():
    """sigmoid(x) = 1/2 + tanh(x/2)/2, so A, kappa_s, Q scale by 1/4, 1/16, 1/16 and
    I0(sigmoid, M) = 16 I0(tanh, 4 M): an exact relation between two independent quadratures."""
    sig = asy.smooth_asymptotic_summary(Activation("sigmoid"), M=1, check_D=())
    tanh = asy.smooth_asymptotic_summary(Activation("tanh"), M=4, check_D=())
    ratio = sp.Float(sig["tau_star"]["I0_digits"], 30) / sp.Float(tanh["tau_star"]["I0_digits"], 30)
    assert abs(ratio - 16) < 1e-27
    assert sig["tau1"]["limit"] == "16*log(20)" and tanh["tau1"]["limit"] == "log(20)"


def test_erf_closed_moments_equal_the_quadrature():
    """erf's moments are closed forms (A = 2/sqrt(pi (1 + 2a^2)), kappa_s = 4/(pi sqrt(1 + 4a^2)));
    the 30-digit quadrature of the same integrands agrees to 28 digits."""
    lead = da.smooth_leading(Activation("erf").expression)
    a = sp.Rational(1, 3)
    for name in ("A", "kappa_s"):
        f, closed = lead.moments[name]
        assert closed is not None
        quad = asy._gaussian_average(f, a, 30)
        assert abs(sp.N(closed.subs(da.a_sd, a), 40) - quad) < sp.Float(10) ** -28


@pytest.mark.parametrize("name, M, D", [("tanh", 1, (10**4, 10**5)), ("softplus", 1, (10**4, 10**5)),
                                        ("gelu", 4, (10**3, 10**4))])
def test_leading_term_against_the_slow_manifold(name, M, D):
    """The map's slow-manifold tau_star over D (D-K)^2 I0 tends to 1 (measured 1.044-1.056 at
    D = 1e3, 1.0063-1.0081 at 1e4, 1.0008 at 1e5: the rest falls like log D / D), and tau1 to
    its limit. (GELU, erf: the slow quadrature's node choice stops at 1e5.)"""
    s = asy.smooth_asymptotic_summary(Activation(name), M=M, check_D=D)
    r_small, r_large = (c["ratio_to_leading"] for c in s["checks"])
    assert 1 < r_large < r_small < 1.06 and r_large - 1 < 100 / D[1]
    assert abs(s["checks"][1]["tau1_dev"]) < 1e-2 * float(s["tau1"]["limit_digits"])
    assert s["tau_star"]["I1"] is None and "not derived" in s["not_derived"][0]


def test_cli_smooth_json_and_refusals(capsys):
    """--json validates; a formula whose phase-one rate Q is negative is refused in one line
    saying so (exit 2); --M is refused for ReLU."""
    import jsonschema

    import rdyn

    assert cli.main(["asymptotics", "--activation", "softplus", "--no-check", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    jsonschema.validate(data, rdyn.schema("asymptotics"))
    assert data["moments"]["sigma2"] == "1/4" and data["M"] == 1
    for argv, needle in ((["--activation-expr", "x*tanh(x) + x/3"], "Q = "),
                         (["--activation", "relu", "--M", "2"], "--M")):
        assert cli.main(["asymptotics", "--no-check", *argv]) == 2
        err = capsys.readouterr().err.strip()
        assert needle in err and len(err.splitlines()) == 1
