"""Reproduce Figures 2 and 3 of the teacher-model paper (seed 000, Section 4.1) as PNG files
(--paper A, the default), or the Model B figures of seed 003 (--paper B: training loss of the
LN and no-LN layers on Tasks 1 and 2, learned W/V heat maps, active parameters, looped error
against the number of loops; full-matrix GD with the collapsed prediction drawn over it).

Six experiments (paper): CNN and GCN teachers with ReLU and Leaky ReLU (kappa 0.1), STS and
GSLP with ReLU. Each trains the full student (rdyn.verification.references.full_matrix) by online SGD: a fresh
batch of --batch Gaussian inputs X (d x D, iid N(0,1)) with labels f*(X) + E, E iid
N(0, noise_std^2), every step, from W_V = 0, W_KQ = 0, eta = half of eta_limit.

Figure 2 (figure2_loss.png): (a) excess training loss: the exact population excess loss
L - 1/2 E||E||_F^2 at the SGD iterate; (b) excess OOD loss on a fresh batch with iid Exp(1)
inputs, L_OOD - 1/(2N) sum_n ||Y_n - f*(X_n)||^2 (paper's definition; non-positive batch
values are not drawn on the log axis); (c) cosine similarity of W_V and V*. Dashed: the
collapsed (C1, C2, C3) prediction (population loss; OOD loss of the collapsed matrices on
20000 Exp(1) inputs, noise-free; cosine 1). Log-log slopes are fitted over t >= 2 T*
(T* of the collapsed run) when the run reaches 4 T*, else over the last decade (then the
window may still contain the T* transition: check fit_from against T*), and printed next to the
paper's claims (training -1, OOD about -0.5). An experiment whose SGD population excess loss
rises above 10 times its step-0 value (or whose state leaves the float64-safe range) is reported
as diverged (diverged_at_step, no SGD slopes); the figures are still written, exit status 3.
Figure 3 (figure3_attention.png): attention S at the last step (SGD, top) and the collapsed
prediction (bottom), one column per experiment.

Sizes: paper's D, K (cnn 36/4, gcn 20/3, sts 20/4, gslp 20/1), M=4, d=8, ||V*||_F^2 =
--vstar-norm2 (default 256: a larger teacher shortens the attention phase T* ~ 1/||V*||^2).
--quick: D=12 (cnn K=3, gcn 3, sts 3, gslp 1), 1500 steps, for tests and notebooks.

--activation erf|tanh|gelu|softplus|sigmoid (or --activation-expr EXPR), beyond the paper:
the four teachers (CNN, GCN, STS, GSLP) with that sigma for teacher and student (V* rows of
equal norm); dashed: the smooth collapsed map (rdyn teacher --activation: population loss,
attention S, eta = half of its eta_limit; cosine 1; OOD loss of the collapsed matrices).
Titles and slope lines name the activation; the paper's slopes are printed as context only
("paper (ReLU/Leaky)").
"""
from __future__ import annotations

import sys

from rdyn.option_types import FiguresOptions

NAME = "figures"


def _fmt(x) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def run(values: FiguresOptions, args) -> int:
    from rdyn.api._figures import run as api_run

    from rdyn.cli.teacher import DIVERGED_EXIT

    res = api_run(values, progress=True)
    data = res._data
    diverged = [row for row in data.get("experiments", ()) if row["diverged_at_step"] is not None]
    for row in diverged:
        print(f"rdyn figures: {row['experiment']}: SGD diverged at step {row['diverged_at_step']}: "
              f"{row['divergence_reason']}; its slopes are not reported (exit status 3)", file=sys.stderr)
    status = DIVERGED_EXIT if diverged else 0
    if values.json:
        print(res.to_json())
        return status
    if values.paper == "B":
        for v in data["figures"].values():
            print(f"wrote {v}")
        print("fitted log-log slopes over the second half of the run (paper's claims in brackets):")
        for key, claim in data["paper_claims"].items():
            s = data["slopes"][key]
            print(f"  {key:10s} {'n/a' if s is None else f'{s:.3f}'}  [{claim:.3f}]")
        return 0
    paper = data["paper_slopes"]
    for v in data["figures"].values():
        print(f"wrote {v}")
    if data["activation"] == "paper":
        print(f"fitted log-log slopes (paper: training {paper['train']}, OOD about "
              f"{paper['ood']}), t >= 2 T* or the last decade:")
    else:
        name = data["activation"] if data["activation_expr"] is None \
            else f"expr:{data['activation_expr']}"
        print(f"fitted log-log slopes with sigma = {name}, t >= 2 T* or the last decade "
              f"(paper (ReLU/Leaky): training {paper['train']}, OOD about {paper['ood']}; "
              f"no claim for {name}):")
    for row in data["experiments"]:
        print(f"  {row['experiment']:16} D={row['D']:2d} K={row['K']}  T*={row['T_star']}  "
              f"fit t>={row['fit_from']}  "
              f"train {_fmt(row['slope_train'])}  OOD {_fmt(row['slope_ood'])}  "
              f"collapsed {_fmt(row['slope_collapsed'])}  cos(W_V,V*) {row['final_cosine']:.4f}"
              + ("" if row["diverged_at_step"] is None else f"  SGD DIVERGED at step {row['diverged_at_step']}"))
    return status
