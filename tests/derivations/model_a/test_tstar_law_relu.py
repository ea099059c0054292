"""Lemma D.17's law for ReLU and Leaky ReLU (rdyn.derivations.model_a.tstar_law_relu): every obligation holds at both
activations and logit scales, the limits are the correction's I0 and I1, the positivity tests refuse constants
just below the true suprema, the explicit bounds hold at the pinned D0 and contain the gradient flow's
tau_star; the argument's step 0 and the calculus that assembles steps 4-6 are not machine-checked, so neither the
law nor the ledger calls it `proved`."""
import pytest
import sympy as sp

from rdyn.derivations.model_a import collapsed as ma
from rdyn.derivations.model_a import tstar_law_relu as tr

D, K, v, kappa = ma.D, ma.K, ma.vstar_norm2, ma.kappa
x, sigma, q, theta, P1 = tr.x, tr.sigma, tr.q, tr.theta, tr.P1


@pytest.mark.parametrize("scale,activation", [
    pytest.param(scale, activation, marks=[pytest.mark.slow] if scale == "D" else [],
                 id=f"{scale}-{activation}")        # D: ~30 s each, the same machinery as the sqrtD two (and
    # rdyn verify --quick's A.errata.Tstar.relu_proof, which the default suite requires to pass, runs all four)
    for scale in tr.SCALES for activation in tr.ACTIVATIONS])
def test_every_obligation_holds(activation, scale):
    law = tr.prove(activation, scale)
    assert law.checked, [o.name for o in law.obligations if not o.holds]
    assert not law.proved and law.unchecked_steps
    assert len(law.obligations) == 31
    assert [o.name for o in law.obligations if o.method == "limit_rules"] == ["hypothesis_eventually",
                                                                             "leading_order", "I1"]
    assert len(law.exact_obligations) == 31          # limit_rules obligations count as machine-checked
    g = 1 if activation == "relu" else 1 + kappa**2
    assert sp.simplify(law.I0 - K / (v * g)) == 0
    for bound in ("tau_lo", "tau_hi"):
        assert sp.simplify(law.limits[bound] - law.I0) == 0
        assert sp.simplify(law.limits[bound + "_I1"] - law.I1) == 0


def test_I1_is_the_ledger_constant():
    """I1 = (2 + 4 pi^2) K^(3/2)/(pi v) (ReLU) and (2 K^(3/2)/(pi v))(2 pi^2 (1+kappa^2)/(1-kappa^2)^2
    + (1-kappa)^2/(1+kappa^2)^2) (Leaky ReLU): docs/claims.md, the erratum's D.17 row."""
    relu = (2 + 4 * sp.pi**2) * K**sp.Rational(3, 2) / (sp.pi * v)
    leaky = 2 * K**sp.Rational(3, 2) / (sp.pi * v) * (2 * sp.pi**2 * (1 + kappa**2) / (1 - kappa**2)**2
                                                       + (1 - kappa)**2 / (1 + kappa**2)**2)
    assert sp.simplify(tr.prove("relu", "D").I1 - relu) == 0
    assert sp.simplify(tr.prove("leaky", "sqrtD").I1 - leaky) == 0
    assert sp.simplify(leaky.subs(kappa, 0) - relu) == 0


def test_derived_factors_match_a_hand_computation():
    """mu = v/(K^2 D^2) (logits/D), v/(K^2 D) (logits/sqrtD), as for the identity; nu = mu (1 + sigma^2)/(2 pi^2)."""
    N = D - K
    for scale, mu in (("D", v / (K**2 * D**2)), ("sqrtD", v / (K**2 * D))):
        for activation in tr.ACTIVATIONS:
            law = tr.prove(activation, scale)
            assert sp.simplify(law.mu - mu) == 0
            assert sp.simplify(law.nu - mu * (1 + K / N) / (2 * sp.pi**2)) == 0


def test_positivity_tests_refuse_false_constants():
    """Each constant just below the measured supremum is refused; the proof's constants are accepted."""
    assert tr.nonnegative_on(sp.Rational(31, 50) - tr.PSI, x, 0)
    assert not tr.nonnegative_on(sp.Rational(61, 100) - tr.PSI, x, 0)       # sup psi = 0.6135
    assert not tr.nonnegative_on(sp.Rational(19, 10) - sp.cancel(tr.PSI * tr.K_BAR), x, 0)   # sup 1.964
    near = tr.FAMILY["f"].subs(P1, sp.pi - q * (x - theta * x**3 / 3))
    box = {x: (0, 1), q: (0, 1), theta: (0, 1)}
    assert tr._pi_boxed(tr.NEAR_GAP - (tr.F_NEAR - near), box)
    assert not tr._pi_boxed(sp.Rational(1, 10) - (tr.F_NEAR - near), box)  # sup f_near - f = 0.129 (q = theta = 1)
    # without the (1 + 4x/3) factor the majorant is false: -R ~ x^-2 at large x (P1 = pi, sigma = 1, q -> 0)
    R = tr.FAMILY["R"]
    small = x**3 * (1 + x)**2 / (1 + x**2)**4
    family_box = {x: (0, None), sigma: (0, 1), q: (0, 1), P1: (tr.PI / 2, tr.PI)}
    assert tr._pi_boxed(tr.PSI + R, family_box) and not tr._pi_boxed(small + R, family_box)


def test_box_test_is_exact_on_a_known_polynomial():
    """(1 - x)^2 >= 0 everywhere, but its coefficients have mixed signs: the sufficient test says no; on
    [0, 1] after the map x = 1/(1 + t) it is t^2/(1+t)^2 and the test says yes; x - 1/2 < 0 somewhere."""
    assert not tr.box_nonnegative((1 - x)**2, {x: (0, None)})
    assert tr.box_nonnegative(1 - x, {x: (0, 1)})
    assert not tr.box_nonnegative(x - sp.Rational(1, 2), {x: (0, 1)})


@pytest.mark.parametrize("expr, box, expected", [
    # P1 in [PI/2, PI] names the later box variable PI (the ring route substitutes in box order)
    (lambda: tr.PI - P1, lambda: {P1: (tr.PI / 2, tr.PI), tr.PI: (3, 4)}, True),
    (lambda: P1 - 3 * tr.PI / 4, lambda: {P1: (tr.PI / 2, tr.PI), tr.PI: (3, 4)}, False),
    (lambda: (x + q) / (1 + x * q), lambda: {x: (0, None), q: (0, 1)}, True),
    (lambda: (x - q) / (1 + x), lambda: {x: (0, None), q: (0, 1)}, False),
    # a symbol outside the box: sympy's assumptions decide the coefficients' signs (expression route)
    (lambda: sp.Symbol("v", positive=True) * x, lambda: {x: (0, None)}, True),
    (lambda: sp.pi - x, lambda: {x: (0, 3)}, True),
])
def test_box_test_routes_agree(expr, box, expected):
    """Rational coefficients (the ring over QQ) and sympy-expression coefficients (the ring over EX) give the
    same answer."""
    e, b = expr(), box()
    num, den = sp.fraction(sp.cancel(sp.together(e)))
    assert tr.box_nonnegative(e, b) is expected
    assert tr.tl.box_nonnegative_in(num, den, b, sp.EX) is expected


@pytest.mark.parametrize("activation, scale, thresholds", [
    ("relu", "D", {1: 17, 2: 16, 3: 18}), ("relu", "sqrtD", {1: 77, 2: 46, 3: 39}),
    ("leaky", "D", {1: 17, 2: 16, 3: 18}), ("leaky", "sqrtD", {1: 77, 2: 46, 3: 39})])
def test_hypothesis_thresholds_are_pinned(activation, scale, thresholds):
    """(H) at every D >= D0, decided exactly (``tstar_law.threshold``), and not at D0 - 1 (v = 1; kappa 0.3): the
    bounds are refused below it."""
    law = tr.prove(activation, scale)
    for k, d0 in thresholds.items():
        assert tr.hypothesis_holds(law, d0, k, 1, 0.3) and not tr.hypothesis_holds(law, d0 - 1, k, 1, 0.3)
        assert tr.tl.threshold(law, k, 1, "0.3", start=d0 - 3) == d0
    with pytest.raises(ValueError, match="hypothesis"):
        tr.bounds(law, thresholds[2] - 1, 2, 1, 0.3)


def test_ledger_does_not_call_the_correction_proved():
    from rdyn.verification.claims import errata_writer, strength

    ids = ["A.errata.Tstar", "A.errata.Tstar.identity_proof", "A.errata.Tstar.relu_proof"]
    s, basis = strength.of_correction("A", "Lemma D.17", ids)
    assert s == "sampled" and basis["proved_part"]["checks"] == ids[1:]
    assert "Leaky ReLU" in basis["proved_part"]["domain"] and "proofs" not in basis
    fix = {"statement": "law", "relation": "asymptotic", "limit": "D->oo", "verdict": "pass", "strength": s,
           "strength_basis": basis}
    line, _ = errata_writer._correction_lines({"correction": fix, "formulas": []})
    assert "strength: sampled (exact obligations only" in line and "proved" not in line


def test_box_test_refuses_a_part_that_is_not_polynomial_in_the_box():
    """A factor such as |2x - 1| or atan(x) is not a constant coefficient: refused (PolynomialError), not read
    as one, over either coefficient domain."""
    for e in (sp.Abs(2 * x - 1) * x, sp.atan(x) + 1):
        with pytest.raises(sp.PolynomialError):
            tr.box_nonnegative(e, {x: (0, 1)})
        num, den = sp.fraction(sp.cancel(sp.together(e)))
        with pytest.raises(sp.PolynomialError):
            tr.tl.box_nonnegative_in(num, den, {x: (0, 1)}, sp.EX)
