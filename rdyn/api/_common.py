"""Helpers shared by the API functions: the validated options of a command, checkpoint errors
as usage errors. (An engine's ValueError becomes a UsageError through
:func:`rdyn.options.engine_errors.usage_errors`.)"""
from __future__ import annotations

from contextlib import contextmanager

from rdyn.options import typed_options, validate
from rdyn.output import UsageError

def options(command: str, given: dict, *, api: bool = True):
    """Every option of ``command`` (validated, defaults filled in; UsageError otherwise), as
    the command's frozen dataclass of :mod:`rdyn.option_types` (``v.steps``)."""
    return typed_options(command, validate(command, given, api=api))


@contextmanager
def checkpoint_errors():
    """A CheckpointError (missing, corrupt or mismatched checkpoint) becomes a UsageError."""
    from rdyn.reduced_dynamics.runs.checkpoint import CheckpointError

    try:
        yield
    except CheckpointError as exc:
        raise UsageError(str(exc)) from None
