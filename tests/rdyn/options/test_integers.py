"""rdyn/options/integers.py: the one rule for integers."""
from __future__ import annotations

import argparse
import math
from fractions import Fraction

import numpy as np
import pytest

from rdyn.options.integers import integer_argument, integral


@pytest.mark.parametrize("value,expected", [
    (20, 20), ("20", 20), (20.0, 20), ("1e3", 1000), (1e9, 10 ** 9), (" 7 ", 7), (np.int64(5), 5),
    ("12345678901234567890", 12345678901234567890),          # exact: never through a float
    (Fraction(6, 2), 3),
    (2.5, None), ("2.5", None), (math.nan, None), (math.inf, None), ("inf", None), (True, None),
    ("abc", None), (None, None),
])
def test_integral(value, expected):
    assert integral(value) == expected and (expected is None or type(integral(value)) is int)


def test_integer_argument_is_argparses_integer_type():
    assert integer_argument("1e3") == 1000
    with pytest.raises(ValueError):
        integer_argument("2.5")
    with pytest.raises(argparse.ArgumentTypeError, match="has 1000001 digits"):
        integer_argument("1e1000000")
    assert integer_argument.__name__ == "integer"       # argparse: "invalid integer value: '2.5'"
