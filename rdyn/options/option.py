"""What an option declares: :class:`Option` (one option of one subcommand: its kind, default,
range, choices, when it applies and how it is refused) and :class:`Command` (a subcommand: its
name, one-line help and options in the order of ``--help``).

Every other module of :mod:`rdyn.options` reads these records: the table fills them in
(:mod:`rdyn.options.table`), the checks, the parsers, the documentation tables and the typed
options are derived from them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass(frozen=True)
class Option:
    """One option of one subcommand.

    ``name`` is the Python keyword (``vstar_norm2``); the CLI flag is ``--`` + name with
    ``_`` -> ``-`` (``--vstar-norm2``). ``kind``: "int", "float", "str", "choice", "flag"
    (store_true), "path" (an input file), "out" (an output path; ``output`` says "file" or
    "dir"). ``default`` is the value when the option is not given (``None`` = "not given",
    the effective default is stated in ``help``). ``applies(values) -> bool`` (values: every
    option of the command, given or default) says whether the option makes sense; ``applies_text``
    completes the refusal "--X applies only <applies_text>" (or ``refusal`` replaces it).
    """

    name: str
    kind: str
    default: Any = None
    help: str = ""
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    choices: tuple = ()
    output: str | None = None
    applies: Callable[[dict], bool] | None = None
    applies_text: str = ""
    refusal: str | None = None
    # the refusal when it depends on the other values (e.g. which of two conditions failed); None: ``refusal``
    refusal_for: Callable[[dict], str | None] | None = None   # None from it: ``refusal``
    needs: tuple[str, str] | None = None
    required: bool = False
    metavar: str | None = None
    cli_only: bool = False
    api_types: tuple = ()  # extra Python types the API accepts (e.g. a tuple for --spectrum)
    repeatable: bool = False  # "str" options only: given several times, the value is a list
    siblings: tuple[str, ...] = ()  # "out" files: suffixes of files written next to it (FILE.tmp)
    # a check of the value alone beyond type and range (raises ValueError with a one-line
    # message, e.g. a formula that does not parse); run after coercion, before any work
    check_value: Callable[[Any], None] | None = None
    # (name, values): refused when the option ``name`` is also *given* (CLI or API, not its
    # default) with a value outside ``values`` (e.g. --activation-expr with an explicit
    # --activation relu: the default relu is no conflict, an explicit one is)
    exclusive_with: tuple | None = None
    # "float" options: also a range ``LO:HI`` (the API: a ``(lo, hi)`` pair or that text), meaning every
    # value in (LO, HI]; LO may be the option's open lower bound itself (``--eta 0:0.01``). "int" options:
    # ``LO:HI`` (every integer in [LO, HI]) or ``LO:`` (every integer from LO; the API: ``(lo, None)``)
    range_ok: bool = False

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def range_text(self) -> str:
        """The documented range, e.g. "> 0", "in [0, 1)", "in 0..1000000000"."""
        lo, hi = self.lo, self.hi
        if self.kind == "int":
            lo = None if lo is None else (int(lo) + 1 if self.lo_open else int(lo))
            hi = None if hi is None else (int(hi) - 1 if self.hi_open else int(hi))
            if lo is not None and hi is not None:
                return f"in {lo}..{hi}"
            if lo is not None:
                return f">= {lo}"
            return f"<= {hi}" if hi is not None else ""
        if lo is not None and hi is not None:
            return f"in {'(' if self.lo_open else '['}{_num(lo)}, {_num(hi)}{')' if self.hi_open else ']'}"
        if lo is not None:
            return f"{'>' if self.lo_open else '>='} {_num(lo)}"
        if hi is not None:
            return f"{'<' if self.hi_open else '<='} {_num(hi)}"
        return ""


def _num(x) -> str:
    """A bound in a range text: integer-valued bounds below 1e16 without a decimal point."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e16 else repr(x)


@dataclass(frozen=True)
class Command:
    """A subcommand: ``name`` (``rdyn NAME``, ``rdyn.NAME``), ``help`` (its one line in ``rdyn
    --help``) and ``options`` (in the order of ``rdyn NAME --help`` and of the API keywords).
    ``check(v)``: the command's cross-option check (several options of one model: K < D, ...),
    called by :func:`~rdyn.options.validation.validate` after every other check with the
    command's typed options ``v`` (:mod:`rdyn.option_types`); it raises a one-line UsageError
    and may return values it read from files (e.g. ``{"groups": [[...], ...]}`` for a ``--groups``
    path), which replace the given ones so that no file is read twice."""

    name: str
    help: str
    options: tuple[Option, ...]
    check: Callable[[Any], dict | None] | None = field(default=None)

    def option(self, name: str) -> Option:
        for o in self.options:
            if o.name == name:
                return o
        raise KeyError(name)


def never(_values) -> bool:
    """The ``applies`` of an option that is refused whatever the other values (``--dps`` of a
    float64-only command): its refusal is its only documentation."""
    return False
