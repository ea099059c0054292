"""An engine's refusal shown to users: a library :class:`ValueError` becomes a one-line
:class:`~rdyn.output.UsageError`, and an engine's
:class:`~rdyn.derivations.fields.FieldError` is worded with the option of its
request field (``K`` -> ``--K``). The cross-option checks (:mod:`rdyn.options.model_a_checks`)
and the API modules (through ``rdyn.api._common``) use it alike.
"""
from __future__ import annotations

from contextlib import contextmanager

from rdyn.output import UsageError

# the options of the request fields an engine names in a refusal (FieldError.field): every
# other field is its option with dashes (vstar_norm2 -> --vstar-norm2, K -> --K)
OPTION_OF_FIELD = {"route": "--smooth-route"}


def option_name(field: str) -> str:
    """The command-line option of a request field (``K`` -> ``--K``)."""
    return OPTION_OF_FIELD.get(field, "--" + field.replace("_", "-"))


def error_text(exc: ValueError) -> str:
    """The one-line message of a library ValueError for users: an engine's FieldError worded
    with option names (``--K``), any other its own first line."""
    from rdyn.derivations.fields import FieldError

    text = exc.message(option_name) if isinstance(exc, FieldError) else str(exc)
    return text.splitlines()[0] if text else type(exc).__name__


@contextmanager
def usage_errors():
    """Turn a library ValueError raised while building a configuration into a UsageError
    (the same one-line message; an engine's FieldError names the option of its field)."""
    try:
        yield
    except UsageError:
        raise
    except ValueError as exc:
        raise UsageError(error_text(exc)) from None
