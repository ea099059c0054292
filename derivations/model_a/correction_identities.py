"""Exact sympy identities that prove corrections of the claims ledger for every parameter value in a
stated domain (docs/claims.md, "Strength": ``proved``). Each identity is a difference ``lhs - rhs``
brought to a normal form by exact rewrites only (named below) and simplified: it is proved when the
result is exactly 0 (:func:`holds`); :func:`difference` with ``mutated=True`` puts the printed (or a
perturbed) form in place of the corrected one, which must not simplify to 0 (tests/verify/claims/test_strength.py).

* ``S_identity`` (proof of Theorem 3.1, Step 3, seed 000): every column of the attention matrix S has
  K in-group entries p and D-K out-group entries q = (1-Kp)/(D-K); S* has 1/K in-group and 0 out-group,
  so ``||S - S*||_F^2 = D (K (1/K - p)^2 + (D-K) q^2)``, which equals ``(D (1-Kp)/sqrt(K (D-K)))^2``;
  both are >= 0 for ``p <= 1/K``, so ``||S - S*||_F = D (1-Kp)/sqrt(K(D-K))``.
* ``D6_A_of_t.<activation>`` (Lemma D.6): rdyn.derivations.gaussian's closed form of
  ``A = E[s(x1) s'(x1+x2) x1]``, ``x1 ~ N(0, K p^2)``, ``x2 ~ N(0, (1-Kp)^2/(D-K))``, equals
  ``(1+kappa)^2 K p^2/4 + (1-kappa)^2 K p^2 (beta + sin(2 beta)/2)/(2 pi)``,
  ``beta = atan(sqrt(K(D-K)) p/(1-Kp))`` (ReLU: kappa = 0). Rewrite used:
  ``acos(x) = pi/2 - atan(x/sqrt(1-x^2))`` for ``0 <= x < 1``.
* ``D8_coefficient.<activation>`` (proof of Lemma D.8): the in-group coefficient of grad_{W_KQ} L
  derived from the collapsed map, ``-(C2(t+1) - C2(t))/eta`` of rdyn.derivations.model_a.catalog's
  ``C2_next_positive`` written in p, equals ``-(C1 M/D)((F4/p - F3)/K - C1 (F2_1 - p F1))`` with the
  activation's Appendix F expectations (identity, ReLU, Leaky ReLU with kappa symbolic). Exact route for
  ReLU and Leaky ReLU (both sides carry arctan/arccos terms): ``acos(x) = atan(sqrt(1-x^2)/x)`` for
  ``0 < x <= 1``, then ``p = tau/(sqrt(K N) + K tau)`` with ``tau = tan(beta) > 0`` (a bijection onto
  ``0 < p < 1/K``), after which every angle is ``atan(1/tau)``, ``atan(-1/tau) = -atan(1/tau)`` or
  ``atan(tau) = pi/2 - atan(1/tau)`` and is replaced by one symbol ``theta``: the rest is algebraic.

* ``F3_restored``, ``F4_restored``, ``F6_restored.conditional``, ``F6_restored.integral``,
  ``F7_restored`` (Lemmas F.3, F.4, F.6, F.7 as restored, ReLU): each restored intermediate form
  (the extraction's lost square roots put back) equals rdyn.derivations.gaussian's closed form of the
  expectation it stands for, for every a, b, c > 0 (the variances of x1, x2, x3). The forms are
  integrated by sympy (``integrate``, exact); F.3/F.4 first over z2 (the indicator gives a normal tail),
  F.7's inner integral after Gaussian integration by parts
  (``x2 e^{-x2^2/(2b)} = -b d/dx2 e^{-x2^2/(2b)}``, boundary terms 0). Rewrites used to compare:
  ``acos(x) = pi/2 - atan(x/sqrt(1-x^2))`` and ``atan(y) + atan(1/y) = pi/2`` (y > 0).

* ``B3_recursion``, ``B3_delta``, ``B3_descent.<target>``, ``B3_step_bound``, ``B3_k_bound`` (Theorem B.3,
  seed 003, the no-LN layer from alpha_0 = 0, beta_0^2 = S0): with ``g = gamma/gamma*``,
  ``sigma = S/gamma*``, ``delta = D/gamma*``, ``k = 2 eta kappa2 gamma*/d``, ``f = 1 - k sigma - k^2 g (1-g)``,
  ``eps = k^2 g (1-g)``: one GD step of (alpha, beta) gives exactly ``g' - 1 = f (g - 1)`` and
  ``delta' = (1 - k^2 (g-1)^2) delta``; with the derived loss (each target),
  ``-(1/2) eta d S F^2 - (L(gamma') - L(gamma)) = kappa2 gamma*^2 (g-1)^2 (k sigma (1 - k sigma) + eps (2 (1 - k sigma) - eps))``;
  and at the corrected ``eta_max = d/(8 kappa2 sqrt(S0^2 + 16 gamma*^2))`` (``k_max``),
  ``1/16 - k_max^2 (sigma0^2 + 4) = 12 gamma*^2/(16 (S0^2 + 16 gamma*^2))`` and
  ``1/256 - k_max^2 = S0^2/(256 (S0^2 + 16 gamma*^2))``, both >= 0. From these, for every 0 < eta <= eta_max
  (0 < k <= k_max), S0 > 0, gamma* > 0 (:data:`B3_ARGUMENT`; they back the corrections of eta_max, Part 1 and
  Part 3): on ``R = {0 <= g <= 1, 0 <= delta <= sigma0}``
  ``sigma^2 = delta^2 + 4 g^2 <= sigma0^2 + 4``, so ``k sigma <= 1/4``, ``0 <= eps <= k^2/4 <= 1/1024`` and
  ``f`` lies in ``(0, 1]``: R is invariant and contains the start, gamma_t increases to gamma* without
  overshoot, the loss ``L* + kappa2 gamma*^2 (g-1)^2`` decreases strictly while ``g != 1`` (``f < 1``: ``k sigma > 0``),
  and Part 1's bracket is >= 0. The printed ``1`` for ``S0^2`` breaks the step-size bound: at S0 = 10,
  gamma* = 1/2, ``1/16 - k^2 (sigma0^2 + 4) < 0``. The bound is sufficient, not necessary.
* ``B3_min_redundant.second``, ``.third`` (Theorem B.3's eta_max): the printed min's second and third terms
  ``d/(2 kappa2 S0)``, ``d/(2 kappa2 sqrt(2 S0 gamma*))`` exceed the first ``d/(8 kappa2 sqrt(S0^2 + 16 gamma*^2))``
  for every S0, gamma*, kappa2, d > 0: the squared ratio minus 1 is exactly ``(15 S0^2 + 256 gamma*^2)/S0^2``,
  resp. ``(8 (S0 - gamma*/16)^2 + (4095/32) gamma*^2)/(S0 gamma*)``, both > 0; so eta_max is its first term.

Lowest layer (sympy only; imports nothing above rdyn.derivations).
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

ACTIVATIONS_D6 = ("relu", "leaky")
ACTIVATIONS_D8 = ("identity", "relu", "leaky")


@dataclass(frozen=True)
class Identity:
    """One identity: the ledger correction it proves, the two sides in words and the domain."""

    name: str
    paper: str
    label: str
    lhs: str
    rhs: str
    domain: str
    rewrites: str


IDENTITIES: dict[str, Identity] = {
    "S_identity": Identity(
        "S_identity", "A", "Theorem 3.1 (proof: S identity)",
        "||S - S*||_F^2 = D (K (1/K - p)^2 + (D-K) ((1-Kp)/(D-K))^2) (the attention structure)",
        "(D (1 - K p)/sqrt(K (D-K)))^2",
        "every D > K >= 1 and 0 <= p <= 1/K (both sides of the unsquared identity are >= 0)",
        "none (a rational identity in K, D-K, 1-Kp)"),
    **{f"D6_A_of_t.{a}": Identity(
        f"D6_A_of_t.{a}", "A", "Lemma D.6",
        "E[s(x1) s'(x1+x2) x1], x1 ~ N(0, K p^2), x2 ~ N(0, (1-Kp)^2/(D-K)) (rdyn.derivations.gaussian's closed form)",
        "(1+kappa)^2 K p^2/4 + (1-kappa)^2 K p^2 (beta + sin(2 beta)/2)/(2 pi), "
        "beta = atan(sqrt(K(D-K)) p/(1-Kp))" + (" at kappa = 0" if a == "relu" else ""),
        "every D > K >= 1, 0 < p < 1/K" + (", 0 <= kappa" if a == "leaky" else ""),
        "acos(x) = pi/2 - atan(x/sqrt(1-x^2)) (0 <= x < 1)") for a in ACTIVATIONS_D6},
    **{f"D8_coefficient.{a}": Identity(
        f"D8_coefficient.{a}", "A", "Lemma D.8",
        "-(C2(t+1) - C2(t))/eta from the derived collapsed map (rdyn.derivations.model_a.catalog, C2_next_positive), in p",
        "-(C1 M/D)((F4/p - F3)/K - C1 (F2_1 - p F1)), F1..F4 the " + a + " Appendix F expectations",
        "every D > K >= 1, 0 < p < 1/K, C1 > 0, M > 0, eta > 0" + (", 0 <= kappa" if a == "leaky" else ""),
        "none" if a == "identity" else
        "acos(x) = atan(sqrt(1-x^2)/x) (0 < x <= 1); p = tau/(sqrt(K N) + K tau), tau > 0; "
        "atan(-y) = -atan(y), atan(tau) = pi/2 - atan(1/tau) (tau > 0)") for a in ACTIVATIONS_D8},
    **{name: Identity(
        name, "A", label, lhs, "rdyn.derivations.gaussian's closed form of " + expectation + " (ReLU)",
        "every a, b, c > 0 (the variances of x1, x2, x3)", rewrites)
       for name, label, lhs, expectation, rewrites in (
           ("F3_restored", "Lemma F.3 (intermediate)", "a E[z1^2 1{z1 >= 0} 1{sqrt(a) z1 + sqrt(b) z2 >= 0}], z1, z2 iid N(0,1)",
            "E[x1 s(x1) s'(x1+x2)]", "integrate over z2 then z1; acos(x) = pi/2 - atan(x/sqrt(1-x^2)); atan(y) + atan(1/y) = pi/2"),
           ("F4_restored", "Lemma F.4 (intermediate)", "sqrt(ab) E[z1 z2 1{z1 >= 0} 1{sqrt(a) z1 + sqrt(b) z2 >= 0}], z1, z2 iid N(0,1)",
            "E[x2 s(x1) s'(x1+x2)]", "integrate over z2 then z1; acos(x) = pi/2 - atan(x/sqrt(1-x^2)); atan(y) + atan(1/y) = pi/2"),
           ("F6_restored.conditional", "Lemma F.6 (intermediates)", "a/(a+b) E[x4^2 1{x4 >= 0} Phi(x4/sqrt(c))], x4 ~ N(0, a+b)",
            "E[x1 s(x1+x2) s'(x1+x2+x3)]", "acos(x) = pi/2 - atan(x/sqrt(1-x^2)); atan(y) + atan(1/y) = pi/2"),
           ("F6_restored.integral", "Lemma F.6 (intermediates)", "a int_0^oo z^2 Phi(lambda z) phi(z) dz, lambda = sqrt((a+b)/c)",
            "E[x1 s(x1+x2) s'(x1+x2+x3)]", "acos(x) = pi/2 - atan(x/sqrt(1-x^2)); atan(y) + atan(1/y) = pi/2"),
           ("F7_restored", "Lemma F.7 (intermediate)",
            "int_0^oo x1 (2 pi a)^(-1/2) e^{-x1^2/(2a)} (int x2 Phi((x1+x2)/sqrt(c)) (2 pi b)^(-1/2) e^{-x2^2/(2b)} dx2) dx1",
            "E[x2 s(x1) s'(x1+x2+x3)]", "Gaussian integration by parts in x2 (boundary terms 0); "
            "acos(x) = pi/2 - atan(x/sqrt(1-x^2)); atan(y) + atan(1/y) = pi/2"))},
}


B3_ARGUMENT = (
    "for every 0 < eta <= d/(8 kappa2 sqrt(S0^2 + 16 gamma*^2)), S0 > 0, gamma* > 0: on R = {0 <= g <= 1, 0 <= delta <= "
    "sigma0} (containing the start g = 0, delta = sigma0), sigma^2 = delta^2 + 4 g^2 <= sigma0^2 + 4 so k sigma <= 1/4 "
    "(B3_step_bound) and eps = k^2 g (1-g) <= 1/1024 (B3_k_bound), hence 0 < f <= 1: g' - 1 = f (g - 1) (B3_recursion) "
    "keeps g <= g' <= 1 and delta' = (1 - k^2 (g-1)^2) delta (B3_delta) keeps 0 <= delta' <= delta: R is invariant; "
    "gamma_t increases to gamma* with no overshoot; L - L* = kappa2 gamma*^2 (g-1)^2 decreases strictly while g != 1 "
    "(f < 1 as k sigma > 0); Part 1's slack (B3_descent) is kappa2 gamma*^2 (g-1)^2 times a bracket >= 0; and "
    "linear convergence (Part 3): g_t >= g_1 = k sigma0 for t >= 1 and sigma >= 2 g, so "
    "|g_{t+1} - 1| <= (1 - 2 k^2 sigma0) |g_t - 1|")

for _name, _lhs, _rhs in (
        ("B3_recursion", "gamma_{t+1}/gamma* - 1 from alpha' = alpha - eta beta F, beta' = beta - eta alpha F "
         "(F = L'(gamma)/d of the derived loss, gamma = alpha beta)", "f (g - 1), f = 1 - k sigma - k^2 g (1 - g)"),
        ("B3_delta", "(beta'^2 - alpha'^2)/gamma*", "(1 - k^2 (g-1)^2) (beta^2 - alpha^2)/gamma*"),
        ("B3_descent.unnormalized", "-(1/2) eta d S F^2 - (L(gamma') - L(gamma)) (the derived loss, unnormalized target)",
         "kappa2 gamma*^2 (g-1)^2 (k sigma (1 - k sigma) + eps (2 (1 - k sigma) - eps))"),
        ("B3_descent.normalized", "-(1/2) eta d S F^2 - (L(gamma') - L(gamma)) (the derived loss, normalized target)",
         "kappa2 gamma*^2 (g-1)^2 (k sigma (1 - k sigma) + eps (2 (1 - k sigma) - eps))"),
        ("B3_step_bound", "1/16 - k_max^2 (sigma0^2 + 4), k_max = 2 eta_max kappa2 gamma*/d at the corrected eta_max",
         "12 gamma*^2/(16 (S0^2 + 16 gamma*^2)) (>= 0)"),
        ("B3_k_bound", "1/256 - k_max^2", "S0^2/(256 (S0^2 + 16 gamma*^2)) (>= 0)")):
    for _label in ("Theorem B.3 (eta_max)", "Theorem B.3 (Part 1)", "Theorem B.3 (Part 3)"):
        IDENTITIES[f"{_name}@{_label}"] = Identity(
            _name, "B", _label, _lhs, _rhs, "every d >= 1, kappa2 > 0, gamma* > 0, S0 > 0, 0 < eta <= eta_max "
            "(corrected); alpha_0 = 0, beta_0^2 = S0", "none (polynomial identities; the argument: " + B3_ARGUMENT + ")")
del _name, _lhs, _rhs, _label

# eta_max's min: the second and third printed terms are never the smallest. With t1 = d/(8 kappa2 sqrt(S0^2 +
# 16 gamma*^2)), t2 = d/(2 kappa2 S0), t3 = d/(2 kappa2 sqrt(2 S0 gamma*)), all positive, (t_i/t1)^2 - 1 equals a
# quotient of polynomials with positive coefficients (a sum of squares for t3), so t_i > t1 for every
# S0, gamma*, kappa2, d > 0 and eta_max = t1: the identities below are exact (lhs - rhs simplifies to 0).
for _name, _lhs, _rhs in (
        ("B3_min_redundant.second", "(t2/t1)^2 - 1, t1 = d/(8 kappa2 sqrt(S0^2 + 16 gamma*^2)), t2 = d/(2 kappa2 S0)",
         "(15 S0^2 + 256 gamma*^2)/S0^2 (> 0)"),
        ("B3_min_redundant.third", "(t3/t1)^2 - 1, t3 = d/(2 kappa2 sqrt(2 S0 gamma*))",
         "(8 (S0 - gamma*/16)^2 + (4095/32) gamma*^2)/(S0 gamma*) (> 0)")):
    IDENTITIES[_name] = Identity(
        _name, "B", "Theorem B.3 (eta_max)", _lhs, _rhs, "every S0, gamma*, kappa2, d > 0 (t1, t2, t3 > 0, so "
        "(t_i/t1)^2 > 1 gives t_i > t1: the min of the three terms is t1)",
        "none (rational identities in S0, gamma*; the right side has positive coefficients, resp. is a sum of squares)")
del _name, _lhs, _rhs


def _b3_min(name: str, mutated: bool) -> sp.Expr:
    """(t_i/t1)^2 - 1 - rhs for t_i the second or third term of eta_max (mutated: the printed 1 for S0^2 in t1,
    whose quotient is not this rational function)."""
    gs, d, k2, S0 = sp.symbols("gamma_s d kappa2 S0", positive=True)
    c = 1 if mutated else S0**2
    t1 = d / (8 * k2 * sp.sqrt(c + 16 * gs**2))
    if name == "B3_min_redundant.second":
        ti, rhs = d / (2 * k2 * S0), (15 * S0**2 + 256 * gs**2) / S0**2
    else:
        ti, rhs = d / (2 * k2 * sp.sqrt(2 * S0 * gs)), (8 * (S0 - gs / 16) ** 2 + sp.Rational(4095, 32) * gs**2) / (S0 * gs)
    return sp.expand((ti / t1) ** 2 - 1 - rhs)


def _b3(name: str, mutated: bool) -> sp.Expr:
    from rdyn.derivations import model_b as mb

    al, be, gs, k, d, k2, S0 = sp.symbols("alpha beta gamma_s k d kappa2 S0", positive=True)
    eta = k * d / (2 * k2 * gs)
    if name in ("B3_step_bound", "B3_k_bound"):
        c = 1 if mutated else S0**2                     # mutated: the printed 1 for S0^2
        kmax = 2 * (d / (8 * k2 * sp.sqrt(c + 16 * gs**2))) * k2 * gs / d
        if name == "B3_k_bound":
            return sp.Rational(1, 256) - kmax**2 - S0**2 / (256 * (S0**2 + 16 * gs**2))
        return sp.Rational(1, 16) - kmax**2 * ((S0 / gs) ** 2 + 4) - 12 * gs**2 / (16 * (S0**2 + 16 * gs**2))
    target = name.split(".")[1] if "." in name else "unnormalized"
    col = mb.noln_collapsed()[target]
    loss = col["loss"].subs({mb.kappa2: k2, mb.d: d})
    Fg = col["F"].subs({mb.kappa2: k2, mb.d: d})
    star = col["gamma_star"].subs({mb.kappa2: k2})
    # gamma* as a symbol: kappa3 (normalized) or kappa1 (unnormalized) eliminated through gamma* = star
    solve_for = mb.kappa3 if target == "normalized" else mb.kappa1
    (sub,) = sp.solve(sp.Eq(star, gs), solve_for)
    loss, Fg = sp.expand(loss.subs(solve_for, sub)), sp.expand(Fg.subs(solve_for, sub))
    g0 = al * be
    F0 = Fg.subs(mb.gamma, g0)
    a1, b1 = al - eta * be * F0, be - eta * al * F0
    g, sigma = g0 / gs, (al**2 + be**2) / gs
    f = 1 - k * sigma - k**2 * g * (1 - g)
    if name == "B3_recursion":
        return sp.expand(a1 * b1 / gs - 1 - (f if not mutated else f + k**2 * g * (1 - g)) * (g - 1))
    if name == "B3_delta":
        shrink = 1 - k**2 * (g - 1) ** 2 if not mutated else 1 - k**2 * g**2
        return sp.expand((b1**2 - a1**2) / gs - shrink * (be**2 - al**2) / gs)
    eps = k**2 * g * (1 - g)
    S = al**2 + be**2
    lhs = -eta * d * S * F0**2 / 2 - (loss.subs(mb.gamma, a1 * b1) - loss.subs(mb.gamma, g0))
    bracket = k * sigma * (1 - k * sigma) + eps * (2 * (1 - k * sigma) - eps)
    return sp.expand(lhs - k2 * gs**2 * (g - 1) ** 2 * (bracket if not mutated else bracket + eps))


def _phi(v):
    return sp.exp(-v**2 / 2) / sp.sqrt(2 * sp.pi)


def _Phi(v):
    return (1 + sp.erf(v / sp.sqrt(2))) / 2


def _restored_f(name: str, mutated: bool) -> sp.Expr:
    """restored form - closed form (mutated: the form as printed, with the variances for the standard
    deviations), ReLU, every a, b, c > 0."""
    from rdyn.derivations import gaussian as g

    a, b, c = sp.symbols("a b c", positive=True)
    z1, z2 = sp.symbols("z1 z2", real=True)
    x = sp.Symbol("x", positive=True)
    m = mutated
    if name in ("F3_restored", "F4_restored"):
        k = a / b if m else sp.sqrt(a / b)
        if name == "F3_restored":
            inner = sp.integrate(_phi(z2), (z2, -k * z1, sp.oo))
            form = a * sp.integrate((z1**2 * inner * _phi(z1)).subs(z1, x), (x, 0, sp.oo))
            expectation = "E[x1 s(x1) s'(x1+x2)]"
        else:
            inner = sp.integrate(z2 * _phi(z2), (z2, -k * z1, sp.oo))
            form = (a * b if m else sp.sqrt(a * b)) * sp.integrate((z1 * inner * _phi(z1)).subs(z1, x), (x, 0, sp.oo))
            expectation = "E[x2 s(x1) s'(x1+x2)]"
    elif name == "F6_restored.conditional":
        s4, sc = sp.sqrt(a + b), (c if m else sp.sqrt(c))
        form = a / (a + b) * sp.integrate(x**2 * _Phi(x / sc) * _phi(x / s4) / s4, (x, 0, sp.oo))
        expectation = "E[x1 s(x1+x2) s'(x1+x2+x3)]"
    elif name == "F6_restored.integral":
        lam = sp.sqrt(a + b) / c if m else sp.sqrt((a + b) / c)
        form = a * sp.integrate(x**2 * _Phi(lam * x) * _phi(x), (x, 0, sp.oo))
        expectation = "E[x1 s(x1+x2) s'(x1+x2+x3)]"
    elif name == "F7_restored":
        na, nb = (1 / (2 * sp.pi * a), 1 / (2 * sp.pi * b)) if m else (1 / sp.sqrt(2 * sp.pi * a), 1 / sp.sqrt(2 * sp.pi * b))
        sc = c if m else sp.sqrt(c)
        # x2 e^{-x2^2/(2b)} = -b d/dx2 e^{-x2^2/(2b)}: integration by parts (boundary terms vanish)
        inner = b * sp.integrate(nb * sp.exp(-z2**2 / (2 * b)) * sp.diff(_Phi((x + z2) / sc), z2), (z2, -sp.oo, sp.oo))
        form = sp.integrate(x * na * sp.exp(-x**2 / (2 * a)) * inner, (x, 0, sp.oo))
        expectation = "E[x2 s(x1) s'(x1+x2+x3)]"
    else:
        raise KeyError(name)
    closed = g.appendix_f(expectation, "relu").subs({g.a_var: a, g.b_var: b, g.c_var: c}, simultaneous=True)
    closed = closed.replace(sp.acos, lambda y: sp.pi / 2 - sp.atan(y / sp.sqrt(1 - y**2)))
    return _pair_atans(form - closed)


def _pair_atans(e: sp.Expr) -> sp.Expr:
    """Replace atan(1/y) by pi/2 - atan(y) wherever both occur (y > 0 certain)."""
    e = e.replace(sp.atan, lambda y: sp.atan(sp.simplify(y)))
    angles = sorted(e.atoms(sp.atan), key=sp.default_sort_key)
    for u in angles:
        for v in angles:
            if u != v and u.args[0].is_positive and e.has(u) and e.has(v) and sp.simplify(u.args[0] * v.args[0] - 1) == 0:
                e = e.subs(v, sp.pi / 2 - u)
    return e


def _s_identity(mutated: bool) -> sp.Expr:
    K, N, w = sp.symbols("K N w", positive=True)   # N = D - K, w = 1 - K p
    p = (1 - w) / K
    D = K + N
    squared = D * (K * (1 / K - p) ** 2 + N * (w / N) ** 2)
    claim = D * w / (sp.sqrt(K * N) if not mutated else K * N)   # mutated: the printed K (D-K)
    return squared - claim**2


def _f_values(activation: str, K, N, p) -> dict:
    """F1..F4 as Appendix F expectations (the definitions of rdyn.verification.checks.model_a)."""
    from rdyn.derivations import gaussian as g

    q = (1 - K * p) / N
    var = K * p**2 + N * q**2

    def f(name, a, b, c=sp.Integer(1)):
        return g.appendix_f(name, activation).subs({g.a_var: a, g.b_var: b, g.c_var: c}, simultaneous=True)

    return {"F1": f("E[x s(x) s'(x)]", var, 0),
            "F2_1": f("E[x1 s(x1+x2) s'(x1+x2)]", p**2, var - p**2),
            "F3": f("E[s(x1) s(x1+x2)]", K * p**2, N * q**2),
            "F4": f("E[x1 s(x1+x2) s'(x1+x2+x3)]", p**2, (K - 1) * p**2, N * q**2)}


def _d6(activation: str, mutated: bool) -> sp.Expr:
    from rdyn.derivations import gaussian as g

    K, N, w, p = sp.symbols("K N w p", positive=True)   # w = 1 - K p > 0 (an independent positive symbol)
    kappa = sp.Symbol("kappa", nonnegative=True)
    engine = g.appendix_f("E[x1 s(x1) s'(x1+x2)]", activation)
    engine = engine.replace(sp.acos, lambda x: sp.pi / 2 - sp.atan(x / sp.sqrt(1 - x**2)))
    engine = engine.subs({g.a_var: K * p**2, g.b_var: w**2 / N, g.kappa: kappa}, simultaneous=True)
    k = kappa if activation == "leaky" else sp.Integer(0)
    if mutated:   # as printed: no square root in the arctan, no sin(2 beta) term
        b = sp.atan(K * N * p / w)
        form = (1 + k) ** 2 * K * p**2 / 4 + (1 - k) ** 2 * K * p**2 * b / (2 * sp.pi)
    else:
        b = sp.atan(sp.sqrt(K * N) * p / w)
        form = (1 + k) ** 2 * K * p**2 / 4 + (1 - k) ** 2 * K * p**2 * (b + sp.sin(2 * b) / 2) / (2 * sp.pi)
    return sp.expand_trig(engine - form)


def _d8(activation: str, mutated: bool) -> sp.Expr:
    from rdyn.derivations.model_a import collapsed as ma
    from rdyn.derivations.model_a.catalog import model_a_expressions

    K, N, C1, M = ma.K, ma.N, ma.C1, ma.vstar_norm2     # the catalogue's symbols (positive)
    p = sp.Symbol("p", positive=True)
    F = _f_values(activation, K, N, p)
    sign = 1 if mutated else -1                          # mutated: the printed + p F1
    corrected = -(C1 * M / (K + N)) * ((F["F4"] / p - F["F3"]) / K - C1 * (F["F2_1"] + sign * p * F["F1"]))

    def to_p(e):
        return ma.to_internal(e).subs(ma.out_group_ratio, (1 / p - K) / N)

    derived = to_p(ma.to_public(-(ma.to_internal(to_p(model_a_expressions(activation)["C2_next_positive"]))
                                  - ma.C2) / ma.eta))
    diff = derived - corrected
    if activation == "identity":
        return diff
    tau, theta = sp.Symbol("tau", positive=True), sp.Symbol("theta", positive=True)
    diff = diff.replace(sp.acos, lambda x: sp.atan(sp.sqrt(1 - x**2) / x))
    diff = diff.subs(p, tau / (sp.sqrt(K * N) + K * tau))
    diff = diff.replace(sp.atan, lambda y: sp.atan(sp.factor(sp.simplify(y))))
    diff = diff.subs({sp.atan(1 / tau): theta, sp.atan(-1 / tau): -theta, sp.atan(tau): sp.pi / 2 - theta})
    if diff.has(sp.atan):
        raise ValueError(f"D8 identity ({activation}): an angle other than atan(1/tau) is left")
    return diff


def difference(name: str, mutated: bool = False) -> sp.Expr:
    """``lhs - rhs`` of the identity ``name`` after the exact rewrites (mutated: the printed form)."""
    if name == "S_identity":
        return _s_identity(mutated)
    if name.startswith("B3_min_redundant."):
        return _b3_min(name, mutated)
    if name.startswith("B3_"):
        return _b3(name.split("@")[0], mutated)
    if name.startswith(("F3_", "F4_", "F6_", "F7_")):
        return _restored_f(name, mutated)
    kind, activation = name.split(".")
    if kind == "D6_A_of_t":
        return _d6(activation, mutated)
    if kind == "D8_coefficient":
        return _d8(activation, mutated)
    raise KeyError(name)


def holds(name: str, mutated: bool = False) -> bool:
    """True iff the difference simplifies to exactly 0 (the proof)."""
    return sp.simplify(difference(name, mutated)) == 0


def for_label(paper: str, label: str) -> tuple[Identity, ...]:
    """The identities that prove the correction of the ledger entry ``(paper, label)``."""
    return tuple(i for i in IDENTITIES.values() if (i.paper, i.label) == (paper, label))
