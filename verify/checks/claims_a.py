"""Checks for the claims ledger, Model A (seed 000): statements no other module checks.

Every check here can come out either way: a symbolic identity (sympy decides), an exponent
with its 95% interval (:func:`rdyn.verification.references.scaling.fit_power_law`), or a printed bound evaluated
along recorded trajectories (:mod:`rdyn.verification.claims.trajectories`) with the worst ratio and where
it occurs. A printed statement contradicted by derivation or measurement is a
``discrepancy`` (both forms or figures in ``detail``); ``fail`` is reserved for rdyn
disagreeing with itself.

Trajectories (ReLU, softmax scale 1/D): ``D=8, K=2`` at ``eta = eta_limit/2`` ("default") and
at the paper's own step-size conditions ("paper", see :func:`rdyn.verification.claims.trajectories.
paper_eta`), ``D=20, K=4`` at the default step; not quick: also identity and LeakyReLU(0.1)
at ``D=8, K=2`` and ``D=20, K=4`` at the paper's step size. Bounds are evaluated where the
lemma states them (phase 1: ``t <= t1``; phase 2/3: ``t >= t1`` or ``T >= T*``), and each
check reports the worst ratio (side claimed smaller)/(side claimed larger), whichever way the
paper writes the inequality (``<= 1`` means the bound holds). Numbering of the lemmas after D.13 follows the order of the
statements in the extraction (the labels themselves were dropped).

Theorem 3.2 (:func:`thm32_checks`) is decided over the theorem's whole class of responses Y by the
derivation of :mod:`rdyn.derivations.model_a.ood_excess`, with Monte Carlo of the network's losses
(Section 4.1's Exp(1) inputs) as the independent route.
"""
from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache

import mpmath
import numpy as np
import sympy as sp

from rdyn.verification.claims import fit_rule
from rdyn.verification.references import scaling
from rdyn.verification.claims.trajectories import Trajectory, paper_eta, trajectory
from rdyn.verification.checks.record import Check, exact_check

PAPER = "Zhang-Zhao-Gu-Cao (seed 000)"
SLACK = 1e-9  # relative slack on a bound evaluated in float64
PRESETS = {"cnn": (36, 4), "gcn": (20, 3), "sts": (20, 4), "gslp": (20, 1)}


# ------------------------------------------------------------------------------------------
# Trajectory sets
# ------------------------------------------------------------------------------------------

def _specs(quick: bool) -> tuple[tuple, ...]:
    specs = [(8, 2, "relu", "default"), (8, 2, "relu", "paper"), (20, 4, "relu", "default")]
    if not quick:
        specs += [(8, 2, "identity", "default"), (8, 2, "identity", "paper"),
                  (8, 2, "leaky", "default"), (8, 2, "leaky", "paper"), (20, 4, "relu", "paper")]
    return tuple(specs)


def _trajectories(quick: bool, policy: str | None = None) -> list[Trajectory]:
    out = []
    for D, K, act, pol in _specs(quick):
        if policy is None or pol == policy:
            out.append(trajectory(D, K, act, pol, 32 if (D == 20 and pol == "paper") else 64))
    return out


# ------------------------------------------------------------------------------------------
# Derived A(t), B(t), F1, F3 as functions of p (the inferred Lemma D.2 definitions)
# ------------------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def _attention_functions(activation: str):
    """mpmath callables ``(p, K, N, kappa) -> value`` for A = E[s(pu) s'(y) pu] (Lemma D.6),
    F3 = A + B and F1 (definitions inferred in ``rdyn.verification.checks.model_a``)."""
    from rdyn.derivations import gaussian as g
    from rdyn.derivations.model_a import collapsed as ma
    from rdyn.verification.checks.model_a import p_sym

    K, N = ma.K, ma.N
    q = (1 - K * p_sym) / N
    var = K * p_sym**2 + N * q**2  # Var(Y2)

    def f(name, a, b):
        return g.appendix_f(name, activation).subs({g.a_var: a, g.b_var: b}, simultaneous=True)

    A = f("E[x1 s(x1) s'(x1+x2)]", K * p_sym**2, N * q**2)
    # F1, F3 as in rdyn.verification.checks.model_a._f_values (only these two are needed here)
    F1 = f("E[x s(x) s'(x)]", var, 0)
    F3 = f("E[s(x1) s(x1+x2)]", K * p_sym**2, N * q**2)
    args = (p_sym, K, N, g.kappa)
    return tuple(sp.lambdify(args, expr, "mpmath") for expr in (A, F3, F1))


def _kappa(activation: str) -> float:
    return {"identity": 1.0, "relu": 0.0, "leaky": 0.1}[activation]


def _p_mp(tr: Trajectory, i: int):
    """p at 30 digits from C2 + C3 (p = 1/(K + (D-K) e))."""
    e = mpmath.exp(-mpmath.mpf(tr.C23[i]) / tr.D)
    return 1 / (tr.K + (tr.D - tr.K) * e)


_A_RATIO: dict = {}


def _a_ratio(tr: Trajectory, idx) -> np.ndarray:
    """A/(A+B) * (1-Kp)/(Kp(Dp-1)) at the given indices (mpmath, 30 digits; cached per
    trajectory and step; nan where p = 1/D)."""
    fA, fF3, _ = _attention_functions(tr.activation)
    cache = _A_RATIO.setdefault(tr.name, {})
    out = []
    with mpmath.workdps(30):
        for i in idx:
            i = int(i)
            if i not in cache:
                p = _p_mp(tr, i)
                a = fA(p, tr.K, tr.D - tr.K, _kappa(tr.activation))
                f3 = fF3(p, tr.K, tr.D - tr.K, _kappa(tr.activation))
                den = tr.K * p * (tr.D * p - 1)
                cache[i] = float(a / f3 * (1 - tr.K * p) / den) if den != 0 else math.nan
            out.append(cache[i])
    return np.array(out)


# ------------------------------------------------------------------------------------------
# Helpers: worst ratio of a bound, exponents
# ------------------------------------------------------------------------------------------

def _bound_check(id: str, source: str, claim: str, parts: list, printed: str, **extra) -> Check:
    """``parts``: (trajectory, indices, ratio array) with ratio = (side claimed smaller)/(side
    claimed larger), whichever way the printed inequality is written (<= 1: it holds)."""
    worst, where, evaluated = -math.inf, None, 0
    per_config = {}
    for tr, idx, ratio in parts:
        if len(idx) == 0:
            continue
        j = int(np.nanargmax(ratio))
        evaluated += len(idx)
        per_config[tr.name] = float(ratio[j])
        if ratio[j] > worst:
            worst, where = float(ratio[j]), tr.where(int(idx[j]))
    if evaluated == 0:
        return Check(id, source, claim, "fail", None, None, {"printed": printed, "error": "no points evaluated"})
    status = "pass" if worst <= 1 + SLACK else "discrepancy"
    return Check(id, source, claim + f" (worst ratio smaller side/larger side = {worst:.4g}; <= 1 holds)",
                 status, None, None,
                 {"printed": printed, "worst_ratio": worst, "where": where, "points": evaluated,
                  "worst_ratio_per_config": per_config, **extra})


def _exponent(x, y, claimed: float) -> dict:
    """A fit decided by the one rule (:func:`rdyn.verification.claims.fit_rule.fit_detail`): ``exponent``
    and ``exponent_ci95`` are the window's (the interval that decides)."""
    return {**fit_rule.fit_detail(claimed, x, y), "local_exponent": scaling.local_exponent(list(x), list(y))}


def _status_of_fits(results) -> str:
    return fit_rule.verify_status(r["fit_decision"]["verdict"] for r in results)


def _phase3(tr: Trajectory, start: float = 4.0):
    """Indices with T - T* >= start T* (the asymptotic part of phase 3)."""
    return np.nonzero(tr.t - tr.T_star >= start * tr.T_star)[0]


# ------------------------------------------------------------------------------------------
# Theorem 3.1, Step 3
# ------------------------------------------------------------------------------------------

def s_identity_check() -> Check:
    """||S - S*||_F from the structure: each of the D columns has K in-group entries p and D-K
    out-group entries q = (1 - K p)/(D - K); S* has 1/K in-group and 0 out-group."""
    D, K, p = sp.symbols("D K p", positive=True)
    N, w = sp.symbols("N w", positive=True)  # N = D - K > 0, w = 1 - K p > 0 (p < 1/K)
    q = w / N
    squared = (K + N) * (K * (w / K) ** 2 + N * q**2)  # D [K (1/K - p)^2 + (D-K) q^2]
    derived = sp.simplify(sp.sqrt(sp.factor(sp.simplify(squared))))
    derived = derived.subs({N: D - K, w: 1 - K * p})
    printed = D * (1 - K * p) / (K * (D - K))
    # numeric confirmation on explicit matrices (cnn, D=8, K=2 and sts, D=6, K=3) at p = 0.3/K
    worst_matrix = 0.0
    for Dn, Kn, groups in ((8, 2, [[2 * (i // 2), 2 * (i // 2) + 1] for i in range(8)]),
                           (6, 3, [[0, 1, 2]] * 6)):
        pn = 0.3 / Kn + 0.5 / Dn
        qn = (1 - Kn * pn) / (Dn - Kn)
        S = np.full((Dn, Dn), qn)
        S_star = np.zeros((Dn, Dn))
        for i, g in enumerate(groups):
            S[g, i] = pn
            S_star[g, i] = 1 / Kn
        val = float(derived.subs({D: Dn, K: Kn, p: pn}))
        worst_matrix = max(worst_matrix, abs(np.linalg.norm(S - S_star) - val) / val)
    holds = sp.simplify(derived - printed) == 0
    ratio = sp.simplify(derived / printed)
    return Check("A.claim.S_identity", f"{PAPER}, proof of Theorem 3.1 (Step 3)",
                 "printed ||S - S*||_F = D(1 - Kp)/(K(D-K)) equals the value from the attention structure",
                 "pass" if holds else ("discrepancy" if worst_matrix < 1e-12 else "fail"), None, None,
                 {"printed": str(printed), "derived": str(derived), "derived_over_printed": str(ratio),
                  "matrix_check_rel_error": worst_matrix,
                  "note": "the derived form has sqrt(K(D-K)) where the print has K(D-K); with the "
                          "sqrt, (1-Kp) = Theta(D(D-K)/(eta K ||V*||^2 (T-T*))) gives the printed "
                          "D^{5/2} order, with the printed form it would give D^2"})


def step3_checks(quick: bool) -> list[Check]:
    """T-exponents of ||S - S*||_F = D (1-Kp)/sqrt(K(D-K)) and ||W_V - V*||_F = |C1 - 1| ||V*||_F
    and of the excess loss over T - T* in [4 T*, 64 T*]; per step-size policy."""
    out = []
    for policy in ("default", "paper"):
        trs = _trajectories(quick, policy)
        for name, label, fn, claimed in (
                ("S_exponent", "||S^(T) - S*||_F", lambda tr: tr.D * tr.one_minus_Kp / math.sqrt(tr.K * (tr.D - tr.K)), -1.0),
                ("WV_exponent", "||W_V^(T) - V*||_F", lambda tr: np.abs(tr.C1 - 1) * math.sqrt(tr.vstar_norm2), -1.0),
                ("loss_exponent", "excess loss L(T) - L_opt", lambda tr: tr.loss, -1.0)):
            results = {}
            for tr in trs:
                idx = _phase3(tr)
                results[tr.name] = _exponent(tr.t[idx] - tr.T_star, fn(tr)[idx], claimed)
            first = next(iter(results.values()))
            exps = ", ".join(f"{r['exponent']:.3f} [{r['exponent_ci95'][0]:.3f}, {r['exponent_ci95'][1]:.3f}]"
                             for r in results.values()) + " (window fits, fit rule)"
            source = "Theorem 3.1" if name == "loss_exponent" else "Theorem 3.1 (Step 3)"
            out.append(Check(
                f"A.claim.step3.{name}.{policy}", f"{PAPER}, {source}",
                f"{label} = Theta(1/T): exponent of T - T* over [4T*, 64T*] is -1 "
                f"(eta policy {policy}); fitted {exps}",
                _status_of_fits(results.values()), abs(first["exponent"] - claimed), None,
                {"per_config": results, "policy": policy,
                 "decision": "fit rule per configuration (fit_decision): discrepancy if any, pass if all"}))
    return out


# ------------------------------------------------------------------------------------------
# Phase 3 (the lemmas after D.17)
# ------------------------------------------------------------------------------------------

def _with_late(check: Check, parts: list, start: float = 4.0) -> Check:
    """Add the worst ratio over the asymptotic part T - T* >= start T* to a bound check."""
    late = [float(np.max(r[tr.t[idx] - tr.T_star >= start * tr.T_star]))
            for tr, idx, r in parts if np.any(tr.t[idx] - tr.T_star >= start * tr.T_star)]
    worst = max(late) if late else None
    detail = {**check.detail, f"worst_ratio_T_minus_Tstar_ge_{start:g}Tstar": worst}
    claim = check.claim if worst is None else check.claim[:-1] + f"; {worst:.4g} for T - T* >= {start:g} T*)"
    return replace(check, claim=claim, detail=detail)


def phase3_checks(quick: bool) -> list[Check]:
    """Phase-3 bounds at every recorded T > T* (T* + 1 included); the worst ratio over the
    asymptotic part T - T* >= 4 T* is reported as well."""
    out = []
    for policy in ("default", "paper"):
        trs = _trajectories(quick, policy)
        lo, hi, pc, pc_t, dlo, dhi = [], [], [], [], [], []
        for tr in trs:
            D, K, eta, vn = tr.D, tr.K, tr.eta, tr.vstar_norm2
            idx = np.nonzero(tr.t > tr.T_star)[0]
            gap = (tr.t[idx] - tr.T_star).astype(float)
            dist = tr.one_minus_Kp[idx] / K  # 1/K - p
            lo.append((tr, idx, dist / (20 * D * (D - K) / (eta * K * vn * gap))))
            hi.append((tr, idx, (D * (D - K) / (2 * math.e * eta * K * vn * gap)) / dist))
            lhs = tr.p[idx] * tr.C1[idx] - 1 / K
            omk = tr.one_minus_Kp[idx]
            rhs = 2 / D * omk + omk**2 / K
            pc.append((tr, idx, lhs / rhs))
            rhs_t = 40 * K * (D - K) / (eta * K * vn * gap) + 400 * D**2 * (D - K) ** 2 / (eta * vn * gap)
            pc_t.append((tr, idx, lhs / rhs_t))
            pidx = np.array([i for i in tr.pairs() if tr.t[i] >= tr.T_star], dtype=np.int64)
            dx = tr.C23[tr.nxt[pidx]] - tr.C23[pidx]
            base = eta * vn / (K**3 * D**3) * np.exp(-2 * tr.C23[pidx] / D)
            dlo.append((tr, pidx, (base / 200) / dx))
            dhi.append((tr, pidx, dx / (8 * math.pi * base)))
        src = f"{PAPER}, Lemma D.18 (phase 3)"
        out.append(_with_late(_bound_check(f"A.claim.phase3.p_lower.{policy}", src,
                                f"p(T) >= 1/K - 20D(D-K)/(eta K ||V*||^2 (T-T*)) for T > T* (eta {policy})",
                                lo, "1/K - 20 D (D-K)/(eta K sum||v*||^2 (T-T*)) <= p(T)"), lo))
        out.append(_with_late(_bound_check(f"A.claim.phase3.p_upper.{policy}", src,
                                f"p(T) <= 1/K - D(D-K)/(2e eta K ||V*||^2 (T-T*)) for T > T* (eta {policy})",
                                hi, "p(T) <= 1/K - D (D-K)/(2 e eta K sum||v*||^2 (T-T*))"), hi))
        out.append(_with_late(_bound_check(f"A.claim.phase3.pC1.{policy}", src,
                                f"p(T) C1(T) - 1/K <= (2/D)(1-Kp) + (1/K)(1-Kp)^2 for T > T* (eta {policy})",
                                pc, "p C1 - 1/K <= (2/D)(1 - K p) + (1/K)(1 - K p)^2"), pc))
        out.append(_with_late(_bound_check(f"A.claim.phase3.pC1_T.{policy}", src,
                                f"p(T) C1(T) - 1/K <= 40K(D-K)/(eta K ||V*||^2 (T-T*)) + 400 D^2 (D-K)^2/"
                                f"(eta ||V*||^2 (T-T*)) for T > T* (eta {policy})",
                                pc_t, "p C1 - 1/K <= 40K(D-K)/(eta K sum (T-T*)) + 400 D^2 (D-K)^2/(eta sum (T-T*))"), pc_t))
        src = f"{PAPER}, Lemma D.19 (phase 3 increments)"
        out.append(_with_late(_bound_check(f"A.claim.phase3.dC23_lower.{policy}", src,
                                f"Delta(C2+C3) >= eta ||V*||^2/(200 K^3 D^3) e^(-2(C2+C3)/D) for t >= T* (eta {policy})",
                                dlo, "Delta(C2+C3) >= eta sum/(200 K^3 D^3) exp(-2(C2+C3)/D)"), dlo))
        out.append(_with_late(_bound_check(f"A.claim.phase3.dC23_upper.{policy}", src,
                                f"Delta(C2+C3) <= 8 pi eta ||V*||^2/(K^3 D^3) e^(-2(C2+C3)/D) for t >= T* (eta {policy})",
                                dhi, "Delta(C2+C3) <= 8 pi eta sum/(K^3 D^3) exp(-2(C2+C3)/D)"), dhi))
    return out


# ------------------------------------------------------------------------------------------
# Lemmas D.3 - D.17
# ------------------------------------------------------------------------------------------

def lemma_d3_check(quick: bool) -> Check:
    """K p <= F3/F1 <= D K p on p in [1/D, 1/K] (grid, 30 digits), three activations."""
    worst_low, worst_high, where_low, where_high = -math.inf, -math.inf, None, None
    sizes = ((8, 2), (20, 4), (36, 4), (20, 1)) if not quick else ((8, 2), (20, 4))
    with mpmath.workdps(30):
        for activation in ("identity", "relu", "leaky"):
            _, fF3, fF1 = _attention_functions(activation)
            for D, K in sizes:
                for j in range(0, 41):
                    p = mpmath.mpf(1) / D + (mpmath.mpf(1) / K - mpmath.mpf(1) / D) * j / 40
                    if j == 40:
                        p = mpmath.mpf(1) / K * (1 - mpmath.mpf(10) ** -20)
                    r = fF3(p, K, D - K, _kappa(activation)) / fF1(p, K, D - K, _kappa(activation))
                    low, high = float(K * p / r), float(r / (D * K * p))
                    if low > worst_low:
                        worst_low, where_low = low, {"activation": activation, "D": D, "K": K, "p": float(p)}
                    if high > worst_high:
                        worst_high, where_high = high, {"activation": activation, "D": D, "K": K, "p": float(p)}
    ok = worst_low <= 1 + 1e-12 and worst_high <= 1 + 1e-12
    return Check("A.claim.D3", f"{PAPER}, Lemma D.3",
                 f"K p <= F3/F1 <= D K p for p in [1/D, 1/K] (41-point grid, identity/ReLU/Leaky, "
                 f"derived F1, F3); worst Kp/(F3/F1) = {worst_low:.6g}, worst (F3/F1)/(DKp) = {worst_high:.3g}",
                 "pass" if ok else "discrepancy", None, None,
                 {"printed": "K p <= F3/F1 <= D K p", "worst_lower_ratio": worst_low, "where_lower": where_low,
                  "worst_upper_ratio": worst_high, "where_upper": where_high,
                  "note": "the lower bound is attained at p = 1/K (F3 = F1 there)"})


def lemma_d5_check(quick: bool) -> Check:
    """C1(t) <= (1 + 4A/(5(A+B)) (1-Kp)/(Kp(Dp-1))) C1*(t) for t >= 1."""
    parts = []
    for tr in _trajectories(quick):
        idx = np.nonzero((tr.t >= 1) & (tr.p * tr.D > 1 + 1e-12))[0]
        bound = (1 + 0.8 * _a_ratio(tr, idx)) * tr.C1_star[idx]
        parts.append((tr, idx, tr.C1[idx] / bound))
    c = _bound_check("A.claim.D5.upper", f"{PAPER}, Lemma D.5",
                     "C1(t) <= (1 + 4A(t)/(5(A(t)+B(t))) (1-Kp)/(Kp(Dp-1))) C1*(t) along the trajectories",
                     parts, "C1 <= (1 + 4A/(5(A+B)) (1-Kp)/(Kp(Dp-1))) C1*")
    worst_c1 = max(float(np.max(tr.C1[1:] / tr.C1_star[1:])) for tr in _trajectories(quick))
    c.detail["max_C1_over_C1star"] = worst_c1
    return c


def lemma_d7_alpha_check(quick: bool) -> Check:
    """Lemma D.7's general form ``C1(t) = (1 + alpha A/(A+B) (1-Kp)/(Kp(Dp-1))) C1*(t)``: the alpha
    each step of the derived trajectories implies (t >= 1, Dp > 1). The form is a parametrisation,
    not a claim: wherever ``1/D < p < 1/K`` every C1 is of this form for exactly one alpha (the
    factor ``A/(A+B) (1-Kp)/(Kp(Dp-1))`` is positive there), so there is nothing to decide until a
    range of alpha is given; the printed range is not in the extraction of seed 000, and the range
    the proof uses (``alpha <= 4/5``, Lemma D.5) is decided by ``A.claim.D5.upper``. This check is a
    measurement (info)."""
    per_config, lo, hi = {}, (math.inf, None), (-math.inf, None)
    for tr in _trajectories(quick):
        idx = np.nonzero((tr.t >= 1) & (tr.p * tr.D > 1 + 1e-12))[0]
        alpha = (tr.C1[idx] / tr.C1_star[idx] - 1) / _a_ratio(tr, idx)
        j, k = int(np.nanargmin(alpha)), int(np.nanargmax(alpha))
        per_config[tr.name] = {"alpha_min": float(alpha[j]), "alpha_max": float(alpha[k]), "points": int(idx.size)}
        if alpha[j] < lo[0]:
            lo = (float(alpha[j]), tr.where(int(idx[j])))
        if alpha[k] > hi[0]:
            hi = (float(alpha[k]), tr.where(int(idx[k])))
    return Check("A.claim.D7.alpha", f"{PAPER}, Lemma D.7 (general form)",
                 f"C1(t) = (1 + alpha A/(A+B) (1-Kp)/(Kp(Dp-1))) C1*(t): alpha implied by the derived trajectories "
                 f"(t >= 1, Dp > 1) lies in [{lo[0]:.3g}, {hi[0]:.3g}] (inside Lemma D.5's alpha <= 4/5). The form "
                 f"is a parametrisation (one alpha for every C1 where 1/D < p < 1/K), so without a printed range "
                 f"of alpha (not in the extraction) there is nothing to decide",
                 "info", None, None,
                 {"alpha_min": lo[0], "alpha_max": hi[0], "where_min": lo[1], "where_max": hi[1],
                  "per_config": per_config, "lemma_d5_alpha_bound": 0.8,
                  "printed": "C1(t) = (1 + alpha A/(A+B) (1-Kp)/(Kp(Dp-1))) C1*(t)"})


def eta_conditions_check() -> Check:
    """Where the default step eta_limit/2 lies relative to the paper's conditions."""
    from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, eta_limit

    rows = {}
    for name, (D, K) in PRESETS.items():
        for act in ("identity", "relu", "leaky"):
            lim = eta_limit(TeacherConfig(D=D, K=K, activation=act))
            rows[f"{name} {act}"] = {
                "D": D, "K": K, "eta_default": lim / 2, "eta_limit": lim,
                "lemma_D5_max": K / D, "lemma_D9_max": K**3 * (D - K) / (D**3 * (D + 1)),
                "default_inside_D5": lim / 2 <= K / D,
                "default_inside_D9": lim / 2 <= K**3 * (D - K) / (D**3 * (D + 1))}
    outside = sorted(k for k, r in rows.items() if not (r["default_inside_D5"] and r["default_inside_D9"]))
    return Check("A.claim.eta_conditions", f"{PAPER}, Lemmas D.5, D.9 (step-size conditions)",
                 "step sizes allowed by Lemma D.5 (1 - eta D/K >= 0: eta <= K/D) and Lemma D.9 "
                 "(eta ||V*||^2 D(D+1)/(K^3(D-K)) <= 1/D^2) vs the default eta_limit/2 "
                 f"(||V*||^2 = 1): default outside for {len(outside)} of {len(rows)} preset/activation pairs",
                 "info", None, None, {"rows": rows, "default_outside": outside})


def lemma_d9_checks(quick: bool) -> list[Check]:
    out = []
    for policy in ("default", "paper"):
        lo, hi, inc = [], [], []
        for tr in _trajectories(quick, policy):
            idx = tr.pairs()
            j = tr.nxt[idx]
            dx = tr.C23[j] - tr.C23[idx]
            keep = dx > 0
            idx, j, dx = idx[keep], j[keep], dx[keep]
            # Delta p without cancellation: p' - p = p p' (D-K) e (1 - exp(-dx/D))
            e = np.exp(-tr.C23[idx] / tr.D)
            dp = tr.p[idx] * tr.p[j] * (tr.D - tr.K) * e * (-np.expm1(-dx / tr.D))
            base = tr.p[idx] * tr.one_minus_Kp[idx] * dx
            lo.append((tr, idx, (base / (2 * tr.D)) / dp))
            hi.append((tr, idx, dp / (tr.D**2 * base / (tr.D * (tr.D**2 - 1)))))
            inc.append((tr, idx, dx * tr.D**2))
        src = f"{PAPER}, Lemma D.9"
        out.append(_bound_check(f"A.claim.D9.dp_lower.{policy}", src,
                                f"Delta p >= p(1-Kp)/(2D) Delta(C2+C3) (eta {policy})", lo,
                                "p(1-Kp)/(2D) (Delta C2 + Delta C3) <= Delta p"))
        out.append(_bound_check(f"A.claim.D9.dp_upper.{policy}", src,
                                f"Delta p <= D^2 p(1-Kp)/(D(D^2-1)) Delta(C2+C3) (eta {policy})", hi,
                                "Delta p <= D^2 p(1-Kp)/(D(D^2-1)) (Delta C2 + Delta C3)"))
        out.append(_bound_check(f"A.claim.D9.dC23.{policy}", src,
                                f"Delta C2 + Delta C3 <= 1/D^2 at every step (eta {policy})", inc,
                                "Delta C2 + Delta C3 <= eta M D (D+1)/(K^3 (D-K)) <= 1/D^2"))
    return out


def lemma_d10_check(quick: bool) -> Check:
    """Printed: C1*(t) is increasing in t when p(t) <= 1/(2 pi D K). Since p(t) >= 1/D >
    1/(2 pi D K) on every trajectory from zero, the condition never holds; the derived
    threshold (identity: C1* = (D-K)/(DKp + 1/p - 2K) increases iff p < 1/sqrt(DK)) and the
    measured p at which C1* stops increasing are reported."""
    D, K, p = sp.symbols("D K p", positive=True)
    c1s = (D - K) * p / (D * K * p**2 - 2 * K * p + 1)
    crit = sp.solve(sp.Eq(sp.diff(c1s, p), 0), p)
    crit = [c for c in crit if c.is_positive is not False]
    rows, nonempty = {}, False
    for tr in _trajectories(quick):
        cond = tr.p <= 1 / (2 * math.pi * tr.D * tr.K)
        nonempty |= bool(cond.any())
        idx = tr.pairs()
        dec = idx[tr.C1_star[tr.nxt[idx]] < tr.C1_star[idx]]
        rows[tr.name] = {"min_p": float(tr.p.min()), "printed_threshold": 1 / (2 * math.pi * tr.D * tr.K),
                         "p_where_C1star_first_decreases": float(tr.p[dec[0]]) if len(dec) else None,
                         "identity_threshold_1_over_sqrt_DK": 1 / math.sqrt(tr.D * tr.K)}
    status = "pass" if nonempty else "discrepancy"
    return Check("A.claim.D10", f"{PAPER}, Lemma D.10",
                 "C1*(t) increasing while p(t) <= 1/(2 pi D K): the printed condition is met on the "
                 "trajectories (p >= 1/D always)", status, None, None,
                 {"printed": "p(t) <= 1/(2*pi*D*K)", "derived": f"p < {crit[0]} (identity)" if crit else None,
                  "per_config": rows,
                  "note": "p(t) >= 1/D > 1/(2 pi D K): the printed condition is empty, so the lemma as "
                          "extracted says nothing; C1* increases up to p = 1/sqrt(DK) (identity)"})


def lemma_d11_check(quick: bool) -> Check:
    """C1*(t+1) >= C1*(t) - 3 D K p Delta p/(D K p^2 - 2 K p + 1) C1*(t) along the trajectories."""
    parts = []
    for tr in _trajectories(quick):
        idx = tr.pairs()
        j = tr.nxt[idx]
        dp = tr.p[j] - tr.p[idx]
        p = tr.p[idx]
        drop = 3 * tr.D * tr.K * p * np.maximum(dp, 0) / (tr.D * tr.K * p**2 - 2 * tr.K * p + 1) * tr.C1_star[idx]
        rhs = tr.C1_star[idx] - drop
        # lhs <= rhs form: rhs / C1*(t+1) <= 1
        parts.append((tr, idx, rhs / tr.C1_star[j]))
    return _bound_check("A.claim.D11", f"{PAPER}, Lemma D.11",
                        "C1*(t+1) >= (1 - 3DKp Delta p/(DKp^2 - 2Kp + 1)) C1*(t) at every recorded step",
                        parts, "C1*(t+1) >= C1*(t) - 3DKp(t)Delta p(t)/(DKp^2 - 2Kp + 1) C1*(t)")


def lemma_d12_check(quick: bool) -> Check:
    """The ratio g(t) = A/(A+B) (1-Kp)/(Kp(Dp-1)) satisfies
    g(t+1) >= g(t) - A/(A+B) 2DKp Delta p/(K^2 p^2 (Dp-1)^2)."""
    parts = []
    for tr in _trajectories(quick):
        idx = np.array([i for i in tr.pairs() if tr.p[i] * tr.D > 1 + 1e-9 and tr.t[i] >= 1], dtype=np.int64)
        if len(idx) > 400:
            idx = idx[np.linspace(0, len(idx) - 1, 400).astype(int)]
        j = tr.nxt[idx]
        g0, g1 = _a_ratio(tr, idx), _a_ratio(tr, j)
        p, dp = tr.p[idx], tr.p[j] - tr.p[idx]
        frac = g0 * tr.K * p * (tr.D * p - 1) / tr.one_minus_Kp[idx]  # A/(A+B)
        rhs = g0 - frac * 2 * tr.D * tr.K * p * dp / (tr.K**2 * p**2 * (tr.D * p - 1) ** 2)
        parts.append((tr, idx, rhs / g1))
    return _bound_check("A.claim.D12", f"{PAPER}, Lemma D.12",
                        "A/(A+B) (1-Kp)/(Kp(Dp-1)) at t+1 >= its value at t minus A/(A+B) 2DKp Delta p/"
                        "(K^2 p^2 (Dp-1)^2)", parts,
                        "g(t+1) >= g(t) - A/(A+B) 2DKp Delta p/(K^2 p^2 (Dp-1)^2)")


def lemma_d14_check(quick: bool) -> Check:
    """0.975 C1*(t') >= 0.95 C1*(t'') for all t', t'' <= t1: max C1* / min C1* <= 0.975/0.95."""
    parts = []
    for tr in _trajectories(quick):
        idx = np.nonzero(tr.t <= tr.t1)[0]
        ratio = np.array([0.95 * tr.C1_star[idx].max() / (0.975 * tr.C1_star[i]) for i in idx])
        parts.append((tr, idx, ratio))
    return _bound_check("A.claim.D14", f"{PAPER}, Lemma D.14",
                        "0.975 C1*(t') >= 0.95 C1*(t'') for all t', t'' <= t1 (every step recorded)",
                        parts, "0.975 C1*(t') >= 0.95 C1*(t'')")


def lemma_d15_checks(quick: bool) -> list[Check]:
    parts = []
    for tr in _trajectories(quick):
        idx = np.nonzero(tr.t >= tr.t1)[0]
        factor = np.maximum(0.95, 1 - 0.8 * _a_ratio(tr, idx))
        parts.append((tr, idx, factor * tr.C1_star[idx] / tr.C1[idx]))
    lower = _bound_check("A.claim.D15.lower", f"{PAPER}, Lemma D.15",
                         "C1(t) >= [0.95 v (1 - 4A/(5(A+B)) (1-Kp)/(Kp(Dp-1)))] C1*(t) for t >= t1",
                         parts, "C1 >= max(0.95, 1 - 4A/(5(A+B)) (1-Kp)/(Kp(Dp-1))) C1*")
    # numeric steps of the proof: 3(D-K)/D^2 <= 0.025 and 0.975 C1* - 0.025 >= 0.95 C1* (C1* >= 1)
    D, K = sp.symbols("D K", positive=True)
    min_c1s = min(float(tr.C1_star.min()) for tr in _trajectories(quick))
    return [lower, d15_numeric_check(min_c1s)]


def d15_numeric_check(min_c1s: float) -> Check:
    """The numeric steps of Lemma D.15's proof at the presets; ``min_c1s``: the smallest C1*
    seen on the trajectories (the step 0.975 C1* - 0.025 >= 0.95 C1* needs C1* >= 1)."""
    D, K = sp.symbols("D K", positive=True)
    cond = sp.simplify(3 * (D - K) / D**2 - sp.Rational(1, 40))
    rows = {name: {"D": Dn, "K": Kn, "3(D-K)/D^2": 3 * (Dn - Kn) / Dn**2, "holds": 3 * (Dn - Kn) / Dn**2 <= 0.025}
            for name, (Dn, Kn) in PRESETS.items()}
    smallest_D = {Kn: next(Dn for Dn in range(Kn + 1, 10**4) if 3 * (Dn - Kn) <= 0.025 * Dn**2) for Kn in (1, 2, 3, 4)}
    ok = all(r["holds"] for r in rows.values()) and min_c1s >= 1 - 1e-12
    numeric = Check("A.claim.D15.numeric", f"{PAPER}, proof of Lemma D.15",
                    "numeric steps 3(D-K)/D^2 <= 0.025 and 0.975 C1* - 0.025 >= 0.95 C1* (needs C1* >= 1) "
                    "hold at the paper's presets", "pass" if ok else "discrepancy", None, None,
                    {"printed": "3(D-K)/D^2 <= 0.025", "derived": f"holds iff {sp.simplify(cond <= 0)}: "
                     "D^2 >= 120 (D - K)", "presets": rows, "smallest_D_for_K": smallest_D,
                     "min_C1_star_on_trajectories": min_c1s})
    return numeric


def lemma_d16_check(quick: bool) -> Check:
    """C1*(t+1) - C1*(t) <= 3(D-K+K C1*(t)) Delta p/(2(DKp^2 - 2Kp + 1 - K Delta p)) (used in D.15)."""
    parts = []
    for tr in _trajectories(quick):
        idx = np.array([i for i in tr.pairs() if tr.t[i] >= tr.t1], dtype=np.int64)
        j = tr.nxt[idx]
        p, dp = tr.p[idx], tr.p[j] - tr.p[idx]
        rhs = 3 * (tr.D - tr.K + tr.K * tr.C1_star[idx]) * dp / (2 * (tr.D * tr.K * p**2 - 2 * tr.K * p + 1 - tr.K * dp))
        lhs = tr.C1_star[j] - tr.C1_star[idx]
        keep = rhs > 0
        idx, lhs, rhs = idx[keep], lhs[keep], rhs[keep]
        parts.append((tr, idx, lhs / rhs))
    return _bound_check("A.claim.D16", f"{PAPER}, Lemma D.16",
                        "C1*(t+1) - C1*(t) <= 3(D-K+K C1*) Delta p/(2(DKp^2 - 2Kp + 1 - K Delta p)) for t >= t1",
                        parts, "C1*(t+1) <= C1*(t) + 3(D-K+KC1*)Delta p/(2(DKp^2-2Kp+1-K Delta p))")


def lemma_d17_checks(quick: bool) -> list[Check]:
    trs = _trajectories(quick)
    rows = {tr.name: {"max_p": float(tr.p.max()), "one_over_K": 1 / tr.K, "T_star_1_over_2K": tr.T_star}
            for tr in trs}
    reached = any(tr.p.max() >= 0.5 for tr in trs)
    threshold = Check("A.claim.D17.threshold", f"{PAPER}, Lemma D.17",
                      "printed p(T*) >= 1/2 is reached on the trajectories (K >= 2)",
                      "pass" if reached else "discrepancy", None, None,
                      {"printed": "p(T*) >= 1/2", "derived": "p(t) < 1/K <= 1/2 for K >= 2; the reachable "
                       "threshold is 1/(2K) (docs/models_and_conventions.md)", "per_config": rows})
    parts_lo, parts_hi = [], []
    for tr in trs:
        idx = np.nonzero(tr.t >= tr.t1)[0]
        parts_lo.append((tr, idx, 0.95 * tr.C1_star[idx] / tr.C1[idx]))
        parts_hi.append((tr, idx, tr.C1[idx] / ((4 * math.pi + 1) * tr.C1_star[idx])))
    lo = _bound_check("A.claim.D17.band_lower", f"{PAPER}, Lemma D.17 (C1 band)",
                      "0.95 C1*(t) <= C1(t) for t >= t1", parts_lo, "0.95 C1* <= C1")
    hi = _bound_check("A.claim.D17.band_upper", f"{PAPER}, Lemma D.17 (C1 band)",
                      "C1(t) <= (4 pi + 1) C1*(t) for t >= t1", parts_hi, "C1 <= (4 pi + 1) C1*")
    return [threshold, lo, hi]


def tstar_paper_eta_check(quick: bool) -> Check:
    """D-exponent of eta T* at the paper's step size eta = paper_eta(D, K) (K = 2)."""
    from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, run

    Ds = (8, 11, 16) if quick else (8, 11, 16, 23)
    ys = []
    for D in Ds:
        eta = paper_eta(D, 2)
        r = run(TeacherConfig(D=D, K=2, eta=eta))
        ys.append(eta * r.T_star)
    res = _exponent(Ds, ys, 2.0)
    return Check("A.claim.Tstar_D_exponent.paper", f"{PAPER}, Lemma D.17",
                 f"T* = Theta(K D^2/(eta ||V*||^2)) inside the paper's step-size conditions: exponent of D "
                 f"in eta T* (K=2, relu, D={Ds}); fitted {res['exponent']:.3f} "
                 f"[{res['exponent_ci95'][0]:.3f}, {res['exponent_ci95'][1]:.3f}]",
                 _status_of_fits([res]), abs(res["exponent"] - 2) / 2, None,
                 {**res, "eta": [paper_eta(D, 2) for D in Ds]})


# ------------------------------------------------------------------------------------------
# Theorem 3.2 and Section 4: excess OOD loss (iid Exp(1) inputs)
# ------------------------------------------------------------------------------------------

def ood_excess_loss(tr: Trajectory, idx, samples: int = 40000, seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """1/2 E||f*(X) - TF(X)||_F^2 for X with iid Exp(1) entries (STS teacher, M = 1, d = 4,
    v* = (1,1,1,1)/2, so ||V*||_F^2 = 1), at the states ``idx`` of ``tr``; Monte Carlo with one
    fixed sample (common random numbers across T) and its standard errors."""
    rng = np.random.default_rng(seed)
    d = 4
    v = np.full(d, 0.5)
    X = rng.exponential(1.0, size=(samples, d, tr.D))
    z = np.einsum("k,nkj->nj", v, X)  # <v*, x_j>
    zin = z[:, :tr.K].sum(axis=1)
    zall = z.sum(axis=1)
    act = {"identity": lambda x: x, "relu": lambda x: np.maximum(x, 0),
           "leaky": lambda x: np.maximum(x, tr.kappa * x)}[tr.activation]
    teacher = act(zin / tr.K)
    means, ses = [], []
    for i in idx:
        p = tr.p[i]
        q = tr.one_minus_Kp[i] / (tr.D - tr.K)
        student = act(tr.C1[i] * (p * zin + q * (zall - zin)))
        per = 0.5 * tr.D * (teacher - student) ** 2  # every column is alike for STS
        means.append(per.mean())
        ses.append(per.std(ddof=1) / math.sqrt(samples))
    return np.array(means), np.array(ses)


def ood_checks(quick: bool) -> list[Check]:
    tr = _trajectories(quick, "default")[0]  # D=8, K=2, relu
    idx = _phase3(tr)
    idx = idx[np.linspace(0, len(idx) - 1, 12).astype(int)]
    mean, se = ood_excess_loss(tr, idx, samples=20000 if quick else 80000)
    gap = tr.t[idx] - tr.T_star
    # Theorem 3.2 says the excess goes below any eps: decided by the decrease (every recorded
    # step, beyond 3 standard errors) and the derived 1/T asymptote (A.errata.ood); the fit is context
    drops = -np.diff(mean)
    decreasing = bool(np.all(drops > 3 * np.hypot(se[1:], se[:-1])))
    context = fit_rule.context_fit(-1.0, gap, mean, "A.errata.ood")
    bound = Check("A.claim.thm32.ood", f"{PAPER}, Theorem 3.2",
                  "excess OOD loss (iid Exp(1) inputs) L_OOD - 1/2 E||Y - f*(X)||^2 decreases to 0 "
                  f"along training (so <= eps for T large): {mean[0]:.3g} at T-T* = {int(gap[0])}, "
                  f"{mean[-1]:.3g} at {int(gap[-1])}, every step down by more than 3 standard errors: "
                  f"{decreasing}; the 1/T rate is derived (A.errata.ood); "
                  + fit_rule.context_text(context),
                  "pass" if decreasing else "discrepancy", None, None,
                  {"excess_ood_loss": [float(v) for v in mean], "T_minus_T_star": [float(v) for v in gap],
                   "context_fit_of_the_rate": context,
                   "std_error": [float(s) for s in se], "config": tr.name, "samples": 20000 if quick else 80000,
                   "estimator": "population dynamics (collapsed GD), Monte Carlo over iid Exp(1) inputs, no label noise",
                   "inputs": "iid Exp(1) entries, STS teacher, M=1, d=4"})
    slope_res = _exponent(gap, mean, -0.5)
    slope = Check("A.claim.sec4.ood_slope", f"{PAPER}, Section 4.1",
                  "excess OOD loss curve has slope about -0.5 on log-log axes (population dynamics, noise-free "
                  "Exp(1) inputs); " + fit_rule.text(slope_res["fit_decision"]),
                  _status_of_fits([slope_res]), abs(slope_res["exponent"] + 0.5) / 0.5,
                  None, {**slope_res, "config": tr.name,
                         "estimator": "population excess OOD loss (noise-free), not the paper's N = 100 noisy batch"})
    return [bound, slope]


THM32_SAMPLES = 20000      # Monte Carlo samples (one fixed sample: common random numbers across T)
THM32_Z_MAX = 5.0          # |Monte Carlo - exact form| / standard error
THM32_EXTRAPOLATION_TOL = 0.02   # |extrapolated (exact / derived leading term) at e -> 0 - 1|


def ood_attaining_excess(tr: Trajectory, idx, coef_in: float, coef_out: float, samples: int = THM32_SAMPLES,
                         seed: int = 11) -> tuple[np.ndarray, np.ndarray]:
    """Monte Carlo of L_OOD - 1/2 E||Y - f*(X)||_F^2 for the fixed response Y = f*(X) + r, r = coef_in z_in +
    coef_out z_out in every column (Section 4.1's OOD inputs: iid Exp(1), STS teacher, M = 1, d = 4, v* =
    (1,1,1,1)/2), from the network's outputs (the activation applied, not the reduced form): mean and standard
    error at the states ``idx``, one fixed sample (common random numbers across T)."""
    rng = np.random.default_rng(seed)
    X = rng.exponential(1.0, size=(samples, 4, tr.D))
    z = np.einsum("k,nkj->nj", np.full(4, 0.5), X)
    zin = z[:, :tr.K].sum(axis=1)
    zout = z.sum(axis=1) - zin
    act = {"identity": lambda x: x, "relu": lambda x: np.maximum(x, 0),
           "leaky": lambda x: np.maximum(x, tr.kappa * x)}[tr.activation]
    teacher = act(zin / tr.K)
    r = coef_in * zin + coef_out * zout
    means, ses = [], []
    for i in idx:
        q = tr.one_minus_Kp[i] / (tr.D - tr.K)
        student = act(tr.C1[i] * (tr.p[i] * zin + q * zout))
        per = 0.5 * tr.D * ((teacher + r - student) ** 2 - r**2)   # every column alike (STS)
        means.append(per.mean())
        ses.append(per.std(ddof=1) / math.sqrt(samples))
    return np.array(means), np.array(ses)


def thm32_checks(quick: bool) -> list[Check]:
    """Theorem 3.2 over its whole class of Y (bounded second moments), decided by the derivation of
    :mod:`rdyn.derivations.model_a.ood_excess`: the worst case over ``E||Y - f*||^2 <= B^2`` is
    ``Q + B sqrt(2Q) ~ B sqrt(2 q2) e ~ T^(-1/2)``, attained by a fixed Y built from the out-group
    pattern; the printed O(1/T) (Section 4.1: "O(1/T) convergence rate in Theorem 3.2") holds only for
    Y whose cross term vanishes. Independent route: Monte Carlo of the network's losses with that fixed
    Y (B = 1) along the trajectory (T - T* in [4, 64] T*): equal to the exact form within
    THM32_Z_MAX standard errors, and (exact form)/(derived leading term) extrapolated to e -> 0 is 1.

    ``A.claim.thm32.rate`` (the printed rate: discrepancy when the derivation and the route agree),
    ``A.claim.thm32.worst_case`` (the corrected statement)."""
    from rdyn.derivations.model_a import collapsed as ma
    from rdyn.derivations.model_a import ood_excess as oe

    tr = _trajectories(quick, "default")[0]  # D=8, K=2, relu
    idx = _phase3(tr)
    idx = idx[np.linspace(0, len(idx) - 1, 12).astype(int)]
    gap = tr.t[idx] - tr.T_star
    der = oe.ood_excess(tr.activation, tr.logit_scale)
    values = {ma.D: tr.D, ma.K: tr.K, oe.B: 1, ma.kappa: tr.kappa, **oe.EXP_INPUTS}
    att = {k: float(v.subs(values)) for k, v in der.attaining_response().items()}
    mc, se = ood_attaining_excess(tr, idx, att["coef_in"], att["coef_out"])
    form = oe.excess_form()
    mo = {k: float(v.subs(values)) for k, v in oe.moments().items()}
    R = {oe.R_in: tr.D * (att["coef_in"] * mo["in_in"] + att["coef_out"] * mo["in_out"]),
         oe.R_out: tr.D * (att["coef_in"] * mo["in_out"] + att["coef_out"] * mo["out_out"])}
    exact_f = sp.lambdify([oe.C1, oe.p], (form["quadratic"] - form["cross"]).subs({**values, **R}), "numpy")
    quad_f = sp.lambdify([oe.C1, oe.p], form["quadratic"].subs(values), "numpy")
    exact = np.array([float(exact_f(tr.C1[i], tr.p[i])) for i in idx])
    quadratic = np.array([float(quad_f(tr.C1[i], tr.p[i])) for i in idx])
    z = np.abs(mc - exact) / se
    e = np.exp(-tr.C23[idx] / tr.scale)
    sup_coef = float(der.sup_coefficient.subs(values))
    ratio = exact / (sup_coef * e)
    intercept = float(np.polyfit(e, ratio, 2)[-1])   # ratio = 1 + O(e): C1 K/(K + N e) and Q/(sup e)
    lead_T = sp.lambdify([ma.eta, ma.vstar_norm2, oe.T], der.rate(der.sup_coefficient).subs(values), "numpy")
    derived_T = np.array([float(lead_T(tr.eta, tr.vstar_norm2, float(t))) for t in tr.t[idx]])
    route_ok = bool(z.max() < THM32_Z_MAX and abs(intercept - 1) <= THM32_EXTRAPOLATION_TOL
                    and np.all(mc > 0) and np.all(np.diff(mc) < 0))
    exponent = der.T_exponent(der.sup_coefficient)
    sqrtT = mc * np.sqrt(tr.t[idx].astype(float))
    local = fit_rule.local_slopes(list(gap), list(mc))
    leading = {a: oe.ood_excess(a, "D").rate(oe.ood_excess(a, "D").sup_coefficient)
               .subs({**oe.EXP_INPUTS, ma.vstar_norm2: sp.Symbol("M", positive=True)}) for a in ("identity", "relu", "leaky")}
    expressions = {a: sp.sstr(x) for a, x in leading.items()}
    row = {"config": tr.name, "T": [float(t) for t in tr.t[idx]], "T_star": tr.T_star,
           "measured_quantity": "ood_excess_loss", "measured_values": [float(v) for v in mc],
           "std_error": [float(s) for s in se], "exact_form_values": [float(v) for v in exact],
           "derived_values": [float(v) for v in derived_T], "monte_carlo_z": [float(v) for v in z],
           "quadratic_term_Q": [float(v) for v in quadratic],
           "ratio_exact_over_leading_term": [float(v) for v in ratio], "e": [float(v) for v in e],
           "extrapolated_ratio_at_e_0": float(intercept), "sqrt_T_times_excess": [float(v) for v in sqrtT],
           "local_slopes": local}
    derivation = {"module": "rdyn.derivations.model_a.ood_excess",
                  "split": "L_OOD - 1/2 E||Y - f*||^2 = Q - C, Q = 1/2 E||TF - f*||^2, C = E<Y - f*, TF - f*> (exact)",
                  "quadratic_coefficient_q2": sp.sstr(der.q2), "linear_coefficient_fixed_Y": sp.sstr(der.linear_coefficient),
                  "sup_coefficient": sp.sstr(der.sup_coefficient), "attaining_over_sup": sp.sstr(der.attaining_over_sup),
                  "attaining_Y": "Y = f*(X) - B w/(sqrt(D) ||w||) in every column, w = z_out/K (the out-group pattern)",
                  "derived_T_exponent_worst_case": sp.sstr(exponent),
                  "derived_T_exponent_cross_term_zero": sp.sstr(der.T_exponent(der.q2, 2))}
    inputs = "iid Exp(1) entries, STS teacher, M = 1, d = 4, v* = (1/2)(1,1,1,1); B^2 = E||Y - f*(X)||_F^2 = 1"
    derived_ok = exponent == sp.Rational(-1, 2) and sp.simplify(der.attaining_over_sup - 1) == 0
    rate = Check("A.claim.thm32.rate", f"{PAPER}, Theorem 3.2 (rate O(1/T), Section 4.1)",
                 "L_OOD - 1/2 E||Y - f*(X)||^2 = O(1/T) over the theorem's class of Y (bounded second moments): the "
                 "derivation gives the worst case over E||Y - f*||^2 <= B^2 as Q + B sqrt(2Q) ~ B sqrt(2 q2) e ~ T^(-1/2) "
                 f"(derived T-exponent {exponent}), attained by a fixed Y built from the out-group pattern "
                 "(the cross term E<Y - f*, TF - f*> is linear in the attention error, ~ T^(-1/2); it vanishes only for "
                 "special Y, e.g. Y = f*(X) + independent noise, where the excess is Q ~ 1/T). Monte Carlo of that Y "
                 f"({THM32_SAMPLES} samples, {tr.name}): max z vs the exact form {z.max():.2g}, exact/leading term "
                 f"extrapolated to e -> 0: {intercept:.4f}; sqrt(T) times the excess {sqrtT[0]:.3g} -> {sqrtT[-1]:.3g}, local "
                 f"slopes {local[0]:.2f} .. {local[-1]:.2f}",
                 ("discrepancy" if route_ok else "fail") if derived_ok else "fail", None, None,
                 {"printed": "O(1/T)", "derived": expressions["relu"], "expression": expressions,
                  # the entry's figure: the worst-case Y's excess against T - T*, the printed exponent dashed
                  "x": [float(g) for g in gap], "y": [float(v) for v in mc], "claimed_exponent": -1.0,
                  "exponent_of_derived_over_printed": {"T": "1/2"}, "derivation": derivation,
                  "per_config": [row], "inputs": inputs,
                  "note": "Section 4.1 attributes O(1/T) to Theorem 3.2; the theorem's own condition on T is not in "
                          "the extraction"})
    worst = Check("A.claim.thm32.worst_case", f"{PAPER}, Theorem 3.2 (corrected)",
                  "for every Y with E||Y - f*(X)||_F^2 <= B^2: L_OOD - 1/2 E||Y - f*||^2 <= Q + B sqrt(2Q) = "
                  "B sqrt(2 q2) e + O(e^2) = Theta(T^(-1/2)), attained asymptotically by a fixed Y "
                  "(ratio 1, sympy); O(1/T) iff the cross term's e-coefficient a1 R_in + a2 R_out vanishes. "
                  f"Independent route (Monte Carlo, {tr.name}): max z {z.max():.2g} < {THM32_Z_MAX:g}, extrapolated "
                  f"ratio {intercept:.4f} (tolerance {THM32_EXTRAPOLATION_TOL})",
                  "pass" if route_ok and derived_ok else "fail", float(abs(intercept - 1)), None,
                  {"expression": expressions, "tex": sp.latex(leading["relu"]),
                   "derivation": derivation, "per_config": [row], "inputs": inputs})
    return [rate, worst]


OOD_BATCH, OOD_NOISE, OOD_BATCHES = 100, 1.0, 8


def ood_batch(tr: Trajectory, seed: int, n: int = OOD_BATCH, noise: float = OOD_NOISE):
    """One fixed batch as Section 4.1's figure uses it: ``n`` inputs with iid Exp(1) entries and
    label noise E iid N(0, noise^2) (STS teacher, M = 1, d = 4, v* = (1,1,1,1)/2, as
    :func:`ood_excess_loss`): (z_in, z_out, S) per sample, S the sum of the noise over the columns."""
    rng = np.random.default_rng(seed)
    d = 4
    v = np.full(d, 0.5)
    X = rng.exponential(1.0, size=(n, d, tr.D))
    E = rng.normal(0.0, noise, size=(n, tr.D))
    z = np.einsum("k,nkj->nj", v, X)
    zin = z[:, :tr.K].sum(axis=1)
    return zin, z.sum(axis=1) - zin, E.sum(axis=1)


def ood_batch_terms(tr: Trajectory, idx, batch) -> np.ndarray:
    """(quadratic term, linear term) at the states ``idx`` of the figure's estimator (1/(2n)) sum_n
    (||Y_n - TF(X_n)||^2 - ||Y_n - f*(X_n)||^2), their sum. All arguments are positive, so with d1 = C1 p - 1/K,
    d2 = C1 q it is exactly (D/(2n)) sum (d1 z_in + d2 z_out)^2 - (1/n) sum (d1 z_in + d2 z_out) S_n: a quadratic
    term, ~ e^2 ~ 1/T, and a linear one, ~ -(e/K) mean(z_out S) ~ T^(-1/2), whose sign is the batch's."""
    zin, zout, S = batch
    out = []
    for i in idx:
        d1 = tr.C1[i] * tr.p[i] - 1 / tr.K
        d2 = tr.C1[i] * tr.one_minus_Kp[i] / (tr.D - tr.K)
        u = d1 * zin + d2 * zout
        out.append((float(tr.D / 2 * np.mean(u * u)), float(-np.mean(u * S))))
    return np.array(out)


#: Section 4.1's experiment as the paper ran it, at the quick sizes of ``rdyn figures --paper A``: CNN teacher,
#: ReLU, D = 12, K = 3, M = 4, d = 8, ||V*||_F^2 = 256, online SGD (a fresh batch of N = 100 Gaussian inputs
#: with label noise 1 per step), eta = half of eta_limit, seed 0; steps quick/full
SGD_OOD = {"task": "cnn", "activation": "relu", "D": 12, "K": 3, "M": 4, "d": 8, "vstar_norm2": 256.0,
           "batch": OOD_BATCH, "noise_std": OOD_NOISE, "seed": 0, "steps": {True: 3000, False: 20000}}


@lru_cache(maxsize=None)
def sgd_ood_experiment(quick: bool) -> dict:
    """The excess OOD loss of an SGD-trained student, estimated as the paper's Figure 2(b) does (at each
    recorded step a fresh batch of N = 100 Exp(1) inputs with label noise,
    ``L_OOD - (1/(2N)) sum ||Y_n - f*(X_n)||^2``): :data:`SGD_OOD`, trained by
    :func:`rdyn.verification.references.full_matrix.gradient_descent` (mode "sgd"). The window is
    T - T* in [T*, end] (T* of the collapsed map at the same eta, past the plateau and its bend); its
    slope is a measured window of the printed observation, next to the population estimator's."""
    from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, run as run_collapsed
    from rdyn.verification.figures.model_a import experiment_model, record_grid
    from rdyn.verification.references import full_matrix as fm

    e = SGD_OOD
    steps = e["steps"][quick]
    config = TeacherConfig(D=e["D"], K=e["K"], activation=e["activation"], vstar_norm2=e["vstar_norm2"])
    T_star = run_collapsed(config, steps=steps).T_star
    _, model = experiment_model(e["task"], e["activation"], e["D"], e["K"], e["vstar_norm2"], e["M"], e["d"],
                                e["seed"])
    traj = fm.gradient_descent(model, config.step_size, steps, mode="sgd", record=record_grid(steps),
                               batch_size=e["batch"], noise_std=e["noise_std"], seed=e["seed"])
    t, ood = np.asarray(traj.steps, dtype=float), np.asarray(traj.ood_loss)
    keep = (t - T_star >= T_star) & (ood > 0)
    gap, est = t[keep] - T_star, ood[keep]
    return {"setup": {k: v for k, v in e.items() if k != "steps"}, "steps": steps, "eta": config.step_size,
            "T_star_collapsed": int(T_star), "diverged_at_step": traj.diverged_at_step,
            "nonpositive_estimates": int(np.sum((t - T_star >= T_star) & (ood <= 0))),
            "context_fit": fit_rule.context_fit(-0.5, gap, est, "the derived asymptote of the estimator"),
            }


def ood_batch_check(quick: bool) -> Check:
    """Section 4.1's OOD slope decided for the estimator the paper's figure plots (a fixed batch of
    N = 100 noisy Exp(1) inputs). By derivation, as T -> oo the linear term -(e/K) c, c =
    mean(z_out S), dominates the quadratic one, so the estimate falls like T^(-1/2) (slope -1/2)
    when c < 0 and turns negative (not drawable on log axes) when c > 0. Checked along the
    trajectory (T - T* in [4, 64] T*): the linear term has the sign of -c at every T and grows
    relative to the quadratic one (|linear/quadratic| increasing, ~ 1/e), and every batch with
    c < 0 stays positive (else ``fail``). The printed statement is about the measured curves: it
    passes when some measured window's 95% interval (:func:`fit_rule.decide`'s window, over
    [4, 64] T* and over [1, 2] T*) holds -0.5; when every window excludes it the check is marked
    ``undecided`` (the ledger counts it inconclusive: the derived asymptote is not what the windows
    show). The paper's experiment itself (:func:`sgd_ood_experiment`: online SGD, a fresh batch per
    recorded step) counts as an observation of -0.5 only when its interval holds -0.5 and excludes the
    population excess's -1; else it is context. ``per_config`` holds the positive batches' curves and the
    SGD curve (the entry's figure)."""
    tr = _trajectories(quick, "default")[0]  # D=8, K=2, relu
    idx = _phase3(tr)
    idx = idx[np.linspace(0, len(idx) - 1, 12).astype(int)]
    gap = tr.t[idx] - tr.T_star
    # the window just after T* (T - T* in [1, 2] T*), where the curve bends from its plateau: local slopes
    # near -0.6 there come from that bend, not from the T^(-1/2) term (a few % of the quadratic one there)
    after = np.flatnonzero((tr.t - tr.T_star >= tr.T_star) & (tr.t - tr.T_star <= 2 * tr.T_star))
    early = after[np.linspace(0, len(after) - 1, min(6, len(after))).astype(int)]
    early_gap = tr.t[early] - tr.T_star
    # the paper's own experiment: context, not a deciding window (its fresh batch per step leaves an
    # interval that holds the population's -1 as well as -0.5, so it separates neither); drawn first
    sgd = sgd_ood_experiment(quick)
    sgd_ci = sgd["context_fit"]["window_ci95"]
    sgd_holds = [s for s in (-0.5, -1.0) if sgd_ci[0] <= s <= sgd_ci[1]]
    series = {f"online SGD (paper's experiment), D={SGD_OOD['D']}, K={SGD_OOD['K']}, relu": {
        "x": sgd["context_fit"]["x"], "y": sgd["context_fit"]["y"], "claimed_exponent": -0.5}}
    rows, consistent, windows = [], True, []
    for seed in range(OOD_BATCHES):
        batch = ood_batch(tr, 1000 + seed)
        c = float(np.mean(batch[1] * batch[2]))
        terms = ood_batch_terms(tr, idx, batch)
        est = terms.sum(axis=1)
        share = terms[:, 1] / terms[:, 0]
        row = {"seed": 1000 + seed, "c_linear": c, "derived_asymptotic_slope": -0.5 if c < 0 else None,
               "estimates": [float(v) for v in est], "T_minus_T_star": [float(g) for g in gap],
               "linear_over_quadratic": [float(v) for v in share]}
        ok = bool(np.all(np.sign(terms[:, 1]) == -np.sign(c)) and np.all(np.diff(np.abs(share)) > 0)
                  and (c > 0 or np.all(est > 0)))
        if np.all(est > 0):
            row["local_slopes"] = fit_rule.local_slopes(list(gap), list(est))
            row["context_fit"] = fit_rule.context_fit(-0.5, gap, est, "the derived asymptote of the estimator")
            windows.append(row["context_fit"])
            series[f"batch {1000 + seed} (population run), mean(z_out S)={c:.2f}"] = {
                "x": [float(g) for g in gap], "y": [float(v) for v in est], "claimed_exponent": -0.5}
            e_terms = ood_batch_terms(tr, early, batch)
            e_est = e_terms.sum(axis=1)
            if np.all(e_est > 0):
                row["context_early_window"] = {
                    "T_minus_T_star_over_T_star": [float(g / tr.T_star) for g in early_gap],
                    "local_slopes": fit_rule.local_slopes(list(early_gap), list(e_est)),
                    "linear_over_quadratic": [float(v) for v in e_terms[:, 1] / e_terms[:, 0]],
                    "fit": fit_rule.context_fit(-0.5, early_gap, e_est, "the derived asymptote of the estimator")}
                windows.append(row["context_early_window"]["fit"])
        row["as_derived"] = bool(ok)
        consistent &= bool(ok)
        rows.append(row)
    drawable = sum(r["c_linear"] < 0 for r in rows)
    # the printed -0.5 describes the measured curves: it is observed when some measured window's 95% interval
    # holds it; when every window excludes it, the derived asymptote alone cannot confirm the observation
    observed_batches = [w for w in windows if w["window_ci95"][0] - 1e-9 <= -0.5 <= w["window_ci95"][1] + 1e-9]
    sgd_observed = sgd_holds == [-0.5]     # the paper's experiment shows -0.5 and excludes the population's -1
    observed = observed_batches + ([sgd["context_fit"]] if sgd_observed else [])
    ratio_8 = [abs(r["linear_over_quadratic"][int(np.argmin(np.abs(gap - 8 * tr.T_star)))]) for r in rows
               if r["c_linear"] < 0] or [math.nan]
    intervals = "; ".join(f"[{w['window_ci95'][0]:.3f}, {w['window_ci95'][1]:.3f}] over x in "
                          f"[{w['window_x'][0]:.4g}, {w['window_x'][1]:.4g}]" for w in windows)
    undecided = None
    if consistent and drawable and not observed:
        undecided = fit_rule.undecided(
            f"every measured window excludes the printed -0.5 ({len(windows)} windows of the {len(series) - 1} "
            f"positive batches: {intervals}); the paper's experiment itself (online SGD, "
            f"{fit_rule.context_text(sgd['context_fit'])}) holds "
            f"{' and '.join(f'{v:g}' for v in sgd_holds) or 'neither -0.5 nor -1'} in its interval"
            f"{', so it does not separate the printed slope from the population excess' if len(sgd_holds) == 2 else ''}; "
            f"the estimator's slope tends to -1/2 only where its T^(-1/2) term dominates, "
            f"|linear/quadratic| >> 1 (it grows like T^(1/2) and is {min(ratio_8):.2g}-{max(ratio_8):.2g} at 8 T* in "
            f"the batches with mean(z_out S) < 0: it reaches 1 only near T = {(1 / max(ratio_8)) ** 2 * 8:.3g} to "
            f"{(1 / min(ratio_8)) ** 2 * 8:.3g} T*, beyond the measured 65 T*): decided by a run that reaches that "
            "regime, or by the paper's windows (not in the extraction)")
    last = ", ".join(f"{r['local_slopes'][-1]:.2f}" for r in rows if r["c_linear"] < 0 and "local_slopes" in r)
    bend = [r["context_early_window"] for r in rows if "context_early_window" in r]
    bend_txt = (f"; in [1, 2] T* after T* (the bend after the plateau) they are "
                f"{min(min(b['local_slopes']) for b in bend):.2f}..{max(max(b['local_slopes']) for b in bend):.2f} with the "
                f"T^(-1/2) term at most {max(max(abs(v) for v in b['linear_over_quadratic']) for b in bend):.0%} of the "
                "quadratic one" if bend else "")
    return Check("A.claim.sec4.ood_slope_batch", f"{PAPER}, Section 4.1 (Fig. 2(b): the paper's estimator)",
                 f"excess OOD loss as the figure estimates it (one batch of N = {OOD_BATCH} Exp(1) inputs, label noise "
                 f"{OOD_NOISE:g}; population dynamics D=8, K=2, ReLU) has slope about -0.5: by derivation its linear "
                 f"term ~ -(e/K) mean(z_out S) dominates as T -> oo, so it falls like T^(-1/2) in the {drawable} of "
                 f"{OOD_BATCHES} batches with mean(z_out S) < 0 and turns negative in the others; along the "
                 f"trajectory the linear term has that sign and grows relative to the quadratic one: {consistent}. "
                 f"Observed slopes: {len(observed_batches)} of {len(windows)} measured windows hold -0.5 in their 95% interval "
                 f"(local slopes at 64 T* {last or 'none'}, the quadratic term still dominating{bend_txt}; the paper's "
                 f"experiment itself, online SGD at D = {SGD_OOD['D']}, K = {SGD_OOD['K']} with a fresh N = "
                 f"{OOD_BATCH} batch per recorded step: {fit_rule.context_text(sgd['context_fit'])}; an observation of "
                 f"-0.5 (its interval holds -0.5 and excludes -1): {sgd_observed})"
                 + ("" if observed else ": the printed slope is the estimator's asymptote, not what the measured "
                                        "windows show (inconclusive)")
                 + ". The population excess falls like 1/T (A.errata.ood)",
                 ("pass" if observed else "info") if consistent and drawable else "fail", None, None,
                 {**({"undecided": undecided} if undecided else {}), "per_config": series,
                  "per_batch": rows, "batch": OOD_BATCH, "noise_std": OOD_NOISE, "config": tr.name,
                  "estimator": "fixed batch of N = 100 Exp(1) inputs with label noise (the paper's)",
                  "sgd_experiment": sgd,
                  "derivation": "estimate = (D/(2N)) sum (d1 z_in + d2 z_out)^2 - (1/N) sum (d1 z_in + d2 z_out) S_n, "
                                "d1 = C1 p - 1/K = O(e^2), d2 = C1 q ~ e/K, e^2 ~ 1/T",
                  "context": "population excess: A.claim.sec4.ood_slope, A.errata.ood",
                  "windows": "deciding: the sign of the linear term and the growth of |linear/quadratic| over T - T* in "
                             "[4, 64] T* (no slope decides). Context slopes: -0.8..-0.96 at [4, 64] T* (quadratic "
                             "term dominant); -0.56..-0.81 at [1, 2] T* (context_early_window: the bend after the "
                             "plateau, steepening from 0 towards -1 while the T^(-1/2) term is at most 13% of the "
                             "quadratic one); the issue's -0.58..-0.68 lie in the first half of that window. The "
                             "asymptotic -1/2 needs |linear/quadratic| >> 1, which grows like T^(1/2) "
                             "and is 0.03-0.23 at 8 T*"})


# ------------------------------------------------------------------------------------------
# Appendix F.2, F.3
# ------------------------------------------------------------------------------------------

def arithmetic_checks() -> list[Check]:
    a, b, c = sp.symbols("a b c", positive=True)
    first = sp.factor(sp.simplify(c / (a + b) - (c / a - b * c / a**2)))   # = b^2 c / (a^2 (a+b)) >= 0
    second = sp.factor(sp.simplify((c / a + b * c / (a - b) ** 2) - c / (a - b)))  # >= 0 for a > b > 0
    u = sp.Symbol("u", positive=True)
    second_pos = sp.simplify(second.subs(a, b + u))
    return [
        exact_check("A.claim.F2.first", f"{PAPER}, Appendix F.2", "c/(a+b) >= c/a - bc/a^2 for a, b, c > 0",
                    bool(first.is_nonnegative), difference=str(first)),
        exact_check("A.claim.F2.second", f"{PAPER}, Appendix F.2", "c/(a-b) <= c/a + bc/(a-b)^2 for a > b > 0, c > 0",
                    bool(second_pos.is_nonnegative), difference=str(second)),
    ]


def sequence_bound_check() -> Check:
    """x_{t+1} = x_t + c1 exp(-c2 x_t): log(c1 c2 t + e^{c2 x0})/c2 <= x_t <= x0 + c1 e^{-c2 x0}
    + log((c1 c2 t + e^{c2 x0}) / e^{c2 x0})/c2 (Appendix F.3, the comparison with the ODE)."""
    worst_lo, worst_hi = -math.inf, -math.inf
    for c1, c2, x0 in ((0.5, 1.0, 0.0), (0.01, 3.0, 1.0), (2.0, 0.1, -1.0), (1e-3, 0.05, 10.0)):
        x = x0
        for t in range(1, 200001):
            x = x + c1 * math.exp(-c2 * x)
            if t % 997 == 0 or t < 50:
                base = c1 * c2 * t + math.exp(c2 * x0)
                lo = math.log(base) / c2
                hi = x0 + c1 * math.exp(-c2 * x0) + math.log(base / math.exp(c2 * x0)) / c2
                worst_lo = max(worst_lo, lo - x)
                worst_hi = max(worst_hi, x - hi)
    ok = worst_lo <= 1e-9 and worst_hi <= 1e-9
    return Check("A.claim.F3.sequence", f"{PAPER}, Appendix F.3",
                 "x_{t+1} = x_t + c1 e^{-c2 x_t} stays between the ODE solution log(c1 c2 t + e^{c2 x0})/c2 "
                 "and x0 + c1 e^{-c2 x0} + log(1 + c1 c2 t e^{-c2 x0})/c2 (4 parameter sets, 2e5 steps)",
                 "pass" if ok else "discrepancy", None, None,
                 {"max_lower_violation": worst_lo, "max_upper_violation": worst_hi})


def tensor_power_check() -> Check:
    """The first lemma of Appendix F.3 (the tensor-power sequence bound), its printed displays:
    for x_{t+1} >= x_t + eta c1 x_t^q (q > 1, positive), (i) x_{T1} >= x0 + sum_t eta c1 x_t^q >=
    x0 + T1 eta c1 x0^q, and (ii) g* = the number of (1 + zeta)-fold increases from x0 to reach v,
    i.e. the least g with x0 (1 + zeta)^g >= v, satisfies log(v/x0)/log(1+zeta) <= g* <
    log(v/x0)/log(1+zeta) + 1. Sequences with random increments between the two printed
    recursions (c1 <= c <= c2), 60 parameter sets; the lemma's own conclusion (the bound on the
    hitting time) is not in the extraction."""
    rng = np.random.default_rng(33)
    worst_i, bad_ii, n = -math.inf, 0, 0
    for _ in range(60):
        eta, c1 = float(rng.uniform(0.01, 0.5)), float(rng.uniform(0.1, 2))
        c2, q, x0 = c1 * float(rng.uniform(1, 3)), float(rng.uniform(1.1, 3)), float(rng.uniform(0.01, 1))
        x, total = x0, x0
        for t in range(1, 400):
            step = eta * float(rng.uniform(c1, c2)) * x**q
            total += eta * c1 * x**q
            x += step
            if not math.isfinite(x) or x > 1e12:
                break
            # (i): x_t >= x0 + sum eta c1 x_s^q >= x0 + t eta c1 x0^q
            worst_i = max(worst_i, (total - x) / x, (x0 + t * eta * c1 * x0**q - total) / total)
            n += 1
        zeta, v = float(rng.uniform(0.05, 2)), x0 * float(rng.uniform(1.5, 1e6))
        g = 0
        while x0 * (1 + zeta) ** g < v:
            g += 1
        r = math.log(v / x0) / math.log(1 + zeta)
        bad_ii += not (r - 1e-12 <= g < r + 1)
    ok = worst_i <= 1e-12 and bad_ii == 0
    return Check("A.claim.F3.tensor_power", f"{PAPER}, Appendix F.3 (first lemma)",
                 "x_{t+1} >= x_t + eta c1 x_t^q: x_{T1} >= x0 + sum eta c1 x_t^q >= x0 + T1 eta c1 x0^q, and "
                 "log(v/x0)/log(1+zeta) <= g* < log(v/x0)/log(1+zeta) + 1 (60 random parameter sets, "
                 f"{n} steps): {ok}", "pass" if ok else "discrepancy", None, None,
                 {"max_relative_violation_i": worst_i, "violations_ii": bad_ii, "steps": n,
                  "note": "the lemma's conclusion (its hitting-time bound) is not in the extraction; its printed "
                          "displays are checked"})


@lru_cache(maxsize=None)
def checks(quick: bool = False) -> tuple[Check, ...]:
    out: list[Check] = [s_identity_check()]
    out += step3_checks(quick)
    out += phase3_checks(quick)
    out.append(lemma_d3_check(quick))
    out.append(lemma_d5_check(quick))
    out.append(lemma_d7_alpha_check(quick))
    out.append(eta_conditions_check())
    out += lemma_d9_checks(quick)
    out.append(lemma_d10_check(quick))
    out.append(lemma_d11_check(quick))
    out.append(lemma_d12_check(quick))
    out.append(lemma_d14_check(quick))
    out += lemma_d15_checks(quick)
    out.append(lemma_d16_check(quick))
    out += lemma_d17_checks(quick)
    out.append(tstar_paper_eta_check(quick))
    out += ood_checks(quick)
    out += thm32_checks(quick)
    out.append(ood_batch_check(quick))
    out += arithmetic_checks()
    out.append(sequence_bound_check())
    out.append(tensor_power_check())
    return tuple(out)
