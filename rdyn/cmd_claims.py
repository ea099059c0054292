"""The claims ledger: every numbered or displayed quantitative statement of both papers with a
verdict from the rdyn verify checks that decide it (verify/claims.py holds the ledger).

Verdicts:
  pass           every deciding check passes
  discrepancy    the printed statement is contradicted by derivation or measurement
                 (both forms or figures are in the evidence)
  fail           rdyn's own machinery disagrees with itself
  info           a measured constant with no printed value
  not_checkable  with a reason
The checks run once per invocation, at the quick sizes of rdyn verify --quick unless --full
(quick: about 6 minutes on a loaded 2-core machine, --paper B about 1.5 minutes).
Exit status 0 when no verdict is fail.
"""
from __future__ import annotations

import os
import sys

from rdyn.output import UsageError, emit_json

NAME = "claims"
HELP = "the papers' statements, each with a verdict from the checks that decide it"


def add_arguments(parser) -> None:
    parser.add_argument("--paper", choices=("A", "B"), default=None, help="one paper only (default both)")
    parser.add_argument("--report", metavar="FILE", default=None,
                        help="also write a readable ledger: FILE.md (Markdown) or FILE.html (self-contained)")
    parser.add_argument("--full", action="store_true",
                        help="run the checks at full sizes (slower) instead of the quick sizes")


def run(args) -> int:
    if args.dps is not None:
        raise UsageError("--dps does not apply to rdyn claims")
    if args.report is not None:
        if not args.report.lower().endswith((".md", ".html", ".htm")):
            raise UsageError(f"--report must end in .md or .html, got {args.report!r}")
        folder = os.path.dirname(os.path.abspath(args.report))
        if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            raise UsageError(f"--report folder {folder!r} is missing or not writable")
    from verify import claims

    ledger = claims.evaluate(paper=args.paper or "all", quick=not args.full, progress=True)
    if args.report is not None:
        from verify import claims_report

        claims_report.write(ledger, args.report)
        print(f"rdyn claims: wrote {args.report}", file=sys.stderr)
    print(f"rdyn claims: checks ran in {ledger.seconds:.0f} s", file=sys.stderr)
    if args.json:
        emit_json(ledger.to_dict())
    else:
        for c in ledger.claims:
            line = f"[{c.verdict:13s}] {c.entry.paper} {c.entry.label}: {c.entry.statement}"
            print(line if len(line) <= 160 else line[:157] + "...")
            if c.reason:
                print(f"{'':16s}{c.reason}")
        for paper, row in sorted(ledger.counts().items()):
            print(f"summary {paper}: " + ", ".join(f"{n} {v}" for v, n in row.items()))
    return 1 if ledger.failed else 0
