"""reduced_dynamics/model_a/double_double_run.py: the dd run's inputs are the exact parameters
rounded to double-double (about 32 digits), not their float64 values."""
from __future__ import annotations

import mpmath
import numpy as np

from rdyn.reduced_dynamics.model_a import double_double_run as mdd
from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, Thresholds


def _dd(pair):
    return mpmath.mpf(float(pair[0])) + mpmath.mpf(float(pair[1]))


def test_settings_hold_the_thresholds_and_ratio_in_double_double():
    consts, settings = mdd.dd_inputs(TeacherConfig(D=12, K=3), Thresholds())
    with mpmath.workdps(50):
        # the t1 fraction is the decimal 0.95 (float64 0.95 is off by 4.4e-17), T*'s level 1/(2K)
        assert abs(_dd(settings[mdd.D_FRAC:mdd.D_FRAC + 2]) - mpmath.mpf(95) / 100) < 1e-32
        assert abs(_dd(settings[mdd.D_LEVEL:mdd.D_LEVEL + 2]) - mpmath.mpf(1) / 6) < 1e-32
        assert abs(_dd(settings[mdd.D_RATIO:mdd.D_RATIO + 2]) - mpmath.mpf(3) / 9) < 1e-32   # K/(D-K)
    assert settings[mdd.D_FRAC + 1] != 0                    # the low word carries the decimal's tail
    assert settings.shape == (mdd.N_DSETTINGS,)


def test_constants_are_normalised_double_double_pairs():
    consts, _ = mdd.dd_inputs(TeacherConfig(D=12, K=3), Thresholds())
    assert consts.ndim == 2 and consts.shape[1] == 2
    hi, lo = consts[:, 0], consts[:, 1]
    assert np.all(np.isfinite(consts))
    assert np.all(np.abs(lo) <= np.spacing(np.abs(hi)) / 2)     # hi = fl(hi + lo)
    assert np.all(hi + lo == hi)
