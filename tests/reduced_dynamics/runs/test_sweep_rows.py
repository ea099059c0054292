"""reduced_dynamics/runs/sweep_rows.py: a sweep checkpoint's rows are checked one by one; a
diverged row may hold non-finite values only where and when a diverged row does."""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from rdyn.reduced_dynamics.model_a.batch import ROW_FIELDS
from rdyn.reduced_dynamics.runs import sweep_rows
from rdyn.reduced_dynamics.runs.checkpoint import CheckpointError

CONFIG = SimpleNamespace(D=20, K=2, eta=0.1, vstar_norm2=1.0, activation=SimpleNamespace(label="erf"),
                         logit_scale="D", M=None)
ROW = {"D": 20, "K": 2, "eta": 0.1, "vstar_norm2": 1.0, "activation": "erf", "kappa": None,
       "logit_scale": "D", "sigma_prime_zero": None, "steps": 10, "t1": 3, "T_star": None,
       "C1": 1.5, "C2": 0.01, "C3": 0.001, "p": 0.05, "C1_star": 1.6, "loss": 1.9, "loss_slope": None,
       "diverged_at_step": None, "M": None}


def _check(row, steps=10):
    return sweep_rows.check_smooth_rows("c.json", [CONFIG], [row], steps, ROW_FIELDS)


def test_the_row_fixture_has_the_sweep_fields():
    assert set(ROW) == set(ROW_FIELDS)


def test_a_finished_row_passes_and_a_diverged_rows_empty_fields_become_none():
    assert _check(ROW) == [ROW]
    diverged = dict(ROW, diverged_at_step=7, steps=6, t1=math.nan, T_star=math.inf)
    assert _check(diverged) == [dict(diverged, t1=None, T_star=None)]


@pytest.mark.parametrize("change,message", [
    ({"C1": math.nan}, "row 1 (D=20, K=2, eta=0.1, activation=erf) holds C1=nan; not resumable"),
    ({"diverged_at_step": 7}, "holds steps=10, expected 6 (the step before its divergence at step 7)"),
    ({"diverged_at_step": 11, "steps": 10}, "is marked diverged at step 11, not a step in 1..10"),
    ({"t1": math.nan}, "holds t1=nan but is not diverged"),
    ({"t1": 11}, "holds t1=11"),
    ({"D": 24}, "holds D=24, not its configuration's 20"),
    ({"C1": 2e100, "diverged_at_step": 7, "steps": 6, "t1": None},
     "holds C1=2e+100 (a diverged row holds the last finite state)"),
])
def test_an_impossible_row_is_refused_naming_it(change, message):
    with pytest.raises(CheckpointError) as info:
        _check(dict(ROW, **change))
    assert message in str(info.value)


def test_the_batch_clock_must_be_reachable():
    captures = np.array([1, 2, 4, 8])
    sweep_rows.check_batch_clock("c.npz", np.array([5, 3, 0]), 10, captures)   # 3 captures at steps < 5
    sweep_rows.check_batch_clock("c.npz", np.array([10, 4, 1]), 10, captures)
    with pytest.raises(CheckpointError, match=r"impossible loop position \(step 5, capture 1, finished 0\)"):
        sweep_rows.check_batch_clock("c.npz", np.array([5, 1, 0]), 10, captures)
    with pytest.raises(CheckpointError, match="finished 1"):
        sweep_rows.check_batch_clock("c.npz", np.array([5, 3, 1]), 10, captures)
