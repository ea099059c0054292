"""``rdyn.verify``: every derived identity and printed constant of both papers, checked."""
from __future__ import annotations

import importlib
import sys

from rdyn.api._common import options

MODULES = ("verify.checks_model_a", "verify.checks_model_b", "verify.checks_scaling")


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



def verify(**kwargs):
    """Run the checks of ``rdyn verify``: ``model`` ("A", "B" or "all"), ``quick`` (skip the
    Theta-claim exponent runs, fewer Monte Carlo samples), ``dps`` (JSON reals as strings of
    that many digits). Returns a :class:`rdyn.result.Result` with key ``checks`` (a list of
    dicts: ``id``, ``source``, ``claim``, ``status`` in pass/fail/discrepancy/info,
    ``max_error`` (relative), ``digits``, ...); the failed ones are
    ``[c for c in r.checks if c["status"] == "fail"]``.
    """
    return run(options("verify", kwargs))


def run(v: dict):
    from rdyn.result import Result

    checks = collect(v["model"], v["quick"])
    return Result({"checks": [c.as_dict() for c in checks]}, v["dps"], detail={"checks": checks})
