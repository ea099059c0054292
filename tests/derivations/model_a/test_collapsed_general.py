"""derivations/model_a/collapsed_general.py: the collapsed map without positive homogeneity."""
from __future__ import annotations

import sympy as sp

from rdyn.derivations.model_a import collapsed as ma
from rdyn.derivations.model_a import collapsed_general as cg


def test_the_orthogonal_covariances_vanish_for_every_token_weight():
    assert cg.orthogonal_gradient_covariances() == (0, 0)
    assert cg.orthogonal_gradient_covariances(tokens=2) == (0, 0)


def test_homogeneous_coefficient_is_free_of_r():
    assert cg.homogeneous_coefficient_is_free_of_r() is True


def test_general_update_of_c1_is_eta_times_tokens_times_m2():
    m2 = sp.Symbol("m2", real=True)
    update = cg.general_update()
    assert sp.simplify(update["C1"] - ma.eta * (ma.K + ma.N) * m2) == 0


def test_logit_gradient_functions_at_a_point():
    in_group, out_group = cg.logit_gradient_functions()
    # in-group: -C1 V (hY1 - hY2) / (K + N e) = -0.5 * 1 * 0.1 / (4 + 16 * 0.3)
    assert abs(in_group(0.5, 0.3, 4, 16, 1.0, 0.2, 0.1) - (-0.05 / 8.8)) < 1e-15
    # out-group: C1 K V (hY1 - hY2) / (N (K + N e)) = 0.5 * 4 * 1 * 0.1 / (16 * 8.8)
    assert abs(out_group(0.5, 0.3, 4, 16, 1.0, 0.2, 0.1) - 0.2 / 140.8) < 1e-15
