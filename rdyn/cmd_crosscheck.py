"""Run Model A's full-matrix gradient descent next to the collapsed (C1, C2, C3) dynamics.

Full model (SPEC.md, Model A; seed 000, Sections 2 and 4.1): W_V (M x d), W_KQ (D x D),
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

import argparse
from dataclasses import dataclass, field

import numpy as np

from rdyn.output import emit_json, format_real, require

NAME = "crosscheck"
HELP = "Model A: full-matrix GD (population or SGD) vs the collapsed (C1, C2, C3) map"
DEFAULT_STEPS = 300


@dataclass
class CrosscheckResult:
    mode: str
    steps: int
    eta: float
    max_rel_dev: float
    structure_residual: float
    expected_rel_dev: float | None  # sgd only
    record: dict = field(default_factory=dict)  # step -> {"full": {...}, "collapsed": {...}}
    full_loss: list = field(default_factory=list)
    collapsed_loss: list = field(default_factory=list)


def crosscheck(config, groups, M: int = 4, d: int = 8, mode: str = "population",
               steps: int = DEFAULT_STEPS, positional: str = "identity", seed: int = 0,
               batch_size: int = 100, noise_std: float = 1.0, record=()) -> CrosscheckResult:
    """Run full GD (verify.full_matrix) and the collapsed iterator from zero; compare."""
    from reduced_dynamics.model_a import run as run_collapsed
    from verify import full_matrix as fm

    model = fm.make_model(groups, M=M, d=d, vstar_norm2=config.vstar_norm2,
                          activation=config.activation, kappa=config.kappa,
                          sigma_prime_zero=config.sigma_prime_zero,
                          logit_scale=config.logit_scale, positional=positional, seed=seed)
    eta = config.step_size
    collapsed = run_collapsed(config, steps=steps, record=range(steps + 1))
    full = fm.gradient_descent(model, eta, steps, mode=mode, batch_size=batch_size,
                               noise_std=noise_std, seed=seed)
    if mode == "sgd":  # replay the same batches to measure the projected gradient noise
        noise_std_path = _sgd_noise_path(model, eta, steps, batch_size, noise_std, seed)
    max_dev = 0.0
    residual = 0.0
    expected_rel = 0.0
    rec = {}
    for t, pr in zip(full.steps, full.projections):
        ref = collapsed.record[t]
        col = (float(ref.C1), float(ref.C2), float(ref.C3))
        got = (pr.C1, pr.C2, pr.C3)
        for k, (a, b) in enumerate(zip(got, col)):
            if b != 0:
                max_dev = max(max_dev, abs(a - b) / abs(b))
                if mode == "sgd":
                    expected_rel = max(expected_rel, noise_std_path[t][k] / abs(b))
        residual = max(residual, pr.residual_WV, pr.residual_WKQ)
        if t in record:
            rec[t] = {"full": {"C1": pr.C1, "C2": pr.C2, "C3": pr.C3, "loss": full.loss[t]},
                      "collapsed": {"C1": col[0], "C2": col[1], "C3": col[2],
                                    "loss": float(ref.loss)}}
    return CrosscheckResult(mode, steps, eta, max_dev, residual,
                            expected_rel if mode == "sgd" else None, rec, list(full.loss),
                            [float(collapsed.record[t].loss) for t in full.steps])


def _sgd_noise_path(model, eta, steps, batch_size, noise_std, seed):
    """Random-walk size of the batch noise along (C1, C2, C3): at each step t the projection of
    eta * (batch gradient - population gradient) at the SGD iterate, accumulated in quadrature.
    Re-runs the same SGD trajectory (same seed, same batches)."""
    from verify import full_matrix as fm

    rng = np.random.default_rng(seed + 7919)  # the stream gradient_descent uses
    a_in, a_out = fm.structure_matrices(model.groups)
    W_V, W_KQ = fm.zero_state(model)
    acc = np.zeros(3)
    path = [np.zeros(3)]
    vnorm2 = float(np.sum(model.vstar**2))
    for t in range(steps):
        b = fm.batch(model, W_V, W_KQ, *fm.sample_batch(model, rng, batch_size, noise_std))
        p = fm.population(model, W_V, W_KQ)
        dV = eta * (b.grad_WV - p.grad_WV)
        dB = eta * (model.P.T @ (b.grad_WKQ - p.grad_WKQ) @ model.P)
        proj = np.array([np.sum(dV * model.vstar) / vnorm2, np.sum(dB * a_in) / np.sum(a_in),
                         -np.sum(dB * a_out) / np.sum(a_out)])
        acc += proj**2
        path.append(np.sqrt(acc))
        W_V, W_KQ = W_V - eta * b.grad_WV, W_KQ - eta * b.grad_WKQ
    return path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from rdyn.cmd_teacher import add_teacher_arguments

    add_teacher_arguments(parser)
    parser.add_argument("--d", type=int, default=8, help="input dimension d (default 8)")
    parser.add_argument("--M", type=int, default=4, help="output dimension M (default 4)")
    parser.add_argument("--mode", choices=("population", "sgd"), default="population",
                        help="exact population gradient (default) or online SGD")
    parser.add_argument("--batch", type=int, default=None,
                        help="SGD batch size N (sgd only; default 100)")
    parser.add_argument("--noise-std", type=float, default=None,
                        help="label noise standard deviation (sgd only; default 1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of V*, P and batches (default 0)")
    parser.add_argument("--P", choices=("identity", "random"), default="identity",
                        help="positional matrix: identity (default) or Haar-random orthogonal")


def run(args) -> int:
    from rdyn.cmd_teacher import parse_record, teacher_config_from_args

    require(args.dps is None, "crosscheck runs in float64 only; --dps does not apply")
    config, groups = teacher_config_from_args(args)
    steps = DEFAULT_STEPS if args.steps is None else args.steps
    require(0 <= steps <= 10**6, "--steps must be in 0..1e6 for crosscheck")
    require(args.d >= 1 and args.M >= 1, "--d and --M must be >= 1")
    if args.mode == "population":
        require(args.batch is None, "--batch applies to --mode sgd only")
        require(args.noise_std is None, "--noise-std applies to --mode sgd only")
    batch_size = 100 if args.batch is None else args.batch
    noise_std = 1.0 if args.noise_std is None else args.noise_std
    require(batch_size >= 1, f"--batch must be >= 1, got {batch_size}")
    require(noise_std >= 0, f"--noise-std must be >= 0, got {noise_std}")
    record = parse_record(args.record, steps)
    result = crosscheck(config, groups, M=args.M, d=args.d, mode=args.mode, steps=steps,
                        positional=args.P, seed=args.seed, batch_size=batch_size,
                        noise_std=noise_std, record=set(record))
    summary = {"max_rel_dev": result.max_rel_dev, "structure_residual": result.structure_residual,
               "steps": result.steps, "mode": result.mode}
    if result.expected_rel_dev is not None:
        summary["expected_rel_dev"] = result.expected_rel_dev
    summary["eta"] = result.eta
    summary["final_loss"] = {"full": result.full_loss[-1], "collapsed": result.collapsed_loss[-1]}
    summary["record"] = {str(t): v for t, v in sorted(result.record.items())}
    summary["model"] = {"D": config.D, "K": config.K, "M": args.M, "d": args.d,
                        "activation": config.activation,
                        "kappa": config.kappa if config.activation == "leaky" else None,
                        "P": args.P, "seed": args.seed, "logit_scale": config.logit_scale}
    if args.json:
        emit_json(summary)
    else:
        c = config
        lines = [f"Model A crosscheck ({result.mode}): D={c.D}, K={c.K}, M={args.M}, d={args.d}, "
                 f"{c.activation}, P={args.P}, eta={format_real(result.eta)}, steps={steps}",
                 f"  max_rel_dev = {result.max_rel_dev:.3e}   structure_residual = "
                 f"{result.structure_residual:.3e}"]
        if result.expected_rel_dev is not None:
            lines.append(f"  expected_rel_dev (batch noise, N={batch_size}) = "
                         f"{result.expected_rel_dev:.3e}")
        lines.append(f"  final excess loss: full {result.full_loss[-1]:.10g}, collapsed "
                     f"{result.collapsed_loss[-1]:.10g}")
        for t, v in sorted(result.record.items()):
            f, k = v["full"], v["collapsed"]
            lines.append(f"  t={t}: full C1={f['C1']:.12g} C2={f['C2']:.12g} C3={f['C3']:.12g} | "
                         f"collapsed C1={k['C1']:.12g} C2={k['C2']:.12g} C3={k['C3']:.12g}")
        print("\n".join(lines))
    return 0
