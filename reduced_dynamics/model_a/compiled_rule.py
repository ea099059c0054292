"""Model A with a smooth activation that has no closed Gaussian averages (tanh, softplus,
sigmoid, ``--activation-expr`` formulas) in float64: the Gauss-Hermite tensor rule of
:mod:`rdyn.reduced_dynamics.model_a.smooth` evaluated inside a compiled (numba) event loop
(the loop is :func:`rdyn.reduced_dynamics.model_a.compiled._make_iterate`, shared
with erf's and GELU's closed forms).

Same rule, same formulas as ``model_a.smooth.Expectations.level`` / ``.moments`` (the node count
comes from ``model_a.smooth.choose_rule``): with the n-point rule (z, w), the attention level's
geometry ``(p, s2, s_res, rho)`` (``model_a.compiled.compiled_geometry``), ``y2_i = s2 z_i``,
``mu_i = rho z_i`` and ``y1_ij = mu_i + s_res z_j``,

* teacher averages ``T_i = sum_j w_j sigma(r y1_ij)``, ``U_i = sum_j w_j sigma(r y1_ij) y1_ij``
  (the inner nodes z_j are the same for every outer node: one pass over the n x n lattice);
* with ``B_i = sigma(C1 r y2_i)``, ``B1_i``, ``B2_i`` its derivatives (n values each, once per
  call): ``m2 = sum_i w_i (T_i - B_i) B1_i y2_i / r``, ``m1 = sum_i w_i B1_i (U_i - B_i mu_i) / r``,
  ``dm2/dC1 = sum_i w_i y2_i^2 ((T_i - B_i) B2_i - B1_i^2)``, and the two loss sums
  ``sum_i w_i B_i T_i``, ``sum_i w_i B_i^2``.

Exponential separation (the lattice ``r y1_ij = a_i + b_j``, ``a_i = r rho z_i``,
``b_j = r s_res z_j``): where sympy writes ``sigma(x) = R(x, exp(x / L))`` with x only polynomial
in R (:func:`rdyn.derivations.activations.exponential_separation`: tanh, sigmoid, softplus, many
formulas), ``sigma(r y1_ij) = R(a_i + b_j, exp(a_i / L) exp(b_j / L))``: 2n exponentials per
step, and R's arithmetic (tanh: ``(E^2 - 1)/(E^2 + 1)``; softplus keeps one log) at the n^2
lattice points instead of n^2 calls of sigma. Used while ``exp(+-(|a| + |b|) P / L)`` stays
within ``exp(+-600)`` (P: the largest power of E in R), else sigma is evaluated directly; both
agree with the numpy step to rounding (about 1e-15 relative over 400 steps, tests).

Nothing is allocated per step (``z_j w_j`` and the ``exp(b_j / L)`` go to a 2 x n scratch array
made once per chunk; ``U_i = mu_i T_i + s_res sum_j w_j z_j sigma(r y1_ij)``). sigma, sigma', sigma'' are sympy's expressions
(:func:`rdyn.derivations.activations.derivatives`) lambdified with the ``math`` module and
compiled by ``numba.njit``; a formula numba cannot compile gives None
(:func:`compiled_rule_loop`) and the run falls back to the numpy step.
"""
from __future__ import annotations

from functools import lru_cache

import math

import numpy as np

from rdyn.derivations.activations import Activation, derivatives, x
from rdyn.reduced_dynamics.model_a.compiled import (_make_iterate, compiled_geometry,
                                                    compiled_logit_gradients)


@lru_cache(maxsize=16)
def compiled_activation(activation: Activation):
    """(sigma, sigma', sigma'') as numba functions of one float (sympy -> ``math`` source ->
    ``numba.njit``), compiled now; None if numba cannot compile the formula."""
    import numba
    import sympy as sp

    try:
        funcs = tuple(numba.njit(sp.lambdify(x, e, modules="math"))
                      for e in derivatives(activation.expression))
        for f in funcs:
            float(f(0.5))   # compiles (numba types lazily) and checks a float comes back
    except Exception:   # noqa: BLE001 -- any lambdify / typing / lowering failure: no compiled route
        return None
    return funcs


# exponential separation is used while every E = exp(x / L) on the lattice, raised to the
# largest power P of the form, stays within exp(+-EXP_LIMIT) (finite, no underflow to 0)
EXP_LIMIT = 600.0


@lru_cache(maxsize=16)
def compiled_lattice(activation: Activation):
    """(R, L, P) of :func:`rdyn.derivations.activations.exponential_separation` with R compiled
    as a numba function of (x, E); or (None, 1, 0) if sigma has no such form (or it does not
    compile)."""
    import numba
    import sympy as sp

    from rdyn.derivations.activations import exponential_separation, growth

    found = exponential_separation(activation.name, activation.formula)
    if found is None:
        return None, 1, 0
    form, L, P = found
    try:
        R = numba.njit(sp.lambdify((x, growth), form, modules="math"))
        float(R(0.5, 1.5))
    except Exception:   # noqa: BLE001 -- a form numba cannot compile: evaluate sigma directly
        return None, 1, 0
    return R, L, P


@lru_cache(maxsize=16)
def compiled_rule_iterate(activation: Activation):
    """(iterate, moments) of the tensor rule for ``activation`` (built once per process and
    activation), or None if its formula does not compile."""
    import numba

    funcs = compiled_activation(activation)
    if funcs is None:
        return None
    sigma, dsigma, d2sigma = funcs
    R, L, P = compiled_lattice(activation)
    separable = R is not None
    if R is None:
        R = sigma   # never called (separable is a compile-time False)
    inv_L = 1.0 / L
    reach = EXP_LIMIT * L / max(P, 1)   # separation while |a| + |b| <= reach on the lattice
    geometry = compiled_geometry()

    @numba.njit(cache=False)
    def moments(C1, e, D, K, r, z, w, work):
        p, s2, s_res, rho = geometry(e, D, K)
        b = C1 * r
        n = z.shape[0]
        ra = r * rho
        rb = r * s_res
        zmax = max(abs(z[0]), abs(z[n - 1]))
        split = separable and zmax * (abs(ra) + abs(rb)) <= reach
        for j in range(n):   # work[0, j] = z_j w_j (the inner Stein sums)
            work[0, j] = z[j] * w[j]
        if split:   # work[1, j] = exp(r s_res z_j / L): sigma(r y1_ij) = R(a_i + b_j, U_i work[1, j])
            for j in range(n):
                work[1, j] = math.exp(z[j] * rb * inv_L)
        m1 = 0.0
        m2 = 0.0
        dm2 = 0.0
        cross = 0.0
        square = 0.0
        for i in range(n):
            mu = z[i] * rho
            mean = 0.0
            inner_z = 0.0   # sum_j w_j z_j sigma(r y1_ij): U_i = mu_i T_i + s_res inner_z
            if split:
                a = z[i] * ra
                U = math.exp(a * inv_L)
                for j in range(n):
                    val = R(a + z[j] * rb, U * work[1, j])
                    mean += val * w[j]
                    inner_z += val * work[0, j]
            else:
                for j in range(n):
                    val = sigma((mu + z[j] * s_res) * r)
                    mean += val * w[j]
                    inner_z += val * work[0, j]
            mean_y1 = mu * mean + s_res * inner_z
            y2 = z[i] * s2
            arg = y2 * b
            B = sigma(arg)
            B1 = dsigma(arg)
            B2 = d2sigma(arg)
            resid = mean - B
            m2 += w[i] * (resid * B1 * y2)
            m1 += w[i] * (B1 * (mean_y1 - B * mu))
            dm2 += w[i] * (y2 * y2 * (resid * B2 - B1 * B1))
            cross += w[i] * (B * mean)
            square += w[i] * (B * B)
        return p, m1 / r, m2 / r, dm2, cross, square

    return _make_iterate(moments, *compiled_logit_gradients()), moments


def compiled_rule_loop(activation: Activation, nodes: int):
    """(iterate, z, w): the compiled event loop of ``activation`` on the ``nodes``-point float64
    rule (:func:`rdyn.reduced_dynamics.model_a.gauss_hermite.float64_rule`, contiguous copies), or None
    if the formula does not compile under numba."""
    from rdyn.reduced_dynamics.model_a.gauss_hermite import float64_rule

    built = compiled_rule_iterate(activation)
    if built is None:
        return None
    rule = float64_rule(nodes)
    return built[0], np.ascontiguousarray(rule.nodes), np.ascontiguousarray(rule.weights)
