"""The compiled float64-interval certified pass (reduced_dynamics/certified/interval_pass.py) on the
driver (reduced_dynamics/runs/driver.py): Ctrl-C inside a chunk saves the chunk's start, and the
resumed pass equals the uninterrupted one."""
from __future__ import annotations

import pytest

pytest.importorskip("flint")

from rdyn.reduced_dynamics.certified import interval_pass as ci  # noqa: E402
from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig  # noqa: E402
from rdyn.reduced_dynamics.runs.checkpoint import Interrupted  # noqa: E402

CFG = TeacherConfig(D=8, K=2, eta=0.5)    # T* = 4610


def test_interrupt_inside_a_chunk_saves_its_start_and_resumes(tmp_path, monkeypatch):
    monkeypatch.setattr(ci, "CHUNK", 1000)
    whole = ci.certified_run_interval(CFG, steps=6000)
    real = ci.interval_kernels(CFG.activation, CFG.logit_scale)
    calls = {"n": 0}

    def advance(*args):
        t = real["advance"](*args)   # the arrays are changed: the interrupt lands after the chunk
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return t

    monkeypatch.setattr(ci, "interval_kernels", lambda a, s: {**real, "advance": advance})
    path = str(tmp_path / "cert.npz")
    with pytest.raises(Interrupted) as info:
        ci.certified_run_interval(CFG, steps=6000, checkpoint=path)
    assert info.value.step == 2000 and info.value.path == path    # the start of the third chunk
    monkeypatch.setattr(ci, "interval_kernels", lambda a, s: real)
    resumed = ci.certified_run_interval(CFG, steps=6000, resume=path)
    assert resumed.summary() == whole.summary()
    assert resumed.radius_growth == whole.radius_growth
    assert whole.certified and whole.T_star.step == 4610
