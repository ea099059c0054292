"""Model B (seed 003): collapsed GD dynamics of attention with/without layer normalisation.

Symbols. X in R^{d x n} has unit-norm columns, S = X X^T; a is uniform on S^{d-1}.
Collapsed structure: W12 = alpha I, V21 = beta I, all other blocks zero; gamma = alpha*beta
(looped model: w, v, rho = w v, reported under the keys alpha, beta, gamma).
Recursion (simultaneous): alpha' = alpha - eta beta F(gamma), beta' = beta - eta alpha F(gamma),
F = L'(gamma)/d = tr(grad_W12 L)/(d beta). Losses carry no factor 1/2.
  ln      : LN layer, loss E||h/||h|| - S a/||S a||| |^2, h = a + gamma S a.
  noln    : no-LN layer, loss E||a + gamma S a - y_target||^2, target normalized S a/||S a||
            or unnormalized S a.
  looped  : L looped LN layers, loss E[Dist^2(y_L, top eigenspace of S)].
kappa1 = E[a^T S a], kappa2 = E||S a||^2 (exact rationals), kappa3 = E||S a||.
Expectations (--expectation auto): exact (quadrature at the working precision) for --data
spectrum with at most 4 distinct eigenvalues (single layers; the looped model: at most 2),
otherwise randomised quasi-Monte Carlo: --replicas R independent scrambled-Sobol point sets
(--samples points in total), each a full trajectory; the reported values are the replica means
and std_error their standard errors (object: alpha, beta, gamma, loss). monte_carlo: one
fixed sample, std_error of the final loss only. --dps needs an exact expectation. All
quantities are dimensionless; steps are GD iterations.
"""
from __future__ import annotations

import sys

import mpmath

from rdyn.cmd_teacher import add_checkpoint_arguments, checkpoint_options, run_with_checkpoints
from rdyn.output import UsageError, emit_json, format_real, require
from reduced_dynamics import model_b as mb

NAME = "ln"
HELP = "Model B: alpha/beta recursions of attention with/without layer normalisation"

_DEFAULTS = {"target": None, "L": None}


def add_arguments(parser) -> None:
    parser.add_argument("--model", choices=mb.MODELS, default="ln",
                        help="ln: one LN layer (default); noln: one layer without LN; "
                        "looped: L looped LN layers")
    parser.add_argument("--target", choices=("normalized", "unnormalized"), default=None,
                        help="no-LN layer only (default normalized)")
    parser.add_argument("--data", choices=("sphere", "spectrum"), default=None,
                        help="Task 1 (sphere, default) or Task 2 (fixed spectrum)")
    parser.add_argument("--d", type=int, default=16, help="dimension d of the tokens (default 16)")
    parser.add_argument("--n", type=int, default=None,
                        help="number n of data columns of X (default 32, or sum of --spectrum)")
    parser.add_argument("--spectrum", type=str, default=None,
                        help="Task 2: multiplicities m1,...,md (positive integers; S has "
                        "eigenvalues m_i)")
    parser.add_argument("--L", type=int, default=None,
                        help="number of looped layers (looped only; default 10)")
    parser.add_argument("--eta", type=float, default=0.1, help="GD step size (default 0.1)")
    parser.add_argument("--steps", type=int, default=2000, help="GD steps (default 2000)")
    parser.add_argument("--alpha0", type=float, default=0.0,
                        help="initial alpha (looped: w) (default 0)")
    parser.add_argument("--beta0", type=float, default=1.0,
                        help="initial beta (looped: v) (default 1)")
    parser.add_argument("--samples", type=int, default=100000,
                        help="points, when the expectation is not exact (default 100000; qmc: "
                        "in total over the replicas, each rounded up to a power of 2)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the Monte Carlo sample / QMC scrambles (default 0)")
    parser.add_argument("--expectation", choices=mb.EXPECTATIONS, default="auto",
                        help="auto (default): exact where available, else qmc; exact; qmc "
                        "(R scrambled-Sobol replicas with standard errors); monte_carlo (one sample)")
    parser.add_argument("--replicas", type=int, default=None,
                        help="qmc only: number R of independent replicas (default 16)")
    parser.add_argument("--record", type=str, default=None,
                        help="qmc only: comma-separated steps at which to report means and "
                        "standard errors (JSON key record)")
    add_checkpoint_arguments(parser)


def config_from_args(args) -> mb.Config:
    """Validate the options (UsageError on bad input) and build the run configuration."""
    model = args.model
    require(args.target is None or model == "noln", "--target applies only to --model noln")
    require(args.L is None or model == "looped", "--L applies only to --model looped")
    data = args.data or ("spectrum" if args.spectrum is not None else "sphere")
    require(args.spectrum is None or data == "spectrum", "--spectrum requires --data spectrum")
    require(args.d >= 2, "--d must be at least 2")
    spectrum = None
    if data == "spectrum":
        require(args.spectrum is not None, "--data spectrum requires --spectrum m1,...,md")
        try:
            spectrum = tuple(int(s) for s in args.spectrum.split(","))
        except ValueError:
            raise UsageError(f"--spectrum must be comma-separated integers, got {args.spectrum!r}")
        require(len(spectrum) == args.d, f"--spectrum has {len(spectrum)} entries, expected d = {args.d}")
        require(all(m > 0 for m in spectrum), "--spectrum entries must be positive integers")
        n = sum(spectrum)
        require(args.n is None or args.n == n, f"--n {args.n} differs from sum(spectrum) = {n}")
    else:
        n = 32 if args.n is None else args.n
        require(n >= args.d, f"--n ({n}) must be at least --d ({args.d}) for sphere data")
    L = 10 if args.L is None else args.L
    require(L >= 1, "--L must be at least 1")
    require(args.eta > 0 and args.eta == args.eta and args.eta != float("inf"), "--eta must be positive")
    require(args.steps >= 0, "--steps must be non-negative")
    require(args.samples >= 2, "--samples must be at least 2")
    require(not (args.alpha0 == 0 and args.beta0 == 0), "alpha0 = beta0 = 0: nothing can move")
    target = (args.target or "normalized") if model == "noln" else None
    require(args.seed >= 0, "--seed must be non-negative")
    cfg = mb.Config(model=model, target=target, data=data, d=args.d, n=n, spectrum=spectrum,
                    L=L, eta=args.eta, steps=args.steps, alpha0=args.alpha0, beta0=args.beta0,
                    dps=args.dps, samples=args.samples, seed=args.seed,
                    expectation=args.expectation, replicas=16 if args.replicas is None else args.replicas)
    try:
        kind = mb.resolve_expectation(cfg)
    except mb.ExactUnavailable as exc:
        raise UsageError(f"--expectation exact: {exc}") from None
    require(args.dps is None or kind == "exact",
            f"--dps needs an exact expectation; this run uses {kind} (float64)")
    require(args.replicas is None or kind == "qmc", "--replicas applies only to qmc expectations")
    require(args.record is None or kind == "qmc", "--record applies only to qmc expectations")
    require(cfg.replicas >= 2, "--replicas must be at least 2")
    require(kind != "qmc" or (args.checkpoint is None and args.resume is None),
            "--checkpoint/--resume apply to exact and monte_carlo expectations, not qmc")
    return cfg


def record_steps(args, steps: int) -> list[int]:
    if args.record is None:
        return []
    try:
        rec = sorted({int(s) for s in args.record.split(",")})
    except ValueError:
        raise UsageError(f"--record must be comma-separated integers, got {args.record!r}") from None
    require(all(0 <= s <= steps for s in rec), f"--record steps must be in 0..{steps}")
    return rec


def _rational(x, dps):
    """A Fraction as float64, or as mpf with ``dps`` digits (no float round trip)."""
    if dps is None:
        return float(x)
    with mpmath.workdps(dps + 10):
        return mpmath.mpf(x.numerator) / x.denominator


def summarize(cfg: mb.Config, tr: mb.Trajectory) -> dict:
    """The JSON object of the contract plus the model-specific reports."""
    c = tr.constants
    out = {"alpha": tr.alpha[-1], "beta": tr.beta[-1], "gamma": tr.gamma[-1], "loss": tr.loss[-1],
           "kappa1": _rational(c.kappa1_exact, cfg.dps),
           "kappa2": _rational(c.kappa2_exact, cfg.dps), "kappa3": c.kappa3,
           "gamma_star": tr.gamma_star, "expectation": tr.expectation, "std_error": tr.std_error,
           "steps": cfg.steps, "model": cfg.model}
    if tr.expectation == "qmc":
        out["replicas"] = tr.extras["replicas"]
        out["points_per_replica"] = tr.extras["points_per_replica"]
    lam, c2 = mb.test_spectrum(cfg)
    top = lam[0]
    below = lam[lam < top * (1 - 1e-12)]
    lam_next = float(below[0]) if below.size else float(top)
    t_from = max(1, cfg.steps // 2)
    if cfg.model == "ln":
        g = float(tr.gamma[-1])
        d_cubes = (tr.gamma[-1] ** 3 - tr.gamma[-2] ** 3) if cfg.steps >= 1 else None
        out["contraction"] = {"R_t": mb.contraction_ratio(g, top, lam_next),
                              "power_method_ratio": lam_next / top,
                              "lambda_1": float(top), "lambda_r_plus_1": lam_next}
        out["growth"] = {"upsilon3": c.upsilon3,
                         "predicted_gamma_cube_increment": 12 * cfg.eta * float(c.upsilon3) / cfg.d,
                         "last_gamma_cube_increment": d_cubes,
                         "exponent_gamma": mb.fitted_exponent(tr.gamma, t_from),
                         "exponent_alpha": mb.fitted_exponent(tr.alpha, t_from),
                         "exponent_beta": mb.fitted_exponent(tr.beta, t_from),
                         "claimed": {"gamma": 1 / 3, "alpha": 1 / 6, "beta": 1 / 6}}
    elif cfg.model == "noln":
        gs = float(tr.gamma_star)
        out["contraction"] = {"R_star": mb.contraction_ratio(gs, top, lam_next),
                              "power_method_ratio": lam_next / top,
                              "lambda_1": float(top), "lambda_r_plus_1": lam_next}
        k2 = float(c.kappa2_exact)
        if cfg.target == "unnormalized":
            irreducible = 1 - float(c.kappa1_exact) ** 2 / k2
        else:
            irreducible = 2 - 2 * float(c.kappa4) - (float(c.kappa3) - float(c.kappa1_exact)) ** 2 / k2
        out["irreducible_loss"] = irreducible
    else:
        rho = float(tr.gamma[-1])
        out["theorem_4_7"] = mb.theorem_4_7(rho, cfg.L, lam, c2)
        d_sq = (tr.gamma[-1] ** 2 - tr.gamma[-2] ** 2) if cfg.steps >= 1 else None
        out["growth"] = {"upsilon1": tr.upsilon1,
                         "predicted_rho_square_increment": 4 * cfg.eta * float(tr.upsilon1) / cfg.d,
                         "last_rho_square_increment": d_sq,
                         "exponent_rho": mb.fitted_exponent(tr.gamma, t_from),
                         "exponent_w": mb.fitted_exponent(tr.alpha, t_from),
                         "exponent_v": mb.fitted_exponent(tr.beta, t_from),
                         "claimed": {"rho": 1 / 2, "w": 1 / 4, "v": 1 / 4}}
    return out


def run(args) -> int:
    cfg = config_from_args(args)
    record = record_steps(args, cfg.steps)
    long_run = cfg.steps >= 400

    def progress(t):
        if long_run:
            print(f"rdyn ln: step {t}/{cfg.steps}", file=sys.stderr)

    options = checkpoint_options(args)
    try:
        tr, status = run_with_checkpoints(NAME, args, lambda: mb.run(cfg, progress, **options))
    except mb.ExactUnavailable as exc:
        hint = "drop --dps (float64 exact) or use --expectation qmc" if cfg.dps is not None \
            else "use --expectation qmc"
        raise UsageError(f"{exc}; {hint}") from None
    if status is not None:
        return status
    result = summarize(cfg, tr)
    if record:
        ses = tr.extras["series_std_error"]
        result["record"] = {str(t): {**{k: getattr(tr, k)[t] for k in ("alpha", "beta", "gamma", "loss")},
                                     "std_error": {k: ses[k][t] for k in ses}} for t in record}
    if args.json:
        emit_json(result, cfg.dps)
        return 0
    print(f"rdyn ln: model={cfg.model}" + (f" target={cfg.target}" if cfg.target else "")
          + f" data={cfg.data} d={cfg.d} n={cfg.n} eta={cfg.eta} steps={cfg.steps}"
          + f" expectation={tr.expectation}")
    names = ("w", "v", "rho") if cfg.model == "looped" else ("alpha", "beta", "gamma")
    for key, name in zip(("alpha", "beta", "gamma"), names):
        print(f"  {name:12s} {format_real(result[key])}")
    if tr.expectation == "qmc":
        print(f"  qmc: {result['replicas']} replicas x {result['points_per_replica']} points")
    se = result["std_error"]
    if isinstance(se, dict):
        for key, name in zip(("alpha", "beta", "gamma"), names):
            print(f"  {name + ' SE':12s} {format_real(se[key], 3)}")
    print(f"  {'loss':12s} {format_real(result['loss'])}"
          + (f" +- {format_real(se['loss'] if isinstance(se, dict) else se, 3)}" if se is not None else ""))
    for key in ("kappa1", "kappa2", "kappa3", "gamma_star"):
        if result[key] is not None:
            print(f"  {key:12s} {format_real(result[key])}")
    for block in ("contraction", "growth", "theorem_4_7"):
        if block in result:
            items = ", ".join(f"{k}={format_real(v, 6) if not isinstance(v, dict) else v}"
                              for k, v in result[block].items() if k != "claimed")
            print(f"  {block}: {items}")
    return 0
