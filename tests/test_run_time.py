"""The time estimate printed before long --dps runs (issue 20; rdyn/run_time.py): the model's
values, when the line is printed (above 10 s, not with --quiet), and the step count of a
default run (max(2 T*, 1000)) against the arb run's."""
from __future__ import annotations

import pytest

from cli_runs import run_main
from rdyn import run_time as rt


def test_model_values():
    # 8e-6 + 6.1e-9 N^1.5: N = 4000 -> 8e-6 + 6.1e-9 * 252982.2 = 1.5512e-3 s
    assert rt.teacher_step_seconds(4000) == pytest.approx(1.5512e-3, rel=1e-4)
    assert rt.teacher_step_seconds(100) == pytest.approx(8e-6 + 6.1e-6, rel=1e-12)
    ratio = rt.teacher_step_seconds(4000) / rt.teacher_step_seconds(1000)
    assert 7.0 < ratio < 8.0   # dominated by N^1.5 (8x) at high N, damped by the overhead


def test_line_and_threshold(capsys):
    long = rt.RunTimeEstimate("teacher", 65.2, "40000 steps at --dps 4000")
    assert long.line() == "rdyn teacher: about 65 s (40000 steps at --dps 4000)"
    assert rt.RunTimeEstimate("teacher", 7200 * 3, "10000000 steps at --dps 30", True).line() == \
        "rdyn teacher: more than 6.0 h (at least 10000000 steps at --dps 30)"
    assert rt.announce(long, quiet=False) and capsys.readouterr().err == long.line() + "\n"
    assert not rt.announce(long, quiet=True)
    assert not rt.announce(rt.RunTimeEstimate("teacher", 9.9, "10 steps at --dps 30"), quiet=False)
    assert capsys.readouterr().err == ""
    assert rt.teacher_estimate(None, 10, None, False, None, 1000) is None   # float64: none


def test_certify_counts_the_certified_pass():
    plain = rt.teacher_estimate(None, 1000, 2000, False, None, 1000)
    both = rt.teacher_estimate(None, 1000, 2000, True, None, 1000)
    assert both.seconds == pytest.approx(plain.seconds * (1 + rt.CERTIFY_FACTOR))
    assert plain.seconds == pytest.approx(1000 * rt.teacher_step_seconds(2000))


def test_default_steps_are_those_of_the_dps_run():
    """The step count predicted for a run without --steps (float64 pre-runs) is the one the
    arb run at --dps 30 makes (D = 6, K = 2: T* = 1037, so max(2 T*, 1000) = 2074); D = 20,
    K = 4, eta = 0.5 needs the second pre-run (T* = 163348 > 1e5)."""
    from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, Thresholds, run

    cfg = TeacherConfig(D=6, K=2)
    arb = run(cfg, backend="arb", dps=30)
    assert rt.default_teacher_steps(cfg, Thresholds(), 1000) == (arb.steps, False) == (2074, False)
    assert rt.default_teacher_steps(TeacherConfig(D=20, K=4, eta=0.5), Thresholds(), 1000) == \
        (326696, False)


def test_cli_prints_the_estimate_unless_quiet(capsys, monkeypatch):
    monkeypatch.setattr(rt, "TEACHER_A_S", 1.0)   # 30^1.5 s per step: any run is long
    argv = ["teacher", "--D", "20", "--K", "4", "--steps", "3", "--dps", "30", "--json"]
    rc, out, err = run_main(capsys, argv)
    assert rc == 0 and err.startswith("rdyn teacher: about 8 min (3 steps at --dps 30)\n")
    rc, quiet_out, err = run_main(capsys, argv + ["--quiet"])
    assert rc == 0 and err == "" and quiet_out == out
    monkeypatch.undo()
    rc, _, err = run_main(capsys, argv)   # the real model: 3 steps take well under 10 s
    assert rc == 0 and "rdyn teacher: about" not in err


def test_smooth_crosscheck_estimate(capsys):
    """(steps + 1) M D entries at 1.5 ms: M = 1000, D = 8, 2 steps -> 24000 entries, 36 s
    (measured 30 s for tanh); printed by rdyn crosscheck before the work, not with --quiet."""
    estimate = rt.crosscheck_smooth_estimate(1000, 8, 2)
    assert estimate.seconds == pytest.approx(36.0)
    assert estimate.line() == "rdyn crosscheck: about 36 s (2 steps of 1000 x 8 Gaussian expectations)"
    argv = ["crosscheck", "--activation", "tanh", "--D", "4", "--K", "2", "--M", "2", "--steps",
            "1", "--json"]
    real = rt.SMOOTH_ENTRY_S
    try:
        rt.SMOOTH_ENTRY_S = 10.0    # every run "long": the line shows, then the run
        rc, out, err = run_main(capsys, argv)
        assert rc == 0 and err.startswith("rdyn crosscheck: about 3 min (1 steps of 2 x 4 ")
        rc, quiet_out, err = run_main(capsys, argv + ["--quiet"])
        assert rc == 0 and "about" not in err and quiet_out == out
    finally:
        rt.SMOOTH_ENTRY_S = real
