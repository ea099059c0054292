"""The claims ledger: every numbered or displayed quantitative statement of both papers with a
verdict from the rdyn verify checks that decide it (verify/claims/ledger.py holds the ledger).

Verdicts:
  pass           every deciding check passes
  discrepancy    the printed statement is contradicted by derivation or measurement
                 (both forms or figures are in the evidence)
  fail           rdyn's own machinery disagrees with itself
  inconclusive   a rate known only from a finite-size fit that the one decision rule
                 (docs/claims.md) can neither confirm nor exclude; the reason says what
                 would decide it
  info           a measured constant with no printed value
  not_checkable  with a reason
Every discrepancy has a kind and its root causes (one per distinct error), and a correction
(a derived, checked corrected statement) where one has been derived; the summary counts
distinct root causes. The checks run once per invocation, whatever is written: the
options --json --errata FILE --report FILE together give all three outputs from one run.
Sizes are those of rdyn verify --quick unless --full (quick: about 2 minutes of CPU for
both papers; --paper B about 30 s).
Exit status 0 when no verdict is fail.
"""
from __future__ import annotations

import sys

from rdyn.option_types import ClaimsOptions

NAME = "claims"


def run(values: ClaimsOptions, args) -> int:
    from rdyn.api._claims import run as api_run

    res = api_run(values, progress=True)
    ledger = res.detail["ledger"]
    print(f"rdyn claims: checks ran in {ledger.seconds:.0f} s", file=sys.stderr)
    if values.json:
        print(res.to_json())
    else:
        for c in ledger.claims:
            line = f"[{c.verdict:13s}|{c.strength()[0] or 'none':9s}] {c.entry.paper} {c.entry.label}: {c.entry.statement}"
            print(line if len(line) <= 160 else line[:157] + "...")
            if c.reason:
                reason = c.reason if len(c.reason) <= 400 else c.reason[:397] + "..."
                print(f"{'':16s}{reason}")
            if c.verdict == "discrepancy":
                fix = c.correction
                tail = (f"correction ({fix['verdict']}, {fix.get('strength')}): {fix['statement']}" if fix is not None
                        else "no derived correction yet")
                causes = ", ".join(c.root_causes or [c.root_cause])
                print(f"{'':16s}[{c.kind}; root causes {causes}] {tail}"[:400])
    summary = ledger.summary()
    for paper, row in sorted(ledger.counts().items()):
        s = summary[paper]
        print(f"rdyn claims: {paper}: " + ", ".join(f"{n} {v}" for v, n in row.items())
              + "; strength " + ", ".join(f"{n} {k}" for k, n in (s.get("strengths") or {}).items())
              + f"; {s['discrepancies']} discrepancies from {s['root_causes']} root causes "
              f"({s.get('paper_errors', 0)} errors of the paper, {s.get('extraction_losses', 0)} suspected extraction "
              f"losses), {s['corrected']} with a passing correction", file=sys.stderr)
    return 1 if ledger.failed else 0
