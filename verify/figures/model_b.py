"""The Model B figures of seed 003 (Section 5, Appendix G), full-matrix training vs collapsed.

Full model: GD on all eight d x d blocks of W and V (:mod:`rdyn.verification.references.full_matrix_b`, hand-
written back-propagation through LN) on one fixed training sample of (X, a), from
``W12 = 0, V21 = I`` (``alpha0 = 0, beta0 = 1``, Theorem 4.1's initialisation), other blocks
zero. (The paper uses SGD, batch 128, on 10^4 points; here full-batch GD on ``samples`` points,
so the curves are population-GD-like with a finite-sample bias.) Collapsed prediction: the
alpha/beta recursion with exact (Task 2) or QMC (Task 1) expectations, dashed.

Figures written (``out`` directory):

* ``modelB_training_loss.png``: loss against t of the LN layer and the no-LN layer with the
  normalised and the unnormalised target, Task 1 and Task 2 (paper Fig. 2 / Fig. 3);
* ``modelB_heatmaps.png``: W/||W||_max and V/||V||_max of the trained LN layer and of the
  trained looped model (Task 1) (paper Fig. 1, 4);
* ``modelB_active_parameters.png``: alpha_t, beta_t (LN layer) and w_t, v_t (looped) read off the
  matrices (trace/d of W12, V21), log-log, with fitted slopes against the claims 1/6 and 1/4;
* ``modelB_looped_error.png``: sin of the angle between y_L and the top eigenvector of a fixed
  test point against the number of loops L, for snapshots of the trained LN layer, the trained
  looped model, and the power method (paper Fig. 5).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rdyn.reduced_dynamics.model_b import run as mb
from rdyn.verification.references import full_matrix_b as fm
from rdyn.verification.figures.layout import output_folder, save_figure

PAPER_CLAIMS = {"ln_alpha": 1 / 6, "ln_beta": 1 / 6, "looped_w": 1 / 4, "looped_v": 1 / 4}
QUICK = dict(d=4, n=8, spectrum=(3, 2, 2, 1), samples=256, looped_samples=64, steps=60, L=3, eta=0.1)
PAPER = dict(d=16, n=32, spectrum=(5, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1), samples=4096,
             looped_samples=64, steps=2000, L=10, eta=0.1)


@dataclass
class Training:
    """One full-matrix GD run: losses, alpha/beta read off W12/V21, final W, V, snapshots."""
    label: str
    steps: np.ndarray
    loss: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    W: np.ndarray
    V: np.ndarray
    collapsed_loss: np.ndarray
    collapsed_alpha: np.ndarray
    collapsed_beta: np.ndarray
    snapshots: dict = field(default_factory=dict)   # step -> (W, V)


def query_column_grads(W, V, e, A, d: int, target, normalize: bool):
    """Loss and full gradients (W, V) of a single layer, computed on the query column only.

    A single layer's output ``y`` is the bottom half of column n+1 of ``LN(E + V E E^T W E)``
    and no other column enters it, so with ``A = E E^T`` (fixed data) ``z = e + V A W e`` and
    the gradients are ``gV = sum gz (A W e)^T``, ``gW = sum A V^T gz e^T``: the same full-matrix
    gradients as :func:`rdyn.verification.references.full_matrix_b.loss_and_grads` (checked in the tests) at
    O(N d^2) per step instead of O(N d^2 n).
    """
    N = e.shape[0]
    u = e @ W.T
    Au = np.einsum("mij,mj->mi", A, u)
    z = e + Au @ V.T
    if normalize:
        nz = np.linalg.norm(z, axis=1, keepdims=True)
        out = z / nz
    else:
        out = z
    r = out[:, d:] - target
    loss = float((r * r).sum(axis=1).mean())
    g = np.zeros_like(z)
    g[:, d:] = 2 * r / N
    gz = (g - out * (out * g).sum(axis=1, keepdims=True)) / nz if normalize else g
    gV = gz.T @ Au
    gu = np.einsum("mij,mj->mi", A, gz @ V)
    gW = gu.T @ e
    return loss, gW, gV


def train_full(model: str, target, data: str, p: dict, seed: int, snapshot_steps=()) -> Training:
    d = p["d"]
    spectrum = p["spectrum"] if data == "spectrum" else None
    n = sum(spectrum) if spectrum else p["n"]
    L = p["L"] if model == "looped" else 1
    samples = p["looped_samples"] if model == "looped" else p["samples"]
    setup = fm.FullSetup(model=model, target=target, data=data, d=d, n=n, spectrum=spectrum, L=L,
                         eta=p["eta"], steps=p["steps"], samples=samples, seed=seed)
    X, a = fm.sample(setup)
    S = X @ X.transpose(0, 2, 1)
    lam, vec = np.linalg.eigh(S)
    Sa = np.einsum("mij,mj->mi", S, a)
    tgt = Sa / np.linalg.norm(Sa, axis=1, keepdims=True) if target != "unnormalized" else Sa
    top = lam >= lam[:, -1:] * (1 - 1e-10)
    Vtop = vec * top[:, None, :]
    P_perp = np.eye(d) - Vtop @ Vtop.transpose(0, 2, 1)
    E0 = fm.embed(X, a)
    A0 = E0 @ E0.transpose(0, 2, 1)
    e_q = E0[:, :, -1]
    W = np.zeros((2 * d, 2 * d))
    V = np.zeros((2 * d, 2 * d))
    V[d:, :d] = np.eye(d)
    losses, al, be, snaps = [], [0.0], [1.0], {}
    for t in range(p["steps"] + 1):
        if t in snapshot_steps:
            snaps[t] = (W.copy(), V.copy())
        if model == "looped":
            loss, gW, gV, _, _ = fm.loss_and_grads(W, V, E0, setup, tgt, P_perp)
        else:
            loss, gW, gV = query_column_grads(W, V, e_q, A0, d, tgt, model == "ln")
        losses.append(loss)
        if t == p["steps"]:
            break
        W -= setup.eta * gW
        V -= setup.eta * gV
        al.append(np.trace(W[:d, d:]) / d)
        be.append(np.trace(V[d:, :d]) / d)
    cfg = mb.Config(model=model, target=target, data=data, d=d, n=n, spectrum=spectrum, L=L,
                    eta=p["eta"], steps=p["steps"], samples=max(4096, 16 * samples), seed=seed + 1)
    col = mb.run(cfg)
    label = {"ln": "LN layer", "looped": f"looped LN (L={L})"}.get(model, f"no-LN, {target} target")
    return Training(label, np.arange(p["steps"] + 1), np.array(losses), np.array(al), np.array(be), W, V,
                    np.array([float(x) for x in col.loss]), np.array([float(x) for x in col.alpha]),
                    np.array([float(x) for x in col.beta]), snaps)


def _slope(t, y, frac=0.5):
    sel = (t >= max(1, int(t[-1] * frac))) & (np.abs(y) > 0)
    if sel.sum() < 3:
        return None
    return float(np.polyfit(np.log(t[sel]), np.log(np.abs(y[sel])), 1)[0])


def test_point(d: int, n: int, seed: int):
    rng = np.random.default_rng(seed + 12345)
    X = rng.standard_normal((d, n))
    X /= np.linalg.norm(X, axis=0)
    a = rng.standard_normal(d)
    a /= np.linalg.norm(a)
    return X, a


def loop_error(W, V, X, a, Lmax: int, normalize=True):
    """sin angle(y_L, top eigenvector of X X^T) for L = 1..Lmax, the full model looped."""
    d, n = X.shape
    lam, vec = np.linalg.eigh(X @ X.T)
    top = vec[:, -1]
    E = np.zeros((2 * d, n + 1))
    E[:d, :n] = X
    E[d:, n] = a
    out = []
    for _ in range(Lmax):
        Z = E + V @ (E @ E.T) @ (W @ E)
        E = Z / np.linalg.norm(Z, axis=0, keepdims=True) if normalize else Z
        y = E[d:, n] / np.linalg.norm(E[d:, n])
        out.append(math.sqrt(max(0.0, 1 - float(y @ top) ** 2)))
    return np.array(out), lam


def power_method_error(X, a, Lmax):
    lam, vec = np.linalg.eigh(X @ X.T)
    top, y, out = vec[:, -1], a.copy(), []
    for _ in range(Lmax):
        y = X @ (X.T @ y)
        y /= np.linalg.norm(y)
        out.append(math.sqrt(max(0.0, 1 - float(y @ top) ** 2)))
    return np.array(out)


def make_figures(out: Path, quick: bool = False, seed: int = 0, steps: int | None = None, progress=None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    p = dict(QUICK if quick else PAPER)
    if steps is not None:
        p["steps"] = steps
    T = p["steps"]
    snaps = sorted({max(1, T // 20), max(1, T // 7), T})
    runs = {}
    for data in ("sphere", "spectrum"):
        for model, target in (("ln", None), ("noln", "normalized"), ("noln", "unnormalized")):
            if progress:
                progress(f"{model} {target or ''} {data}")
            runs[(model, target, data)] = train_full(model, target, data, p, seed,
                                                     snaps if (model, data) == ("ln", "sphere") else ())
    if progress:
        progress("looped sphere")
    looped = train_full("looped", None, "sphere", p, seed, snaps)
    out = output_folder(out)
    paths = {}
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    # 1. training loss
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), layout="constrained")
    for ax, data, title in zip(axes, ("sphere", "spectrum"),
                               ("Task 1 (uniform unit columns)", f"Task 2 (spectrum {p['spectrum']})")):
        for k, (model, target) in enumerate((("ln", None), ("noln", "normalized"), ("noln", "unnormalized"))):
            r = runs[(model, target, data)]
            ax.loglog(r.steps[1:], r.loss[1:], color=colors[k], label=f"{r.label} (full GD)")
            ax.loglog(r.steps[1:], r.collapsed_loss[1:], "--", color=colors[k], lw=1, label=f"{r.label} (collapsed)")
        ax.set_title(f"training loss, {title}", fontsize=10)
        ax.set_xlabel("GD step t")
        ax.set_ylabel("loss")
        ax.legend(fontsize=7)
    fig.suptitle(f"Model B (seed 003): LN vs no-LN, d={p['d']}, n={p['n']}, eta={p['eta']}, "
                 f"{p['samples']} training points (full-batch GD); dashed = collapsed prediction", fontsize=10)
    paths["training_loss"] = out / "modelB_training_loss.png"
    paths["training_loss"] = save_figure(fig, paths["training_loss"], dpi=100)
    plt.close(fig)
    # 2. heat maps
    fig, axes = plt.subplots(2, 2, figsize=(9, 8), layout="constrained")
    ln = runs[("ln", None, "sphere")]
    for row, r in enumerate((ln, looped)):
        for col, (M, name) in enumerate(((r.W, "W"), (r.V, "V"))):
            ax = axes[row, col]
            im = ax.imshow(M / np.abs(M).max(), cmap="RdBu_r", vmin=-1, vmax=1)
            ax.set_title(f"{name}/||{name}||_max, {r.label}, Task 1, t={T}", fontsize=9)
            ax.axhline(p["d"] - 0.5, color="k", lw=0.5)
            ax.axvline(p["d"] - 0.5, color="k", lw=0.5)
            fig.colorbar(im, ax=ax, fraction=0.046)
    fig.suptitle("learned matrices: only the diagonals of W12 (top right) and V21 (bottom left) survive",
                 fontsize=10)
    paths["heatmaps"] = out / "modelB_heatmaps.png"
    paths["heatmaps"] = save_figure(fig, paths["heatmaps"], dpi=100)
    plt.close(fig)
    # 3. active parameters
    slopes = {"ln_alpha": _slope(ln.steps, ln.alpha), "ln_beta": _slope(ln.steps, ln.beta),
              "looped_w": _slope(looped.steps, looped.alpha), "looped_v": _slope(looped.steps, looped.beta),
              "ln_alpha_collapsed": _slope(ln.steps, ln.collapsed_alpha),
              "looped_w_collapsed": _slope(looped.steps, looped.collapsed_alpha)}
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), layout="constrained")
    for ax, r, names, keys, claim in ((axes[0], ln, ("alpha", "beta"), ("ln_alpha", "ln_beta"), "1/6"),
                                      (axes[1], looped, ("w", "v"), ("looped_w", "looped_v"), "1/4")):
        for k, (series, col_series, name, key) in enumerate(((r.alpha, r.collapsed_alpha, names[0], keys[0]),
                                                             (r.beta, r.collapsed_beta, names[1], keys[1]))):
            s = slopes[key]
            ax.loglog(r.steps[1:], np.abs(series[1:]), color=colors[k],
                      label=f"{name}_t full GD (slope {'n/a' if s is None else f'{s:.3f}'})")
            ax.loglog(r.steps[1:], np.abs(col_series[1:]), "--", color=colors[k], lw=1, label=f"{name}_t collapsed")
        ax.set_title(f"active parameters, {r.label}, Task 1 (paper: Theta(t^{claim}))", fontsize=10)
        ax.set_xlabel("GD step t")
        ax.legend(fontsize=7)
    paths["active_parameters"] = out / "modelB_active_parameters.png"
    paths["active_parameters"] = save_figure(fig, paths["active_parameters"], dpi=100)
    plt.close(fig)
    # 4. looped error vs number of loops
    Xt, at = test_point(p["d"], p["n"], seed)
    Lmax = 25
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), layout="constrained")
    Ls = np.arange(1, Lmax + 1)
    for ax, r, title in ((axes[0], ln, "LN layer trained T steps, looped at inference"),
                         (axes[1], looped, f"looped model (trained with L={p['L']})")):
        for k, t in enumerate(sorted(r.snapshots)):
            W, V = r.snapshots[t]
            err, _ = loop_error(W, V, Xt, at, Lmax)
            ax.semilogy(Ls, np.maximum(err, 1e-17), "o-", ms=3, color=colors[k], label=f"T = {t} (full GD)")
            d = p["d"]   # collapsed: W12 = alpha_T I, V21 = beta_T I (power iteration with I + gamma S)
            Wc, Vc = np.zeros_like(W), np.zeros_like(V)
            Wc[:d, d:] = r.collapsed_alpha[t] * np.eye(d)
            Vc[d:, :d] = r.collapsed_beta[t] * np.eye(d)
            errc, _ = loop_error(Wc, Vc, Xt, at, Lmax)
            ax.semilogy(Ls, np.maximum(errc, 1e-17), "--", lw=1, color=colors[k], label=f"T = {t} (collapsed)")
        ax.semilogy(Ls, np.maximum(power_method_error(Xt, at, Lmax), 1e-17), "k--", label="power method")
        npts = p["looped_samples"] if r is looped else p["samples"]
        ax.set_title(f"{title}, {npts} training points", fontsize=9)
        ax.set_xlabel("number of loops L")
        ax.set_ylabel("sin angle(y_L, top eigenvector)")
        ax.legend(fontsize=7)
    fig.suptitle("fixed test point (uniform unit columns); collapsed: geometric decay at rate (1+g l2)/(1+g l1); "
                 "full GD plateaus where finite-sample off-diagonal W12 moves the fixed point", fontsize=9)
    paths["looped_error"] = out / "modelB_looped_error.png"
    paths["looped_error"] = save_figure(fig, paths["looped_error"], dpi=100)
    plt.close(fig)
    table = {"slopes": slopes, "paper_claims": PAPER_CLAIMS,
             "final_loss": {f"{m} {t or ''} {dt}".replace("  ", " "): float(r.loss[-1]) for (m, t, dt), r in runs.items()},
             "final_collapsed_loss": {f"{m} {t or ''} {dt}".replace("  ", " "): float(r.collapsed_loss[-1])
                                      for (m, t, dt), r in runs.items()},
             "sizes": {k: (list(v) if isinstance(v, tuple) else v) for k, v in p.items()}}
    return paths, table
