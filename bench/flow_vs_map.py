"""Error of the eta -> 0 phase limits (flow, modified equation, slow manifold) against the exact
map, on a grid (rdyn.verification.references.flow_accuracy.compare). Prints one JSON object per configuration.

Run: python bench/flow_vs_map.py [--quick]  (the full grid takes a few minutes on 2 cores)
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace

from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, eta_limit
from rdyn.verification.references.flow_accuracy import compare

GRID = [(8, 2), (16, 1), (16, 4), (32, 4), (64, 4), (64, 8), (128, 4)]
DIVISORS = (2, 16)  # eta = eta_limit / divisor


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--max-D", type=int, default=128)
    parser.add_argument("--scales", default="D,sqrtD")
    parser.add_argument("--activations", default="identity,relu,leaky")
    parser.add_argument("--divisors", default=",".join(map(str, DIVISORS)))
    args = parser.parse_args()
    for scale in args.scales.split(","):
        for activation in args.activations.split(","):
            for D, K in GRID:
                if D > args.max_D or (args.quick and D > 32):
                    continue
                for div in map(int, args.divisors.split(",")):
                    base = TeacherConfig(D, K, activation, logit_scale=scale)
                    if D >= 128 and div > 2:
                        continue
                    config = replace(base, eta=eta_limit(base) / div)
                    start = time.perf_counter()
                    row = compare(config)
                    row["eta_divisor"] = div
                    row["seconds"] = time.perf_counter() - start
                    print(json.dumps(row), flush=True)
                    print(f"done {scale} {activation} D={D} K={K} /{div}", file=sys.stderr)


if __name__ == "__main__":
    main()
