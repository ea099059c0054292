"""Measured exponents and constants behind the papers' Theta-claims, with 95% intervals.

Claims tested (seed 000 = Model A, for identity, ReLU and LeakyReLU(kappa); seed 003 = Model B):
  A.t1     Lemma D.13   t1 = Theta(1/eta)
  A.Tstar  Lemma D.16   T* = Theta(K D^2 / (eta ||V*||_F^2))
  A.loss   Theorem 3.1  excess loss L(T) = Theta(K D^4 / (eta T)) for T >> T*
  B.ln.gamma, B.ln.alpha, B.ln.beta        LN layer: gamma ~ t^(1/3), alpha, beta ~ t^(1/6)
  B.looped.rho, B.looped.w, B.looped.v     looped (L=2): rho = w v ~ t^(1/2), w, v ~ t^(1/4)

Definitions (SPEC.md; units: GD steps, all other quantities dimensionless):
  t1 = min{t >= 1 : C1(t) >= 0.95 C1*(t)}   (C1* the fixed point of the C1 update at p(t))
  T* = min{t >= 0 : p(t) >= 1/(2K)}          (p the attention on an in-group key)
  excess loss L = 1/2 E||Y - TF(X)||_F^2 - 1/2 E||E||_F^2 (noise constant removed)
  For A.loss the lines in D, K, eta measure T L(T) at T = m T* (m = 16; 8 with --quick), the
  T line measures L(T) at T = m T* 2^k.  Model B: one trajectory per model (Task 2 spectrum
  (3,1,1,1), exact expectations, alpha0 = 0, beta0 = 1, eta = 2),
  sampled at t = T 2^-k.

Method: each line varies one factor over a geometric range, the others fixed (softmax scale
1/D unless --logit-scale sqrtD), and fits log y = log C + a log x by least squares. The 95%
interval is a Student-t interval from the regression residuals; the data are deterministic,
so it measures the departure from a pure power law over the range, not noise. "local" is the
log-log slope between the two points at the line's asymptotic end (largest D, T, t;
smallest K (K/D -> 0), eta, ||V*||^2). Verdict: "confirmed" when the claimed exponent is inside
an interval no wider than +-10% of it, or the local exponent is within 10% of it, else
"not confirmed". C is the prefactor of the
claimed form with the varied factor's exponent replaced by the fitted one (listed under the
table), so constants of confirmed lines of one claim are comparable.

Default sizes take about 2 minutes on 2 cores; --quick about 30 s. Progress goes to stderr.
--json prints {"rows": [...], ...}; --out FILE writes the JSON (FILE ending in .json) or the
table. Exit status 0.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from rdyn.output import emit_json, jsonable, require

NAME = "scaling"
HELP = "fit the exponents and constants of the papers' Theta-claims from sweeps (95% intervals)"
ACTIVATIONS = ("identity", "relu", "leaky")


def add_arguments(parser) -> None:
    parser.add_argument("--model", choices=("A", "B", "all"), default="all",
                        help="which paper's claims (default all)")
    parser.add_argument("--activation", type=str, default=None,
                        help="Model A activations, comma list of identity, relu, leaky or 'all' "
                        "(default all)")
    parser.add_argument("--kappa", type=float, default=None,
                        help="LeakyReLU slope (leaky only; default 0.1)")
    parser.add_argument("--logit-scale", choices=("D", "sqrtD"), default=None,
                        help="softmax divisor for Model A (default D, the SPEC convention)")
    parser.add_argument("--quick", action="store_true", help="small sizes (about 30 s)")
    parser.add_argument("--runner", choices=("run", "batch"), default="run",
                        help="Model A iterator: 'run' (single-configuration event loop, the "
                        "default) or 'batch' (run_batch; same numbers bit for bit, slower to "
                        "compile)")
    parser.add_argument("--out", type=Path, default=None,
                        help="write the report to FILE (.json: JSON, otherwise the table)")


def _activations(args) -> tuple[str, ...]:
    if args.activation is None:
        return ACTIVATIONS
    require(args.model != "B", "--activation applies to Model A only (not with --model B)")
    names = [a.strip() for a in args.activation.split(",") if a.strip()]
    require(names, "--activation is empty")
    if names == ["all"]:
        return ACTIVATIONS
    for a in names:
        require(a in ACTIVATIONS, f"--activation: unknown activation {a!r} (identity, relu, leaky)")
    require(len(set(names)) == len(names), "--activation: an activation is given twice")
    return tuple(a for a in ACTIVATIONS if a in names)


def run(args) -> int:
    from verify import scaling

    require(args.dps is None, "rdyn scaling is float64 only; --dps is not supported")
    activations = _activations(args)
    if args.kappa is not None:
        require(args.model != "B" and "leaky" in activations,
                "--kappa applies to the leaky activation only")
        require(0 <= args.kappa < 1, "--kappa must be in [0, 1)")
    require(args.logit_scale is None or args.model != "B",
            "--logit-scale applies to Model A only (not with --model B)")
    start = time.perf_counter()

    def progress(message: str) -> None:
        print(f"rdyn scaling: {message} ({time.perf_counter() - start:.0f} s)", file=sys.stderr)

    results = scaling.report(model=args.model, activations=activations, quick=args.quick,
                             logit_scale=args.logit_scale or "D",
                             kappa=scaling.LEAKY_KAPPA if args.kappa is None else args.kappa,
                             progress=progress, runner=args.runner)
    payload = {"rows": [r.as_dict() for r in results], "quick": bool(args.quick),
               "model": args.model, "activations": list(activations) if args.model != "B" else [],
               "logit_scale": args.logit_scale or "D", "level": scaling.LEVEL,
               "local_tolerance": scaling.LOCAL_TOLERANCE,
               "seconds": time.perf_counter() - start}
    table = scaling.format_table(results)
    if args.out is not None:
        if args.out.suffix == ".json":
            args.out.write_text(json.dumps(jsonable(payload), allow_nan=False) + "\n")
        else:
            args.out.write_text(table + "\n")
        print(f"rdyn scaling: report written to {args.out}", file=sys.stderr)
    if args.json:
        emit_json(payload)
    else:
        print(table)
    return 0
