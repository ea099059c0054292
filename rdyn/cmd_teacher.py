"""Run Model A's collapsed (C1, C2, C3) dynamics and report the phase boundaries t1 and T*.

Model (SPEC.md, Model A; seed 000, Lemma D.2): W_V(t) = C1(t) V*, W_KQ(t) = C2(t) A_in -
C3(t) A_out, full-batch GD on L = 1/2 E||Y - TF(X)||_F^2 (summed over all M*D entries) from
zero. p(t) = 1/(K + (D-K) exp(-(C2+C3)/scale)) is the attention on an in-group key
(scale = D, or sqrt(D) with --logit-scale sqrtD). C1*(t) is the fixed point of the C1 update
at fixed p. loss is the excess loss L - 1/2 E||E||_F^2 (noise constant removed).

  t1 = min{t >= 1 : C1(t) >= t1_fraction * C1*(t)}   (Lemma D.13; default 0.95)
  T* = min{t >= 0 : p(t) >= tstar_attention}          (Lemma D.16; default 1/(2K))

eta_limit is the supremum of step sizes for which dC1(t+1)/dC1(t) at fixed p (C1 > 0 branch)
lies in (-1, 1) for every p in [1/D, 1/K]; lost_at_step is the first step where it does not.
All quantities are dimensionless; steps are GD iterations (t = 0 is the zero initial state).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from rdyn.output import UsageError, emit_json, format_real, require

NAME = "teacher"
HELP = "Model A collapsed dynamics: C1, C2, C3, phases t1 and T*"

PRESETS = {  # task: (default D, default K, K fixed?)
    "cnn": (36, 4, False),
    "gcn": (20, 3, True),
    "sts": (20, 4, False),
    "gslp": (20, 1, True),
}


def preset_groups(task: str, D: int, K: int) -> list[list[int]]:
    """The group G^i of every query column i for a preset teacher (SPEC.md table)."""
    if task == "cnn":
        return [list(range((i // K) * K, (i // K) * K + K)) for i in range(D)]
    if task == "gcn":
        return [sorted({(i - 1) % D, i, (i + 1) % D}) for i in range(D)]
    if task == "sts":
        return [list(range(K)) for _ in range(D)]
    if task == "gslp":
        return [[0] for _ in range(D)]
    raise UsageError(f"unknown task {task!r}")


def validate_groups(groups, D: int | None = None) -> tuple[int, int]:
    """Check a user family of groups: D lists of K distinct indices in 0..D-1. Returns (D, K)."""
    require(isinstance(groups, list) and groups and all(isinstance(g, list) for g in groups),
            "--groups must be a JSON list of D index lists")
    n = len(groups)
    require(D is None or D == n, f"--groups has {n} groups but --D is {D}")
    sizes = {len(g) for g in groups}
    require(len(sizes) == 1, f"every group must have the same size K; got sizes {sorted(sizes)}")
    (K,) = sizes
    for i, g in enumerate(groups):
        require(all(isinstance(j, int) and 0 <= j < n for j in g),
                f"group {i} has an index outside 0..{n - 1}")
        require(len(set(g)) == len(g), f"group {i} repeats an index")
    require(1 <= K < n, f"need 1 <= K < D, got K={K}, D={n}")
    return n, K


def add_teacher_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``rdyn teacher`` (shared with ``rdyn crosscheck``)."""
    parser.add_argument("--task", choices=sorted(PRESETS), default=None,
                        help="preset teacher (default: sts if --D/--K are given, else cnn)")
    parser.add_argument("--D", type=int, default=None, help="number of tokens D")
    parser.add_argument("--K", type=int, default=None, help="group size K (1 <= K < D)")
    parser.add_argument("--groups", type=Path, default=None,
                        help="JSON file: list of D index lists (group of each query column), all of size K")
    parser.add_argument("--activation", choices=("identity", "relu", "leaky"), default="relu",
                        help="sigma: identity, relu (default) or leaky = max(x, kappa x)")
    parser.add_argument("--kappa", type=float, default=None,
                        help="LeakyReLU negative slope in [0, 1) (leaky only; default 0.1)")
    parser.add_argument("--eta", type=float, default=None,
                        help="step size (default: half of eta_limit)")
    parser.add_argument("--vstar-norm2", type=float, default=1.0, help="||V*||_F^2 (default 1)")
    parser.add_argument("--steps", type=int, default=None,
                        help="GD steps N (default: run to T*, then as many steps again; <= 1e9)")
    parser.add_argument("--record", type=str, default=None,
                        help="comma-separated steps in 0..N whose state to report")
    parser.add_argument("--sigma-prime-zero", type=float, default=1.0,
                        help="sigma'(0), used at the first step where W_V = 0 (default 1)")
    parser.add_argument("--logit-scale", choices=("D", "sqrtD"), default="D",
                        help="softmax(P^T W_KQ P / D) (seed, default) or / sqrt(D) (conference)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_teacher_arguments(parser)
    parser.add_argument("--t1-fraction", type=float, default=0.95,
                        help="t1 threshold: C1 >= fraction * C1* (default 0.95)")
    parser.add_argument("--tstar-attention", type=float, default=None,
                        help="T* threshold on p (default 1/(2K))")
    parser.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    parser.add_argument("--method", choices=("map", "flow", "slow"), default="map",
                        help="map: iterate the exact collapsed map (default); flow: gradient-flow "
                        "limit eta -> 0 (float64, scipy Radau; also its first-order modified "
                        "equation at --eta); slow: flow through t1, then slow-manifold "
                        "quadrature (any D; --dps for mpmath). flow/slow report tau1, tau_star "
                        "and t1, T_star = tau/eta as reals (limits, not step counts)")
    parser.add_argument("--certify", action="store_true",
                        help="also iterate with rigorous enclosures: outward-rounded float64 "
                        "intervals (compiled; default) or, with --dps, arb balls. JSON gains "
                        "'certified' (t1 and T* proven), 'radius' (relative, final step) and "
                        "'certified_backend' (interval64 | arb)")
    add_checkpoint_arguments(parser)


def add_checkpoint_arguments(parser: argparse.ArgumentParser) -> None:
    """--checkpoint, --checkpoint-every, --resume (shared with ``rdyn ln``)."""
    parser.add_argument("--checkpoint", metavar="FILE", default=None,
                        help="write the complete loop state to FILE (.npz) every "
                        "--checkpoint-every seconds, at the end and on Ctrl-C (then exit 130 "
                        "and print the command that resumes)")
    parser.add_argument("--checkpoint-every", metavar="SECONDS", type=float, default=60.0,
                        help="seconds between checkpoints (default 60)")
    parser.add_argument("--resume", metavar="FILE", default=None,
                        help="continue from a checkpoint written with the same options (else "
                        "exit 2 naming the differing option); the result is bit-identical to an "
                        "uninterrupted run")


def checkpoint_options(args) -> dict:
    """The checkpoint keyword arguments of the iterators, validated (UsageError)."""
    require(args.checkpoint_every >= 0, "--checkpoint-every must be >= 0 seconds")
    if args.checkpoint is not None:
        folder = os.path.dirname(os.path.abspath(args.checkpoint))
        require(os.path.isdir(folder), f"--checkpoint: folder {folder} does not exist")
    return {"checkpoint": args.checkpoint, "checkpoint_every": args.checkpoint_every,
            "resume": args.resume}


def run_with_checkpoints(name: str, args, job):
    """Run ``job()`` turning checkpoint failures into usage errors (exit 2) and Ctrl-C into
    one line on stderr and exit status 130: with --checkpoint, the step saved and the command
    that resumes. Returns ``(result, None)`` or ``(None, 130)``."""
    from reduced_dynamics.checkpoint import CheckpointError, Interrupted, resume_command

    try:
        return job(), None
    except CheckpointError as exc:
        raise UsageError(str(exc)) from None
    except Interrupted as exc:
        print(f"interrupted at step {exc.step}; resume with: "
              f"{resume_command(sys.argv, name, exc.path)}", file=sys.stderr)
    except KeyboardInterrupt:
        if args.checkpoint is None:
            print(f"rdyn {name}: interrupted (no checkpoint written; --checkpoint FILE makes "
                  "runs resumable)", file=sys.stderr)
        else:
            print(f"rdyn {name}: interrupted before the first checkpoint; nothing to resume",
                  file=sys.stderr)
    return None, 130


def teacher_config_from_args(args):
    """(TeacherConfig, groups) from parsed teacher options, with one-line usage errors."""
    from reduced_dynamics.model_a import TeacherConfig

    if args.groups is not None:
        require(args.task is None, "--groups and --task are exclusive")
        try:
            groups = json.loads(Path(args.groups).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise UsageError(f"cannot read --groups {args.groups}: {exc}") from None
        D, K = validate_groups(groups, args.D)
        require(args.K is None or args.K == K, f"--groups have size {K} but --K is {args.K}")
    else:
        task = args.task or ("sts" if (args.D is not None or args.K is not None) else "cnn")
        D0, K0, k_fixed = PRESETS[task]
        D = args.D if args.D is not None else D0
        K = args.K if args.K is not None else K0
        require(not (k_fixed and K != K0), f"task {task} has K = {K0}; --K cannot change it")
        require(K >= 1, f"K must be >= 1, got {K}")
        require(K < D, f"need K < D, got K={K}, D={D}")
        if task == "cnn":
            require(D % K == 0, f"cnn needs D to be a multiple of K, got D={D}, K={K}")
        groups = preset_groups(task, D, K)
    require(args.activation == "leaky" or args.kappa is None,
            "--kappa applies to --activation leaky only")
    kappa = 0.1 if args.kappa is None else args.kappa
    require(0 <= kappa < 1, f"kappa must be in [0, 1), got {kappa}")
    require(args.eta is None or args.eta > 0, f"eta must be > 0, got {args.eta}")
    require(args.vstar_norm2 > 0, f"--vstar-norm2 must be > 0, got {args.vstar_norm2}")
    require(args.steps is None or 0 <= args.steps <= 10**9, "--steps must be in 0..1e9")
    config = TeacherConfig(D=D, K=K, activation=args.activation, kappa=kappa, eta=args.eta,
                           vstar_norm2=args.vstar_norm2, sigma_prime_zero=args.sigma_prime_zero,
                           logit_scale=args.logit_scale)
    return config, groups


def parse_record(text: str | None, steps: int | None) -> list[int]:
    if not text:
        return []
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise UsageError(f"--record must be comma-separated integers, got {text!r}") from None
    for v in values:
        require(v >= 0 and (steps is None or v <= steps),
                f"record step {v} outside 0..{steps if steps is not None else 'N'}")
    return sorted(set(values))


def run(args) -> int:
    from reduced_dynamics.model_a import Thresholds, run as run_dynamics

    config, _ = teacher_config_from_args(args)
    record = parse_record(args.record, args.steps)
    require(0 < args.t1_fraction, "--t1-fraction must be > 0")
    require(args.tstar_attention is None or 0 < args.tstar_attention <= 1,
            "--tstar-attention must be in (0, 1]")
    thresholds = Thresholds(args.t1_fraction, args.tstar_attention)
    if getattr(args, "method", "map") != "map":
        return run_limits(args, config, thresholds)
    if args.steps is None:  # the default run stops at 2 T*: refuse runs that cannot reach T*
        require(thresholds.attention(config.K) < 1 / config.K,
                "T* is never reached when --tstar-attention >= 1/K; give --steps")
        require(config.sigma_prime_zero != 0,
                "with --sigma-prime-zero 0 nothing moves from W_V = 0 (T* is never reached); give --steps")
    certify = getattr(args, "certify", False)
    backend = "float64" if args.dps is None else "arb"
    options = checkpoint_options(args)
    result, status = run_with_checkpoints(NAME, args, lambda: run_dynamics(
        config, steps=args.steps, record=record, thresholds=thresholds, backend=backend,
        dps=args.dps, progress=not args.quiet, **options))
    if status is not None:
        return status
    for v in record:
        require(v <= result.steps, f"record step {v} outside 0..{result.steps}")
    summary = result_summary(result, args.dps)
    certificate = None
    if certify:
        from reduced_dynamics.certified import certified_run
        from reduced_dynamics.checkpoint import resume_command

        try:  # not checkpointed: a resume from the final checkpoint re-runs this pass
            certificate = certified_run(config, steps=result.steps, thresholds=thresholds,
                                        dps=args.dps, progress=not args.quiet,
                                        backend="interval64" if args.dps is None else "arb")
        except KeyboardInterrupt:
            done = f"; resume with: {resume_command(sys.argv, NAME, args.checkpoint)}" \
                if args.checkpoint else ""
            print(f"rdyn teacher: interrupted in the --certify pass (the main run is complete"
                  f"{' in the checkpoint' if args.checkpoint else ''}){done}", file=sys.stderr)
            return 130
        # certified: t1 and T* proven, and equal to the values reported above
        summary["certified"] = certificate.certified and (
            (result.t1, result.T_star) == (certificate.t1.step, certificate.T_star.step))
        summary["radius"] = certificate.radius_final
        summary["certified_backend"] = certificate.backend
        summary["certificate"] = certificate.summary()
    if args.json:
        emit_json(summary, args.dps)
    else:
        print(text_summary(result))
        if certificate is not None:
            print(certificate.text())
    return 0


def run_limits(args, config, thresholds) -> int:
    """``--method flow|slow``: the eta -> 0 phase limits (reduced_dynamics.flow)."""
    from reduced_dynamics.flow import limits_summary, phase_limits

    for option, given in (("--record", args.record), ("--steps", args.steps),
                          ("--certify", getattr(args, "certify", False)),
                          ("--checkpoint", args.checkpoint), ("--resume", args.resume)):
        require(not given, f"{option} applies to --method map only")
    require(args.method != "flow" or args.dps is None,
            "--method flow is float64 (scipy); use --method slow with --dps")
    require(thresholds.attention(config.K) < 1 / config.K,
            "T* is never reached when --tstar-attention >= 1/K")
    require(config.sigma_prime_zero != 0,
            "with --sigma-prime-zero 0 nothing moves from W_V = 0 (T* is never reached)")
    try:
        limits = phase_limits(config, args.method, thresholds, args.dps)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    summary = limits_summary(limits)
    if args.json:
        emit_json(summary, args.dps)
    else:
        c = config
        lines = [f"Model A phase limits ({summary['limit']}): D={c.D}, K={c.K}, {c.activation}, "
                 f"logits/{c.logit_scale}, eta = {format_real(limits.eta)}",
                 f"  tau1 = lim eta t1 = {format_real(limits.tau1, 15)}   "
                 f"tau_star = lim eta T* = {format_real(limits.tau_star, 15)}",
                 f"  t1 ~ tau1/eta = {format_real(limits.t1, 12)}   "
                 f"T* ~ tau_star/eta = {format_real(limits.T_star, 12)}  (reals, not step counts)"]
        if limits.tau1_mod is not None:
            lines.append(f"  modified equation at this eta: t1 ~ {format_real(limits.tau1_mod / limits.eta, 12)}"
                         f"   T* ~ {format_real(limits.tau_star_mod / limits.eta, 12)}")
        print("\n".join(lines))
    return 0


def _exact(value, dps):
    """A sympy number as float64, or as an mpf carrying dps + 10 digits."""
    if dps is None:
        return float(value)
    import mpmath
    import sympy as sp

    with mpmath.workdps(dps + 10):
        return mpmath.mpf(str(sp.N(value, dps + 10)))


def result_summary(result, dps=None) -> dict:
    """The JSON object of the interface contract (plus eta, loss_slope, model)."""
    from reduced_dynamics.model_a import eta_limit_exact

    c = result.config
    return {
        "t1": result.t1,
        "T_star": result.T_star,
        "final": result.final.as_dict(),
        "record": {str(t): r.as_dict() for t, r in sorted(result.record.items())},
        "stability": {"eta_limit": _exact(eta_limit_exact(c), dps),
                      "lost_at_step": result.lost_at_step},
        "eta": _exact(c.exact_step_size(), dps),
        "loss_slope": result.loss_slope,
        "model": {"D": c.D, "K": c.K, "activation": c.activation,
                  "kappa": c.kappa if c.activation == "leaky" else None,
                  "vstar_norm2": c.vstar_norm2, "sigma_prime_zero": c.sigma_prime_zero,
                  "logit_scale": c.logit_scale, "backend": result.backend},
    }


def text_summary(result) -> str:
    c = result.config
    f = result.final
    act = c.activation + (f" (kappa={c.kappa})" if c.activation == "leaky" else "")
    lines = [
        f"Model A collapsed dynamics: D={c.D}, K={c.K}, {act}, ||V*||_F^2={c.vstar_norm2}, "
        f"logits/{c.logit_scale}, backend {result.backend}",
        f"  eta = {format_real(result.eta)}  (eta_limit = {format_real(result.eta_limit)}; "
        f"stability lost at step {result.lost_at_step if result.lost_at_step is not None else 'never'})",
        f"  t1 = {result.t1 if result.t1 is not None else 'not reached'}   "
        f"T* = {result.T_star if result.T_star is not None else 'not reached'}   steps run = {result.steps}",
        f"  final: C1 = {format_real(f.C1, 15)}  C2 = {format_real(f.C2, 15)}  C3 = {format_real(f.C3, 15)}",
        f"         p = {format_real(f.p, 15)} (1/K = {format_real(1 / c.K)})  "
        f"C1* = {format_real(f.C1_star, 15)}  excess loss = {format_real(f.loss, 15)}",
    ]
    if result.loss_slope is not None:
        lines.append(f"  late-time log-log loss slope = {result.loss_slope:.4f} (paper: Theta(1/T), slope -1)")
    for t, r in sorted(result.record.items()):
        lines.append(f"  t={t}: C1={format_real(r.C1, 12)} C2={format_real(r.C2, 12)} "
                     f"C3={format_real(r.C3, 12)} p={format_real(r.p, 12)} loss={format_real(r.loss, 12)}")
    return "\n".join(lines)
