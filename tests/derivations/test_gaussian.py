"""The polar-sector engine against exact values and an independent quadrature."""
import mpmath
import pytest
import sympy as sp

from rdyn.derivations import gaussian as g
from rdyn.verification.references.quadrature import bivariate_quadrature


def test_numerics_md_example_exact():
    # E[x1 relu(x1) 1{x1 + x2 >= 0}] for x1, x2 iid N(0,1) = (2 + 3 pi)/(8 pi)
    value = g.appendix_f("E[x1 s(x1) s'(x1+x2)]", "relu").subs({g.a_var: 1, g.b_var: 1})
    assert sp.simplify(value - (2 + 3 * sp.pi) / (8 * sp.pi)) == 0


def test_relu_kernel_known_forms():
    s_s = g.bivariate_form("s_s", "relu")
    # arc-cosine kernel of degree 1 (Cho & Saul): sd1 sd2 (sin t + (pi - t) cos t) / (2 pi)
    expected = g.sd1 * g.sd2 * (sp.sin(g.theta) + (sp.pi - g.theta) * sp.cos(g.theta)) / (2 * sp.pi)
    assert sp.simplify(s_s - expected) == 0
    assert sp.simplify(g.bivariate_form("ds_ds", "relu") - (sp.pi - g.theta) / (2 * sp.pi)) == 0


def test_leaky_reduces_to_relu_and_identity():
    for name in g.BIVARIATE_INTEGRANDS:
        leaky = g.bivariate_form(name, "leaky")
        assert sp.simplify(leaky.subs(g.kappa, 0) - g.bivariate_form(name, "relu")) == 0
        assert sp.simplify(leaky.subs(g.kappa, 1) - g.bivariate_form(name, "identity")) == 0


@pytest.mark.parametrize("name", sorted(g.BIVARIATE_INTEGRANDS))
def test_closed_form_matches_quadrature_30_digits(name):
    expr = g.bivariate_form(name, "leaky")
    with mpmath.workdps(36):
        for sd1, sd2, rho in (("0.8", "1.7", "0.35"), ("1", "1", "-0.99999999")):
            exact = expr.subs({g.sd1: sp.Rational(sd1), g.sd2: sp.Rational(sd2),
                               g.theta: sp.acos(sp.Rational(rho)), g.kappa: sp.Rational(1, 2)})
            exact = mpmath.mpf(str(sp.N(exact, 40)))
            quad = bivariate_quadrature(name, sd1, sd2, rho, "0.5")
            assert abs(exact - quad) <= mpmath.mpf(10) ** -30 * abs(quad)


def test_appendix_f_printed_relu_values():
    for name in ("E[x s(x) s'(x)]", "E[x1 s(x1+x2) s'(x1+x2)]"):
        assert sp.simplify(g.appendix_f(name, "relu") - g.a_var / 2) == 0


def test_rejects_argument_off_the_rays():
    with pytest.raises(ValueError):
        g.expectation(g.sigma(g.z1 + 2 * g.z2), g.RELU)
