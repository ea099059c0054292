"""Run Model A's full-matrix gradient descent next to the collapsed (C1, C2, C3) dynamics.

Full model (docs/models_and_conventions.md, Model A; seed 000, Sections 2 and 4.1): W_V (M x d), W_KQ (D x D),
S = softmax_col(P^T W_KQ P / scale), loss 1/2 E||Y - sigma(W_V X S)||_F^2 summed over all M*D
entries, simultaneous GD from W_V = 0, W_KQ = 0. V* is Gaussian rescaled to ||V*||_F^2 =
--vstar-norm2; P is I or a Haar-random orthogonal matrix (--P random).

  --mode population : exact population gradient (bivariate Gaussian forms, no sampling)
  --mode sgd        : a fresh batch of --batch Gaussian inputs, labels f*(X) + noise-std * E,
                      every step (paper: N = 100)

(C1, C2, C3) are read off the full matrices by projection (B = P^T W_KQ P,
A_in[j,i] = 1{j in G^i}, A_out = 1 - A_in):
  C1 = <W_V, V*>/||V*||^2,  C2 = <B, A_in>/||A_in||^2,  C3 = -<B, A_out>/||A_out||^2.
max_rel_dev: largest |full - collapsed| / |collapsed| over steps 0..N and components whose
collapsed value is nonzero. structure_residual: largest ||W_V - C1 V*||/||W_V|| and
||B - C2 A_in + C3 A_out||/||B|| over steps where the matrix is nonzero.
SGD mode also reports expected_rel_dev, the batch-noise size: per step and component,
sqrt(sum_{s<t} (eta * projected (batch - population) gradient at s)^2) / |collapsed value|
(a random-walk estimate, no contraction), maximised like max_rel_dev.
Default --steps is 300 (the collapsed phase-2 time T* is 1e5-1e6 steps: use --steps to go far).
All quantities are dimensionless; steps are GD iterations.
"""
from __future__ import annotations

import math
import sys

from rdyn.option_types import CrosscheckOptions
from rdyn.output import format_real

NAME = "crosscheck"


def run(values: CrosscheckOptions, args) -> int:
    from rdyn.api._crosscheck import run as api_run

    from rdyn.cli.teacher import DIVERGED_EXIT

    res = api_run(values)
    smooth = isinstance(res.detail["crosscheck"], dict)   # a smooth activation (population GD)
    diverged = res.diverged_at_step is not None
    if diverged:
        print(f"rdyn crosscheck: diverged at step {res.diverged_at_step}: "
              f"{res.divergence_reason}; no agreement figures are reported (exit status 3)",
              file=sys.stderr)
    if values.json:
        print(res.to_json())
        return DIVERGED_EXIT if diverged else 0
    c, batch_size, model = res.detail["config"], res.detail["batch"], res.model
    activation = c.activation.label if smooth else c.activation
    lines = [f"Model A crosscheck ({res.mode}): D={c.D}, K={c.K}, M={model['M']}, d={model['d']}, "
             f"{activation}, P={model['P']}, eta={format_real(res.eta)}, steps={res.steps}"]
    if diverged:
        lines.append(f"  DIVERGED at step {res.diverged_at_step}: compared up to step "
                     f"{res.steps}; max_rel_dev and structure_residual not reported")
    else:
        lines.append(f"  max_rel_dev = {res.max_rel_dev:.3e}   structure_residual = "
                     f"{res.structure_residual:.3e}")
    if "expected_rel_dev" in res and res.expected_rel_dev is not None:
        lines.append(f"  expected_rel_dev (batch noise, N={batch_size}) = {res.expected_rel_dev:.3e}")
    final = res.final_loss
    if all(v is not None and math.isfinite(v) for v in (final["full"], final["collapsed"])):
        lines.append(f"  final excess loss: full {final['full']:.10g}, collapsed {final['collapsed']:.10g}")
    if smooth and not diverged and not res.row_norms_equal:
        lines.append("  rows of V* have unequal norms: the ansatz W_V = C1 V* does not close "
                     "(the collapsed map assumes --M rows of equal norm)")
        lines.append(f"  one C1 per class of equal row norms ({res.class_map['classes']} classes) "
                     f"closes: max_rel_dev = {res.class_map['max_rel_dev']:.3e}")
    for t in sorted(res.record.keys(), key=int):
        f, k = res.record[t]["full"], res.record[t]["collapsed"]
        lines.append(f"  t={t}: full C1={f['C1']:.12g} C2={f['C2']:.12g} C3={f['C3']:.12g} | "
                     f"collapsed C1={k['C1']:.12g} C2={k['C2']:.12g} C3={k['C3']:.12g}")
    print("\n".join(lines))
    return DIVERGED_EXIT if diverged else 0
