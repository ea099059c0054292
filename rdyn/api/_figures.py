"""``rdyn.figures``: Figures 2 and 3 of the teacher-model paper as PNG files."""
from __future__ import annotations

from pathlib import Path

from rdyn.api._common import options
from rdyn.api._signature import api_function


@api_function("figures")
def figures(**kwargs):
    """``paper="A"`` (default): reproduce Figures 2 and 3 of seed 000 (Section 4.1): online SGD
    of the full model next to the collapsed prediction, for the six experiments of the paper.
    ``paper="B"``: the Model B figures of seed 003 (JSON keys ``figures``, ``slopes``,
    ``paper_claims``, ``final_loss``, ``final_collapsed_loss``, ``sizes``).

    Returns
    -------
    rdyn.result.Result
        The keys of ``rdyn figures --json`` (paper A): ``figures`` (the PNG paths),
        ``experiments`` (per experiment: fitted log-log slopes of the training, OOD and
        collapsed losses, T*, final cosine of W_V and V*), ``paper_slopes``, ``steps``.
    """
    return run(options("figures", kwargs))


def run(v: dict, progress: bool = False):
    from rdyn.result import Result
    from rdyn.output import UsageError

    if v["paper"] == "B":
        return _run_paper_b(v, progress)
    from rdyn.verification.figures import PAPER_SLOPES, make_figures

    from rdyn.options import check_memory
    from rdyn.verification.crosscheck import memory_driver, memory_estimate

    steps = v["steps"] if v["steps"] is not None else (1500 if v["quick"] else 20000)
    if steps < 10:
        raise UsageError(f"--steps must be in 10..1000000 for --paper A, got {steps}")
    # the largest experiment: D = 36 (cnn), M = 4, d = 8, online SGD with --batch inputs
    sizes = (12 if v["quick"] else 36, 4, 8, steps, 100 if v["batch"] is None else v["batch"],
             "sgd")
    check_memory(memory_driver(*sizes), memory_estimate(*sizes))
    results, paths = make_figures(Path(v["out"]), steps, v["quick"],
                                  256.0 if v["vstar_norm2"] is None else v["vstar_norm2"],
                                  100 if v["batch"] is None else v["batch"],
                                  1.0 if v["noise_std"] is None else v["noise_std"], v["seed"])
    table = [{"experiment": e.label, "D": e.D, "K": e.K, "T_star": e.T_star,
              "fit_from": e.fit_from, "slope_train": e.slope_train, "slope_ood": e.slope_ood,
              "slope_collapsed": e.slope_collapsed, "final_cosine": float(e.cosine[-1]),
              "final_train": float(e.train[-1]), "final_collapsed": float(e.collapsed_train[-1])}
             for e in results]
    summary = {"figures": {k: str(p) for k, p in paths.items()}, "experiments": table,
               "paper_slopes": PAPER_SLOPES, "steps": steps}
    return Result(summary, None, detail={"experiments": results})


def _run_paper_b(v: dict, progress: bool):
    """Model B figures (seed 003): full-matrix GD of the LN / no-LN layers and the looped
    model with the collapsed prediction drawn over them (rdyn.verification.model_b_figures)."""
    import sys

    from rdyn.output import UsageError
    from rdyn.result import Result
    from rdyn.verification.model_b_figures import make_figures as make_b

    if v["steps"] is not None and v["steps"] > 10**5:
        raise UsageError(f"--steps must be in 2..100000 for --paper B, got {v['steps']}")
    report = (lambda m: print(f"rdyn figures: training {m} ...", file=sys.stderr)) \
        if progress else (lambda m: None)
    paths, table = make_b(Path(v["out"]), quick=v["quick"], seed=v["seed"], steps=v["steps"],
                          progress=report)
    return Result({"figures": {k: str(p) for k, p in paths.items()}, **table}, None,
                  detail={"paths": paths})
