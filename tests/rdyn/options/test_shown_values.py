"""rdyn/options/shown_values.py: given values quoted in one-line refusals."""
from __future__ import annotations

import numpy as np

from rdyn.options.shown_values import shown, shown_integer, shown_path


def test_shown_integer_is_exact_up_to_24_digits_then_scientific():
    assert shown_integer(10 ** 23) == "1" + "0" * 23
    assert shown_integer(10 ** 300) == "1.000e+300 (an integer of 301 digits)"
    assert shown_integer(-123456789 * 10 ** 30) == "-1.234e+38 (an integer of 39 digits)"
    assert shown_integer(10 ** 5000).endswith("(an integer of 5001 digits)")     # beyond int -> str


def test_shown_values_stay_one_short_line():
    assert shown(np.zeros((3, 4))) == "a numpy array of shape (3, 4) (pass array.tolist())"
    assert shown(2.5) == "2.5" and shown("abc") == "'abc'"
    long = shown(list(range(100000)))
    assert "\n" not in long and len(long) <= 100 and "100000" in long
    path = "/" + "x" * 400
    assert shown_path(path) == path[:80] + "..." + path[-80:] and shown_path("/tmp/a") == "/tmp/a"
