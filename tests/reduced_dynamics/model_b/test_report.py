"""reduced_dynamics/model_b/report.py: the JSON object of ``rdyn ln`` from a trajectory."""
from __future__ import annotations

from fractions import Fraction
from types import SimpleNamespace

import mpmath
import pytest

from rdyn.reduced_dynamics.model_b.config import Config
from rdyn.reduced_dynamics.model_b.constants import Constants
from rdyn.reduced_dynamics.model_b.report import report

CONSTANTS = Constants(2.0, 6.0, 2.25, 0.8, Fraction(2), Fraction(6), 0.0625)


def _trajectory(gammas):
    n = len(gammas)
    return SimpleNamespace(constants=CONSTANTS, alpha=[0.5] * n, beta=[1.0] * n, gamma=list(gammas),
                           loss=[0.1] * n, gamma_star=None, expectation="exact", std_error=None)


def test_ln_report_contraction_and_growth():
    cfg = Config(data="spectrum", d=3, n=6, spectrum=(4, 1, 1), steps=4, eta=0.1)
    out = report(cfg, _trajectory([0.0, 0.5, 1.0, 1.5, 2.0]))
    assert out["kappa1"] == 2.0 and out["kappa2"] == 6.0 and out["gamma"] == 2.0
    # Theorem 4.6 at gamma = 2: (1 + 2*1)/(1 + 2*4)
    assert out["contraction"] == {"R_t": 3 / 9, "power_method_ratio": 0.25, "lambda_1": 4.0,
                                  "lambda_r_plus_1": 1.0}
    growth = out["growth"]
    assert growth["predicted_gamma_cube_increment"] == pytest.approx(12 * 0.1 * 0.0625 / 3)
    assert growth["last_gamma_cube_increment"] == 2.0 ** 3 - 1.5 ** 3
    assert growth["claimed"]["gamma"] == Fraction(1, 3)


def test_noln_report_irreducible_loss_and_dps_kappas():
    cfg = Config(model="noln", target="unnormalized", data="spectrum", d=3, n=6, spectrum=(4, 1, 1),
                 steps=4, dps=30)
    tr = _trajectory([0.0] * 5)
    tr.gamma_star = 1.0
    out = report(cfg, tr)
    assert out["irreducible_loss"] == pytest.approx(1 - 2.0 ** 2 / 6.0)       # 1 - kappa1^2/kappa2
    assert out["contraction"]["R_star"] == 2 / 5
    assert isinstance(out["kappa1"], mpmath.mpf) and out["kappa2"] == 6
