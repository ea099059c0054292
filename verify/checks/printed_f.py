"""Appendix F's intermediate formulas evaluated AS PRINTED (ids ``A.printedF.*``).

The ledger's "Lemmas F.1-F.8" entry checks rdyn's own closed forms
(:func:`rdyn.derivations.gaussian.appendix_f`). Here every intermediate expression the
extraction prints between ``E[...]`` and the final value is evaluated literally, by Monte Carlo
with its standard error (one fixed seed per check) or by quadrature, against the derived
expectation it stands for. ``x1, x2, x3`` are independent ``N(0, a), N(0, b), N(0, c)`` (a, b, c
are *variances*: F.1 prints ``E[x^2]/2 = a/2``), ReLU unless stated, at ``a = 2, b = 1/2, c = 3``
(unequal, so that a variance written for a standard deviation shows).

Where the printed form differs and restoring a symbol the text extraction plausibly lost (a
square root) makes it agree, the check says so (``lost_symbol`` in the detail; the ledger's
kind ``extraction_suspect``); the restored form is checked too (``restored``). ``pass`` when the
printed form agrees with the derived value (``|z| < Z_MAX`` for Monte Carlo, relative 1e-9 for
quadrature), ``discrepancy`` otherwise; ``fail`` when the restored form does not agree either
(then rdyn's reading of the statement is wrong).

* F.1: ``E[x s(x) s'(x)] = E[x^2 1{x>=0}] = E[x^2]/2 = a/2``;
* F.2: ``E[x1 s(x1+x2) s'(x1+x2)] = E[x1 x3 1{x3>=0}] = a/(a+b) E[x3^2 1{x3>=0}] = a/(2(a+b)) E[x3^2] = a/2``
  (``x3 = x1 + x2``);
* F.3: ``E[x1 s(x1) s'(x1+x2)] = a E[z1^2 1{z1>=0} 1{a z1 + b z2 >= 0}]`` (z iid N(0,1); the
  extraction's stray ``I`` read as a product); derived: ``sqrt(a) z1 + sqrt(b) z2``;
* F.4: ``E[x2 s(x1) s'(x1+x2)] = ab E[z1 z2 1{z1>=0} 1{a z1 + b z2 >= 0}]``; derived: ``sqrt(ab)``
  and ``sqrt(a) z1 + sqrt(b) z2``;
* F.5/F.8: ``E[s(x1) s(x1+x2)] = E[(x1+x2) s(x1) s'(x1+x2)]`` (ReLU and Leaky ReLU: s(v) = v s'(v));
* F.6: ``E[x1 s(x1+x2) s'(x1+x2+x3)] = E[x1 (x1+x2) 1{x1+x2>=0} Phi((x1+x2)/c)] = a/(a+b) E[x4^2
  1{x4>=0} Phi(x4/c)] = a int_0^oo z^2 Phi(lambda z) phi(z) dz`` (``x4 = x1 + x2``; lambda is not
  defined in the extraction: read as ``sqrt(a+b)/c``, the value the printed previous step
  implies); derived: ``Phi(./sqrt(c))`` (x3 has variance c), lambda = ``sqrt((a+b)/c)``;
* F.7: ``E[x2 s(x1) s'(x1+x2+x3)] = E[x1 x2 1{x1>=0} Phi((x1+x2)/c)] = int_0^oo x1 (2 pi a)^-1
  e^{-x1^2/(2a)} (int x2 Phi((x1+x2)/c) (2 pi b)^-1 e^{-x2^2/(2b)} dx2) dx1``; derived: the
  normal densities ``(2 pi a)^(-1/2)``, ``(2 pi b)^(-1/2)`` and ``Phi(./sqrt(c))``: one check per
  lost symbol (``F7_density``, ``F7_phi``, the other restored) and the whole formula as printed (``F7``).

Each printed form that differs has a companion ``<id>.restored`` (``pass`` when the form with
the lost symbol restored equals the derived value): it decides the correction.

Lemma D.1's printed gradients are evaluated as printed by ``A.cover.D1_gradients``
(:mod:`rdyn.verification.checks.coverage_a`).
"""
from __future__ import annotations

import math

import numpy as np

from rdyn.verification.checks.record import Check

PAPER = "Zhang-Zhao-Gu-Cao (seed 000)"
A, B, C = 2.0, 0.5, 3.0
SAMPLES = 2_000_000  # F.3: printed and derived differ by 0.016, about 10 standard errors
Z_MAX = 5.0
QUAD_TOL = 1e-8


def _derived(name: str, activation: str = "relu") -> float:
    import sympy as sp

    from rdyn.derivations import gaussian as g

    expr = g.appendix_f(name, activation).subs({g.a_var: sp.Rational(A).limit_denominator(),
                                                 g.b_var: sp.Rational(B).limit_denominator(),
                                                 g.c_var: sp.Rational(C).limit_denominator(),
                                                 g.kappa: sp.Rational(1, 10)})
    return float(sp.N(expr, 30))


def _mc(values: np.ndarray) -> tuple[float, float]:
    return float(values.mean()), float(values.std(ddof=1) / math.sqrt(values.size))


def _z(value: float, se: float, target: float) -> float:
    return abs(value - target) / se if se > 0 else (0.0 if value == target else math.inf)


def _phi_cdf(x):
    from scipy.special import ndtr

    return ndtr(x)


def _status(printed_ok: bool, restored_ok: bool | None) -> str:
    if printed_ok:
        return "pass"
    return "discrepancy" if restored_ok in (True, None) else "fail"


def _mc_check(id: str, source: str, what: str, printed: tuple[float, float], derived: float,
              restored: tuple[float, float] | None, lost: str | None, printed_form: str,
              restored_form: str | None) -> Check:
    zp = _z(*printed, derived)
    zr = None if restored is None else _z(*restored, derived)
    printed_ok, restored_ok = zp < Z_MAX, (None if zr is None else zr < Z_MAX)
    status = _status(printed_ok, restored_ok)
    text = (f"{what}: printed {printed_form} = {printed[0]:.4f} +- {printed[1]:.1e} (Monte Carlo, {SAMPLES} samples) "
            f"vs derived {derived:.4f} (|z| = {zp:.1f})")
    if restored is not None and not printed_ok:
        text += (f"; with the lost symbol restored ({lost}) {restored[0]:.4f} +- {restored[1]:.1e} (|z| = {zr:.1f})")
    detail = {"printed_form": printed_form, "printed_value": printed[0], "printed_std_error": printed[1],
              "derived": derived, "z_printed": zp, "z_max": Z_MAX, "samples": SAMPLES,
              "variances": {"a": A, "b": B, "c": C}, "method": "Monte Carlo (numpy, fixed seed)"}
    if restored is not None:
        detail.update({"restored_form": restored_form, "restored_value": restored[0],
                       "restored_std_error": restored[1], "z_restored": zr})
    if lost is not None and not printed_ok and restored_ok:
        detail["lost_symbol"] = lost
    out = [Check(id, f"{PAPER}, {source} (as printed)", text, status, abs(printed[0] - derived) / abs(derived),
                 None, detail)]
    if restored is not None:
        out.append(Check(f"{id}.restored", f"{PAPER}, {source} (lost symbol restored)",
                         f"{what}: {restored_form} = {restored[0]:.4f} +- {restored[1]:.1e} vs derived {derived:.4f} "
                         f"(|z| = {zr:.1f})", "pass" if restored_ok else "fail", None, None,
                         {"restored_form": restored_form, "lost_symbol": lost, "value": restored[0],
                          "std_error": restored[1], "derived": derived, "z": zr, "z_max": Z_MAX}))
    return out


def _quad_check(id: str, source: str, what: str, printed: float, derived: float, restored: float | None,
                lost: str | None, printed_form: str, restored_form: str | None) -> Check:
    rp = abs(printed - derived) / abs(derived)
    rr = None if restored is None else abs(restored - derived) / abs(derived)
    printed_ok, restored_ok = rp < QUAD_TOL, (None if rr is None else rr < QUAD_TOL)
    status = _status(printed_ok, restored_ok)
    text = f"{what}: printed {printed_form} = {printed:.6g} (quadrature) vs derived {derived:.6g}"
    if restored is not None and not printed_ok:
        text += f"; with the lost symbol restored ({lost}) {restored:.6g} (relative {rr:.1e})"
    detail = {"printed_form": printed_form, "printed_value": printed, "derived": derived,
              "relative_difference_printed": rp, "tolerance": QUAD_TOL, "variances": {"a": A, "b": B, "c": C},
              "method": "quadrature (scipy.integrate.quad; F.7's inner integral by 160-point Gauss-Hermite), "
                        "relative error below 1e-11"}
    if restored is not None:
        detail.update({"restored_form": restored_form, "restored_value": restored,
                       "relative_difference_restored": rr})
    if lost is not None and not printed_ok and restored_ok:
        detail["lost_symbol"] = lost
    out = [Check(id, f"{PAPER}, {source} (as printed)", text, status, rp, None, detail)]
    if restored is not None:
        out.append(Check(f"{id}.restored", f"{PAPER}, {source} (lost symbol restored)",
                         f"{what}: {restored_form} = {restored:.6g} vs derived {derived:.6g} (relative {rr:.1e})",
                         "pass" if restored_ok else "fail", rr, None,
                         {"restored_form": restored_form, "lost_symbol": lost, "value": restored, "derived": derived,
                          "relative_difference": rr, "tolerance": QUAD_TOL}))
    return out


def f1_f2_checks(samples: int = SAMPLES) -> list[Check]:
    rng = np.random.default_rng(301)
    x1 = rng.normal(0, math.sqrt(A), samples)
    x2 = rng.normal(0, math.sqrt(B), samples)
    x3 = x1 + x2
    out = [*_mc_check("A.printedF.F1", "Lemma F.1", "E[x s(x) s'(x)] = E[x^2 1{x>=0}] (ReLU)",
                     _mc(x1**2 * (x1 >= 0)), _derived("E[x s(x) s'(x)]"), None, None, "E[x^2 1{x>=0}]", None)]
    derived = _derived("E[x1 s(x1+x2) s'(x1+x2)]")
    out.extend(_mc_check("A.printedF.F2_conditional", "Lemma F.2", "E[x1 s(x1+x2) s'(x1+x2)] = E[x1 x3 1{x3>=0}]",
                         _mc(x1 * x3 * (x3 >= 0)), derived, None, None, "E[x1 x3 1{x3>=0}], x3 = x1 + x2", None))
    out.extend(_mc_check("A.printedF.F2_regression", "Lemma F.2",
                         "E[x1 s(x1+x2) s'(x1+x2)] = a/(a+b) E[x3^2 1{x3>=0}] = a/(2(a+b)) E[x3^2]",
                         _mc(A / (A + B) * x3**2 * (x3 >= 0)), derived, None, None,
                         "a/(a+b) E[x3^2 1{x3>=0}]", None))
    return out


def f3_f4_checks(samples: int = SAMPLES) -> list[Check]:
    rng = np.random.default_rng(302)
    z1, z2 = rng.standard_normal(samples), rng.standard_normal(samples)
    printed_gate = (A * z1 + B * z2) >= 0
    true_gate = (math.sqrt(A) * z1 + math.sqrt(B) * z2) >= 0
    pos = z1 >= 0
    f3 = _mc_check("A.printedF.F3", "Lemma F.3", "E[x1 s(x1) s'(x1+x2)] (ReLU)",
                   _mc(A * z1**2 * pos * printed_gate), _derived("E[x1 s(x1) s'(x1+x2)]"),
                   _mc(A * z1**2 * pos * true_gate), "square roots of the variances: sqrt(a) z1 + sqrt(b) z2",
                   "a E[z1^2 1{z1>=0} 1{a z1 + b z2 >= 0}]", "a E[z1^2 1{z1>=0} 1{sqrt(a) z1 + sqrt(b) z2 >= 0}]")
    f4 = _mc_check("A.printedF.F4", "Lemma F.4", "E[x2 s(x1) s'(x1+x2)] (ReLU)",
                   _mc(A * B * z1 * z2 * pos * printed_gate), _derived("E[x2 s(x1) s'(x1+x2)]"),
                   _mc(math.sqrt(A * B) * z1 * z2 * pos * true_gate),
                   "square roots of the variances: sqrt(ab) and sqrt(a) z1 + sqrt(b) z2",
                   "ab E[z1 z2 1{z1>=0} 1{a z1 + b z2 >= 0}]",
                   "sqrt(ab) E[z1 z2 1{z1>=0} 1{sqrt(a) z1 + sqrt(b) z2 >= 0}]")
    return f3 + f4


def f5_f8_check(samples: int = SAMPLES) -> Check:
    rng = np.random.default_rng(305)
    x1 = rng.normal(0, math.sqrt(A), samples)
    x2 = rng.normal(0, math.sqrt(B), samples)
    y = x1 + x2
    rows, worst = {}, 0.0
    for act, slope in (("relu", 0.0), ("leaky", 0.1)):
        s = lambda v: np.where(v >= 0, v, slope * v)  # noqa: E731
        ds = lambda v: np.where(v >= 0, 1.0, slope)  # noqa: E731
        left, right = s(x1) * s(y), y * s(x1) * ds(y)
        pointwise = float(np.max(np.abs(left - right)))
        mean, se = _mc(right)
        derived = _derived("E[s(x1) s(x1+x2)]", act)
        rows[act] = {"pointwise_max_difference": pointwise, "printed_value": mean, "std_error": se,
                     "derived": derived, "z": _z(mean, se, derived)}
        worst = max(worst, rows[act]["z"], math.inf if pointwise > 1e-12 else 0.0)
    ok = worst < Z_MAX
    return Check("A.printedF.F5_F8", f"{PAPER}, Lemmas F.5, F.8 (as printed)",
                 "E[s(x1) s(x1+x2)] = E[(x1+x2) s(x1) s'(x1+x2)] (ReLU, Leaky ReLU 0.1): equal sample by sample "
                 f"(s(v) = v s'(v)) and equal to the derived value (max |z| = {worst:.1f})",
                 "pass" if ok else "discrepancy", None, None, {"per_activation": rows, "z_max": Z_MAX})


def f6_checks() -> list[Check]:
    from scipy import integrate

    sd4 = math.sqrt(A + B)
    phi = lambda v: math.exp(-v * v / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    derived = _derived("E[x1 s(x1+x2) s'(x1+x2+x3)]")

    def step2(scale):  # a/(a+b) E[x4^2 1{x4>=0} Phi(x4/scale)], x4 ~ N(0, a+b)
        return A / (A + B) * integrate.quad(lambda u: (sd4 * u) ** 2 * _phi_cdf(sd4 * u / scale) * phi(u), 0,
                                            math.inf, epsabs=0, epsrel=1e-13)[0]

    def step3(lam):  # a int_0^oo z^2 Phi(lambda z) phi(z) dz
        return A * integrate.quad(lambda u: u * u * _phi_cdf(lam * u) * phi(u), 0, math.inf,
                                  epsabs=0, epsrel=1e-13)[0]

    lost = "the square root of the variance c: Phi(./sqrt(c))"
    return [
        *_quad_check("A.printedF.F6_conditional", "Lemma F.6", "E[x1 s(x1+x2) s'(x1+x2+x3)] (ReLU), conditional step",
                    step2(C), derived, step2(math.sqrt(C)), lost,
                    "a/(a+b) E[x4^2 1{x4>=0} Phi(x4/c)] (= E[x1 (x1+x2) 1{x1+x2>=0} Phi((x1+x2)/c)])",
                    "a/(a+b) E[x4^2 1{x4>=0} Phi(x4/sqrt(c))]"),
        *_quad_check("A.printedF.F6_integral", "Lemma F.6", "E[x1 s(x1+x2) s'(x1+x2+x3)] (ReLU), final integral",
                    step3(sd4 / C), derived, step3(sd4 / math.sqrt(C)), lost,
                    "a int_0^oo z^2 Phi(lambda z) phi(z) dz, lambda = sqrt(a+b)/c (undefined in the extraction; "
                    "the value the printed previous step implies)", "lambda = sqrt((a+b)/c)"),
    ]


def f7_checks() -> list[Check]:
    from scipy import integrate

    derived = _derived("E[x2 s(x1) s'(x1+x2+x3)]")

    def value(norm_a, norm_b, scale):
        # inner integral over x2 by 160-point Gauss-Hermite (x2 = sqrt(2b) t: the printed weight
        # e^{-x2^2/(2b)} becomes e^{-t^2}; the integrand is smooth); outer by adaptive quadrature,
        # the Gaussian factor being below 1e-31 beyond 12 standard deviations
        t, w = np.polynomial.hermite.hermgauss(160)
        x2 = math.sqrt(2 * B) * t
        inner = lambda x1: norm_b * math.sqrt(2 * B) * float(np.sum(w * x2 * _phi_cdf((x1 + x2) / scale)))  # noqa: E731
        return integrate.quad(lambda x1: x1 * norm_a * math.exp(-x1 * x1 / (2 * A)) * inner(x1), 0,
                              12 * math.sqrt(A), epsabs=1e-16, epsrel=1e-12, limit=200)[0]

    sq_a, sq_b = 1 / math.sqrt(2 * math.pi * A), 1 / math.sqrt(2 * math.pi * B)
    pr_a, pr_b = 1 / (2 * math.pi * A), 1 / (2 * math.pi * B)
    restored = value(sq_a, sq_b, math.sqrt(C))
    as_printed = value(pr_a, pr_b, C)
    form = ("int_0^oo x1 (2 pi a)^-1 e^{-x1^2/(2a)} (int x2 Phi((x1+x2)/c) (2 pi b)^-1 e^{-x2^2/(2b)} dx2) dx1")
    # one lost symbol at a time (each its own root cause), then the whole formula as printed
    density = _quad_check("A.printedF.F7_density", "Lemma F.7",
                          "E[x2 s(x1) s'(x1+x2+x3)] (ReLU), the printed normal densities", value(pr_a, pr_b, math.sqrt(C)),
                          derived, restored, "the square roots of the normal densities: (2 pi a)^(-1/2), (2 pi b)^(-1/2)",
                          form + " with Phi(./sqrt(c))", "(2 pi a)^(-1/2), (2 pi b)^(-1/2)")
    phi = _quad_check("A.printedF.F7_phi", "Lemma F.7", "E[x2 s(x1) s'(x1+x2+x3)] (ReLU), the printed Phi((x1+x2)/c)",
                      value(sq_a, sq_b, C), derived, restored, "the square root of the variance c: Phi(./sqrt(c))",
                      "E[x1 x2 1{x1>=0} Phi((x1+x2)/c)]", "Phi((x1+x2)/sqrt(c))")
    whole = _quad_check("A.printedF.F7", "Lemma F.7", "E[x2 s(x1) s'(x1+x2+x3)] (ReLU), the double integral as printed",
                        as_printed, derived, None, None, form, None)
    return density + phi + whole


def checks(samples: int = SAMPLES) -> tuple[Check, ...]:
    return tuple(f1_f2_checks(samples) + f3_f4_checks(samples) + [f5_f8_check(samples)] + f6_checks()
                 + f7_checks())
