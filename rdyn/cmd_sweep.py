"""Sweep Model A's collapsed dynamics over a grid of configurations (float64, batched).

Every configuration of the Cartesian product given by --grid is iterated for --steps GD
updates from C1 = C2 = C3 = 0 (SPEC.md, Model A), many at once (numba, parallel over
configurations; results equal single `rdyn teacher --steps N` runs bit for bit). One row per
configuration, in grid order (the last key varies fastest).

Grid syntax: 'KEY=VALUES;KEY=VALUES;...'. VALUES is a comma list ('D=20,36'), or for real
keys 'LO:HI:N' (N equally spaced values, both ends included). Keys (defaults in brackets):
  D [36]  K [4]  eta [half of eta_limit; the value 'auto' asks for it explicitly]
  vstar_norm2 [1] (||V*||_F^2)   activation [relu] (identity, relu, leaky)
  kappa [0.1] (LeakyReLU slope; leaky rows only)   sigma_prime_zero [1] (sigma'(0))
  logit_scale [D] (D or sqrtD)
Example: rdyn sweep --grid 'D=20,36;K=2,4;eta=0.1,0.2' --steps 100000 --out rows.csv

Row columns: D, K, eta, vstar_norm2, activation, kappa, logit_scale, sigma_prime_zero,
steps, t1, T_star (empty / null if not reached within --steps), final C1, C2, C3,
p (attention on an in-group key), C1_star (fixed point of the C1 update at p), loss (excess
loss L - 1/2 E||E||_F^2), loss_slope (least-squares slope of log loss vs log t over the log
grid points with t >= max(T*, steps/10)).
  t1 = min{t >= 1 : C1(t) >= 0.95 C1*(t)}     T* = min{t >= 0 : p(t) >= 1/(2K)}
All quantities are dimensionless; t counts GD steps.

Speed: --fast uses vectorisable exp/atan (Cephes rational forms, error <= 1.4 ulp) in place of
the C library's, so numba runs the loop over configurations in AVX2 lanes: about 3x the
configuration-steps per second, but rows are no longer bit-identical to single runs (they
agree to 1e-12 relative or better, t1 and T* within a step; README "Numerical bars").
Without --fast rows are bit-identical. --threads N sets the numba threads (blocks of
configurations run in parallel).

Checkpoints: --checkpoint FILE saves the complete state every --checkpoint-every seconds,
at the end and on Ctrl-C (exit 130, printing the command that resumes); --resume FILE
continues it (the grid and every option must be the same, else exit 2). Resumed rows equal
those of an uninterrupted run bit for bit.

Distributed: --scheduler ADDRESS sends chunks of configurations to the workers of a running
Dask distributed scheduler (the workers need this package importable); rows are identical.
Checkpoints are not supported with --scheduler (refused, exit 2).

Output: --out FILE writes CSV (or JSON when FILE ends in .json: {"rows": [...]});
otherwise CSV goes to stdout. --json prints {"rows": [...], "steps": N} on stdout.
Progress (configuration-steps) goes to stderr.
"""
from __future__ import annotations

import argparse
import csv
import io
import itertools
import json
import sys
from decimal import Decimal
from pathlib import Path

from rdyn.output import UsageError, emit_json, jsonable, require

NAME = "sweep"
HELP = "Model A collapsed dynamics over a grid of configurations (batched float64)"

KEYS = {  # key: (parser, default)
    "D": (int, 36), "K": (int, 4), "eta": (float, None), "vstar_norm2": (float, 1.0),
    "activation": (str, "relu"), "kappa": (float, 0.1), "sigma_prime_zero": (float, 1.0),
    "logit_scale": (str, "D"),
}
ALIASES = {"vstar-norm2": "vstar_norm2", "sigma-prime-zero": "sigma_prime_zero",
           "logit-scale": "logit_scale"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--grid", type=str, required=True,
                        help="configurations, e.g. 'D=20,36;K=2,4;eta=0.1,0.2' (see above)")
    parser.add_argument("--steps", type=int, required=True, help="GD steps N per configuration")
    parser.add_argument("--out", type=Path, default=None, help="output file (.csv or .json)")
    parser.add_argument("--t1-fraction", type=float, default=0.95,
                        help="t1 threshold: C1 >= fraction * C1* (default 0.95)")
    parser.add_argument("--tstar-attention", type=float, default=None,
                        help="T* threshold on p (default 1/(2K))")
    parser.add_argument("--threads", type=int, default=None,
                        help="numba threads (default: all cores)")
    parser.add_argument("--skip-invalid", action="store_true",
                        help="drop grid points that are not valid configurations (e.g. K >= D) "
                        "instead of refusing")
    parser.add_argument("--scheduler", type=str, default=None,
                        help="Dask distributed scheduler address (e.g. tcp://host:8786): run "
                        "chunks of configurations on its workers")
    parser.add_argument("--fast", action="store_true",
                        help="vectorised exp/atan: about 3x faster, rows agree with single runs "
                        "to 1e-12 relative instead of bit for bit (not with --scheduler)")
    parser.add_argument("--checkpoint", metavar="FILE", type=Path, default=None,
                        help="save the complete state to FILE (.npz) every --checkpoint-every "
                        "seconds, at the end and on Ctrl-C (not with --scheduler)")
    parser.add_argument("--checkpoint-every", metavar="SECONDS", type=float, default=60.0,
                        help="seconds between checkpoints (default 60)")
    parser.add_argument("--resume", metavar="FILE", type=Path, default=None,
                        help="continue from a checkpoint of the same grid and options "
                        "(bit-identical rows; not with --scheduler)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar on stderr")


def _values(key: str, text: str) -> list:
    kind, _ = KEYS[key]
    text = text.strip()
    require(text != "", f"--grid: no values for {key}")
    if key == "eta" and text == "auto":
        return [None]
    if ":" in text and kind is not str:
        parts = text.split(":")
        require(len(parts) == 3, f"--grid: range for {key} must be LO:HI:N, got {text!r}")
        try:  # decimal arithmetic: 0.1:0.3:3 gives 0.1, 0.2, 0.3 exactly as written
            lo, hi, n = Decimal(parts[0]), Decimal(parts[1]), int(parts[2])
        except (ValueError, ArithmeticError):
            raise UsageError(f"--grid: bad range {text!r} for {key}") from None
        require(n >= 1, f"--grid: range for {key} needs N >= 1")
        values = [float(lo + (hi - lo) * i / (n - 1)) for i in range(n)] if n > 1 else [float(lo)]
        if kind is int:
            require(all(v == int(v) for v in values), f"--grid: range for {key} is not integral")
            values = [int(v) for v in values]
        return values
    out = []
    for item in text.split(","):
        item = item.strip()
        if key == "eta" and item == "auto":
            out.append(None)
            continue
        try:
            out.append(kind(item))
        except ValueError:
            raise UsageError(f"--grid: bad value {item!r} for {key}") from None
    return out


def parse_grid(text: str) -> list[dict]:
    """The grid string as a list of parameter dicts (Cartesian product, last key fastest)."""
    axes: dict[str, list] = {}
    for part in text.split(";"):
        if not part.strip():
            continue
        require("=" in part, f"--grid: expected KEY=VALUES, got {part.strip()!r}")
        key, values = part.split("=", 1)
        key = ALIASES.get(key.strip(), key.strip())
        require(key in KEYS, f"--grid: unknown key {key!r} (keys: {', '.join(KEYS)})")
        require(key not in axes, f"--grid: key {key} given twice")
        axes[key] = _values(key, values)
    require(axes, "--grid is empty")
    points = []
    seen = set()
    for combo in itertools.product(*axes.values()):
        point = {k: default for k, (_, default) in KEYS.items()}
        point.update(zip(axes, combo))
        if point["activation"] != "leaky":
            point["kappa"] = 0.1  # unused; rows differing only in kappa collapse into one
        key = tuple(sorted(point.items(), key=lambda kv: kv[0]))
        if key not in seen:
            seen.add(key)
            points.append(point)
    return points


def _config(point: dict):
    from reduced_dynamics.model_a import TeacherConfig

    try:
        return TeacherConfig(**point)
    except (TypeError, ValueError) as exc:
        where = ", ".join(f"{k}={v}" for k, v in point.items() 
                          if k in ("D", "K") or v != KEYS[k][1])
        raise UsageError(f"--grid point ({where or 'defaults'}): {exc}") from None


def run(args) -> int:
    from reduced_dynamics.batch import ROW_FIELDS, run_batch
    from reduced_dynamics.model_a import Thresholds

    require(args.dps is None, "rdyn sweep is float64 only; --dps is not supported")
    require(0 <= args.steps <= 10**9, "--steps must be in 0..1e9")
    require(args.t1_fraction > 0, "--t1-fraction must be > 0")
    require(args.tstar_attention is None or 0 < args.tstar_attention <= 1,
            "--tstar-attention must be in (0, 1]")
    require(args.threads is None or args.threads >= 1, "--threads must be >= 1")
    configs = []
    for point in parse_grid(args.grid):
        try:
            configs.append(_config(point))
        except UsageError:
            if not args.skip_invalid:
                raise
    require(configs, "--grid has no valid configuration")
    if args.threads is not None:
        import numba

        numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    thresholds = Thresholds(args.t1_fraction, args.tstar_attention)
    require(args.checkpoint_every >= 0, "--checkpoint-every must be >= 0 seconds")
    if args.scheduler is not None:
        from reduced_dynamics.batch import run_batch_distributed

        require(args.checkpoint is None and args.resume is None,
                "--checkpoint/--resume are not supported with --scheduler")
        require(not args.fast, "--fast is not supported with --scheduler")
        try:
            result = run_batch_distributed(configs, args.steps, args.scheduler, thresholds,
                                           progress=not args.quiet)
        except OSError as exc:  # cannot connect (distributed raises OSError on timeout)
            raise UsageError(f"--scheduler {args.scheduler}: {exc}") from None
    else:
        if args.checkpoint is not None:
            folder = args.checkpoint.resolve().parent
            require(folder.is_dir(), f"--checkpoint: folder {folder} does not exist")
        result = _run_local(args, configs, thresholds, run_batch)
        if result is None:
            return 130
    rows = result.rows
    if args.out is not None:
        if args.out.suffix == ".json":
            args.out.write_text(json.dumps(jsonable({"rows": rows, "steps": args.steps}),
                                           allow_nan=False) + "\n")
        else:
            with open(args.out, "w", newline="") as fh:
                _write_csv(fh, rows, ROW_FIELDS)
        print(f"rdyn sweep: {len(rows)} rows written to {args.out}", file=sys.stderr)
    if args.json:
        emit_json({"rows": rows, "steps": args.steps})
    elif args.out is None:
        buffer = io.StringIO()
        _write_csv(buffer, rows, ROW_FIELDS)
        sys.stdout.write(buffer.getvalue())
    return 0


def _run_local(args, configs, thresholds, run_batch):
    """``run_batch`` with the checkpoint options; a checkpoint problem is a usage error (exit
    2); Ctrl-C prints one line on stderr (with --checkpoint: the command that resumes) and
    gives None (exit 130)."""
    from reduced_dynamics.checkpoint import CheckpointError, Interrupted, resume_command

    try:
        return run_batch(configs, args.steps, thresholds, progress=not args.quiet,
                         fast=args.fast, checkpoint=args.checkpoint,
                         checkpoint_every=args.checkpoint_every, resume=args.resume)
    except CheckpointError as exc:
        raise UsageError(str(exc)) from None
    except Interrupted as exc:
        total = args.steps * len(configs)
        print(f"rdyn sweep: interrupted at {exc.step} of {total} configuration-steps, "
              f"checkpoint saved to {exc.path}; resume with: "
              f"{resume_command(sys.argv, NAME, str(exc.path))}", file=sys.stderr)
    except KeyboardInterrupt:
        print("rdyn sweep: interrupted (no checkpoint written; --checkpoint FILE makes sweeps "
              "resumable)", file=sys.stderr)
    return None


def _write_csv(fh, rows, fields) -> None:
    writer = csv.DictWriter(fh, fieldnames=list(fields), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if row[k] is None else (repr(row[k]) if isinstance(row[k], float)
                                                       else row[k]) for k in fields})
