"""Values quoted in one-line messages stay short (docs/input_rules.md, "Long values").

A refusal names the option and the value it got, a resume mismatch both values (the
checkpoint's and the one given now); a value can be a grid of a million configurations or a
50,000-character string. :func:`summarised` is the one place where such a value becomes text
for a message: at most about :data:`VALUE_LIMIT` characters, a long list ending in
``..., ...] (N values)``, a long string in ``... (N characters)``. :func:`bounded` shortens a
whole message line that is still too long (keeping its start and its end), the last guard
before a line is printed. This module is in the lowest layer and imports nothing of rdyn, so
:mod:`rdyn.options` (``shown``), :mod:`rdyn.reduced_dynamics.runs.checkpoint` and the command
line all use it.
"""
from __future__ import annotations

import json
from typing import Any, Callable

VALUE_LIMIT = 200   # characters of one quoted value
LINE_LIMIT = 400    # characters of one message line (bounded): the longest advice is about 350


def _one_line(text: str) -> str:
    return " ".join(text.split())


def summarised(value: Any, render: Callable[[Any], str] = repr, limit: int = VALUE_LIMIT) -> str:
    """``value`` as one line of at most about ``limit`` characters, rendered by ``render``
    (``repr``; ``json.dumps`` for a checkpoint's stored values). A list, tuple or dict that is
    longer shows the first items that fit and its size ("[1, 2, 3, ...] (100000 values)",
    "[...] (600 values)" when not even one fits); a string its start and its length; anything
    else its start."""
    text = _one_line(render(value))
    if len(text) <= limit:
        return text
    if isinstance(value, (list, tuple, dict)):
        if isinstance(value, dict):
            opening, closing, suffix = "{", "}", f" ({len(value)} keys)"
            items = [(f"{_one_line(render(k))}: ", v) for k, v in value.items()]
        else:
            tuple_form = isinstance(value, tuple) and render is not json.dumps
            opening, closing = ("(", ")") if tuple_form else ("[", "]")
            suffix = f" ({len(value)} values)"
            items = [("", v) for v in value]
        budget = limit - len(opening) - len(closing) - len(suffix) - len(", ...")
        shown: list[str] = []
        for label, item in items:
            used = sum(len(p) + 2 for p in shown)
            room = budget - used - len(label)
            if room < 1:
                break
            part = label + summarised(item, render, min(max(budget // 2, 1), room))
            if len(part) > budget - used:
                break
            shown.append(part)
        if not shown:
            return f"{opening}...{closing}{suffix}"
        more = ", ..." if len(shown) < len(items) else ""
        return f"{opening}{', '.join(shown)}{more}{closing}{suffix}"
    if isinstance(value, str):
        size = f"{len(value)} characters"
        if "," in value:
            size = f"{value.count(',') + 1} comma-separated values, {size}"
        return f"{text[:max(limit - len(size) - 6, 1)]}... ({size})"
    return f"{text[:max(limit - 3, 1)]}..."


def bounded(line: str, limit: int = LINE_LIMIT) -> str:
    """One message line of at most ``limit`` characters: a longer one keeps its first two
    thirds and its end, with the number of characters left out in between."""
    line = _one_line(line)
    if len(line) <= limit:
        return line
    tail = limit // 4
    head = limit - tail - 40
    return f"{line[:head]} ... ({len(line) - head - tail} characters left out) ... {line[-tail:]}"


def error_kind(exc: BaseException) -> str:
    """The name an error row shows for ``exc``: for rdyn's own exception classes the nearest
    built-in one (``ValueError`` for ``FieldError``, a ValueError that names a field), so a row
    reads the same whichever layer refused the value; any other class its own name
    (``KilledWorker``)."""
    if not type(exc).__module__.startswith("rdyn."):
        return type(exc).__name__
    for cls in type(exc).__mro__:
        if cls.__module__ == "builtins":
            return cls.__name__
    return type(exc).__name__
