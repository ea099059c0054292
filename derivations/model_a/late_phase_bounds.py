"""Lemmas D.18 and D.19 of Model A (seed 000), derived from the lag lemma by summation.

Notation: ``x = C2 + C3``, ``e = exp(-x/s)`` (``s = D``; ``sqrt(D)`` with logits/sqrtD),
``N = D - K``, ``p = 1/(K + N e)``, ``Delta x(T) = x(T+1) - x(T)``, ``g2`` and ``q_min`` the
late-phase constants of :mod:`rdyn.derivations.model_a.late_phase`, ``C1*`` the fixed point of the
C1 update at p, ``w = (C1/C1* - 1)/e^3``.

Hypotheses (each certified per instance by ``rdyn prove``):

* lag lemma: ``|C1/C1* - 1| <= c_lag e^3`` for every ``T >= T*``;
* Lemma D.19 with the lag factor: ``q_min eta g2 e^2 (1 - e^-1 |C1/C1* - 1|) <= Delta x <= eta g2 e^2``
  for ``T >= T*`` (the upper side also at ``T* - 1``).

Derived here (sympy, :func:`derivation`):

* Lemma D.19, lower side, state-free: ``1 - e^-1 |C1/C1* - 1| >= 1 - c_lag e^2 >= 1 - c_lag (K/N)^2``
  (``e <= e(T*) <= K/N`` for ``T >= T*``), so ``Delta x >= q_lag eta g2 e^2`` with
  ``q_lag = q_min (1 - c_lag (K/N)^2)``;
* the one-step law ``e^-2(T+1) = e^-2(T) exp(2 Delta x/s)``; with ``exp(y) >= 1 + y`` the
  increment of ``e^-2`` is at least ``2 q_lag eta g2/s``; with ``exp(y) - 1 = y psi(y)``,
  ``psi(v) = (exp(v) - 1)/v`` increasing, it is at most ``(2 eta g2/s) psi(2 eta g2 e^2/s)``;
* ``e(T*) <= K/N < e(T* - 1)`` (``p(T*) >= 1/(2K) > p(T* - 1)``) and ``e <= 1``, so
  ``(N/K)^2 <= e^-2(T*) <= (N/K)^2 + (2 eta g2/s) psi(2 eta g2/s)`` (one step from ``T* - 1``);
* Lemma D.18 by summing the increments from T*: ``R_lo(T) <= e^-2(T) <= R_hi(T)`` for ``T >= T*``,
  ``R_lo = (N/K)^2 + 2 q_lag eta g2 (T - T*)/s``,
  ``R_hi = (N/K)^2 + (2 eta g2/s) (psi(2 eta g2/s) + psi(v_*) (T - T*))``, ``v_* = 2 eta g2 (K/N)^2/s``;
  and ``1/K - p = N e/(K (K + N e)) = N/(K (N + K sqrt(e^-2)))`` (decreasing in ``e^-2``) turns them
  into ``N/(K (N + K sqrt(R_hi))) <= 1/K - p(T) <= N/(K (N + K sqrt(R_lo)))``.
"""
from __future__ import annotations

from functools import lru_cache

import sympy as sp

D, K, eta, g2, q_min, c_lag = sp.symbols("D K eta g2 q_min c_lag", positive=True)
T, T_star, s = sp.symbols("T T_star s", positive=True)
e, y, v, R = sp.symbols("e y v R", positive=True)
j = sp.Symbol("j", integer=True)


def psi(arg):
    """``psi(v) = (exp(v) - 1)/v``."""
    return (sp.exp(arg) - 1) / arg


@lru_cache(maxsize=None)
def derivation() -> dict:
    """The derived forms (symbols of this module) and the sympy facts each step rests on (every
    ``*_zero`` entry an expression that simplifies to 0, every ``*_holds`` a True)."""
    N = D - K
    p = 1 / (K + N * e)
    facts = {}
    # the threshold p = 1/(2K) is e = K/N
    facts["threshold_holds"] = sp.solve(sp.Eq(p, 1 / (2 * K)), e) == [K / N]
    # 1/K - p = N e/(K (K + N e)), and as a function of R = e^-2
    facts["gap_zero"] = sp.simplify(1 / K - p - N * e / (K * (K + N * e)))
    facts["gap_of_R_zero"] = sp.simplify((N * e / (K * (K + N * e))).subs(e, 1 / sp.sqrt(R))
                                         - N / (K * (N + K * sp.sqrt(R))))
    # d/dR of N/(K (N + K sqrt(R))) is -N/(2 sqrt(R) (N + K sqrt(R))^2) < 0 (D > K)
    facts["gap_decreasing_in_R_zero"] = sp.simplify(sp.diff(N / (K * (N + K * sp.sqrt(R))), R)
                                                    + N / (2 * sp.sqrt(R) * (N + K * sp.sqrt(R)) ** 2))
    # the lag factor: e^-1 |C1/C1* - 1| <= e^-1 c_lag e^3 = c_lag e^2 <= c_lag (K/N)^2
    lag_factor = 1 - c_lag * (K / N) ** 2
    q_lag = q_min * lag_factor
    facts["lag_factor_zero"] = sp.simplify((c_lag * e**3) / e - c_lag * e**2)
    # one step: e^-2(T+1) = e^-2(T) exp(2 Delta x/s) (e(T+1) = e(T) exp(-Delta x/s))
    dx = sp.Symbol("dx", positive=True)
    facts["one_step_zero"] = sp.simplify((e * sp.exp(-dx / s)) ** -2 - e**-2 * sp.exp(2 * dx / s))
    # upper increment: e^-2 (exp(2 eta g2 e^2/s) - 1) = (2 eta g2/s) psi(2 eta g2 e^2/s)
    up = 2 * eta * g2 * e**2 / s
    facts["increment_upper_zero"] = sp.simplify(e**-2 * (sp.exp(up) - 1) - (2 * eta * g2 / s) * psi(up))
    # lower increment: e^-2 (exp(y) - 1) >= e^-2 y at y = 2 q_lag eta g2 e^2/s; exp(y) - 1 - y >= 0 (its
    # derivative exp(y) - 1 >= 0 for y >= 0, value 0 at 0)
    facts["exp_tangent_holds"] = (sp.diff(sp.exp(y) - 1 - y, y) == sp.exp(y) - 1
                                  and (sp.exp(y) - 1 - y).subs(y, 0) == 0)
    facts["increment_lower_zero"] = sp.simplify(e**-2 * (2 * q_lag * eta * g2 * e**2 / s) - 2 * q_lag * eta * g2 / s)
    # psi increasing: psi'(v) = (v exp(v) - exp(v) + 1)/v^2, numerator 0 at 0 with derivative v exp(v) >= 0
    num = sp.simplify(sp.diff(psi(v), v) * v**2)
    facts["psi_increasing_holds"] = (sp.simplify(num - (v * sp.exp(v) - sp.exp(v) + 1)) == 0
                                     and sp.simplify(sp.diff(num, v) - v * sp.exp(v)) == 0 and num.subs(v, 0) == 0)
    # e <= e(T*) <= K/N for T >= T* (x nondecreasing): psi(2 eta g2 e^2/s) <= psi(v_*)
    v_star = 2 * eta * g2 * (K / N) ** 2 / s
    # the sums from T*: constant increments c over the steps T* .. T-1 add up to c (T - T*)
    inc_lo = 2 * q_lag * eta * g2 / s
    inc_hi = 2 * eta * g2 / s * psi(v_star)
    facts["sum_lower_zero"] = sp.simplify(sp.summation(inc_lo, (j, T_star, T - 1)) - inc_lo * (T - T_star))
    facts["sum_upper_zero"] = sp.simplify(sp.summation(inc_hi, (j, T_star, T - 1)) - inc_hi * (T - T_star))
    # e^-2(T*): at least (N/K)^2; at most e^-2(T*-1) + (2 eta g2/s) psi(2 eta g2 e(T*-1)^2/s) with
    # e(T*-1) in (K/N, 1]: < (N/K)^2 + (2 eta g2/s) psi(2 eta g2/s)
    start_lo = (N / K) ** 2
    start_hi = (N / K) ** 2 + 2 * eta * g2 / s * psi(2 * eta * g2 / s)
    R_lo = start_lo + inc_lo * (T - T_star)
    R_hi = start_hi + inc_hi * (T - T_star)
    gap_of = lambda r: N / (K * (N + K * sp.sqrt(r)))  # noqa: E731
    return {"q_lag": q_lag, "lag_factor": lag_factor, "v_star": v_star, "R_lo": R_lo, "R_hi": R_hi,
            "gap_upper": gap_of(R_lo), "gap_lower": gap_of(R_hi),
            "p_lower": 1 / K - gap_of(R_lo), "p_upper": 1 / K - gap_of(R_hi),
            "start_lower": start_lo, "start_upper": start_hi, "facts": facts}


def facts_hold() -> bool:
    """Every step of :func:`derivation` checked by sympy."""
    f = derivation()["facts"]
    return all((v == 0) if k.endswith("_zero") else (v is True) for k, v in f.items())


def public(activation: str, scale: str = "D") -> dict:
    """The derived forms with ``g2`` and ``q_min`` of :mod:`rdyn.derivations.model_a.late_phase` for
    ``activation`` and ``s = D`` or ``sqrt(D)``, in the given symbols (``c_lag`` kept symbolic: a
    certified number per instance)."""
    from rdyn.derivations.model_a import late_phase as lp

    d = derivation()
    lpc = lp.late_phase(activation, scale)
    return {"g2": lpc.g2, "q_min": lp.increment_ratio_at_threshold(activation, scale), "forms": d,
            "scale": D if scale == "D" else sp.sqrt(D)}
