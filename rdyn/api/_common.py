"""Helpers shared by the API functions: option validation and library-error translation."""
from __future__ import annotations

import numbers
from contextlib import contextmanager

from rdyn.options import shown, typed_options, validate
from rdyn.output import UsageError


def options(command: str, given: dict, *, api: bool = True):
    """Every option of ``command`` (validated, defaults filled in; UsageError otherwise), as
    the command's frozen dataclass of :mod:`rdyn.option_types` (``v.steps``)."""
    return typed_options(command, validate(command, given, api=api))


@contextmanager
def usage_errors():
    """Turn a library ValueError raised while building a configuration into a UsageError
    (the same one-line message)."""
    try:
        yield
    except UsageError:
        raise
    except ValueError as exc:
        raise UsageError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None


@contextmanager
def checkpoint_errors():
    """A CheckpointError (missing, corrupt or mismatched checkpoint) becomes a UsageError."""
    from rdyn.reduced_dynamics.runs.checkpoint import CheckpointError

    try:
        yield
    except CheckpointError as exc:
        raise UsageError(str(exc)) from None


def parse_steps_list(text, flag: str, steps: int | None) -> list[int]:
    """``--record``: comma-separated steps (or an iterable of ints) in 0..steps, sorted."""
    if text is None or text == "":
        return []
    if isinstance(text, str):
        try:
            values = [int(v) for v in text.split(",") if v.strip()]
        except ValueError:
            raise UsageError(f"{flag} must be comma-separated integers, got {shown(text)}") from None
    else:
        values = list(text)
        if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in values):
            raise UsageError(f"{flag} must be integers, got {shown(text)}")
        values = [int(v) for v in values]
    for v in values:
        if not (v >= 0 and (steps is None or v <= steps)):
            raise UsageError(f"--record: step {v} outside 0..{steps if steps is not None else 'N'}")
    return sorted(set(values))
