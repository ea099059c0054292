"""rdyn.derivations.limits: limits at 0+ of log-rational sums by exact algebra, checked against hand values and
against sympy's ``limit`` (an independent route), and refusals where the three facts do not decide."""
import pytest
import sympy as sp

from rdyn.derivations.limits import eventual_sign, limit_at_zero, nonzero_everywhere, positive_everywhere

s = sp.Symbol("s", positive=True)
K, v = sp.symbols("K v", positive=True)
q = sp.Symbol("q", positive=True)

CASES = [
    ((s**2 + 3 * s) / (s + 2 * s**2), 3),
    (5 + s**2 * sp.log(s)**3, 5),
    (sp.log(2 + s), sp.log(2)),
    (s * sp.log(K / s), 0),
    ((1 + s)**2 * sp.log(K * (1 + s) / (2 * s**4 * v)) * s, 0),
    ((K + s) / (v + K * s) + s * sp.log(1 + 1 / s), K / v),
    (sp.log(3 + 1 / s) - sp.log(1 / s), 0),                      # log(3 s + 1)
    (sp.log(3 + 1 / s) + sp.log(s), 0),
    (s**-2 * (1 + s) * sp.log(2 * s**2) - 2 * s**-2 * sp.log(s) - s**-2 * sp.log(2 + 2 * s), None),
    ((q**2 + s) / (q * (2 - q) + s), q / (2 - q)),
]


@pytest.mark.parametrize("expr, value", CASES)
def test_limits_equal_hand_values_and_sympy(expr, value):
    result = limit_at_zero(expr, s, {q: (0, 1)})
    if value is None:
        assert result is None
        return
    assert result is not None
    assert sp.simplify(result.value - value) == 0
    assert sp.simplify(sp.limit(expr, s, 0, "+") - value) == 0       # the independent route agrees


@pytest.mark.parametrize("expr", [1 / s, sp.log(s), sp.log(1 + s) / s, s**-2 - s**-2 * sp.log(1 + s)])
def test_refuses_what_the_three_facts_do_not_decide(expr):
    """A pole, a bare log(s), and poles that only a Taylor expansion of log(1 + s) would resolve (log(1+s)/s -> 1;
    the last is unbounded): refused, not guessed."""
    assert limit_at_zero(expr, s) is None


def test_a_denominator_that_may_vanish_is_refused():
    expr = 1 / (q - sp.Rational(1, 2) + s)
    assert limit_at_zero(expr, s, {q: (0, 1)}) is None                  # q = 1/2 is admissible
    result = limit_at_zero(expr, s, {q: (0, sp.Rational(1, 4))})
    assert result is not None and sp.simplify(result.value - 1 / (q - sp.Rational(1, 2))) == 0


def test_signs_of_factors():
    assert nonzero_everywhere(sp.pi**3 * (q - 2)**3, {q: (0, 1)})
    assert not nonzero_everywhere(q - sp.Rational(1, 2), {q: (0, 1)})
    assert positive_everywhere(-(q - 2) * K, {q: (0, 1)})
    assert not positive_everywhere((q - 2) * K, {q: (0, 1)})
    assert not positive_everywhere(K - v, {})                           # sign not fixed: refused


def test_eventual_sign():
    assert eventual_sign(2 - 1 / s + 64 * s**4 * v * sp.log(K / s), s) == -1
    assert eventual_sign(-3 + s, s) == -1
    assert eventual_sign(1 / s - 100, s) == 1
    assert eventual_sign(s * sp.log(s), s) is None                     # its sign is not read off s^j times it
