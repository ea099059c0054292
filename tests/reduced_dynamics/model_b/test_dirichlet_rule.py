"""reduced_dynamics/model_b/dirichlet_rule.py: the Gauss-Jacobi nodes and the tensor rule at dps
equal the plain mpf computations bit for bit."""
from __future__ import annotations

from fractions import Fraction
from itertools import product

import mpmath
import pytest
from scipy.special import roots_jacobi

from rdyn.reduced_dynamics.model_b import dirichlet_rule as dr


def _gauss_beta_mpf(n, a, b, dps):
    """The n-point Beta(a, b) rule by Newton's method in mpf arithmetic (the definition)."""
    x64, _ = roots_jacobi(n, float(b) - 1, float(a) - 1)
    with mpmath.workdps(dps + 15):
        a, b = dr._mpf(a), dr._mpf(b)
        A, sqB = dr._recurrence(n, a, b)
        tol = mpmath.mpf(10) ** (-(dps + 8))
        nodes, weights = [], []
        for x0 in x64:
            x = mpmath.mpf(float(x0))
            for _ in range(60):
                ps, dp = dr._orthonormal(x, n, A, sqB)
                dx = ps[n] / dp
                x -= dx
                if abs(dx) < tol:
                    break
            ps, _ = dr._orthonormal(x, n, A, sqB)
            nodes.append((1 + x) / 2)
            weights.append(1 / mpmath.fsum(p * p for p in ps[:n]))
        total = mpmath.fsum(weights)
        weights = [w / total for w in weights]
    with mpmath.workdps(dps):
        return tuple(+v for v in nodes), tuple(+w for w in weights)


@pytest.mark.parametrize("n, a, b, dps", [(12, Fraction(1, 2), Fraction(3, 2), 30),
                                          (20, Fraction(3, 2), Fraction(1), 45),
                                          (9, 0.75, 2.5, 20)])
def test_gauss_beta_at_dps_is_the_mpf_newton_iteration_bit_for_bit(n, a, b, dps):
    x, w = dr.gauss_beta(n, a, b, dps)
    x_ref, w_ref = _gauss_beta_mpf(n, dr._key(a), dr._key(b), dps)
    assert [v._mpf_ for v in x] == [v._mpf_ for v in x_ref]
    assert [v._mpf_ for v in w] == [v._mpf_ for v in w_ref]
    with mpmath.workdps(dps):   # and it is a Gauss rule: the mean of u^3 exactly
        moment = mpmath.fsum(wi * xi ** 3 for xi, wi in zip(x, w))
        a_, b_ = dr._mpf(dr._key(a)), dr._mpf(dr._key(b))
        exact = a_ * (a_ + 1) * (a_ + 2) / ((a_ + b_) * (a_ + b_ + 1) * (a_ + b_ + 2))
        assert abs(moment - exact) < mpmath.mpf(10) ** (-dps + 2)


def test_tensor_rule_at_dps_is_the_row_by_row_product():
    params = dr.dirichlet_params([2, 1, 3, 1])
    deltas = [Fraction(1, 15), Fraction(1, 3), 1.0]
    masses, weights = dr.dirichlet_rule(params, 5, 25, deltas)
    rules = [dr.mapped_beta(5, params[j], sum(params[j + 1:]), deltas[j], 25) for j in range(3)]
    with mpmath.workdps(35):
        for row, idx in enumerate(product(range(5), repeat=3)):
            rest, w, want = mpmath.mpf(1), mpmath.mpf(1), []
            for (u, one_minus_u, wj), i in zip(rules, idx):
                want.append(u[i] * rest)
                rest = rest * one_minus_u[i]
                w = w * wj[i]
            want.append(rest)
            assert [v._mpf_ for v in masses[row]] == [v._mpf_ for v in want]
            assert weights[row]._mpf_ == w._mpf_
    assert len(weights) == 125
