"""Run Model A's collapsed (C1, C2, C3) dynamics and report the phase boundaries t1 and T*.

Model (docs/models_and_conventions.md, Model A; seed 000, Lemma D.2): W_V(t) = C1(t) V*, W_KQ(t) = C2(t) A_in -
C3(t) A_out, full-batch GD on L = 1/2 E||Y - TF(X)||_F^2 (summed over all M*D entries) from
zero. p(t) = 1/(K + (D-K) exp(-(C2+C3)/scale)) is the attention on an in-group key
(scale = D, or sqrt(D) with --logit-scale sqrtD). C1*(t) is the fixed point of the C1 update
at fixed p. loss is the excess loss L - 1/2 E||E||_F^2 (noise constant removed).

  t1 = min{t >= 1 : C1(t) >= t1_fraction * C1*(t)}   (Lemma D.13; default 0.95)
  T* = min{t >= 0 : p(t) >= tstar_attention}          (Lemma D.16; default 1/(2K))

eta_limit is the supremum of step sizes for which dC1(t+1)/dC1(t) at fixed p (C1 > 0 branch)
lies in (-1, 1) for every p in [1/D, 1/K]; lost_at_step is the first step where it does not at
the run's own state (a smooth activation's multiplier depends on C1 too, at eta_limit it is
taken at C1*(p): it can exceed 1 at C1 = 0 for any eta, and the text output says so).
The late-time loss slope is fitted over [max(T*, t/10), t] and shown only when T* was reached
and the run went on to t >= 2 T*. A run whose state leaves the float64-safe range (a component
non-finite or above 1e100) stops there: diverged_at_step, no t1/T*/slope, exit status 3
(docs/input_rules.md#overflow-and-divergence). SIGINT and SIGTERM save a --checkpoint run
(exit 130, resp. 143).
All quantities are dimensionless; steps are GD iterations (t = 0 is the zero initial state).
"""
from __future__ import annotations

import sys
from fractions import Fraction

from rdyn.option_types import TeacherOptions
from rdyn.output import format_real

NAME = "teacher"
DIVERGED_EXIT = 3  # a run that diverged (docs/input_rules.md#overflow-and-divergence)


def interrupted(name: str, exc: KeyboardInterrupt, checkpoint) -> int:
    """Ctrl-C: one line on stderr (with a checkpoint: the step saved and the command that
    resumes), exit status 130."""
    from rdyn.reduced_dynamics.runs.checkpoint import Interrupted, resume_command

    if isinstance(exc, Interrupted):
        print(f"rdyn {name}: interrupted at step {exc.step}; resume with: "
              f"{resume_command(sys.argv, name, exc.path)}", file=sys.stderr)
    elif checkpoint is None:
        print(f"rdyn {name}: interrupted (no checkpoint written; --checkpoint FILE makes "
              "runs resumable)", file=sys.stderr)
    else:
        print(f"rdyn {name}: interrupted before the first checkpoint; nothing to resume",
              file=sys.stderr)
    return 130


def run(values: TeacherOptions, args) -> int:
    from rdyn.api._teacher import CertifyInterrupted, run as api_run

    try:
        result = api_run(values)
    except CertifyInterrupted as exc:
        from rdyn.reduced_dynamics.runs.checkpoint import resume_command

        checkpoint = values.checkpoint
        if exc.path is not None:
            print(f"rdyn teacher: interrupted in the --certify pass at step {exc.step} (saved "
                  f"to {exc.path}); resume with: {resume_command(sys.argv, NAME, str(checkpoint))}",
                  file=sys.stderr)
            return 130
        done = f"; resume with: {resume_command(sys.argv, NAME, str(checkpoint))}" \
            if checkpoint else ""
        print(f"rdyn teacher: interrupted in the --certify pass (the main run is complete"
              f"{' in the checkpoint' if checkpoint else ''}){done}", file=sys.stderr)
        return 130
    except KeyboardInterrupt as exc:
        return interrupted(NAME, exc, values.checkpoint)
    for line in result.detail["warnings"]:   # the API returns its warnings; they print here
        print(f"rdyn teacher: warning: {line}", file=sys.stderr)
    diverged = values.method == "map" and result.diverged_at_step is not None
    if diverged:
        print(f"rdyn teacher: diverged at step {result.diverged_at_step}: "
              f"{result.divergence_reason}; t1, T* and the loss slope are not reported "
              "(exit status 3)", file=sys.stderr)
    if values.json:
        print(result.to_json())
        return DIVERGED_EXIT if diverged else 0
    if values.method != "map":
        print(limits_text(result.detail["limits"], result.detail["config"], result.limit,
                          result._dps))
        return 0
    print(text_summary(result.detail["run"], result._dps, eta=result.eta,
                       eta_limit=result.stability.eta_limit,
                       multiplier=result.detail["initial_multiplier"]))
    if result.detail["certificate"] is not None:
        print(result.detail["certificate"].text())
    return DIVERGED_EXIT if diverged else 0


def text_summary(result, dps: int | None = None, eta=None, eta_limit=None,
                 multiplier=None) -> str:
    """The text form of a map run; at ``--dps N`` the values computed at that precision print
    with N significant digits (float64 runs: 15 for the final state, 12 for recorded steps).
    ``eta``, ``eta_limit``: the values of the JSON summary (at ``--dps``: exact, to dps + 10
    digits), else the run's float64 ones. ``multiplier``: the API's ``initial_multiplier``
    (a smooth run whose C1 multiplier left (-1, 1) at step 0)."""
    c = result.config
    eta = result.eta if eta is None else eta
    eta_limit = result.eta_limit if eta_limit is None else eta_limit
    f = result.final
    missing = "not reached" if result.diverged_at_step is None else "not reported"
    if c.kind == "smooth":   # M rows of equal norm
        act = f"{c.activation.label}, M={c.M}"
    else:
        act = c.activation + (f" (kappa={c.kappa})" if c.activation == "leaky" else "")
    lines = [
        f"Model A collapsed dynamics: D={c.D}, K={c.K}, {act}, ||V*||_F^2={c.vstar_norm2}, "
        f"logits/{c.logit_scale}, backend {result.backend}",
        f"  eta = {format_real(eta, dps=dps)}  (eta_limit = {format_real(eta_limit, dps=dps)}"
        f"{stability_text(result, eta, eta_limit, multiplier)})",
        *([f"  DIVERGED at step {result.diverged_at_step}: the state (C1, C2, C3) left the "
           "float64-safe range; final = the last step before it; t1, T* not reported"]
          if result.diverged_at_step is not None else []),
        f"  t1 = {result.t1 if result.t1 is not None else missing}   "
        f"T* = {result.T_star if result.T_star is not None else missing}   steps run = {result.steps}",
        f"  final: C1 = {format_real(f.C1, 15, dps=dps)}  C2 = {format_real(f.C2, 15, dps=dps)}  C3 = {format_real(f.C3, 15, dps=dps)}",
        f"         p = {format_real(f.p, 15, dps=dps)} (1/K = {format_real(Fraction(1, c.K), dps=dps)})  "
        f"C1* = {format_real(f.C1_star, 15, dps=dps)}  excess loss = {format_real(f.loss, 15, dps=dps)}",
    ]
    if result.loss_slope is not None:
        start = max(result.T_star, result.steps // 10, 1)
        lines.append(f"  log-log loss slope over t in [{start}, {result.steps}] = {result.loss_slope:.4f} "
                     "(paper: Theta(1/T), slope -1; derived: slope -1 only for t >> T*, see rdyn claims)")
    if c.kind == "smooth":   # its Gauss-Hermite rule (and tiles)
        lines.append(f"  quadrature: {result.nodes}-point Gauss-Hermite, estimated error "
                     f"{result.quadrature_error:.1e}")
        if result.route == "table":
            lines.append(f"  steps: moments from piecewise Chebyshev tiles of that rule, table "
                         f"error {result.table_error:.1e} (--smooth-route exact: the rule)")
    for t, r in sorted(result.record.items()):
        lines.append(f"  t={t}: C1={format_real(r.C1, 12, dps=dps)} C2={format_real(r.C2, 12, dps=dps)} "
                     f"C3={format_real(r.C3, 12, dps=dps)} p={format_real(r.p, 12, dps=dps)} loss={format_real(r.loss, 12, dps=dps)}")
    return "\n".join(lines)


def stability_text(result, eta, eta_limit, multiplier=None) -> str:
    """The end of the eta line: what the C1 update's multiplier 1 + eta D dm2/dC1 did during
    the run (lost_at_step, docs/interface.md). eta_limit bounds it at the fixed point C1*(p)
    for every p in [1/D, 1/K]; lost_at_step is where the multiplier at the run's own state
    (C1(t), p(t)) first left (-1, 1). For the homogeneous activations the multiplier depends
    on p only and is below 1, so it is lost only below -1 (eta above eta_limit somewhere on
    the path); for a smooth one it depends on C1 too, so it can leave (-1, 1) below eta_limit
    (above 1 at C1 = 0 when the zero state repels C1, whatever eta). ``multiplier``: its
    value at step 0 (the API's ``initial_multiplier``), or None."""
    t = result.lost_at_step
    above = float(eta) > float(eta_limit)
    if t is None:
        return (f"; eta is above it, but the C1 update's multiplier stayed in (-1, 1) over "
                f"these {result.steps} steps" if above else
                "; the C1 update's multiplier stayed in (-1, 1) at every step")
    if result.config.kind != "smooth":
        return (f"; the C1 update's multiplier at p(t) fell below -1 at step {t}: C1 "
                "overshoots and oscillates")
    value = multiplier if t == 0 else None
    where = ("the bound at the fixed point C1*(p); the C1 update's multiplier at the run's "
             f"own state left (-1, 1) at step {t}")
    if value is None:
        return f", {where}"
    side = ("above 1: the zero state repels C1, at any eta" if value >= 1 else
            "below -1: C1 overshoots")
    return f", {where}: {value:.6g} at C1 = 0, {side}"


def limits_text(limits, c, limit: str, dps: int | None = None) -> str:
    """The text form of ``--method flow|slow`` (``--dps N``: N significant digits)."""
    smooth = c.kind == "smooth"
    activation = c.activation.label if smooth else c.activation
    rows = f", M={c.M}, ||V*||_F^2={c.vstar_norm2}" if smooth else ""
    lines = [f"Model A phase limits ({limit}): D={c.D}, K={c.K}, {activation}{rows}, "
             f"logits/{c.logit_scale}, eta = {format_real(limits.eta, dps=dps)}",
             f"  tau1 = lim eta t1 = {format_real(limits.tau1, 15, dps=dps)}   "
             f"tau_star = lim eta T* = {format_real(limits.tau_star, 15, dps=dps)}",
             f"  t1 ~ tau1/eta = {format_real(limits.t1, 12, dps=dps)}   "
             f"T* ~ tau_star/eta = {format_real(limits.T_star, 12, dps=dps)}  (reals, not step counts)"]
    if limits.tau1_mod is not None:   # the JSON's "modified" (null: no such event) in words
        import math

        def modified(tau) -> str:
            value = tau / limits.eta
            return format_real(value, 12, dps=dps) if math.isfinite(float(value)) else \
                "none (no such event on the modified flow)"

        lines.append(f"  modified equation at this eta: t1 ~ {modified(limits.tau1_mod)}"
                     f"   T* ~ {modified(limits.tau_star_mod)}")
    return "\n".join(lines)
