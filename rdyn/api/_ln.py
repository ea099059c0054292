"""``rdyn.ln``: Model B's collapsed alpha/beta recursions (seed 003)."""
from __future__ import annotations

import sys

from rdyn.api._common import checkpoint_errors, options
from rdyn.options.engine_errors import usage_errors
from rdyn.api._signature import api_function
from rdyn.option_types import LnOptions
from rdyn.options import check_memory, integral

MAX_SPECTRUM_ENTRIES = 10**6   # d (one entry per eigen-direction)
MAX_MULTIPLICITY = 10**12      # n = sum(spectrum) data columns; float64 sums stay exact
from rdyn.output import UsageError, require


# the blocks of a run's report that are figures computed from the trajectory (fits, ratios,
# theorem bounds): not reported for a diverged run
DIVERGED_DROPS = ("contraction", "growth", "theorem_4_7", "irreducible_loss")


def model_config(v: LnOptions):
    """Validate the Model B options (UsageError on bad input) and build the configuration."""
    from rdyn.reduced_dynamics.model_b import run as mb

    model = v.model
    data = v.data or ("spectrum" if v.spectrum is not None else "sphere")
    require(v.spectrum is None or data == "spectrum", "--spectrum requires --data spectrum")
    d = v.d
    spectrum = None
    if data == "spectrum":
        require(v.spectrum is not None, "--data spectrum requires --spectrum m1,...,md")
        raw = v.spectrum
        entries = raw.split(",") if isinstance(raw, str) else list(raw or ())
        parsed = tuple(integral(m) for m in entries)   # the integer rule of rdyn.options
        require(None not in parsed, f"--spectrum must be integers (m1,...,md), got {raw!r}")
        spectrum = tuple(m for m in parsed if m is not None)
        require(len(spectrum) <= MAX_SPECTRUM_ENTRIES and all(m <= MAX_MULTIPLICITY for m in spectrum),
                f"--spectrum: at most {MAX_SPECTRUM_ENTRIES} entries of at most "
                f"{MAX_MULTIPLICITY} each")
        require(len(spectrum) == d, f"--spectrum has {len(spectrum)} entries, expected d = {d}")
        require(all(m > 0 for m in spectrum), "--spectrum entries must be positive integers")
        n = sum(spectrum)
        require(v.n is None or v.n == n, f"--n {v.n} differs from sum(spectrum) = {n}")
    else:
        n = 32 if v.n is None else v.n
        require(n >= d, f"--n ({n}) must be at least --d ({d}) for sphere data")
    L = 10 if v.L is None else v.L
    require(not (v.alpha0 == 0 and v.beta0 == 0), "alpha0 = beta0 = 0: nothing can move")
    target = (v.target or "normalized") if model == "noln" else None
    with usage_errors():
        cfg = mb.Config(model=model, target=target, data=data, d=d, n=n, spectrum=spectrum,
                        L=L, eta=v.eta, steps=v.steps, alpha0=v.alpha0,
                        beta0=v.beta0, dps=v.dps, samples=v.samples, seed=v.seed,
                        expectation=v.expectation,
                        replicas=16 if v.replicas is None else v.replicas)
    try:
        kind = mb.resolve_expectation(cfg)
    except mb.ExactUnavailable as exc:
        raise UsageError(f"--expectation exact: {exc}") from None
    require(cfg.dps is None or kind == "exact",
            f"--dps applies only when the expectation is exact (--data spectrum and "
            f"alpha0*beta0 >= 0, or --model noln --target unnormalized); this run uses {kind} (float64)")
    if kind == "exact" and spectrum is not None and cfg.dps is not None:
        from rdyn.reduced_dynamics.model_b.exact import gaussian_route_at
        from rdyn.reduced_dynamics.model_b.gaussian_route import dps_refusal

        refusal = dps_refusal(spectrum, cfg.dps) if gaussian_route_at(spectrum, model, cfg.dps) else None
        require(refusal is None, f"{refusal}; lower --dps, or drop it (float64 exact)")
    if kind == "exact" and spectrum is not None:
        gaussian_route_size(model, spectrum, cfg.dps, L)
    require(v.replicas is None or kind == "qmc", "--replicas applies only to qmc expectations")
    require(v.record is None or kind == "qmc", "--record applies only to qmc expectations")
    require(kind != "qmc" or (v.checkpoint is None and v.resume is None),
            "--checkpoint/--resume apply to exact and monte_carlo expectations, not qmc")
    if kind != "exact":
        # the sample: levels, masses and weights per sample and eigen-direction (float64)
        check_memory(f"--samples {cfg.samples} with --d {d}", 8.0 * 4 * cfg.samples * (d + 2))
    if data == "sphere" and kind in ("qmc", "monte_carlo"):
        from rdyn.reduced_dynamics.model_b.qmc import points_per_replica
        from rdyn.reduced_dynamics.model_b.sampling import (SOBOL_MAX_DIMENSION, SPHERE_CHUNK,
                                                            sphere_sample_bytes)

        if kind == "qmc":  # every replica's points at once, d n + d Sobol coordinates each
            require(d * n + d <= SOBOL_MAX_DIMENSION,
                    f"--d {d} with --n {n}: quasi-Monte Carlo needs d n + d = {d * n + d} Sobol "
                    f"dimensions, at most {SOBOL_MAX_DIMENSION}; lower --d/--n or use "
                    "--expectation monte_carlo")
            points = points_per_replica(cfg.samples, cfg.replicas)
        else:
            points = min(cfg.samples, SPHERE_CHUNK)
        check_memory(f"--d {d} with --n {n} ({points} points at once)",
                     sphere_sample_bytes(d, n, points))
    return cfg


def gaussian_route_size(model: str, spectrum: tuple, dps, L: int) -> None:
    """Sizes of an exact run on the Gaussian route, checked before any grid is built
    (UsageError): the looped model's float64 tau grid must not overflow (its nodes e^tau reach
    about (lam_max/lam_min)^(2L)), and the grid (nodes x distinct eigenvalues, a few arrays of
    it) must fit in memory."""
    from rdyn.reduced_dynamics.model_b.exact import gaussian_route_at
    from rdyn.reduced_dynamics.model_b import gaussian as gq

    if not gaussian_route_at(tuple(spectrum), model, dps):
        return
    looped = model == "looped"
    if looped and dps is None and gq.looped_tau_reach(tuple(spectrum), L) > gq.FLOAT64_TAU_MAX:
        reach = gq.looped_tau_reach(tuple(spectrum), L)
        raise UsageError(
            f"--L {L}: the looped model's exact float64 quadrature for this spectrum needs "
            f"e^{2 * reach:.0f} (about (lam_max/lam_min)^(4L)), beyond float64's range; use "
            "--expectation qmc")
    r = len(set(spectrum))
    nodes = gq.grid_nodes(tuple(spectrum), dps, L if looped else None)
    per_value = 8.0 if dps is None else 48.0 + dps / 2   # float64, or an MPFR object
    check_memory(f"{'--L ' + str(L) + ' with ' if looped else ''}--spectrum ({r} distinct "
                 f"eigenvalues: {nodes} quadrature nodes each)", 8 * per_value * nodes * r)


@api_function("ln")
def ln(**kwargs):
    """Iterate Model B's collapsed recursion (docs/models_and_conventions.md, Model B).

    Returns
    -------
    rdyn.result.Result
        The keys of ``rdyn ln --json``: ``alpha``, ``beta``, ``gamma = alpha beta``,
        ``loss`` (final values; looped model: w, v, rho under the same keys), ``kappa1 =
        E[a^T S a]``, ``kappa2 = E||S a||^2``, ``kappa3 = E||S a||``, ``gamma_star``
        (no-LN only), ``expectation`` ("exact", "qmc" or "monte_carlo"), ``std_error``
        (None when exact; the final loss's for monte_carlo; for qmc an object with
        alpha, beta, gamma, loss), plus the model's ``contraction`` / ``growth`` /
        ``theorem_4_7`` blocks, and ``quadrature`` (route, nodes, tolerance, largest relative
        a-posteriori estimate) on the Gaussian route. Dimensionless; steps are GD iterations; with ``dps`` the
        reals print at ``dps`` significant digits (docs/api.md).
    """
    return run(options("ln", kwargs))


def run(v: LnOptions, progress_lines: bool = True):
    """The ln job on validated options ``v`` (also used by the CLI)."""
    from rdyn.reduced_dynamics.model_b import run as mb
    from rdyn.reduced_dynamics.model_b.gaussian import QuadratureError
    from rdyn.api._teacher import checkpoint_kwargs
    from rdyn.result import Result

    from rdyn.options.value_checks import parse_steps_list

    cfg = model_config(v)
    record = parse_steps_list(v.record, "--record", cfg.steps)
    long_run = cfg.steps >= 400 and progress_lines and not v.quiet

    def progress(t):
        if long_run:
            print(f"rdyn ln: step {t}/{cfg.steps}", file=sys.stderr)

    if v.resume is None and not v.quiet and cfg.spectrum is not None \
            and mb.resolve_expectation(cfg) == "exact":
        from rdyn.run_time import announce, ln_estimate

        announce(ln_estimate(cfg.model, cfg.spectrum, cfg.dps, cfg.steps, cfg.L), v.quiet)
    elif v.resume is None and not v.quiet and cfg.data == "sphere":
        from rdyn.run_time import announce, sampled_ln_estimate

        announce(sampled_ln_estimate(cfg.d, cfg.n, cfg.samples, cfg.steps), v.quiet)
    with checkpoint_errors():
        try:
            tr = mb.run(cfg, progress, **checkpoint_kwargs(v))
        except mb.ExactUnavailable as exc:
            hint = "drop --dps (float64 exact) or use --expectation qmc" if cfg.dps is not None \
                else "use --expectation qmc"
            raise UsageError(f"{exc}; {hint}") from None
        except QuadratureError as exc:   # the exact route cannot vouch for its values: no answer
            raise UsageError(f"--spectrum: {exc}; the exact expectation is not available for "
                             "this run, use --expectation qmc") from None
    from dataclasses import replace

    import numpy as np

    from rdyn.reduced_dynamics.runs.divergence import reason
    from rdyn.reduced_dynamics.model_b.report import report

    diverged = tr.diverged_at_step
    if diverged is not None:  # report the last finite step; no fitted or theorem figures
        cfg = replace(cfg, steps=len(tr.loss) - 1)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        out = report(cfg, tr)
    out["diverged_at_step"] = diverged
    out["divergence_reason"] = None if diverged is None else reason(
        "the state (alpha, beta, gamma) or the loss")
    if diverged is not None:
        for block in DIVERGED_DROPS:
            out.pop(block, None)
        record = [t for t in record if t <= cfg.steps]
    if "quadrature" in tr.extras:
        out["quadrature"] = tr.extras["quadrature"]
    if tr.expectation == "qmc":
        out["replicas"] = tr.extras["replicas"]
        out["points_per_replica"] = tr.extras["points_per_replica"]
    if record:
        ses = tr.extras["series_std_error"]
        out["record"] = {str(t): {**{k: getattr(tr, k)[t] for k in ("alpha", "beta", "gamma", "loss")},
                                  "std_error": {k: ses[k][t] for k in ses}} for t in record}
    return Result(out, cfg.dps, detail={"config": cfg, "trajectory": tr})
