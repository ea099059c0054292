"""A given value quoted in a one-line refusal: a huge integer, a long list, a numpy array or
a long path is shortened so that the refusal stays one short line.
"""
from __future__ import annotations

import os
from decimal import Decimal, ROUND_DOWN
from typing import Any


def shown(value: Any) -> str:
    """A given value in a refusal: one line, at most about 80 characters (a numpy array is
    named by its shape: its repr spans many lines; a long list by its first items and its
    size, "[1, 2, ...] (100000 values)": rdyn.derivations.messages.summarised)."""
    from rdyn.derivations.messages import summarised

    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return f"a numpy array of shape {tuple(value.shape)} (pass array.tolist())"
    return summarised(value, repr, limit=80)


def shown_integer(value: int) -> str:
    """An integer in a message: as is up to 24 digits, else in scientific form with its digit
    count (``--D 1e300`` -> "1.000e+300 (an integer of 301 digits)"): one short line."""
    value = int(value)
    if value.bit_length() <= 79:   # below 10^24: as is
        return str(value)
    exact = Decimal(abs(value))   # not str(): Python refuses int -> str above 4300 digits
    digits = exact.adjusted() + 1
    if digits <= 24:
        return str(value)
    lead = str(int(exact.scaleb(4 - digits).to_integral_value(rounding=ROUND_DOWN)))
    sign = "-" if value < 0 else ""
    return f"{sign}{lead[0]}.{lead[1:4]}e+{digits - 1} (an integer of {digits} digits)"


def shown_path(path, limit: int = 160) -> str:
    """A user's path for a one-line message: as given, shortened in the middle when long."""
    text = os.fspath(path)
    return text if len(text) <= limit else f"{text[:limit // 2]}...{text[-limit // 2:]}"
