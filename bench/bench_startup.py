"""Start-up time of the ``rdyn`` command, as a multiple of a bare ``import numba, numpy``.

Every command runs as a fresh subprocess (``python -m rdyn ...`` from the repository root);
the figure is the median wall time over ``--repeat`` runs (and the median CPU time,
user + system, which is less sensitive to other load on the machine). All measured in one
run of this script, so the ratios compare like with like.

* warm: the kernel cache (rdyn.reduced_dynamics.runs.kernel_cache) in a temporary RDYN_CACHE_DIR is
  filled by one untimed run first;
* cold: one run on an empty temporary RDYN_CACHE_DIR (sympy generation + numba compilation).

Usage: python bench/bench_startup.py [--repeat 5] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BARE = [sys.executable, "-c", "import numba, numpy"]
RDYN = [sys.executable, "-m", "rdyn"]
COMMANDS = {
    "teacher --steps 10": ["teacher", "--steps", "10"],
    "teacher --steps 10 --json": ["teacher", "--steps", "10", "--json"],
    "ln --steps 10 (sphere, Monte Carlo 1e5 samples)": ["ln", "--steps", "10"],
    "ln --data spectrum --spectrum 4,1,1 --d 3 --steps 10":
        ["ln", "--data", "spectrum", "--spectrum", "4,1,1", "--d", "3", "--steps", "10"],
    "ln --model looped --samples 2000 --steps 10":
        ["ln", "--model", "looped", "--samples", "2000", "--steps", "10"],
    "sweep --grid 'D=20,36;K=2,4' --steps 1000":
        ["sweep", "--grid", "D=20,36;K=2,4", "--steps", "1000", "--quiet"],
}


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(argv: list[str], cache: str) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, stderr) of one subprocess run."""
    env = dict(os.environ, RDYN_CACHE_DIR=cache)
    cpu0, t0 = _children_cpu(), time.perf_counter()
    run = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    if run.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{run.stderr}")
    return wall, cpu, run.stderr


def median_of(argv: list[str], cache: str, repeat: int) -> tuple[float, float]:
    runs = [timed(argv, cache)[:2] for _ in range(repeat)]
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    args = ap.parse_args()

    results = {}
    with tempfile.TemporaryDirectory(prefix="rdyn-bench-") as tmp:
        warm_cache = str(Path(tmp) / "warm")
        bare = median_of(BARE, warm_cache, args.repeat)
        results["bare: python -c 'import numba, numpy'"] = {"warm_s": bare[0], "warm_cpu_s": bare[1]}
        for name, cmd in COMMANDS.items():
            cold_cache = str(Path(tmp) / f"cold-{len(results)}")
            cold_wall, cold_cpu, cold_err = timed(RDYN + cmd, cold_cache)
            timed(RDYN + cmd, warm_cache)  # fill the warm cache (untimed)
            wall, cpu = median_of(RDYN + cmd, warm_cache, args.repeat)
            results[f"rdyn {name}"] = {
                "warm_s": wall, "warm_cpu_s": cpu, "cold_s": cold_wall, "cold_cpu_s": cold_cpu,
                "warm_ratio": wall / bare[0], "warm_cpu_ratio": cpu / bare[1],
                "cold_ratio": cold_wall / bare[0],
                "cold_message": "rdyn: compiling" in cold_err}
    if args.json:
        print(json.dumps({"repeat": args.repeat, "python": sys.version.split()[0],
                          "results": results}, indent=2))
        return
    print(f"median of {args.repeat} runs; ratios relative to the bare import "
          f"({bare[0]:.3f} s wall, {bare[1]:.3f} s CPU)")
    print(f"{'command':58s} {'warm s':>7s} {'ratio':>6s} {'CPU ratio':>9s} {'cold s':>7s} "
          f"{'ratio':>6s}  compiling msg")
    for name, r in results.items():
        if "warm_ratio" not in r:
            continue
        print(f"{name:58s} {r['warm_s']:7.3f} {r['warm_ratio']:6.2f} {r['warm_cpu_ratio']:9.2f} "
              f"{r['cold_s']:7.3f} {r['cold_ratio']:6.2f}  {'yes' if r['cold_message'] else 'no'}")


if __name__ == "__main__":
    main()
