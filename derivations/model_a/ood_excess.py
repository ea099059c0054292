"""Theorem 3.2 (seed 000, Section 3; its proof and worst-case ``Y`` are in Section E, which the
extraction does not contain): the excess OOD loss over the theorem's whole class of responses
``Y`` (``X`` and ``Y`` with bounded second moments), derived in the late phase of the collapsed
dynamics (Lemma D.2's map, phase 3).

**Exact split.** For any ``Y`` put ``r = Y - f*(X)`` and ``u = TF(X) - f*(X)``. Since
``||Y - TF||^2 = ||r - u||^2``,

    L_OOD - (1/2) E||Y - f*(X)||_F^2 = Q - C,   Q = (1/2) E||u||_F^2,   C = E<r, u>_F.

``Q`` does not depend on ``Y``; the cross term ``C`` is *linear* in ``u``.

**Section 4.1's OOD inputs.** STS teacher with ``M = 1``, ``d = 4``, ``v* = (1/2)(1, 1, 1, 1)``,
``x`` iid Exp(1): every ``z = <v*, x_j>`` is positive (mean ``m = 2``, variance ``v = 1``), so ReLU
and Leaky ReLU act as the identity on teacher and student, and each of the ``D`` columns has
``u = d1 z_in + d2 z_out`` with ``d1 = C1 p - 1/K``, ``d2 = C1 q``, ``q = (1 - K p)/(D - K)``,
``z_in`` (``z_out``) the sum of ``K`` (``D - K``) iid ``z`` (:func:`excess_form`, exact in
``(C1, p)`` and in the cross moments ``R_in = sum_j E[r_j z_in]``, ``R_out = sum_j E[r_j z_out]``).

**Late phase** (:mod:`rdyn.derivations.model_a.late_phase`): ``C1 = 1 + c1 e + O(e^2)`` and
``p = 1/(K + N e)`` (``N = D - K``), so ``d1 = a1 e + O(e^2)``, ``a1 = (c1 K - N)/K^2``, and
``d2 = a2 e + O(e^2)``, ``a2 = 1/K``; ``e^2 ~ c_e/(eta T)`` (``c_e = scale/(2 g2)``). Hence
``u = e w + O(e^2)`` with ``w = a1 z_in + a2 z_out`` (the attention error's direction; ``a1 = 0``
for the identity, ReLU and Leaky ReLU, where ``c1 = N/K``), and (:func:`ood_excess`):

* ``Q = q2 e^2 + O(e^3)``, ``q2 = (D/2) E[w^2]``: Theta(1/T) -- the excess of every ``Y`` whose
  cross term vanishes to first order (``a1 R_in + a2 R_out = 0``, e.g. ``Y = f*(X) + E`` with noise
  ``E`` independent of ``X`` and of mean 0, Section 4.1's labels);
* for a fixed ``Y`` the cross term is ``C = (a1 R_in + a2 R_out) e + O(e^2)``: a generic ``Y``
  has excess ``-(a1 R_in + a2 R_out) e ~ T^(-1/2)``;
* **worst case** over ``{Y : E||Y - f*(X)||_F^2 <= B^2}``: by Cauchy-Schwarz ``|C| <= B sqrt(2 Q)``,
  with equality iff ``r = -B u/||u||``, so ``sup (Q - C) = Q + B sqrt(2 Q) = B sqrt(2 q2) e + O(e^2)``:
  **Theta(T^(-1/2))**, not O(1/T);
* **a fixed ``Y`` attaining it**: ``r_j = -B w/(sqrt(D) ||w||)`` in every column (``||w||^2 = E w^2``;
  ``w = z_out/K`` for the three activations: a ``Y`` built from the out-group pattern) has
  ``E||r||^2 = B^2`` and excess ``B sqrt(D) ||w|| e + O(e^2)``, whose ratio to the supremum's
  leading term is exactly 1 (:attr:`OodExcess.attaining_over_sup`).

Lowest layer (sympy only).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from rdyn.derivations.model_a import collapsed as ma

D, K, eta, kappa = ma.D, ma.K, ma.eta, ma.kappa
T = sp.Symbol("T", positive=True)
e = sp.Symbol("e", positive=True)
C1, p = sp.symbols("C1 p", positive=True)
B = sp.Symbol("B", positive=True)                       # sqrt(E||Y - f*(X)||_F^2)
R_in, R_out = sp.symbols("R_in R_out", real=True)       # sum_j E[r_j z_in], sum_j E[r_j z_out]
z_mean, z_var = sp.symbols("m v", positive=True)        # E z, Var z for z = <v*, x>
EXP_INPUTS = {z_mean: 2, z_var: 1}                      # x iid Exp(1), v* = (1/2)(1, 1, 1, 1)


def moments() -> dict[str, sp.Expr]:
    """E[z_in^2], E[z_in z_out], E[z_out^2] (independent sums of K and D - K iid z)."""
    N = D - K
    return {"in_in": K * z_var + K**2 * z_mean**2, "in_out": K * N * z_mean**2,
            "out_out": N * z_var + N**2 * z_mean**2}


def _pair(a1, a2, b1, b2) -> sp.Expr:
    """E[(a1 z_in + a2 z_out)(b1 z_in + b2 z_out)]."""
    mo = moments()
    return a1 * b1 * mo["in_in"] + (a1 * b2 + a2 * b1) * mo["in_out"] + a2 * b2 * mo["out_out"]


def excess_form() -> dict[str, sp.Expr]:
    """Exact in the state ``(C1, p)``: ``quadratic`` = Q (Y-free), ``cross`` = C for a response with
    cross moments ``R_in``, ``R_out`` (excess = Q - C), ``d1``, ``d2``."""
    d1 = C1 * p - 1 / K
    d2 = C1 * (1 - K * p) / (D - K)
    return {"d1": d1, "d2": d2, "quadratic": D / 2 * _pair(d1, d2, d1, d2), "cross": d1 * R_in + d2 * R_out}


@dataclass(frozen=True)
class OodExcess:
    """The late-phase coefficients of :func:`ood_excess` (symbols D, K, vstar_norm2, eta, kappa, m, v, B)."""

    activation: str
    a1: sp.Expr                      # d1 = a1 e + O(e^2)
    a2: sp.Expr                      # d2 = a2 e + O(e^2)
    q2: sp.Expr                      # Q = q2 e^2 + O(e^3)
    linear_coefficient: sp.Expr      # excess of a fixed Y = -(a1 R_in + a2 R_out) e + O(e^2)
    sup_coefficient: sp.Expr         # sup over E||r||^2 <= B^2: B sqrt(2 q2) e + O(e^2)
    attaining_coefficient: sp.Expr   # the fixed Y of the module docstring: coefficient of e
    attaining_over_sup: sp.Expr      # exactly 1
    w_norm: sp.Expr                  # ||w|| = sqrt(E w^2)
    e_squared_times_tau: sp.Expr     # lim eta T e^2

    def rate(self, coefficient: sp.Expr, power: int = 1) -> sp.Expr:
        """``coefficient e^power`` with ``e = sqrt(c_e/(eta T))``: the leading term in T."""
        return sp.simplify(coefficient * (self.e_squared_times_tau / (eta * T)) ** sp.Rational(power, 2))

    def T_exponent(self, coefficient: sp.Expr, power: int = 1) -> sp.Expr:
        """The exponent of T of :meth:`rate`: T d log(rate)/dT, exactly a constant for a power of T."""
        lead = self.rate(coefficient, power)
        value = sp.simplify(T * sp.diff(sp.expand_log(sp.log(lead), force=True), T))
        if value.has(T):
            raise ValueError(f"not a power of T: {lead}")
        return value

    def attaining_response(self) -> dict[str, sp.Expr]:
        """The attaining Y per column: r = coef_in z_in + coef_out z_out, E||r||_F^2 = B^2."""
        scale = -B / (sp.sqrt(D) * self.w_norm)
        return {"coef_in": sp.simplify(scale * self.a1), "coef_out": sp.simplify(scale * self.a2)}


@lru_cache(maxsize=None)
def ood_excess(activation: str, scale: str = "D") -> OodExcess:
    """Theorem 3.2's excess OOD loss in the late phase (module docstring), for ``activation``
    ("identity", "relu", "leaky") and softmax ``scale``."""
    from rdyn.derivations.model_a import late_phase as lp

    lph = lp.late_phase(activation, scale)
    N = D - K
    form = excess_form()
    C1_e = 1 + lph.c1 * e
    p_e = 1 / (K + N * e)
    a1 = sp.simplify(sp.diff(form["d1"].subs({C1: C1_e, p: p_e}), e).subs(e, 0))
    a2 = sp.simplify(sp.diff(form["d2"].subs({C1: C1_e, p: p_e}), e).subs(e, 0))
    q2 = sp.factor(sp.simplify(D / 2 * _pair(a1, a2, a1, a2)))
    w2 = sp.simplify(_pair(a1, a2, a1, a2))
    w_norm = sp.sqrt(w2)
    linear = sp.expand(-(a1 * R_in + a2 * R_out))
    sup = B * sp.sqrt(2 * q2)
    # the attaining fixed Y: r_j = -B w/(sqrt(D) ||w||); sum_j E[r_j z] = -B sqrt(D) E[w z]/||w||
    s = -B * sp.sqrt(D) / w_norm
    R_attain = {R_in: s * _pair(a1, a2, 1, 0), R_out: s * _pair(a1, a2, 0, 1)}
    attaining = sp.simplify(linear.subs(R_attain))
    return OodExcess(activation, a1, a2, q2, linear, sp.simplify(sup), attaining,
                     sp.simplify(attaining / sup), w_norm, lph.e_squared_times_tau)
