"""Model A's full-matrix gradient descent beside the collapsed (C1, C2, C3) dynamics, from zero.

:func:`crosscheck` trains the full student of :mod:`.full_matrix` (``mode="population"``: the exact population
gradient; ``mode="sgd"``: a fresh batch of ``batch_size`` Gaussian inputs with label noise ``noise_std`` at every
step) and the collapsed iterator of the same configuration, and reads (C1, C2, C3) off the full matrices by
projection (``full_matrix.project``). ``max_rel_dev`` is the largest relative deviation of the full from the
collapsed state over steps 0..``steps`` and components with a nonzero collapsed value; ``structure_residual`` the
largest relative distance of W_V and P^T W_KQ P from the collapsed structure; under SGD ``expected_rel_dev`` is
the batch noise's random-walk size. The definitions, as ``rdyn crosscheck`` prints them, are in
``rdyn crosscheck --help`` (docs/cli.md). All quantities are dimensionless; steps are GD iterations.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

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
    # the first step at which the collapsed or the full-matrix state diverged
    # (reduced_dynamics/runs/divergence.py): both runs stop there and max_rel_dev,
    # structure_residual, expected_rel_dev are None (no agreement figures from a diverged run)
    diverged_at_step: int | None = None


def crosscheck(config, groups, M: int = 4, d: int = 8, mode: str = "population",
               steps: int = DEFAULT_STEPS, positional: str = "identity", seed: int = 0,
               batch_size: int = 100, noise_std: float = 1.0, record=(),
               progress: bool = False) -> CrosscheckResult:
    """Run full GD (rdyn.verification.references.full_matrix) and the collapsed iterator from zero; compare.
    ``progress``: a progress bar of the full-matrix steps on stderr."""
    from rdyn.reduced_dynamics.runs.divergence import is_diverged
    from rdyn.reduced_dynamics.model_a.dynamics import run as run_collapsed
    from rdyn.verification.references import full_matrix as fm

    model = fm.make_model(groups, M=M, d=d, vstar_norm2=config.vstar_norm2,
                          activation=config.activation, kappa=config.kappa,
                          sigma_prime_zero=config.sigma_prime_zero,
                          logit_scale=config.logit_scale, positional=positional, seed=seed)
    eta = config.step_size
    collapsed = run_collapsed(config, steps=steps, record=range(steps + 1))
    if collapsed.diverged_at_step is not None:   # compare up to the last finite step only
        steps = collapsed.diverged_at_step - 1
    bar = None
    if progress:
        import sys

        from tqdm import tqdm

        bar = tqdm(total=steps + 1, unit="step", file=sys.stderr, desc="rdyn crosscheck")
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            full = fm.gradient_descent(model, eta, steps, mode=mode, batch_size=batch_size,
                                       noise_std=noise_std, seed=seed,
                                       callback=(lambda t, W_V, W_KQ: bar.update(1)) if bar else None)
    finally:
        if bar is not None:
            bar.close()
    diverged = collapsed.diverged_at_step
    for t, pr, loss in zip(full.steps, full.projections, full.loss):
        if is_diverged((pr.C1, pr.C2, pr.C3, loss)):
            diverged = t
            break
    if full.diverged_at_step is not None:   # the full matrices left the range (run stopped)
        diverged = full.diverged_at_step if diverged is None else min(diverged, full.diverged_at_step)
    if diverged is not None:
        last = min(diverged - 1, steps)   # -1: diverged at step 0 (nothing finite to compare)
        col_loss = [float(collapsed.record[t].loss) for t in full.steps if t <= last]
        return CrosscheckResult(mode, last, eta, None, None, None, {}, list(full.loss[:last + 1]),
                                col_loss, diverged)
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
    from rdyn.verification.references import full_matrix as fm

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


def memory_terms(D: int, M: int, d: int, steps: int, batch: int, mode: str) -> dict:
    """The terms of :func:`memory_estimate` (bytes), keyed by the option that drives each:
    "--D" (the D x D work arrays), "--batch" (the SGD batch, batch x (d + M) x D),
    "--steps" (the recorded collapsed states)."""
    terms = {"--D": 8.0 * (30.0 * D * D + 4.0 * (M + d) * D), "--steps": 200.0 * (steps + 1)}
    if mode == "sgd":
        terms["--batch"] = 8.0 * 6.0 * batch * (d + M) * D
    return terms


def memory_driver(D: int, M: int, d: int, steps: int, batch: int, mode: str) -> str:
    """The option text a memory refusal names: the largest term of :func:`memory_terms`
    with its value (e.g. "--batch 1000000000000 (with --d 8, --M 4, --D 36)")."""
    terms = memory_terms(D, M, d, steps, batch, mode)
    flag = max(terms, key=terms.get)
    value = {"--D": D, "--steps": steps, "--batch": batch}[flag]
    if flag == "--batch":   # batch x (d + M) x D: name its largest factor (--mode sgd --d 1e9
        # blames --d, not the default --batch 100)
        factors = {"--batch": batch, "--d": d, "--M": M}
        big = max(factors, key=factors.get)
        others = ", ".join(f"{k} {v}" for k, v in factors.items() if k != big)
        return f"{big} {factors[big]} (with {others}, --D {D})"
    if flag == "--D" and 4.0 * (M + d) > 30.0 * D:
        return f"--M {M} / --d {d} (with --D {D})"
    return f"{flag} {value}"


def memory_estimate(D: int, M: int, d: int, steps: int, batch: int, mode: str) -> float:
    """Bytes a crosscheck needs, roughly: about 30 float64 D x D work arrays (W_KQ, its
    gradient, the softmax and its backprop, structure matrices, Gaussian forms), the batch
    (batch x d x D inputs, batch x M x D labels) in SGD mode, and the recorded collapsed states."""
    arrays = 30.0 * D * D + 4.0 * (M + d) * D
    if mode == "sgd":
        arrays += 6.0 * batch * (d + M) * D
    return 8.0 * arrays + 200.0 * (steps + 1)
