"""rdyn/options/limits.py: bounds set by representation limits, and the options that use them."""
from __future__ import annotations

from rdyn.options import limits
from rdyn.options.table import COMMANDS


def test_limits_fit_their_representations():
    assert limits.SEED_MAX == limits.INT_OPTION_MAX == 2 ** 63 - 1
    assert limits.D_MAX < 2 ** 63 and float(limits.D_MAX) == 1e18
    assert limits.MAX_MODEL_A_STEPS < 2 ** 63
    assert limits.DPS_MIN < limits.GAUSSIAN_ROUTE_DPS_MAX < limits.SMOOTH_DPS_MAX < limits.LN_DPS_MAX < limits.DPS_MAX < 4300
    assert (limits.INITIAL_MAX, limits.VSTAR_NORM2_MAX) == (1e50, 1e100)   # |alpha0 beta0| <= 1e100


def test_the_table_uses_them():
    assert COMMANDS["teacher"].option("D").hi == limits.D_MAX
    assert COMMANDS["teacher"].option("steps").hi == limits.MAX_MODEL_A_STEPS
    assert COMMANDS["ln"].option("steps").hi == limits.MAX_TEACHER_STEPS
    assert COMMANDS["teacher"].option("dps").hi == limits.DPS_MAX and COMMANDS["ln"].option("dps").hi == limits.LN_DPS_MAX
