"""Checks for the claims ledger, Model B (seed 003): statements no other module checks.

Setting (unless stated): Task 2 spectrum (3, 1, 1, 1) (d = 4, n = 6) with exact expectations
(Gauss-Legendre / 2F1, :mod:`rdyn.reduced_dynamics.model_b.run`), ``alpha0 = 0, beta0 = 1``. Looping a
trained layer is done with the full ``2d x (n+1)`` matrices on fixed test points (numpy), not
with the collapsed formula, so the per-loop contraction is measured, not assumed. Each check can
come out either way; a printed statement contradicted by derivation or measurement is a
``discrepancy``, ``fail`` means rdyn disagrees with itself. Theorem B.3 Part 1 at the printed and the
corrected eta_max is decided by ``rdyn prove --paper B`` at its own instance (Task 1, d = 16, n = 32;
:func:`b3_part1_prove_check`).
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np
import sympy as sp

from rdyn.reduced_dynamics.model_b import run as mb
from rdyn.verification.claims import fit_rule
from rdyn.verification.references import scaling
from rdyn.verification.checks.record import Check

SRC = "Wu-Zhang-Cao 2026 (seed 003)"
SPECTRUM = (3, 1, 1, 1)
D_, N_ = 4, 6


@lru_cache(maxsize=None)
def _run(model: str, eta: float, steps: int, target: str | None = None, L: int = 2) -> mb.Trajectory:
    return mb.run(mb.Config(model=model, target=target, data="spectrum", d=D_, n=N_, spectrum=SPECTRUM,
                            L=L, eta=eta, steps=steps))


def _f(xs) -> np.ndarray:
    return np.array([float(x) for x in xs])


# ------------------------------------------------------------------------------ full matrices
def _blocks(d: int, w12: float, v21: float) -> tuple[np.ndarray, np.ndarray]:
    W = np.zeros((2 * d, 2 * d))
    V = np.zeros((2 * d, 2 * d))
    W[:d, d:] = w12 * np.eye(d)
    V[d:, :d] = v21 * np.eye(d)
    return W, V


def _layer(E: np.ndarray, W: np.ndarray, V: np.ndarray, ln: bool) -> np.ndarray:
    out = E + V @ E @ E.T @ W @ E
    return out / np.linalg.norm(out, axis=0) if ln else out


def _test_points(seed: int = 31):
    """Fixed OOD test points (Assumption 4.4: unit columns only): X = R U with Haar R and U of
    multiplicities (4, 2, 1, 1) and (5, 3, 1, 1) (eigenvalues of XX^T = multiplicities), a
    uniform on the sphere."""
    rng = np.random.default_rng(seed)
    out = []
    for mult in ((4, 2, 1, 1), (5, 3, 1, 1), (3, 2, 2, 1)):
        d = len(mult)
        U = np.concatenate([np.tile(np.eye(d)[:, [i]], (1, m)) for i, m in enumerate(mult)], axis=1)
        Q, R = np.linalg.qr(rng.standard_normal((d, d)))
        a = rng.standard_normal(d)
        out.append(((Q * np.sign(np.diag(R))) @ U, a / np.linalg.norm(a)))
    return out


def _loop_factor(X: np.ndarray, a: np.ndarray, gamma: float, ln: bool, loops: int = 3000) -> dict:
    """Loop the layer W12 = sqrt(gamma) I, V21 = sqrt(gamma) I on (X, a) with full matrices; the
    measured per-loop factor is tan(phi_{L+1})/tan(phi_L) (phi = angle between the output and
    the top eigenspace), taken once it is stable to 1e-9 or tan(phi) falls below 1e-11 (the
    float64 floor of the angle is about 1e-16)."""
    d, n = X.shape
    S = X @ X.T
    lam, vec = np.linalg.eigh(S)
    lam, vec = lam[::-1], vec[:, ::-1]
    top = np.isclose(lam, lam[0], rtol=1e-10)
    W, V = _blocks(d, math.sqrt(gamma), math.sqrt(gamma))
    E = np.zeros((2 * d, n + 1))
    E[:d, :n] = X
    E[d:, n] = a
    tans, factor = [], math.nan
    for _ in range(loops):
        E = _layer(E, W, V, ln)
        if not ln:
            E[d:, n] /= np.linalg.norm(E[d:, n])  # rescaling the output keeps every angle (the map is linear)
        c = vec.T @ E[d:, n]
        tans.append(math.sqrt((c[~top] ** 2).sum()) / math.sqrt((c[top] ** 2).sum()))
        if len(tans) >= 3:
            new = tans[-1] / tans[-2]
            stable = abs(new - factor) <= 1e-9 * new
            factor = new
            if stable or tans[-1] < 1e-11:
                break
    lam1, lam_next = lam[0], lam[~top][0]
    R = (1 + gamma * lam_next) / (1 + gamma * lam1)
    return {"measured_factor": factor, "R": R, "power_method_ratio": lam_next / lam1, "loops": len(tans),
            "lambda_1": lam1, "lambda_r_plus_1": lam_next, "X_unchanged": bool(np.allclose(E[:d, :n], X))}


# ------------------------------------------------------------------------------ Theorem 4.1
def theorem_41_checks(quick: bool) -> list[Check]:
    steps = 300 if quick else 1000
    tr = _run("looped", 2.0, steps, L=2)
    loss = _f(tr.loss)
    rule = mb.exact_rule(SPECTRUM)
    limit = float(mb.looped_two_level(rule, 1e30, 2)[0])  # rho -> infinity: the L-step power method
    ok = limit > 0 and bool(np.all(np.diff(loss) < 0)) and bool(np.all(loss > limit)) and \
        (loss[-1] - limit) < 0.5 * (loss[steps // 4] - limit)
    positive = Check("B.claim.thm41.positive_limit", f"{SRC}, Theorem 4.1 (2)",
                     f"looped LN model (L=2): L_L(theta_t) decreases to L_L^(inf) > 0; measured L_L^(inf) "
                     f"= {limit:.6g} (power-method limit), loss at t={steps}: {loss[-1]:.6g}",
                     "pass" if ok else "discrepancy", None, None,
                     {"L_inf": limit, "loss_first": float(loss[0]), "loss_last": float(loss[-1]),
                      "monotone": bool(np.all(np.diff(loss) < 0)), "eta": 2.0, "spectrum": list(SPECTRUM)})
    # a_1 = (I + rho S) a / ||(I + rho S) a|| from one full-matrix LN layer; X unchanged
    worst = 0.0
    for X, a in _test_points():
        d, n = X.shape
        for w, v in ((0.7, 1.3), (2.0, 5.0)):
            W, V = _blocks(d, w, v)
            E = np.zeros((2 * d, n + 1))
            E[:d, :n], E[d:, n] = X, a
            E1 = _layer(E, W, V, ln=True)
            rho = w * v
            a1 = (a + rho * X @ X.T @ a)
            a1 /= np.linalg.norm(a1)
            worst = max(worst, float(np.max(np.abs(E1[d:, n] - a1))), float(np.max(np.abs(E1[:d, :n] - X))),
                        float(np.max(np.abs(E1[:d, n]))), float(np.max(np.abs(E1[d:, :n]))))
    a1 = Check("B.claim.thm41.a1", f"{SRC}, Theorem 4.1 (after (4.2))",
               "one LN layer with W12 = w I, V21 = v I maps E to [[X, 0], [0, a_1]] with "
               "a_1 = (I + rho XX^T) a/||(I + rho XX^T) a||, rho = w v (full matrices, 3 test points)",
               "pass" if worst < 1e-12 else "discrepancy", worst, None, {"max_abs_error": worst})
    return [positive, a1]


# ------------------------------------------------------------------------------ Theorem 4.2 / B.3
def _eta_max(target: str) -> float:
    tr = _run("noln", 0.5, 1, target)
    k2, gs = float(tr.constants.kappa2_exact), float(tr.gamma_star)
    S0 = 1.0
    return min(D_ / (8 * k2 * math.sqrt(S0**2 + 16 * gs**2)), D_ / (2 * k2 * S0), D_ / (2 * k2 * math.sqrt(2 * S0 * gs)))


def theorem_42_checks(quick: bool) -> list[Check]:
    out = []
    rows = {}
    ok = True
    for target in ("normalized", "unnormalized"):
        for eta in (0.5, _eta_max(target)):
            tr = _run("noln", eta, 400, target)
            g, S = _f(tr.gamma), _f(tr.alpha) ** 2 + _f(tr.beta) ** 2
            gs = float(tr.gamma_star)
            err = np.abs(g - gs)
            sel = np.nonzero((err > 1e-11) & (err < 1e-6))[0]  # linear regime, above rounding
            sel = sel[sel + 1 < len(g)]
            if len(sel) < 2:
                ok = False
                rows[f"{target} eta={eta:.4g}"] = {"error": "too few points in the linear regime"}
                continue
            measured = err[sel + 1] / err[sel]
            predicted = np.abs(1 - 2 * eta * float(tr.constants.kappa2_exact) * S[sel] / D_)
            dev = float(np.max(np.abs(measured - predicted) / predicted))
            rows[f"{target} eta={eta:.4g}"] = {"measured_factor": float(measured[-1]), "predicted_factor": float(predicted[-1]),
                                               "max_rel_dev": dev, "steps_used": [int(sel[0]), int(sel[-1])]}
            ok &= dev < 1e-3 and float(np.max(measured)) < 1
    out.append(Check("B.claim.thm42.linear_rate", f"{SRC}, Theorem 4.2",
                     "no-LN layer: gamma_t -> gamma* linearly; measured |gamma_{t+1}-gamma*|/|gamma_t-gamma*| equals the "
                     "derived factor |1 - 2 eta kappa2 S_t/d| < 1 (both targets, eta = 0.5 and eta_max)",
                     "pass" if ok else "discrepancy", None, None, {"per_run": rows}))
    # Theorem B.3 Part 1: L(g_{t+1}) - L(g_t) <= -(1/2) eta d S_t F_t^2; Part 2: S_t >= S_0
    worst, where, worst_s = -math.inf, None, -math.inf
    outside = {}
    for target in ("normalized", "unnormalized"):
        for eta, inside in ((_eta_max(target), True), (1.5, False)):
            tr = _run("noln", eta, 400, target)
            L, F = _f(tr.loss), _f(tr.F)
            S = _f(tr.alpha) ** 2 + _f(tr.beta) ** 2
            diff = np.diff(L)
            need = 0.5 * eta * D_ * S[:-1] * F[:-1] ** 2
            sel = need > 1e-14
            ratio = np.where(diff[sel] < 0, need[sel] / np.maximum(-diff[sel], 1e-300), np.inf)
            r = float(np.max(ratio)) if ratio.size else -math.inf
            if inside:
                if r > worst:
                    worst, where = r, {"target": target, "eta": eta, "t": int(np.nonzero(sel)[0][np.argmax(ratio)])}
                worst_s = max(worst_s, float(np.max(S[0] / S)))
            else:  # context: outside eta_max the loss may rise, where no ratio exists (would be inf)
                rising = np.nonzero(diff >= 0)[0]
                falling = ratio[np.isfinite(ratio)]
                outside[f"{target} eta={eta}"] = {
                    "steps_loss_not_decreasing": int(rising.size),
                    "first_step_loss_not_decreasing": int(rising[0]) if rising.size else None,
                    "worst_ratio_where_decreasing": float(np.max(falling)) if falling.size else None}
    out.append(Check("B.claim.B3.descent", f"{SRC}, Theorem B.3 (Part 1 / Part 3)",
                     f"L(gamma_(t+1)) - L(gamma_t) <= -(1/2) eta d S_t F_t^2 for eta <= eta_max (derived), "
                     f"both targets; worst ratio (needed decrease / actual) = {worst:.4g}",
                     "pass" if worst <= 1 + 1e-9 else "discrepancy", None, None,
                     {"worst_ratio": worst, "where": where, "outside_eta_max": outside,
                      "printed": "L(g_{t+1}) - L(g_t) <= -(1/2) eta d S_t F(g_t)^2"}))
    out.append(Check("B.claim.B3.S_lower", f"{SRC}, Theorem B.3 (Part 2)",
                     f"S_t = alpha_t^2 + beta_t^2 stays bounded below by S_0 = beta_0^2 for eta <= eta_max; "
                     f"worst S_0/S_t = {worst_s:.6g}",
                     "pass" if worst_s <= 1 + 1e-12 else "discrepancy", None, None,
                     {"worst_S0_over_S": worst_s,
                      "note": "the printed value of the uniform lower bound is not in the extraction; "
                              "S_0 (the bound the first-step analysis gives) is checked"}))
    out.append(upsilon2_check())
    out.append(b3_part1_prove_check())
    return out


def b3_part1_prove_check() -> Check:
    """Theorem B.3 Part 1 (the descent lemma, for 0 < eta <= eta_max) at the printed and at the corrected
    eta_max, decided by ``rdyn prove --paper B`` (:func:`rdyn.verification.proofs.model_b.b3.prove_b3`:
    branch and bound over S0 with ball arithmetic, every step certified) at its default instance (Task 1,
    d = 16, n = 32, unnormalized target, every S0 = beta_0^2 in [0.25, 16], alpha_0 = 0, eta = eta_max).
    ``discrepancy`` when the printed form is refuted (its certified counterexample in the detail) and the
    corrected one certified; ``pass`` when both are certified; ``fail`` when the corrected form is not
    certified (the prover and the proved correction disagree); ``info`` (undecided) otherwise."""
    import flint

    from rdyn.verification.proofs.model_b.b3 import prove_b3
    from rdyn.verification.proofs.model_b.instance import PREC_BITS, BInstance, noln_constants

    inst = BInstance()
    with flint.ctx.workprec(PREC_BITS):
        rows = {s["form"]: s for s in prove_b3(noln_constants(inst), inst.s0) if s["quantity"] == "descent_lemma"}
    printed, corrected = rows["printed"], rows["corrected"]
    if corrected["verdict"] != "certified":
        status = "fail"
    elif printed["verdict"] == "refuted":
        status = "discrepancy"
    else:
        status = "pass" if printed["verdict"] == "certified" else "info"
    cex = printed["counterexample"] or {}
    where = (f"refuted at S0 = {float(cex['S0']):.10g}, step {cex['step']}, eta = {float(cex['eta']):.6g}: "
             f"L(gamma_(t+1)) - L(gamma_t) = {float(cex['lhs']):.6g} > -(1/2) eta d S_t F_t^2 = {float(cex['rhs']):.6g} "
             f"(ratio {float(cex['ratio']):.10g})") if cex else printed["verdict"]
    detail = {"instance": {"paper": "B", **inst.to_dict()}, "printed_form": printed, "corrected_form": corrected,
              "printed": "L(g_{t+1}) - L(g_t) <= -(1/2) eta d S_t F(g_t)^2 for 0 < eta <= eta_max (printed: "
                         "d/(8 kappa2 sqrt(1 + 16 gamma*^2)) as its first term)",
              "derived": "the same for 0 < eta <= d/(8 kappa2 sqrt(S0^2 + 16 gamma*^2)) (B3_descent)",
              "by": "rdyn prove --paper B (docs/proofs.md, Model B)"}
    if status == "info":
        detail["undecided"] = {"verdict": "inconclusive", "reason": printed["reason"] or "undecided by rdyn prove"}
    return Check("B.claim.B3.part1_prove", f"{SRC}, Theorem B.3 (Part 1)",
                 "Part 1, L(gamma_(t+1)) - L(gamma_t) <= -(1/2) eta d S_t F_t^2 for eta <= eta_max, by rdyn prove --paper B "
                 f"(Task 1, d = 16, n = 32, unnormalized, every S0 in [{inst.s0[0]:g}, {inst.s0[1]:g}], eta = eta_max): "
                 f"printed eta_max: {where}; corrected eta_max: {corrected['verdict']}",
                 status, None, None, detail)


def upsilon2_check() -> Check:
    """Theorem B.3 Part 3's step size has Upsilon_2, which the paper never defines (it defines
    Upsilon(n,d) = E[1/lambda_d], Upsilon_1 and Upsilon_3). Part 1's descent expansion has
    L'' = 2 kappa2, so the bound needs kappa2 = E||S a||^2: on the Task 2 spectrum (3, 1, 1, 1)
    kappa2 = sum m_i^2/d = 3 exactly, while Upsilon = 1/min m_i = 1, Upsilon_1 and Upsilon_3 (the
    constants of the looped and LN runs) differ: no defined symbol can stand for kappa2."""
    ln = _run("ln", 2.0, 50)
    looped = _run("looped", 0.1, 50)
    kappa2 = Fraction(sum(m * m for m in SPECTRUM), len(SPECTRUM))
    defined = {"Upsilon(n,d)": 1 / min(SPECTRUM), "Upsilon_1": float(looped.upsilon1),
               "Upsilon_3": float(ln.constants.upsilon3)}
    same = {k: v for k, v in defined.items() if abs(v - float(kappa2)) <= 1e-9 * float(kappa2)}
    exact_ok = ln.constants.kappa2_exact == kappa2
    status = "fail" if not exact_ok else ("pass" if same else "discrepancy")
    return Check("B.claim.B3.upsilon2", f"{SRC}, Theorem B.3 (Part 3)",
                 f"the step size of Part 3 uses Upsilon_2: undefined in the paper; the descent expansion (L'' = "
                 f"2 kappa2) needs kappa2 = {kappa2} (spectrum {SPECTRUM}), and none of the defined "
                 + ", ".join(f"{k} = {v:.4g}" for k, v in defined.items()) + " equals it",
                 status, None, None,
                 {"printed": "d/(8 Upsilon_2 sqrt(1 + 16 gamma*^2))", "derived": "d/(8 kappa2 sqrt(S0^2 + 16 gamma*^2))",
                  "kappa2": str(kappa2), "defined_symbols": defined, "equal_to_kappa2": sorted(same),
                  "note": "notation: Upsilon_2 appears once (Part 3) and is defined nowhere in the extraction"})


# ------------------------------------------------------------------------------ Theorem 4.3
def theorem_43_checks(quick: bool) -> list[Check]:
    steps = 8000 if quick else 20000
    eta = 2.0
    tr = _run("ln", eta, steps)
    g, loss = _f(tr.gamma), _f(tr.loss)
    u3 = float(tr.constants.upsilon3)
    out = []
    # loss <= c / gamma^2 with c -> Upsilon_3 (derived: 1 - cos(phi) ~ sin^2/2)
    rule = mb.exact_rule(SPECTRUM)
    lim = {}
    for G in (1e2, 1e3, 1e4):
        lim[G] = float(rule.mean(mb.ln_terms(rule, G)[0])) * G * G
    rel = abs(lim[1e4] - u3) / u3
    c_traj = float(np.max(g[1:] ** 2 * loss[1:]))
    out.append(Check("B.claim.thm43.loss_gamma2", f"{SRC}, Theorem 4.3 / C.3 (Step 2)",
                     f"loss <= c/gamma_t^2: gamma^2 L(gamma) -> Upsilon_3 = {u3:.6g} (derived constant); "
                     f"measured {lim[1e4]:.6g} at gamma = 1e4, sup over the trajectory {c_traj:.4g}",
                     "pass" if rel < 1e-3 and math.isfinite(c_traj) else "discrepancy", rel, None,
                     {"gamma2_loss": {str(k): v for k, v in lim.items()}, "upsilon3": u3, "sup_gamma2_loss_on_trajectory": c_traj}))
    # T*(eps): first t with loss <= eps; exponent of eps (claimed -3/2)
    lo, hi = loss[steps // 8], loss[-1]
    eps = np.geomspace(lo, hi * 1.0001, 6)
    Ts = [int(np.argmax(loss <= e)) for e in eps]
    local = scaling.local_exponent(list(eps), Ts)
    # the rule reads x towards the asymptotic end: x = 1/eps (eps -> 0), exponent +3/2
    decision = fit_rule.decide(1.5, [1 / e for e in eps], Ts)
    predicted = [D_ * math.sqrt(u3) / (12 * eta * e**1.5) for e in eps]
    out.append(Check("B.claim.thm43.Tstar", f"{SRC}, Theorem 4.3 (2)",
                     f"T*(eps) = O(d^(3/2) Upsilon^(1/2)/(eta n^(1/2) eps^(3/2))): exponent of 1/eps is 3/2; "
                     f"{fit_rule.text(decision)} (x = 1/eps), local {-local:.3f}",
                     fit_rule.VERIFY_STATUS[decision.verdict], abs(decision.exponent - 1.5) / 1.5, None,
                     {"eps": [float(e) for e in eps], "T_star": Ts, "fit_decision": decision.as_dict(),
                      "derived_leading_order": predicted,
                      "derived_form": "T*(eps) ~ d Upsilon_3^(1/2)/(12 eta eps^(3/2))",
                      "note": "only the eps-exponent is tested; the d, n dependence is not"}))
    # constants: gamma_t >= C2 t^(1/3) with C2 = (2 eta C1)^(1/3), C1 = 2 Upsilon_3/d; C1 <= (2/d) E[1/||Sa||^2]
    C1 = 2 * u3 / D_
    C2 = (2 * eta * C1) ** (1 / 3)
    t = np.arange(len(g))
    ratio = C2 * t[1:] ** (1 / 3) / g[1:]
    late = ratio[steps // 8:]
    bad = np.nonzero(ratio > 1)[0]
    holds_from = int(bad[-1] + 2) if len(bad) else 1
    inv_m2 = float(rule.mean(1 / rule.m2))
    ok = float(late.max()) <= 1 and C1 <= 2 * inv_m2 / D_
    out.append(Check("B.claim.thm43.constants", f"{SRC}, Theorem 4.3 / C.2.2, C.3 (Step 3)",
                     f"gamma_t >= C2 t^(1/3) with C2 = (2 eta C1)^(1/3), C1 = 2 Upsilon_3/d for t >= {steps // 8} "
                     f"(worst C2 t^(1/3)/gamma_t = {float(late.max()):.4g}; holds from t = {holds_from}); "
                     f"C1 <= (1/d) E[2/||Sa||^2] ({C1:.4g} <= {2 * inv_m2 / D_:.4g})",
                     "pass" if ok else "discrepancy", None, None,
                     {"C1": C1, "C2": C2, "worst_ratio_late": float(late.max()),
                      "worst_ratio_all_t": float(ratio.max()), "holds_from_t": holds_from,
                      "E_inv_Sa2": inv_m2, "upsilon_n_d": 1.0,
                      "C_d_lower_bound": inv_m2 / (D_ / N_ * 1.0),
                      "note": "C_d of E[1/||Sa||^2] <= C_d (d/n) Upsilon(n,d) is not printed; its smallest "
                              "admissible value here is C_d_lower_bound"}))
    # Lemma C.2.2: (alpha^2+beta^2)/(2 gamma) -> 1, alpha/beta -> 1
    a, b = _f(tr.alpha), _f(tr.beta)
    pts = np.unique((steps / 2 ** np.arange(6, -1, -1)).astype(int))
    r1 = np.abs((a[pts] ** 2 + b[pts] ** 2) / (2 * g[pts]) - 1)
    r2 = np.abs(a[pts] / b[pts] - 1)
    f1, f2 = scaling.fit_power_law(pts, r1), scaling.fit_power_law(pts, r2)
    # the limits: |alpha^2 - beta^2| never grows (C.2.1 Step 1) while gamma -> oo, so
    # (alpha^2+beta^2)/(2 gamma) = sqrt(1 + (alpha^2-beta^2)^2/(4 gamma^2)) -> 1 and alpha/beta -> 1;
    # decided by the monotone decrease of both distances (the decay rates are context)
    ok = bool(np.all(np.diff(r1) < 0)) and bool(np.all(np.diff(r2) < 0))
    out.append(Check("B.claim.C22.ratios", f"{SRC}, Lemma C.2.2 (Key Results 2)",
                     f"(alpha^2+beta^2)/(2 gamma) -> 1 and alpha/beta -> 1: distances {r1[-1]:.3g}, {r2[-1]:.3g} at "
                     f"t={steps}, decreasing at every recorded t: {ok} (context: decaying like "
                     f"t^{f1.exponents[0]:.3f}, t^{f2.exponents[0]:.3f})",
                     "pass" if ok else "discrepancy", None, None,
                     {"t": pts.tolist(), "ratio_sum_minus_1": r1.tolist(), "alpha_over_beta_minus_1": r2.tolist(),
                      "context_decay_exponents": {"role": "context", "exponents": [f1.exponents[0], f2.exponents[0]],
                                                  "ci95": [list(f1.exponent_ci[0]), list(f2.exponent_ci[0])]}}))
    return out


# ------------------------------------------------------------------------------ Theorem 4.6
def theorem_46_checks(quick: bool) -> list[Check]:
    out = []
    # unnormalised (no-LN) layer: R* = (1 + g* l2)/(1 + g* l1) > l2/l1 for every g* >= 0, l1 > l2 >= 0
    g_, l1, l2 = sp.symbols("gamma lambda1 lambda2", nonnegative=True)
    diff = sp.factor(sp.simplify((1 + g_ * l2) / (1 + g_ * l1) - l2 / l1))
    symbolic = sp.simplify(diff.subs(l1, l2 + sp.Symbol("u", positive=True))).is_positive
    rows, ok = {}, bool(symbolic)
    for target in ("normalized", "unnormalized"):
        gs = float(_run("noln", 0.5, 400, target).gamma_star)
        for k, (X, a) in enumerate(_test_points()):
            m = _loop_factor(X, a, gs, ln=False)
            rel = abs(m["measured_factor"] - m["R"]) / m["R"]
            rows[f"{target} point {k}"] = {**m, "gamma_star": gs, "rel_dev": rel}
            ok &= rel < 1e-3 and m["measured_factor"] > m["power_method_ratio"] and m["X_unchanged"]
    out.append(Check("B.claim.thm46.noln", f"{SRC}, Theorem 4.6 (2)",
                     "no-LN layer at gamma*: looping the full-matrix layer on test points contracts the angle to the "
                     "top eigenspace by R* = (1+gamma* l_{r+1})/(1+gamma* l_1) per loop, and R* > l_{r+1}/l_1",
                     "pass" if ok else "discrepancy", None, None,
                     {"R_minus_ratio": str(diff), "symbolic_positive": bool(symbolic), "per_point": rows}))
    # LN layer trained t steps: per-loop factor R_t, decreasing in t towards l_{r+1}/l_1
    steps = 2000 if quick else 20000
    tr = _run("ln", 2.0, steps)
    g = _f(tr.gamma)
    rows, ok = {}, True
    for k, (X, a) in enumerate(_test_points()):
        ms = [_loop_factor(X, a, g[t], ln=True) for t in (steps // 16, steps)]
        rel = max(abs(m["measured_factor"] - m["R"]) / m["R"] for m in ms)
        rows[f"point {k}"] = {"R_early": ms[0]["R"], "R_final": ms[1]["R"], "measured_final": ms[1]["measured_factor"],
                              "power_method_ratio": ms[1]["power_method_ratio"], "rel_dev": rel}
        ok &= rel < 1e-3 and ms[0]["R"] > ms[1]["R"] > ms[1]["power_method_ratio"] and ms[1]["X_unchanged"]
    out.append(Check("B.claim.thm46.ln", f"{SRC}, Theorem 4.6 (1)",
                     f"LN layer trained t steps (eta=2, t={steps // 16} and {steps}): looping it on test points contracts "
                     "by R_t = (1+gamma_t l_{r+1})/(1+gamma_t l_1) per loop, R_t decreasing towards l_{r+1}/l_1",
                     "pass" if ok else "discrepancy", None, None, {"per_point": rows, "gamma_final": float(g[-1])}))
    return out


# ------------------------------------------------------------------------------ Assumption 3.2 / Example 3.3
def assumption_checks(quick: bool) -> list[Check]:
    rng = np.random.default_rng(2026)
    samples = 2000 if quick else 20000
    d = len(SPECTRUM)
    U = np.concatenate([np.tile(np.eye(d)[:, [i]], (1, m)) for i, m in enumerate(SPECTRUM)], axis=1)
    lam_min_U = float(np.linalg.eigvalsh(U @ U.T).min())
    worst_norm, worst_lam = 0.0, 0.0
    first_entry2 = []
    P = np.linalg.qr(np.random.default_rng(7).standard_normal((d, d)))[0]
    rotated_entry2 = []
    for _ in range(samples):
        Q, R = np.linalg.qr(rng.standard_normal((d, d)))
        Q = Q * np.sign(np.diag(R))  # Haar
        X = Q @ U
        worst_norm = max(worst_norm, float(np.max(np.abs(np.linalg.norm(X, axis=0) - 1))))
        worst_lam = max(worst_lam, abs(float(np.linalg.eigvalsh(X @ X.T).min()) - lam_min_U))
        first_entry2.append(X[0, 0] ** 2)
        rotated_entry2.append((P @ X)[1, 2] ** 2)
    # (A2): the statistics of X and P X agree (entry^2 has mean 1/d under rotation invariance)
    z = max(abs(np.mean(v) - 1 / d) / (np.std(v, ddof=1) / math.sqrt(samples)) for v in (first_entry2, rotated_entry2))
    ok = worst_norm < 1e-12 and worst_lam < 1e-10 and z < 5
    example = Check("B.claim.example33", f"{SRC}, Example 3.3",
                    f"X = R U (Haar R, U of spectrum {SPECTRUM}) has unit columns, lambda_d(XX^T) = lambda_min(UU^T) "
                    f"= {lam_min_U:g} for every draw, so E[lambda_d^-1] <= lambda_min(UU^T)^-1; rotation invariance "
                    f"(mean of squared entries = 1/d, |z| = {z:.2f})",
                    "pass" if ok else "discrepancy", None, None,
                    {"max_column_norm_error": worst_norm, "max_lambda_d_error": worst_lam, "max_z": float(z),
                     "samples": samples})
    # Task 1 (sphere, d=16, n=32): Upsilon(n, d) = E[1/lambda_d] finite (Monte Carlo with SE)
    inv = []
    for _ in range(samples // 4):
        X = rng.standard_normal((16, 32))
        X /= np.linalg.norm(X, axis=0)
        inv.append(1 / float(np.linalg.eigvalsh(X @ X.T).min()))
    inv = np.array(inv)
    se = float(inv.std(ddof=1) / math.sqrt(inv.size))
    ok = bool(np.isfinite(inv).all()) and se < 0.1 * inv.mean()
    task1 = Check("B.claim.assumption32", f"{SRC}, Assumption 3.2",
                  f"Task 1 data (d=16, n=32) satisfy (A1) unit columns, (A2) rotation invariance by construction, "
                  f"(A3) Upsilon(n,d) = E[1/lambda_d] = {inv.mean():.4g} +- {se:.2g} (Monte Carlo, finite)",
                  "pass" if ok else "discrepancy", None, None,
                  {"upsilon_mean": float(inv.mean()), "std_error": se, "max_sample": float(inv.max()),
                   "samples": int(inv.size)})
    return [example, task1]


@lru_cache(maxsize=None)
def theorem_43_paper_size_checks(steps: int = 6000) -> list[Check]:
    """Theorem 4.3 at the paper's size d = 16, n = 32 (the Task 2 spectrum, r = 5) with
    exact expectations (Gaussian route): T*(eps) against the derived leading order
    d Upsilon_3^(1/2)/(12 eta eps^(3/2)), the eps-exponent, and the Section 5 growth rate
    gamma^3 increment -> 12 eta Upsilon_3/d. Info: one configuration cannot test an O(.) in d, n;
    the detail carries the paper's d^(3/2) n^(-1/2) form next to the derived d form."""
    spec = (5, 4, 3, 3, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1)
    d, n, eta = 16, 32, 2.0
    tr = mb.run(mb.Config(model="ln", data="spectrum", d=d, n=n, spectrum=spec, eta=eta, steps=steps))
    g, loss = _f(tr.gamma), _f(tr.loss)
    u3 = float(tr.constants.upsilon3)
    eps = np.geomspace(loss[steps // 8], loss[-1] * 1.0001, 6)
    Ts = [int(np.argmax(loss <= e)) for e in eps]
    fit = scaling.fit_power_law(eps, Ts)
    derived = [d * math.sqrt(u3) / (12 * eta * e ** 1.5) for e in eps]
    ratios = [T / p for T, p in zip(Ts, derived)]
    incr = float(g[-1] ** 3 - g[-2] ** 3)
    return [Check("B.claim.thm43.Tstar_d16_n32", f"{SRC}, Theorem 4.3 (2), Section 5",
                  f"d = 16, n = 32, exact expectations, eta = {eta}, {steps} steps: T*(eps) / (d Upsilon_3^(1/2)/"
                  f"(12 eta eps^(3/2))) = {ratios[0]:.3f} .. {ratios[-1]:.3f} (-> 1 as eps -> 0); context fit "
                  f"(does not decide): eps-exponent {fit.exponents[0]:.3f} [{fit.exponent_ci[0][0]:.3f}, "
                  f"{fit.exponent_ci[0][1]:.3f}] (claimed -3/2, approached from above); gamma^3 increment {incr:.4g} vs 12 eta Upsilon_3/d = {12 * eta * u3 / d:.4g}",
                  "info", None, None,
                  {"eps": [float(e) for e in eps], "T_star": Ts, "derived_leading_order": derived,
                   "ratio_to_derived": ratios, "upsilon3": u3, "gamma_exponent_second_half":
                   mb.fitted_exponent(tr.gamma, steps // 2),
                   "paper_form": "O(d^(3/2) Upsilon^(1/2)/(eta n^(1/2) eps^(3/2)))",
                   "derived_form": "d Upsilon_3^(1/2)/(12 eta eps^(3/2))",
                   "paper_over_derived_scale_d16_n32": d ** 1.5 / n ** 0.5 / d})]


def checks(quick: bool = False) -> tuple[Check, ...]:
    out: list[Check] = []
    out += theorem_41_checks(quick)
    out += theorem_42_checks(quick)
    out += theorem_43_checks(quick)
    if not quick:   # about 3 min on a loaded machine
        out += theorem_43_paper_size_checks()
    out += theorem_46_checks(quick)
    out += assumption_checks(quick)
    return tuple(out)
