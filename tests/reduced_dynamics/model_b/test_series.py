"""reduced_dynamics/model_b/series.py: the checkpoint of a Model B trajectory (kind "ln")."""
from __future__ import annotations

import numpy as np
import pytest

from rdyn.reduced_dynamics.model_b import series
from rdyn.reduced_dynamics.model_b.config import Config
from rdyn.reduced_dynamics.model_b.rule import SpectralRule
from rdyn.reduced_dynamics.runs.checkpoint import CheckpointError

RULE = SpectralRule(np.array([[4.0, 1.0]]), np.array([[0.5, 0.5]]), np.array([1.0]), "exact")


def _identity(steps=10):
    return series.run_identity(Config(data="spectrum", d=3, n=6, spectrum=(4, 1, 1), steps=steps), RULE)


def test_identity_names_every_config_field_and_the_rule():
    identity = _identity()
    assert set(Config.__dataclass_fields__) <= set(identity)
    assert identity["spectrum"] == [4, 1, 1] and identity["steps"] == 10
    assert identity["rule"] == {"kind": "exact", "nodes": 1, "mp": False}


def test_save_keeps_the_last_consistent_step_and_load_gives_it_back(tmp_path):
    path = str(tmp_path / "run.npz")
    # alpha, beta, gamma hold steps 0..4, loss and F only 0..2: consistent up to step 3
    s = {"alpha": [0.0, 0.1, 0.2, 0.3, 0.4], "beta": [1.0, 1.1, 1.2, 1.3, 1.4],
         "gamma": [0.0, 0.11, 0.24, 0.39, 0.56], "loss": [0.5, 0.4, 0.3], "F": [-1.0, -0.9, -0.8]}
    assert series.save_series(path, _identity(), s, exact=False) == 3
    back = series.load_series(path, _identity(steps=20), exact=False)      # --steps raised: resumable
    assert back["alpha"] == [0.0, 0.1, 0.2, 0.3] and back["loss"] == [0.5, 0.4, 0.3]
    with pytest.raises(CheckpointError, match="beyond --steps 2"):
        series.load_series(path, _identity(steps=2), exact=False)


def test_a_diverged_state_is_not_resumable(tmp_path):
    path = str(tmp_path / "run.npz")
    s = {"alpha": [0.0, float("inf")], "beta": [1.0, 1.0], "gamma": [0.0, 0.0], "loss": [0.5], "F": [-1.0]}
    series.save_series(path, _identity(), s, exact=False)
    with pytest.raises(CheckpointError, match="non-finite or diverged state"):
        series.load_series(path, _identity(), exact=False)
