"""Wall and CPU time of ``rdyn prove`` (a script, not a test; docs/proofs.md quotes it).

Runs the proof engine in-process (kernels warm after the first call) for the Done-when instance
(ReLU, D = 12, K = 3, ||V*||^2 = 1, eta = 0.01) and a small one (D = 9, K = 3, the papers' eta),
each by both routes (``route="float"``, the default, and ``route="arb"``), and prints one JSON line
per run: T*, the last step iterated, the iteration's steps/s, the region's boxes and seconds, wall
and CPU seconds, and the verdict counts; then one line with the CPU ratio arb/float per instance
(the verdicts of both routes must agree, else the script exits 1).
Usage: PYTHONPATH=. python bench/bench_prove.py [--quick]   (--quick: the small instance only)
"""
from __future__ import annotations

import json
import sys
import time
from collections import Counter


def measure(**options) -> dict:
    import rdyn

    wall, cpu = time.perf_counter(), time.process_time()
    result = rdyn.prove(**options).to_dict()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    region = result["region"] or {}
    return {"options": options, "T_star": result["T_star"], "last_step": region.get("last_step"),
            "steps_per_second": round(region.get("last_step", 0) / region.get("iteration_seconds", 1)),
            "boxes": region.get("boxes"), "region_seconds": region.get("seconds"),
            "wall_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
            "verdicts": {f"{f}/{v}": n for (f, v), n in Counter((s["form"], s["verdict"])
                                                                for s in result["statements"]).items()}}


def main() -> None:
    import rdyn

    rdyn.prove(D=9, K=3, statement=["Lemma D.19"], max_steps=200000)   # warm the kernels
    cases = [dict(D=9, K=3)]
    if "--quick" not in sys.argv:
        cases.append(dict(D=12, K=3, activation="relu", vstar_norm2=1, eta=0.01))
    ratios = {}
    for options in cases:
        runs = {route: measure(**options, route=route) for route in ("float", "arb")}
        for run in runs.values():
            print(json.dumps(run), flush=True)
        if runs["float"]["verdicts"] != runs["arb"]["verdicts"]:
            print("the routes disagree", file=sys.stderr)
            sys.exit(1)
        ratios[f"D={options['D']}"] = round(runs["arb"]["cpu_seconds"] / runs["float"]["cpu_seconds"], 2)
    print(json.dumps({"cpu_ratio_arb_over_float": ratios}))


if __name__ == "__main__":
    main()
