"""rdyn figures (Figures 2 and 3 of seed 000, Section 4.1); the notebook runs in tests/project/test_notebooks.py."""
import json
from pathlib import Path

import numpy as np
import pytest

from rdyn.verification.figures.model_a import fitted_slope, make_figures, run_experiment

pytestmark = pytest.mark.filterwarnings("error::rdyn.verification.figures.layout.FigureLayoutWarning")

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_fitted_slope_recovers_power_law():
    t = np.arange(0, 1000)
    y = 3.0 * np.maximum(t, 1) ** -1.0
    assert fitted_slope(t, y, 10) == pytest.approx(-1.0, abs=1e-12)
    assert fitted_slope(t, -y, 10) is None  # no positive points


def gcn12_in_group(S):
    """The attention on the in-group keys (j = i - 1, i, i + 1 mod 12), averaged over queries."""
    in_group = np.array([[1.0 if j in ((i - 1) % 12, i, (i + 1) % 12) else 0.0 for i in range(12)]
                         for j in range(12)])
    return np.sum(S * in_group) / 12


def test_sgd_follows_collapsed_prediction():
    """Online SGD (N = 100) of the full model tracks the collapsed population loss within 10%
    at the end, aligns W_V with V*, and puts ~1/K attention on every in-group key."""
    e = run_experiment("gcn", "relu", steps=400, D=12, K=3, seed=2)
    assert e.train[-1] == pytest.approx(e.collapsed_train[-1], rel=0.1)
    assert e.train[-1] < 0.2 * e.train[1]  # it has learned
    assert e.cosine[-1] > 0.99
    assert gcn12_in_group(e.attention) == pytest.approx(gcn12_in_group(e.collapsed_attention), abs=0.05)
    assert gcn12_in_group(e.collapsed_attention) > 0.5


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
    assert data["activation"] == "paper" and data["experiments"][1]["experiment"] == "CNN Leaky ReLU"
    assert all(Path(p).is_file() for p in data["figures"].values())
    assert main(["figures", "--steps", "5"]) == 2
    assert "--steps must be in" in capsys.readouterr().err


def test_unstable_sgd_is_reported_as_diverged_without_slopes(tmp_path, capsys):
    """||V*||_F^2 = 1e10: SGD at half the collapsed map's stable step blows up (the loss passes
    1e100 within 200 steps); the run says so per experiment, reports no SGD slopes and exits 3
    (it once exited 0 with slopes of +60). A stable run reports no divergence."""
    import rdyn.schemas
    from rdyn.cli import main
    from rdyn.verification.figures.model_a import SGD_LOSS_BOUND

    assert main(["figures", "--quick", "--steps", "40", "--batch", "20", "--vstar-norm2", "1e10",
                 "--out", str(tmp_path), "--json"]) == 3
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    rdyn.schemas.validate("figures", data)
    cnn = data["experiments"][0]
    assert cnn["experiment"] == "CNN ReLU" and 1 <= cnn["diverged_at_step"] <= 40
    assert cnn["slope_train"] is None and cnn["slope_ood"] is None
    assert f"above {SGD_LOSS_BOUND:g} times its value at step 0" in cnn["divergence_reason"]
    assert "CNN ReLU: SGD diverged at step" in captured.err
    e = run_experiment("sts", "relu", steps=40, D=12, K=3, vstar_norm2=256.0, batch_size=20)
    assert e.diverged_at_step is None and e.divergence_reason is None
    assert np.all(e.train <= SGD_LOSS_BOUND * e.train[0])


# ------------------------------------------------------------- --activation (issue 22)

def test_smooth_sgd_follows_the_smooth_collapsed_prediction():
    """sigma = erf for teacher and student (the figures' default ||V*||_F^2 = 2): online SGD
    (N = 100) of the full model tracks the smooth collapsed population loss within 6 % at every
    recorded step from the fifth on (measured 2.9 %), its attention within 0.05 per in-group
    key, and W_V aligns with V*; the prediction is model_a.smooth's run."""
    from rdyn.derivations.activations import Activation
    from rdyn.reduced_dynamics.model_a.smooth import SmoothConfig, run as run_smooth

    erf = Activation("erf")
    e = run_experiment("gcn", erf, steps=400, D=12, K=3, vstar_norm2=2.0, seed=2)
    assert e.label == "GCN erf"
    ref = run_smooth(SmoothConfig(D=12, K=3, activation=erf, vstar_norm2=2.0, M=4), 400,
                     record=[400])
    assert e.collapsed_train[-1] == float(ref.record[400].loss)
    assert np.max(np.abs(e.train[5:] / e.collapsed_train[5:] - 1)) < 0.06
    assert e.train[-1] < 0.95 * e.train[1]   # it has learned
    assert e.cosine[-1] > 0.95
    assert gcn12_in_group(e.attention) == pytest.approx(gcn12_in_group(e.collapsed_attention), abs=0.05)


def test_cli_activation_json_text_titles_and_refusals(tmp_path, capsys, monkeypatch):
    """--activation tanh: four experiments named with the activation, the JSON keys
    activation / activation_expr (schema-checked); a formula: the titles of both figures and
    the slope lines name it and print the paper's slopes as ReLU/Leaky context only;
    --paper B with --activation(-expr) and a bad formula are refused in one line."""
    import rdyn.schemas
    from rdyn.cli import main
    from rdyn.verification.figures import model_a as figures

    argv = ["figures", "--quick", "--steps", "10", "--batch", "10", "--out", str(tmp_path)]
    assert main(argv + ["--activation", "tanh", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rdyn.schemas.validate("figures", data)
    assert data["activation"] == "tanh" and data["activation_expr"] is None
    assert [r["experiment"] for r in data["experiments"]] == ["CNN tanh", "GCN tanh", "STS tanh",
                                                              "GSLP tanh"]
    titles = []
    real = figures.save_figure
    monkeypatch.setattr(figures, "save_figure", lambda fig, path, **kw: (
        titles.append(fig._suptitle.get_text()), real(fig, path, **kw)))
    assert main(argv + ["--activation-expr", "x + tanh(x)/2"]) == 0
    out = capsys.readouterr().out
    assert "sigma = expr:x + tanh(x)/2" in out and "paper (ReLU/Leaky): training -1.0" in out
    assert "  CNN expr:x + tanh(x)/2 " in out
    assert len(titles) == 2 and all("sigma = expr:x + tanh(x)/2 (beyond the paper)" in t
                                    for t in titles)
    base = ["figures", "--quick", "--out", str(tmp_path)]
    for bad, needle in ((["--paper", "B", "--activation", "erf"], "--activation applies only to --paper A"),
                        (["--paper", "B", "--activation-expr", "x"], "--activation-expr applies only"),
                        (["--activation-expr", "x*y"], "only the symbol x")):
        rc = main(base + bad)
        err = capsys.readouterr().err
        assert rc == 2 and err.count("\n") == 1 and needle in err, err
