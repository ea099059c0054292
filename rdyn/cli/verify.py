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
--only PATTERN (repeatable) runs just the matching check ids. On stderr: one summary line
(counts per status) and the ids of failing checks.
"""
from __future__ import annotations

import sys

from rdyn.option_types import VerifyOptions

NAME = "verify"


def run(values: VerifyOptions, args) -> int:
    from rdyn.api._verify import run as api_run
    from rdyn.verification.checks.registry import summary_counts

    res = api_run(values, progress=True)
    checks = res.detail["checks"]
    failed = [c for c in checks if c.status == "fail"]
    if values.json:
        print(res.to_json())
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
