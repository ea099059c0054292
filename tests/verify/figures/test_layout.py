"""Issue 21, item 7: figure labels never overlap. The detector (verify/figures/layout.py) finds
the overlap Figure 3 had with tight_layout (x-labels running into the next row's titles), and
the figures as drawn now (constrained layout) have none. The real figures are checked where
they are made (tests/verify/figures/test_model_a.py, tests/reduced_dynamics/model_b/test_exact.py): the warning is an
error there."""
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rdyn.verification.figures import model_a as figures  # noqa: E402
from rdyn.verification.figures.layout import (FigureLayoutWarning, label_overlaps,  # noqa: E402
                                             save_figure)

pytestmark = pytest.mark.filterwarnings("error::rdyn.verification.figures.layout.FigureLayoutWarning")


def _experiment(task, activation, D=12, K=3, steps=1500):
    t = np.concatenate([[0], np.unique(np.logspace(0, np.log10(steps), 60).astype(int))])
    loss = 1.0 / (1 + t)
    S = np.random.default_rng(0).random((D, D))
    S /= S.sum(axis=0)
    return figures.Experiment(task, activation, D, K, 100, t, loss, 1.1 * loss, 1 - loss, loss,
                              loss, S, S, -1.0, -1.0, -1.0, 10)


EXPERIMENTS = [_experiment(task, activation) for task, activation in figures.EXPERIMENTS]


def test_detector_finds_overlapping_labels(tmp_path):
    fig = plt.figure(figsize=(3, 3))
    top, bottom = fig.add_axes([0.2, 0.55, 0.7, 0.4]), fig.add_axes([0.2, 0.1, 0.7, 0.4])
    top.set_xlabel("x label of the top row")
    bottom.set_title("title of the next row")  # sits on the top row's tick labels
    overlaps = label_overlaps(fig)
    assert ("axes 0 x-tick '0.4'", "axes 1 title 'title of the next row'") in overlaps
    with pytest.warns(FigureLayoutWarning, match="overlapping labels"):
        save_figure(fig, tmp_path / "bad.png", dpi=100)
    fig2, (a, b) = plt.subplots(2, 1, figsize=(3, 3), layout="constrained")
    a.set_xlabel("x label of the top row")
    b.set_title("title of the next row")
    assert label_overlaps(fig2) == []
    plt.close(fig)
    plt.close(fig2)


def test_detector_sees_the_old_figure3_overlap(tmp_path, monkeypatch):
    """Figure 3 as it was drawn before (tight_layout): x-labels over the next row's titles."""
    original = plt.subplots

    def tight(*args, **kwargs):
        kwargs.pop("layout", None)
        fig, axes = original(*args, **kwargs)
        fig.set_layout_engine("tight")
        return fig, axes

    monkeypatch.setattr(plt, "subplots", tight)
    with pytest.warns(FigureLayoutWarning, match=r"x-label 'query i' / axes \d+ title"):
        figures.plot_figure3(EXPERIMENTS, tmp_path / "figure3.png")


@pytest.mark.parametrize("plot", [figures.plot_figure2, figures.plot_figure3])
def test_seed_000_figures_have_no_overlapping_labels(plot, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", FigureLayoutWarning)
        plot(EXPERIMENTS, tmp_path / "figure.png")
    assert (tmp_path / "figure.png").stat().st_size > 10_000
