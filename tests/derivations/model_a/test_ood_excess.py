"""Theorem 3.2's excess OOD loss over its class of Y (rdyn.derivations.model_a.ood_excess): the worst case
is Theta(T^(-1/2)), attained by a fixed Y; the 1/T rate holds only when the cross term vanishes."""
import numpy as np
import sympy as sp

from rdyn.derivations.model_a import collapsed as ma
from rdyn.derivations.model_a import ood_excess as oe


def test_exact_split_is_the_loss_difference():
    """L_OOD - 1/2 E||Y - f*||^2 = Q - C exactly: ||r - u||^2 - ||r||^2 = ||u||^2 - 2 <r, u> per column,
    and excess_form's Q is (D/2) E[u^2] with u = d1 z_in + d2 z_out (moments of independent sums)."""
    r, u = sp.symbols("r u", real=True)
    assert sp.expand(sp.Rational(1, 2) * ((r - u) ** 2 - r**2) - (u**2 / 2 - r * u)) == 0
    form = oe.excess_form()
    # Monte Carlo of the moments at one state (z = <v*, x>, x iid Exp(1), v* = (1/2)(1,1,1,1))
    rng = np.random.default_rng(3)
    D, K, C1, p = 8, 2, 1.1, 0.4
    z = rng.exponential(1.0, size=(400000, 4, D)).sum(axis=1) / 2
    zin, zout = z[:, :K].sum(axis=1), z[:, K:].sum(axis=1)
    d1, d2 = C1 * p - 1 / K, C1 * (1 - K * p) / (D - K)
    per = D / 2 * (d1 * zin + d2 * zout) ** 2
    exact = float(form["quadratic"].subs({ma.D: D, ma.K: K, oe.C1: C1, oe.p: p, **oe.EXP_INPUTS}))
    assert abs(per.mean() - exact) < 5 * per.std() / np.sqrt(per.size)


def test_worst_case_is_t_to_minus_one_half_and_attained_by_a_fixed_y():
    for act in ("identity", "relu", "leaky"):
        o = oe.ood_excess(act)
        assert o.a1 == 0 and sp.simplify(o.a2 - 1 / ma.K) == 0            # u = e z_out/K + O(e^2)
        assert o.T_exponent(o.sup_coefficient) == sp.Rational(-1, 2)      # worst case over the class
        assert o.T_exponent(o.q2, 2) == -1                                # cross term zero: 1/T
        assert sp.simplify(o.attaining_over_sup - 1) == 0                 # the fixed Y attains the sup
        # a generic fixed Y: the excess's e-coefficient is -(R_out)/K, zero only when E<r, z_out> = 0
        assert sp.simplify(o.linear_coefficient + oe.R_out / ma.K) == 0
        att = o.attaining_response()
        assert att["coef_in"] == 0 and att["coef_out"].could_extract_minus_sign()


def test_quadratic_term_is_the_population_asymptote_of_section_4_1():
    """With the cross term zero, the leading term is the noise-free population excess already derived for
    Section 4.1 (ReLU): D^2 K (D-K) (4(D-K) + 1)/(2 M eta T)."""
    o = oe.ood_excess("relu")
    lead = o.rate(o.q2, 2).subs(oe.EXP_INPUTS)
    D, K, M = ma.D, ma.K, ma.vstar_norm2
    assert sp.simplify(lead - D**2 * K * (D - K) * (4 * (D - K) + 1) / (2 * M * ma.eta * oe.T)) == 0


def test_dropping_the_cross_term_would_give_one_over_t():
    """What the printed O(1/T) misses: without the linear term the sup would be Q (exponent -1), so the
    test above can fail."""
    o = oe.ood_excess("relu")
    assert o.T_exponent(o.sup_coefficient) != o.T_exponent(o.q2, 2)
