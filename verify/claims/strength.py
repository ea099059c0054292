"""The strength of every verdict of the claims ledger and of every correction (docs/claims.md,
"Strength"): how much a ``pass`` (or a ``discrepancy``) is worth.

* ``proved``: every step machine-checked (sympy identity or exact comparison of derived forms; no sympy
  ``limit`` as proof, no sample point, no step argued in prose) for every parameter value in a stated
  ``domain``; an exact comparison that rests on a law certified per instance (the late-phase law,
  :data:`LATE_LAW_COMPARISONS`) is ``certified`` at that law's instances;
* ``certified``: rigorous ball arithmetic (``rdyn prove``, :mod:`rdyn.verification.proofs`)
  establishes it for the listed ``instances`` (each pinned by tests/verify/proofs/test_engine.py or
  tests/verify/proofs/test_sweep.py);
* ``sampled``: true at the listed ``points`` only (the deciding checks: trajectories, grids,
  quadrature or Monte Carlo comparisons);
* ``fitted``: a finite-size fit of a rate decides (evidence only);
* ``None`` for ``not_checkable``.

The strength of an entry is the weakest over its deciding checks (``proved`` > ``certified`` >
``sampled`` > ``fitted``), read from :data:`CHECK_STRENGTH` (first matching pattern; unlisted
checks are ``sampled``), except that the statements ``rdyn prove`` decides (:data:`PROVED_BY_PROVE`)
are ``certified`` at :data:`PROVE_INSTANCES`: a printed statement refuted there by a certified
counterexample, a printed or corrected one certified there.

:func:`scope` states what a strength covers and nothing wider (``covers``, the printed ``text``, the domain,
instances, points or fits, and the logits/sqrt(D) ones as outside the paper's model); a correction's
``valid`` begins with it.
"""
from __future__ import annotations

from fractions import Fraction

from rdyn.verification.claims.trajectories import papers_step_size

ORDER = ("fitted", "sampled", "certified", "proved")   # weakest first

# check id pattern -> strength (first match wins; registry glob syntax)
CHECK_STRENGTH = (
    # symbolic: derived expressions compared exactly (sympy identities over every parameter value)
    ("A.*.identity", "proved"),
    ("A.F?.identity", "proved"),
    ("A.F2_?.identity", "proved"),
    ("A.errata.derived.*", "proved"),
    ("A.errata.D15_condition", "proved"),
    ("B.recursion.identities", "proved"),
    # the OOD slope of the paper's noisy estimator: derived sign of its linear term, on sampled batches
    ("A.claim.sec4.ood_slope_batch", "sampled"),
    # Lemma D.17's eta T* law: an argument for the identity (rdyn.derivations.model_a.tstar_law) and for ReLU and Leaky
    # ReLU (rdyn.derivations.model_a.tstar_law_relu) whose identities, inequalities and limits are exact obligations
    # but whose step 0 and calculus frame are not machine-checked (tstar_law.UNCHECKED_STEPS): the checks compare the bounds
    # with the flow at listed instances, so they are sampled (the basis names the exact part)
    ("A.errata.Tstar.identity_proof", "sampled"),
    ("A.errata.Tstar.relu_proof", "sampled"),
    ("A.errata.Tstar", "sampled"),
    # the D- and ||V*||^2-exponents of T*'s leading term D^a (D-K)^2 I0: exact for that term, but that T*
    # follows the term is Lemma D.17's law, itself sampled: no stronger than it (and not a fit)
    ("A.flow.Tstar_exponent.*", "sampled"),
    # finite-size fits of rates
    ("*exponent*", "fitted"),
    ("*slope*", "fitted"),
    ("A.errata.late.*", "fitted"),
    ("A.errata.ood", "fitted"),
    ("B.claim.thm42.linear_rate", "fitted"),
)
DOMAINS = {
    "proved": "every parameter value admitted by the derivation (D > K >= 1, eta > 0, ||V*||^2 > 0, "
              "0 <= kappa < 1; exact sympy identities)",
}

# The instances at which tests pin rdyn prove's verdicts (options of rdyn prove; eta None: the papers'
# step-size condition, rdyn prove's default; eta "half_limit": eta_limit/2 exactly, the grid word of
# ``rdyn prove --grid``). The first four: tests/verify/proofs/test_engine.py; the rest are the validation instances of
# the ledger's A.errata.bound.D18/D19 checks (verify/checks/errata_a.py, quick and full sizes, both logit
# scales, ReLU, identity and Leaky ReLU): tests/verify/proofs/test_sweep.py proves every statement there and
# pins the corrected D.18 and D.19 margins.
PROVE_INSTANCES = (
    {"D": 9, "K": 3, "activation": "relu", "vstar_norm2": 1.0, "eta": None,
     "logit_scale": "D"},
    {"D": 7, "K": 2, "activation": "identity", "vstar_norm2": 1.0, "eta": None, "logit_scale": "D"},
    {"D": 7, "K": 2, "activation": "relu", "vstar_norm2": 1.0, "eta": None, "logit_scale": "sqrtD"},
    {"D": 12, "K": 3, "activation": "relu", "vstar_norm2": 1.0, "eta": 0.01, "logit_scale": "D"},
    {"D": 8, "K": 2, "activation": "relu", "vstar_norm2": 1.0, "eta": "half_limit", "logit_scale": "D"},
    {"D": 8, "K": 2, "activation": "relu", "vstar_norm2": 1.0, "eta": None, "logit_scale": "D"},
    {"D": 20, "K": 4, "activation": "relu", "vstar_norm2": 1.0, "eta": "half_limit", "logit_scale": "D"},
    {"D": 8, "K": 2, "activation": "identity", "vstar_norm2": 1.0, "eta": "half_limit", "logit_scale": "D"},
    {"D": 12, "K": 3, "activation": "leaky", "kappa": 0.1, "vstar_norm2": 1.0, "eta": "half_limit",
     "logit_scale": "D"},
    {"D": 12, "K": 3, "activation": "identity", "vstar_norm2": 1.0, "eta": None, "logit_scale": "D"},
    {"D": 10, "K": 2, "activation": "leaky", "kappa": 0.3, "vstar_norm2": 1.0, "eta": None, "logit_scale": "D"},
    {"D": 10, "K": 2, "activation": "relu", "vstar_norm2": 1.0, "eta": "half_limit", "logit_scale": "sqrtD"},
    {"D": 12, "K": 3, "activation": "leaky", "kappa": 0.3, "vstar_norm2": 1.0, "eta": "half_limit",
     "logit_scale": "sqrtD"},
    {"D": 12, "K": 3, "activation": "identity", "vstar_norm2": 1.0, "eta": "half_limit", "logit_scale": "sqrtD"},
)


# Corrections also certified for every step size of a range at once (rdyn prove --eta LO:HI,
# rdyn.verification.proofs.eta_box: an invariant tube of the whole trajectory, eta a ball): the labels, the grid of
# configurations (every D in D_range and K >= 1 with D > 2K, each activation) and the range of eta, from 0 up to
# the papers' step-size condition of each configuration. tests/verify/proofs/test_eta_box_grid.py (slow) proves
# every configuration and pins docs/proofs.md's table of c_lag; test_eta_box.py (default) the one of the issue.
PROVE_ETA_GRID = {"labels": ("Lemma D.10", "Lemma D.18", "Lemma D.19"), "D_range": (3, 24),
                  "activations": ("relu", "identity", "leaky"), "kappa": 0.1, "vstar_norm2": 1.0,
                  "logit_scale": "D", "eta": (0.0, "paper")}
# The same statements at larger D for one K (``K``: the K proved; without it every K with D > 2K), each configuration
# within ``max_boxes`` (rdyn prove --max-boxes; D = 48 takes about 250000 boxes):
# tests/verify/proofs/test_eta_box_grid_large_d.py (slow) proves them and pins docs/proofs.md's table of c_lag.
PROVE_ETA_GRID_LARGE_D = {**PROVE_ETA_GRID, "D_range": (25, 48), "K": (3,), "activations": ("relu", "identity"),
                          "max_boxes": 2_000_000}
PROVE_ETA_GRIDS = (PROVE_ETA_GRID, PROVE_ETA_GRID_LARGE_D)


# ledger entries (printed statements, not corrections) that rdyn prove --eta 0:paper also certifies at every
# configuration of PROVE_ETA_GRID: every statement of these labels is decided over a range and certified there
# (tests/verify/proofs/test_eta_box_grid.py, slow; the D = 12, K = 3 configuration in test_eta_box.py)
ETA_GRID_ENTRIES = ("Lemma D.5", "Lemma D.9", "Lemma D.9 (increment)", "Lemma D.11", "Lemma D.12",
                    "Lemma D.13 (attention)", "Lemma D.13 (C1 step)", "Lemma D.16", "Lemma D.17 (C1 band)")
# entries rdyn prove decides over a range only, never at one instance: Lemma D.13's t1 = Theta(1/eta) (explicit
# 0 < a <= eta t1 <= b for every eta of the range, rdyn.verification.proofs.phase_times), certified at every
# configuration of PROVE_ETA_GRID (the same slow grid tests) and at no instance
ETA_RANGE_ONLY_ENTRIES = ("Lemma D.13 (t1)",)


def eta_box_configs(grid: dict = PROVE_ETA_GRID) -> list[dict]:
    """Every configuration of ``grid`` with its range: ``{"activation", "D", "K", "kappa", "vstar_norm2",
    "logit_scale", "eta": (lo, hi)}`` (floats; ``rdyn prove --eta lo:hi``)."""
    from rdyn.verification.claims.trajectories import paper_eta_cover   # every eta of the condition, and an ulp

    lo_D, hi_D = grid["D_range"]
    out = []
    for activation in grid["activations"]:
        for D in range(lo_D, hi_D + 1):
            for K in grid.get("K") or range(1, (D - 1) // 2 + 1):
                if not D > 2 * K:
                    continue
                lo, hi = grid["eta"]
                hi = paper_eta_cover(D, K, grid["vstar_norm2"]) if hi == "paper" else float(hi)
                out.append({"activation": activation, "D": D, "K": K,
                            "kappa": grid["kappa"] if activation == "leaky" else 0.0,
                            "vstar_norm2": grid["vstar_norm2"], "logit_scale": grid["logit_scale"],
                            "eta": (float(lo), hi)})
    return out


def eta_box_text(grid: dict = PROVE_ETA_GRID) -> str:
    """``grid`` in words."""
    lo, hi = grid["eta"]
    upper = ("min(K/D, K^3 (D-K)/(||V*||^2 D^3 (D+1))) (the papers' step-size condition)" if hi == "paper"
             else repr(hi))
    scale = "logits/D" if grid["logit_scale"] == "D" else "logits/sqrt(D) [outside the paper's model]"
    words = {"relu": "ReLU", "identity": "identity", "leaky": f"Leaky ReLU (kappa = {grid['kappa']:g})"}
    names = [words[a] for a in grid["activations"]]
    Ks = "K >= 1 with D > 2K" if not grid.get("K") else "K = " + ", ".join(str(K) for K in grid["K"])
    return (f"every eta in ({lo:g}, {upper}] at every D = {grid['D_range'][0]}..{grid['D_range'][1]} and {Ks}, "
            f"{', '.join(names)} ({len(eta_box_configs(grid))} configurations), "
            f"||V*||^2 = {grid['vstar_norm2']:g}, {scale}")


# Lemma D.19's two sides and the lag lemma on the late-phase band, for every D from D_from on and every eta with
# eta D <= K at once (rdyn prove --D LO: without --eta, rdyn.verification.proofs.all_d): the configurations (each
# activation, K = 1..K_max, D_from = 2K + 1). The entry into the band at T* is not shown for every D, so this backs
# the band statements only (tests/verify/proofs/test_all_d.py proves every configuration).
PROVE_ALL_D = {"labels": ("Lemma D.19",), "activations": ("relu", "identity", "leaky"), "kappa": 0.1,
               "K_range": (1, 11), "vstar_norm2": 1.0, "logit_scale": "D"}


def all_d_configs(grid: dict = PROVE_ALL_D) -> list[dict]:
    """Every configuration of ``grid``: ``{"activation", "K", "D_from", "kappa", "vstar_norm2"}``
    (``rdyn prove --D D_from: --K K``)."""
    return [{"activation": a, "K": K, "D_from": 2 * K + 1, "kappa": grid["kappa"] if a == "leaky" else 0.0,
             "vstar_norm2": grid["vstar_norm2"]}
            for a in grid["activations"] for K in range(grid["K_range"][0], grid["K_range"][1] + 1)]


def all_d_text(grid: dict = PROVE_ALL_D) -> str:
    """``grid`` in words."""
    words = {"relu": "ReLU", "identity": "identity", "leaky": f"Leaky ReLU (kappa = {grid['kappa']:g})"}
    lo, hi = grid["K_range"]
    return (f"on the late-phase band only (the band of |C1/C1* - 1| (D-K)/e^3 of the certificate; that the state at "
            f"T* lies in it is not shown for every D), at every D >= 2K + 1 and every eta with eta D <= K, for "
            f"K = {lo}..{hi}, {', '.join(words[a] for a in grid['activations'])} ({len(all_d_configs(grid))} "
            f"configurations), ||V*||^2 = {grid['vstar_norm2']:g}, logits/D")


def prove_grid_text(instance: dict) -> str:
    """The ``rdyn prove --grid`` text of one of :data:`PROVE_INSTANCES` (eta None: the word paper)."""
    eta = instance["eta"]
    parts = [f"D={instance['D']}", f"K={instance['K']}", f"activation={instance['activation']}",
             f"vstar_norm2={instance['vstar_norm2']}", f"logit_scale={instance['logit_scale']}",
             f"eta={'paper' if eta is None else eta}"]
    if "kappa" in instance:
        parts.append(f"kappa={instance['kappa']}")
    return ";".join(parts)


# ledger labels decided by rdyn prove (Model A): entry and correction. Lemma D.10: the printed hypothesis
# p(t) <= 1/(2 pi D K) is certified never to hold (the vacuous_condition discrepancy) and the corrected
# statement (C1* increasing while p <= p_c, decreasing after; p_c the certified unique zero of dC1*/dp)
# is rdyn prove's D10.corrected, certified at every instance of PROVE_INSTANCES (tests/verify/proofs/test_engine.py
# test_d9_remaining_appendix_d_statements pins its margin at D = 9, K = 3; test_listed_instances_are_certified
# and tests/verify/proofs/test_sweep.py test_strength_instances_are_certified require it certified at the others).
PROVED_BY_PROVE = ("Lemma D.5", "Lemma D.9", "Lemma D.9 (increment)", "Lemma D.10", "Lemma D.11", "Lemma D.12",
                   "Lemma D.13 (attention)", "Lemma D.13 (C1 step)", "Lemma D.15", "Lemma D.16",
                   "Lemma D.17 (C1 band)", "Lemma D.18", "Lemma D.19")
# entries of PROVED_BY_PROVE whose printed statement rdyn prove certifies (every side) at each of their instances
# (tests/verify/proofs/test_sweep.py::test_strength_instances_are_certified, slow; D = 9, K = 3 in test_engine.py)
PRINTED_CERTIFIED_BY_PROVE = ("Lemma D.5", "Lemma D.9", "Lemma D.9 (increment)", "Lemma D.11", "Lemma D.12",
                              "Lemma D.13 (attention)", "Lemma D.13 (C1 step)", "Lemma D.15", "Lemma D.16",
                              "Lemma D.17 (C1 band)")
# entries certified at only part of PROVE_INSTANCES: the part, and why not the others (the scope names both)
PROVE_INSTANCES_OF = {
    "Lemma D.9": ("logits_D", "logits/sqrt(D), outside the paper's model: rdyn prove refutes the printed upper "
                              "side there"),
    "Lemma D.9 (increment)": ("papers_step_size", "eta_limit/2 exceeds the papers' step-size condition "
                                                  "eta <= K^3 (D-K)/(||V*||^2 D^3 (D+1)), which is the statement's "
                                                  "'<= 1/D^2' part"),
}


def _within_papers_step_size(instance: dict) -> bool:
    """``instance``'s eta (None: the papers' own) is at most the papers' condition, exactly; eta_limit/2 is
    counted beyond it (:func:`unbacked_entries` compares the prover's exact eta with the condition)."""
    eta = instance["eta"]
    if eta is None:
        return True
    if not isinstance(eta, (int, float)):
        return False
    return Fraction(repr(float(eta))) <= papers_step_size(instance["D"], instance["K"], instance["vstar_norm2"])


def prove_instances(label: str) -> tuple[list, list]:
    """``(instances, excluded)``: the instances of :data:`PROVE_INSTANCES` at which ``label``'s entry is
    certified, and ``[(instance, why)]`` for the others (:data:`PROVE_INSTANCES_OF`)."""
    rule, why = PROVE_INSTANCES_OF.get(label, (None, None))
    keep = {None: lambda i: True, "logits_D": lambda i: i["logit_scale"] == "D",
            "papers_step_size": _within_papers_step_size}[rule]
    return ([dict(i) for i in PROVE_INSTANCES if keep(i)],
            [(dict(i), why) for i in PROVE_INSTANCES if not keep(i)])


def unbacked_entries(instance: dict, result: dict) -> list[str]:
    """What the ledger says of ``instance`` (one of :data:`PROVE_INSTANCES`) that ``result`` (rdyn prove's there:
    ``statements``, dicts with ``label``, ``form``, ``key``, ``verdict``, and ``instance`` with the exact eta
    ``eta_exact``) does not bear out. For each entry of :data:`PRINTED_CERTIFIED_BY_PROVE`: citing the instance,
    a printed statement not certified; leaving it out as refuted (``logits_D``), no printed statement refuted;
    kept in or left out by the papers' step size, the prover's exact eta on the other side of it. Empty: agreed."""
    out = []
    eta = Fraction(result["instance"]["eta_exact"])
    within = eta <= papers_step_size(instance["D"], instance["K"], instance["vstar_norm2"])
    for label in PRINTED_CERTIFIED_BY_PROVE:
        printed = [s for s in result["statements"] if s["label"] == label and s["form"] == "printed"]
        cited = instance in prove_instances(label)[0]
        rule = PROVE_INSTANCES_OF.get(label, (None,))[0]
        if not printed:
            out.append(f"{label}: no printed statement decided")
        elif cited:
            out += [f"{label}: {s['key']} is {s['verdict']}" for s in printed if s["verdict"] != "certified"]
        elif rule == "logits_D" and all(s["verdict"] != "refuted" for s in printed):
            out.append(f"{label}: left out as refuted, but rdyn prove refutes no printed side")
        if rule == "papers_step_size" and cited != within:
            out.append(f"{label}: {'cited' if cited else 'left out'} at eta = {eta}, which is "
                       f"{'within' if within else 'beyond'} the papers' step-size condition")
    return out


# corrections (only) certified by rdyn prove at PROVE_INSTANCES. Lemma D.17 (threshold): "p(T*) >= 1/(2K) is
# reached; p(t) < 1/K for all t and p -> 1/K": the iteration certifies T* as the first step with p >= 1/(2K)
# (every earlier step certainly below it; a straddling ball stops the proof), 1/K - p = N e/(K (K + N e)) > 0
# exactly, and p -> 1/K follows from the certified corrected D.18 lower side (1/K - p(T) <=
# (D-K)/(K(D-K+K sqrt(R-(T)))), R- growing linearly in T). tests/verify/proofs/test_engine.py pins T* = 156931 at D = 9, K = 3.
CORRECTIONS_BY_PROVE = PROVED_BY_PROVE + ("Lemma D.17 (threshold)",)

# The late-phase rates (corrections only): certified at PROVE_INSTANCES (OOD: the logits/D ones, its asymptote
# being derived for that scale) by this argument, each step backed by a test:
# (1) rdyn prove certifies Lemma D.19's corrected upper side on the invariant region R, i.e.
#     0 <= (eta g2 - X)/(e^m eta g2) on R (m = 1; 2 for the identity), X = Delta x/e^2; every box's ball of this
#     quantity is finite, so it is also <= c := sup_on_region (recorded in the certificate; pinned at D = 9, K = 3
#     by tests/verify/proofs/test_engine.py): |X - eta g2| <= c eta g2 e^m on R, and every state from T0 on lies in R;
# (2) the certified corrected D.18 lower side gives 1/K - p(T) -> 0, i.e. e_T -> 0;
# (3) e^-2 grows per step by (2 X/scale) psi(2 e^2 X/scale), psi(v) = (exp(v) - 1)/v -> 1: the increments tend
#     to 2 eta g2/scale, so e_T^-2/T -> 2 eta g2/scale (Stolz-Cesaro), which is rdyn.derivations.model_a.late_phase's
#     e^2 tau -> scale/(2 g2) (tests/verify/claims/test_strength.py::test_late_phase_rate_is_the_certified_limit; the prover's
#     eta g2 is late_phase's g2: tests/verify/proofs/test_engine.py::test_reduction_matches_late_phase_constants);
# (4) each quantity is an exact function of (C1, e) (1/K - p = N e/(K (K + N e)); ||S - S*||_F by the proved S
#     identity; ||W_V - V*||_F = |C1 - 1| ||V*||_F; the excess loss; the OOD quadratic form) with
#     C1 = C1*(e)(1 + w e^3), w bounded on R: its leading term in e (late_phase's sympy expansion) times the
#     limit of (3) is the derived constant. Not certified: Lemma D.17's eta T* as D -> oo (a law in D).
LATE_RATES_BY_PROVE = ("Theorem 3.1 (loss)", "Theorem 3.1 (Step 3)", "Theorem 3.1 (Step 3, W_V)",
                       "Theorem 3.1 (proof: D^{5/2} order)", "Section 4.1 (OOD slope)")
LATE_RATE_ARGUMENT = ("rdyn prove certifies, at each instance, Lemma D.19's corrected upper side on an invariant "
                      "region R with 0 <= (eta g2 - X)/(e^m eta g2) <= sup_on_region (X = Delta(C2+C3)/e^2, m >= 1) and "
                      "the corrected D.18 lower side (e -> 0); so Delta(e^-2) -> 2 eta g2/scale and e^-2/T -> "
                      "2 eta g2/scale (Stolz-Cesaro), and each quantity's leading term in e "
                      "(rdyn.derivations.model_a.late_phase, C1 = C1*(e)(1 + w e^3) with w bounded on R) gives the derived "
                      "constant (docs/claims.md, Strength)")

# Model B: rdyn prove --paper B (verify/proofs/model_b/) certifies Theorem B.3 at every eta = theta eta_max
# (corrected), theta in [0.1, 1] (--eta-fraction 0.1,1), for every S0 in the interval: the loss decreases at
# every step, Part 1's descent inequality, gamma_t increases monotonically to gamma* (the printed eta_max:
# Part 1 and the monotone gamma refuted, from theta about 1 - k_c^2 on; docs/proofs.md). The first two
# instances are the ledger's validation instance (B.noln.eta_max_descent.*: Task 2, d = 4, spectrum
# 3,1,1,1, both targets; its check samples S0 = 1, the proof covers S0 in [0.25, 16]); the rest are the
# instances tests/verify/proofs/model_b/test_prove.py pins. tests/verify/claims/test_strength.py::test_model_b_instances_are_certified
# runs the proof at each and requires these statements certified.
PROVE_B_INSTANCES = (
    {"paper": "B", "model": "noln", "data": "spectrum", "d": 4, "spectrum": "3,1,1,1", "target": "unnormalized",
     "s0": "0.25,16", "eta_fraction": "0.1,1"},
    {"paper": "B", "model": "noln", "data": "spectrum", "d": 4, "spectrum": "3,1,1,1", "target": "normalized",
     "s0": "0.25,16", "eta_fraction": "0.1,1"},
    {"paper": "B", "model": "noln", "data": "sphere", "d": 16, "n": 32, "target": "unnormalized", "s0": "0.25,16",
     "eta_fraction": "0.1,1"},
    {"paper": "B", "model": "noln", "data": "sphere", "d": 16, "n": 32, "target": "unnormalized", "s0": "0.01,100",
     "eta_fraction": "0.1,1"},
    {"paper": "B", "model": "noln", "data": "sphere", "d": 4, "n": 8, "target": "unnormalized", "s0": "0.25,16",
     "eta_fraction": "0.1,1"},
    {"paper": "B", "model": "noln", "data": "spectrum", "d": 5, "spectrum": "5,4,3,2,1", "target": "unnormalized",
     "s0": "0.25,16", "eta_fraction": "0.1,1"},
)
# (label, form, quantity) of rdyn prove --paper B's statements that back each Model B label
B3_STATEMENTS = {
    "Theorem B.3 (eta_max)": (("Theorem B.3 (eta_max)", "corrected", "loss"),
                              ("Theorem B.3 (Part 1)", "corrected", "descent_lemma"),
                              ("Theorem B.3 (eta_max)", "corrected", "gamma")),
    "Theorem B.3 (Part 1)": (("Theorem B.3 (Part 1)", "corrected", "descent_lemma"),),
}
# Model B labels certified by rdyn prove --paper B: the corrections of Theorem B.3 (eta_max) and of Part 1 (at
# every eta = theta eta_max, theta in [0.1, 1]; both are also proved, for every 0 < eta <= eta_max, by
# rdyn.derivations.model_a.correction_identities' B3_* identities, which take precedence and keep this as
# `also_certified`), and the entry Theorem B.3 (Part 1), decided by the prover's verdict on the printed statement
# (B.claim.B3.part1_prove): a discrepancy is the printed Part 1 refuted by a certified counterexample at each of
# PROVE_B_INSTANCES, a pass the printed Part 1 certified there (B_ENTRY_STATEMENTS). Theorem B.3 (Part 3)'s
# correction is proved by the same identities.
B_CORRECTIONS_BY_PROVE = ("Theorem B.3 (eta_max)", "Theorem B.3 (Part 1)")
B_ENTRIES_BY_PROVE = ("Theorem B.3 (Part 1)",)
# (label, form, quantity) of the prover's statement behind each entry verdict (the entry's own statement)
B_ENTRY_STATEMENTS = {
    "Theorem B.3 (Part 1)": {"discrepancy": (("Theorem B.3 (Part 1)", "printed", "descent_lemma"),),
                             "pass": (("Theorem B.3 (Part 1)", "printed", "descent_lemma"),)},
}


def _matches(check_id: str, pattern: str) -> bool:
    from rdyn.verification.checks.registry import id_matches

    return id_matches(check_id, pattern)


def of_check(check_id: str) -> str:
    for pattern, strength in CHECK_STRENGTH:
        if _matches(check_id, pattern):
            return strength
    return "sampled"


DERIVED_RATE_DOMAIN = ("the derived leading-order law as T -> oo (slow-manifold limit of the map; its coefficients Taylor "
                       "coefficients at e = 0) "
                       "compared exactly with the printed form, for every D > K >= 1, eta > 0, ||V*||^2 > 0")


def _proved_by_identities(paper: str, label: str, ids) -> dict | None:
    """The ``proved`` basis of a correction that rdyn.derivations.model_a.correction_identities proves (None if
    none does): each identity's two sides, domain and exact rewrites (tests/verify/claims/test_strength.py re-proves
    each: the difference simplifies to exactly 0, the printed form's does not)."""
    from rdyn.derivations.model_a import correction_identities as ci

    found = ci.for_label(paper, label)
    if not found:
        return None
    return {"domain": "; ".join(f"{i.name}: {i.domain}" for i in found),
            "identities": [{"name": i.name, "lhs": i.lhs, "rhs": i.rhs, "domain": i.domain, "rewrites": i.rewrites}
                           for i in found],
            "by": "exact sympy identities (rdyn.derivations.model_a.correction_identities): lhs - rhs simplifies to 0",
            "checks": list(ids)}


def _certified_b(label: str, verdict: str | None = None) -> dict:
    """The certified basis of a Model B correction (``verdict`` None: the corrected statements of
    B3_STATEMENTS) or entry (its verdict: the statements of B_ENTRY_STATEMENTS, refuted for a discrepancy)."""
    statements = B3_STATEMENTS[label] if verdict is None else B_ENTRY_STATEMENTS[label][verdict]
    out = {"instances": [dict(i) for i in PROVE_B_INSTANCES], "by": "rdyn prove --paper B (docs/proofs.md, Model B)",
           "statements": [{"label": a, "form": f, "quantity": q} for a, f, q in statements]}
    if verdict is not None:
        out["prover_verdict"] = "refuted" if verdict == "discrepancy" else "certified"
    return out


def _basis(strength: str, ids) -> dict:
    if strength == "proved":
        derived = any(_matches(i, "A.errata.derived.*") for i in ids)
        return {"domain": DERIVED_RATE_DOMAIN if derived else DOMAINS["proved"], "checks": list(ids)}
    if strength == "certified":
        return {"instances": [dict(i) for i in PROVE_INSTANCES], "by": "rdyn prove (docs/proofs.md)"}
    if strength == "fitted":
        return {"fits": list(ids)}
    return {"points": list(ids)}


def of_checks(ids) -> tuple[str | None, dict | None]:
    """(strength, basis) of a verdict decided by the checks ``ids`` (None, None when none ran)."""
    ids = list(ids)
    if not ids:
        return None, None
    strength = min((of_check(i) for i in ids), key=ORDER.index)
    return strength, _basis(strength, ids)


# checks that compare the derived late-phase leading term with the printed form exactly: the comparison is
# symbolic, but the leading term is the late-phase law, certified per instance (LATE_RATE_ARGUMENT), so a
# verdict they decide is no stronger than `certified` at those instances
LATE_LAW_COMPARISONS = ("A.errata.derived.*",)


def _late_law_certified(ids) -> dict:
    return {"instances": [dict(i) for i in PROVE_INSTANCES], "by": "rdyn prove (docs/proofs.md) and Stolz-Cesaro",
            "argument": LATE_RATE_ARGUMENT, "checks": list(ids),
            "exact_comparison": "the derived leading term and the printed form are compared exactly (sympy) for every "
                                "D > K >= 1; the leading term is the late-phase law, certified at these instances only"}


def of_entry(paper: str, label: str, verdict: str, deciding_ids) -> tuple[str | None, dict | None]:
    """(strength, basis) of a ledger verdict."""
    if verdict == "not_checkable":
        return None, None
    if paper == "A" and label in ETA_RANGE_ONLY_ENTRIES:
        return "certified", {"instances": [], "by": "rdyn prove --eta LO:HI (docs/proofs.md, \"Every step size at "
                                                    "once\")", "eta_boxes": [dict(g) for g in PROVE_ETA_GRIDS],
                             "checks": list(deciding_ids)}
    if paper == "A" and label in PROVED_BY_PROVE:
        basis = _basis("certified", ())
        basis["instances"], excluded = prove_instances(label)
        if excluded:
            basis["excluded"] = [{"instance": i, "why": why} for i, why in excluded]
        if label in ETA_GRID_ENTRIES:
            basis["eta_boxes"] = [dict(g) for g in PROVE_ETA_GRIDS]
        return "certified", basis
    if paper == "B" and label in B_ENTRIES_BY_PROVE and verdict in B_ENTRY_STATEMENTS[label]:
        return "certified", _certified_b(label, verdict)
    if paper == "A" and label == "Lemma D.17":
        return _tstar_law(deciding_ids)
    strength, basis = of_checks(deciding_ids)
    if strength == "proved" and paper == "A" and any(_matches(i, p) for i in deciding_ids
                                                     for p in LATE_LAW_COMPARISONS):
        return "certified", _late_law_certified(deciding_ids)
    return strength, basis


# Lemma D.17's eta T* law as D -> oo: for the identity and for ReLU and Leaky ReLU (both logit scales, every K,
# ||V*||^2 and kappa) the argument's identities, inequalities (steps 1-6) and limits are exact obligations, its
# step 0 and the calculus that assembles steps 4-6 are not machine-checked (tstar_law.UNCHECKED_STEPS). So the correction is `sampled` (the deciding checks'
# comparisons) with `proved_part` (what is exact) and `not_proved` (every unchecked step) in its basis.
TSTAR_LAW_PARTS = (
    {"activation": "identity", "logit_scales": ["D", "sqrtD"], "check": "A.errata.Tstar.identity_proof",
     "by": "rdyn.derivations.model_a.tstar_law: exact obligations of steps 1-6 (flow identities, polynomial "
           "inequalities by Sturm counting or coefficient signs, the band's edges, the transient and the time's "
           "inequalities on boxes) and the exact integral J",
     "domain": "identity activation, every K >= 1 and ||V*||^2 > 0, logits/D and logits/sqrtD"},
    {"activation": "ReLU and Leaky ReLU", "logit_scales": ["D", "sqrtD"], "check": "A.errata.Tstar.relu_proof",
     "by": "rdyn.derivations.model_a.tstar_law_relu: exact obligations of steps 1-6 (the flow as one (q, g) family, "
           "box positivity tests with atan's Taylor bounds and pi in a rational interval, the integral's exact "
           "majorant and minorant, the identity's band, transient and time inequalities with ReLU's constants)",
     "domain": "ReLU and Leaky ReLU (every 0 <= kappa < 1), every K >= 1 and ||V*||^2 > 0, logits/D and logits/sqrtD"},
)


def _tstar_law(deciding_ids) -> tuple[str, dict]:
    from rdyn.derivations.model_a.tstar_law import UNCHECKED_STEPS

    strength, basis = of_checks(deciding_ids)
    basis = dict(basis or {"points": []})
    parts = [p for p in TSTAR_LAW_PARTS if any(_matches(i, p["check"]) for i in deciding_ids)]
    if parts:
        basis["proved_part"] = {"activation": " and ".join(p["activation"] for p in parts),
                                "logit_scales": ["D", "sqrtD"], "checks": [p["check"] for p in parts],
                                "by": "; ".join(p["by"] for p in parts),
                                "domain": "; ".join(p["domain"] for p in parts)}
        basis["not_proved"] = [text for _, text in UNCHECKED_STEPS] + [
            f"{p['activation']}: no part checked ({p['check']} not among the deciding checks)"
            for p in TSTAR_LAW_PARTS if p not in parts]
    return strength or "sampled", basis


def of_correction(paper: str, label: str, deciding_ids) -> tuple[str | None, dict | None]:
    """(strength, basis) of a correction's verdict."""
    if paper == "A" and label == "Lemma D.17":
        return _tstar_law(deciding_ids)
    if paper == "A" and label in CORRECTIONS_BY_PROVE:
        basis = _basis("certified", ())
        if label in PROVE_ETA_GRID["labels"]:
            basis["eta_boxes"] = [dict(g) for g in PROVE_ETA_GRIDS]
        if label in PROVE_ALL_D["labels"]:
            basis["late_band_all_d"] = [dict(PROVE_ALL_D)]
        return "certified", basis
    if paper == "A" and label in LATE_RATES_BY_PROVE:
        instances = [dict(i) for i in PROVE_INSTANCES
                     if label != "Section 4.1 (OOD slope)" or i["logit_scale"] == "D"]
        return "certified", {"instances": instances, "by": "rdyn prove (docs/proofs.md) and Stolz-Cesaro",
                             "argument": LATE_RATE_ARGUMENT, "checks": list(deciding_ids)}
    proved = _proved_by_identities(paper, label, deciding_ids)
    if proved is not None:
        if paper == "B" and label in B_CORRECTIONS_BY_PROVE:   # an independent rigorous route, kept
            proved["also_certified"] = _certified_b(label)
        return "proved", proved
    if paper == "B" and label in B_CORRECTIONS_BY_PROVE:
        return "certified", _certified_b(label)
    strength, basis = of_checks(deciding_ids)
    return (strength or "sampled"), (basis or {"points": []})


# ------------------------------------------------------------------------------------------------
# scope: exactly what a strength covers, in words and as data
# ------------------------------------------------------------------------------------------------

OUTSIDE_MODEL = ("logits/sqrt(D): the conference version's softmax scale, outside the paper's model (seed 000, "
                 "logits/D)")
SCOPE_COVERS = ("every_parameter", "listed_instances", "listed_points", "fits")


def _eta_text(eta) -> str:
    return "the papers' eta" if eta is None else ("eta_limit/2" if eta == "half_limit" else f"eta={eta}")


def instance_text(instance: dict) -> str:
    """One instance of ``rdyn prove`` in words: activation, D, K, eta, logit scale (Model A); data, target, S0 and
    eta range (Model B)."""
    if instance.get("paper") == "B":
        data = (f"Task 2 d={instance['d']} spectrum {instance['spectrum']}" if instance["data"] == "spectrum"
                else f"Task 1 d={instance['d']} n={instance['n']}")
        lo, hi = instance["s0"].split(",")
        a, b = instance["eta_fraction"].split(",")
        return f"{data} {instance['target']}, S0 in [{lo}, {hi}], eta = theta eta_max for theta in [{a}, {b}]"
    activation = instance["activation"] + (f" kappa={instance['kappa']}" if "kappa" in instance else "")
    scale = "logits/D" if instance["logit_scale"] == "D" else "logits/sqrt(D) [outside the paper's model]"
    return f"{activation} D={instance['D']} K={instance['K']} {_eta_text(instance['eta'])} {scale}"


def scope(strength: str | None, basis: dict | None) -> dict | None:
    """What a verdict of ``strength`` with ``basis`` covers, and nothing wider: ``covers`` (one of
    :data:`SCOPE_COVERS`), ``text`` (the sentence the ledger and the erratum print), and per kind ``domain``
    (proved), ``count`` and ``instances`` (certified: each in words), ``points`` (sampled), ``fits`` (fitted);
    ``outside_model`` lists the instances or checks at logits/sqrt(D) (:data:`OUTSIDE_MODEL`). None for
    ``not_checkable``."""
    if strength is None:
        return None
    basis = basis or {}
    if strength == "proved":
        return {"covers": "every_parameter", "domain": basis["domain"], "outside_model": [],
                "text": f"proved for {basis['domain']}"}
    if strength == "certified":
        instances = basis.get("instances", [])
        described = [instance_text(i) for i in instances]
        outside = [d for i, d in zip(instances, described) if i.get("logit_scale") == "sqrtD"]
        what = ("(data, target, S0 interval, eta range)" if instances and instances[0].get("paper") == "B"
                else "(activation, D, K, eta, logit scale)")
        text = (f"certified at the {len(instances)} instances listed {what} only: " + "; ".join(described)
                if instances else "certified at no single instance (a statement about every step size at once)")
        if basis.get("exact_comparison"):
            text += " (an exact comparison resting on the late-phase law certified there)"
        out = {"covers": "listed_instances", "count": len(instances), "instances": described,
               "outside_model": outside, "text": text}
        if basis.get("excluded"):
            out["excluded"] = [instance_text(x["instance"]) for x in basis["excluded"]]
            for why in dict.fromkeys(x["why"] for x in basis["excluded"]):
                names = [instance_text(x["instance"]) for x in basis["excluded"] if x["why"] == why]
                out["text"] += f"; not at the other {len(names)} instances of rdyn prove ({why}): " + "; ".join(names)
        if basis.get("eta_boxes"):
            boxes = [eta_box_text(g) for g in basis["eta_boxes"]]
            out["eta_boxes"] = boxes
            out["text"] += ("; and for every step size of a range at once (a range of rdyn prove --eta, "
                            "docs/proofs.md \"Every step size at once\"): " + "; ".join(boxes))
        if basis.get("late_band_all_d"):
            bands = [all_d_text(g) for g in basis["late_band_all_d"]]
            out["late_band_all_d"] = bands
            out["text"] += ("; and its two sides and the lag lemma for every D at once (`rdyn prove --D LO:`, "
                            "docs/proofs.md \"Every D: the late phase\"): " + "; ".join(bands))
        return out
    if strength == "sampled":
        points = list(basis.get("points", []))
        outside = [p for p in points if p.endswith(".sqrtD") or ".sqrtD." in p]
        text = f"sampled: true at the {len(points)} deciding checks' points only ({', '.join(points)})"
        if basis.get("proved_part"):
            text += (f"; exact obligations hold for the {basis['proved_part']['activation']} activations; "
                     f"not machine-checked: {'; '.join(basis['not_proved'])}")
        return {"covers": "listed_points", "count": len(points), "points": points, "outside_model": outside,
                "text": text}
    fits = list(basis.get("fits", []))
    return {"covers": "fits", "count": len(fits), "fits": fits, "outside_model": [],
            "text": f"fitted: finite-size fits only, evidence and not a proof ({', '.join(fits)})"}
