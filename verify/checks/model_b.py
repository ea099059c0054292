"""``rdyn verify`` checks for Model B (seed 003: LN / no-LN / looped attention).

Every identity of :mod:`rdyn.derivations.model_b` is checked symbolically, every closed form
against an independent numerical route (mpmath tanh-sinh quadrature in the Beta variable,
written here without the Gauss-Legendre rule of :mod:`rdyn.reduced_dynamics.model_b.run`; Monte Carlo
with standard errors; full-matrix GD of :mod:`rdyn.verification.references.full_matrix_b`).
"""
from __future__ import annotations

import math

import mpmath
import sympy as sp

from rdyn.derivations import model_b as dm
from rdyn.reduced_dynamics.model_b import run as mb
from rdyn.verification.references import full_matrix_b as fm
from rdyn.verification.checks.record import Check, digits_of, exact_check, numeric_check

SRC = "Wu-Zhang-Cao 2026 (seed 003)"


# ------------------------------------------------------------- independent quadrature route
def beta_expectation(f, k: int, d: int, layer=None):
    """E[f(t)] for t ~ Beta(k/2, (d-k)/2) by mpmath.quad (tanh-sinh) in ``s = sqrt(t)``.

    ``layer``: width of a boundary layer of ``f`` at ``t = 0``; breakpoints are put at
    ``sqrt(layer) * 10^j`` so that tanh-sinh resolves it.
    """
    a, b = mpmath.mpf(k) / 2, mpmath.mpf(d - k) / 2
    norm = mpmath.beta(a, b)
    pts = [mpmath.mpf(0)]
    if layer is not None:
        w = mpmath.sqrt(layer)
        pts += [w * 10**j for j in range(0, 40) if w * 10**j < mpmath.mpf(1) / 2]
    pts.append(mpmath.mpf(1))
    g = lambda s: 2 * f(s * s) * s ** (2 * a - 1) * (1 - s * s) ** (b - 1)
    return mpmath.quad(g, pts) / norm


def independent_iterates(model: str, spectrum: tuple[int, ...], eta, steps: int, dps: int,
                         L: int = 1, alpha0=0, beta0=1):
    """(alpha_t, beta_t) of the collapsed map for a two-level spectrum, by tanh-sinh quadrature.

    LN: ``F = -(2/d) E[(m2 - m1^2)/(sqrt(m2) r^3)]``; looped: ``F = G'(rho)/d`` with
    ``G = E[(1-t) q/(t + (1-t) q)]``, ``q = ((1+rho l2)/(1+rho l1))^{2L}``, derivative taken
    by ``mpmath.diff`` (not the closed form used by the iterator).
    """
    lv = mb.distinct_levels(spectrum)
    (l1, k), (l2, _) = lv
    d = len(spectrum)
    with mpmath.workdps(dps + 10):
        l1, l2, eta = mpmath.mpf(l1), mpmath.mpf(l2), mpmath.mpf(str(eta))
        a, b = mpmath.mpf(alpha0), mpmath.mpf(beta0)
        out = [(a, b)]
        for _ in range(steps):
            g = a * b
            if model == "ln":
                def f(t):
                    m1 = l1 * t + l2 * (1 - t)
                    m2 = l1**2 * t + l2**2 * (1 - t)
                    r2 = 1 + 2 * g * m1 + g * g * m2
                    return (m2 - m1 * m1) / (mpmath.sqrt(m2) * r2 ** mpmath.mpf(1.5))
                F = -2 * beta_expectation(f, k, d) / d
            else:
                def G(rho):
                    q = ((1 + rho * l2) / (1 + rho * l1)) ** (2 * L)
                    return beta_expectation(lambda t: (1 - t) * q / (t + (1 - t) * q), k, d, layer=q)
                F = mpmath.diff(G, g) / d
            a, b = a - eta * b * F, b - eta * a * F
            out.append((a, b))
    return out


# ----------------------------------------------------------------------------- symbolic
def symbolic_checks() -> list[Check]:
    checks = []
    checks.append(exact_check(
        "B.ln.gradient", f"{SRC}, C.1-C.2.1 (F_t)",
        "LN layer: a^T S g_h = -2(m2 - m1^2)/(sqrt(m2) r^3) = d loss/d gamma, so F = L'(gamma)/d "
        "depends on (S,a) only through m1 = a^T S a, m2 = ||S a||^2",
        dm.ln_gradient_identity_holds()))
    checks.append(exact_check(
        "B.ln.loss_stable_form", f"{SRC}, C.3 Step 1 (loss of the LN layer)",
        "r^2 m2 - (m1 + gamma m2)^2 = m2 - m1^2, so the LN loss 2 - 2 y^T t equals "
        "2 (m2 - m1^2)/(r^2 m2 (1 + y^T t)) (the form iterated: no cancellation as gamma -> oo)",
        dm.ln_loss_stable_identity_holds()))
    checks.append(exact_check(
        "B.noln.gradient", f"{SRC}, B.1-B.2", "no-LN layer, both targets: a^T S g = d loss/d gamma",
        dm.noln_gradient_identity_holds()))
    ids = dm.recursion_identities()
    checks.append(exact_check(
        "B.recursion.identities", f"{SRC}, B.2.3 (gamma_{{t+1}}, S_{{t+1}}, D_{{t+1}})",
        "gamma' = gamma - eta S F + eta^2 gamma F^2; S' = (1+eta^2F^2)S - 4 eta gamma F; "
        "D' = (1-eta^2F^2)D; S^2 - D^2 = 4 gamma^2", all(ids.values()), **{k: bool(v) for k, v in ids.items()}))
    k = dm.kappa_task1()
    want2 = dm.n * (dm.n + dm.d - 1) / dm.d**2
    checks.append(exact_check(
        "B.kappa.task1", f"{SRC}, B.2 (kappa1, kappa2)",
        "Task 1: kappa1 = n/d, kappa2 = n(n+d-1)/d^2 (moments of uniform unit vectors)",
        sp.simplify(k["kappa1"] - dm.n / dm.d) == 0 and sp.simplify(k["kappa2"] - want2) == 0,
        kappa1=str(k["kappa1"]), kappa2=str(k["kappa2"])))
    checks.append(exact_check(
        "B.kappa.nondegenerate", f"{SRC}, B.2.2 (kappa2 > kappa1)",
        "Task 1: kappa2 - kappa1 = n(n-1)/d^2 > 0 for n >= 2, so 0 < gamma2* < 1",
        sp.simplify(k["kappa2"] - k["kappa1"] - dm.n * (dm.n - 1) / dm.d**2) == 0))
    col = dm.noln_collapsed()
    pg, pl = dm.printed_gamma_star(), dm.printed_irreducible_loss()
    for tgt in ("normalized", "unnormalized"):
        checks.append(exact_check(
            f"B.noln.gamma_star.{tgt}", f"{SRC}, Theorem 4.2",
            f"gamma* ({tgt} target) from L'(gamma) = 0 equals the printed form",
            sp.simplify(col[tgt]["gamma_star"] - pg[tgt]) == 0,
            derived=str(col[tgt]["gamma_star"]), printed=str(pg[tgt])))
        checks.append(exact_check(
            f"B.noln.irreducible.{tgt}", f"{SRC}, B.2.{1 if tgt == 'normalized' else 2}",
            f"irreducible loss L(gamma*) ({tgt}); kappa4 = E[a^T S a/||S a||]",
            sp.simplify(col[tgt]["irreducible_loss"] - pl[tgt]) == 0,
            derived=str(col[tgt]["irreducible_loss"]), printed=str(pl[tgt])))
    checks.append(exact_check(
        "B.noln.first_step", f"{SRC}, B.2.3 Part 2",
        "alpha_1 = eta beta0 (2 kappa2/d) gamma* from F(0) = -2 kappa2 gamma*/d",
        sp.simplify(dm.first_step_alpha() - dm.eta * sp.Symbol("beta0", positive=True) * 2 * dm.kappa2
                    / dm.d * pg["normalized"]) == 0))
    gl = dm.growth_limits()
    checks.append(exact_check(
        "B.ln.growth_constant", f"{SRC}, C.2.2 (C1 = 2 Upsilon_3/d, limit 6 eta C1)",
        "lim gamma^3 F = -C1 with C1 = (2/d) E[(||Sa||^2 - (a^T S a)^2)/||Sa||^4] = 2 Upsilon_3/d; "
        "lim (gamma_{t+1}^3 - gamma_t^3) = 6 eta C1 = 12 eta Upsilon_3/d",
        sp.simplify(gl["ln_gamma3_aSgh"] + 2 * (dm.m2 - dm.m1**2) / dm.m2**2) == 0
        and sp.simplify(gl["ln_increment_cubes_per_C"] - 6 * dm.eta) == 0))
    checks.append(exact_check(
        "B.looped.growth_constant", f"{SRC}, A.5 (rho_{{t+1}}^2 - rho_t^2), Theorem 4.1",
        "lim rho^2 dz_k/drho = (lam_k - lam_1)/lam_1^2, so with Upsilon_1 := lim -rho^2 G'(rho) "
        "(explicit expectation in rdyn.derivations.model_b.growth_limits) lim (rho_{t+1}^2 - rho_t^2) "
        "= 4 eta Upsilon_1/d and w, v ~ t^{1/4}",
        sp.simplify(gl["looped_rho2_dz"] - (sp.Symbol("lamk", positive=True) - sp.Symbol("lam0", positive=True))
                    / sp.Symbol("lam0", positive=True) ** 2) == 0
        and sp.simplify(gl["looped_increment_squares_per_C"] - 4 * dm.eta) == 0,
        note="the paper's normalisation of Upsilon_1 is not in the extraction; ours is stated"))
    em = dm.eta_max_derived()
    dominated = all(sp.simplify(r - sp.sqrt(dm.S0**2 + 16 * dm.gamma_star_sym**2) / dm.gamma_star_sym) == 0
                    or sp.simplify(r) != 0 for r in em["dominated_ratios"])
    checks.append(Check(
        "B.noln.eta_max", f"{SRC}, B.2.3 (eta_max), Part 3",
        "eta_max = min{d/(8 kappa2 S_max), d/(2 kappa2 S0), d/(2 kappa2 sqrt(2 S0 gamma*))} with "
        "S_max = sqrt(S0^2 + 16 gamma*^2) (F_max, Gamma, S_max inferred; other terms dominated)",
        "discrepancy" if dominated else "fail", None, None,
        {"derived": str(em["simplified"]), "printed": str(em["printed"]),
         "printed_part3": "0 < eta <= d/(8 Upsilon_2 sqrt(1+16 gamma*^2))",
         "note": "printed sqrt(1+16 gamma*^2) agrees only for S0 = beta0^2 = 1; Part 3 writes Upsilon_2 "
                 "for kappa2; dominated-term ratios " + ", ".join(str(r) for r in em["dominated_ratios"])}))
    return checks


# ----------------------------------------------------------------------------- numerical
def _rel(a, b) -> float:
    with mpmath.workdps(60):
        a, b = mpmath.mpf(a), mpmath.mpf(b)
        return float(abs(a - b) / max(abs(b), mpmath.mpf(10) ** -300))


def numeric_checks(fast: bool = True) -> list[Check]:
    checks = []
    spectrum = (3, 1, 1, 1)
    dps = 30
    # exact rule vs independent quadrature
    for model, L, start in (("ln", 1, (0, 1)), ("looped", 2, (0, 1)), ("looped", 10, (10, 10))):
        steps = 6
        cfg = mb.Config(model=model, data="spectrum", d=4, n=6, spectrum=spectrum, L=L, eta=0.5,
                        steps=steps, dps=dps, alpha0=start[0], beta0=start[1])
        tr = mb.run(cfg)
        ref = independent_iterates(model, spectrum, 0.5, steps, dps, L, *start)
        err = max(max(_rel(tr.alpha[t], ref[t][0]) if ref[t][0] != 0 else 0, _rel(tr.beta[t], ref[t][1]))
                  for t in range(steps + 1))
        checks.append(numeric_check(
            f"B.{model}.L{L}.exact_vs_quadrature", f"{SRC}, C.2.1 / A (collapsed recursion)",
            f"{model} (L={L}, start {start}): exact-mode iterates (LN: Gauss-Legendre in theta; looped: "
            f"2F1 closed form) agree with tanh-sinh quadrature in sqrt(t) (looped: numerical "
            f"derivative) at dps {dps}, spectrum {spectrum}", err, 1e-20, steps=steps))
    # kappa2 of Task 2 by the exact rule vs the rational sum m^2/d
    rule = mb.exact_rule(spectrum, dps)
    with mpmath.workdps(dps):
        k2 = rule.mean(rule.m2)
    checks.append(numeric_check(
        "B.kappa2.task2_quadrature", f"{SRC}, B.2 (kappa2)", "Task 2: E||S a||^2 = sum m_i^2/d (quadrature)",
        _rel(k2, mpmath.mpf(sum(m * m for m in spectrum)) / 4), 1e-25))
    # Monte Carlo kappa2 (Task 1) vs exact rational, z-score
    d, n = 16, 32
    mc = mb.monte_carlo_rule("sphere", d, n, None, 20000 if fast else 100000, 0)
    m2 = mc.m2
    se = m2.std(ddof=1) / math.sqrt(m2.size)
    exact = n * (n + d - 1) / d**2
    z = abs(m2.mean() - exact) / se
    checks.append(Check("B.kappa2.task1_monte_carlo", f"{SRC}, B.2 (kappa2)",
                        "Task 1 MC estimate of E||S a||^2 within 5 SE of n(n+d-1)/d^2",
                        "pass" if z < 5 else "fail", abs(m2.mean() - exact) / exact,
                        digits_of(abs(m2.mean() - exact) / exact),
                        {"z": float(z), "std_error": float(se), "exact": exact}))
    # MC vs exact for the LN loss and F at a fixed gamma (Task 2)
    mcs = mb.monte_carlo_rule("spectrum", 4, 6, spectrum, 40000, 1)
    ex = mb.exact_rule(spectrum)
    zs = {}
    for g in (0.0, 0.7, 5.0):
        for j, name in ((0, "loss"), (1, "dloss")):
            vals = mb.ln_terms(mcs, g)[j]
            zs[f"{name}@{g}"] = float(abs(vals.mean() - ex.mean(mb.ln_terms(ex, g)[j])) / mcs.std_error(vals))
    checks.append(Check("B.ln.monte_carlo_vs_exact", f"{SRC}, C.2.1",
                        "LN loss and L'(gamma): Monte Carlo within 5 SE of exact quadrature",
                        "pass" if max(zs.values()) < 5 else "fail", None, None, {"z": zs}))
    # growth constants: measured increments from a large start vs 12 eta U3/d, 4 eta U1/d
    for model, L in (("ln", 1), ("looped", 2)):
        cfg = mb.Config(model=model, data="spectrum", d=4, n=6, spectrum=spectrum, L=L, eta=0.5,
                        steps=50, alpha0=30.0, beta0=30.0)
        tr = mb.run(cfg)
        if model == "ln":
            inc = tr.gamma[-1] ** 3 - tr.gamma[-2] ** 3
            pred = 12 * 0.5 * tr.constants.upsilon3 / 4
        else:
            inc = tr.gamma[-1] ** 2 - tr.gamma[-2] ** 2
            pred = 4 * 0.5 * tr.upsilon1 / 4
        checks.append(numeric_check(
            f"B.{model}.growth_increment", f"{SRC}, {'C.2.2' if model == 'ln' else 'A.5'}",
            f"{model}: measured {'gamma^3' if model == 'ln' else 'rho^2'} increment at gamma ~ 900 "
            "matches the derived limit (error O(1/gamma))", _rel(inc, pred), 5e-3,
            measured=float(inc), predicted=float(pred)))
    # Upsilon_1: 2F1 closed form vs -rho^2 G'(rho) at rho = 1e12 (numerical derivative of the
    # 2F1 loss), and vs the generic per-node expectation where Gauss-Legendre is accurate (L = 2)
    with mpmath.workdps(30):
        er = mb.exact_rule(spectrum, 30)
        rho = mpmath.mpf(10) ** 12
        u1_num = -rho**2 * mpmath.diff(lambda x: mb.looped_two_level(er, x, 10)[0], rho)
        u1 = mb.upsilon1_two_level(er, 10)
        gl2, hyp2 = mb.upsilon1(er, 2), mb.upsilon1_two_level(er, 2)
    checks.append(numeric_check("B.looped.upsilon1", f"{SRC}, A.5",
                                "Upsilon_1 (L=10, 2F1 form) equals -rho^2 G'(rho) at rho = 1e12 (error O(1/rho))",
                                _rel(u1_num, u1), 1e-9, upsilon1=float(u1)))
    checks.append(numeric_check("B.looped.upsilon1_routes", f"{SRC}, A.5",
                                "Upsilon_1 (L=2): 2F1 closed form equals the node-wise expectation",
                                _rel(gl2, hyp2), 1e-25, upsilon1=float(hyp2)))
    # no-LN: linear convergence to gamma*, positive irreducible loss
    for tgt in ("normalized", "unnormalized"):
        cfg = mb.Config(model="noln", target=tgt, data="spectrum", d=4, n=6, spectrum=spectrum, eta=0.5, steps=400)
        tr = mb.run(cfg)
        err = _rel(tr.gamma[-1], tr.gamma_star)
        c = tr.constants
        irr = (1 - float(c.kappa1_exact) ** 2 / float(c.kappa2_exact)) if tgt == "unnormalized" else \
            2 - 2 * float(c.kappa4) - (float(c.kappa3) - float(c.kappa1_exact)) ** 2 / float(c.kappa2_exact)
        ok = err < 1e-12 and abs(float(tr.loss[-1]) - irr) < 1e-12 and irr > 0
        checks.append(Check(f"B.noln.converges.{tgt}", f"{SRC}, Theorem 4.2",
                            f"no-LN ({tgt}): gamma_t -> gamma*, loss -> irreducible loss > 0",
                            "pass" if ok else "fail", err, digits_of(err),
                            {"gamma_star": float(tr.gamma_star), "irreducible_loss": irr}))
        # eta_max run: monotone descent at the derived eta_max
        k2, gs, S0 = float(c.kappa2_exact), float(tr.gamma_star), 1.0
        emax = min(4 / (8 * k2 * math.sqrt(S0**2 + 16 * gs**2)), 4 / (2 * k2 * S0), 4 / (2 * k2 * math.sqrt(2 * S0 * gs)))
        tr2 = mb.run(mb.Config(model="noln", target=tgt, data="spectrum", d=4, n=6, spectrum=spectrum, eta=emax, steps=300))
        losses = [float(x) for x in tr2.loss]
        mono = all(b <= a + 1e-15 for a, b in zip(losses, losses[1:]))
        checks.append(Check(f"B.noln.eta_max_descent.{tgt}", f"{SRC}, B.2.3 Part 1",
                            "at eta = eta_max the loss decreases monotonically to L(gamma*)",
                            "pass" if mono and abs(losses[-1] - irr) < 1e-8 else "fail", None, None,
                            {"eta_max": emax}))
    # LN: gamma increasing, F <= 0, contraction R_t decreasing to power-method ratio
    cfg = mb.Config(model="ln", data="spectrum", d=4, n=6, spectrum=spectrum, eta=0.5, steps=300)
    tr = mb.run(cfg)
    g = [float(x) for x in tr.gamma]
    R = [mb.contraction_ratio(x, 3.0, 1.0) for x in g]
    ok = all(b > a for a, b in zip(g[1:], g[2:])) and all(float(f) <= 0 for f in tr.F) and \
        all(b < a for a, b in zip(R[1:], R[2:])) and R[-1] > 1 / 3
    checks.append(Check("B.ln.monotone", f"{SRC}, C.2.1 Steps 2-3; Theorem 4.6",
                        "LN: F_t <= 0, gamma_t increasing, R_t = (1+gamma l2)/(1+gamma l1) decreases "
                        "towards l2/l1 from above", "pass" if ok else "fail", None, None,
                        {"R_final": R[-1], "power_method_ratio": 1 / 3}))
    # fitted exponents (info)
    tr = mb.run(mb.Config(model="ln", data="spectrum", d=4, n=6, spectrum=spectrum, eta=0.5, steps=20000))
    trl = mb.run(mb.Config(model="looped", data="spectrum", d=4, n=6, spectrum=spectrum, L=2, eta=0.5, steps=4000))
    checks.append(Check("B.growth.exponents", f"{SRC}, Theorems 4.1, 4.3",
                        "fitted log-log slopes over the second half of the run (LN: 2 10^4 steps, looped L=2: "
                        "4000 steps; claims: gamma 1/3, alpha, beta 1/6; rho 1/2, w, v 1/4)", "info", None, None,
                        {"ln_gamma": mb.fitted_exponent(tr.gamma, 10000),
                         "ln_alpha": mb.fitted_exponent(tr.alpha, 10000),
                         "ln_beta": mb.fitted_exponent(tr.beta, 10000),
                         "looped_rho": mb.fitted_exponent(trl.gamma, 2000),
                         "looped_w": mb.fitted_exponent(trl.alpha, 2000),
                         "looped_v": mb.fitted_exponent(trl.beta, 2000)}))
    # Theorem 4.7 bounds (limit = power method) on the fixed sphere test point
    lam, c2 = mb.test_spectrum(mb.Config())
    ok = True
    for L in range(1, 26):
        th = mb.theorem_4_7(1e3, L, lam, c2)
        ok &= th["lower_bound"] <= th["sin_psi_power_method"] * (1 + 1e-12) <= th["upper_bound"] * (1 + 1e-12)
    checks.append(Check("B.looped.theorem_4_7", f"{SRC}, Theorem 4.7",
                        "|c_{r+1}| (l_{r+1}/l_1)^L <= lim sin psi_L <= ||a_perp||/||a_Z|| (l_{r+1}/l_1)^L, L = 1..25",
                        "pass" if ok else "fail"))
    return checks


def full_matrix_checks() -> list[Check]:
    checks = []
    for model, target, L in (("ln", None, 1), ("noln", "normalized", 1), ("noln", "unnormalized", 1),
                             ("looped", None, 2)):
        r = fm.run(fm.FullSetup(model=model, target=target, L=L, steps=5, samples=4000))
        ok = (r["zero_blocks_max_abs"] == 0.0 and r["first_step_projection_rel_error"] < 1e-12
              and r["max_rel_dev_same_sample"] < 1e-2
              and r["off_identity_W12"] < 3 * r["expected_off_identity_W12"])
        checks.append(Check(f"B.full_matrix.{model}{'.' + target if target else ''}",
                            f"{SRC}, Theorems 4.1-4.3 (structure)",
                            "full-matrix GD: six blocks exactly zero; W12, V21 = identity up to sampling "
                            "error; tr(grad W12)/d = beta F at step 0 to rounding; alpha, beta follow the "
                            "same-sample collapsed recursion",
                            "pass" if ok else "fail", r["max_rel_dev_same_sample"],
                            digits_of(r["max_rel_dev_same_sample"]), r))
    return checks
