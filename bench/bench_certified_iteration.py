"""Certified steps per second of the direct-form iteration (rdyn prove's) at ReLU, D = 12, K = 3,
||V*||^2 = 1, eta = 0.01 (T* = 1165870): the float64 interval route
(:mod:`rdyn.reduced_dynamics.certified.interval_direct`, compiled, recording the per-step
intervals of C1, x, Delta x, e, alpha - 1, beta) against the arb route
(:class:`rdyn.reduced_dynamics.certified.arb_iteration.ArbIteration`, direct form, 200 bits).
CPU (process) time of the stepping only (kernels loaded and compiled first). A script, not a test.
Usage: PYTHONPATH=. python bench/bench_certified_iteration.py [--steps N] [--arb-steps N] [--check]
Prints one JSON line: both rates, their ratio, the float route's relative radius at the end.
``--check``: also whether the float route's intervals of C1 and x contain the ``rdyn teacher --dps
40`` trajectory (python-flint, about a minute) at steps 599 (t1), 10^3 .. 10^6, T* and every
2e5 steps up to ``--steps``.
"""
from __future__ import annotations

import argparse
import json
import time


def main() -> None:
    import flint
    from flint import arb

    from rdyn.reduced_dynamics.certified.arb_iteration import DIRECT, ArbIteration, DirectKernels
    from rdyn.reduced_dynamics.certified.interval_direct import IntervalDirect
    from rdyn.verification.proofs.engine import Instance
    from rdyn.verification.proofs.kernels import interval_direct_source, kernels

    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=2_400_000)   # ~2 T*
    ap.add_argument("--arb-steps", type=int, default=100_000)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    inst = Instance(12, 3, activation="relu", eta=0.01)
    flint.ctx.prec = 200
    k = kernels(inst.activation, inst.logit_scale)
    eta = inst.exact_eta()
    params = (arb(inst.K).sqrt(), arb(inst.D - inst.K).sqrt(), arb(int(eta.p)) / int(eta.q),
              arb(repr(float(inst.vstar_norm2))), arb(0), arb(1))
    c = k.prepare(*params)

    route = IntervalDirect(interval_direct_source(inst.activation, inst.logit_scale), params, k.first_c1(c))
    route.advance(10)   # compiled before timing
    samples = sorted({599, 1000, 10**4, 10**5, 10**6, 1165870, *range(200_000, args.steps + 1, 200_000)})
    samples = [t for t in samples if 11 <= t <= args.steps]
    seen = {}
    cpu = time.process_time()
    chunk = 100_000
    done = 11   # the step of the box
    while done < args.steps:
        n = min(chunk, args.steps - done)
        rec = route.advance(n)
        for t in samples:
            if done <= t < done + n:
                seen[t] = rec[t - done, :4].copy()
        done += n
    float_rate = (args.steps - 11) / (time.process_time() - cpu)
    contained = None
    if args.check:
        import mpmath

        from rdyn.reduced_dynamics.certified.interval import interval_ball
        from rdyn.reduced_dynamics.model_a.dynamics import run

        ref = run(inst.config(), steps=max(seen), record=sorted(seen), backend="arb", dps=40)
        contained = {}
        for t, row in seen.items():
            C1 = arb(mpmath.nstr(ref.record[t].C1, 45))
            x = arb(mpmath.nstr(ref.record[t].C2, 45)) + arb(mpmath.nstr(ref.record[t].C3, 45))
            contained[t] = bool(interval_ball(row[0], row[1]).contains(C1) and interval_ball(row[2], row[3]).contains(x))

    iteration = ArbIteration(inst.config(), forms=(DIRECT,), direct=DirectKernels(k.advance, k.first_c1, c))
    box = iteration.step(iteration.start(), DIRECT)
    cpu = time.process_time()
    for _ in range(args.arb_steps):
        box, _products = iteration.advance(box, DIRECT)
    arb_rate = args.arb_steps / (time.process_time() - cpu)
    print(json.dumps({"instance": "relu D=12 K=3 eta=0.01", "float_steps": args.steps,
                      "float_steps_per_second": round(float_rate), "arb_steps": args.arb_steps,
                      "arb_steps_per_second": round(arb_rate), "ratio": round(float_rate / arb_rate, 1),
                      "float_relative_radius_end": route.relative_radius(), "stopped": route.stopped,
                      **({"contains_dps40": contained} if contained is not None else {})}))


if __name__ == "__main__":
    main()
