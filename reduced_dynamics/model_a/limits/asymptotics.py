"""Large-D behaviour of Model A's phase limits at fixed K, evaluated from the derivation
(:mod:`rdyn.derivations.model_a.asymptotics`) and checked against the slow-manifold quadrature
(:func:`rdyn.reduced_dynamics.model_a.limits.flow.slow_limits`).

At logit scale D (seed), with N = D - K and v = ||V*||_F^2:
``tau_star = D N^2 (I0 + I1 N^{-1/2} + O(log N / N))``; at scale sqrt(D) the same divided by D.
``tau1 -> log(1/(1 - t1_fraction)) / lambda_inf``. Late loss ``~ c_L / tau`` (tau = eta t).

Smooth activations (erf, tanh, GELU, softplus, sigmoid, formulas):
:func:`smooth_asymptotic_summary`, from :func:`rdyn.derivations.model_a.asymptotics.smooth_leading`
(I0 from the identity's inner and outer integrals and three Gaussian moments at the teacher's
scale ``a = sqrt(||V*||^2 / (M K))``; tau1's limit from phase one's rate Q; c_L the
identity's). The moments are closed forms where sympy finds them (erf, GELU), else 30-digit
mpmath quadratures of the derived integrands. I1 is not derived (said in the output), and the
check is the slow-manifold quadrature of :mod:`rdyn.reduced_dynamics.model_a.limits.smooth_flow`.
"""
from __future__ import annotations

import math

import sympy as sp

from rdyn.derivations.model_a import asymptotics as da
from rdyn.derivations.model_a import collapsed as ma
from rdyn.derivations.fields import FieldError


def _subs(expr, K, vstar_norm2, kappa, D=None):
    values = {ma.K: K, ma.vstar_norm2: sp.Rational(repr(vstar_norm2)),
              ma.kappa: sp.Rational(repr(kappa))}
    if D is not None:
        values[ma.D] = D
    return (sp.Integer(expr) if isinstance(expr, int) else expr).subs(values)


def tau_star_exponent(logit_scale: str = "D") -> int:
    """Exponent of D in ``tau_star = lim eta T*`` as D -> oo at fixed K: the leading term of
    :func:`rdyn.derivations.model_a.asymptotics.tau_star_expansion` is ``D (D-K)^2 I0`` with ``I0 != 0``
    (logits / D, exponent 3), and ``tau_star(sqrtD) = tau_star(D) / D``
    (:func:`rdyn.derivations.model_a.asymptotics.scale_relation`, exponent 2)."""
    if logit_scale not in ("D", "sqrtD"):
        raise ValueError(f"unknown logit scale {logit_scale!r}")
    return 3 if logit_scale == "D" else 2


def asymptotic_summary(activation: str, logit_scale: str = "D", K: int = 4,
                       vstar_norm2: float = 1.0, kappa: float = 0.1, t1_fraction: float = 0.95,
                       check_D=(10**3, 10**4, 10**5, 10**6), digits: int = 30) -> dict:
    """Exponents, constants (closed form and ``digits`` digits) and next corrections of
    tau_star, tau1 and the late loss constant as D -> oo, with the slow-manifold values at
    ``check_D`` (relative deviation from the two-term expansion, and the leading term alone)."""
    expansion = da.tau_star_expansion(activation)
    extra = 0 if logit_scale == "D" else 1  # tau_star(sqrtD) = tau_star(D) / D
    assert da.scale_relation(activation)
    I0 = _subs(expansion.I0, K, vstar_norm2, kappa)
    I1 = _subs(expansion.I1, K, vstar_norm2, kappa)
    rate = _subs(da.phase_one_rate_limit(activation), K, vstar_norm2, kappa)
    tau1_inf = sp.log(1 / (1 - sp.Rational(repr(t1_fraction)))) / rate
    l2, g2, c_L = da.late_loss_constant(activation, logit_scale)
    c_L_lead = sp.limit(_subs(c_L, K, vstar_norm2, kappa) / ma.D ** (3 - extra), ma.D, sp.oo)

    def n(x):
        return sp.N(x, digits)

    closed = da.slow_integral_closed_form(activation)
    out = {
        "activation": activation, "logit_scale": logit_scale, "K": K,
        "vstar_norm2": vstar_norm2, "kappa": kappa if activation == "leaky" else None,
        "tau_star": {
            "exponent": tau_star_exponent(logit_scale),
            "form": f"D^{1 - extra} (D-K)^2 (I0 + I1 (D-K)^(-1/2) + O(log D / D))",
            "I0": str(expansion.I0), "I1": str(expansion.I1),
            "I0_value": float(I0), "I1_value": float(I1),
            "I0_digits": str(n(I0)), "I1_digits": str(n(I1)),
            "next_correction_exponent": -0.5 if I1 != 0 else None,
            "closed_form": None if closed is None else
            f"D^{1 - extra} * ({closed})  (tau_star - tau1, from e = 1 to K/(D-K))",
        },
        "tau1": {"exponent": 0, "limit": str(tau1_inf), "limit_digits": str(n(tau1_inf)),
                 "rate_limit": str(rate)},
        "late_loss": {"c_L": str(c_L), "exponent": 3 - extra, "leading_coefficient": str(c_L_lead),
                      "form": "excess loss ~ c_L / (eta t) as t -> oo"},
        "checks": [],
    }
    if check_D:
        from rdyn.reduced_dynamics.model_a.limits.flow import LimitsUnavailable, phase_limits
        from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, Thresholds

        previous = None
        for Dv in check_D:
            config = TeacherConfig(int(Dv), K, activation, kappa=kappa, vstar_norm2=vstar_norm2,
                                   logit_scale=logit_scale)
            try:
                limits = phase_limits(config, "slow", Thresholds(t1_fraction))
            except LimitsUnavailable:
                raise FieldError("vstar_norm2", f"{{vstar_norm2}} {vstar_norm2}: the slow-manifold "
                                 f"limits that check the expansion at D = {int(Dv)} cannot be "
                                 "computed in float64; rerun with {no_check}", "no_check") from None
            Nv = Dv - K
            lead = float(I0) * Dv ** (1 - extra) * Nv**2
            out["checks"].append(_check_row(Dv, limits, lead, float(I1 / I0) / math.sqrt(Nv),
                                            tau1_inf, previous))
            previous = (Dv, float(limits.tau_star))
    return out


def _check_row(Dv, limits, lead: float, correction: float | None, tau1_inf, previous) -> dict:
    """One row of ``checks``: the slow-manifold limits at D = ``Dv`` against the leading term
    ``lead`` (and ``lead (1 + correction)`` + tau1 where the correction is derived, else
    None), tau1 against its limit, the local exponent from the ``previous`` (D, tau_star)."""
    tau_star, tau1 = float(limits.tau_star), float(limits.tau1)
    return {"D": int(Dv), "tau_star_slow": tau_star, "ratio_to_leading": tau_star / lead,
            "rel_dev_two_term": None if correction is None else
            tau_star / (lead * (1 + correction) + tau1) - 1,
            "tau1_slow": tau1, "tau1_dev": tau1 - float(tau1_inf),
            "local_exponent": None if previous is None else
            math.log(tau_star / previous[1]) / math.log(Dv / previous[0])}


def text(summary: dict) -> str:
    if "moments" in summary:
        return _smooth_text(summary)
    t, a, L = summary["tau_star"], summary["tau1"], summary["late_loss"]
    lines = [f"Model A large-D asymptotics: {summary['activation']}, logits/{summary['logit_scale']}, "
             f"K={summary['K']}, ||V*||^2={summary['vstar_norm2']}",
             f"  tau_star = eta T* ~ {t['form']}",
             f"    exponent of D: {t['exponent']}; I0 = {t['I0']} = {t['I0_digits']}",
             f"    I1 = {t['I1']} = {t['I1_digits']}",
             *([f"    exact: {t['closed_form']}"] if t["closed_form"] else []),
             f"  tau1 = eta t1 -> {a['limit']} = {a['limit_digits']} (C1 rate lambda -> {a['rate_limit']})",
             f"  late excess loss ~ c_L/(eta t), c_L = {L['c_L']} ~ {L['leading_coefficient']} D^{L['exponent']}"]
    for c in summary["checks"]:
        lines.append(f"  D={c['D']:>8}: slow tau_star = {c['tau_star_slow']:.12e}  /leading = "
                     f"{c['ratio_to_leading']:.8f}  two-term rel. dev = {c['rel_dev_two_term']:.2e}  "
                     f"tau1 - limit = {c['tau1_dev']:.2e}"
                     + (f"  local exponent = {c['local_exponent']:.5f}" if c["local_exponent"] else ""))
    return "\n".join(lines)


def _gaussian_average(f, a, digits: int):
    """E[f(a Z)], Z ~ N(0, 1), by mpmath quadrature at ``digits`` + 10 digits (local precision)."""
    import mpmath

    from rdyn.derivations import activations as act

    g = sp.lambdify(act.x, f, modules="mpmath")
    with mpmath.workdps(digits + 10):
        A = mpmath.mpf(str(sp.N(a, digits + 10)))
        value = mpmath.quad(lambda z: g(A * z) * mpmath.exp(-z * z / 2), [-mpmath.inf, 0, mpmath.inf])
        value = value / mpmath.sqrt(2 * mpmath.pi)
        if abs(value) < mpmath.mpf(10) ** (-digits - 5):   # zero to the quadrature's digits
            return sp.Integer(0)
        return sp.Float(mpmath.nstr(value, digits + 5, min_fixed=-mpmath.inf, max_fixed=mpmath.inf), digits + 5)


NOT_DERIVED_I1 = ("I1 (the (D-K)^(-1/2) term of tau_star) is not derived for a smooth activation: "
                  "where e ~ (D-K)^(-1/2) the teacher-student correlation passes from 1/sqrt(K) to 0 "
                  "and the integrand depends on sigma through the whole bivariate law "
                  "(derivations/model_a/asymptotics.py)")


def smooth_asymptotic_summary(activation, logit_scale: str = "D", K: int = 4,
                              vstar_norm2: float = 1.0, M: int = 1, t1_fraction: float = 0.95,
                              check_D=(10**3, 10**4, 10**5, 10**6), digits: int = 30,
                              describe=None) -> dict:
    """The summary of :func:`asymptotic_summary` for a smooth ``activation``
    (:class:`rdyn.derivations.activations.Activation`; V* of M rows of equal norm): I0 and
    tau1's limit derived, I1 ``None`` (``not_derived`` says why), c_L the identity's; checked
    against the slow-manifold quadrature at ``check_D``. ValueError (one line) where the
    derivation does not go through (Q <= 0 or A = 0). ``describe(exc)``: the one-line reason
    ``not_derived`` gives for a check that stopped on a library error (default: its first line;
    the API passes one that names a FieldError's option instead of its field)."""
    lead = da.smooth_leading(activation.expression)
    a = sp.sqrt(sp.Rational(repr(vstar_norm2)) / (M * K))
    values, how = {}, {}
    for name, (f, closed) in lead.moments.items():
        if closed is not None:
            values[name], how[name] = sp.N(closed.subs(da.a_sd, a), digits + 5), "closed form"
        else:
            values[name], how[name] = _gaussian_average(f, a, digits), "30-digit quadrature"
    subs = {da.A_sym: values["A"], da.kappa_sym: values["kappa_s"], da.B_sym: values["B"]}
    exact_rate = None if lead.rate.has(da.B_sym) else lead.rate   # sigma''(0) = 0: Q = sigma'(0)^2
    rate = sp.N(lead.rate.subs(subs), digits + 5) if exact_rate is None else exact_rate
    label = activation.label
    if not rate > 0:
        raise FieldError("activation", f"{{activation}} {label}: the large-D constants are not "
                         f"derived: phase one's rate Q = sigma'(0)^2 - sigma''(0) (E[sigma(aZ)] - sigma(0)) = "
                         f"{sp.N(rate, 6)} is not > 0 (no stable linear relaxation of C1)")
    if abs(values["A"]) < sp.Float(10) ** (-digits):
        raise FieldError("activation", f"{{activation}} {label}: the large-D constants are not "
                         "derived: E[sigma'(aZ)] = 0, the outer region's C1* vanishes")
    extra = 0 if logit_scale == "D" else 1
    I0_expr = _subs(lead.I0, K, vstar_norm2, 0)
    I0 = sp.N(I0_expr.subs(subs), digits + 5)
    tau1_inf = sp.log(1 / (1 - sp.Rational(repr(t1_fraction)))) / rate
    _, _, c_L = da.late_loss_constant("identity", logit_scale)
    c_L_lead = sp.limit(_subs(c_L, K, vstar_norm2, 0) / ma.D ** (3 - extra), ma.D, sp.oo)

    def n(v):
        return str(sp.N(v, digits))

    s0, s1, s2 = lead.sigma
    out = {
        "activation": label, "logit_scale": logit_scale, "K": K, "vstar_norm2": vstar_norm2,
        "kappa": None, "M": M,
        "tau_star": {
            "exponent": tau_star_exponent(logit_scale),
            "form": f"D^{1 - extra} (D-K)^2 (I0 + o(1))",
            "I0": str(lead.I0), "I1": None, "I0_value": float(I0), "I1_value": None,
            "I0_digits": n(I0), "I1_digits": None, "next_correction_exponent": None,
            "closed_form": None,
        },
        "tau1": {"exponent": 0, "limit": n(tau1_inf) if exact_rate is None else str(tau1_inf),
                 "limit_digits": n(tau1_inf), "rate_limit": n(rate) if exact_rate is None else str(rate)},
        "late_loss": {"c_L": str(c_L), "exponent": 3 - extra,
                      "leading_coefficient": str(c_L_lead),
                      "form": "excess loss ~ c_L / (eta t) as t -> oo (the identity's c_L: "
                              "E[sigma'(aZ)^2] cancels)"},
        "moments": {
            "a": n(a), "sigma0": str(s0), "sigma1": str(s1), "sigma2": str(s2),
            **{name: {"definition": {"A": "E[sigma'(a Z)]", "kappa_s": "E[sigma'(a Z)^2]",
                                     "B": "E[sigma(a Z)] - sigma(0)"}[name],
                      "value": n(values[name]), "how": how[name]} for name in values},
        },
        "not_derived": [NOT_DERIVED_I1],
        "checks": [],
    }
    if check_D:
        from rdyn.reduced_dynamics.model_a.smooth import SmoothConfig
        from rdyn.reduced_dynamics.model_a.limits.smooth_flow import smooth_phase_limits
        from rdyn.reduced_dynamics.model_a.dynamics import Thresholds

        previous = None
        for Dv in check_D:
            config = SmoothConfig(D=int(Dv), K=K, activation=activation, M=M,
                                  vstar_norm2=vstar_norm2, logit_scale=logit_scale)
            try:
                limits = smooth_phase_limits(config, "slow", Thresholds(t1_fraction))
            except (ValueError, ArithmeticError) as exc:
                reason = describe(exc) if describe is not None else str(exc).splitlines()[0]
                out["not_derived"].append(f"slow-manifold check stopped at D = {int(Dv)}: "
                                          f"{reason}")
                break
            lead_value = float(I0) * Dv ** (1 - extra) * (Dv - K) ** 2
            out["checks"].append(_check_row(Dv, limits, lead_value, None, tau1_inf, previous))
            previous = (Dv, float(limits.tau_star))
    return out


def _smooth_text(summary: dict) -> str:
    t, a, L, m = summary["tau_star"], summary["tau1"], summary["late_loss"], summary["moments"]
    lines = [f"Model A large-D asymptotics: {summary['activation']}, logits/{summary['logit_scale']}, "
             f"K={summary['K']}, ||V*||^2={summary['vstar_norm2']}, M={summary['M']}",
             f"  tau_star = eta T* ~ {t['form']}",
             f"    exponent of D: {t['exponent']}; I0 = {t['I0']} = {t['I0_digits']}",
             f"    with a = sqrt(||V*||^2/(M K)) = {m['a']}, sigma(0) = {m['sigma0']}, "
             f"sigma'(0) = {m['sigma1']}, sigma''(0) = {m['sigma2']}:"]
    for name in ("A", "kappa_s", "B"):
        lines.append(f"      {name} = {m[name]['definition']} = {m[name]['value']} ({m[name]['how']})")
    limit = a["limit"] if a["limit"] == a["limit_digits"] else f"{a['limit']} = {a['limit_digits']}"
    lines += [f"  tau1 = eta t1 -> {limit} (phase one's C1 rate Q = {a['rate_limit']})",
              f"  late excess loss ~ c_L/(eta t), c_L = {L['c_L']} ~ {L['leading_coefficient']} "
              f"D^{L['exponent']} (the identity's: E[sigma'(aZ)^2] cancels)"]
    lines += [f"  not derived: {note}" for note in summary["not_derived"]]
    for c in summary["checks"]:
        lines.append(f"  D={c['D']:>8}: slow tau_star = {c['tau_star_slow']:.12e}  /leading = "
                     f"{c['ratio_to_leading']:.8f}  tau1 - limit = {c['tau1_dev']:.2e}"
                     + (f"  local exponent = {c['local_exponent']:.5f}" if c["local_exponent"] else ""))
    if summary["checks"]:
        lines.append("  (checks: the slow-manifold quadrature of the map, evidence for the leading "
                     "term, not a proof)")
    return "\n".join(lines)
