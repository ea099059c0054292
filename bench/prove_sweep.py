"""The proof sweep of docs/proofs.md ("Proof sweep"): ``rdyn prove`` over the grid every
K < D <= 24 with D > 2K, ReLU and identity, logits/D, eta at the papers' condition and at
eta_limit/2 (a script, not a test; it writes the table docs/proofs.md quotes).

Runs :func:`rdyn.verification.proofs.sweep.prove_grid` in this process (the library behind
``rdyn prove --grid``), rewriting OUT.json after every instance (an interrupted sweep keeps what it
proved), then prints the Markdown table and the wall and CPU seconds.
Usage: PYTHONPATH=. python bench/prove_sweep.py OUT.json [--eta paper|half_limit] [--max-tstar N]
       [--grid GRID]
The iteration runs to T0 only (``max_steps=1``: the budget is never below T0); printed statements
false only later are refuted from the region (verify/proofs/corollaries.py).
"""
from __future__ import annotations

import argparse
import sys
import time

GRID = "D=3:24:22;K=1:11:11;activation=relu,identity;eta={eta}"


def main(argv=None) -> int:
    from rdyn.reduced_dynamics.runs.atomic_files import write_text_atomic
    from rdyn.verification.proofs import sweep as sw

    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--eta", default="paper,half_limit")
    ap.add_argument("--max-tstar", type=int, default=None)
    ap.add_argument("--grid", default=None)
    a = ap.parse_args(argv)
    grid = a.grid or GRID.format(eta=a.eta)
    wall, cpu = time.perf_counter(), time.process_time()

    def progress(i, n, row):
        inst = row["instance"]
        bad = [x["key"] for x in row["statements"] if x["form"] == "corrected" and x["verdict"] not in ("certified", "proved")]
        print(f"{i}/{n} D={inst['D']} K={inst['K']} {inst['activation']} eta={inst['eta_rule']} T*={row['T_star']} "
              f"{row['seconds']} s{' error: ' + row['error'] if row['error'] else ''}"
              f"{' corrected not certified: ' + ','.join(bad) if bad else ''}", file=sys.stderr, flush=True)

    res = sw.prove_grid(grid, max_steps=1, max_tstar=a.max_tstar, progress=progress,
                        on_row=lambda r: write_text_atomic(a.out, sw.dumps(r)))
    res["wall_seconds"] = round(time.perf_counter() - wall, 1)
    res["cpu_seconds"] = round(time.process_time() - cpu, 1)
    write_text_atomic(a.out, sw.dumps(res))
    print(sw.markdown_table(res))
    print(f"{res['counts']} wall {res['wall_seconds']} s, cpu {res['cpu_seconds']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
