"""Check every derived identity and every constant the papers print; test Theta-claims.

Each check reports id, source (paper and lemma/equation), claim, status and errors:
  pass         the derivation and an independent computation (or the printed form) agree
  fail         they do not
  discrepancy  the paper's printed form differs from the derivation (both forms in detail)
  info         a measured constant
max_error is relative (null for exact symbolic identities); digits = -log10(max_error).
Independent routes: 1-D mpmath quadrature at 36 digits, Monte Carlo within 5 standard errors,
Monte Carlo of the full-matrix gradient. Exit status 0 when no check has status fail.
Every verdict is a pure function of the check: the same in every process and run order.
On stderr: one summary line (counts per status) and the ids of failing checks.
"""
from __future__ import annotations

import sys

from rdyn.output import UsageError, emit_json

NAME = "verify"
HELP = "check derived identities and printed constants of both papers"


def add_arguments(parser) -> None:
    parser.add_argument("--model", choices=("A", "B", "all"), default="all",
                        help="which paper's checks to run (default all)")
    parser.add_argument("--quick", action="store_true",
                        help="skip the Theta-claim exponent runs and use fewer Monte Carlo samples")
    parser.add_argument("--only", action="append", metavar="PATTERN", default=None,
                        help="run only the checks whose id matches PATTERN (* and ? wildcards, "
                        "all other characters literal); repeatable")


def run(args) -> int:
    from verify.registry import run_checks, select_groups, summary_counts

    if args.only and not select_groups(args.model, args.quick, args.only):
        raise UsageError(f"--only: no check id can match {', '.join(args.only)}")
    checks = run_checks(only=args.only, model=args.model, quick=args.quick, progress=True)
    if args.only and not checks:
        raise UsageError(f"--only: no check id matches {', '.join(args.only)}")
    failed = [c for c in checks if c.status == "fail"]
    if args.json:
        emit_json({"checks": [c.as_dict() for c in checks]}, args.dps)
    else:
        for c in checks:
            err = "" if c.max_error is None else f"  (max rel. error {c.max_error:.2e})"
            print(f"[{c.status:11s}] {c.id}: {c.claim}{err}")
            if c.status == "discrepancy":
                for key in ("printed", "derived"):
                    if key in c.detail:
                        print(f"              {key}: {c.detail[key]}")
    counts = summary_counts(checks)
    print("rdyn verify: " + ", ".join(f"{n} {s}" for s, n in counts.items())
          + f" ({len(checks)} checks)", file=sys.stderr)
    if failed:
        print("rdyn verify: failing: " + " ".join(c.id for c in failed), file=sys.stderr)
    return 1 if failed else 0
