"""The one rule for integers, CLI and API alike: an integer option takes an int, or a finite
real number or numeric text whose value is an integer ("20", 20.0, "1e3"), read exactly
(decimal, never through a float); anything else (2.5, nan, True, "abc") is refused.
"""
from __future__ import annotations

import math
import numbers
from decimal import Decimal, InvalidOperation
from typing import SupportsInt, cast

from rdyn.options.shown_values import shown


def integral(value) -> int | None:
    """The one rule for integers, CLI and API alike: an int, or a finite real number or
    numeric string whose value is an integer ("20", 20.0, "1e3", 1e9 -> 1000000000); else
    None (2.5, "2.5", nan, inf, True, "abc"). Strings are read exactly (decimal), never
    through a float, so "12345678901234567890" stays exact."""
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, str):
        try:
            value = Decimal(value.strip())
        except InvalidOperation:
            return None
        if not value.is_finite() or value != value.to_integral_value():
            return None
        return int(value)
    if isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer():
        return int(cast(SupportsInt, value))  # an integral Real
    return None


def integer_argument(text: str) -> int:
    """argparse type of "int" options: :func:`integral` ("1e9" and "20.0" are integers). A
    number of more than 100000 digits (``--D 1e1000000``) is refused before it is converted
    (the exact conversion is quadratic in the number of digits), and no option comes near."""
    import argparse

    try:
        number = Decimal(text.strip())
        digits = number.adjusted() + 1 if number.is_finite() else 0
    except (InvalidOperation, ValueError, AttributeError):
        digits = 0
    if digits > 100000:
        raise argparse.ArgumentTypeError(f"{shown(text)} has {digits} digits, beyond the range "
                                         "of every integer option")
    value = integral(text)
    if value is None:
        raise ValueError(text)
    return value


integer_argument.__name__ = "integer"  # argparse: "invalid integer value: '2.5'"
