"""The command-line side of the table: :func:`add_arguments` adds a subcommand's options to
its argparse parser (flags, metavars, choices; integers read by
:func:`rdyn.options.integers.integer_argument`), :func:`given_from_args` reads them back for
the shared validation, and :func:`help_text` is each option's help with its accepted range (the
text of ``--help``, docs/cli.md and the API docstrings). The parser checks the syntax only;
the values are checked by :func:`rdyn.options.validation.validate`, as for the API.
"""
from __future__ import annotations

from typing import Any

from rdyn.options.integers import integer_argument
from rdyn.options.option import Command, Option, never


def help_text(option: Option) -> str:
    """The option's help with its accepted range, e.g. "GD step size ... [> 0, finite]" (the
    text of ``--help``, docs/cli.md and the API docstrings)."""
    if option.applies is never:   # refused whatever the other options: no range to offer
        return f"not accepted here: {option.refusal or option.help}"
    text = option.help
    rng = option.range_text()
    if rng and option.kind in ("int", "float"):
        text += f" [{rng}{', finite' if option.kind == 'float' else ''}]"
    elif option.kind == "float":
        text += " [finite]"
    return text


def _help(option: Option) -> str:
    """:func:`help_text` for argparse."""
    return help_text(option).replace("%", "%%")  # argparse formats help strings with %


def add_arguments(parser, command: Command) -> None:
    """Add every option of ``command`` to an argparse parser (values are checked later by
    :func:`rdyn.options.validation.validate`, so CLI and API share the checks)."""
    for o in command.options:
        kwargs: dict[str, Any] = {"help": _help(o), "dest": o.name}
        if o.metavar:
            kwargs["metavar"] = o.metavar
        if o.kind == "flag":
            parser.add_argument(o.flag, action="store_true", **kwargs)
            continue
        if o.kind == "int":
            kwargs["type"] = integer_or_range if o.range_ok else integer_argument
        elif o.kind == "float":
            kwargs["type"] = float_or_range if o.range_ok else float
        elif o.kind == "choice":
            kwargs["choices"] = o.choices
        if o.repeatable:
            kwargs["action"] = "append"
        parser.add_argument(o.flag, default=None, required=o.required, **kwargs)


def float_or_range(text: str):
    """argparse type of a "float" option with ``range_ok``: a number, or ``LO:HI`` as the pair (lo, hi)
    (checked by :func:`rdyn.options.coercion.coerce` like the API's pair)."""
    if ":" in text:
        lo, hi = text.split(":", 1)
        return (float(lo), float(hi))
    return float(text)


float_or_range.__name__ = "number or LO:HI"   # argparse: "invalid number or LO:HI value: 'x'"


def integer_or_range(text: str):
    """argparse type of an "int" option with ``range_ok``: an integer, or ``LO:HI`` / ``LO:`` as the pair
    (lo, hi) / (lo, None) (checked by :func:`rdyn.options.coercion.coerce` like the API's pair)."""
    if ":" in text:
        lo, hi = text.split(":", 1)
        return (integer_argument(lo), None if hi.strip() == "" else integer_argument(hi))
    return integer_argument(text)


integer_or_range.__name__ = "integer or LO:HI or LO:"


def given_from_args(command: Command, args) -> dict:
    """The options given on the command line (name -> value; not given -> None/False)."""
    return {o.name: getattr(args, o.name) for o in command.options}
