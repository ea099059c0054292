"""verify/references/montecarlo.py: the brute-force Monte Carlo gradient of the full model, against
a closed form: for the identity activation the W_V gradient is linear in W_V, and with iid N(0,1)
X, E[X A X^T] = tr(A) I, so <grad_{W_V} L, V*>/||V*||^2 = C1 tr(S S^T) - tr(S* S^T) exactly."""
from __future__ import annotations

import numpy as np

from rdyn.verification.references import montecarlo as mc

GROUPS = [[0, 1], [0, 1], [2, 3], [2, 3]]          # D = 4, K = 2: the in-group of each column


def test_structure_matrices():
    a_in, a_out = mc.structure_matrices(GROUPS)
    assert a_in[:, 0].tolist() == [1, 1, 0, 0] and a_in[:, 3].tolist() == [0, 0, 1, 1]
    assert np.array_equal(a_in + a_out, np.ones((4, 4)))


def test_w_v_gradient_of_the_identity_activation_equals_the_closed_form():
    C1, C2, C3 = 0.5, 1.0, 0.5
    vstar = np.random.default_rng(3).standard_normal((2, 3))
    est = mc.projected_gradient(C1, C2, C3, vstar, GROUPS, kappa=1.0, samples=100_000, seed=1)
    a_in, a_out = mc.structure_matrices(GROUPS)
    s_star = a_in / a_in.sum(axis=0, keepdims=True)
    logits = (C2 * a_in - C3 * a_out) / 4
    S = np.exp(logits) / np.exp(logits).sum(axis=0, keepdims=True)
    exact = C1 * np.trace(S @ S.T) - np.trace(s_star @ S.T)
    assert est.samples == 100_000 and np.all(est.std_error > 0)
    assert abs(est.mean[0] - exact) < 5 * est.std_error[0], (est.mean[0], exact, est.std_error[0])
    assert est.std_error[0] < 0.05 * abs(exact)          # the comparison has power
