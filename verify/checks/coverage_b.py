"""Model B statements of Appendices B.2 and C.3 that had no ledger entry (
ids ``B.cover.*``). Every check builds explicit vectors ``a`` and matrices ``S = X X^T``
(Task 1: iid uniform unit columns of X in R^d, a uniform on the sphere; d = 16, n = 32 as in
Section 5) and evaluates the printed statement on them, independently of the spectral rules of
:mod:`rdyn.reduced_dynamics.model_b.run`.

* ``B.cover.quadratic_loss.<target>``: B.2.3's ``L(gamma) = L(gamma*) + kappa2 (gamma - gamma*)^2``
  with the model output ``a + gamma S a`` and target ``S a/||S a||`` (normalized) or ``S a``
  (unnormalized), the kappas and ``gamma*`` of B.2.1/B.2.2 measured on the same sample (the
  identity is algebraic, so it holds on any sample to rounding);
* ``B.cover.degenerate_kappa``: B.2.2, ``kappa2 = kappa1`` for X with orthonormal columns
  (n <= d), then ``gamma2* = 0``, ``F(gamma_0 = 0) = 0`` and gradient descent from
  ``gamma_0 = 0`` stays at 0; with the sphere data of Task 1, ``kappa2 > kappa1`` and gamma moves;
* ``B.cover.cos_phi``: C.3's ``cos(phi_t) = (a^T S a + gamma ||S a||^2)/(||a + gamma S a|| ||S a||) >= 0``
  for gamma >= 0, against the cosine of the explicit vectors;
* ``B.cover.cauchy_schwarz``: B.2.1's ``(E[||S a|| - a^T S a])^2/E[||S a||^2] <=
  E[(||S a|| - a^T S a)^2/||S a||^2]`` and the irreducible loss ``E[1 - (a^T S a)^2/||S a||^2] > 0``;
* ``B.cover.growth_d16_n32.<model>``: the printed experiment rates of Section 5
  (looped, L = 10: ``w_t, v_t = Theta(t^(1/4))``, Theorem 4.1) and Appendix G.1 (LN layer:
  ``alpha_t, beta_t = Theta(t^(1/6))``, Theorem 4.3) on Task 1, d = 16, n = 32, decided by the
  derivation, not by a fit: the measured increment ``rho_{t+1}^p - rho_t^p`` (looped: ``rho = w v``,
  ``p = 2``; LN: ``gamma = alpha beta``, ``p = 3``) from a large start equals the derived limit
  ``c eta Upsilon/d`` (looped: ``4 eta Upsilon_1/d``, A.5; LN: ``12 eta Upsilon_3/d``, C.2.2) on the
  same Monte Carlo sample, so ``rho_t ~ (c eta Upsilon t/d)^(1/p)``; and ``|w^2 - v^2|`` (resp.
  ``|alpha^2 - beta^2|``) never grows (C.2.1 Step 1: it is multiplied by ``1 - eta^2 F_t^2`` each
  step), so ``w/v -> 1`` and each factor grows like ``rho^(1/2) = t^(1/(2p))``;
* ``B.cover.growth_fit_d16_n32.<model>`` (``--full`` only, context): the log-log fit of the
  printed weight over the paper's 2000 steps from ``(0, 1)``, by :func:`rdyn.verification.claims.fit_rule.decide`
  (info: finite-range evidence only);
* ``B.cover.thm43_Tstar_dn``: Theorem 4.3's ``T*(eps)`` across three (d, n,
  Upsilon) of Task 2 (exact expectations), against the derived leading order
  ``d Upsilon_3^(1/2)/(12 eta eps^(3/2))`` (from ``L ~ Upsilon_3/gamma^2``, C.3, and
  ``gamma^3 ~ 12 eta Upsilon_3 t/d``, C.2.2): the ratio must decrease towards 1 from above as eps
  falls, at every configuration (``info``; ``fail`` if not). The printed
  ``O(d^(3/2) Upsilon(n,d)^(1/2)/(eta n^(1/2) eps^(3/2)))`` (``Upsilon(n,d) = E[1/lambda_d] = 1/min m_i``
  for Task 2) is an upper bound uniform in d, n: the detail carries the limit of
  ``T*/(printed form)``, ``(Upsilon_3 n/(d Upsilon))^(1/2)/12``, per configuration, and ``undecided``
  (what would decide the O(); the ledger counts it ``inconclusive``).
* ``B.cover.g1_loss_gap``, ``B.cover.sec5_comparison_sgd``, ``B.cover.g2_fixed_points_sgd`` (issue
  30, item 2): Appendix G.1's Figure 3, Section 5's comparison figure and Appendix G.2's Figures
  6-7, decided by the experiments as the paper ran them (full matrices trained by SGD:
  :mod:`rdyn.verification.references.sgd_b`; G.1: quick 300 steps, ``--full`` 2000; Section 5 and
  G.2: the paper's 2000 steps in both, G.2 with both loss normalisations) with z-tests at
  :data:`Z_MAX` standard errors; the derivations are context.
"""
from __future__ import annotations

import numpy as np

from rdyn.verification.checks.record import Check

PAPER = "Model B (seed 003)"
D_DIM, N_TOKENS, SAMPLES = 16, 32, 20000


def task1_sample(d: int = D_DIM, n: int = N_TOKENS, samples: int = SAMPLES, seed: int = 19):
    """(a, Sa) for ``samples`` draws of Task 1 (one fixed seed)."""
    from rdyn.reduced_dynamics.model_b.sampling import sample_sphere_data

    rng = np.random.default_rng(seed)
    a_all, sa_all = [], []
    for X, a in sample_sphere_data(d, n, samples, rng):
        sa = np.einsum("mij,mkj,mk->mi", X, X, a)
        a_all.append(a)
        sa_all.append(sa)
    return np.concatenate(a_all), np.concatenate(sa_all)


def _kappas(a, sa):
    k1 = float(np.mean(np.einsum("mi,mi->m", a, sa)))
    k2 = float(np.mean(np.einsum("mi,mi->m", sa, sa)))
    k3 = float(np.mean(np.linalg.norm(sa, axis=1)))
    return k1, k2, k3


def quadratic_loss_checks() -> list[Check]:
    a, sa = task1_sample()
    k1, k2, k3 = _kappas(a, sa)
    norm = np.linalg.norm(sa, axis=1, keepdims=True)
    out = []
    for target, y, g_star in (("normalized", sa / norm, (k3 - k1) / k2), ("unnormalized", sa, 1 - k1 / k2)):
        loss = lambda g: float(np.mean(np.sum((a + g * sa - y) ** 2, axis=1)))  # noqa: E731
        gammas = np.linspace(-1.0, 2.0, 13)
        dev = max(abs(loss(g) - (loss(g_star) + k2 * (g - g_star) ** 2)) / loss(g) for g in gammas)
        out.append(Check(
            f"B.cover.quadratic_loss.{target}", f"{PAPER}, B.2.3 (loss landscape)",
            f"L(gamma) = L(gamma*) + kappa2 (gamma - gamma*)^2 ({target} target; explicit vectors, d={D_DIM}, "
            f"n={N_TOKENS}, {SAMPLES} samples, 13 gammas in [-1, 2]): max relative deviation {dev:.1e}",
            "pass" if dev < 1e-10 else "discrepancy", dev, None,
            {"measured": dev, "gamma_star": g_star, "kappa1": k1, "kappa2": k2, "kappa3": k3}))
    return out


def degenerate_kappa_check() -> Check:
    rng = np.random.default_rng(23)
    d, n, m = D_DIM, 8, 4000
    Q = np.linalg.qr(rng.standard_normal((m, d, n)))[0]  # orthonormal columns, n <= d
    a = rng.standard_normal((m, d))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    sa = np.einsum("mij,mkj,mk->mi", Q, Q, a)
    k1, k2, _ = _kappas(a, sa)
    g_star = 1 - k1 / k2
    gamma, eta = 0.0, 0.5
    for _ in range(200):  # GD on L2(gamma) = E||a + (gamma - 1) S a||^2 from gamma_0 = 0 (d/dgamma / d)
        grad = float(np.mean(2 * np.einsum("mi,mi->m", a + (gamma - 1) * sa, sa)))
        gamma -= eta * grad / d
    a1, sa1 = task1_sample(samples=4000)
    k1s, k2s, _ = _kappas(a1, sa1)
    gamma_s = 0.0
    for _ in range(200):
        grad = float(np.mean(2 * np.einsum("mi,mi->m", a1 + (gamma_s - 1) * sa1, sa1)))
        gamma_s -= eta * grad / d
    ok = abs(k2 - k1) / k1 < 1e-12 and abs(g_star) < 1e-12 and abs(gamma) < 1e-12 and k2s > k1s and gamma_s > 0.01
    return Check("B.cover.degenerate_kappa", f"{PAPER}, B.2.2 (kappa2 = kappa1)",
                 f"orthonormal columns (d={d}, n={n}): kappa2/kappa1 - 1 = {k2 / k1 - 1:.1e}, gamma2* = {g_star:.1e}, "
                 f"gamma after 200 GD steps from 0: {gamma:.1e}; sphere columns (n={N_TOKENS}): kappa2 - kappa1 = "
                 f"{k2s - k1s:.3g} > 0 and gamma -> {gamma_s:.3g}",
                 "pass" if ok else "discrepancy", None, None,
                 {"kappa1": k1, "kappa2": k2, "gamma_star": g_star, "gamma_after_200_steps": gamma,
                  "sphere_kappa1": k1s, "sphere_kappa2": k2s, "sphere_gamma_after_200_steps": gamma_s})


def cos_phi_check() -> Check:
    a, sa = task1_sample(samples=4000)
    worst, min_cos = 0.0, np.inf
    for g in (0.0, 0.1, 0.5, 1.0, 3.0, 10.0):
        y = a + g * sa
        direct = np.einsum("mi,mi->m", y, sa) / (np.linalg.norm(y, axis=1) * np.linalg.norm(sa, axis=1))
        printed = (np.einsum("mi,mi->m", a, sa) + g * np.einsum("mi,mi->m", sa, sa)) / (
            np.linalg.norm(y, axis=1) * np.linalg.norm(sa, axis=1))
        worst = max(worst, float(np.max(np.abs(direct - printed))))
        min_cos = min(min_cos, float(printed.min()))
    ok = worst < 1e-12 and min_cos >= 0
    return Check("B.cover.cos_phi", f"{PAPER}, C.3 Step 2 (cos phi_t)",
                 f"cos(phi_t) = (a^T S a + gamma ||Sa||^2)/(||a + gamma S a|| ||S a||) >= 0 for gamma in [0, 10] "
                 f"(4000 Task 1 samples): max |printed - direct| {worst:.1e}, min cos {min_cos:.3g}",
                 "pass" if ok else "discrepancy", worst, None, {"measured": worst, "min_cos_phi": min_cos})


def cauchy_schwarz_check() -> Check:
    a, sa = task1_sample()
    asa = np.einsum("mi,mi->m", a, sa)
    nrm = np.linalg.norm(sa, axis=1)
    lhs = float(np.mean(nrm - asa) ** 2 / np.mean(nrm**2))
    rhs = float(np.mean((nrm - asa) ** 2 / nrm**2))
    floor = float(np.mean(1 - asa**2 / nrm**2))
    ok = lhs <= rhs and floor > 0
    return Check("B.cover.cauchy_schwarz", f"{PAPER}, B.2.1 (Cauchy-Schwarz step)",
                 f"(E[||Sa|| - a^T S a])^2/E||Sa||^2 = {lhs:.4g} <= E[(||Sa|| - a^T S a)^2/||Sa||^2] = {rhs:.4g}; "
                 f"E[1 - (a^T S a)^2/||Sa||^2] = {floor:.4g} > 0 (d={D_DIM}, n={N_TOKENS}, {SAMPLES} samples)",
                 "pass" if ok else "discrepancy", None, None,
                 {"lhs": lhs, "rhs": rhs, "irreducible_lower_bound": floor})


#: per model: (printed weight, its exponent, as printed, power p of the derived increment, increment constant c,
#: paper location)
GROWTH_MODELS = {
    "looped": ("w", 0.25, "1/4", 2, 4, "Section 5 / Theorem 4.1 (L = 10)"),
    "ln": ("alpha", 1 / 6, "1/6", 3, 12, "Appendix G.1 / Theorem 4.3"),
}
GROWTH_ETA, GROWTH_LOOPS = 0.1, 10


def _task1_run(model: str, steps: int, start: float | None, samples: int):
    from rdyn.reduced_dynamics.model_b import run as mb

    alpha0, beta0 = (start, start) if start is not None else (0.0, 1.0)
    return mb.run(mb.Config(model=model, data="sphere", d=D_DIM, n=N_TOKENS, L=GROWTH_LOOPS, eta=GROWTH_ETA,
                            steps=steps, alpha0=alpha0, beta0=beta0, samples=samples,
                            expectation="monte_carlo", seed=19))


def growth_increment_check(model: str, samples: int = 20000) -> Check:
    """Derived decision of the printed experiment rate (see the module docstring)."""
    weight, exponent, printed, p, c, where = GROWTH_MODELS[model]
    far = _task1_run(model, 50, 30.0, samples)
    inc = float(far.gamma[-1] ** p - far.gamma[-2] ** p)
    upsilon = float(far.upsilon1 if model == "looped" else far.constants.upsilon3)
    pred = c * GROWTH_ETA * upsilon / D_DIM
    rel = abs(inc - pred) / pred
    paper = _task1_run(model, 200, None, samples // 4)
    gap = np.abs(np.array([float(a * a - b * b) for a, b in zip(paper.alpha, paper.beta)]))
    never_grows = bool(np.all(np.diff(gap) <= 1e-15))
    ok = rel < 5e-3 and upsilon > 0 and never_grows
    other, product = ("v", "rho") if model == "looped" else ("beta", "gamma")
    return Check(f"B.cover.growth_d16_n32.{model}", f"{PAPER}, {where}",
                 f"{weight}_t, {other}_t = Theta(t^({printed})) at d={D_DIM}, n={N_TOKENS} (Task 1, "
                 f"{samples} Monte Carlo samples, eta={GROWTH_ETA}): {product}^{p} increment at {product} ~ 900 = {inc:.5g} vs derived "
                 f"{c} eta Upsilon/d = {pred:.5g} (rel. {rel:.1e}); |{weight}^2 - {other}^2| non-increasing over 200 "
                 f"steps from (0, 1): {never_grows}",
                 "pass" if ok else "discrepancy", rel, None,
                 {"measured": inc, "predicted": pred, "upsilon": upsilon, "power": p, "claimed_exponent": exponent,
                  "weight_gap_start_end": [float(gap[0]), float(gap[-1])], "gap_never_grows": never_grows})


def growth_fit_check(model: str, steps: int = 2000, samples: int = 5000) -> Check:
    """Context only: the finite-range log-log fit the paper's figures show."""
    from rdyn.verification.claims import fit_rule

    weight, exponent, printed, _, _, where = GROWTH_MODELS[model]
    tr = _task1_run(model, steps, None, samples)
    ts = np.unique(np.geomspace(10, steps, 12).astype(int))
    ys = [float(tr.alpha[t]) for t in ts]
    decision = fit_rule.decide(exponent, [float(t) for t in ts], ys)
    return Check(f"B.cover.growth_fit_d16_n32.{model}", f"{PAPER}, {where}",
                 f"context: log-log fit of {weight}_t over t in [10, {steps}] from (0, 1) (paper's horizon): exponent "
                 f"{decision.exponent:.3f} [{decision.exponent_ci95[0]:.3f}, {decision.exponent_ci95[1]:.3f}] vs printed "
                 f"{printed}; fit rule: {decision.verdict} (finite-range evidence only; decided by the increment)",
                 "info", None, None, {"fit": decision.as_dict(), "x": [float(t) for t in ts], "y": ys,
                                      "x_name": "t", "y_name": weight, "claimed_exponent": exponent})


#: (d, n, Task 2 spectrum m_1..m_d): Upsilon(n, d) = 1, 1/2, 1/2
TSTAR_CONFIGS = ((4, 6, (3, 1, 1, 1)), (4, 12, (6, 2, 2, 2)), (8, 24, (10, 2, 2, 2, 2, 2, 2, 2)))
TSTAR_ETA = 2.0


def tstar_dn_check(steps: int = 20000) -> Check:
    """Theorem 4.3 (2): T*(eps) / (d Upsilon_3^(1/2)/(12 eta eps^(3/2))) across (d, n, Upsilon).
    ``info`` with ``undecided``: the derived leading order is confirmed (``fail`` if not), the
    printed O() in d, n, Upsilon is counted ``inconclusive`` by the ledger."""
    from rdyn.reduced_dynamics.model_b import run as mb
    from rdyn.verification.claims import fit_rule

    rows, ok = {}, True
    for d, n, spectrum in TSTAR_CONFIGS:
        tr = mb.run(mb.Config(model="ln", data="spectrum", d=d, n=n, spectrum=spectrum, eta=TSTAR_ETA, steps=steps))
        loss = np.array([float(x) for x in tr.loss])
        u3 = float(tr.constants.upsilon3)
        eps = np.geomspace(loss[steps // 20], loss[-1] * 1.0001, 5)
        t_star = [int(np.argmax(loss <= e)) for e in eps]
        ratios = [T / (d * u3**0.5 / (12 * TSTAR_ETA * e**1.5)) for T, e in zip(t_star, eps)]
        upsilon = 1 / min(spectrum)
        towards_one = all(1 < b < a for a, b in zip(ratios, ratios[1:])) and ratios[-1] < 1.08
        ok = ok and towards_one
        rows[f"d={d},n={n}"] = {"spectrum": list(spectrum), "upsilon3": u3, "upsilon_n_d": upsilon,
                                "eps": [float(e) for e in eps], "T_star": t_star, "ratio_to_derived": ratios,
                                "decreasing_to_1_from_above": towards_one,
                                "limit_T_star_over_printed_form": (u3 * n / (d * upsilon)) ** 0.5 / 12,
                                "x": [float(e) for e in eps], "y": [float(T) for T in t_star], "claimed_exponent": -1.5}
    summary = "; ".join(f"{k}: {r['ratio_to_derived'][0]:.3f} -> {r['ratio_to_derived'][-1]:.3f}" for k, r in rows.items())
    return Check("B.cover.thm43_Tstar_dn", f"{PAPER}, Theorem 4.3 (2) (d, n, Upsilon)",
                 f"T*(eps) / (d Upsilon_3^(1/2)/(12 eta eps^(3/2))) as eps falls (Task 2, exact, eta={TSTAR_ETA}, "
                 f"{steps} steps): {summary}; T*/(printed d^(3/2) Upsilon^(1/2)/(eta n^(1/2) eps^(3/2))) -> "
                 + ", ".join(f"{r['limit_T_star_over_printed_form']:.4f}" for r in rows.values())
                 + " at these three points; the printed dependence on d, n, Upsilon is undecided (see detail)",
                 "info" if ok else "fail", None, None,
                 {"per_config": rows, "derived_form": "T*(eps) ~ d Upsilon_3^(1/2)/(12 eta eps^(3/2))",
                  "paper_form": "O(d^(3/2) Upsilon(n,d)^(1/2)/(eta n^(1/2) eps^(3/2)))",
                  "undecided": fit_rule.undecided(
                      "the leading order d Upsilon_3^(1/2)/(12 eta eps^(3/2)) is derived and confirmed at three (d, n, "
                      "Upsilon), but the printed O(d^(3/2) Upsilon(n,d)^(1/2)/(eta n^(1/2) eps^(3/2))) is a bound "
                      "uniform in d, n and the data: it holds iff Upsilon_3 <= C d Upsilon(n,d)/n for one constant C "
                      "over every data distribution of Assumption 3.2 (the paper's C1 <= 2 C_d Upsilon(n,d)/n, C_d "
                      "not printed). Decided by a derivation of that inequality (or a family of admissible X with "
                      "Upsilon_3 n/(d Upsilon) unbounded), which rdyn does not have; finitely many points cannot "
                      "decide an O() in d, n")})


def loop_error_check(snapshots=(100, 300, 2000), loops: int = 25, samples: int = 2000,
                     seed: int = 23, model: str = "ln") -> Check:
    """Appendix G.1, Figure 5: the LN layer trained T steps (T in {100, 300, 2000}; Task 1,
    d = 16, n = 32) and looped L = 1..25 times on one fixed test point: the angular error
    decays exponentially in L ("a nearly linear trajectory" on semi-log axes), and snapshots
    trained longer come closer to the power method.

    Derivation (Theorem 4.6's loop, Theorem 4.1's a_1 form): one loop maps a to
    (I + gamma_T S) a/||.||, S = X X^T, a power iteration on I + gamma_T S. With a = sum c_i u_i
    and r_i = (1 + gamma_T l_i)/(1 + gamma_T l_1), tan(angle(a_L, u_1)) =
    sqrt(sum_{i>=2} c_i^2 r_i^(2L))/|c_1| <= tan(angle(a_0, u_1)) r_2^L: exponential decay with the
    derived factor r_2, which decreases towards the power method's l_2/l_1 as gamma_T grows.
    Decided on explicit vectors: the bound holds at every L for every snapshot; r_2 and the
    error at L = 25 decrease with T. "Nearly linear" is a visual statement: the R^2 of log error
    against L is reported (measured, not a criterion; the early loops carry the transient of
    the lower eigen-directions)."""
    tr = _task1_run(model, max(snapshots), None, samples)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((D_DIM, N_TOKENS))
    X /= np.linalg.norm(X, axis=0)
    S = X @ X.T
    lam, vec = np.linalg.eigh(S)
    l1, l2, u1 = lam[-1], lam[-2], vec[:, -1]
    a0 = rng.standard_normal(D_DIM)
    a0 /= np.linalg.norm(a0)
    c1 = abs(float(a0 @ u1))
    tan0 = float(np.sqrt(1 - c1 * c1) / c1)
    Ls = np.arange(1, loops + 1)
    rows = []
    for T in snapshots:
        g = float(tr.gamma[T])
        a, errors = a0.copy(), []
        for _ in Ls:
            a = a + g * (S @ a)
            a /= np.linalg.norm(a)
            errors.append(float(np.linalg.norm(a - float(a @ u1) * u1)))   # sin, no 1 - cos^2
        factor = float((1 + g * l2) / (1 + g * l1))
        bound = tan0 * factor ** Ls
        log_e = np.log(errors)
        r2 = float(np.corrcoef(Ls, log_e)[0, 1] ** 2)
        rows.append({"T": T, "gamma_T": g, "errors": errors, "derived_factor": factor,
                     "bound_holds": bool(np.all(np.array(errors) <= bound * (1 + 1e-12))),
                     "max_error_over_bound": float(np.max(np.array(errors) / bound)),
                     "semilog_r2": r2, "fitted_factor": float(np.exp(np.polyfit(Ls, log_e, 1)[0]))})
    factors = [r["derived_factor"] for r in rows]
    finals = [r["errors"][-1] for r in rows]
    closer = bool(all(b < a for a, b in zip(factors, factors[1:])) and factors[-1] > l2 / l1
                  and all(b < a for a, b in zip(finals, finals[1:])))
    linear = min(r["semilog_r2"] for r in rows)
    ok = all(r["bound_holds"] for r in rows) and closer
    cid, where, what = (("B.cover.fig5_loop_error", "Appendix G.1 (Figure 5)", "LN layer") if model == "ln" else
                        ("B.cover.g3_loop_error", "Appendix G.3 (looped, L = 10, evaluated at L = 1..25)",
                         f"looped model (L = {GROWTH_LOOPS}; per loop a -> (I + rho_T S) a/||.||, Theorem 4.1)"))
    return Check(cid, f"{PAPER}, {where}",
                 f"{what} trained T in {list(snapshots)} steps (Task 1, d={D_DIM}, n={N_TOKENS}, eta={GROWTH_ETA}), "
                 f"looped L = 1..{loops} on one test point: error <= tan(psi_0) r^L with the derived per-loop factor "
                 f"r = (1 + gamma_T l2)/(1 + gamma_T l1) = {', '.join(f'{f:.4f}' for f in factors)} at every L: "
                 f"{all(r['bound_holds'] for r in rows)}; r and the error at L = {loops} "
                 f"decrease with T towards the power method (l2/l1 = {l2 / l1:.4f}): {closer}; semi-log R^2 "
                 f"(measured) >= {linear:.3f}",
                 "pass" if ok else "discrepancy", None, None,
                 {"snapshots": rows, "power_method_factor": float(l2 / l1), "lambda_1": float(l1),
                  "lambda_2": float(l2), "tan_psi_0": tan0, "closer_to_power_method_with_T": closer,
                  "min_semilog_r2": linear})


#: Appendix G.1's loss-convergence grid (Figure 3)
GAP_CONFIGS = ((8, 16), (8, 32), (8, 64), (16, 16), (16, 32), (16, 64))
#: z beyond which a train/test gap (or a difference between two losses) counts as real: 4 standard errors,
#: two-sided p = 6.3e-5 per comparison, so below 1% over the at most ~100 comparisons of one check (Bonferroni)
Z_MAX = 4.0
#: steps of the SGD experiments: quick, and the paper's 2000 iterations (--full)
SGD_STEPS_QUICK, SGD_STEPS_FULL = 300, 2000

_PAPER_SGD = ("taken from the paper (Section 5, Experimental Setup): Task 1/Task 2 data, training set 10000, "
              "test set 2000, SGD with eta = 0.1 and batch 128, Theorem 4.1's initialisation (W12 = 0, V21 = I), "
              "full 2d x 2d matrices W, V; conventions: one step = one batch of a per-epoch permutation, batch "
              "loss = mean over the batch of ||y - y_target||^2 (B.2's E||.||^2), training loss = that loss over the "
              "whole training set, 2000 read as iterations (G.1 quick: 300), Task 2 multiplicities "
              "rdyn.verification.references.sgd_b.TASK2_SPECTRUM")


def loss_gap_check(steps: int = SGD_STEPS_QUICK, train: int = 10000, test: int = 2000, z_max: float = Z_MAX,
                   seed: int = 41) -> Check:
    """Appendix G.1 (Figure 3): the LN layer (4.5) on Task 1 with d in {8, 16}, n in {16, 32, 64},
    trained as the paper trained it (:mod:`rdyn.verification.references.sgd_b`: full matrices, SGD,
    eta = 0.1, batch 128, 10000 training and 2000 test points): "the losses decay consistently" and
    "no discernible gap between the training loss and the test loss".

    Decided by a z-test with standard errors: at every recorded step the gap
    ``(L_test - L_train)/sqrt(se_train^2 + se_test^2)`` (se: standard errors of the two sample means)
    is within ``z_max``, and the final training loss is below the initial one by more than
    ``z_max`` standard errors, in every configuration. Derivation (context): the layer's output
    depends on the data only through the one trained scalar gamma = alpha beta (Theorem 4.3's
    structure; off the identity only SGD noise), so the expected gap is the sampling difference of
    the two sets, O(N^(-1/2)), at any training length."""
    from rdyn.verification.references import sgd_b

    rows, ok = [], True
    for d, n in GAP_CONFIGS:
        r = sgd_b.run(sgd_b.SGDSetup(model="ln", target="normalized", data="sphere", d=d, n=n, train=train,
                                     test=test, steps=steps, seed=seed + d + n))
        worst_z = max(abs(z) for z in r.gap_z)
        drop_z = (r.train_loss[0] - r.train_loss[-1]) / float(np.hypot(r.train_se[0], r.train_se[-1]))
        decays = drop_z > z_max
        ok &= decays and worst_z <= z_max
        rows.append({"d": d, "n": n, "t": list(r.record_steps), "train_loss": list(r.train_loss),
                     "test_loss": list(r.test_loss), "train_se": list(r.train_se), "test_se": list(r.test_se),
                     "gap_z": list(r.gap_z), "max_gap_z": worst_z, "decrease_z": drop_z, "decays": decays,
                     "gamma_T": float(r.gamma[-1]), "inactive_blocks_max_abs": r.inactive_max_abs})
    finals = ", ".join(f"{r['train_loss'][-1]:.3g}" for r in rows)
    return Check("B.cover.g1_loss_gap", f"{PAPER}, Appendix G.1 (Figure 3: loss convergence)",
                 f"LN layer, Task 1, d in {{8, 16}}, n in {{16, 32, 64}}, trained by SGD as in the paper (full matrices, "
                 f"eta = 0.1, batch 128, {train} training / {test} test points, {steps} steps): the training loss "
                 f"falls by {min(r['decrease_z'] for r in rows):.0f}+ standard errors in every configuration "
                 f"(final {finals}) "
                 f"and the test loss stays within {z_max:g} standard errors of it at every recorded step (max |z| "
                 + ", ".join(f"{r['max_gap_z']:.1f}" for r in rows) + "): no gap beyond sampling error (z-test)",
                 "pass" if ok else "discrepancy", None, None,
                 {"per_config": rows, "z_max": z_max, "train": train, "test": test, "steps": steps,
                  "experiment": _PAPER_SGD, "decided_by": "z-test on the SGD experiment (train/test gap within "
                  f"{z_max:g} SE at every recorded step; training loss decreases by more than {z_max:g} SE)",
                  "context": "derivation: the output depends on the data only through gamma, so the expected gap "
                             "is the sampling difference of the two sets, O(N^(-1/2)), at any length"})


def _sgd_runs(steps: int, eta_scale: float = 1.0, seed: int = 57):
    """The three models of Section 5 on both tasks (d = 16, n = 32), as the paper ran them."""
    from rdyn.verification.references import sgd_b

    out = {}
    for data in ("sphere", "spectrum"):
        for model, target in (("ln", "normalized"), ("noln", "normalized"), ("noln", "unnormalized")):
            out[(data, model, target)] = sgd_b.run(sgd_b.SGDSetup(
                model=model, target=target, data=data, spectrum=sgd_b.TASK2_SPECTRUM if data == "spectrum" else None,
                d=D_DIM, n=N_TOKENS, steps=steps, eta=0.1 * eta_scale, seed=seed + (data == "spectrum")))
    return out


def _z(x: float, sx: float, y: float, sy: float) -> float:
    return float((x - y) / np.hypot(sx, sy))


def comparison_check(runs, z_max: float = Z_MAX) -> Check:
    """Section 5's comparison figure, decided by the experiment it shows: (1) the LN layer on the
    normalized target, (2) the no-LN layer on the normalized target, (3) the no-LN layer on the
    unnormalized target, trained by SGD on Task 1 and Task 2 (d = 16, n = 32; the same training
    and test sets for the three models of a task). "LN is critical": on each task the LN layer's
    final test loss is below both no-LN test losses by more than ``z_max`` standard errors and
    still falling (final below the value at the middle recorded step by more than ``z_max``
    SE), while the no-LN test losses stay above 0 by more than ``z_max`` SE. Context: Theorems
    4.2, 4.3 (the LN loss is bounded by Upsilon_3/gamma_t^2 -> 0, the no-LN losses converge to the
    positive irreducible values of B.2)."""
    rows, ok = {}, True
    for data in ("sphere", "spectrum"):
        ln = runs[(data, "ln", "normalized")]
        mid = len(ln.record_steps) // 2
        row = {"ln_test_final": ln.test_loss[-1], "ln_test_se": ln.test_se[-1],
               "ln_still_falling_z": _z(ln.test_loss[mid], ln.test_se[mid], ln.test_loss[-1], ln.test_se[-1])}
        good = row["ln_still_falling_z"] > z_max
        for target in ("normalized", "unnormalized"):
            nl = runs[(data, "noln", target)]
            below = _z(nl.test_loss[-1], nl.test_se[-1], ln.test_loss[-1], ln.test_se[-1])
            positive = nl.test_loss[-1] / nl.test_se[-1]
            row[f"noln_{target}_test_final"] = nl.test_loss[-1]
            row[f"noln_{target}_test_se"] = nl.test_se[-1]
            row[f"ln_below_noln_{target}_z"] = below
            row[f"noln_{target}_above_zero_z"] = positive
            good &= below > z_max and positive > z_max
        row["t"] = list(ln.record_steps)
        row["test_loss"] = {f"{m} ({t})": list(runs[(data, m, t)].test_loss)
                            for m, t in (("ln", "normalized"), ("noln", "normalized"), ("noln", "unnormalized"))}
        row["holds"] = good
        rows["Task 1" if data == "sphere" else "Task 2"] = row
        ok &= good
    steps = runs[("sphere", "ln", "normalized")].setup.steps
    txt = "; ".join(f"{k}: LN {r['ln_test_final']:.3g} vs no-LN {r['noln_normalized_test_final']:.3g} (norm.), "
                    f"{r['noln_unnormalized_test_final']:.3g} (unnorm.), LN below both by "
                    f"{min(r['ln_below_noln_normalized_z'], r['ln_below_noln_unnormalized_z']):.0f} SE and still "
                    f"falling ({r['ln_still_falling_z']:.0f} SE)" for k, r in rows.items())
    return Check("B.cover.sec5_comparison_sgd", f"{PAPER}, Section 5 (comparison figure)",
                 f"the three models trained by SGD as in the paper (d={D_DIM}, n={N_TOKENS}, {steps} steps), final test "
                 f"losses: {txt}", "pass" if ok else "discrepancy", None, None,
                 {"per_task": rows, "z_max": z_max, "steps": steps, "experiment": _PAPER_SGD,
                  "decided_by": f"z-tests on the SGD experiment ({z_max:g} SE)",
                  "context": "B.claim.thm43.loss_gamma2, B.noln.irreducible.*, B.noln.converges.* (derived limits)"})


def _fixed_point_rows(runs, z_max: float):
    """Per no-LN run: the inactive blocks, gamma_T against gamma*, and the test loss at T against the
    test loss of the fixed point gamma* I (paired per-point differences on the same test set)."""
    from rdyn.verification.references import sgd_b

    rows, reached, left = {}, True, False
    for (data, model, target), r in runs.items():
        if model != "noln":
            continue
        d = r.setup.d
        g_star = sgd_b.gamma_star(target, *r.kappas_train)
        W = np.zeros_like(r.W)
        V = np.zeros_like(r.V)
        W[:d, d:] = g_star * np.eye(d)
        V[d:, :d] = np.eye(d)
        test = sgd_b.make_data(r.setup, r.setup.test, np.random.default_rng(r.setup.seed + 1000))
        fixed = sgd_b.per_sample_loss(W, V, test, d, False)
        trained = sgd_b.per_sample_loss(r.W, r.V, test, d, False)
        diff = trained - fixed
        z_fixed = float(diff.mean() / (diff.std(ddof=1) / np.sqrt(diff.size)))
        gam = r.gamma
        tail = gam[len(gam) * 3 // 4:]
        spread = float(tail.std(ddof=1))
        band_z = float((tail.mean() - g_star) / spread)
        hit = next((t for t in range(len(gam)) if abs(gam[t] - g_star) <= z_max * spread), None)
        off = float(np.linalg.norm(r.W[:d, d:] - np.trace(r.W[:d, d:]) / d * np.eye(d))
                    / abs(np.trace(r.W[:d, d:]) / d) / np.sqrt(d))
        key = f"{'Task 1' if data == 'sphere' else 'Task 2'}, {target} target"
        rows[key] = {"inactive_blocks_max_abs": r.inactive_max_abs, "gamma_star_train": g_star,
                     "gamma_T": float(gam[-1]), "last_quarter_mean": float(tail.mean()), "last_quarter_sd": spread,
                     "last_quarter_z": band_z, "first_step_within_band": hit,
                     "test_loss_T_minus_fixed_point": float(diff.mean()), "z_vs_fixed_point": z_fixed,
                     "off_identity_W12_rms_over_diag": off,
                     "gamma_t": [float(gam[t]) for t in r.record_steps], "t": list(r.record_steps)}
        reached &= r.inactive_max_abs == 0.0 and hit is not None and abs(band_z) <= z_max and z_fixed >= -z_max
        left |= z_fixed < -z_max
    return rows, reached, left


def fixed_point_check(runs, z_max: float = Z_MAX, runs_mean_loss=None) -> Check:
    """Appendix G.2 (Figures 6-7), decided by the experiment the figures show: the no-LN layer with
    the normalized and the unnormalized target on Task 1 (Figure 6) and Task 2 (Figure 7), trained by
    SGD as in the paper. "All entries converge to zero except the top-right block of W and the
    bottom-left block of V": the other blocks stay exactly 0 (B.1's vanishing-block argument holds
    per sample, so under SGD too). "The active parameters quickly converge to fixed points":
    gamma~_t = tr(W12) tr(V21)/d^2 fluctuates around gamma* (B.2, with the training set's kappas):
    over the last quarter of the run its mean is within ``z_max`` standard deviations of its
    SGD spread from gamma* (the step at which gamma~_t first enters that band is reported), and the
    trained layer's test loss is not below the fixed point gamma* I's by more than ``z_max``
    standard errors (paired per-point differences on a fresh test set; SGD's stationary
    fluctuation makes the trained loss slightly *higher*, so only the one-sided test is a test of
    the fixed point: a loss below it means the full model has left gamma* I for a lower loss).

    ``runs_mean_loss`` (``--full``): the same experiment with the batch loss averaged over the d
    coordinates too (a mean-squared-error loss, eta/d in rdyn's normalisation): the extraction does
    not say which. ``pass`` only if both conventions reach and keep the fixed point,
    ``discrepancy`` if both leave it, else ``info`` with ``undecided`` (the ledger's
    ``inconclusive``). Measured (seed 57, 2000 steps): with the summed loss, Task 1's normalized
    target leaves gamma* I after about 1000 steps (test loss 20 SE below the fixed point's,
    W12 off the identity): gamma* I is a fixed point of the population dynamics (Theorem 4.2)
    but not a minimum of the full-matrix loss; with the averaged loss the run is still
    approaching gamma* at 2000 steps."""
    from rdyn.verification.claims import fit_rule

    rows, reached, left = _fixed_point_rows(runs, z_max)
    steps = next(iter(runs.values())).setup.steps
    detail = {"per_run": rows, "z_max": z_max, "steps": steps, "experiment": _PAPER_SGD,
              "decided_by": "the SGD experiment (exact zero blocks; gamma~ over the last quarter within "
                            f"{z_max:g} SGD standard deviations of gamma*; one-sided paired z-test of the final test "
                            f"loss against the fixed point's, {z_max:g} SE)",
              "context": "B.full_matrix.noln.*, B.noln.converges.*, B.claim.thm42.linear_rate (population "
                         "dynamics: Theorem 4.2's linear convergence of the collapsed recursion)"}
    status = "pass" if reached else "discrepancy"
    summary = "; ".join(f"{k}: gamma~ over the last quarter {r['last_quarter_mean']:.4f} +- {r['last_quarter_sd']:.1g} "
                        f"vs gamma* {r['gamma_star_train']:.4f} (z = {r['last_quarter_z']:.1f}; in the band from step "
                        f"{r['first_step_within_band']}), test loss vs the fixed point's z = {r['z_vs_fixed_point']:.1f}"
                        for k, r in rows.items())
    if left:
        detail["finding"] = ("SGD leaves the fixed point: the trained layer's test loss falls below the fixed "
                             "point's (z < -{0:g}) while W12, V21 move off the identity, so gamma* I is a fixed "
                             "point of the collapsed (population) dynamics but not a minimum of the full-matrix "
                             "loss; SGD noise moves the weights off the structure and the loss keeps falling".format(z_max))
    if runs_mean_loss is not None:
        rows2, reached2, left2 = _fixed_point_rows(runs_mean_loss, z_max)
        detail["mean_squared_error_convention"] = {"per_run": rows2, "reached_and_stays": reached2,
                                                   "leaves_fixed_point": left2}
        if not (reached and reached2) and not (left and left2):
            status = "info"
            detail["undecided"] = fit_rule.undecided(
                f"at the paper's {steps} steps the outcome depends on the loss normalisation, which the extraction "
                f"does not state: with the batch loss summed over the d coordinates the fixed point is "
                f"{'reached and kept' if reached else ('left (the test loss falls below its value there)' if left else 'not reached')}; "
                f"averaged over them (eta/d) it is {'reached and kept' if reached2 else ('left' if left2 else 'still being approached')}; "
                "decided by the paper's loss normalisation (or its code), or by runs long enough for the averaged "
                "loss to settle")
    return Check("B.cover.g2_fixed_points_sgd", f"{PAPER}, Appendix G.2 (Figures 6-7)",
                 f"no-LN layer, both targets, Tasks 1 and 2, trained by SGD as in the paper (d={D_DIM}, n={N_TOKENS}, "
                 f"{steps} steps): blocks other than W12, V21 stay exactly 0 (max "
                 f"{max(r['inactive_blocks_max_abs'] for r in rows.values()):g}); {summary}",
                 status, None, None, detail)


def checks(quick: bool = False) -> tuple[Check, ...]:
    out = tuple(quadratic_loss_checks()) + (degenerate_kappa_check(), cos_phi_check(), cauchy_schwarz_check())
    out += (loop_error_check(),)
    out += (loop_error_check(snapshots=(300,) if quick else (2000,), samples=1000 if quick else 2000,
                             model="looped"),)
    out += (loss_gap_check(steps=SGD_STEPS_QUICK if quick else SGD_STEPS_FULL),)
    # Section 5's comparison and G.2's fixed points at the paper's 2000 steps in quick mode too (G.2's verdict
    # changes between 300 and 2000 steps); both loss normalisations, since the extraction does not state one
    runs = _sgd_runs(SGD_STEPS_FULL)
    out += (comparison_check(runs), fixed_point_check(runs, runs_mean_loss=_sgd_runs(SGD_STEPS_FULL, 1 / D_DIM)))
    out += tuple(growth_increment_check(m) for m in GROWTH_MODELS)
    out += (tstar_dn_check(20000 if quick else 40000),)
    if not quick:
        out += tuple(growth_fit_check(m) for m in GROWTH_MODELS)
    return out
