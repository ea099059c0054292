"""The strength of every verdict of the claims ledger and of every correction (docs/claims.md,
"Strength"): how much a ``pass`` (or a ``discrepancy``) is worth.

* ``proved``: a symbolic derivation (sympy identity or exact comparison of derived forms)
  establishes it for every parameter value in a stated ``domain``;
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
"""
from __future__ import annotations

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
    # Lemma D.17's eta T* law: a theorem for the identity (rdyn.derivations.model_a.tstar_law) and for ReLU and Leaky
    # ReLU (rdyn.derivations.model_a.tstar_law_relu), exact obligations; the derived two-term series against the
    # slow-manifold tau_star at D = 1e4, 1e5 stays a sampled comparison beside them
    ("A.errata.Tstar.identity_proof", "proved"),
    ("A.errata.Tstar.relu_proof", "proved"),
    ("A.errata.Tstar", "sampled"),
    # the D- and ||V*||^2-exponents of T*'s leading term D^a (D-K)^2 I0: sympy limits of the derived
    # I0, which A.errata.Tstar.relu_proof proves (and compares with this I0 at 30 digits): not a fit
    ("A.flow.Tstar_exponent.*", "proved"),
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
PROVED_BY_PROVE = ("Lemma D.5", "Lemma D.10", "Lemma D.13 (attention)", "Lemma D.15", "Lemma D.17 (C1 band)",
                   "Lemma D.18", "Lemma D.19")
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
# Model B labels certified by rdyn prove --paper B: the correction of Theorem B.3 (eta_max) (at every
# eta = theta eta_max, theta in [0.1, 1]; it is also proved, for every 0 < eta <= eta_max, by
# rdyn.derivations.model_a.correction_identities' B3_* identities, which take precedence and keep this as
# `also_certified`), and the entry Theorem B.3 (Part 1)
# (a pass: its check runs Part 1 at the derived eta_max). Theorem B.3 (Part 3)'s correction is proved by the
# same identities.
B_CORRECTIONS_BY_PROVE = ("Theorem B.3 (eta_max)",)
B_ENTRIES_BY_PROVE = ("Theorem B.3 (Part 1)",)


def _matches(check_id: str, pattern: str) -> bool:
    from rdyn.verification.checks.registry import id_matches

    return id_matches(check_id, pattern)


def of_check(check_id: str) -> str:
    for pattern, strength in CHECK_STRENGTH:
        if _matches(check_id, pattern):
            return strength
    return "sampled"


DERIVED_RATE_DOMAIN = ("the derived leading-order law as T -> oo (slow-manifold limit of the map, sympy limits) "
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


def _certified_b(label: str) -> dict:
    return {"instances": [dict(i) for i in PROVE_B_INSTANCES], "by": "rdyn prove --paper B (docs/proofs.md, Model B)",
            "statements": [{"label": a, "form": f, "quantity": q} for a, f, q in B3_STATEMENTS[label]]}


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


def of_entry(paper: str, label: str, verdict: str, deciding_ids) -> tuple[str | None, dict | None]:
    """(strength, basis) of a ledger verdict."""
    if verdict == "not_checkable":
        return None, None
    if paper == "A" and label in PROVED_BY_PROVE:
        return "certified", _basis("certified", ())
    if paper == "B" and label in B_ENTRIES_BY_PROVE:
        return "certified", _certified_b(label)
    return of_checks(deciding_ids)


# Lemma D.17's eta T* law as D -> oo: proved for the identity and for ReLU and Leaky ReLU (both logit scales,
# every K, ||V*||^2 and kappa; the flow limit eta -> 0 by Euler convergence). With both proof checks among
# the deciding checks the correction is `proved`, its basis naming both proofs; with the identity's alone it
# stays `sampled` with the proved part named.
TSTAR_LAW_PROVED = {
    "activation": "identity", "logit_scales": ["D", "sqrtD"], "check": "A.errata.Tstar.identity_proof",
    "by": "rdyn.derivations.model_a.tstar_law: exact sympy obligations (flow identities, polynomial inequalities, the "
          "integral J, sympy limits) and Euler convergence for eta -> 0",
    "domain": "identity activation, every K >= 1 and ||V*||^2 > 0, logits/D and logits/sqrtD: explicit bounds "
              "tau_lo <= lim eta T* <= tau_hi for every D > 2K satisfying the explicit hypothesis (H), whose ratios "
              "to D^a (D-K)^2 tend to K/||V*||^2 with no (D-K)^(-1/2) term",
}
TSTAR_RELU_LAW_PROVED = {
    "activation": "ReLU and Leaky ReLU", "logit_scales": ["D", "sqrtD"], "check": "A.errata.Tstar.relu_proof",
    "by": "rdyn.derivations.model_a.tstar_law_relu: exact sympy obligations (the flow as one (q, g) family, box "
          "positivity tests with atan's Taylor bounds and pi in a rational interval, the integral's exact "
          "majorant and minorant, sympy limits) and Euler convergence for eta -> 0",
    "domain": "ReLU and Leaky ReLU (every 0 <= kappa < 1), every K >= 1 and ||V*||^2 > 0, logits/D and logits/sqrtD: "
              "explicit bounds tau_lo <= lim eta T* <= tau_hi for every D > 2K satisfying the explicit hypothesis (H), "
              "whose ratios to D^a (D-K)^2 tend to I0 with the (D-K)^(-1/2) coefficient I1 of the correction",
}


def of_correction(paper: str, label: str, deciding_ids) -> tuple[str | None, dict | None]:
    """(strength, basis) of a correction's verdict."""
    if paper == "A" and label == "Lemma D.17":
        proofs = [p for p in (TSTAR_LAW_PROVED, TSTAR_RELU_LAW_PROVED)
                  if any(_matches(i, p["check"]) for i in deciding_ids)]
        if len(proofs) == 2:
            return "proved", {"domain": "; ".join(p["domain"] for p in proofs),
                              "by": "; ".join(p["by"] for p in proofs), "checks": list(deciding_ids),
                              "proofs": [dict(p) for p in proofs]}
        strength, basis = of_checks(deciding_ids)
        if strength is not None and proofs:
            missing = [p for p in (TSTAR_LAW_PROVED, TSTAR_RELU_LAW_PROVED) if p not in proofs][0]
            basis = {**basis, "proved_part": dict(proofs[0]),
                     "not_proved": f"{missing['activation']}: the proof check {missing['by'].split(':')[0]} "
                                   f"({missing['check']}) was not among the deciding checks"}
        return (strength or "sampled"), (basis or {"points": []})
    if paper == "A" and label in CORRECTIONS_BY_PROVE:
        return "certified", _basis("certified", ())
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
