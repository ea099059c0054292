"""The exact preprocessing of verify/proofs/symbolic.py: an ``Abs`` is removed only when the sign of its argument is
shown on the whole domain 0 <= e <= 1 (never at a sample point), ``acos(y)`` becomes ``atan(sN e/sK)`` only
when y is shown to be ``sK/sqrt(sK^2 + sN^2 e^2)`` (a positive root in (0, 1]), and identities are exact
zeros; the rewritten Appendix F forms equal the unrewritten ones."""
from __future__ import annotations

import mpmath
import pytest
import sympy as sp

from rdyn.verification.proofs import symbolic as sy

e, sK, sN = sy.e, sy.sK, sy.sN


def test_abs_sign_is_decided_on_the_whole_interval():
    p = 1 / (sK**2 + sN**2 * e)
    assert sp.cancel(sy._abs_nonneg(sp.Abs(sK**2 * p - 1)) - sN**2 * e * p) == 0    # |Kp - 1| = N e p
    assert sy._abs_nonneg(sp.Abs(e + sK)) == e + sK
    # a sign change inside [0, 1] is refused; a probe at e = 1/2 (its zero) would have called it nonnegative
    with pytest.raises(ArithmeticError, match="not decided"):
        sy._abs_nonneg(sp.Abs(e - sp.Rational(1, 2)))
    with pytest.raises(ArithmeticError, match="not decided"):
        sy._abs_nonneg(sp.Abs(sK - sN))


def test_acos_is_rewritten_only_for_its_exact_argument():
    good = (sK / sp.sqrt(sK**2 + sN**2 * e**2),
            sK * sp.Abs(e * sN**2 + sK**2) / ((e * sN**2 + sK**2) * sp.sqrt(e**2 * sN**2 + sK**2)))
    for y in good:
        assert sy._acos_as_atan(sp.acos(y)) == sp.atan(sN * e / sK)
    bad = (-sK / sp.sqrt(sK**2 + sN**2 * e**2),            # acos of a negative argument is pi - atan(...)
           sK / sp.sqrt(sK**2 + sN**2 * e),                 # another argument
           sK * (1 - 2 * e) / (sp.Abs(1 - 2 * e) * sp.sqrt(sK**2 + sN**2 * e**2)))   # the right square, sign changes
    for y in bad:
        with pytest.raises(ArithmeticError, match="is not atan"):
            sy._acos_as_atan(sp.acos(y))


def test_exact_zero():
    assert sy._is_zero((sK + e)**2 - sK**2 - 2 * sK * e - e**2)
    assert not sy._is_zero((sK + e)**2 - sK**2 - e**2)


def test_rewritten_f3_equals_the_unrewritten_form():
    """ReLU's F3 as a function of e (acos rewritten as atan, |Kp - 1| resolved) against the Appendix F
    expression at p = 1/(K + N e) with its acos, at 40 digits."""
    from rdyn.derivations import gaussian as g
    from rdyn.derivations.model_a import collapsed as ma

    p = sp.Symbol("p", positive=True)
    raw = g.appendix_f("E[s(x1) s(x1+x2)]", "relu").subs(
        {g.a_var: ma.K * p**2, g.b_var: ma.N * ((1 - ma.K * p) / ma.N)**2}, simultaneous=True)
    rewritten = sy.f_functions("relu")["F3"]
    assert not rewritten.atoms(sp.acos) and not rewritten.atoms(sp.Abs)
    for K_value, N_value, e_value in ((3, 6, sp.Rational(3, 10)), (2, 14, sp.Rational(9, 10)), (1, 4, sp.Rational(1, 50))):
        a = raw.subs({ma.K: K_value, ma.N: N_value}).subs(p, 1 / (K_value + N_value * e_value))
        b = rewritten.subs({sK: sp.sqrt(K_value), sN: sp.sqrt(N_value), e: e_value})
        with mpmath.workdps(40):
            assert abs(sp.N(a - b, 40)) < sp.Float("1e-35")
