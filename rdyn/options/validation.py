"""The shared validation: :func:`validate` checks the options given to a subcommand (on the
command line or as API keywords) against the table and returns every option's value, so that
``rdyn CMD --opt`` and ``rdyn.CMD(opt=...)`` accept and refuse exactly the same values with the
same one-line :class:`~rdyn.output.UsageError`, before any work. In order:

1. names: an unknown option is refused (``api=True``: also the CLI-only ``json``);
2. each given option: its type and range (:func:`rdyn.options.coercion.coerce`), then its
   ``check_value`` (:mod:`rdyn.options.value_checks`); a missing required option is refused;
3. applicability: a given option whose ``applies`` predicate is false for the other values is
   refused (``--kappa`` without ``--activation leaky``), as is one that conflicts with an
   explicitly given other option (``exclusive_with``);
4. optional dependencies (``needs=(module, extra)``): importable, else an install hint;
5. paths (:mod:`rdyn.options.paths`): outputs writable, inputs existing files, no two
   outputs on one file and no output on an input;
6. the command's cross-option check (:attr:`Command.check <rdyn.options.option.Command.check>`,
   on the typed options): the checks that involve several options of one model (K < D,
   ``--record`` against ``--steps``, ...), e.g. :mod:`rdyn.options.model_a_checks` of
   ``teacher`` and ``crosscheck``.

The commands without a ``check`` run theirs (a spectrum of length d, ...) and the memory
estimates (:mod:`rdyn.options.memory`) in their API module. :func:`typed_options` turns the
validated values into the command's frozen dataclass of :mod:`rdyn.option_types`.
"""
from __future__ import annotations

import importlib.util
import os

from rdyn.derivations.atomic_files import output_target
from rdyn.options.coercion import coerce
from rdyn.options.engine_errors import error_text
from rdyn.options.option import Command
from rdyn.options.paths import check_distinct_outputs, check_input_file, check_output_path
from rdyn.options.table import COMMANDS
from rdyn.output import UsageError


def check_dependency(flag: str, module: str, extra: str) -> None:
    """Refuse (UsageError) an option whose optional dependency ``module`` cannot be imported,
    naming the extra that installs it."""
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise UsageError(f"{flag} needs the optional dependency '{module}': "
                         f"install rdyn-theory[{extra}] (pip install 'rdyn-theory[{extra}]')")


def validate(command: str | Command, given: dict, *, api: bool = False) -> dict:
    """Check the options ``given`` (name -> value; None/False = not given) of ``command``
    against the table and return every option's value (defaults filled in). Raises
    :class:`~rdyn.output.UsageError` with a one-line message naming the option. With
    ``api=True`` an unknown keyword is refused as well."""
    cmd = COMMANDS[command] if isinstance(command, str) else command
    names = {o.name for o in cmd.options if not (api and o.cli_only)}
    unknown = [k for k in given if k not in names]
    if unknown:
        raise UsageError(f"unknown option {unknown[0]!r} for rdyn {cmd.name} (options: "
                         f"{', '.join(o.name for o in cmd.options if not o.cli_only)})")
    values = {}
    for o in cmd.options:
        value = given.get(o.name)
        if value is None or (o.kind == "flag" and value is False):
            if o.required:
                raise UsageError(f"{o.flag} is required")
            values[o.name] = o.default
            continue
        values[o.name] = coerce(o, value)
        if o.check_value is not None:
            try:
                o.check_value(values[o.name])
            except ValueError as exc:   # a library refusal names its field; the user sees the option
                raise UsageError(error_text(exc)) from None
    for o in cmd.options:
        value = given.get(o.name)
        if value is None or value is False or o.applies is None:
            continue
        if not o.applies(values):
            raise UsageError((o.refusal_for(values) if o.refusal_for is not None else None)
                             or o.refusal or f"{o.flag} applies only {o.applies_text}")
        if o.exclusive_with is not None:
            other, allowed = o.exclusive_with
            if given.get(other) is not None and values[other] not in allowed:
                other_flag = "--" + other.replace("_", "-")
                raise UsageError(o.refusal or f"{o.flag} conflicts with {other_flag} "
                                 f"{values[other]}")
    for o in cmd.options:
        if o.needs is not None and given.get(o.name) is not None:
            check_dependency(o.flag, *o.needs)
    for o in cmd.options:
        if o.output is not None and values[o.name] is not None:
            check_output_path(o.flag, values[o.name], o.output)
            for suffix in o.siblings:   # e.g. a checkpoint's FILE.tmp, beside the link's target
                check_output_path(o.flag, output_target(values[o.name]) + suffix, o.output)
        if o.kind == "path" and isinstance(values[o.name], (str, os.PathLike)):
            check_input_file(o.flag, values[o.name])
    check_distinct_outputs(cmd, values)
    if cmd.check is not None:
        values.update(cmd.check(typed_options(cmd, values)) or {})   # values read from files, once
    return values


def typed_options(command: str | Command, values: dict):
    """The validated ``values`` of ``command`` (from :func:`validate`) as the command's frozen
    dataclass of :mod:`rdyn.option_types` (attribute access: ``v.steps``)."""
    from rdyn.option_types import CLASSES

    cmd = COMMANDS[command] if isinstance(command, str) else command
    return CLASSES[cmd.name](**values)
