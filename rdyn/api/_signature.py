"""Real signatures and numpy-style docstrings for the API functions, generated from the option
table (:data:`rdyn.options.COMMANDS`), the one place the options are declared.

``@api_function("teacher")`` on ``def teacher(**kwargs)`` gives the function an
``inspect.signature`` with one keyword-only parameter per option (default and annotation from
the table), so ``help()``, Jupyter and IDEs show the options; the docstring gains a
``Parameters`` section (each option with its meaning, units and accepted range, as in
``rdyn CMD --help``) and a ``Raises`` section. The function itself still receives ``**kwargs``:
the shared validation (:func:`rdyn.options.validate`) fills the defaults and refuses an unknown
keyword with a :class:`ValueError` naming it (a Python keyword-only ``def`` would raise
``TypeError`` instead, and could not say which options exist).
"""
from __future__ import annotations

import functools
import inspect
import operator
import os
import textwrap
import typing
from typing import Any, Callable

from rdyn.options import COMMANDS, Command, Option, help_text

_PLAIN = {"flag": bool, "int": int, "float": float, "str": str}
_PATH = (str, os.PathLike)


def annotation(option: Option) -> Any:
    """The type a caller may pass for ``option`` (``None`` included when it is the default)."""
    if option.kind == "choice":
        types: list[Any] = [typing.Literal[option.choices]]
    elif option.kind in ("path", "out"):
        types = list(_PATH)
    elif option.repeatable:
        types = [str, list[str]]
    else:
        types = [_PLAIN[option.kind]]
    types += [t for t in option.api_types if t not in types]
    if option.default is None:
        types.append(None)
    return functools.reduce(operator.or_, types)


def _type_text(option: Option) -> str:
    """The numpy-docstring type, e.g. ``int, optional``, ``{'relu', 'leaky'}, default 'relu'``."""
    if option.kind == "choice":
        text = "{" + ", ".join(repr(c) for c in option.choices) + "}"
    elif option.kind in ("path", "out"):
        text = "str or os.PathLike"
    elif option.repeatable:
        text = "str or list of str"
    else:
        text = _PLAIN[option.kind].__name__
    for t in option.api_types:
        name = getattr(t, "__name__", str(t))
        if name not in text:
            text += f" or {name}"
    if option.default is None:
        return f"{text}, optional"
    return f"{text}, default {option.default!r}"


def api_options(command: Command) -> tuple[Option, ...]:
    """The options the API takes (``--json`` is the CLI's only)."""
    return tuple(o for o in command.options if not o.cli_only)


def signature(command: Command) -> inspect.Signature:
    """Keyword-only parameters named as the options, defaults and annotations from the table;
    the return annotation is :class:`rdyn.result.Result`."""
    params = [inspect.Parameter(o.name, inspect.Parameter.KEYWORD_ONLY, default=o.default,
                                annotation=annotation(o)) for o in api_options(command)]
    from rdyn.result import Result

    return inspect.Signature(params, return_annotation=Result)


def parameters_section(command: Command, width: int = 88) -> str:
    """The numpy-style ``Parameters`` section: one entry per option, its help text (meaning,
    units, default) and accepted range, and the CLI flag it mirrors."""
    lines = ["Parameters", "----------"]
    for o in api_options(command):
        lines.append(f"{o.name} : {_type_text(o)}")
        body = f"{help_text(o)} (CLI: ``{o.flag}``)"
        lines += textwrap.wrap(" ".join(body.split()), width - 4, initial_indent="    ",
                               subsequent_indent="    ", break_on_hyphens=False)
    return "\n".join(lines)


RAISES = """Raises
------
ValueError
    Bad input, before any work: the CLI's one-line message naming the option (an unknown
    keyword is named with the list of options)."""


def docstring(command: Command, hand_written: str | None) -> str:
    """``hand_written`` (summary, then optionally a ``Returns`` section) with the generated
    ``Parameters`` section after the summary and ``Raises`` at the end."""
    text = inspect.cleandoc(hand_written or "")
    head, sep, returns = text.partition("\nReturns\n-------\n")
    parts = [head.rstrip(), parameters_section(command)]
    if sep:
        parts.append("Returns\n-------\n" + returns.rstrip())
    parts.append(RAISES)
    return "\n\n".join(parts) + "\n"


def api_function(command: str) -> Callable[[Callable], Callable]:
    """Decorator: the API function of ``rdyn <command>`` gets its generated signature and
    docstring (see the module docstring)."""
    def decorate(function: Callable) -> Callable:
        cmd = COMMANDS[command]
        function.__signature__ = signature(cmd)  # type: ignore[attr-defined]
        function.__doc__ = docstring(cmd, function.__doc__)
        return function
    return decorate
