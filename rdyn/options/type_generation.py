"""The generator of rdyn/option_types.py (:func:`write_option_types`): one frozen dataclass
per subcommand (``TeacherOptions``, ...), one field per option named as the option and typed
by its kind in its validated form, so that the drivers read ``v.steps`` and a type checker
names a misspelt option. tests/rdyn/test_option_types.py fails when the file is out of date.
"""
from __future__ import annotations

import os

from rdyn.options.option import Option
from rdyn.options.table import COMMANDS

OPTION_TYPES_MODULE = "option_types.py"   # in the rdyn package, beside rdyn/options/


def option_class_name(command: str) -> str:
    """The typed-options class of a subcommand: "teacher" -> "TeacherOptions"."""
    return command[:1].upper() + command[1:] + "Options"


def _field_type(o: Option) -> str:
    """The annotation of an option's field in its validated form (after :func:`rdyn.options.validation.validate`):
    ``None`` is part of it when the option may be left out (no default, not required)."""
    if o.kind == "flag":
        types = ["bool"]
    elif o.kind == "choice":
        types = ["Literal[" + ", ".join(repr(c) for c in o.choices) + "]"]
    elif o.kind in ("path", "out"):
        types = ["str", "os.PathLike[str]"]
    elif o.repeatable:
        types = ["list[str]"]
    else:
        types = [{"int": "int", "float": "float", "str": "str"}[o.kind]]
    if o.range_ok:
        types.append("tuple[int, int | None]" if o.kind == "int" else "tuple[float, float]")
    extra = {list: "list[Any]", tuple: "tuple[Any, ...]", range: "range"}
    types += [extra[t] for t in o.api_types if extra[t] not in types]
    if o.default is None and not o.required:   # a required option is never None once validated
        types.append("None")
    return " | ".join(types)


def option_types_source() -> str:
    """The source of rdyn/option_types.py: one frozen dataclass per subcommand, one field per
    option (named as the option, typed by its kind; ``None`` where "not given" is possible),
    so that the drivers read ``v.steps`` and a type checker names a misspelt option."""
    lines = ['"""Typed options: one frozen dataclass per subcommand, built by the shared validation',
             "(:func:`rdyn.options.typed_options`) and passed from the API to the drivers.",
             "",
             "Generated from the option table :data:`rdyn.options.COMMANDS` by",
             "``python -c 'from rdyn.options import write_option_types; write_option_types()'``;",
             'do not edit (tests/rdyn/test_option_types.py fails when this file is out of date)."""',
             "from __future__ import annotations", "", "import os", "from dataclasses import dataclass",
             "from typing import Any, Literal, Union", "", ""]
    names = []
    for name, cmd in COMMANDS.items():
        cls = option_class_name(name)
        names.append(cls)
        lines += ["@dataclass(frozen=True)", f"class {cls}:",
                  f'    """The validated options of ``rdyn {name}`` (every option, defaults filled in)."""',
                  ""]
        for o in cmd.options:
            lines.append(f"    {o.name}: {_field_type(o)}")
        lines += ["", ""]
    lines.append("AnyOptions = Union[" + ", ".join(names) + "]")
    lines += ["", "CLASSES: dict[str, type] = {"]
    lines += [f"    {name!r}: {option_class_name(name)}," for name in COMMANDS]
    lines += ["}", ""]
    return "\n".join(lines)


def write_option_types(path: str | None = None) -> str:
    """(Re)write rdyn/option_types.py from the table (a temporary sibling, then renamed);
    returns the path."""
    from rdyn.reduced_dynamics.runs.atomic_files import write_text_atomic

    rdyn_folder = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = path or os.path.join(rdyn_folder, OPTION_TYPES_MODULE)
    write_text_atomic(path, option_types_source())   # the one helper of every writer
    return path
