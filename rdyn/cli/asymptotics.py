"""Large-D asymptotics of Model A's phase limits at fixed K (derived; checked against the
slow-manifold quadrature of ``rdyn teacher --method slow`` at D = 10^3 .. 10^6).

tau_star = lim eta T*, tau1 = lim eta t1 (eta -> 0); late excess loss ~ c_L / (eta t).
Exponents of D are exact; constants are closed forms or 30 digits (docs/flow_and_asymptotics.md).
"""
from __future__ import annotations

from rdyn.option_types import AsymptoticsOptions

NAME = "asymptotics"


def run(values: AsymptoticsOptions, args) -> int:
    from rdyn.api._asymptotics import run as api_run
    from rdyn.reduced_dynamics.model_a.limits.asymptotics import text

    res = api_run(values, progress=True)   # the time estimate on stderr when long
    if values.json:
        print(res.to_json())
    else:
        print(text(res.detail["summary"]))
    return 0
