"""Figures 2 and 3 of the teacher-model paper (seed 000, Section 4.1): the experiments and their PNG files.

Each experiment (:func:`run_experiment`) trains the full student (:mod:`rdyn.verification.references.full_matrix`)
by online SGD from W_V = 0, W_KQ = 0 at half of eta_limit, a fresh Gaussian batch with label noise at every step,
beside the collapsed (C1, C2, C3) prediction of the same teacher. :func:`plot_figure2` draws the excess population
loss, the excess OOD loss on Exp(1) inputs and cos(W_V, V*) against the step, SGD solid and collapsed dashed, with
the log-log slopes fitted (:func:`fitted_slope`) over t >= 2 T* when the run reaches 4 T*, else over the last
decade; :func:`plot_figure3` the attention S at the last step. The paper's six experiments are CNN and GCN with ReLU and Leaky ReLU (kappa 0.1), STS and GSLP with ReLU;
for an activation the paper does not treat (:func:`experiments_with`) the four teachers with that sigma, the
collapsed side by the smooth map (:func:`rdyn.reduced_dynamics.model_a.smooth.run`), the paper's slopes context
only. Sizes, definitions and the exit status as ``rdyn figures`` states them: ``rdyn figures --help``
(docs/cli.md).
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rdyn.verification.figures.layout import output_folder, save_figure


EXPERIMENTS = (("cnn", "relu"), ("cnn", "leaky"), ("gcn", "relu"), ("gcn", "leaky"),
               ("sts", "relu"), ("gslp", "relu"))
TASKS = ("cnn", "gcn", "sts", "gslp")
PAPER_SIZES = {"cnn": (36, 4), "gcn": (20, 3), "sts": (20, 4), "gslp": (20, 1)}
QUICK_SIZES = {"cnn": (12, 3), "gcn": (12, 3), "sts": (12, 3), "gslp": (12, 1)}
PAPER_SLOPES = {"train": -1.0, "ood": -0.5}


def experiments_with(activation) -> tuple:
    """The experiments of the figures: the paper's six (``activation`` None), or each of the
    paper's teachers once with the smooth ``activation`` (an
    :class:`~rdyn.derivations.activations.Activation`)."""
    return EXPERIMENTS if activation is None else tuple((task, activation) for task in TASKS)


def activation_label(activation) -> str:
    """"ReLU", "Leaky ReLU", or a smooth activation's label (erf, ..., expr:FORMULA)."""
    if isinstance(activation, str):
        return "Leaky ReLU" if activation == "leaky" else "ReLU"
    return activation.label


@dataclass
class Experiment:
    task: str
    activation: object  # "relu" | "leaky" | a smooth Activation
    D: int
    K: int
    T_star: int | None
    steps: np.ndarray  # recorded steps
    train: np.ndarray  # population excess loss at the SGD iterate
    ood: np.ndarray  # batch excess OOD loss (paper's definition)
    cosine: np.ndarray
    collapsed_train: np.ndarray
    collapsed_ood: np.ndarray
    attention: np.ndarray  # S at the last step (P-basis: P^T-rotated logits)
    collapsed_attention: np.ndarray
    slope_train: float | None
    slope_ood: float | None
    slope_collapsed: float | None
    fit_from: int  # first step of the slope-fit window
    diverged_at_step: int | None = None  # SGD unstable (SGD_LOSS_BOUND) or out of range: no SGD slopes
    divergence_reason: str | None = None

    @property
    def label(self) -> str:
        return f"{self.task.upper()} {activation_label(self.activation)}"


#: SGD from W = 0 at half the collapsed map's stable step starts at the teacher's whole excess
#: loss L(0) and, when stable, stays below it up to batch noise; a recorded population excess
#: loss above SGD_LOSS_BOUND * L(0) (or a state out of float64's safe range) marks the SGD run as
#: diverged: its slopes are not reported and the command exits with status 3.
SGD_LOSS_BOUND = 10.0


def sgd_divergence(t: np.ndarray, train: np.ndarray, state_diverged_at: int | None):
    """(first step, reason) at which the SGD run counts as diverged, or (None, None)."""
    from rdyn.reduced_dynamics.runs.divergence import reason

    bad = np.nonzero(~np.isfinite(train) | (train > SGD_LOSS_BOUND * train[0]))[0]
    if bad.size:
        return int(t[bad[0]]), (f"the SGD population excess loss rose above {SGD_LOSS_BOUND:g} times its "
                                f"value at step 0 (SGD unstable at this step size and teacher norm)")
    if state_diverged_at is not None:
        return state_diverged_at, reason("the SGD state (W_V, W_KQ)")
    return None, None


def record_grid(steps: int, per_decade: int = 25) -> np.ndarray:
    grid = np.logspace(0, math.log10(max(steps, 2)), per_decade * max(1, int(math.log10(max(steps, 10)))))
    return np.unique(np.concatenate([[0], np.round(grid).astype(int), [steps]]))


def fitted_slope(t: np.ndarray, y: np.ndarray, start: int) -> float | None:
    """Least-squares slope of log y vs log t over t >= start and y > 0 (>= 3 points)."""
    mask = (t >= max(start, 1)) & (y > 0) & np.isfinite(y)
    if mask.sum() < 3:
        return None
    return float(np.polyfit(np.log(t[mask]), np.log(y[mask]), 1)[0])


def collapsed_prediction(activation, D: int, K: int, vstar_norm2: float, M: int, steps: int,
                         record, kappa: float = 0.1):
    """(eta, collapsed run) of the prediction: the paper's (C1, C2, C3) map for relu / leaky
    (:mod:`rdyn.reduced_dynamics.model_a.dynamics`), the smooth map of an Activation
    (:mod:`rdyn.reduced_dynamics.model_a.smooth`, M rows of equal norm); eta = half of the
    map's eta_limit."""
    if isinstance(activation, str):
        from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, run as run_collapsed

        config = TeacherConfig(D=D, K=K, activation=activation, kappa=kappa,
                               vstar_norm2=vstar_norm2)
        return config.step_size, run_collapsed(config, steps=steps, record=record)
    from rdyn.reduced_dynamics.model_a.smooth import SmoothConfig, run as run_smooth

    result = run_smooth(SmoothConfig(D=D, K=K, activation=activation, vstar_norm2=vstar_norm2,
                                     M=M), steps, record=record)
    return result.eta, result


def experiment_model(task: str, activation, D: int, K: int, vstar_norm2: float = 256.0, M: int = 4, d: int = 8,
                     seed: int = 0, kappa: float = 0.1):
    """(groups, full model) of one Section 4.1 experiment: the task's preset groups at (D, K), random
    positional encodings, V* of squared norm ``vstar_norm2``; ``activation`` as in :func:`run_experiment`."""
    from rdyn.reduced_dynamics.model_a.presets import preset_groups
    from rdyn.verification.references import full_matrix as fm

    groups = preset_groups(task, D, K)
    smooth = not isinstance(activation, str)
    model = fm.make_model(groups, M=M, d=d, vstar_norm2=vstar_norm2,
                          activation=activation.name if smooth else activation,
                          formula=activation.formula if smooth else None,
                          kappa=kappa, positional="random", seed=seed)
    return groups, model


def run_experiment(task: str, activation, steps: int, D: int, K: int,
                   vstar_norm2: float = 256.0, batch_size: int = 100, noise_std: float = 1.0,
                   M: int = 4, d: int = 8, seed: int = 0, kappa: float = 0.1) -> Experiment:
    """One SGD run of the full model next to the collapsed prediction (Section 4.1 setup);
    ``activation``: "relu", "leaky" or a smooth :class:`~rdyn.derivations.activations.Activation`."""
    from rdyn.verification.references import full_matrix as fm

    groups, model = experiment_model(task, activation, D, K, vstar_norm2, M, d, seed, kappa)
    grid = record_grid(steps)
    wanted = set(int(s) for s in grid)
    population = {}

    def on_step(t, W_V, W_KQ):
        if t in wanted:
            population[t] = fm.population(model, W_V, W_KQ, need_gradient=False).loss

    eta, collapsed = collapsed_prediction(activation, D, K, vstar_norm2, M, steps,
                                          [int(s) for s in grid], kappa)
    traj = fm.gradient_descent(model, eta, steps, mode="sgd", record=grid,
                               batch_size=batch_size, noise_std=noise_std, seed=seed,
                               callback=on_step)
    a_in, a_out = fm.structure_matrices(groups)
    ood_rng = np.random.default_rng(seed + 31337)
    X, Y, clean = fm.sample_batch(model, ood_rng, 20000, 0.0, "exponential")
    c_train, c_ood = [], []
    for s in grid:
        r = collapsed.record[int(s)]
        W_V = float(r.C1) * model.vstar
        W_KQ = model.P @ (float(r.C2) * a_in - float(r.C3) * a_out) @ model.P.T
        c_train.append(float(r.loss))
        c_ood.append(fm.batch(model, W_V, W_KQ, X, Y, clean, need_gradient=False).excess)
    last = collapsed.record[int(grid[-1])]
    logits_c = (float(last.C2) * a_in - float(last.C3) * a_out) / model.scale
    S_collapsed = np.exp(logits_c - logits_c.max(axis=0)) / np.exp(logits_c - logits_c.max(axis=0)).sum(axis=0)
    S_sgd = fm.attention(model, traj.W_KQ)  # attention over keys in the token (P) basis
    t = np.asarray(traj.steps)
    start = 2 * collapsed.T_star if collapsed.T_star and 4 * collapsed.T_star <= steps else steps // 10
    train = np.array([population[int(s)] for s in t])
    diverged_at, why = sgd_divergence(t, train, traj.diverged_at_step)
    ood = np.asarray(traj.ood_loss)
    slopes = (None, None) if diverged_at is not None else (fitted_slope(t, train, start), fitted_slope(t, ood, start))
    n_c = len(t)  # the collapsed curves are drawn over the steps the SGD reached
    return Experiment(task, activation, D, K, collapsed.T_star, t, train, ood,
                      np.asarray(traj.cosine), np.asarray(c_train[:n_c]), np.asarray(c_ood[:n_c]), S_sgd,
                      S_collapsed, *slopes, fitted_slope(grid, np.asarray(c_train), start), int(start),
                      diverged_at, why)


def _activation_title(experiments) -> str:
    """The activations of the figures, for the titles: "ReLU / Leaky ReLU" or e.g. "sigma = erf"."""
    names = list(dict.fromkeys(activation_label(e.activation) for e in experiments))
    if all(isinstance(e.activation, str) for e in experiments):
        return " / ".join(names)
    return "sigma = " + ", ".join(names) + " (beyond the paper)"


def plot_figure2(experiments, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.6), layout="constrained")
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, e in enumerate(experiments):
        c = colors[k % len(colors)]
        pos = e.steps > 0
        axes[0].loglog(e.steps[pos], e.train[pos], color=c, label=f"{e.label} ({_slope_note(e, e.slope_train)})")
        axes[0].loglog(e.steps[pos], e.collapsed_train[pos], "--", color=c, lw=1)
        ood_ok = pos & (e.ood > 0)
        axes[1].loglog(e.steps[ood_ok], e.ood[ood_ok], color=c, lw=0.8,
                       label=f"{e.label} ({_slope_note(e, e.slope_ood)})")
        axes[1].loglog(e.steps[pos], e.collapsed_ood[pos], "--", color=c, lw=1)
        axes[2].semilogx(e.steps[pos], e.cosine[pos], color=c, label=e.label)
    axes[2].axhline(1.0, ls="--", color="k", lw=1, label="collapsed (W_V = C1 V*)")
    titles = ("(a) excess training loss (population, at SGD iterate)",
              "(b) excess OOD loss (Exp(1) inputs, batch)", "(c) cosine(W_V, V*)")
    for ax, title in zip(axes, titles):
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("iteration t")
        ax.legend(fontsize=7)
    fig.suptitle(f"Figure 2 (seed 000, Sec. 4.1), {_activation_title(experiments)}: solid = online "
                 "SGD of the full model, dashed = collapsed (C1, C2, C3) prediction", fontsize=10)
    written = save_figure(fig, path, dpi=110)
    plt.close(fig)
    return written


def plot_figure3(experiments, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(experiments), figsize=(3 * len(experiments), 6.2),
                             layout="constrained")
    axes = np.atleast_2d(axes).reshape(2, len(experiments))
    for k, e in enumerate(experiments):
        for row, (S, name) in enumerate(((e.attention, "SGD"), (e.collapsed_attention, "collapsed"))):
            ax = axes[row, k]
            ax.imshow(S, cmap="viridis", vmin=0, vmax=1.0 / e.K)
            ax.set_title(f"{e.label}\n{name}", fontsize=8)
            ax.set_xlabel("query i", fontsize=7)
            ax.set_ylabel("key j", fontsize=7)
            ax.tick_params(labelsize=6)
    fig.suptitle(f"Figure 3 (seed 000), {_activation_title(experiments)}: attention "
                 f"softmax(P^T W_KQ P / D) at t = {experiments[0].steps[-1]} (colour scale 0..1/K)",
                 fontsize=10)
    written = save_figure(fig, path, dpi=110)
    plt.close(fig)
    return written


def _slope_note(e: Experiment, slope) -> str:
    if e.diverged_at_step is not None:
        return f"SGD diverged at t = {e.diverged_at_step}"
    return f"slope {_fmt(slope)}"


def _fmt(x) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def make_figures(out: Path, steps: int, quick: bool, vstar_norm2: float, batch_size: int,
                 noise_std: float, seed: int, experiments=EXPERIMENTS, progress=True):
    """Run the experiments ((task, activation) pairs, :func:`experiments_with`) and write
    figure2_loss.png, figure3_attention.png into ``out``."""
    sizes = QUICK_SIZES if quick else PAPER_SIZES
    results = []
    for task, activation in experiments:
        if progress:
            print(f"rdyn figures: {task} {activation_label(activation)}, {steps} SGD steps ...",
                  file=sys.stderr)
        D, K = sizes[task]
        results.append(run_experiment(task, activation, steps, D, K, vstar_norm2=vstar_norm2,
                                      batch_size=batch_size, noise_std=noise_std, seed=seed))
    out = output_folder(out)
    paths = {"figure2": out / "figure2_loss.png", "figure3": out / "figure3_attention.png"}
    paths["figure2"] = plot_figure2(results, paths["figure2"])   # the path written (rescued?)
    paths["figure3"] = plot_figure3(results, paths["figure3"])
    return results, paths
