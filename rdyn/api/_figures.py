"""``rdyn.figures``: Figures 2 and 3 of the teacher-model paper as PNG files."""
from __future__ import annotations

import sys
from pathlib import Path

from rdyn.api._common import options
from rdyn.options.engine_errors import usage_errors
from rdyn.api._signature import api_function
from rdyn.option_types import FiguresOptions


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
        collapsed losses, T*, final cosine of W_V and V*), ``paper_slopes`` (the paper's
        claims, for ReLU / Leaky ReLU), ``steps``, ``activation`` ("paper": the paper's six
        ReLU / Leaky experiments; else the smooth activation of ``activation=`` /
        ``activation_expr=``), ``activation_expr``.
    """
    return run(options("figures", kwargs))


def run(v: FiguresOptions, progress: bool = False):
    from rdyn.result import Result
    from rdyn.output import UsageError

    if v.paper == "B":
        return _run_paper_b(v, progress)
    from rdyn.verification.figures.model_a import PAPER_SLOPES, experiments_with, make_figures

    from rdyn.options import check_memory
    from rdyn.verification.references.crosscheck import memory_driver, memory_estimate

    steps = v.steps if v.steps is not None else (1500 if v.quick else 20000)
    if steps < 10:
        raise UsageError(f"--steps must be in 10..1000000 for --paper A, got {steps}")
    # the largest experiment: D = 36 (cnn), M = 4, d = 8, online SGD with --batch inputs
    sizes = (12 if v.quick else 36, 4, 8, steps, 100 if v.batch is None else v.batch,
             "sgd")
    check_memory(memory_driver(*sizes), memory_estimate(*sizes))
    activation = smooth_activation(v)
    if progress:
        from rdyn.run_time import announce, figures_estimate, figures_smooth_estimate

        announce(figures_estimate(steps, v.quick) if activation is None else
                 figures_smooth_estimate(steps, v.quick, activation.label), quiet=False)
    with usage_errors():   # e.g. a quadrature rule that cannot reach float64 for this teacher
        results, paths = make_figures(Path(v.out), steps, v.quick,
                                      default_vstar_norm2(activation) if v.vstar_norm2 is None
                                      else v.vstar_norm2,
                                      100 if v.batch is None else v.batch,
                                      1.0 if v.noise_std is None else v.noise_std,
                                      v.seed, experiments=experiments_with(activation))
    table = [{"experiment": e.label, "D": e.D, "K": e.K, "T_star": e.T_star,
              "fit_from": e.fit_from, "slope_train": e.slope_train, "slope_ood": e.slope_ood,
              "slope_collapsed": e.slope_collapsed, "final_cosine": float(e.cosine[-1]),
              "final_train": float(e.train[-1]), "final_collapsed": float(e.collapsed_train[-1]),
              "diverged_at_step": e.diverged_at_step, "divergence_reason": e.divergence_reason}
             for e in results]
    summary = {"figures": {k: str(p) for k, p in paths.items()}, "experiments": table,
               "paper_slopes": PAPER_SLOPES, "steps": steps,
               "activation": "paper" if activation is None else activation.name,
               "activation_expr": None if activation is None else activation.formula}
    return Result(summary, None, detail={"experiments": results})


def default_vstar_norm2(activation) -> float:
    """||V*||_F^2 when --vstar-norm2 is not given: the paper's 256 for relu / leaky (a large
    teacher shortens T* ~ 1/||V*||^2); 2 (rows of norm 1/sqrt(2) for M = 4) for a smooth
    activation, whose saturation at rows of norm 8 no float64 Gauss-Hermite rule of the
    collapsed map resolves (tanh with K = 1 fails from ||V*||_F^2 = 4; every activation and
    teacher of the figures passes at 3)."""
    return 256.0 if activation is None else 2.0


def smooth_activation(v: FiguresOptions):
    """The smooth :class:`~rdyn.derivations.activations.Activation` of ``--activation`` /
    ``--activation-expr`` (validated by rdyn/options/value_checks.py), or None for the paper's experiments."""
    from rdyn.derivations.activations import Activation

    formula = v.activation_expr
    name = "expr" if formula is not None else v.activation
    if name is None:
        return None
    from rdyn.output import require

    require(name != "expr" or formula is not None, "--activation expr needs --activation-expr EXPR")
    return Activation(name, formula)


def _run_paper_b(v: FiguresOptions, progress: bool):
    """Model B figures (seed 003): full-matrix GD of the LN / no-LN layers and the looped
    model with the collapsed prediction drawn over them (rdyn.verification.figures.model_b)."""
    from rdyn.output import UsageError
    from rdyn.result import Result
    from rdyn.verification.figures.model_b import make_figures as make_b

    if v.steps is not None and v.steps > 10**5:
        raise UsageError(f"--steps must be in 2..100000 for --paper B, got {v.steps}")
    if progress:
        from rdyn.run_time import announce, figures_b_estimate
        from rdyn.verification.figures.model_b import PAPER, QUICK

        steps = v.steps if v.steps is not None else (QUICK if v.quick else PAPER)["steps"]
        announce(figures_b_estimate(steps, v.quick), quiet=False)
    report = (lambda m: print(f"rdyn figures: training {m} ...", file=sys.stderr)) \
        if progress else (lambda m: None)
    paths, table = make_b(Path(v.out), quick=v.quick, seed=v.seed, steps=v.steps,
                          progress=report)
    return Result({"figures": {k: str(p) for k, p in paths.items()}, **table}, None,
                  detail={"paths": paths})
