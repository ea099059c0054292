"""rdyn figures (Figures 2 and 3 of seed 000, Section 4.1); the notebook runs in test_notebooks."""
import json
from pathlib import Path

import numpy as np
import pytest

from rdyn.verification.figures import fitted_slope, make_figures, run_experiment

pytestmark = pytest.mark.filterwarnings("error::rdyn.verification.figure_layout.FigureLayoutWarning")

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_fitted_slope_recovers_power_law():
    t = np.arange(0, 1000)
    y = 3.0 * np.maximum(t, 1) ** -1.0
    assert fitted_slope(t, y, 10) == pytest.approx(-1.0, abs=1e-12)
    assert fitted_slope(t, -y, 10) is None  # no positive points


def test_sgd_follows_collapsed_prediction():
    """Online SGD (N = 100) of the full model tracks the collapsed population loss within 10%
    at the end, aligns W_V with V*, and puts ~1/K attention on every in-group key."""
    e = run_experiment("gcn", "relu", steps=400, D=12, K=3, seed=2)
    assert e.train[-1] == pytest.approx(e.collapsed_train[-1], rel=0.1)
    assert e.train[-1] < 0.2 * e.train[1]  # it has learned
    assert e.cosine[-1] > 0.99
    in_group = np.array([[1.0 if j in ((i - 1) % 12, i, (i + 1) % 12) else 0.0 for i in range(12)]
                         for j in range(12)])
    assert np.sum(e.attention * in_group) / 12 == pytest.approx(
        np.sum(e.collapsed_attention * in_group) / 12, abs=0.05)
    assert np.sum(e.collapsed_attention * in_group) / 12 > 0.5


def test_make_figures_writes_pngs(tmp_path):
    _, paths = make_figures(tmp_path, steps=30, quick=True, vstar_norm2=256.0, batch_size=20,
                            noise_std=1.0, seed=0, experiments=(("sts", "relu"), ("gslp", "relu")),
                            progress=False)
    for path in paths.values():
        assert path.read_bytes()[:8] == PNG_MAGIC and path.stat().st_size > 10_000


def test_cli_json_and_usage(tmp_path, capsys):
    import rdyn.schemas
    from rdyn.cli import main  # in-process: reuses the compiled kernels of the other tests

    assert main(["figures", "--quick", "--steps", "20", "--batch", "10", "--out", str(tmp_path),
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rdyn.schemas.validate("figures", data)  # rdyn/schemas/figures.schema.json
    assert len(data["experiments"]) == 6 and data["steps"] == 20
    assert all(Path(p).is_file() for p in data["figures"].values())
    assert main(["figures", "--steps", "5"]) == 2
    assert "--steps must be in" in capsys.readouterr().err
