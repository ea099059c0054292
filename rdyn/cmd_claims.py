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
(quick: about 2 minutes of CPU for both papers; --paper B about 40 s).
Exit status 0 when no verdict is fail.
"""
from __future__ import annotations

import sys

NAME = "claims"


def run(values: dict, args) -> int:
    from rdyn.api._claims import run as api_run

    res = api_run(values, progress=True)
    ledger = res.detail["ledger"]
    print(f"rdyn claims: checks ran in {ledger.seconds:.0f} s", file=sys.stderr)
    if values["json"]:
        print(res.to_json())
    else:
        for c in ledger.claims:
            line = f"[{c.verdict:13s}] {c.entry.paper} {c.entry.label}: {c.entry.statement}"
            print(line if len(line) <= 160 else line[:157] + "...")
            if c.reason:
                print(f"{'':16s}{c.reason}")
    for paper, row in sorted(ledger.counts().items()):
        print(f"rdyn claims: {paper}: " + ", ".join(f"{n} {v}" for v, n in row.items()),
              file=sys.stderr)
    return 1 if ledger.failed else 0
