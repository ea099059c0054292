"""Helpers shared by the API functions: option validation and library-error translation
(``usage_errors``, ``option_name``, ``error_text``: :mod:`rdyn.options.engine_errors`;
``parse_steps_list``: :mod:`rdyn.options.value_checks`, re-exported here)."""
from __future__ import annotations

from contextlib import contextmanager

from rdyn.options import typed_options, validate
from rdyn.options.engine_errors import OPTION_OF_FIELD, error_text, option_name, usage_errors
from rdyn.options.value_checks import parse_steps_list
from rdyn.output import UsageError

__all__ = ["OPTION_OF_FIELD", "checkpoint_errors", "error_text", "option_name", "options",
           "parse_steps_list", "usage_errors"]


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
