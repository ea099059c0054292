"""Time estimates before long runs (docs/input_rules.md, "Time estimates"): shared by the
CLI and the API, printed on stderr before a run predicted to take more than
:data:`ANNOUNCE_ABOVE_S` seconds (``--quiet`` suppresses it). ``rdyn teacher --dps N`` (homogeneous activations: :func:`teacher_estimate`; smooth
activations: :func:`smooth_teacher_estimate`), ``rdyn ln --dps N`` with exact rules
(:func:`ln_estimate`, the Gaussian route included) and the smooth-activation ``rdyn crosscheck``
(:func:`crosscheck_smooth_estimate`) are estimated; so are ``rdyn sweep`` (:func:`sweep_estimate`,
summed over the grid), the homogeneous ``rdyn crosscheck`` (:func:`crosscheck_estimate`),
``rdyn asymptotics`` (:func:`asymptotics_estimate`), ``rdyn figures`` (:func:`figures_estimate`,
:func:`figures_smooth_estimate`, :func:`figures_b_estimate`), ``claims``, ``verify``,
``scaling`` and float64 runs (below). The constants are seconds of CPU measured on 2 shared
cores; on loaded cores the wall clock is longer (at load L on 2 cores, about L/2 times).

``rdyn teacher --dps N`` (the collapsed map on arb balls at N digits, identity/relu/leaky):
the cost per GD step is modelled as

    seconds per step = OVERHEAD + A * N**B,   OVERHEAD = 8e-6 s, A = 6.1e-9 s, B = 1.5

measured with ``model_a.run(..., backend="arb")`` (D = 20, K = 4, eta = 0.5; the collapsed
map does not depend on D) on 2 shared cores (load 2-5), per step from the difference of an
n- and a 3n-step run: relu 0.0077, 0.013, 0.037, 0.14, 0.56, 1.64 ms at N = 30, 100, 300,
1000, 2000, 4000; identity 0.014, 0.016, 0.043, 0.21, 0.53, 1.53 ms; leaky 0.005, 0.011,
0.041, 0.22, 0.60, 1.48 ms. The model gives 0.009, 0.014, 0.040, 0.20, 0.55, 1.55 ms: within
a factor 1.5 of every measurement above N = 30 (B = 1.5: multiplication at N digits).
``--certify`` adds the certified arb pass, measured at 0.5-1.4 ms per step at N = 1000-2000
(main run 0.17-0.67 ms), modelled as :data:`CERTIFY_FACTOR` = 2.5 times the main run.

Without ``--steps`` the run stops at max(2 T*, 1000), unknown in advance: the estimate takes T*
from a float64 run of at most :data:`PRE_RUN_STEPS` steps (about 75 ns per step, so at most
about 1 s; the arb run costs at least 100 times more per step). If T* is beyond it, the
estimate is a lower bound ("more than").
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from fractions import Fraction

ANNOUNCE_ABOVE_S = 10.0
TEACHER_OVERHEAD_S = 8e-6
TEACHER_A_S = 6.1e-9
TEACHER_B = 1.5
CERTIFY_FACTOR = 2.5
PRE_RUN_STEPS = 10**7
# smooth activations at --dps (reduced_dynamics/model_a/smooth.py): seconds per node evaluation
# (sigma, its two derivatives, and erf/gelu's closed smoothings at one Gauss-Hermite node; for the
# tensor-rule activations one of the n^2 inner evaluations), SMOOTH_NODE_S[name] * (1 + (N /
# SMOOTH_KNEE_DPS)**1.5): measured with Expectations.step at n = 24, 48 (bench/bench_dps_cost.py)
SMOOTH_NODE_S = {"erf": 40e-6, "gelu": 80e-6, "tanh": 3.3e-6, "softplus": 4.5e-6, "sigmoid": 4e-6,
                 "expr": 25e-6}   # expr: mpmath; depends on the formula
SMOOTH_KNEE_DPS = 150.0
TENSOR_RULE = ("tanh", "softplus", "sigmoid", "expr")   # inner average by the same rule: n^2
# after the loop: the a-posteriori rule check and the final state's C1* (Newton at dps), counted
# as this many steps
SMOOTH_EXTRA_STEPS = 50
SMOOTH_PRE_RUN_STEPS = 10**5
# --certify for erf/gelu (reduced_dynamics/certified/smooth.py, closed forms on arb balls): seconds per step as a
# multiple of teacher_step_seconds(N) (measured 0.09, 0.31 ms erf, 0.28, 0.97 ms gelu at N = 300,
# 1000, D = 8, K = 2, M = 2)
SMOOTH_CERTIFY_FACTOR = {"erf": 1.8, "gelu": 5.5}
# --certify for tanh, softplus, sigmoid and formulas (reduced_dynamics/certified/strip.py, the strip
# quadrature): seconds per step at the 1e-15 aim, times (d / 15)**2.3 for d = min(N, STRIP_DPS_MAX)
# digits (tanh, D = 8, 400 steps: 3.6 s at 1e-15, 5.7 s at N = 20, 17 s at N = 30; a formula's
# node-by-node bounds are cruder, so its lattice is larger)
STRIP_CERTIFY_STEP_S = {"tanh": 9e-3, "softplus": 9e-3, "sigmoid": 9e-3, "expr": 2e-2}
# rdyn ln --dps N, exact Task 2 rules (reduced_dynamics/model_b/exact.py), by the number r of
# distinct eigenvalues. r = 2 (theta rule; ln, noln, looped): building the Gauss-Legendre rules
# at N digits (mpmath; degrees m0 = model_b.exact.theta_start_degree(N) up to the accepted one,
# measured m0 + 2, capped at THETA_MAX_DEGREE; 3 * 2^(m-1) nodes n_m) dominates:
# LN_THETA_BUILD_S * sum n_m^2 * (1 + (N / LN_KNEE_DPS)**1.5) (10-step runs of --spectrum 4,1,1:
# 1.0, 5.1, 12.8-21, 9.6, 42-78, 320 s at N = 30, 60, 100, 150, 300, 1000); a step about
# LN_THETA_STEP_S (1.5-2.2 ms at N = 30-100), times the same N factor.
LN_THETA_BUILD_S = 1.5e-5
LN_KNEE_DPS = 350.0
LN_THETA_STEP_S = 2e-3
# r = 3, 4 (single layers; Dirichlet tensor rule of n**(r-1) nodes, orders n0 and n1 of
# model_b.exact.dirichlet_orders): building, per node of both orders (0.25-0.6 ms measured:
# (4,2,1) at N = 30, 60; (4,3,2,1) at 30); a step of ln, per node of the final rule (3.2-10 us:
# 10, 13, 160 ms per step on 1089, 3969, 35937 nodes). noln: steps cost nothing (constants).
LN_DIRICHLET_BUILD_S = 4e-4
LN_DIRICHLET_STEP_S = 4e-6
# the Gaussian route (reduced_dynamics/model_b/gaussian*.py; five or more distinct eigenvalues,
# the looped model with three or more, a Dirichlet rule over its budget): seconds per node and
# distinct eigenvalue of one LN-layer evaluation (E[cos] and E[L'(gamma)], one per step),
# GAUSS_NODE_S * (1 + (N / GAUSS_KNEE_DPS)**1.5); measured 1.8, 2.2, 2.2, 2.5, 3.2 us at N =
# 15, 30, 60, 100, 200 (6..1, 5..1, 5..1, 4,3,2,1,1, 4,3,2,1,1; 12411 to 1646195 nodes) on 2
# shared cores (load 1). The constants (kappa3, kappa4, Upsilon_3; once per run, every model)
# cost GAUSS_CONSTANTS_EVALUATIONS of them; the looped model's step (two one-dimensional
# integrals on its tau grid) is counted as one evaluation on that grid.
GAUSS_NODE_S = 1.9e-6
GAUSS_KNEE_DPS = 300.0
GAUSS_CONSTANTS_EVALUATIONS = 1.6
# the Gaussian route in float64 (numpy): seconds per node and distinct eigenvalue, measured 13 ns
# (27 ms of CPU per step on 40765 nodes x 50 eigenvalues, --spectrum 1..50, 2 shared cores)
GAUSS_F64_NODE_S = 1.3e-8
# smooth full-matrix crosscheck: seconds per output entry and step (entry_expectations of
# verify/references/full_matrix_smooth.py, measured 0.7-2.1 ms per entry over erf, tanh, gelu, softplus,
# sigmoid at M x D = 100 x 8 and 400 x 16 on 2 shared cores)
SMOOTH_ENTRY_S = 1.5e-3


# rdyn claims: wall-clock seconds of the checks on 2 shared cores (docs/claims.md, "Timing"):
# quick, both papers, about 105 s (104 s of CPU measured 2026-12-07, one BLAS thread), --paper B about
# 30 s (28 s of CPU), so A about 80 s; --full, both
# papers, 12-14 min wall (8.5-9 min of CPU), its Model B groups about 4 min (B.exact_dirichlet
# 147 s, B.exact_gaussian 80 s), so A about 9 min
CLAIMS_SECONDS = {("all", True): 105.0, ("A", True): 80.0, ("B", True): 30.0,
                  ("all", False): 780.0, ("A", False): 540.0, ("B", False): 240.0}


# rdyn verify (every group, both papers) and rdyn scaling (default activations, no --extend):
# fixed sizes, measured wall clock on 2 cores (docs/performance.md, "Run times of the other
# commands"; docs/verify.md): verify about 4 min, --quick about 115 s (112 s of CPU and of wall
# clock measured 2026-12-07, one BLAS thread); scaling about 80 s on idle cores, --quick about 20 s
VERIFY_SECONDS = {False: 240.0, True: 115.0}
SCALING_SECONDS = {False: 80.0, True: 20.0}


# rdyn figures --paper A (six SGD experiments of the full model): seconds of CPU, measured on 2
# shared cores: 121 s at the default 20000 steps, 12.6 s with --quick (1500 steps, smaller
# sizes), 24.7 s with --quick --steps 6000; modelled as FIGURES_A_START_S plus, per SGD step of
# all six experiments, FIGURES_A_STEP_S[quick] (the default batch of 100; under load the wall
# clock is longer)
FIGURES_A_START_S = 8.6
FIGURES_A_STEP_S = {False: 5.6e-3, True: 2.7e-3}


def figures_estimate(steps: int, quick: bool) -> "RunTimeEstimate":
    """The estimate of ``rdyn figures --paper A`` (:data:`FIGURES_A_STEP_S`)."""
    return RunTimeEstimate("figures", FIGURES_A_START_S + steps * FIGURES_A_STEP_S[quick],
                           f"six experiments of {steps} SGD steps{' (quick sizes)' if quick else ''}",
                           steps=steps)


# rdyn figures --paper B (full-matrix GD of seven Model B trainings): wall clock on 2 cores,
# measured 2026-12-05: 146 s at the default 2000 steps (230 s of CPU: BLAS uses both cores),
# 4.4 s with --quick (60 steps, d = 4); modelled as FIGURES_B_START_S plus, per GD step of all
# seven trainings, FIGURES_B_STEP_S[quick]
FIGURES_B_START_S = 3.0
FIGURES_B_STEP_S = {False: 0.072, True: 0.023}


def figures_b_estimate(steps: int, quick: bool) -> "RunTimeEstimate":
    """The estimate of ``rdyn figures --paper B`` (:data:`FIGURES_B_STEP_S`)."""
    return RunTimeEstimate("figures", FIGURES_B_START_S + steps * FIGURES_B_STEP_S[quick],
                           f"seven full-matrix Model B trainings of {steps} GD steps"
                           f"{' (quick sizes)' if quick else ''}", steps=steps)


# rdyn figures --activation NAME (the paper's four teachers with a smooth sigma: online SGD of
# the full model next to the float64 smooth collapsed map): seconds of CPU, measured on 2 shared
# cores (load 5-8, 2026-12-05): tanh 15.0, 21.8, 32.7 s at 1000, 3000, 6000 steps; erf 21.5,
# 31.2 s at 1000, 4000; softplus 16.3, 26.9 s at 1000, 4000; --quick tanh 11.1, 18.1 s at 1500,
# 6000 steps; modelled as FIGURES_SMOOTH_START_S[quick] (the rules, tables and compilation of
# the collapsed runs) plus, per SGD step of all four experiments, FIGURES_SMOOTH_STEP_S[quick]
FIGURES_SMOOTH_START_S = {False: 14.0, True: 9.0}
FIGURES_SMOOTH_STEP_S = {False: 3.5e-3, True: 1.5e-3}


def figures_smooth_estimate(steps: int, quick: bool, label: str) -> "RunTimeEstimate":
    """The estimate of ``rdyn figures --activation NAME`` (:data:`FIGURES_SMOOTH_STEP_S`)."""
    return RunTimeEstimate("figures", FIGURES_SMOOTH_START_S[quick] + steps * FIGURES_SMOOTH_STEP_S[quick],
                           f"four experiments of {steps} SGD steps with {label}"
                           f"{' (quick sizes)' if quick else ''}", steps=steps)


# rdyn sweep: seconds of CPU on 2 shared cores (load 5, 2026-12-05). Homogeneous activations
# (the batched compiled loop, reduced_dynamics/model_a/batch.py): SWEEP_START_S plus
# SWEEP_POINT_STEP_S[fast] per configuration and step (measured 20 x 1e5, 20 x 1e6, 20 x 5e6,
# 60 x 2e6 configuration-steps: 0.97, 1.50, 3.84, 4.70 s; --fast 0.88 s at 20 x 1e6, 1.40 s
# at 20 x 5e6). Smooth activations (one float64 tabulated run per point,
# reduced_dynamics/model_a/smooth_sweep.py): SWEEP_START_S plus, per point, SWEEP_SMOOTH_POINT_S
# (its rule and tables) and SWEEP_SMOOTH_STEP_S per step (tanh: 2.14, 4.72 s for 4 and 16
# points of 1e4 steps, 3.64, 5.67 s for 4 points of 2e6, 1e7 steps; erf: 3.71 s for 16 x 1e4,
# 5.31 s for 4 x 1e7). Every point runs the steps asked for (a diverged point stops early:
# the estimate is then an upper bound).
SWEEP_START_S = 1.0
SWEEP_POINT_STEP_S = {False: 3.5e-8, True: 1.5e-8}
SWEEP_SMOOTH_POINT_S = 0.2
SWEEP_SMOOTH_STEP_S = 9e-8


def sweep_estimate(points: int, steps: int, smooth: bool, fast: bool = False) -> "RunTimeEstimate":
    """The estimate of ``rdyn sweep``, summed over the grid's ``points`` (known before any work):
    :data:`SWEEP_POINT_STEP_S` per configuration-step (homogeneous activations) or
    :data:`SWEEP_SMOOTH_POINT_S` plus :data:`SWEEP_SMOOTH_STEP_S` per step and point (smooth)."""
    if smooth:
        seconds = SWEEP_START_S + points * (SWEEP_SMOOTH_POINT_S + steps * SWEEP_SMOOTH_STEP_S)
    else:
        seconds = SWEEP_START_S + points * steps * SWEEP_POINT_STEP_S[fast]
    count = str(steps) if steps < 10**6 else f"{steps:.3g}"
    return RunTimeEstimate("sweep", seconds, f"{points} configuration{'s' if points != 1 else ''} "
                           f"of {count} steps"
                           f"{' (smooth, one run each)' if smooth else ''}")


# rdyn crosscheck, homogeneous activations (full-matrix GD, verify/references/full_matrix.py):
# seconds of CPU per step on one BLAS thread, measured 2026-12-05 (2 shared cores, load 8).
# Population GD: 0.38, 0.71, 3.4, 19.9, 133 ms at D = 50, 100, 200, 400, 800 (M = 4, d = 8),
# modelled as CC_POP_D2_S D^2 (the entry-wise Gaussian forms) + CC_POP_D3_S D^3 (the D x D
# products of the logits and their backprop): 0.13, 0.63, 3.4, 20, 134 ms. Online SGD adds, per
# sample of the batch, CC_SGD_D_S D + CC_SGD_D2_S D^2: measured 6.6, 16.2, 41.8, 181 ms at
# D = 50, 100, 200, 400 with the default batch of 100, 156 ms at D = 200 with batch 400, 89 ms
# at D = 400 with batch 25; the model gives 5.2, 13.7, 41, 143, 155, 51 ms (within a factor 1.8).
# Several BLAS threads on idle cores are faster; loaded cores slower.
CC_POP_D2_S = 4.2e-8
CC_POP_D3_S = 2.1e-10
CC_SGD_D_S = 7.2e-7
CC_SGD_D2_S = 5.9e-9


def crosscheck_step_seconds(D: int, mode: str, batch: int) -> float:
    """Predicted seconds per full-matrix step of a homogeneous ``rdyn crosscheck``."""
    seconds = CC_POP_D2_S * D * D + CC_POP_D3_S * float(D) ** 3
    if mode == "sgd":
        seconds += batch * (CC_SGD_D_S * D + CC_SGD_D2_S * D * D)
    return seconds


def crosscheck_estimate(D: int, steps: int, mode: str, batch: int) -> "RunTimeEstimate":
    """The estimate of ``rdyn crosscheck`` with identity, relu or leaky: (steps + 1) full-matrix
    steps at :func:`crosscheck_step_seconds` (the collapsed map beside it costs nothing)."""
    what = "population GD" if mode == "population" else f"online SGD (batch {batch})"
    return RunTimeEstimate("crosscheck", (steps + 1) * crosscheck_step_seconds(D, mode, batch),
                           f"{steps} steps of {what} at D = {D}", steps=steps)


# rdyn asymptotics: the sympy derivation of the large-D limits (its size depends on the
# activation only), then, unless --no-check, the slow-manifold quadrature at D = 1e3..1e6:
# seconds of CPU on 2 shared cores (load 8, 2026-12-05): identity 2.4 s, relu 7.8 s (6.8 s
# --no-check; K = 4 and sqrtD 8.6-8.7 s), leaky 29.4 s (25.9 s --no-check)
ASYMPTOTICS_SECONDS = {"identity": 2.5, "relu": 7.0, "leaky": 26.0}
ASYMPTOTICS_CHECK_S = 2.0
# the smooth activations (erf, tanh, gelu, softplus, sigmoid, expr): three Gaussian moments
# (closed forms or 30-digit quadratures) and the slow-manifold check (measured
# 3.7 s of CPU with the check for x/2 + tanh(x), 1-2 s without)
ASYMPTOTICS_SMOOTH_S = 1.5


def asymptotics_estimate(activation: str, check: bool) -> "RunTimeEstimate":
    """The estimate of ``rdyn asymptotics`` (:data:`ASYMPTOTICS_SECONDS`, fixed sizes)."""
    seconds = (ASYMPTOTICS_SECONDS.get(activation, ASYMPTOTICS_SMOOTH_S)
               + (ASYMPTOTICS_CHECK_S if check else 0.0))
    return RunTimeEstimate("asymptotics", seconds,
                           f"the sympy derivation for {activation}"
                           f"{' and its check at D = 1e3..1e6' if check else ''}")


def fixed_size_estimate(command: str, quick: bool) -> "RunTimeEstimate":
    """The estimate of ``rdyn verify`` (all groups) or ``rdyn scaling`` (defaults): their
    sizes are fixed, so the line states the measured time."""
    table = VERIFY_SECONDS if command == "verify" else SCALING_SECONDS
    return RunTimeEstimate(command, table[quick], f"the {'quick' if quick else 'full'} "
                           f"{'checks' if command == 'verify' else 'fits'} of both papers")


# rdyn prove (Model A, verify/proofs), to T0 = T* + max(1000, T*/100), then the region's branch and bound.
# --route arb: every step in arb at 200 bits. Measured on 2 idle cores (load 1.2), whole processes, warm
# kernel cache: ReLU D = 9, K = 3 (T0 = 158500) 4.5 s; D = 12, K = 3, eta = 0.01 (T0 = 1177528) 18.5 s;
# identity D = 7, K = 2 (T0 = 38857) 1.6 s: 14 us per step plus 1.8 s (identity is faster per step; the
# model is an upper estimate there).
# --route float (the default): the steps to T* a block at a time from the compiled float rows
# (PROVE_FLOAT_STEP_S each), the steps T* .. T0 one at a time on the rows' balls (PROVE_ROW_STEP_S each,
# every statement of the late phase decided at each); see docs/proofs.md, "The float route", for the
# measurements behind both.
PROVE_STEP_S = 1.4e-5
PROVE_FIXED_S = 1.8
PROVE_FLOAT_STEP_S = 6e-7
PROVE_ROW_STEP_S = 4e-5


PROVE_HARD_CAP = 10**9   # the certified iteration stops there (verify/proofs/iterate.py, ``hard_cap``)


def prove_T0(T_star: int) -> int:
    """The step up to which rdyn prove iterates: T0 = T* + max(1000, T*/100)
    (:func:`rdyn.verification.proofs.engine.default_T0`), at most :data:`PROVE_HARD_CAP`."""
    from rdyn.verification.proofs.engine import default_T0

    return min(default_T0(T_star), PROVE_HARD_CAP)


def prove_estimate(T_stars, lower_bound: bool = False, route: str = "float") -> "RunTimeEstimate":
    """``rdyn prove`` over instances with float64 T* ``T_stars`` (one for a single instance): each
    :data:`PROVE_FIXED_S`, plus (``route`` "arb") :data:`PROVE_STEP_S` per step up to T0
    (:func:`prove_T0`), or (``route`` "float") :data:`PROVE_FLOAT_STEP_S` per step up to T* and
    :data:`PROVE_ROW_STEP_S` per step from T* to T0."""
    ends = [(min(int(T), PROVE_HARD_CAP), prove_T0(int(T))) for T in T_stars]
    steps = sum(T0 for _, T0 in ends)
    if route == "arb":
        seconds = steps * PROVE_STEP_S
    else:
        seconds = sum(T * PROVE_FLOAT_STEP_S + (T0 - T) * PROVE_ROW_STEP_S for T, T0 in ends)
    n = len(T_stars)
    count = str(steps) if steps < 10**6 else f"{steps:.3g}"
    what = (f"{count} certified steps to T0 = T* + max(1000, T*/100)" if n == 1
            else f"{n} instances, {count} certified steps in all")
    if any(T0 == PROVE_HARD_CAP for _, T0 in ends):
        what += f"; the iteration stops at its cap of {PROVE_HARD_CAP:.0e} steps, short of T0"
    return RunTimeEstimate("prove", n * PROVE_FIXED_S + seconds, what, lower_bound, steps)


def prove_tstar(config) -> tuple[float | None, str]:
    """The float64 T* of one ``rdyn prove`` instance, before any certified work: ``(T*, how)`` with
    ``how`` "float64" (a float64 run of at most 1e5, 1e6, then 1e7 steps reached it: exact up to
    rounding) or "the slow-manifold limit" (T* ~ tau_star/eta, a few hundredths of a second; an
    approximation), or ``(None, why)`` when neither gives a finite T* (e.g. ``--eta 5e-324``)."""
    from rdyn.reduced_dynamics.model_a.dynamics import Thresholds, run

    for probe_steps in (F64_PRE_RUN_STEPS // 100, F64_PRE_RUN_STEPS // 10, F64_PRE_RUN_STEPS):
        probe = run(config, steps=probe_steps, thresholds=Thresholds(), progress=False)
        if probe.T_star is not None:
            return float(probe.T_star), "float64"
        if probe.diverged_at_step is not None or probe.fixed_point_at is not None:
            return None, "the float64 run stops before T* (diverged or at a fixed point)"
    scaled = _scaled_tstar(config)
    if scaled is not None:
        return scaled
    return _limit_tstar(config)


SCALE_UP = 100   # T* ~ tau_star/eta once T* is large: a run at SCALE_UP eta reaches it SCALE_UP times sooner


def _scaled_tstar(config) -> tuple[float | None, str] | None:
    """T* beyond the float64 probes, from one float64 run of 1e7 steps at ``SCALE_UP`` times eta
    (T* ~ tau_star/eta, the slow-manifold limit's law, without its sympy; about 0.6 s): T* is
    ``SCALE_UP`` times that run's, or (None, why) when even that run does not reach it (T* > 1e9).
    None when ``SCALE_UP eta`` is not below eta_limit/2 (the law needs a small eta)."""
    from dataclasses import replace

    from rdyn.reduced_dynamics.model_a.dynamics import Thresholds, run

    if not _scalable(config):
        return None
    try:
        probe = run(replace(config, eta=float(config.eta) * SCALE_UP), steps=F64_PRE_RUN_STEPS,
                    thresholds=Thresholds(), progress=False)
    except (ArithmeticError, ValueError, TypeError):
        return None
    if probe.T_star is None and (probe.diverged_at_step is not None or probe.fixed_point_at is not None):
        return None
    return _scaled_outcome(probe.T_star)


def _scalable(config) -> bool:
    """Whether T* ~ tau_star/eta may be read off a run at ``SCALE_UP`` eta: that eta is below
    eta_limit/2."""
    from rdyn.reduced_dynamics.model_a.dynamics import eta_limit_fraction

    if config.eta is None:
        return False
    try:
        return Fraction(repr(float(config.eta) * SCALE_UP)) < eta_limit_fraction(config) / 2
    except (ArithmeticError, ValueError, TypeError):
        return False


def _scaled_outcome(probe_T_star) -> tuple[float | None, str]:
    """``(T*, how)`` from the T* of a float64 run of 1e7 steps at ``SCALE_UP`` eta (None: not reached)."""
    if probe_T_star is not None:
        return float(probe_T_star) * SCALE_UP, f"{SCALE_UP} times T* of a float64 run at {SCALE_UP} eta"
    return None, f"a float64 run of 1e7 steps at {SCALE_UP} eta does not reach it; T* ~ 1/eta"


def _limit_tstar(config) -> tuple[float | None, str]:
    from rdyn.reduced_dynamics.model_a.dynamics import Thresholds

    try:
        from rdyn.reduced_dynamics.model_a.limits.flow import phase_limits

        T_star = phase_limits(config, "slow", Thresholds()).T_star
    except Exception:   # noqa: BLE001 (an estimate only)
        T_star = math.nan
    if not math.isfinite(T_star) or T_star <= 0:
        return None, "no float64 run of 1e7 steps reaches it, and its slow-manifold limit tau_star/eta is infinite"
    return float(T_star), "the slow-manifold limit"


def prove_grid_tstars(configs, cap: int | None = None, progress=None) -> list[tuple[float | None, str]]:
    """:func:`prove_tstar` of every instance of a proof sweep, by batched float64 runs
    (``run_batch``: about 35 ns per instance and step) of 1e5, 1e6 and 1e7 steps over the instances
    still without T*, then one of 1e7 steps at ``SCALE_UP`` eta (T* ~ 1/eta), then the slow-manifold
    limit for the rest; with ``cap`` beyond 1e7, the instances whose estimate lies within a factor 2
    of it (or is missing) are run in float64 to ``cap + 1`` steps, so the cap is decided as exactly as
    by a float64 run to it. ``cap`` (``--max-tstar``): the runs
    stop at ``cap + 1`` steps, and an instance not at T* by then is ``(None, "cap")`` (exact, as a
    float64 run to the cap). ``progress(text)``: a line before each batch."""
    from rdyn.reduced_dynamics.model_a.batch import run_batch

    out: list = [None] * len(configs)
    todo = list(range(len(configs)))
    limit = None if cap is None else cap + 1
    for probe in (F64_PRE_RUN_STEPS // 100, F64_PRE_RUN_STEPS // 10, F64_PRE_RUN_STEPS):
        if not todo:
            break
        steps = probe if limit is None else min(probe, limit)
        seconds = len(todo) * steps * SWEEP_POINT_STEP_S[False]
        if progress is not None and seconds > 2:   # a line before batches that take a while
            progress(f"float64 T* of {len(todo)} instance{'s' if len(todo) != 1 else ''} ({steps} steps each, "
                     f"about {seconds:.0f} s)")
        rows = run_batch([configs[i] for i in todo], steps).rows
        still = []
        for i, r in zip(todo, rows):
            if r["T_star"] is not None:
                out[i] = (float(r["T_star"]), "float64")
            else:
                still.append(i)
        todo = still
        if limit is not None and steps >= limit:
            break
    if limit is not None and limit <= F64_PRE_RUN_STEPS:
        for i in todo:
            out[i] = (None, "cap")
        return out
    # beyond the probes: one batched run of 1e7 steps at SCALE_UP eta (T* ~ 1/eta), then the limit
    from dataclasses import replace

    scalable = [i for i in todo if _scalable(configs[i])]
    if scalable:
        if progress is not None and len(scalable) * F64_PRE_RUN_STEPS * SWEEP_POINT_STEP_S[False] > 2:
            progress(f"float64 T* of {len(scalable)} instance{'s' if len(scalable) != 1 else ''} at {SCALE_UP} eta "
                     f"({F64_PRE_RUN_STEPS} steps each)")
        rows = run_batch([replace(configs[i], eta=float(configs[i].eta) * SCALE_UP) for i in scalable],
                         F64_PRE_RUN_STEPS).rows
        for i, r in zip(scalable, rows):
            out[i] = _scaled_outcome(r["T_star"])
    for i in todo:
        if out[i] is None:
            out[i] = _limit_tstar(configs[i])
    if limit is not None:   # --max-tstar beyond the probes: decided exactly where the estimate is near it
        near = [i for i in todo if out[i][0] is None or limit / 2 < out[i][0] < 2 * limit]
        if near:
            if progress is not None and len(near) * limit * SWEEP_POINT_STEP_S[False] > 2:
                progress(f"float64 T* of {len(near)} instance{'s' if len(near) != 1 else ''} near --max-tstar "
                         f"({limit} steps each, about {len(near) * limit * SWEEP_POINT_STEP_S[False]:.0f} s)")
            rows = run_batch([configs[i] for i in near], limit).rows
            for i, r in zip(near, rows):
                out[i] = (float(r["T_star"]), "float64") if r["T_star"] is not None else (None, "cap")
        for i in todo:
            if out[i][0] is not None and out[i][0] >= 2 * limit:
                out[i] = (None, "cap")
    return out


def claims_estimate(paper: str | None, full: bool) -> "RunTimeEstimate":
    """The estimate of ``rdyn claims`` (:data:`CLAIMS_SECONDS`; the checks' sizes are fixed,
    so the time is known up to the machine's load)."""
    key = (paper or "all", not full)
    which = "both papers" if key[0] == "all" else f"paper {key[0]}"
    return RunTimeEstimate("claims", CLAIMS_SECONDS[key],
                           f"the {'full-size' if full else 'quick'} checks of {which}")


@dataclass(frozen=True)
class RunTimeEstimate:
    """A predicted run time: ``seconds`` for the ``work`` described (e.g. "40000 steps at
    --dps 4000"); ``lower_bound``: the work (hence the time) is at least this."""

    command: str
    seconds: float
    work: str
    lower_bound: bool = False
    steps: int | None = None   # the steps counted, where the estimate counts steps

    def line(self) -> str:
        """The stderr line, e.g. ``rdyn teacher: about 65 s (40000 steps at --dps 4000)``."""
        about = "more than" if self.lower_bound else "about"
        return (f"rdyn {self.command}: {about} {_duration(self.seconds)} "
                f"({'at least ' if self.lower_bound else ''}{self.work})")


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def teacher_step_seconds(dps: int) -> float:
    """Predicted seconds per GD step of the collapsed map on arb balls at ``dps`` digits."""
    return TEACHER_OVERHEAD_S + TEACHER_A_S * float(dps) ** TEACHER_B


def default_teacher_steps(config, thresholds, min_steps: int) -> tuple[int, bool]:
    """(steps, lower_bound) of a run without ``--steps`` (it stops at max(2 T*, min_steps)),
    from float64 runs of 1e5, 1e6, then 1e7 (:data:`PRE_RUN_STEPS`) steps, stopping at the first
    that reaches T* (a diverging run stops at its divergence step)."""
    from rdyn.reduced_dynamics.model_a.dynamics import run

    for probe_steps in (PRE_RUN_STEPS // 100, PRE_RUN_STEPS // 10, PRE_RUN_STEPS):
        probe = run(config, steps=probe_steps, thresholds=thresholds, progress=False)
        if probe.T_star is not None:   # T* does not depend on how far a run goes
            return max(2 * probe.T_star, min_steps), False
        if probe.diverged_at_step is not None:
            return max(probe.diverged_at_step, 1), False
    return max(2 * PRE_RUN_STEPS, min_steps), True


# the compiled float64 loop of rdyn teacher (identity, relu, leaky): seconds per step, measured
# 44-56 ns of CPU per step over 1e8-step runs (D = 20 and 1000, relu and leaky) on 2 shared
# cores (load about 5)
TEACHER_F64_STEP_S = 6e-8
F64_PRE_RUN_STEPS = 10**7   # at most about 0.6 s of probes; a run beyond it takes over 1 s


def default_float64_steps(config, thresholds, min_steps: int) -> tuple[int, bool]:
    """(steps, lower_bound) of a float64 run without ``--steps`` (it stops at max(2 T*,
    min_steps), at most ``model_a.MAX_STEPS``): T* from float64 runs of 1e5, 1e6, 1e7 steps
    (:data:`F64_PRE_RUN_STEPS`; stopping at the first that reaches T*), else from the
    slow-manifold limit
    (``--method slow``: T* ~ tau_star / eta, a few seconds for any D; rdyn teacher --D 1000:
    T* ~ 8.3e11, so the run is capped at 1e12 steps, about 17 h), else a lower bound."""
    from rdyn.reduced_dynamics.model_a.dynamics import MAX_STEPS, run

    for probe_steps in (F64_PRE_RUN_STEPS // 100, F64_PRE_RUN_STEPS // 10, F64_PRE_RUN_STEPS):
        # growing probes: a run cut short by T* costs at most about what the run itself does
        probe = run(config, steps=probe_steps, thresholds=thresholds, progress=False)
        if probe.T_star is not None:
            return max(2 * probe.T_star, min_steps), False
        if probe.diverged_at_step is not None or probe.fixed_point_at is not None:
            return max(probe.steps, min_steps), False
    try:
        from rdyn.reduced_dynamics.model_a.limits.flow import phase_limits

        T_star = phase_limits(config, "slow", thresholds).T_star
    except Exception:   # the limit is an estimate only: without it, a lower bound
        T_star = math.nan
    if not math.isfinite(T_star):
        return F64_PRE_RUN_STEPS, True
    return int(min(max(2 * T_star, min_steps), MAX_STEPS)), False


def teacher_float64_estimate(config, steps: int | None, thresholds,
                             min_steps: int) -> RunTimeEstimate:
    """The estimate of a float64 ``rdyn teacher`` map run (identity, relu, leaky):
    steps (given, or :func:`default_float64_steps`) times :data:`TEACHER_F64_STEP_S`."""
    lower, note = False, ""
    if steps is None:
        steps, lower = default_float64_steps(config, thresholds, min_steps)
        if not lower and steps > 2 * F64_PRE_RUN_STEPS:   # beyond the probes: the limit's T*
            note = ", to 2 T* of the slow-manifold limit"
    count = str(steps) if steps < 10**6 else f"{steps:.3g}"
    return RunTimeEstimate("teacher", steps * TEACHER_F64_STEP_S,
                           f"{count} steps in float64{note}", lower, steps)


# smooth activations in float64 (compiled loops, reduced_dynamics/model_a_compiled*.py): seconds
# per step of erf's and GELU's closed forms (measured 2-3 us over 1e6-step runs, D = 20, K = 4,
# 48-64 nodes, 2 shared cores at load 5) and per lattice point of the tensor rule (n^2 points a
# step; measured 10 ns for tanh on 96 nodes, 15 ns for x*tanh(x)+x on 128); a formula numba
# cannot compile runs the numpy step, slower
SMOOTH_F64_STEP_S = {"erf": 3e-6, "gelu": 4e-6}
SMOOTH_F64_POINT_S = 1.5e-8


def smooth_float64_step_seconds(activation: str, nodes: int) -> float:
    """Predicted seconds per step of a float64 smooth run on ``nodes`` Gauss-Hermite nodes."""
    if activation in SMOOTH_F64_STEP_S:
        return SMOOTH_F64_STEP_S[activation]
    return SMOOTH_F64_POINT_S * nodes * nodes


def smooth_float64_estimate(config, nodes: int, steps: int | None, thresholds, min_steps: int,
                            max_steps: int) -> RunTimeEstimate | None:
    """The estimate of a float64 smooth ``rdyn teacher`` run once its node count is chosen, or
    None when even the longest run it may make (``steps``, or a default run's ``max_steps``)
    is predicted below :data:`ANNOUNCE_ABOVE_S`. A default run's length is 2 T* from the
    slow-manifold limit (``smooth_flow``, a few seconds; computed only when the run may be
    long), at least ``min_steps``, at most ``max_steps``."""
    per_step = smooth_float64_step_seconds(config.activation.name, nodes)
    if (steps if steps is not None else max_steps) * per_step <= ANNOUNCE_ABOVE_S:
        return None
    lower, note = False, ""
    if steps is None:
        try:
            from rdyn.reduced_dynamics.model_a.limits.smooth_flow import smooth_phase_limits

            T_star = smooth_phase_limits(config, "slow", thresholds).T_star
        except Exception:   # an estimate only
            T_star = math.nan
        if math.isfinite(T_star):
            steps = int(min(max(2 * T_star, min_steps), max_steps))
            note = ", to 2 T* of the slow-manifold limit" if steps < max_steps else \
                ", the default run's most (T* of the slow-manifold limit is beyond)"
        else:
            steps, note = max_steps, ", the default run's most"
    return RunTimeEstimate("teacher", steps * per_step,
                           f"{steps} steps on {nodes} nodes in float64{note}", lower, steps)


def teacher_estimate(config, steps: int | None, dps: int | None, certify: bool, thresholds,
                     min_steps: int) -> RunTimeEstimate | None:
    """The estimate of an ``rdyn teacher`` map run at ``dps`` digits (None for float64 runs,
    which the compiled loop runs at about 1e7 steps per second)."""
    if dps is None:
        return None
    lower = False
    if steps is None:
        steps, lower = default_teacher_steps(config, thresholds, min_steps)
    per_step = teacher_step_seconds(dps) * (1 + (CERTIFY_FACTOR if certify else 0))
    return RunTimeEstimate("teacher", steps * per_step, f"{steps} steps at --dps {dps}", lower)


def kept_nodes(nodes: int, dps: int) -> int:
    """How many of an ``nodes``-point rule's nodes a ``dps`` run evaluates: those of weight
    >= 10^-(dps+5) times the largest (``gauss_hermite.precise_rule`` prunes the rest; e.g. 86
    of 128 at N = 30, all at N = 300). The rule's digits are cached, so this costs nothing
    after ``choose_rule``."""
    from rdyn.reduced_dynamics.model_a.gauss_hermite import precise_rule

    return len(precise_rule(nodes, dps, str).nodes)


def smooth_step_seconds(activation: str, nodes: int, dps: int) -> float:
    """Predicted seconds per step of the quadrature loop of a smooth activation at ``dps``
    digits on ``nodes`` evaluated Gauss-Hermite nodes (:func:`kept_nodes`): ``nodes`` node
    evaluations (erf, gelu: the inner average is a closed form) or ``nodes**2`` (the tensor
    rule of the others), each :data:`SMOOTH_NODE_S` ``[activation] * (1 + (dps /
    SMOOTH_KNEE_DPS)**1.5)``."""
    evaluations = nodes ** 2 if activation in TENSOR_RULE else nodes
    return evaluations * SMOOTH_NODE_S[activation] * (1 + (dps / SMOOTH_KNEE_DPS) ** 1.5)


def default_smooth_steps(config, thresholds, min_steps: int) -> tuple[int, bool]:
    """(steps, lower_bound) of a smooth run without ``--steps`` (it stops at max(2 T*,
    min_steps)), T* from a float64 run of at most :data:`SMOOTH_PRE_RUN_STEPS` steps (compiled
    for erf/gelu, a float64 quadrature otherwise); beyond it, a lower bound."""
    from rdyn.reduced_dynamics.model_a.smooth import run

    probe = run(config, None, (), thresholds.t1_fraction, thresholds.tstar_attention,
                max_default_steps=SMOOTH_PRE_RUN_STEPS, min_default_steps=min_steps)
    if probe.diverged_at_step is not None:
        return max(probe.diverged_at_step, 1), False
    if probe.T_star is None:
        return max(SMOOTH_PRE_RUN_STEPS, min_steps), True
    return max(2 * probe.T_star, min_steps), False


def smooth_teacher_estimate(activation: str, nodes: int, steps: int, dps: int, certify: bool,
                            lower_bound: bool = False) -> RunTimeEstimate:
    """The estimate of ``rdyn teacher --activation A --dps N`` once the node count is chosen
    (``model_a.smooth.run``'s ``on_rule``; again if the a-posteriori check repeats the run with
    more nodes): (steps + :data:`SMOOTH_EXTRA_STEPS`) times
    :func:`smooth_step_seconds`, plus with ``certify`` the certified pass: (erf, gelu) steps
    times :data:`SMOOTH_CERTIFY_FACTOR` ``[activation] *`` :func:`teacher_step_seconds`; (tanh,
    softplus, sigmoid, formulas) steps times :func:`strip_certify_step_seconds`."""
    seconds = (steps + SMOOTH_EXTRA_STEPS) * smooth_step_seconds(activation, kept_nodes(nodes, dps), dps)
    if certify and activation in SMOOTH_CERTIFY_FACTOR:   # erf, gelu: closed forms on arb balls
        seconds += steps * SMOOTH_CERTIFY_FACTOR[activation] * teacher_step_seconds(dps)
    elif certify:   # tanh, softplus, sigmoid, formulas: the strip quadrature
        seconds += steps * strip_certify_step_seconds(activation, dps)
    return RunTimeEstimate("teacher", seconds,
                           f"{steps} steps on {nodes} nodes at --dps {dps}", lower_bound)


def strip_certify_step_seconds(activation: str, dps: int | None) -> float:
    """Predicted seconds per step of the certified strip quadrature (``--certify`` for tanh,
    softplus, sigmoid, formulas) aiming at ``dps`` digits (None: 1e-15): :data:`STRIP_CERTIFY_STEP_S`
    times ``(d / 15)**2.3``, ``d`` capped at the strip's most digits."""
    from rdyn.reduced_dynamics.certified.strip import STRIP_DPS_MAX

    digits = 15 if dps is None else min(int(dps), STRIP_DPS_MAX)
    return STRIP_CERTIFY_STEP_S.get(activation, STRIP_CERTIFY_STEP_S["expr"]) * max(1.0, digits / 15) ** 2.3


def crosscheck_smooth_estimate(M: int, D: int, steps: int) -> RunTimeEstimate:
    """The estimate of ``rdyn crosscheck --activation erf|tanh|gelu|softplus|sigmoid|expr``:
    full-matrix population GD evaluates one Gaussian expectation (and its two derivatives) per
    entry of the M x D output per step, (steps + 1) M D in all, at
    :data:`SMOOTH_ENTRY_S` seconds each."""
    entries = (steps + 1) * M * D
    return RunTimeEstimate("crosscheck", entries * SMOOTH_ENTRY_S,
                           f"{steps} steps of {M} x {D} Gaussian expectations")


# rdyn ln on sphere data with a sampled expectation (qmc, monte_carlo): drawing the sample,
# per point and coordinate of the d n + d it needs, then per step, point and dimension d;
# measured on the looped model's defaults (d = 16, n = 32, 1e5 points): 6.3 s of CPU for 20
# steps, 10.4 s for 400 (2 shared cores)
SAMPLED_DRAW_S = 1.1e-7
SAMPLED_STEP_S = 6.7e-9


def sampled_ln_estimate(d: int, n: int, samples: int, steps: int) -> RunTimeEstimate:
    """The estimate of ``rdyn ln --data sphere`` with a sampled expectation: ``samples (d n + d)``
    coordinates drawn at :data:`SAMPLED_DRAW_S` each, then ``steps samples d`` at
    :data:`SAMPLED_STEP_S` (a rough model, measured on the looped model's defaults)."""
    seconds = SAMPLED_DRAW_S * samples * (d * n + d) + SAMPLED_STEP_S * steps * samples * d
    return RunTimeEstimate("ln", seconds, f"{samples} sampled points of dimension {d}, "
                           f"{steps} steps")


def gaussian_route_estimate(model: str, spectrum, dps: int | None, steps: int,
                            L: int | None = None) -> RunTimeEstimate:
    """The estimate of a Gaussian-route run at ``dps`` digits: its grids are sized from the
    spectrum alone (``model_b.gaussian.grid_nodes``, nothing allocated). ``r`` distinct
    eigenvalues, ``S`` single-layer nodes, cost per node and level ``c = GAUSS_NODE_S * (1 +
    (N / GAUSS_KNEE_DPS)**1.5)``: the constants ``1.6 c r S``, plus per step (steps + 1
    evaluations) ``c r S`` (ln), nothing (noln: the recursion needs only the constants), or
    ``c r T`` on the looped model's ``T``-node tau grid (and once more for Upsilon_1)."""
    from rdyn.reduced_dynamics.model_b.gaussian import grid_nodes

    r = len(set(spectrum))
    per_node = (GAUSS_F64_NODE_S if dps is None else
                GAUSS_NODE_S * (1 + (dps / GAUSS_KNEE_DPS) ** 1.5)) * r
    single = grid_nodes(tuple(spectrum), dps)
    seconds = GAUSS_CONSTANTS_EVALUATIONS * per_node * single
    shown = single
    if model == "ln":
        seconds += (steps + 1) * per_node * single
    elif model == "looped":   # the steps run on the looped model's tau grid
        shown = grid_nodes(tuple(spectrum), dps, L)
        seconds += (steps + 2) * per_node * shown
    where = "in float64" if dps is None else f"at --dps {dps}"
    return RunTimeEstimate("ln", seconds, f"the Gaussian route on {shown} nodes {where}, "
                           f"{steps} steps")


def ln_estimate(model: str, spectrum, dps: int | None, steps: int,
                L: int | None = None) -> RunTimeEstimate | None:
    """The estimate of ``rdyn ln --data spectrum --spectrum S --dps N`` (exact rules), made before
    the rule is built: the theta rule (2 distinct eigenvalues) or the Dirichlet rule (3, 4;
    single layers) as the ``LN_*`` constants above say, and the Gaussian route (more distinct
    eigenvalues, the looped model with 3 or more, or a Dirichlet rule over its node budget:
    :func:`gaussian_route_estimate`; ``L``: the looped model's loop count). None for float64
    runs off the Gaussian route (fast) and one distinct eigenvalue (no quadrature)."""
    from rdyn.reduced_dynamics.model_b.exact import (MAX_EXACT_LEVELS, THETA_MAX_DEGREE,
                                                     dirichlet_orders, gaussian_route_at,
                                                     theta_start_degree)

    if spectrum is None:
        return None
    r = len(set(spectrum))
    if gaussian_route_at(tuple(spectrum), model, dps):   # float64 too: large spectra are slow
        return gaussian_route_estimate(model, spectrum, dps, steps, L if model == "looped" else None)
    if dps is None:
        return None
    step_cost = 0.0 if model == "noln" else 1.0
    if r == 2:
        factor = 1 + (dps / LN_KNEE_DPS) ** 1.5
        first = theta_start_degree(dps)
        last = first if first >= THETA_MAX_DEGREE else min(first + 2, THETA_MAX_DEGREE)
        built = sum((3 * 2 ** (m - 1)) ** 2 for m in range(first, last + 1))
        seconds = factor * (LN_THETA_BUILD_S * built + steps * step_cost * LN_THETA_STEP_S)
        return RunTimeEstimate("ln", seconds, f"a {3 * 2 ** (last - 1)}-node theta rule at "
                               f"--dps {dps}, {steps} steps")
    if r < 2 or r > MAX_EXACT_LEVELS or model == "looped":
        return None
    first, second = (n ** (r - 1) for n in dirichlet_orders(dps))
    seconds = (LN_DIRICHLET_BUILD_S * (first + second)
               + steps * step_cost * LN_DIRICHLET_STEP_S * second)
    return RunTimeEstimate("ln", seconds, f"a {second}-node rule at --dps {dps}, {steps} steps")


def announce(estimate: RunTimeEstimate | None, quiet: bool, file=None) -> bool:
    """Print ``estimate.line()`` on stderr when the run is predicted to take more than
    :data:`ANNOUNCE_ABOVE_S` seconds and ``quiet`` is false; returns whether it printed."""
    if quiet or estimate is None or estimate.seconds <= ANNOUNCE_ABOVE_S:
        return False
    print(estimate.line(), file=file or sys.stderr, flush=True)
    return True
