"""The type and range of one given value (:func:`coerce`), the first check of the validation:

* ``int``: an integer by :func:`rdyn.options.integers.integral` (the API takes numbers, not
  text), compared exactly with the bounds; without an upper bound at most a 64-bit integer; with
  ``range_ok`` also a range ``LO:HI`` or ``LO:`` (a pair, ``(lo, None)`` open above, or that text) with
  ``LO <= HI``, both within the bounds, returned as the pair ``(lo, hi)`` (``hi`` None: every integer from LO);
* ``float``: a real number (not a bool), finite (nan and +-inf are refused), within the bounds
  (open or closed); with ``range_ok`` also a range ``LO:HI`` (a pair or that text) with
  ``bound <= LO < HI``, HI within the bounds, returned as the pair ``(lo, hi)`` of floats;
* ``choice``: one of the choices; ``flag``: True or False; ``path``/``out``: a non-empty path;
* ``str``: text (repeatable options: a non-empty string or a list of them);
* a value of one of the option's ``api_types`` (e.g. a tuple for ``--spectrum``) is passed on
  as given.
"""
from __future__ import annotations

import math
import numbers
import os
from typing import Any

from rdyn.options.integers import integral
from rdyn.options.limits import INT_OPTION_MAX
from rdyn.options.option import Option
from rdyn.options.shown_values import shown, shown_integer
from rdyn.output import UsageError


def coerce(o: Option, value: Any) -> Any:
    """``value`` given for ``o`` in its validated form (an exact int, a float, a list for a
    repeatable option; else as given), or :class:`~rdyn.output.UsageError` naming the option."""
    if o.api_types and isinstance(value, o.api_types):
        return value
    if o.kind == "flag":
        if not isinstance(value, bool):
            raise UsageError(f"{o.flag} must be True or False, got {shown(value)}")
        return value
    if o.kind == "int" and o.range_ok and isinstance(value, (tuple, list, str)):
        return _int_range(o, value)
    if o.kind == "int":
        if isinstance(value, str) or integral(value) is None:  # the API takes numbers only
            raise UsageError(f"{o.flag} must be an integer, got {shown(value)}")
        value = integral(value)   # an exact Python int: compared as an integer, never a float
        if o.lo is not None and (value < o.lo or (o.lo_open and value == o.lo)) or \
                o.hi is not None and (value > o.hi or (o.hi_open and value == o.hi)):
            if o.name == "dps" and o.hi is not None and value > o.hi:
                raise UsageError(f"--dps {shown_integer(value)} is above the supported maximum "
                                 f"{int(o.hi)}")
            raise UsageError(f"{o.flag} must be {o.range_text()}, got {shown_integer(value)}")
        if o.hi is None and value > INT_OPTION_MAX:
            raise UsageError(f"{o.flag} must be at most {INT_OPTION_MAX} (a 64-bit integer), got "
                             f"{shown_integer(value)}")
        return value
    if o.kind == "float" and o.range_ok and isinstance(value, (tuple, list, str)):
        return _float_range(o, value)
    if o.kind == "float":
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise UsageError(f"{o.flag} must be a real number, got {shown(value)}")
        value = float(value)
        if not math.isfinite(value):
            raise UsageError(f"{o.flag} must be a finite number, got {value}")
        if o.lo is not None and (value < o.lo or (o.lo_open and value == o.lo)) or \
                o.hi is not None and (value > o.hi or (o.hi_open and value == o.hi)):
            raise UsageError(f"{o.flag} must be {o.range_text()}, got {shown(value)}")
        return value
    if o.kind == "choice":
        if value not in o.choices:
            raise UsageError(f"{o.flag} must be one of {', '.join(map(str, o.choices))}, "
                             f"got {shown(value)}")
        return value
    if o.kind in ("path", "out"):
        if not isinstance(value, (str, os.PathLike)) or str(value) == "":
            raise UsageError(f"{o.flag} must be a file path, got {shown(value)}")
        return value
    if o.repeatable:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not items or \
                not all(isinstance(v, str) and v.strip() for v in items):
            raise UsageError(f"{o.flag} must be a non-empty string (or a list of them), "
                             f"got {shown(value)}")
        return list(items)
    if not isinstance(value, str):
        raise UsageError(f"{o.flag} must be a string, got {shown(value)}")
    return value


def _int_range(o: Option, value: Any) -> tuple[int, int | None]:
    """``LO:HI`` or ``LO:`` (text, or a pair from the API, ``(lo, None)`` for ``LO:``) of a ``range_ok`` int
    option: every integer in [LO, HI], or every integer from LO."""
    shape = f"{o.flag} as a range must be LO:HI or LO: (integers; every value in [LO, HI], or every value from LO)"
    if isinstance(value, str):
        parts = value.split(":")
        value = tuple(None if i == 1 and x.strip() == "" else x for i, x in enumerate(parts))
        if any(isinstance(x, str) and integral(x) is None for x in value):
            raise UsageError(f"{shape}, got {shown(':'.join(parts))}")
        value = tuple(x if x is None else integral(x) for x in value)
    if len(value) != 2 or value[0] is None or any(
            x is not None and (isinstance(x, bool) or integral(x) is None) for x in value):
        raise UsageError(f"{shape}, got {shown(value)}")
    lo, hi = integral(value[0]), None if value[1] is None else integral(value[1])
    if lo is None:   # checked above; for the type checker
        raise UsageError(f"{shape}, got {shown(value)}")
    for end in (lo, hi):
        if end is not None and (o.lo is not None and end < o.lo or o.hi is not None and end > o.hi):
            raise UsageError(f"{o.flag} range: each end must be {o.range_text()}, got {shown_integer(end)}")
    if hi is not None and hi < lo:
        raise UsageError(f"{shape} with LO <= HI, got {lo}:{hi}")
    return (lo, hi)


def _float_range(o: Option, value: Any) -> tuple[float, float]:
    """``LO:HI`` (text, or a pair from the API) of a ``range_ok`` float option: every value in (LO, HI]."""
    shape = f"{o.flag} as a range must be LO:HI (two numbers, every value in (LO, HI])"
    if isinstance(value, str):
        parts = value.split(":")
        try:
            value = tuple(float(x) for x in parts)
        except ValueError:
            raise UsageError(f"{shape}, got {shown(':'.join(parts))}") from None
    if len(value) != 2 or any(isinstance(x, bool) or not isinstance(x, numbers.Real) for x in value):
        raise UsageError(f"{shape}, got {shown(value)}")
    lo, hi = float(value[0]), float(value[1])
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise UsageError(f"{shape} of finite numbers, got {lo!r}:{hi!r}")
    if not lo < hi:
        raise UsageError(f"{shape} with LO < HI, got {lo!r}:{hi!r}")
    if o.lo is not None and lo < o.lo:
        raise UsageError(f"{shape} with LO >= {o.lo!r}, got {lo!r}:{hi!r}")
    if o.hi is not None and (hi > o.hi or (o.hi_open and hi == o.hi)):
        raise UsageError(f"{o.flag} range: HI must be {o.range_text()}, got {hi!r}")
    return (lo, hi)
