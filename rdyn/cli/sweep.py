"""Sweep Model A's collapsed dynamics over a grid of configurations (float64, batched).

Every configuration of the Cartesian product given by --grid is iterated for --steps GD
updates from C1 = C2 = C3 = 0 (docs/models_and_conventions.md, Model A), many at once (numba, parallel over
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
grid points with t >= max(T*, steps/10); empty unless T* was reached and steps >= 2 T*),
diverged_at_step (the first step whose state left the float64-safe range, |C| > 1e100 or
non-finite; such a row holds the step before, with empty t1, T_star, loss_slope; exit
status stays 0 and stderr counts the diverged rows; docs/input_rules.md).
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
Dask distributed scheduler (it and the workers need this package importable, the same version:
checked before any task, with a 10 s connect timeout; else exit 2); rows are identical.
Checkpoints are not supported with --scheduler (refused, exit 2).

Output: --out FILE writes CSV (or JSON when FILE ends in .json: {"rows": [...]});
otherwise CSV goes to stdout. --json prints {"rows": [...], "steps": N} on stdout.
Progress (configuration-steps) goes to stderr.
"""
from __future__ import annotations

import io
import sys

from rdyn.option_types import SweepOptions

NAME = "sweep"


def run(values: SweepOptions, args) -> int:
    from rdyn.reduced_dynamics.runs.checkpoint import Interrupted, resume_command
    from rdyn.api._sweep import configurations, run as api_run, write_csv

    try:
        res = api_run(values)
    except Interrupted as exc:
        total = values.steps * len(configurations(values))
        print(f"rdyn sweep: interrupted at {exc.step} of {total} configuration-steps, "
              f"checkpoint saved to {exc.path}; resume with: "
              f"{resume_command(sys.argv, NAME, str(exc.path))}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("rdyn sweep: interrupted (no checkpoint written; --checkpoint FILE makes sweeps "
              "resumable)", file=sys.stderr)
        return 130
    diverged = sum(row["diverged_at_step"] is not None for row in res._data["rows"])
    if diverged:  # a sweep maps a region: diverged rows are results (exit 0), marked per row
        print(f"rdyn sweep: {diverged} of {len(res._data['rows'])} rows diverged (column "
              "diverged_at_step; their t1, T_star, loss_slope are empty)", file=sys.stderr)
    if values.json:
        print(res.to_json())
    elif values.out is None:
        buffer = io.StringIO()
        write_csv(buffer, res._data["rows"], res.detail["fields"])
        sys.stdout.write(buffer.getvalue())
    return 0
