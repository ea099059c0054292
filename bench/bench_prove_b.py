"""Wall and CPU time of ``rdyn prove --paper B`` (a script, not a test; docs/proofs.md, "Model B",
quotes it).

In-process, one JSON line per instance: the default (Task 1, d = 16, n = 32, unnormalized,
S0 in [0.25, 16]), a normalized Task 2 instance (the rigorous kappa3), the certified LN
training run of 100 steps (ms per step), the certified LN and looped (L = 2) runs of 10 steps on
three distinct eigenvalues (spectrum 3,2,1: LN by the nested 2-D integral of stick-breaking angles, looped by the
Laplace route's 1-D one), the Laplace route on more levels (looped, L = 10: 20 steps at 6 and 12 levels; LN: 2
steps at 4 and 5 levels, 1 at 6), and --eta-fraction (every eta = theta eta_max) at the
ledger's validation instance (Task 2, d = 4, spectrum 3,1,1,1, both targets, theta in [0.1, 1]) and
at the default one with theta in [1e-100, 1]; wall and CPU seconds and the verdict counts.
Usage: PYTHONPATH=. python bench/bench_prove_b.py [--quick]   (--quick: the default instance only)
"""
from __future__ import annotations

import json
import sys
import time
from collections import Counter


def measure(**options) -> dict:
    import rdyn

    wall, cpu = time.perf_counter(), time.process_time()
    result = rdyn.prove(paper="B", **options).to_dict()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    out = {"options": options, "wall_seconds": round(wall, 3), "cpu_seconds": round(cpu, 3),
           "verdicts": {f"{f}/{v}": n for (f, v), n in Counter((s["form"], s["verdict"])
                                                               for s in result["statements"]).items()}}
    if "steps" in options:
        out["ms_per_step"] = round(1000 * wall / options["steps"], 1)
    return out


def main() -> None:
    cases = [dict()]
    if "--quick" not in sys.argv:
        cases += [dict(target="normalized", d=3, spectrum="4,1,1"), dict(model="ln", d=3, spectrum="4,1,1", steps=100)]
        cases += [dict(model="ln", d=3, spectrum="3,2,1", steps=10), dict(model="looped", L=2, d=3, spectrum="3,2,1", steps=10)]
        cases += [dict(model="looped", L=10, d=6, spectrum="6,5,4,3,2,1", steps=20),
                  dict(model="looped", L=10, d=12, spectrum=",".join(str(m) for m in range(12, 0, -1)), steps=20)]
        cases += [dict(model="ln", d=4, spectrum="4,3,2,1", steps=2), dict(model="ln", d=5, spectrum="5,4,3,2,1", steps=2),
                  dict(model="ln", d=6, spectrum="6,5,4,3,2,1", steps=1)]
        cases += [dict(data="spectrum", d=4, spectrum="3,1,1,1", target=t, eta_fraction="0.1,1")
                  for t in ("unnormalized", "normalized")]
        cases += [dict(eta_fraction="0.1,1"), dict(eta_fraction="1e-100,1")]
    for options in cases:
        print(json.dumps(measure(**options)), flush=True)


if __name__ == "__main__":
    main()
