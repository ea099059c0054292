"""``rdyn.verify``: every derived identity and printed constant of both papers, checked."""
from __future__ import annotations

from rdyn.api._common import options
from rdyn.api._signature import api_function
from rdyn.option_types import VerifyOptions
from rdyn.output import UsageError


@api_function("verify")
def verify(**kwargs):
    """Run the checks of ``rdyn verify``. Every verdict is a pure function of its check (the
    same in any process and any order).

    Returns
    -------
    rdyn.result.Result
        Key ``checks``: a list of dicts (``id``, ``source``, ``claim``, ``status`` in
        pass/fail/discrepancy/info, ``max_error`` (relative), ``digits``, ``detail``); the
        failed ones are ``[c for c in r.checks if c["status"] == "fail"]``.
    """
    return run(options("verify", kwargs))


def run(v: VerifyOptions, progress: bool = False):
    from rdyn.result import Result
    from rdyn.verification.checks.registry import run_checks, select_groups

    only = v.only
    if only and not select_groups(v.model, v.quick, only):
        raise UsageError(f"--only: no check id can match {', '.join(only)}")
    if progress and not only and v.model == "all":   # fixed sizes: the measured time
        from rdyn.run_time import announce, fixed_size_estimate

        announce(fixed_size_estimate("verify", bool(v.quick)), quiet=False)
    checks = run_checks(only=only, model=v.model, quick=v.quick, progress=progress)
    if only and not checks:
        raise UsageError(f"--only: no check id matches {', '.join(only)}")
    return Result({"checks": [c.as_dict() for c in checks]}, v.dps, detail={"checks": checks})
