"""Model B: collapsed alpha/beta/gamma recursions of attention with and without LN, derived.

Reproduces Appendix B (no-LN layer, Theorem 4.2), Appendix C (LN layer, Theorem 4.3) and the
looped model of Appendix A (Theorem 4.1) of Wu, Zhang, Cao (seed 003) under the conventions of
docs/models_and_conventions.md ("Model B"): unit-norm columns of ``X``, ``S = X X^T``, ``a`` uniform on S^{d-1}
independent of ``X``, losses without a factor 1/2, simultaneous GD updates, collapsed structure
``W12 = alpha I``, ``V21 = beta I`` (looped: ``w, v``), every other block zero.

Derivation (each step is a sympy computation below):

1. Output. Column ``n+1`` of ``E + V E E^T W E`` is ``(0, h)`` with ``h = a + gamma S a``
   (``gamma = alpha beta``); the data columns are untouched (``W E_j = 0``). The LN layer
   outputs ``y = h / ||h||``; the looped model ``y_L = M^L a / ||M^L a||``, ``M = I + rho S``.
2. Projection. ``tr(grad_{W12} L) = beta * E[a^T S g_h]`` and ``tr(grad_{V21} L) =
   alpha * E[a^T S g_h]`` (``g_h = dl/dh``), so ``alpha' = alpha - eta beta F``,
   ``beta' = beta - eta alpha F`` with ``F = E[a^T S g_h] / d = L'(gamma) / d`` where
   ``L(gamma)`` is the loss on the collapsed structure (chain rule; checked symbolically).
3. Reduction. ``F`` and ``L`` depend on ``(S, a)`` only through the spectral measure of ``S``
   seen from ``a``, ``mu_a = sum_i c_i^2 delta_{lambda_i}`` (``c_i = <v_i, a>``); the single
   layers only through its first two moments ``m1 = a^T S a`` and ``m2 = ||S a||^2``
   (:func:`ln_per_sample`, :func:`noln_per_sample`). The looped model needs the mass ``A`` of
   ``mu_a`` on the top eigenvalue and the rest of the measure (:func:`looped_per_sample`).
   Rotation invariance of ``a`` makes ``(c_i^2)`` Dirichlet(1/2, ..., 1/2) independent of
   ``S``; for Task 2 with two distinct eigenvalues everything is a 1-D Beta integral.
4. Closed forms: ``kappa1 = n/d`` (both tasks), ``kappa2 = n (n + d - 1) / d^2`` (Task 1) and
   ``sum m_i^2 / d`` (Task 2), from moments of uniform unit vectors (:func:`kappa_task1`).
   ``gamma*`` and irreducible losses from ``L'(gamma) = 0``; ``F_noln = 2 kappa2 (gamma -
   gamma*) / d``. Growth constants from ``gamma -> infinity`` limits (:func:`growth_limits`).
"""
from __future__ import annotations

from functools import lru_cache

import sympy as sp

from rdyn.derivations.reproducible import seeded

gamma, rho, eta = sp.symbols("gamma rho eta", real=True)
alpha, beta, F = sp.symbols("alpha beta F", real=True)
m1, m2 = sp.symbols("m1 m2", positive=True)  # a^T S a, ||S a||^2 (||a|| = 1)
n, d = sp.symbols("n d", positive=True, integer=True)
kappa1, kappa2, kappa3, kappa4 = sp.symbols("kappa1 kappa2 kappa3 kappa4", positive=True)
S0, gamma_star_sym = sp.symbols("S0 gamma_star", positive=True)


# ---------------------------------------------------------------- step 1-2: per-sample forms
def ln_per_sample() -> dict[str, sp.Expr]:
    """LN layer (Lemma C.1, eq. of F_t in C.2.1): per-sample loss and ``a^T S g_h``.

    ``y = h/r``, ``r^2 = 1 + 2 gamma m1 + gamma^2 m2``, target ``S a/||S a||``. The loss
    ``||y - t||^2 = 2 - 2 y^T t``; ``g_h = (2/r)(I - y y^T)(y - t)``. Returned in (m1, m2).
    """
    r = sp.sqrt(1 + 2 * gamma * m1 + gamma**2 * m2)
    sqm2 = sp.sqrt(m2)
    y_dot_t = (m1 + gamma * m2) / (r * sqm2)          # y^T t
    a_S_t = sqm2                                      # a^T S t = ||S a||
    a_S_y = (m1 + gamma * m2) / r                     # a^T S y
    a_S_gh = 2 / r * (-a_S_t + a_S_y * y_dot_t)       # a^T S (2/r)(I - y y^T)(y - t)
    loss = 2 - 2 * y_dot_t
    closed = -2 * (m2 - m1**2) / (sqm2 * r**3)
    return {"loss": loss, "a_S_gh": a_S_gh, "a_S_gh_closed": closed, "r": r}


def noln_per_sample(normalized: bool) -> dict[str, sp.Expr]:
    """No-LN layer (Section B.1): ``y~ = a + gamma S a``; target (1) ``S a/||S a||`` or (2) ``S a``.

    ``||y~ - t||^2`` and ``a^T S g`` with ``g = 2 (y~ - t)``, written in (m1, m2).
    """
    sqm2 = sp.sqrt(m2)
    if normalized:
        # ||a||^2 + 2g m1 - 2 m1/||Sa|| + g^2 m2 - 2 g ||Sa|| + 1
        loss = 1 + 2 * gamma * m1 - 2 * m1 / sqm2 + gamma**2 * m2 - 2 * gamma * sqm2 + 1
        a_S_gh = 2 * (m1 + gamma * m2 - sqm2)
    else:
        loss = 1 + 2 * (gamma - 1) * m1 + (gamma - 1) ** 2 * m2
        a_S_gh = 2 * (m1 + (gamma - 1) * m2)
    return {"loss": loss, "a_S_gh": a_S_gh}


def looped_per_sample(levels: int = 3, L: int | sp.Symbol = sp.Symbol("L", positive=True, integer=True)):
    """Looped LN model (Appendix A): ``Dist^2(y_L, V(X)) = P / (A + P)``.

    ``A`` = mass of ``mu_a`` on the top eigenvalue ``lam0``, ``P = sum_k c_k z_k^{2L}`` with
    ``z_k = (1 + rho lam_k)/(1 + rho lam0)`` over the other distinct eigenvalues.
    """
    lam = sp.symbols(f"lam0:{levels}", positive=True)
    c = sp.symbols(f"c0:{levels}", positive=True)
    z = [(1 + rho * lam[k]) / (1 + rho * lam[0]) for k in range(levels)]
    P = sum(c[k] * z[k] ** (2 * L) for k in range(1, levels))
    loss = P / (c[0] + P)
    return {"loss": loss, "lam": lam, "c": c, "L": L}


def ln_loss_stable_form() -> dict[str, sp.Expr]:
    """LN layer: the loss without cancellation at large gamma (where ``y^T t -> 1``).

    ``2 - 2c = 2 (1 - c^2)/(1 + c)`` with ``c = y^T t`` and ``1 - c^2 = (r^2 m2 - (m1 + gamma m2)^2)
    / (r^2 m2)``; the numerator is the polynomial ``m2 - m1^2`` (the variance of the eigenvalue
    seen from ``a``, computed as ``sum_i w_i (lam_i - m1)^2``, a sum of non-negative terms).
    """
    f = ln_per_sample()
    r2 = f["r"] ** 2
    c = (m1 + gamma * m2) / (f["r"] * sp.sqrt(m2))
    numerator = sp.expand(r2 * m2 - (m1 + gamma * m2) ** 2)
    return {"numerator": numerator, "stable_loss": 2 * (m2 - m1**2) / (r2 * m2 * (1 + c)), "c": c}


@lru_cache(maxsize=None)
@seeded
def ln_loss_stable_identity_holds() -> bool:
    """``r^2 m2 - (m1 + gamma m2)^2 = m2 - m1^2`` (polynomial identity), hence the stable loss
    ``2 (m2 - m1^2) / (r^2 m2 (1 + y^T t))`` equals ``2 - 2 y^T t``."""
    st = ln_loss_stable_form()
    return sp.expand(st["numerator"] - (m2 - m1**2)) == 0


@lru_cache(maxsize=None)
@seeded
def gaussian_route_identities(levels: int = 3) -> dict[str, bool]:
    """The identities behind the Gaussian route (reduced_dynamics/model_b/gaussian.py), derived:

    * ``gap_Q1Q2``: ``(z^T L^2 z)(z^T M^2 z) - (z^T L M z)^2 = G`` with ``M = I + gamma L`` and
      ``G = (1/2) sum_ij z_i^2 z_j^2 (l_i - l_j)^2`` (independent of gamma; Lagrange's identity);
    * ``gap_Q0Q1``: ``|z|^2 (z^T L^2 z) - (z^T L z)^2 = G`` (so ``m2 - m1^2 = G/|z|^4``);
    * ``gaussian_moments``: for ``x ~ N(0, 1)``, ``E[e^{-D x^2}] = (1 + 2D)^{-1/2}`` and
      ``E[x^2 e^{-D x^2}] / E[e^{-D x^2}] = 1/(1 + 2D)``;
    * ``gamma_representation``: ``int_0^oo t^{p-1} e^{-tQ} dt = Gamma(p) Q^{-p}``, p = 1/2, 1, 3/2, 2;
    * ``polar_weights``: with ``s = v cos^2 phi``, ``t = v sin^2 phi``, ``v = e^tau`` (Jacobian
      ``2 v cos phi sin phi``): ``s^{-1/2} t^{-1/2} ds dt / Gamma(1/2)^2 = (2/pi) v dtau dphi`` and
      ``s^{-1/2} t^{1/2} ds dt / (Gamma(1/2) Gamma(3/2)) = (4/pi) v^2 sin^2 phi dtau dphi``, the
      route's prefactors.
    """
    z = sp.symbols(f"z1:{levels + 1}", real=True)
    lam = sp.symbols(f"l1:{levels + 1}", positive=True)
    quad = lambda w: sum(wi * zi ** 2 for wi, zi in zip(w, z))  # noqa: E731
    M = [1 + gamma * li for li in lam]
    G = sp.Rational(1, 2) * sum(z[i] ** 2 * z[j] ** 2 * (lam[i] - lam[j]) ** 2
                                for i in range(levels) for j in range(levels))
    out = {"gap_Q1Q2": sp.expand(quad([li ** 2 for li in lam]) * quad([m ** 2 for m in M])
                                 - quad([li * m for li, m in zip(lam, M)]) ** 2 - G) == 0,
           "gap_Q0Q1": sp.expand(quad([1] * levels) * quad([li ** 2 for li in lam]) - quad(lam) ** 2 - G) == 0}
    x = sp.symbols("x", real=True)
    D, Q, t, v, phi = sp.symbols("D Q t v phi", positive=True)
    dens = sp.exp(-x ** 2 / 2) / sp.sqrt(2 * sp.pi)
    e0 = sp.integrate(dens * sp.exp(-D * x ** 2), (x, -sp.oo, sp.oo), conds="none")
    e2 = sp.integrate(x ** 2 * dens * sp.exp(-D * x ** 2), (x, -sp.oo, sp.oo), conds="none")
    out["gaussian_moments"] = (sp.simplify(e0 - (1 + 2 * D) ** sp.Rational(-1, 2)) == 0
                               and sp.simplify(e2 / e0 - 1 / (1 + 2 * D)) == 0)
    out["gamma_representation"] = all(
        sp.simplify(sp.integrate(t ** (p - 1) * sp.exp(-t * Q), (t, 0, sp.oo), conds="none")
                    - sp.gamma(p) * Q ** (-p)) == 0
        for p in (sp.Rational(1, 2), 1, sp.Rational(3, 2), 2))
    jac = sp.Matrix([v * sp.cos(phi) ** 2, v * sp.sin(phi) ** 2]).jacobian([v, phi]).det()
    # on 0 < phi < pi/2: cos phi = c in (0, 1), sin phi = sn = sqrt(1 - c^2); v = e^tau: dv = v dtau
    c = sp.symbols("c", positive=True)
    sn = sp.sqrt(1 - c ** 2)
    jac = jac.subs({sp.cos(phi): c, sp.sin(phi): sn})
    s_, t_ = v * c ** 2, v * sn ** 2
    w11 = s_ ** sp.Rational(-1, 2) * t_ ** sp.Rational(-1, 2) * jac * v / sp.gamma(sp.Rational(1, 2)) ** 2
    w13 = (s_ ** sp.Rational(-1, 2) * t_ ** sp.Rational(1, 2) * jac * v
           / (sp.gamma(sp.Rational(1, 2)) * sp.gamma(sp.Rational(3, 2))))
    out["polar_weights"] = (sp.simplify(w11 - 2 * v / sp.pi) == 0
                            and sp.simplify(w13 - 4 * v ** 2 * sn ** 2 / sp.pi) == 0)
    return out


@lru_cache(maxsize=None)
@seeded
def laplace_route_identities(levels: int = 3) -> dict[str, bool]:
    """The identities behind the certified Laplace route (verify/proofs/model_b/training.py, ``laplace_F``),
    derived. ``G_i > 0`` stand for independent Gamma(a_i) variables, ``S = sum G_i`` and ``w = G/S`` the
    Dirichlet masses (the integrands are homogeneous of degree 0 in G):

    * ``ln_in_gammas``: ``-2 (m2 - m1^2)/(sqrt(m2) r^3)`` at ``w = G/S`` squares to
      ``4 (B S - C^2)^2/(B A^3)`` (``B = sum l_i^2 G_i``, ``C = sum l_i G_i``, ``A = sum (1 + x l_i)^2 G_i``); both
      sides are <= 0, so they are equal;
    * ``gap_in_gammas``: ``B S - C^2 = sum_{i<j} (l_i - l_j)^2 G_i G_j`` (no ``G_i^2`` term: the Gamma
      expectation needs only ``E[G_i G_j e^{-lam.G}]``, i != j);
    * ``looped_in_gammas``: ``w_1 dP/(w_1 + P)^2 = G_1 sum e_i G_i/(G_1 + sum c_i G_i)^2`` at ``w = G/S``
      (``P = sum_{i>=2} c_i w_i``, ``dP = sum_{i>=2} e_i w_i``);
    * ``gamma_moments``: for ``G ~ Gamma(a)``, ``E[e^{-uG}] = (1 + u)^{-a}`` and ``E[G e^{-uG}] = a (1 + u)^{-a-1}``;
    * ``gamma_representation``: ``Q^{-p} = Gamma(p)^{-1} int_0^oo t^{p-1} e^{-tQ} dt`` for p = 1/2, 3/2, 2, and
      ``Gamma(1/2) Gamma(3/2) = pi/2``;
    * ``ln_angles``: ``s = rho^2 cos^2 theta``, ``t = rho^2 sin^2 theta`` has
      ``s^{-1/2} t^{1/2} |d(s, t)/d(rho, theta)| = 4 rho^3 sin^2 theta``; with ``rho = tan chi``,
      ``rho^3 (d rho/d chi) cos^{d+4} chi = sin^3 chi cos^{d-1} chi`` and ``(1 + rho^2 mu) cos^2 chi =
      cos^2 chi + mu sin^2 chi`` (each factor ``(1 + rho^2 mu_m)^{-a_m}``, ``sum a_m = d/2``, and the two
      factors ``1/(1 + rho^2 mu_i)`` give ``cos^{d+4}``): the weight ``-(16/pi) sin^2 theta sin^3 chi
      cos^{d-1} chi``;
    * ``looped_angle``: ``t = tan^2 chi`` has ``t (dt/d chi) cos^{d+4} chi = 2 sin^3 chi cos^{d-1} chi``.
    """
    G = sp.symbols(f"G1:{levels + 1}", positive=True)
    lam = sp.symbols(f"l1:{levels + 1}", positive=True)
    cs = sp.symbols(f"c2:{levels + 1}", positive=True)
    es = sp.symbols(f"e2:{levels + 1}", real=True)
    x = sp.symbols("x", positive=True)
    total = sum(G)
    w = [g / total for g in G]
    mom1 = sum(li * wi for li, wi in zip(lam, w))
    mom2 = sum(li ** 2 * wi for li, wi in zip(lam, w))
    r2 = 1 + 2 * x * mom1 + x ** 2 * mom2
    B = sum(li ** 2 * g for li, g in zip(lam, G))
    C = sum(li * g for li, g in zip(lam, G))
    A = sum((1 + x * li) ** 2 * g for li, g in zip(lam, G))
    out = {"ln_in_gammas": sp.cancel(sp.together(4 * (mom2 - mom1 ** 2) ** 2 / (mom2 * r2 ** 3)
                                                 - 4 * (B * total - C ** 2) ** 2 / (B * A ** 3))) == 0,
           "gap_in_gammas": sp.expand(B * total - C ** 2 - sum((lam[i] - lam[j]) ** 2 * G[i] * G[j]
                                                               for i in range(levels)
                                                               for j in range(i + 1, levels))) == 0}
    P = sum(c * wi for c, wi in zip(cs, w[1:]))
    dP = sum(e * wi for e, wi in zip(es, w[1:]))
    out["looped_in_gammas"] = sp.cancel(sp.together(
        w[0] * dP / (w[0] + P) ** 2
        - G[0] * sum(e * g for e, g in zip(es, G[1:])) / (G[0] + sum(c * g for c, g in zip(cs, G[1:]))) ** 2)) == 0
    a, u, g, t, Q = sp.symbols("a u g t Q", positive=True)
    density = g ** (a - 1) * sp.exp(-g) / sp.gamma(a)
    e0 = sp.integrate(density * sp.exp(-u * g), (g, 0, sp.oo), conds="none")
    e1 = sp.integrate(g * density * sp.exp(-u * g), (g, 0, sp.oo), conds="none")
    out["gamma_moments"] = (sp.simplify(e0 - (1 + u) ** -a) == 0
                            and sp.simplify(e1 - a * (1 + u) ** (-a - 1)) == 0)
    out["gamma_representation"] = all(
        sp.simplify(sp.integrate(t ** (p - 1) * sp.exp(-t * Q), (t, 0, sp.oo), conds="none")
                    - sp.gamma(p) * Q ** (-p)) == 0
        for p in (sp.Rational(1, 2), sp.Rational(3, 2), 2)) and sp.simplify(
        sp.gamma(sp.Rational(1, 2)) * sp.gamma(sp.Rational(3, 2)) - sp.pi / 2) == 0
    rho_, chi, mu, dd = sp.symbols("rho chi mu d", positive=True)
    q = sp.symbols("q", positive=True)          # theta = atan q on 0 < theta < pi/2 (d theta/dq = 1/(1 + q^2))
    cos_t, sin_t = 1 / sp.sqrt(1 + q ** 2), q / sp.sqrt(1 + q ** 2)
    s_, t_ = rho_ ** 2 * cos_t ** 2, rho_ ** 2 * sin_t ** 2
    jac = sp.Abs(sp.Matrix([s_, t_]).jacobian([rho_, q]).det()) * (1 + q ** 2)
    polar = sp.simplify(s_ ** sp.Rational(-1, 2) * t_ ** sp.Rational(1, 2) * jac - 4 * rho_ ** 3 * sin_t ** 2) == 0
    tan_chi = sp.tan(chi)
    radial = sp.simplify(sp.powsimp(tan_chi ** 3 * sp.diff(tan_chi, chi) * sp.cos(chi) ** (dd + 4)
                                    / (sp.sin(chi) ** 3 * sp.cos(chi) ** (dd - 1)), force=True)) == 1
    factor = sp.simplify((1 + tan_chi ** 2 * mu) * sp.cos(chi) ** 2 - (sp.cos(chi) ** 2 + mu * sp.sin(chi) ** 2)) == 0
    out["ln_angles"] = polar and radial and factor
    t_chi = tan_chi ** 2
    out["looped_angle"] = sp.simplify(sp.powsimp(t_chi * sp.diff(t_chi, chi) * sp.cos(chi) ** (dd + 4)
                                                 / (2 * sp.sin(chi) ** 3 * sp.cos(chi) ** (dd - 1)),
                                                 force=True)) == 1
    return out


# -------------------------------------------------------------------- checks of steps 1-3
@lru_cache(maxsize=None)
@seeded
def ln_gradient_identity_holds() -> bool:
    """``a^T S g_h = -2 (m2 - m1^2)/(sqrt(m2) r^3)`` and ``= d loss/d gamma`` (LN layer)."""
    f = ln_per_sample()
    ok1 = sp.simplify(f["a_S_gh"] - f["a_S_gh_closed"]) == 0
    ok2 = sp.simplify(sp.diff(f["loss"], gamma) - f["a_S_gh"]) == 0
    return bool(ok1 and ok2)


@lru_cache(maxsize=None)
@seeded
def noln_gradient_identity_holds() -> bool:
    """``a^T S g = d loss / d gamma`` for both no-LN targets (so ``F = L'(gamma)/d``)."""
    return all(sp.simplify(sp.diff(f["loss"], gamma) - f["a_S_gh"]) == 0
               for f in (noln_per_sample(True), noln_per_sample(False)))


def noln_collapsed() -> dict[str, dict[str, sp.Expr]]:
    """Population loss, ``F``, ``gamma*`` and irreducible loss of the no-LN layer (B.2.1-B.2.2).

    ``E[m1] = kappa1``, ``E[m2] = kappa2``, ``E[sqrt(m2)] = kappa3``, ``E[m1/sqrt(m2)] = kappa4``.
    """
    out = {}
    for name, normalized in (("normalized", True), ("unnormalized", False)):
        f = noln_per_sample(normalized)
        loss = expectation_of(f["loss"])
        Fg = sp.expand(sp.diff(loss, gamma) / d)
        gs = sp.solve(sp.Eq(Fg, 0), gamma)[0]
        irreducible = sp.simplify(loss.subs(gamma, gs))
        out[name] = {"loss": loss, "F": Fg, "gamma_star": sp.simplify(gs),
                     "irreducible_loss": irreducible}
    return out


def expectation_of(expr: sp.Expr) -> sp.Expr:
    """E[.] of a polynomial in gamma whose coefficients are ``1, m1, m2, sqrt(m2), m1/sqrt(m2)``."""
    moments = {sp.S.One: sp.S.One, m1: kappa1, m2: kappa2, sp.sqrt(m2): kappa3,
               m1 / sp.sqrt(m2): kappa4}
    poly = sp.Poly(sp.expand(expr), gamma)
    total = sp.S.Zero
    for (power,), coeff in poly.terms():
        for term in sp.Add.make_args(sp.expand(coeff)):
            num, rest = term.as_coeff_Mul()
            if rest not in moments:
                raise ValueError(f"no moment for {rest}")
            total += num * moments[rest] * gamma**power
    return sp.expand(total)


def printed_gamma_star() -> dict[str, sp.Expr]:
    """Theorem 4.2 as printed: (kappa3 - kappa1)/kappa2 and 1 - kappa1/kappa2."""
    return {"normalized": (kappa3 - kappa1) / kappa2, "unnormalized": 1 - kappa1 / kappa2}


def printed_irreducible_loss() -> dict[str, sp.Expr]:
    """B.2.1/B.2.2 as printed: L1(0) - (kappa3-kappa1)^2/kappa2 with L1(0) = 2 - 2 kappa4;
    1 - kappa1^2/kappa2."""
    return {"normalized": 2 - 2 * kappa4 - (kappa3 - kappa1) ** 2 / kappa2,
            "unnormalized": 1 - kappa1**2 / kappa2}


# -------------------------------------------------------------- B.2.3: exact scalar identities
def recursion_identities() -> dict[str, bool]:
    """Identities of Appendix B.2.3 for one simultaneous step with common factor ``F``.

    gamma' = gamma - eta S F + eta^2 gamma F^2;  S' = (1 + eta^2 F^2) S - 4 eta gamma F;
    D' = (1 - eta^2 F^2) D;  and the invariant S^2 - D^2 = 4 gamma^2.
    """
    a1 = alpha - eta * beta * F
    b1 = beta - eta * alpha * F
    g, S, D = alpha * beta, alpha**2 + beta**2, beta**2 - alpha**2
    return {
        "gamma_next": sp.expand(a1 * b1 - (g - eta * S * F + eta**2 * g * F**2)) == 0,
        "S_next": sp.expand(a1**2 + b1**2 - ((1 + eta**2 * F**2) * S - 4 * eta * g * F)) == 0,
        "D_next": sp.expand(b1**2 - a1**2 - (1 - eta**2 * F**2) * D) == 0,
        "S2_minus_D2": sp.expand(S**2 - D**2 - 4 * g**2) == 0,
    }


# --------------------------------------------------------------- closed forms kappa1, kappa2
@lru_cache(maxsize=None)
@seeded
def kappa_task1() -> dict[str, sp.Expr]:
    """kappa1, kappa2 for Task 1 (iid uniform unit columns), from unit-vector moments.

    With ``x, y, a`` independent uniform on S^{d-1}: ``E[x x^T] = I/d`` and ``||x|| = 1``.
    ``a^T S a = sum_j (a.x_j)^2`` and ``||S a||^2 = sum_{j,k} (a.x_j)(x_j.x_k)(x_k.a)``:
    the ``j = k`` terms are ``(a.x_j)^2`` (``||x_j|| = 1``), the ``j != k`` terms
    ``a^T E[x x^T] E[y y^T] a``. Each expectation is a trace of products of ``I/d`` computed
    symbolically in a concrete dimension-free way (sympy MatrixSymbol algebra).
    """
    Id = sp.Identity(d)
    second_moment = Id / d                               # E[x x^T]
    # E[(a.x)^2] = E[a^T E[xx^T] a] = ||a||^2 / d
    e_ax2 = sp.trace(second_moment).doit() / d                  # E_a[a^T M a] = tr(M)/d
    e_cross = sp.trace((Id * Id).doit()).doit() / d**2 / d  # E[a^T x x^T y y^T a] = tr(I/d I/d)/d
    e_ax2, e_cross = sp.simplify(e_ax2), sp.simplify(e_cross)
    k1 = sp.simplify(n * e_ax2)
    k2 = sp.factor(n * e_ax2 + n * (n - 1) * e_cross)
    return {"kappa1": k1, "kappa2": k2}


# -------------------------------------------------------------------- growth constants
def growth_limits() -> dict[str, sp.Expr]:
    """Per-sample limits behind Upsilon_3 (C.2.2) and Upsilon_1 (looped, A.5).

    LN layer: ``lim_{gamma->oo} gamma^3 a^T S g_h = -2 (m2 - m1^2)/m2^2``, hence
    ``lim gamma^3 F = -2 Upsilon_3 / d`` with ``Upsilon_3 = E[(m2 - m1^2)/m2^2]`` and, with
    ``(alpha^2+beta^2)/(2 gamma) -> 1``, ``lim (gamma_{t+1}^3 - gamma_t^3) = 12 eta Upsilon_3/d``.
    Looped: ``lim_{rho->oo} rho^2 dz_k/drho = (lam_k - lam0)/lam0^2`` so
    ``Upsilon_1 := lim -rho^2 G'(rho) = E[A/(A+B)^2 sum_k c_k 2L th_k^{2L-1} (lam0 - lam_k)/lam0^2]``
    with ``th_k = lam_k/lam0``, ``B = sum_k c_k th_k^{2L}``, and
    ``lim (rho_{t+1}^2 - rho_t^2) = 4 eta Upsilon_1 / d``.
    """
    f = ln_per_sample()
    ln_lim = sp.limit(gamma**3 * f["a_S_gh_closed"], gamma, sp.oo)
    lam0, lamk = sp.symbols("lam0 lamk", positive=True)
    z = (1 + rho * lamk) / (1 + rho * lam0)
    dz_lim = sp.limit(rho**2 * sp.diff(z, rho), rho, sp.oo)
    # increments: gamma' = gamma + Delta, Delta = -eta F S + eta^2 gamma F^2, S ~ 2 gamma
    C, x = sp.symbols("C x", positive=True)  # F = -C/gamma^3 (LN); F = -C/rho^2 (looped)
    Sx = 2 * x
    delta_ln = eta * (C / x**3) * Sx + eta**2 * x * (C / x**3) ** 2
    inc3 = sp.limit(sp.expand((x + delta_ln) ** 3 - x**3), x, sp.oo)
    delta_lp = eta * (C / x**2) * Sx + eta**2 * x * (C / x**2) ** 2
    inc2 = sp.limit(sp.expand((x + delta_lp) ** 2 - x**2), x, sp.oo)
    return {"ln_gamma3_aSgh": sp.simplify(ln_lim), "looped_rho2_dz": sp.simplify(dz_lim),
            "ln_increment_cubes_per_C": sp.simplify(inc3 / C),
            "looped_increment_squares_per_C": sp.simplify(inc2 / C)}


# ------------------------------------------------------------------------- eta_max (B.2.3)
def eta_max_derived() -> dict[str, sp.Expr]:
    """Step-size bound of the unified convergence theorem (no-LN), re-derived.

    The symbols ``F_max, S_max, Gamma`` are not defined in the extraction; inferred from
    the proof: on the invariant level set ``gamma in [0, 2 gamma*]`` (from ``gamma_0 = 0``),
    ``F_max = max|F| = 2 kappa2 gamma*/d``, ``Gamma = 2 gamma*``, and since ``|D_t| <= D_0 = S0``
    (``alpha0 = 0``) and ``S_t^2 = D_t^2 + 4 gamma_t^2``, ``S_max = sqrt(S0^2 + 16 gamma*^2)``.
    """
    k2, gs = kappa2, gamma_star_sym
    Fmax = 2 * k2 * gs / d
    Gam = 2 * gs
    Smax = sp.sqrt(S0**2 + 16 * gs**2)
    terms = [1 / (4 * Fmax), d / (8 * k2 * Smax), sp.sqrt(d / (16 * k2 * Gam * Fmax)),
             sp.cbrt(d / (16 * k2 * Gam * Fmax**2)), d / (2 * k2 * S0),
             d / (2 * k2 * sp.sqrt(2 * S0 * gs))]
    simplified = sp.Min(d / (8 * k2 * Smax), d / (2 * k2 * S0), d / (2 * k2 * sp.sqrt(2 * S0 * gs)))
    printed = sp.Min(d / (8 * k2 * sp.sqrt(1 + 16 * gs**2)), d / (2 * k2 * S0),
                     d / (2 * k2 * sp.sqrt(2 * S0 * gs)))
    # the first, third and fourth terms are dominated by the second: ratio >= 1
    dominated = [sp.simplify(t / terms[1]) for t in (terms[0], terms[2], terms[3])]
    return {"terms": terms, "simplified": simplified, "printed": printed, "dominated_ratios": dominated}


def first_step_alpha() -> sp.Expr:
    """Part 2 of B.2.3: ``alpha_1 = eta beta0 (2 kappa2/d) gamma*`` (from ``F(0)``)."""
    F0 = noln_collapsed()["normalized"]["F"].subs(gamma, 0)
    beta0 = sp.Symbol("beta0", positive=True)
    return sp.simplify(-eta * beta0 * F0)
