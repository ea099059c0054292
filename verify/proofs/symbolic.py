"""The collapsed map of Model A (seed 000, Lemma D.2; derived in :mod:`rdyn.derivations.model_a.collapsed`) in the
forms the proofs need, derived with sympy from the same catalogue expressions as every iterator.

Parameters are kept symbolic (``sK = sqrt(K)``, ``sN = sqrt(D - K)``, ``eta``, ``M = ||V*||_F^2``,
``kappa``), so one reduction serves every instance of an activation and logit scale. On the
``C1 > 0`` branch, with ``e = exp(-x/scale)``, ``x = C2 + C3`` (``C3 = K/(D-K) C2`` along the
trajectory, so ``x`` carries the whole attention state):

* ``C1' = alpha(e) C1 + beta(e)`` (affine in ``C1``; so ``C1`` enters its update once, and
  ``C1*(e) = beta/(1 - alpha)`` is the fixed point of Section D.2);
* ``Delta x = (D/(D-K)) (C2' - C2)``, a function of ``(C1, e)``.

For the region ``e -> 0`` the 0/0 quotients are written in closed form: every ``atan(c e)`` of the
map is replaced by ``z - z^3 B`` with ``z = c e`` and ``B = (z - atan z)/z^3`` a separate
variable (enclosed by :func:`rdyn.verification.proofs.region.b_enclosure`), ``C1`` by
``C1*(e) (1 + w e^3)``; then ``Delta x / e^2`` and ``(eta g2 - Delta x/e^2)/e^m`` (m = 1, or 2 where the e^1 term vanishes too: identity) are polynomial
quotients whose numerators are divided by the power of ``e`` exactly (a nonzero remainder is an
error, never dropped). ``eta g2`` (the leading late-phase constant, Lemma D.19 corrected) comes out as
``Delta x/e^2`` at ``e = 0`` and is checked against :mod:`rdyn.derivations.model_a.late_phase`.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from rdyn.derivations import gaussian as g
from rdyn.derivations.model_a import collapsed as ma
from rdyn.derivations.model_a.catalog import model_a_expressions
from rdyn.derivations.model_a.tstar_law import box_nonnegative

sK, sN = sp.symbols("sK sN", positive=True)
eta, M, kappa, s0 = sp.symbols("eta M kappa s0", positive=True)
e, w, B, C1, x = sp.symbols("e w B C1 x", real=True)
PARAMETERS = (sK, sN, eta, M, kappa, s0)
VARIABLES = frozenset({e, w, B, C1, x})


@dataclass(frozen=True)
class Reduced:
    """sympy expressions of one activation and logit scale (parameters symbolic)."""

    activation: str
    scale: str
    scale_expr: sp.Expr        # D or sqrt(D), in sK, sN
    alpha: sp.Expr             # dC1'/dC1 (e)
    beta: sp.Expr              # C1' at C1 = 0 (e)
    dx: sp.Expr                # Delta x (C1, e)
    star: sp.Expr              # C1*(e)
    star_prime: sp.Expr        # dC1*/de
    atan_coefficient: sp.Expr | None   # c in atan(c e) (None: no atan, identity)
    dx_over_e2: tuple          # (numerator, denominator) in e, w, B: Delta x / e^2
    slack_upper_over_e: tuple  # (numerator, denominator): (eta g2 - Delta x/e^2)/e^slack_power
    eta_g2: sp.Expr            # Delta x/e^2 at e = 0
    slack_power: int = 1       # the power of e dividing eta g2 - Delta x/e^2 (1; 2 for identity)
    dx_over_e2_rho: tuple = None   # (numerator, denominator) in e, w, B: Delta x/(e^2 rho), rho = 1 + w e^3 =
    #                                C1/C1* (Delta x = C1 P(C1, e) is a multiple of C1; so Delta x >= 0 wherever
    #                                this is > 0 and C1 >= 0, down to C1 = 0: :mod:`.eta_box`)
    a_over_f3: sp.Expr = None  # Lemma D.5's A(t)/(A(t)+B(t)) = A/F3 as a function of e (no 0/0); :func:`more`
    star_second: sp.Expr = None   # d^2 C1*/de^2 (Lemma D.10 corrected: uniqueness of the turning point)
    g_prime: sp.Expr = None       # d/de [A/F3 (1-Kp)/(Kp(Dp-1))] (Lemma D.12), (1-Kp)/(Kp(Dp-1)) = e(K+Ne)/(K(1-e))
    g_prime_regular: sp.Expr = None   # (1-e)^2 g_prime = (1-e) Q' + Q, Q = A/F3 e(K+Ne)/K: regular at e = 1 (the eta
    #                                   box's Lemma D.12 near the start, where Dp - 1 = N(1-e)p vanishes)
    f3: sp.Expr = None            # F3 (Lemma D.2; Lemma D.13's C1 step), a function of e
    d8_printed: tuple = None      # Lemma D.8 as printed: ((F4/p - F3)/K, F2_1 + p F1), functions of e


def _internal(expr: sp.Expr) -> sp.Expr:
    expr = expr.subs({ma.N: sN**2}).subs({ma.D: sK**2 + sN**2, ma.K: sK**2, ma.eta: eta,
                                          ma.vstar_norm2: M, ma.kappa: kappa, ma.s0: s0})
    return sp.powsimp(sp.powdenest(expr, force=True), force=True)


def _exact_quotient(numerator: sp.Expr, power: int) -> sp.Poly:
    """``numerator / e^power`` as a polynomial in e (coefficients in w, B and the parameters);
    raises if a low coefficient does not vanish identically."""
    poly = sp.Poly(sp.expand(numerator), e)
    coeffs = poly.all_coeffs()[::-1]   # c0, c1, ...
    for k in range(power):
        if k < len(coeffs) and sp.expand(coeffs[k]) != 0:
            raise ArithmeticError(f"e^{k} coefficient does not vanish: {sp.factor(coeffs[k])}")
    return sp.Poly(list(reversed(coeffs[power:])), e)


def _horner(poly: sp.Poly) -> sp.Expr:
    """Horner form in e; each coefficient expanded in (w, B)."""
    out = sp.S.Zero
    for c in poly.all_coeffs():
        out = sp.Add(sp.Mul(out, e, evaluate=False), sp.expand(c), evaluate=False) if out != 0 else sp.expand(c)
    return out


@lru_cache(maxsize=None)
def reduced(activation: str, scale: str = "D") -> Reduced:
    """The reduction of the module docstring (a few tenths of a second of sympy)."""
    xs = model_a_expressions(activation, scale)
    rename = {ma.out_group_ratio: e, ma.C1: C1}
    c1n = _internal(xs["C1_next_positive"].subs(rename))
    c2n = _internal(xs["C2_next_positive"].subs(rename))
    star = _internal(xs["C1_star"].subs(rename))
    alpha = sp.simplify(sp.diff(c1n, C1))
    assert sp.diff(alpha, C1) == 0, "C1' is not affine in C1"
    beta = sp.simplify(c1n.subs(C1, 0))
    scale_expr = sK**2 + sN**2 if scale == "D" else sp.sqrt(sK**2 + sN**2)
    dx = sp.simplify((c2n - ma.C2) * (sK**2 + sN**2) / sN**2)
    assert ma.C2 not in dx.free_symbols
    # C1* is the fixed point of the C1 update
    if not _is_zero(alpha * star + beta - star):
        raise ArithmeticError("C1* is not the fixed point of C1'")
    atans = (dx.atoms(sp.atan) | star.atoms(sp.atan) | alpha.atoms(sp.atan) | beta.atoms(sp.atan))
    coefficient = None
    if atans:
        coefficients = {sp.simplify(a.args[0] / e) for a in atans}
        assert len(coefficients) == 1 and not (next(iter(coefficients)).free_symbols & {e}), atans
        coefficient = next(iter(coefficients))
    subs_b = {} if coefficient is None else {sp.atan(coefficient * e): coefficient * e - (coefficient * e) ** 3 * B}

    def b_form(expr):
        return expr.xreplace(subs_b) if subs_b else expr

    star_b = b_form(star)
    dx_w = sp.together(b_form(dx).subs(C1, star_b * (1 + w * e**3)))
    num, den = sp.fraction(dx_w)
    q_num = _exact_quotient(num, 2)
    den_poly = sp.Poly(sp.expand(den), e)
    eta_g2 = sp.simplify(q_num.eval(0) / den_poly.eval(0))
    assert not (eta_g2.free_symbols & {w, B}), eta_g2
    # (eta g2 - N/Dd)/e^m = (eta g2 Dd - N)/(e^m Dd), m the largest power of e that divides the
    # numerator identically in w and B (at most 2: the slack is then positive at e = 0)
    slack = sp.expand(eta_g2 * den_poly.as_expr() - q_num.as_expr())
    power = 1
    s_num = _exact_quotient(slack, 1)
    try:
        s_num, power = _exact_quotient(slack, 2), 2
    except ArithmeticError:
        pass
    per_c1 = sp.cancel(dx / C1)
    assert C1 not in sp.fraction(per_c1)[1].free_symbols, "Delta x is not a polynomial multiple of C1"
    rho_num, rho_den = sp.fraction(sp.together(b_form(per_c1).subs(C1, star_b * (1 + w * e**3)) * star_b))
    rho_q = _exact_quotient(rho_num, 2)
    return Reduced(activation, scale, scale_expr, alpha, beta, dx, star, sp.diff(star, e),
                   coefficient, (_horner(q_num), _horner(den_poly)), (_horner(s_num), _horner(den_poly)), eta_g2,
                   power, (_horner(rho_q), _horner(sp.Poly(sp.expand(rho_den), e))))


@lru_cache(maxsize=None)
def more(activation: str, scale: str = "D") -> Reduced:
    """:func:`reduced` with Lemma D.5's A/(A+B) and the forms of Appendix D's remaining statements (C1*'', the derivative
    of Lemma D.12's g, F3, Lemma D.8's printed coefficient): several seconds of sympy, needed only
    when the kernel source is generated (:mod:`.kernels`, cached on disk)."""
    r = reduced(activation, scale)
    ratio = a_over_f3(activation)
    h = e * (sK**2 + sN**2 * e) / (sK**2 * (1 - e))
    g_prime = sp.diff(ratio * h, e)
    # (1-e)^2 g' = (1-e) Q' + Q for g = Q/(1-e): h (1-e) is the polynomial factor of Q, and the quotient rule
    # holds for an undefined Q (both checked exactly; comparing the expanded forms takes minutes of sympy)
    factor = e * (sK**2 + sN**2 * e) / sK**2
    Q = sp.Function("Q")(e)
    if not _is_zero(h * (1 - e) - factor) or \
            sp.simplify((1 - e) ** 2 * sp.diff(Q / (1 - e), e) - ((1 - e) * sp.diff(Q, e) + Q)) != 0:
        raise ArithmeticError("(1-e)^2 g' is not (1-e) Q' + Q")
    q = ratio * factor
    g_prime_regular = (1 - e) * sp.diff(q, e) + q
    return dataclasses.replace(r, a_over_f3=ratio, star_second=sp.diff(r.star, e, 2), g_prime=g_prime,
                               g_prime_regular=g_prime_regular,
                               f3=f_functions(activation)["F3"], d8_printed=d8_printed(activation))


def a_over_f3(activation: str) -> sp.Expr:
    """Lemma D.5/D.6: ``A/(A+B) = A/F3`` with A = E[s(p u) s'(y) p u], F3 = E[s(x1) s(x1+x2)] (the
    Appendix F expectations of :mod:`rdyn.derivations.gaussian`, as in the ledger's D.5 check) at
    ``p = 1/(K + N e)``; ``acos(sqrt(K)/sqrt(K + N e^2))`` is rewritten ``atan(sqrt(N/K) e)``
    (equal for e >= 0), so the form is regular at e = 0 (p = 1/K)."""
    p = sp.Symbol("p", positive=True)
    Ks, Ns = ma.K, ma.N
    q = (1 - Ks * p) / Ns

    def f(name, a, b):
        return g.appendix_f(name, activation).subs({g.a_var: a, g.b_var: b}, simultaneous=True)

    ratio = f("E[x1 s(x1) s'(x1+x2)]", Ks * p**2, Ns * q**2) / f("E[s(x1) s(x1+x2)]", Ks * p**2, Ns * q**2)
    ratio = sp.simplify(ratio.subs(p, 1 / (Ks + Ns * e)))
    ratio = ratio.subs({Ks: sK**2, Ns: sN**2, g.kappa: kappa})
    ratio = sp.powsimp(sp.powdenest(ratio, force=True), force=True)
    ratio = ratio.replace(lambda z: isinstance(z, sp.acos), _acos_as_atan)
    assert not ratio.atoms(sp.acos), ratio
    return sp.simplify(ratio)


def _in_e(expr: sp.Expr) -> sp.Expr:
    """An Appendix F expression in (K, N, p) as a function of e (p = 1/(K + N e), 0 <= e <= 1) in the
    proofs' parameters: ``|Kp - 1| = N e p`` and ``acos(sqrt(K N) p/sqrt(K N p^2 + (1-Kp)^2)) =
    acos(sqrt(K)/sqrt(K + N e^2)) = atan(sqrt(N/K) e)`` (e >= 0), so the form has no acos."""
    p = sp.Symbol("p", positive=True)
    out = expr.subs(p, 1 / (ma.K + ma.N * e))
    out = out.subs({ma.K: sK**2, ma.N: sN**2, g.kappa: kappa})
    out = out.replace(lambda z: isinstance(z, sp.Abs), _abs_nonneg)
    out = sp.powsimp(sp.powdenest(sp.simplify(out), force=True), force=True)
    out = out.replace(lambda z: isinstance(z, sp.acos), _acos_as_atan)
    assert not out.atoms(sp.acos) and not out.atoms(sp.Abs), out
    return sp.simplify(out)


# the domain of the rewrites below: 0 <= e <= 1, sK = sqrt(K) >= 0, sN = sqrt(D - K) >= 0 (exact box tests)
DOMAIN = {e: (0, 1), sK: (0, None), sN: (0, None)}


def _nonnegative(expr: sp.Expr) -> bool:
    """``expr >= 0`` wherever it is defined on :data:`DOMAIN`, for a rational function of (e, sK, sN): exact
    (coefficient signs after the box substitution, :func:`rdyn.derivations.model_a.tstar_law.box_nonnegative`);
    False when the test cannot show it."""
    if expr.free_symbols - set(DOMAIN):
        return False
    try:
        return box_nonnegative(expr, DOMAIN)
    except (sp.PolynomialError, sp.GeneratorsNeeded):
        return False


def _abs_nonneg(z):
    """|f| for a rational function f of (e, sK, sN) of one sign on :data:`DOMAIN`, decided exactly: f >= 0 or
    -f >= 0 there by :func:`_nonnegative` (never at a sample point); otherwise ArithmeticError."""
    inner = z.args[0]
    if _nonnegative(inner):
        return inner
    if _nonnegative(-inner):
        return -inner
    raise ArithmeticError(f"sign of {inner} not decided on 0 <= e <= 1")


def _positive_factors(y: sp.Expr) -> bool:
    """Every factor of ``y`` is >= 0 on :data:`DOMAIN`: positive numbers and symbols, ``Abs``, and powers whose
    base is shown >= 0 exactly (principal square roots and odd powers; even integer powers are >= 0 as they are)."""
    for factor in sp.Mul.make_args(y):
        if factor.is_Number:
            if not factor > 0:
                return False
        elif factor.is_Symbol:
            if not factor.is_positive:
                return False
        elif isinstance(factor, sp.Abs):
            continue
        elif factor.is_Pow and factor.exp.is_Rational:
            if not (factor.exp.is_Integer and factor.exp % 2 == 0) and not _nonnegative(factor.base):
                return False
        elif not _nonnegative(factor):
            return False
    return True


def _acos_as_atan(z):
    """``acos(y) = atan(sN e/sK)`` when ``y = sK/sqrt(sK^2 + sN^2 e^2)`` on :data:`DOMAIN`, checked exactly: ``y^2``
    minus that square cancels to 0 and every factor of y is >= 0 (so y is that positive root, in (0, 1]),
    whence ``acos(y) = atan(sqrt(1 - y^2)/y) = atan(sN |e|/sK)`` and e >= 0. Otherwise ArithmeticError."""
    y = z.args[0]
    target = sK**2 / (sK**2 + sN**2 * e**2)
    if sp.cancel(sp.together(sp.expand(y**2) - target)) != 0 or not _positive_factors(y):
        raise ArithmeticError(f"acos({y}) is not atan(sN e/sK) on 0 <= e <= 1")
    return sp.atan(sN * e / sK)


def _is_zero(expr: sp.Expr) -> bool:
    """``expr == 0`` identically, exactly (``cancel``, atoms as generators; no numeric probe)."""
    return sp.cancel(sp.together(sp.expand(expr))) == 0


@lru_cache(maxsize=None)
def f_functions(activation: str) -> dict:
    """F1, F2_1, F3, F4 of Lemma D.2 (the Appendix F expectations, as in the ledger's Lemma D.7 and
    D.8 checks: rdyn.verification.checks.model_a) as functions of e."""
    p = sp.Symbol("p", positive=True)
    K, N = ma.K, ma.N
    q = (1 - K * p) / N
    var = K * p**2 + N * q**2

    def f(name, a, b, c=sp.Integer(1)):
        return g.appendix_f(name, activation).subs({g.a_var: a, g.b_var: b, g.c_var: c}, simultaneous=True)

    raw = {"F1": f("E[x s(x) s'(x)]", var, 0), "F2_1": f("E[x1 s(x1+x2) s'(x1+x2)]", p**2, var - p**2),
           "F3": f("E[s(x1) s(x1+x2)]", K * p**2, N * q**2),
           "F4": f("E[x1 s(x1+x2) s'(x1+x2+x3)]", p**2, (K - 1) * p**2, N * q**2)}
    return {k: _in_e(v) for k, v in raw.items()}


def d8_printed(activation: str) -> tuple:
    """Lemma D.8's in-group gradient coefficient as printed, -(C1 M/D)((F4/p - F3)/K - C1 (F2_1 + p F1)):
    C2 is nondecreasing by it iff (F4/p - F3)/K >= C1 (F2_1 + p F1). Returns the two factors in e."""
    f = f_functions(activation)
    p = 1 / (sK**2 + sN**2 * e)
    return (sp.simplify((f["F4"] / p - f["F3"]) / sK**2), sp.simplify(f["F2_1"] + p * f["F1"]))


@lru_cache(maxsize=None)
def eta_structure(activation: str, scale: str = "D") -> dict:
    """The facts about eta that :mod:`.eta_box` rests on, each decided by sympy (an identity or a
    syntactic check): ``Delta x``, ``1 - alpha`` and ``beta`` are eta times functions free of eta,
    ``C1*`` is free of eta, the first step (the catalogue's ``C1 = 0`` branch) is ``C1(1) = eta
    first_c1`` with ``x(1) = x(0)`` (C2 and C3 unchanged). {fact: bool}."""
    r = reduced(activation, scale)
    xs = model_a_expressions(activation, scale)
    zero = _internal(xs["C1_next_zero"].subs({ma.out_group_ratio: e, ma.C1: C1}))

    def eta_times_free(expr):
        return _is_zero(sp.diff(sp.cancel(expr / eta), eta))

    return {"dx": eta_times_free(r.dx), "one_minus_alpha": eta_times_free(1 - r.alpha),
            "beta": eta_times_free(r.beta), "star": eta not in r.star.free_symbols,
            "first_c1": eta_times_free(zero),
            "x_unchanged_at_C1_zero": xs["C2_next_zero"] == ma.C2 and xs["C3_next_zero"] == ma.C3}
