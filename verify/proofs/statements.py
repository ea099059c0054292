"""The statements ``rdyn prove`` decides (seed 000, Appendix D), each side separately, printed and
corrected, as per-step tests on a certified state (:mod:`.iterate`) and as conditions on the
invariant region (:mod:`.region`).

Notation: ``x = C2 + C3``, ``e = exp(-x/scale)``, ``N = D - K``, ``Delta x(T) = x(T+1) - x(T)``,
``gap = 1/K - p = N e/(K (K + N e))`` (exact), ``g2`` the late-phase constant
(``M/K^3`` identity, ``M (1+kappa^2)/(2K^3)`` Leaky ReLU, ReLU at kappa = 0; times ``sqrt(D)``
with logits/sqrtD), ``q_min = q(K/(D-K))`` the increment ratio at ``p = 1/(2K)``,
``R+(T) = (N/K)^2 + 2 g2 eta (T - T* + 1)/scale``, ``R-(T) = (N/K)^2 + 2 q_min g2 eta (T - T* - 1)/scale``
(the superseded D.18 forms); ``w = (C1/C1* - 1)/e^3``, ``c_lag`` the certified bound of ``|w|`` for
``T >= T*`` (the lag lemma), ``q_lag = q_min (1 - c_lag (K/N)^2)``, ``psi(v) = (exp(v) - 1)/v``,
``R_lo(T) = (N/K)^2 + 2 q_lag eta g2 (T - T*)/scale``, ``R_hi(T) = (N/K)^2 + (2 eta g2/scale)(psi(2 eta g2/scale)
+ psi(2 eta g2 (K/N)^2/scale) (T - T*))`` (the derived D.18 forms,
:mod:`rdyn.derivations.model_a.late_phase_bounds`).

Each statement is ``lhs <= rhs`` (``relation = "le"``) or ``lhs >= rhs`` (``"ge"``) at every step
of its window (``T >= T* + offset`` for ``after_T_star``). Statements about one step ``t -> t+1``
(Lemmas D.9's Delta p, D.10-D.12, D.13's C1 step, D.16: :data:`PAIR`) are decided at step t from
the certified states at t and t + 1. The readings chosen where the extraction is ambiguous are in
docs/proofs.md's table.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Statement:
    key: str          # short id, e.g. "D19.corrected.lower"
    label: str        # the ledger's label
    form: str         # "printed" | "corrected"
    side: str | None  # "lower" | "upper" | None
    text: str         # the statement in words
    quantity: str     # what lhs is
    relation: str     # "le": lhs <= rhs, "ge": lhs >= rhs
    offset: int       # holds for T >= T* + offset (window "after_T_star")
    region: str | None  # the region condition that carries it past T0 (None: no region argument)
    window: str = "after_T_star"   # "after_T_star", "after_t1" (t >= t1), "after_1" (t >= 1 with Dp > 1),
    #                                "from_1" (t >= 1), "from_2" (t >= 2), "until_t1" (t <= t1), "before_t1" (t < t1),
    #                                "observed" (T >= T*: decided from the states T* .. T0 the engine observes, then
    #                                the region; docs/proofs.md, "Derived late-phase bounds")


STATEMENTS: tuple[Statement, ...] = (
    Statement("D5.printed.upper", "Lemma D.5", "printed", "upper",
              "C1(t) <= (1 + 4 A(t)/(5 (A(t)+B(t))) (1-Kp)/(Kp(Dp-1))) C1*(t) for all t >= 1",
              "C1", "le", 0, "d5_upper", "after_1"),
    Statement("D13.printed.attention", "Lemma D.13 (attention)", "printed", None,
              "p(t) <= (1 + D^(-1/4))/D for all t <= t1", "p", "le", 0, None, "until_t1"),
    Statement("D15.printed.lower", "Lemma D.15", "printed", "lower",
              "C1(t) >= [0.95 v (1 - 4 A(t)/(5 (A(t)+B(t))) (1-Kp)/(Kp(Dp-1)))] C1*(t) for all t >= t1",
              "C1", "ge", 0, "d15_lower", "after_t1"),
    Statement("D17.printed.band_lower", "Lemma D.17 (C1 band)", "printed", "lower",
              "C1(t) >= 0.95 C1*(t) for all t >= t1", "C1", "ge", 0, "band_lower", "after_t1"),
    Statement("D17.printed.band_upper", "Lemma D.17 (C1 band)", "printed", "upper",
              "C1(t) <= (4 pi + 1) C1*(t) for all t >= t1", "C1", "le", 0, "band_upper", "after_t1"),
    Statement("D18.printed.lower", "Lemma D.18", "printed", "lower",
              "p(T) >= 1/K - 20 D (D-K)/(eta K M (T - T*)) for T > T*, i.e. 1/K - p(T) <= 20 D (D-K)/(eta K M (T - T*))",
              "one_over_K_minus_p", "le", 1, None),
    Statement("D18.printed.upper", "Lemma D.18", "printed", "upper",
              "p(T) <= 1/K - D (D-K)/(2 e eta K M (T - T*)) for T > T* (e = exp(1)), i.e. "
              "1/K - p(T) >= D (D-K)/(2 e eta K M (T - T*))",
              "one_over_K_minus_p", "ge", 1, None),
    Statement("D18.derived.lower", "Lemma D.18", "corrected", "lower",
              "p(T) >= 1/K - (D-K)/(K (D-K + K sqrt(R_lo(T)))) for T >= T*, i.e. 1/K - p(T) <= "
              "(D-K)/(K (D-K + K sqrt(R_lo(T)))), R_lo(T) = (N/K)^2 + 2 q_lag eta g2 (T - T*)/scale (the corrected "
              "D.19 lower side summed from T*: exp(y) >= 1 + y)",
              "one_over_K_minus_p", "le", 0, "increment_lower_qlag", "observed"),
    Statement("D18.derived.upper", "Lemma D.18", "corrected", "upper",
              "p(T) <= 1/K - (D-K)/(K (D-K + K sqrt(R_hi(T)))) for T >= T*, i.e. 1/K - p(T) >= "
              "(D-K)/(K (D-K + K sqrt(R_hi(T)))), R_hi(T) = (N/K)^2 + (2 eta g2/scale) (psi(2 eta g2/scale) + "
              "psi(v_*) (T - T*)), v_* = 2 eta g2 (K/N)^2/scale, psi(v) = (exp(v) - 1)/v (the corrected D.19 upper "
              "side summed from T* - 1, e(T* - 1) > K/N)",
              "one_over_K_minus_p", "ge", 0, "increment_upper_psi", "observed"),
    Statement("D19.printed.lower", "Lemma D.19", "printed", "lower",
              "Delta(C2+C3) >= eta M/(200 K^3 D^3) exp(-2(C2+C3)/D) for T >= T*",
              "delta_C2_plus_C3", "ge", 0, "dx_printed_lower"),
    Statement("D19.printed.upper", "Lemma D.19", "printed", "upper",
              "Delta(C2+C3) <= eta 8 pi M/(K^3 D^3) exp(-2(C2+C3)/D) for T >= T*",
              "delta_C2_plus_C3", "le", 0, "dx_printed_upper"),
    Statement("D19.derived.lag", "Lemma D.19", "corrected", None,
              "|C1(T)/C1*(T) - 1| <= c_lag exp(-3(C2+C3)/scale) for T >= T* (the lag lemma; c_lag certified: the "
              "largest |w| = |C1/C1* - 1| e^-3 over the steps T* .. T0 and over the invariant region)",
              "C1", "le", 0, "lag", "observed"),
    Statement("D19.derived.lower", "Lemma D.19", "corrected", "lower",
              "Delta(C2+C3) >= q_lag eta g2 exp(-2(C2+C3)/scale) for T >= T*, q_lag = q_min (1 - c_lag (K/(D-K))^2) "
              "(the lag factor 1 - exp((C2+C3)/scale) |C1/C1* - 1| >= 1 - c_lag e^2 >= 1 - c_lag (K/(D-K))^2)",
              "delta_C2_plus_C3", "ge", 0, "dx_lower_qlag", "observed"),
    Statement("D19.corrected.upper", "Lemma D.19", "corrected", "upper",
              "Delta(C2+C3) <= eta g2 exp(-2(C2+C3)/scale) for T >= T*",
              "delta_C2_plus_C3", "le", 0, "dx_upper"),
)

# Appendix D's remaining inequality statements: Lemma D.4's C1 bounds, D.8's monotonicity,
# D.9-D.12, D.13's C1 step, D.15's proof step, D.16 (readings: docs/proofs.md)
STATEMENTS = STATEMENTS + (
    Statement("D4.printed.lower", "Lemma D.4", "printed", "lower",
              "C1(t) >= 0 for all t (C1(0) = 0 exactly; checked for t >= 1, slack relative to C1*(t))",
              "C1", "ge", 0, "c1_positive", "from_1"),
    Statement("D4.printed.upper", "Lemma D.4", "printed", "upper",
              "C1(t) <= D for all t (C1* <= D by Lemma D.3; C1(0) = 0)", "C1", "le", 0, "d4_upper", "from_1"),
    Statement("D8.printed.monotone", "Lemma D.8", "printed", None,
              "C2 nondecreasing by the printed in-group coefficient -(C1 M/D)((F4/p - F3)/K - C1 (F2_1 + p F1)): "
              "(F4/p - F3)/K >= C1(t) (F2_1 + p F1) for all t >= 1", "other", "ge", 0, None, "from_1"),
    Statement("D8.corrected.monotone", "Lemma D.8", "corrected", None,
              "C2 and C3 nondecreasing (in-group coefficient with - p F1, the derived map): Delta C2(t) >= 0 and "
              "Delta C3(t) >= 0, i.e. Delta(C2+C3)(t) >= 0, for all t >= 1 (Delta = 0 at t = 0, where C1 = 0; "
              "slack relative to eta g2 e^2)", "delta_C2_plus_C3", "ge", 0, "monotone", "from_1"),
    Statement("D9.printed.lower", "Lemma D.9", "printed", "lower",
              "Delta p(t) >= p(t)(1 - K p(t))/(2D) Delta(C2+C3)(t) for all t >= 1 (both 0 at t = 0)",
              "delta_p", "ge", 0, "dp_lower", "from_1"),
    Statement("D9.printed.upper", "Lemma D.9", "printed", "upper",
              "Delta p(t) <= D^2 p(t)(1 - K p(t))/(D (D^2 - 1)) Delta(C2+C3)(t) for all t >= 1 (both 0 at t = 0)",
              "delta_p", "le", 0, "dp_upper", "from_1"),
    Statement("D9.printed.increment", "Lemma D.9 (increment)", "printed", "upper",
              "Delta(C2+C3)(t) <= eta M D (D+1)/(K^3 (D-K)) for all t (0 at t = 0; the further '<= 1/D^2' is the "
              "step-size condition, instance.paper_conditions.lemma_D9)", "delta_C2_plus_C3", "le", 0,
              "dx_increment", "from_1"),
    Statement("D10.printed", "Lemma D.10", "printed", None,
              "C1*(t+1) >= C1*(t) whenever p(t) <= 1/(2 pi D K): vacuous, decided as p(t) > 1/(2 pi D K) for all t",
              "p", "ge", 0, "d10_vacuous", "from_1"),
    Statement("D10.corrected", "Lemma D.10", "corrected", None,
              "C1*(t+1) >= C1*(t) for every t with p(t+1) <= p_c, and C1*(t+1) <= C1*(t) for every t with "
              "p(t) >= p_c (p_c: the zero of dC1*/dp, certified unique; t >= 1)", "C1_star", "ge", 0,
              "d10_corrected", "from_1"),
    Statement("D11.printed", "Lemma D.11", "printed", None,
              "C1*(t+1) >= C1*(t) - 3 D K p(t) Delta p(t)/(D K p(t)^2 - 2 K p(t) + 1) C1*(t) for all t >= 1 "
              "(equality at t = 0)", "C1_star", "ge", 0, "d11", "from_1"),
    Statement("D12.printed", "Lemma D.12", "printed", None,
              "g(t+1) >= g(t) - A(t)/(A(t)+B(t)) 2 D K p(t) Delta p(t)/(K^2 p(t)^2 (D p(t) - 1)^2), "
              "g = A/(A+B) (1-Kp)/(Kp(Dp-1)), for all t >= 2 (D p(t) > 1)", "other", "ge", 0, "d12", "from_2"),
    Statement("D13.printed.step", "Lemma D.13 (C1 step)", "printed", "lower",
              "C1(t+1) - C1(t) >= eta D F3(t)/(40 K p(t)) for 0 <= t < t1", "C1", "ge", 0, None, "before_t1"),
    Statement("D15proof.printed", "Lemma D.15 (proof)", "printed", None,
              "3(D-K)/D^2 <= 0.025 (the step C1(t+1) >= 0.975 C1*(t+1) - 3(D-K)/D^2 >= 0.95 C1*(t+1), t >= t1)",
              "other", "le", 0, "d15_step", "after_t1"),
    Statement("D15proof.corrected", "Lemma D.15 (proof)", "corrected", None,
              "3(D-K)/D^2 <= 0.025 holds iff D^2 >= 120 (D-K): the step needs this as an extra condition "
              "(sympy, every D > K >= 1)", "other", "le", 0, None, "symbolic"),
    Statement("D16.printed", "Lemma D.16", "printed", "upper",
              "C1*(t+1) - C1*(t) <= 3 (D-K+K C1*(t)) Delta p(t)/(2 (D K p(t)^2 - 2 K p(t) + 1 - K Delta p(t))) "
              "for all t >= 1 (0 <= 0 at t = 0)", "C1_star", "le", 0, "d16", "from_1"),
)

# Per-step statements about t -> t+1 (decided from the certified states at t and t+1)
PAIR = frozenset({"D9.printed.lower", "D9.printed.upper", "D10.corrected", "D11.printed", "D12.printed",
                  "D13.printed.step", "D16.printed"})

# Earlier corrections, replaced by the derived forms above; decided and reported apart ("superseded").
# D18.corrected.*: R+-(T) with an ad-hoc step of delay (module docstring), certified per instance but not
# derived from D.19. D19.corrected.lower: the lag factor 1 - exp((C2+C3)/scale) |C1/C1* - 1| (state-dependent;
# the lag lemma bounds it). D19.corrected.lower.superseded: no lag factor (false at T* for some instances: the
# derivation assumed C1 = C1*). D19.corrected.lower.lag1: the factor 1 - |C1/C1* - 1| (false at T* when D >= 6K
# or so: the relative sensitivity of Delta(C2+C3) to C1 is about -exp((C2+C3)/scale), not -1).
SUPERSEDED: tuple[Statement, ...] = (
    Statement("D18.corrected.lower", "Lemma D.18", "corrected", "lower",
              "p(T) >= 1/K - (D-K)/(K (D-K + K sqrt(R-(T)))) for T >= T* + 1, i.e. "
              "1/K - p(T) <= (D-K)/(K (D-K + K sqrt(R-(T))))",
              "one_over_K_minus_p", "le", 1, "increment_lower"),
    Statement("D18.corrected.upper", "Lemma D.18", "corrected", "upper",
              "p(T) <= 1/K - (D-K)/(K (D-K + K sqrt(R+(T)))) for T >= T* + 1, i.e. "
              "1/K - p(T) >= (D-K)/(K (D-K + K sqrt(R+(T))))",
              "one_over_K_minus_p", "ge", 1, "increment_upper"),
    Statement("D19.corrected.lower", "Lemma D.19", "corrected", "lower",
              "Delta(C2+C3) >= q_min eta g2 exp(-2(C2+C3)/scale) (1 - exp((C2+C3)/scale) |C1(T)/C1*(T) - 1|) "
              "for T >= T*", "delta_C2_plus_C3", "ge", 0, "dx_lower_lag"),
    Statement("D19.corrected.lower.superseded", "Lemma D.19", "corrected", "lower",
              "Delta(C2+C3) >= q_min eta g2 exp(-2(C2+C3)/scale) for T >= T* (first correction, without "
              "the factor 1 - |C1/C1* - 1|)", "delta_C2_plus_C3", "ge", 0, "dx_lower"),
    Statement("D19.corrected.lower.lag1", "Lemma D.19", "corrected", "lower",
              "Delta(C2+C3) >= q_min eta g2 exp(-2(C2+C3)/scale) (1 - |C1(T)/C1*(T) - 1|) for T >= T* (second "
              "correction: the lag factor without exp((C2+C3)/scale))", "delta_C2_plus_C3", "ge", 0,
              "dx_lower_factor"),
)

BY_KEY = {s.key: s for s in STATEMENTS + SUPERSEDED}
LABELS = tuple(dict.fromkeys(s.label for s in STATEMENTS))
