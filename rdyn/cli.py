"""The ``rdyn`` console command: one subcommand module per job.

Each subcommand module exposes ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int``. Bad input raises :class:`rdyn.output.UsageError`, reported as one
line on stderr with exit status 2 (never a traceback).
"""
from __future__ import annotations

import argparse
import importlib
import sys

from rdyn.output import UsageError

SUBCOMMANDS = ("teacher", "crosscheck", "figures", "ln", "verify", "sweep", "scaling",
               "asymptotics")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _load(name: str):
    try:
        return importlib.import_module(f"rdyn.cmd_{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"rdyn.cmd_{name}":
            return None
        raise


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="rdyn", description="rdyn: exact, checkable training dynamics of two "
                     "transformer theory papers (see README.md).")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in SUBCOMMANDS:
        module = _load(name)
        if module is None:
            continue
        p = sub.add_parser(name, help=module.HELP, description=module.__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        p.add_argument("--json", action="store_true",
                       help="print exactly one JSON object on stdout (logs go to stderr)")
        p.add_argument("--dps", type=int, default=None,
                       help="working precision in decimal digits (default: float64)")
        module.add_arguments(p)
        p.set_defaults(_module=module)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.dps is not None and args.dps < 5:
            raise UsageError("--dps must be at least 5")
        return int(args._module.run(args) or 0)
    except UsageError as exc:
        print(f"rdyn {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"rdyn {args.command}: interrupted", file=sys.stderr)
        return 130
