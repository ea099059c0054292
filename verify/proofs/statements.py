"""The statements ``rdyn prove`` decides (seed 000, Appendix D), each side separately, printed and
corrected, as per-step tests on a certified state (:mod:`.iterate`) and as conditions on the
invariant region (:mod:`.region`).

Notation: ``x = C2 + C3``, ``e = exp(-x/scale)``, ``N = D - K``, ``Delta x(T) = x(T+1) - x(T)``,
``gap = 1/K - p = N e/(K (K + N e))`` (exact), ``g2`` the late-phase constant
(``M/K^3`` identity, ``M (1+kappa^2)/(2K^3)`` Leaky ReLU, ReLU at kappa = 0; times ``sqrt(D)``
with logits/sqrtD), ``q_min = q(K/(D-K))`` the increment ratio at ``p = 1/(2K)``,
``R+(T) = (N/K)^2 + 2 g2 eta (T - T* + 1)/scale``, ``R-(T) = (N/K)^2 + 2 q_min g2 eta (T - T* - 1)/scale``.

Each statement is ``lhs <= rhs`` (``relation = "le"``) or ``lhs >= rhs`` (``"ge"``) at every step
``T >= T* + offset``.
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
    window: str = "after_T_star"   # "after_T_star", "after_t1" (t >= t1), "after_1" (t >= 1) or "until_t1"


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
    Statement("D18.corrected.lower", "Lemma D.18", "corrected", "lower",
              "p(T) >= 1/K - (D-K)/(K (D-K + K sqrt(R-(T)))) for T >= T* + 1, i.e. "
              "1/K - p(T) <= (D-K)/(K (D-K + K sqrt(R-(T))))",
              "one_over_K_minus_p", "le", 1, "increment_lower"),
    Statement("D18.corrected.upper", "Lemma D.18", "corrected", "upper",
              "p(T) <= 1/K - (D-K)/(K (D-K + K sqrt(R+(T)))) for T >= T* + 1, i.e. "
              "1/K - p(T) >= (D-K)/(K (D-K + K sqrt(R+(T))))",
              "one_over_K_minus_p", "ge", 1, "increment_upper"),
    Statement("D19.printed.lower", "Lemma D.19", "printed", "lower",
              "Delta(C2+C3) >= eta M/(200 K^3 D^3) exp(-2(C2+C3)/D) for T >= T*",
              "delta_C2_plus_C3", "ge", 0, "dx_printed_lower"),
    Statement("D19.printed.upper", "Lemma D.19", "printed", "upper",
              "Delta(C2+C3) <= eta 8 pi M/(K^3 D^3) exp(-2(C2+C3)/D) for T >= T*",
              "delta_C2_plus_C3", "le", 0, "dx_printed_upper"),
    Statement("D19.corrected.lower", "Lemma D.19", "corrected", "lower",
              "Delta(C2+C3) >= q_min eta g2 exp(-2(C2+C3)/scale) (1 - exp((C2+C3)/scale) |C1(T)/C1*(T) - 1|) "
              "for T >= T*", "delta_C2_plus_C3", "ge", 0, "dx_lower_lag"),
    Statement("D19.corrected.upper", "Lemma D.19", "corrected", "upper",
              "Delta(C2+C3) <= eta g2 exp(-2(C2+C3)/scale) for T >= T*",
              "delta_C2_plus_C3", "le", 0, "dx_upper"),
)

# The correction of Lemma D.19's lower side as first stated (no lag factor): false at T* for
# some instances (the derivation assumed C1 = C1*); decided and reported apart ("superseded").
# The second restatement (lag factor 1 - |C1/C1* - 1|) is false at T* when D >= 6K or so (the proof
# sweep, docs/proofs.md): the relative sensitivity of Delta(C2+C3) to C1 near the slow manifold is
# about -1/e = -exp((C2+C3)/scale), not -1; the statement above carries that factor.
SUPERSEDED: tuple[Statement, ...] = (
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
