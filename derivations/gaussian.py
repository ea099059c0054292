"""Exact Gaussian expectations of piecewise-linear, positively homogeneous integrands.

Route (docs/numerics.md, "Gaussian expectations with sympy"): write the two Gaussian arguments as linear forms of
independent standard normals ``z1, z2``,

    Y1 = sd1 * z1,        Y2 = sd2 * (cos(theta) z1 + sin(theta) z2),   0 < theta < pi,

so ``corr(Y1, Y2) = cos(theta)``. In polar coordinates ``z = r (cos phi, sin phi)`` every kink
of ``sigma`` or indicator of ``sigma'`` applied to ``+-Y1`` or ``+-Y2`` is a ray at one of the
fixed angles ``-pi/2, theta - pi/2, pi/2, theta + pi/2``. On each of the four sectors the
integrand is a homogeneous polynomial in ``z``; its radial part is a Gamma moment and its
angular part a trigonometric polynomial that sympy integrates exactly. ``sympy.stats`` is not
used: it returns wrong results on integrands mixing ``Max`` with indicators (docs/numerics.md).

Activations follow docs/models_and_conventions.md: ``sigma(x) = x`` (identity), ``max(x, 0)`` (ReLU),
``max(x, kappa x)`` (LeakyReLU, ``0 <= kappa < 1``), with ``sigma'(x) = 1`` for ``x >= 0`` and
the negative slope below; ``sigma'(0)`` only matters on a null set except where an argument
is identically zero, which callers treat explicitly.

Besides the generic engine (:func:`expectation`), this module derives the general bivariate
forms (:data:`BIVARIATE_FORMS`) and Appendix F's expectations (:func:`appendix_f`) of the
teacher-model paper, and compiles them for numpy / mpmath (:func:`bivariate_numeric`).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import sympy as sp

from rdyn.derivations.reproducible import seeded

z1, z2 = sp.symbols("z1 z2", real=True)
phi = sp.Symbol("phi", real=True)
theta = sp.Symbol("theta", positive=True)  # angle between the two arguments, in (0, pi)
sd1, sd2 = sp.symbols("sd1 sd2", positive=True)  # standard deviations of Y1, Y2
kappa = sp.Symbol("kappa", nonnegative=True)  # LeakyReLU negative slope

sigma = sp.Function("sigma")  # activation placeholder, resolved sector by sector
dsigma = sp.Function("dsigma")  # its derivative placeholder

Y1 = sd1 * z1
Y2 = sd2 * (sp.cos(theta) * z1 + sp.sin(theta) * z2)

# Kinks of functions of +-Y1 (phi = +-pi/2) and +-Y2 (phi = theta +- pi/2), ordered for 0<theta<pi.
SECTOR_EDGES = (-sp.pi / 2, theta - sp.pi / 2, sp.pi / 2, theta + sp.pi / 2, 3 * sp.pi / 2)
_GENERIC_THETA = 1.1  # any value in (0, pi): the sign pattern on each sector does not depend on it


@dataclass(frozen=True)
class Activation:
    """A positively homogeneous piecewise-linear activation: slope 1 on x >= 0,
    ``negative_slope`` on x < 0."""

    name: str
    negative_slope: sp.Expr

    def value(self, x: sp.Expr, positive: bool) -> sp.Expr:
        return x if positive else self.negative_slope * x

    def derivative(self, positive: bool) -> sp.Expr:
        return sp.Integer(1) if positive else self.negative_slope

    @property
    def second_moment(self) -> sp.Expr:
        """E[sigma(g)^2] for g ~ N(0, 1)."""
        return (1 + self.negative_slope**2) / 2

    @property
    def mean_slope(self) -> sp.Expr:
        """E[sigma'(g)] for g ~ N(0, 1)."""
        return (1 + self.negative_slope) / 2


IDENTITY = Activation("identity", sp.Integer(1))
RELU = Activation("relu", sp.Integer(0))
LEAKY = Activation("leaky", kappa)
ACTIVATIONS = {a.name: a for a in (IDENTITY, RELU, LEAKY)}


def _sign_at(linear_form: sp.Expr, angle: float, samples: dict) -> bool:
    value = linear_form.subs({z1: sp.cos(angle), z2: sp.sin(angle), theta: _GENERIC_THETA})
    value = sp.N(value.subs(samples))
    if not value.is_number or value == 0:
        raise ValueError(f"cannot decide the sign of {linear_form} on a sector")
    return bool(value > 0)


def _check_ray_argument(linear_form: sp.Expr) -> None:
    """Arguments must be multiples of Y1 or Y2, so that the kinks are the fixed rays."""
    for base in (Y1, Y2):
        ratio = sp.simplify(linear_form / base)
        if not ratio.has(z1, z2):
            return
    raise ValueError(f"argument {linear_form} is not a multiple of Y1 or Y2")


def _resolve(integrand: sp.Expr, activation: Activation, angle: float, samples: dict) -> sp.Expr:
    def branch_value(arg):
        return activation.value(arg, _sign_at(arg, angle, samples))

    def branch_slope(arg):
        return activation.derivative(_sign_at(arg, angle, samples))

    return integrand.replace(sigma, branch_value).replace(dsigma, branch_slope)


def radial_moment(degree: int) -> sp.Expr:
    """(1/2pi) * int_0^inf r^(degree+1) exp(-r^2/2) dr: the radial factor of a degree-n term."""
    r = sp.Symbol("r", positive=True)
    return sp.integrate(r ** (degree + 1) * sp.exp(-(r**2) / 2), (r, 0, sp.oo)) / (2 * sp.pi)


def expectation(integrand: sp.Expr, activation: Activation, samples: dict | None = None) -> sp.Expr:
    """E[integrand] for (z1, z2) iid N(0, 1), exactly, as a function of sd1, sd2, theta.

    ``integrand`` is a polynomial in ``z1, z2`` times factors ``sigma(L)``, ``dsigma(L)`` with
    each ``L`` a multiple of ``Y1`` or ``Y2``. ``samples`` gives sample values of the other
    symbols (used only to decide signs of arguments, e.g. ``{C1: -1}`` on a negative branch);
    symbols not listed are taken positive. The value is a function of these arguments alone, so
    one process computes each distinct expectation once (the Appendix F lemmas share their cores).
    """
    return _expectation(integrand, activation, tuple(sorted((samples or {}).items(), key=lambda kv: str(kv[0]))))


@lru_cache(maxsize=None)
def _expectation(integrand: sp.Expr, activation: Activation, samples: tuple) -> sp.Expr:
    for call in integrand.atoms(sigma) | integrand.atoms(dsigma):
        _check_ray_argument(call.args[0])
    samples = dict(samples)
    for s in integrand.free_symbols - {z1, z2, theta} - set(samples):
        samples[s] = sp.Rational(7, 10)
    total = sp.Integer(0)
    for lo, hi in zip(SECTOR_EDGES[:-1], SECTOR_EDGES[1:]):
        mid = float(((lo + hi) / 2).subs(theta, _GENERIC_THETA))
        piece = sp.expand(_resolve(integrand, activation, mid, samples))
        poly = sp.Poly(piece, z1, z2)
        for (i, j), coeff in poly.terms():
            angular = sp.integrate(sp.cos(phi) ** i * sp.sin(phi) ** j, (phi, lo, hi))
            total += coeff * radial_moment(i + j) * angular
    return sp.simplify(sp.expand_trig(sp.expand(total)))


# ---------------------------------------------------------------------------------------------
# General bivariate forms for a covariance [[a, c], [c, b]]: the building blocks of every
# population loss and gradient of Model A (collapsed or full-matrix).
# ---------------------------------------------------------------------------------------------

BIVARIATE_INTEGRANDS: dict[str, sp.Expr] = {
    "s_s": sigma(Y1) * sigma(Y2),  # E[s(u) s(v)]
    "u_s_ds": Y1 * sigma(Y1) * dsigma(Y2),  # E[u s(u) s'(v)]
    "v_s_ds": Y2 * sigma(Y1) * dsigma(Y2),  # E[v s(u) s'(v)]
    "ds_ds": dsigma(Y1) * dsigma(Y2),  # E[s'(u) s'(v)]
    "u_s": Y1 * sigma(Y2),  # E[u s(v)]
}


@lru_cache(maxsize=None)
@seeded
def bivariate_form(name: str, activation_name: str) -> sp.Expr:
    """The named bivariate form (keys of :data:`BIVARIATE_INTEGRANDS`) in sd1, sd2, theta."""
    return expectation(BIVARIATE_INTEGRANDS[name], ACTIVATIONS[activation_name])


def at_covariance(expr: sp.Expr, a: sp.Expr, b: sp.Expr, c: sp.Expr) -> sp.Expr:
    """A bivariate form (in sd1, sd2, theta) at the 2x2 covariance [[a, c], [c, b]].

    ``cos(theta)`` and ``sin(theta)`` are replaced structurally by ``rho = c/sqrt(a b)`` and
    ``sqrt(1 - rho^2)``, and only a bare ``theta`` becomes ``acos(rho)``: substituting
    ``theta = acos(rho)`` and letting sympy simplify ``cos(acos(rho))`` is process-dependent
    for numbers near 1 (sympy #23086, docs/numerics.md)."""
    rho = c / sp.sqrt(a * b)
    trig = sp.expand_trig(expr).xreplace({sp.cos(theta): rho, sp.sin(theta): sp.sqrt(1 - rho**2)})
    return trig.xreplace({sd1: sp.sqrt(a), sd2: sp.sqrt(b), theta: sp.acos(rho)})


# ---------------------------------------------------------------------------------------------
# Appendix F (Lemmas F.1 - F.6): x1 ~ N(0,a), x2 ~ N(0,b), x3 ~ N(0,c) independent.
# ---------------------------------------------------------------------------------------------

a_var, b_var, c_var = sp.symbols("a b c", positive=True)
x1, x2, x3 = sp.symbols("x1 x2 x3", real=True)
_VARIANCES = {x1: a_var, x2: b_var, x3: c_var}


def _cov(f: sp.Expr, g: sp.Expr) -> sp.Expr:
    return sp.expand(sum(f.coeff(x) * g.coeff(x) * v for x, v in _VARIANCES.items()))


def linear_gaussian_expectation(prefactor: sp.Expr, u: sp.Expr, w: sp.Expr | None,
                                core: Callable[[sp.Expr, sp.Expr], sp.Expr],
                                activation: Activation) -> sp.Expr:
    """E[prefactor * core(u, w)] for linear forms of (x1, x2, x3), by Gaussian conditioning.

    ``prefactor`` is regressed on ``(u, w)``: prefactor = beta_u u + beta_w w + (independent
    part), so the expectation is ``beta_u E[u core] + beta_w E[w core]``, a bivariate form in
    (Y1, Y2) = (u, w) evaluated at their covariance. ``w = None`` means a univariate core.
    """
    if w is None:
        beta = _cov(prefactor, u) / _cov(u, u)
        value = beta * expectation(Y1 * core(Y1, Y1), activation)
        return sp.simplify(value.subs(sd1, sp.sqrt(_cov(u, u))))
    cov = sp.Matrix([[_cov(u, u), _cov(u, w)], [_cov(u, w), _cov(w, w)]])
    beta = cov.LUsolve(sp.Matrix([_cov(prefactor, u), _cov(prefactor, w)]))
    value = beta[0] * expectation(Y1 * core(Y1, Y2), activation) \
        + beta[1] * expectation(Y2 * core(Y1, Y2), activation)
    value = at_covariance(value, cov[0, 0], cov[1, 1], cov[0, 1])
    return sp.simplify(value)


def _s_ds(u, w):
    return sigma(u) * dsigma(w)


APPENDIX_F: dict[str, tuple[str, Callable[[Activation], sp.Expr]]] = {
    "E[x s(x) s'(x)]": ("Lemma F.1", lambda act: linear_gaussian_expectation(
        x1, x1, None, _s_ds, act)),
    "E[x1 s(x1+x2) s'(x1+x2)]": ("Lemma F.2", lambda act: linear_gaussian_expectation(
        x1, x1 + x2, None, _s_ds, act)),
    "E[x1 s(x1) s'(x1+x2)]": ("Lemma F.3", lambda act: linear_gaussian_expectation(
        x1, x1, x1 + x2, _s_ds, act)),
    "E[x2 s(x1) s'(x1+x2)]": ("Lemma F.4", lambda act: linear_gaussian_expectation(
        x2, x1, x1 + x2, _s_ds, act)),
    "E[x1 s(x1+x2) s'(x1+x2+x3)]": ("Lemma F.6", lambda act: linear_gaussian_expectation(
        x1, x1 + x2, x1 + x2 + x3, _s_ds, act)),
    "E[x2 s(x1) s'(x1+x2+x3)]": ("Lemma F.7", lambda act: linear_gaussian_expectation(
        x2, x1, x1 + x2 + x3, _s_ds, act)),
    "E[s(x1) s(x1+x2)]": ("Lemma F.8", lambda act: linear_gaussian_expectation(
        x1 + x2, x1, x1 + x2, _s_ds, act)),
}
"""Appendix F's expectations: name -> (paper lemma, derivation). The last uses
s(v) = v s'(v), i.e. E[s(x1) s(x1+x2)] = E[(x1+x2) s(x1) s'(x1+x2)] as the paper does."""


@lru_cache(maxsize=None)
@seeded
def appendix_f(name: str, activation_name: str) -> sp.Expr:
    """Closed form of one Appendix F expectation in the variances a, b, c."""
    return APPENDIX_F[name][1](ACTIVATIONS[activation_name])
