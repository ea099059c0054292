"""The ``rdyn`` console command: a thin shell over the Python API (:mod:`rdyn.api`).

The options of every subcommand are declared once in :mod:`rdyn.options` (parsers and checks
are generated from that table). Each subcommand module ``rdyn/cli/<name>.py`` holds the
command's description (its docstring) and ``run(values, args) -> int`` (``values``: the
command's typed options, :mod:`rdyn.option_types`), which calls the API
and prints. Bad input raises :class:`rdyn.output.UsageError`, reported as one line on stderr
with exit status 2 (never a traceback). ``rdyn.cli.docs`` renders docs/cli.md from
:func:`build_parser` (``python -m rdyn.cli.docs > docs/cli.md``).
"""
from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
import warnings
from typing import NoReturn

from rdyn.derivations.messages import bounded
from rdyn.output import UsageError

SUBCOMMANDS = ("teacher", "crosscheck", "figures", "ln", "verify", "sweep", "scaling", "claims",
               "asymptotics", "prove")


# A value that starts with "-" but is a number ("-1e-3", "-inf", "-nan", "-.5"): argparse's
# own pattern covers "-3" and "-3.5" only, so "--eta -inf" would read "-inf" as an option.
NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*(e[-+]?\d+)?|\.\d+(e[-+]?\d+)?|inf(inity)?|nan)$",
                             re.IGNORECASE)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = NEGATIVE_NUMBER

    def error(self, message: str) -> NoReturn:  # one line, exit 2
        print(bounded(f"{self.prog}: error: {message}"), file=sys.stderr)
        raise SystemExit(2)


def option_values_joined(argv: list[str]) -> list[str]:
    """``argv`` with every value that starts with "-" attached to its option: ``--s0 -1,2``
    becomes ``--s0=-1,2`` (argparse would read "-1,2" as an option and say "expected one
    argument"; ``--activation-expr '-x*tanh(x)'``, ``--kappa -0.5`` alike). Only after an
    option of the subcommand that takes a value (its full name or an abbreviation argparse
    accepts), and only when the next word is not itself one of the subcommand's option names
    (``--eta --steps 10`` still says that --eta expects a value; ``-h``/``--help`` stay help).
    Everything after ``--`` is left alone (docs/input_rules.md, rule 2)."""
    from rdyn.options import COMMANDS

    if not argv or argv[0] not in COMMANDS:
        return list(argv)
    takes_value = {o.flag: o.kind != "flag" for o in COMMANDS[argv[0]].options}
    names = [*takes_value, "--help"]

    def resolved(word: str) -> str | None:   # argparse's rule: an exact name, else a unique prefix
        if word in takes_value:
            return word
        found = [flag for flag in takes_value if word.startswith("--") and flag.startswith(word)]
        return found[0] if len(found) == 1 else None

    def is_option_name(word: str) -> bool:
        if word in ("-h", "--help") or word in takes_value:
            return True
        head = word.split("=", 1)[0]
        return len(head) > 2 and head.startswith("--") and any(n.startswith(head) for n in names)

    out, i = [argv[0]], 1
    while i < len(argv):
        word = argv[i]
        if word == "--":
            out += argv[i:]
            break
        flag = resolved(word)
        if flag is not None and takes_value[flag] and i + 1 < len(argv) and \
                argv[i + 1].startswith("-") and argv[i + 1] != "--" and \
                not is_option_name(argv[i + 1]):
            out.append(f"{word}={argv[i + 1]}")
            i += 2
            continue
        out.append(word)
        i += 1
    return out


def one_line_warnings():
    """``warnings.showwarning`` for a command-line run: a Python warning that reaches the user
    (a numpy RuntimeWarning the computation did not handle itself, a library's
    DeprecationWarning) is one line "rdyn: warning: MESSAGE (CATEGORY in FILE:LINE)", each
    message once, never the two-line form with the source line (docs/input_rules.md,
    "Overflow and divergence": the iterators report a divergence themselves). The warning
    filters are left as they are (``-W error`` still turns a warning into an error)."""
    seen = set()

    def show(message, category, filename, lineno, file=None, line=None):
        text = " ".join(str(message).split())
        if (category, text) in seen:
            return
        seen.add((category, text))
        where = f"{os.path.basename(str(filename))}:{lineno}"
        print(bounded(f"rdyn: warning: {text} ({category.__name__} in {where})"),
              file=sys.stderr if file is None else file)

    return show


def _load(name: str):
    try:
        return importlib.import_module(f"rdyn.cli.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"rdyn.cli.{name}":
            return None
        raise


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``rdyn`` parser; with ``command`` (a known subcommand) only that subcommand's
    module is imported (start-up time)."""
    from rdyn import __version__
    from rdyn.options import COMMANDS, add_arguments

    from rdyn import docs_folder

    # the pages ship with the package (rdyn/docs in a wheel; docs/ in a checkout): the path
    # printed exists wherever rdyn runs
    # (raw text: the path is never wrapped, not even at a hyphen)
    parser = _Parser(prog="rdyn", formatter_class=argparse.RawDescriptionHelpFormatter,
                     description="rdyn: exact, checkable training dynamics of two transformer "
                     "theory papers.\n\nDocumentation, installed with the package:\n"
                     f"  {docs_folder()}\n"
                     "  interface.md: the command-line and JSON contract\n"
                     "  input_rules.md: accepted inputs; api.md: the Python API; cli.md: every "
                     "option")
    parser.add_argument("--version", action="version", version=f"rdyn {__version__}",
                        help="print the version (rdyn.__version__) and exit")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser,
                                metavar="COMMAND")
    for name in SUBCOMMANDS:
        if command in SUBCOMMANDS and name != command:
            continue
        module = _load(name)
        if module is None or name not in COMMANDS:
            continue
        p = sub.add_parser(name, help=COMMANDS[name].help.replace("%", "%%"),
                           description=module.__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        add_arguments(p, COMMANDS[name])
        p.set_defaults(_module=module)
    return parser


#: the BLAS libraries' thread-count variables that :func:`pin_blas_threads` sets to 1
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def pin_blas_threads() -> bool:
    """One BLAS thread for this process, unless the user set the variable or numpy is already loaded
    (then the library has read it): LAPACK's solves (the Radau flows) then give the same float64 digits
    on every core count, and rdyn's small matrices run faster without thread start-up
    (docs/input_rules.md, "Reproducible digits"). Returns whether it could still take effect."""
    if "numpy" in sys.modules:
        return False
    for name in BLAS_THREAD_VARIABLES:
        os.environ.setdefault(name, "1")
    return True


def main(argv: list[str] | None = None) -> int:
    """Run ``rdyn ARGV``; returns the exit status (0 done, 1 a failed check, closed stdout or
    an output that cannot be written anywhere, 2 bad input, 3 a diverged run, 130 SIGINT, 143 SIGTERM: docs/input_rules.md)."""
    from rdyn import signals

    pin_blas_threads()

    previous = signals.current_handlers()
    stop = signals.install()
    argv = sys.argv[1:] if argv is None else argv
    try:
        with warnings.catch_warnings():   # filters unchanged; only how a warning is shown
            warnings.showwarning = one_line_warnings()
            return _main(argv, stop)
    except KeyboardInterrupt:  # before the command started (imports, parsing)
        print("rdyn: interrupted", file=sys.stderr)
        return stop.exit_status() if stop is not None else 130
    finally:
        if stop is not None:
            signals.restore(previous)


def _main(argv: list[str], stop) -> int:
    from rdyn.options import COMMANDS, given_from_args, typed_options, validate

    parser = build_parser(argv[0] if argv else None)
    if not argv:  # bare `rdyn`: the usage and the list of commands
        parser.print_help(sys.stderr)
        return 2
    args = parser.parse_args(option_values_joined(argv))
    try:
        command = COMMANDS[args.command]
        values = typed_options(command, validate(command, given_from_args(command, args)))
        status = int(args._module.run(values, args) or 0)
    except UsageError as exc:
        print(bounded(f"rdyn {args.command}: error: {exc}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"rdyn {args.command}: interrupted", file=sys.stderr)
        status = 130
    except BrokenPipeError:  # stdout closed early (e.g. piped into head): no traceback
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except OSError as exc:   # an output that could not be written even where results are
        # rescued (a full disk everywhere): one line, exit 1; no partial file was left
        where = f" {exc.filename}" if getattr(exc, "filename", None) else ""
        print(f"rdyn {args.command}: error: cannot write{where}: {exc.strerror or exc}",
              file=sys.stderr)
        return 1
    if status == 130 and stop is not None:  # the commands report an interrupt as 130
        status = stop.exit_status()
    return status
