"""Lemma D.6's ``A(t)`` in readable form (seed 000): the in-group part of ``F3``,
``A = E[sigma(x1) sigma'(x1 + x2) x1]`` with ``x1 ~ N(0, a)``, ``x2 ~ N(0, b)`` independent,
``a = K p^2`` and ``b = (D-K) q^2``, ``q = (1 - K p)/(D - K)`` (docs/models_and_conventions.md conventions; Leaky ReLU
``sigma(x) = max(x, kappa x)``, ReLU at ``kappa = 0``).

Derived from :func:`rdyn.derivations.gaussian.appendix_f` (never typed in): with the angle
``beta = arctan(sqrt(a/b))`` in (0, pi/2), ``sin(beta) = sqrt(a/(a+b))`` and
``cos(beta) = sqrt(b/(a+b))``, so the engine's ``acos(sqrt(a)/sqrt(a+b))`` is ``pi/2 - beta``
and ``sqrt(a b) = (a + b) sin(beta) cos(beta)``. After these two substitutions sympy cancels
``a + b`` and the result is

    A = (1 + kappa)^2 a/4 + (1 - kappa)^2 a (beta + sin(2 beta)/2)/(2 pi),

with ``a = K p^2`` and ``beta = arctan(sqrt(K (D-K)) p/(1 - K p))`` (the printed lemma has
``arctan(K (D-K) p/(1 - K p))``, no square root, and no ``sin(2 beta)`` term). The layout is
asserted equal to the rewritten engine result (sympy) and to the engine's expression at
random points (mpmath, 30 digits) by ``A.A_of_t.*``.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from rdyn.derivations import gaussian as g
from rdyn.derivations.model_a import collapsed as ma

beta = sp.Symbol("beta", positive=True)
p = sp.Symbol("p", positive=True)
A_NAME = "E[x1 s(x1) s'(x1+x2)]"


@dataclass(frozen=True)
class AngleForm:
    """``A`` as ``a (c0 + c1 (beta + sin(2 beta)/2))`` with ``c0``, ``c1`` in kappa only."""

    activation: str
    c0: sp.Expr        # (1 + kappa)^2/4 (1/4 for ReLU)
    c1: sp.Expr        # (1 - kappa)^2/(2 pi) (1/(2 pi) for ReLU)
    in_a_beta: sp.Expr  # the rewritten engine result in a and beta

    def in_p(self) -> sp.Expr:
        """``A(t)`` in the public symbols D, K, p (and kappa), beta written out as an arctan."""
        b = sp.atan(sp.sqrt(ma.K * (ma.D - ma.K)) * p / (1 - ma.K * p))
        return ma.K * p**2 * (self.c0 + self.c1 * (b + sp.sin(2 * b) / 2))


@lru_cache(maxsize=None)
def angle_form(activation: str) -> AngleForm:
    """Rewrite the engine's ``A`` with the angle ``beta`` (module docstring) and read off the two
    coefficients; asserts that nothing else is left."""
    a, b = g.a_var, g.b_var
    engine = g.appendix_f(A_NAME, activation)
    rewritten = engine.subs(sp.acos(sp.sqrt(a) / sp.sqrt(a + b)), sp.pi / 2 - beta)
    rewritten = rewritten.subs(sp.sqrt(a) * sp.sqrt(b), (a + b) * sp.sin(beta) * sp.cos(beta))
    rewritten = sp.simplify(sp.expand(rewritten))
    assert not rewritten.has(b) and not rewritten.has(sp.acos), f"angle rewrite left {rewritten}"
    per_a = sp.expand(sp.expand_trig(rewritten / a))
    angle = beta + sp.sin(beta) * sp.cos(beta)  # = beta + sin(2 beta)/2
    c1 = sp.factor(per_a.coeff(beta))
    c0 = sp.factor(sp.simplify(per_a - c1 * angle))
    assert not c0.has(beta) and not c1.has(beta), (c0, c1)
    return AngleForm(activation, c0, c1, rewritten)
