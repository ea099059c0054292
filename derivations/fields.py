"""A library's refusal of one input, naming the request field it came from: the derivations and
the engines raise :class:`FieldError` worded with field names (``K``, ``activation_expr``); the API
(``rdyn.options.engine_errors.usage_errors``) shows it with option names (``--K``,
``--activation-expr``). This module imports nothing and sits in the lowest layer, so every module
can raise it (:mod:`rdyn.reduced_dynamics.model_a.request` re-exports it)."""
from __future__ import annotations

from typing import Callable


class FieldError(ValueError):
    """An engine's refusal of one input, naming its request field.

    ``template`` words the refusal with placeholders ``{name}`` for the fields it mentions
    (``field`` first, then ``others``): ``str(exc)`` fills them with the field names themselves
    ("K cannot change it"), :meth:`message` with the names a caller maps them to (the API:
    "--K cannot change it"). Text around the placeholders is inserted verbatim (no format
    specifiers are read)."""

    def __init__(self, field: str, template: str, *others: str):
        self.field = field
        self.fields = (field, *others)
        self.template = template
        super().__init__(self.message())

    def message(self, name: Callable[[str], str] | None = None) -> str:
        """The refusal with every field placeholder replaced by ``name(field)`` (default: the
        field's own name)."""
        text = self.template
        for f in self.fields:
            text = text.replace("{" + f + "}", f if name is None else name(f))
        return text

    def prefixed(self, prefix: str, *fields: str) -> "FieldError":
        """The same refusal behind ``prefix`` (e.g. the grid point it came from), which may name
        further ``fields`` by placeholder."""
        return FieldError(self.field, prefix + self.template, *self.fields[1:], *fields)
