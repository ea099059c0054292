"""JSON Schemas (Draft 2020-12) of the ``--json`` outputs (docs/interface.md).

One file per subcommand, ``rdyn/schemas/<subcommand>.schema.json``, shipped inside the
package (docs/schemas.md)::

    import rdyn
    rdyn.schema("teacher")                     # the schema as a dict
    rdyn.schemas.names()                       # ('asymptotics', 'crosscheck', ...)
    rdyn.schemas.validate("teacher", obj)      # needs the jsonschema package

A real is a JSON number (float64), a string of N significant digits (``--dps N``) or null (a
non-finite value); integers are numbers. The top level of every object admits further keys
(outputs grow by adding keys); the state objects fixed by docs/interface.md (``final``, ``record``
entries, ...) admit no others.
"""
from __future__ import annotations

import json
from importlib import resources
from typing import Any

SUFFIX = ".schema.json"


def _folder():
    return resources.files(__name__)


def names() -> tuple[str, ...]:
    """The subcommands that have a schema file, sorted."""
    return tuple(sorted(p.name[:-len(SUFFIX)] for p in _folder().iterdir()
                        if p.name.endswith(SUFFIX)))


def schema(name: str) -> dict[str, Any]:
    """The JSON Schema of ``rdyn NAME --json`` (a fresh dict); ValueError for an unknown name."""
    if name not in names():
        raise ValueError(f"no JSON schema for {name!r} (schemas: {', '.join(names())})")
    return json.loads(_folder().joinpath(name + SUFFIX).read_text(encoding="utf-8"))


def validate(name: str, instance: Any) -> None:
    """Validate ``instance`` (a parsed ``--json`` object, or ``Result.to_dict()``) against the
    schema of ``name``; raises ``jsonschema.ValidationError`` (the jsonschema package, in
    rdyn's ``test`` extra, is needed for this function only)."""
    import jsonschema

    jsonschema.Draft202012Validator(schema(name)).validate(instance)
