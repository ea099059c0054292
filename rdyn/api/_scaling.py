"""``rdyn.scaling``: measured exponents and constants behind the papers' Theta-claims."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from rdyn.api._common import options
from rdyn.api._signature import api_function
from rdyn.option_types import ScalingOptions
from rdyn.output import jsonable, require, write_rescued, write_text_atomic

ACTIVATIONS = ("identity", "relu", "leaky")


def activations(v: ScalingOptions) -> tuple[str, ...]:
    """The Model A activations of ``--activation`` (comma list, "all", or a tuple)."""
    raw = v.activation
    if raw is None:
        return ACTIVATIONS
    names = [a.strip() for a in raw.split(",") if a.strip()] if isinstance(raw, str) \
        else [str(a) for a in raw]
    require(names, "--activation is empty")
    if names == ["all"]:
        return ACTIVATIONS
    for a in names:
        require(a in ACTIVATIONS, f"--activation: unknown activation {a!r} (identity, relu, leaky)")
    require(len(set(names)) == len(names), "--activation: an activation is given twice")
    return tuple(a for a in ACTIVATIONS if a in names)


@api_function("scaling")
def scaling(**kwargs):
    """Fit the exponents of the papers' Theta-claims (t1 ~ 1/eta, T* ~ K D^2/(eta ||V*||^2),
    L(T) ~ K D^4/(eta T); Model B growth exponents) with 95% intervals.

    Returns
    -------
    rdyn.result.Result
        ``rows`` (one per fitted line; with ``extend`` the T* D-lines carry ``extension``:
        points marked ``map`` / ``slow_manifold``, the fit over the extension, the derived
        exponent), ``quick``, ``model``, ``activations``, ``logit_scale``, ``extend``,
        ``level``, ``local_tolerance``, ``seconds``.
    """
    return run(options("scaling", kwargs))


def run(v: ScalingOptions):
    from rdyn.result import Result
    from rdyn.verification.references import scaling

    acts = activations(v)
    if v.kappa is not None:
        require("leaky" in acts, "--kappa applies to the leaky activation only")
    start = time.perf_counter()
    if v.model == "all" and not v.extend and v.activation is None:
        from rdyn.run_time import announce, fixed_size_estimate

        announce(fixed_size_estimate("scaling", bool(v.quick)), quiet=False)

    def progress(message: str) -> None:
        print(f"rdyn scaling: {message} ({time.perf_counter() - start:.0f} s)", file=sys.stderr)

    results = scaling.report(model=v.model, activations=acts, quick=v.quick,
                             logit_scale=v.logit_scale or "D",
                             kappa=scaling.LEAKY_KAPPA if v.kappa is None else v.kappa,
                             progress=progress, runner=v.runner, extend=bool(v.extend))
    payload = {"rows": [r.as_dict() for r in results], "quick": bool(v.quick),
               "model": v.model, "activations": list(acts) if v.model != "B" else [],
               "logit_scale": v.logit_scale or "D", "extend": bool(v.extend),
               "level": scaling.LEVEL,
               "local_tolerance": scaling.LOCAL_TOLERANCE,
               "seconds": time.perf_counter() - start}
    table = scaling.format_table(results)
    if v.out is not None:
        out = Path(v.out)
        text = (json.dumps(jsonable(payload), allow_nan=False) if out.suffix == ".json"
                else table) + "\n"
        written = write_rescued("--out", out, lambda p: write_text_atomic(p, text), text)
        if written is not None:
            print(f"rdyn scaling: report written to {written}", file=sys.stderr)
    return Result(payload, None, detail={"table": table})
