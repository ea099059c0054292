"""Check every derived identity and every constant the papers print; test Theta-claims.

Each check reports id, source (paper and lemma/equation), claim, status and errors:
  pass         the derivation and an independent computation (or the printed form) agree
  fail         they do not
  discrepancy  the paper's printed form differs from the derivation (both forms in detail)
  info         a measured constant
max_error is relative (null for exact symbolic identities); digits = -log10(max_error).
Independent routes: 1-D mpmath quadrature at 36 digits, Monte Carlo within 5 standard errors,
Monte Carlo of the full-matrix gradient. Exit status 0 when no check has status fail.
"""
from __future__ import annotations

NAME = "verify"


def run(values: dict, args) -> int:
    from rdyn.api._verify import run as api_run

    res = api_run(values)
    checks = res.detail["checks"]
    failed = [c for c in checks if c.status == "fail"]
    if values["json"]:
        print(res.to_json())
    else:
        for c in checks:
            err = "" if c.max_error is None else f"  (max rel. error {c.max_error:.2e})"
            print(f"[{c.status:11s}] {c.id}: {c.claim}{err}")
            if c.status == "discrepancy":
                for key in ("printed", "derived"):
                    if key in c.detail:
                        print(f"              {key}: {c.detail[key]}")
        counts = {s: sum(c.status == s for c in checks) for s in ("pass", "fail", "discrepancy", "info")}
        print("summary: " + ", ".join(f"{n} {s}" for s, n in counts.items()))
    return 1 if failed else 0
