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

import importlib
import sys

from rdyn.output import emit_json

NAME = "verify"
HELP = "check derived identities and printed constants of both papers"
MODULES = ("verify.checks_model_a", "verify.checks_model_b", "verify.checks_scaling")


def add_arguments(parser) -> None:
    parser.add_argument("--model", choices=("A", "B", "all"), default="all",
                        help="which paper's checks to run (default all)")
    parser.add_argument("--quick", action="store_true",
                        help="skip the Theta-claim exponent runs and use fewer Monte Carlo samples")


def collect(model: str = "all", quick: bool = False) -> list:
    """Checks of every module in MODULES for ``model``: the per-paper modules
    (``checks_model_a``, ``checks_model_b``) run when their paper is selected; a module covering
    both papers (``checks_scaling``) gets ``model`` passed on."""
    out = []
    for name in MODULES:
        tag = name.rsplit("_", 1)[-1].upper()
        per_paper = tag in ("A", "B")
        if per_paper and model != "all" and tag != model:
            continue
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        print(f"rdyn verify: running {name} ...", file=sys.stderr)
        out += list(module.checks(quick=quick) if per_paper else module.checks(quick=quick, model=model))
    return out


def run(args) -> int:
    checks = collect(args.model, args.quick)
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
        counts = {s: sum(c.status == s for c in checks) for s in ("pass", "fail", "discrepancy", "info")}
        print("summary: " + ", ".join(f"{n} {s}" for s, n in counts.items()))
    return 1 if failed else 0
