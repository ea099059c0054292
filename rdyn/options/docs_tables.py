"""The option tables of docs/input_rules.md (:func:`markdown`): per subcommand, one row per
option with its kind, default, accepted values (range, choices, path rule) and when it is
refused (applicability, missing dependency, required).
"""
from __future__ import annotations

from rdyn.options.option import _num, never
from rdyn.options.table import COMMANDS


def markdown() -> str:
    """The option tables of docs/input_rules.md (regenerate with
    ``python -c "from rdyn.options import markdown; print(markdown())"``)."""
    lines = []
    for name, cmd in COMMANDS.items():
        lines += [f"### rdyn {name}", "", "| option | kind | default | accepted values | "
                  "refused when |", "| --- | --- | --- | --- | --- |"]
        for o in cmd.options:
            if o.cli_only:
                continue
            if o.applies is never:   # always refused (e.g. --dps of a float64-only command)
                accepted = "none (always refused)"
            elif o.kind in ("int", "float"):
                accepted = o.range_text()
                if o.kind == "float":
                    accepted = f"{accepted}, finite" if accepted else "finite"
                accepted = accepted or "any integer"
                if o.range_ok and o.kind == "int":
                    accepted += "; or a range LO:HI, LO <= HI (every value in [LO, HI]), or LO: (every value from LO)"
                elif o.range_ok:
                    accepted += f"; or a range LO:HI, {_num(o.lo)} <= LO < HI (every value in (LO, HI])"
            elif o.choices:
                accepted = ", ".join(o.choices)
            elif o.kind == "out":
                accepted = ("file; its folder exists and is writable" if o.output == "file"
                            else "folder (created); nearest existing parent writable")
            elif o.kind == "path":
                accepted = "an existing file"
            elif o.kind == "flag":
                accepted = "flag"
            else:
                accepted = "see --help"
            refused = ""
            if o.applies is not None:
                refused = (o.refusal or f"{o.flag} applies only {o.applies_text}").replace("|", "/")
            if o.needs is not None:
                refused = f"the optional dependency is missing (install rdyn-theory[{o.needs[1]}])"
            if o.required:
                refused = "missing (required)"
            default = "" if o.default in (None, False) else f"`{o.default}`"
            lines.append(f"| `{o.flag}` | {o.kind} | {default} | {accepted} | {refused} |")
        lines.append("")
    return "\n".join(lines)
