"""The one Model A engine (issue 41, item 3): homogeneous and smooth runs are driven by the same
engine (:class:`rdyn.reduced_dynamics.model_a.engine.ModelAEngine`), their results are
assembled by the same code (:func:`~rdyn.reduced_dynamics.model_a.engine.assemble`), and a
smooth run takes its step size from the request (``model.eta``, resolved once) while its
checkpoint identity keeps the config's ``eta`` (None: the default step size)."""
import json
import math

import numpy as np
import pytest

from rdyn.derivations.activations import Activation
from rdyn.reduced_dynamics.model_a import dynamics as md
from rdyn.reduced_dynamics.model_a import engine
from rdyn.reduced_dynamics.model_a import smooth as ms
from rdyn.reduced_dynamics.runs import checkpoint as ck
from rdyn.reduced_dynamics.runs import driver


@pytest.fixture
def engines(monkeypatch):
    """The engines handed to the driver during a test."""
    seen = []
    real = driver.drive

    def spy(eng, *args, **kwargs):
        seen.append(eng)
        return real(eng, *args, **kwargs)

    monkeypatch.setattr(driver, "drive", spy)
    return seen


def test_homogeneous_and_smooth_runs_share_the_engine(engines):
    md.run(md.TeacherConfig(D=6, K=2), steps=50)
    ms.run(ms.SmoothConfig(D=6, K=2, activation=Activation("tanh"), eta=0.1), steps=50, dps=20)
    assert len(engines) == 2
    assert all(type(e) is engine.ModelAEngine for e in engines)


def test_smooth_run_takes_the_resolved_eta(tmp_path):
    config = ms.SmoothConfig(D=6, K=2, activation=Activation("tanh"))
    path = str(tmp_path / "run.npz")
    eta = 0.123
    result = ms.run(config, steps=20, dps=20, eta=eta, checkpoint=path)
    assert result.eta == eta
    with np.load(path, allow_pickle=False) as archive:
        header = json.loads(str(archive[ck.HEADER_KEY][()]))
    assert header["identity"]["eta"] is None   # the config's eta: the default step size
    # without it, the rule of resolve_eta: half of the smooth eta_limit
    default = ms.run(config, steps=2, dps=20)
    with np.errstate(all="ignore"):
        assert default.eta == ms.eta_limit(config) / 2


def _report(t, values):
    c1, c2, c3 = values
    return engine.StateReport(t, c1, c2, c3, 0.5, 1.0, 1.0 / (t + 1))


def test_assemble_reports_captured_steps_only():
    captured = {s: (1.0, 2.0, 3.0) for s in (0, 1, 10, 20, 40, 80)}
    result = engine.assemble(
        engine.RunResult, config=None, eta=0.1, eta_limit=0.2, backend="float64", t=80, t1=3,
        T_star=10, lost=None, captured=captured, final_state=(1.0, 2.0, 3.0),
        record=[10, 99], report=_report, loss=lambda v: 1.0)
    assert list(result.record) == [10]   # 99 was never captured
    assert [s for s, _ in result.loss_curve] == sorted(captured)
    assert result.final.t == 80 and result.T_star == 10 and result.t1 == 3


def test_assemble_reports_nothing_computed_from_a_diverged_run():
    captured = {s: (1.0, 2.0, 3.0) for s in range(0, 100, 5)}
    result = engine.assemble(
        engine.RunResult, config=None, eta=0.1, eta_limit=0.2, backend="float64", t=95, t1=3,
        T_star=10, lost=7, captured=captured, final_state=(1.0, 2.0, 3.0), record=[],
        report=_report, loss=lambda v: math.exp(-v[0]), diverged_at=96)
    assert result.diverged_at_step == 96 and result.lost_at_step == 7
    assert result.t1 is None and result.T_star is None and result.loss_slope is None


def test_capture_steps_are_the_log_grid_and_the_record_up_to_the_end():
    steps = engine.capture_steps(1000, [7, 1000, 5000])
    assert steps.dtype == np.int64 and list(steps) == sorted(set(steps))
    assert 7 in steps and 1000 in steps and 5000 not in steps
    assert set(engine.log_grid(1000)) <= set(steps)
