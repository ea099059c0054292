"""rdyn/options/value_checks.py: checks of one value beyond type and range."""
from __future__ import annotations

import pytest

from rdyn.options import value_checks as vc


def test_row_norms():
    assert vc.parse_row_norms("1,0.5, 2") == [1.0, 0.5, 2.0] and vc.parse_row_norms([3]) == [3.0]
    with pytest.raises(ValueError, match="not a comma-separated list of numbers"):
        vc.parse_row_norms("1,a")
    with pytest.raises(ValueError, match="every norm must be a finite number > 0"):
        vc.check_row_norms("1,0")


def test_activation_expr():
    vc.check_activation_expr("x/(1+x*x)")                     # smooth, sigma'(0) = 1
    with pytest.raises(ValueError, match=r"sigma'\(0\) = 0, so nothing moves"):
        vc.check_activation_expr("x*x/(1+x*x)")
    with pytest.raises(ValueError, match=r"sigma'' of 'Abs\(x\) \+ x' cannot be evaluated"):
        vc.check_activation_expr("Abs(x) + x")                # a kink
