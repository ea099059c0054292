"""Model B's constants: kappa1..kappa4 (exact kappa1, kappa2 as rationals) and Upsilon_3."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from rdyn.reduced_dynamics.model_b.rule import SpectralRule, sqrt_elementwise


@dataclass(frozen=True)
class Constants:
    kappa1: Any
    kappa2: Any
    kappa3: Any
    kappa4: Any          # E[a^T S a / ||S a||]
    kappa1_exact: Fraction
    kappa2_exact: Fraction | None
    upsilon3: Any        # E[(m2 - m1^2)/m2^2]  (LN growth constant)


def kappa_exact(data: str, d: int, n: int, spectrum) -> tuple[Fraction, Fraction]:
    """Closed forms (rdyn.derivations.model_b.kappa_task1/2): n/d and n(n+d-1)/d^2 or sum m^2/d."""
    if data == "spectrum":
        return Fraction(sum(spectrum), d), Fraction(sum(m * m for m in spectrum), d)
    return Fraction(n, d), Fraction(n * (n + d - 1), d * d)


def _constant_terms(nodes):
    m1, m2 = nodes.m1, nodes.m2
    sq2 = sqrt_elementwise(m2)
    return [m1, m2, sq2, m1 / sq2, nodes.variance / (m2 * m2)]


def constants(rule: SpectralRule, data: str, d: int, n: int, spectrum) -> Constants:
    k1, k2 = kappa_exact(data, d, n, spectrum)
    m1, m2, k3, k4, var = rule.means(_constant_terms)
    return Constants(m1, m2, k3, k4, k1, k2, var)


def gaussian_constants(route, d: int, spectrum) -> Constants:
    """:class:`Constants` of a Task 2 run on the Gaussian route
    (:meth:`rdyn.reduced_dynamics.model_b.gaussian_route.GaussianRoute.constants`); kappa1,
    kappa2 from their exact rationals at the working precision."""
    k1, k2 = kappa_exact("spectrum", d, sum(spectrum), spectrum)
    k3, k4, u3 = route.constants()
    if route.mp:
        import mpmath

        m1, m2 = mpmath.mpf(k1.numerator) / k1.denominator, mpmath.mpf(k2.numerator) / k2.denominator
    else:
        m1, m2 = float(k1), float(k2)
    return Constants(m1, m2, k3, k4, k1, k2, u3)
