"""rdyn.derivations.model_a.late_phase_bounds: every sympy step of the derived Lemmas D.18/D.19 holds,
and the derived R_lo, R_hi bound e^-2 along an independent float64 iteration of a map with the
hypotheses (increments between q_lag eta g2 e^2 and eta g2 e^2)."""
from __future__ import annotations

import math

import sympy as sp


def test_every_step_of_the_derivation_holds():
    from rdyn.derivations.model_a import late_phase_bounds as lb

    facts = lb.derivation()["facts"]
    assert set(facts) >= {"gap_zero", "one_step_zero", "increment_upper_zero", "sum_lower_zero", "sum_upper_zero",
                          "psi_increasing_holds", "threshold_holds"}
    assert lb.facts_hold()


def test_forms_start_and_slopes():
    from rdyn.derivations.model_a import late_phase_bounds as lb

    d = lb.derivation()
    N = lb.D - lb.K
    assert sp.simplify(d["R_lo"].subs(lb.T, lb.T_star) - (N / lb.K) ** 2) == 0
    assert sp.simplify(d["R_hi"].subs(lb.T, lb.T_star) - d["start_upper"]) == 0
    assert sp.simplify(sp.diff(d["R_lo"], lb.T) - 2 * lb.q_min * (1 - lb.c_lag * lb.K**2 / N**2) * lb.eta * lb.g2 / lb.s) == 0
    # 1/K - p at e^-2 = R, the bounds' orientation: gap_upper uses R_lo (the smaller R)
    assert sp.simplify(d["gap_upper"] - N / (lb.K * (N + lb.K * sp.sqrt(d["R_lo"])))) == 0


def test_bounds_hold_along_a_map_with_the_hypotheses_and_fail_without_the_first_step():
    """x' = x + eta g2 q(e) e^2 with q in [q_lag, 1] at every step (e = exp(-x/s)): from T* (the first
    e <= K/N) e^-2 stays in [R_lo, R_hi] for 3000 steps; with q = 1 the bound R0 + (2 eta g2/s)(T - T*)
    (R_hi without the first step's term and without psi) is exceeded."""
    from rdyn.derivations.model_a import late_phase_bounds as lb

    D, K, eta, g2, qmin, c_lag = 8, 2, 0.5, 0.05, 0.3, 0.4
    s, N = float(D), D - K
    f = {lb.D: D, lb.K: K, lb.eta: eta, lb.g2: g2, lb.q_min: qmin, lb.c_lag: c_lag, lb.s: s}
    d = lb.derivation()
    q_lag = float(d["q_lag"].subs(f))
    assert 0 < q_lag < qmin
    R_lo = sp.lambdify((lb.T, lb.T_star), d["R_lo"].subs(f))
    R_hi = sp.lambdify((lb.T, lb.T_star), d["R_hi"].subs(f))
    exceeded = False
    for q_of in (lambda e: 1.0, lambda e: q_lag, lambda e: q_lag + (1 - q_lag) * e):
        x, t = 0.0, 0
        while math.exp(-x / s) > K / N:
            e = math.exp(-x / s)
            x += eta * g2 * q_of(e) * e * e
            t += 1
        T_star = t
        for T in range(T_star, T_star + 3000):
            inv2 = math.exp(2 * x / s)
            assert R_lo(T, T_star) * (1 - 1e-12) <= inv2 <= R_hi(T, T_star) * (1 + 1e-12), (T, T_star)
            if q_of(0.5) == 1.0 and inv2 > (N / K) ** 2 + 2 * eta * g2 / s * (T - T_star):
                exceeded = True
            e = math.exp(-x / s)
            x += eta * g2 * q_of(e) * e * e
    assert exceeded
