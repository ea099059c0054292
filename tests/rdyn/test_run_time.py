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


# ------------------------------------------------------------ issue 32: sweep, crosscheck, figures, asymptotics

class _Stop(Exception):
    """Raised in place of the work: the estimate must be printed before it."""


def _stop(*args, **kwargs):
    raise _Stop


def _err_before_work(capsys, argv):
    from rdyn import cli

    with pytest.raises(_Stop):
        cli.main(argv)
    return capsys.readouterr().err


def test_sweep_estimate_arithmetic():
    """1 s + 35 ns per configuration-step (15 ns --fast); smooth: 1 s + per point 0.2 s + 90 ns a step."""
    assert rt.sweep_estimate(20, 5 * 10**6, False).seconds == pytest.approx(1 + 1e8 * 3.5e-8)
    assert rt.sweep_estimate(20, 5 * 10**6, False, fast=True).seconds == pytest.approx(1 + 1.5)
    assert rt.sweep_estimate(4, 10**7, True).seconds == pytest.approx(1 + 4 * (0.2 + 0.9))
    assert rt.sweep_estimate(100, 10**8, False).line() == \
        "rdyn sweep: about 6 min (100 configurations of 1e+08 steps)"
    assert rt.sweep_estimate(1, 1000, True).line() == \
        "rdyn sweep: about 1 s (1 configuration of 1000 steps (smooth, one run each))"


def test_sweep_prints_its_estimate_before_the_work(capsys, monkeypatch):
    from rdyn.reduced_dynamics.model_a import batch, smooth_sweep

    monkeypatch.setattr(batch, "run_batch", _stop)
    monkeypatch.setattr(smooth_sweep, "run_smooth_batch", _stop)
    argv = ["sweep", "--grid", "D=20,36;K=2,4", "--steps", "300000000"]
    # 1 + 4 * 3e8 * 3.5e-8 = 43 s
    assert _err_before_work(capsys, argv).startswith(
        "rdyn sweep: about 43 s (4 configurations of 3e+08 steps)\n")
    assert "about" not in _err_before_work(capsys, argv + ["--quiet"])
    err = _err_before_work(capsys, ["sweep", "--activation", "tanh", "--grid", "D=20,36;K=2,4",
                                    "--steps", "100000000"])
    assert err.startswith("rdyn sweep: about 38 s (4 configurations of 1e+08 steps (smooth")
    assert "about" not in _err_before_work(capsys, ["sweep", "--grid", "D=20", "--steps", "1000"])


def test_crosscheck_estimate_arithmetic_and_line(capsys, monkeypatch):
    """Population: 4.2e-8 D^2 + 2.1e-10 D^3 per step (D = 800: 134.4 ms, 301 steps: 40 s);
    SGD adds batch (7.2e-7 D + 5.9e-9 D^2) (D = 200, batch 100: 37.6 ms)."""
    from rdyn.verification.references import crosscheck as cc

    assert rt.crosscheck_step_seconds(800, "population", 100) == pytest.approx(0.13440, rel=1e-4)
    assert rt.crosscheck_step_seconds(200, "sgd", 100) == pytest.approx(
        3.36e-3 + 100 * (1.44e-4 + 2.36e-4), rel=1e-6)
    monkeypatch.setattr(cc, "crosscheck", _stop)
    argv = ["crosscheck", "--D", "800", "--K", "4"]
    assert _err_before_work(capsys, argv).startswith(
        "rdyn crosscheck: about 40 s (300 steps of population GD at D = 800)\n")
    assert "about" not in _err_before_work(capsys, argv + ["--quiet"])
    err = _err_before_work(capsys, ["crosscheck", "--D", "200", "--K", "4", "--mode", "sgd",
                                    "--steps", "1000"])
    assert err.startswith("rdyn crosscheck: about 41 s (1000 steps of online SGD (batch 100) at D = 200)")
    assert "about" not in _err_before_work(capsys, ["crosscheck", "--D", "20", "--K", "4"])


def test_figures_with_an_activation_say_how_long(capsys, monkeypatch):
    """14 s + 3.5 ms per SGD step of the four experiments (1.5 ms --quick, from 9 s): the
    default 20000 steps, 84 s of CPU."""
    from rdyn.verification.figures import model_a

    assert rt.figures_smooth_estimate(20000, False, "tanh").seconds == pytest.approx(84.0)
    assert rt.figures_smooth_estimate(1500, True, "tanh").seconds == pytest.approx(11.25)
    monkeypatch.setattr(model_a, "make_figures", _stop)
    err = _err_before_work(capsys, ["figures", "--activation", "tanh", "--out", "unused"])
    assert err.startswith("rdyn figures: about 84 s (four experiments of 20000 SGD steps with tanh)\n")


def test_asymptotics_says_how_long(capsys, monkeypatch):
    """Fixed sizes: identity 2.5 s, relu 7 s, leaky 26 s, plus 2 s for the check: only leaky
    passes 10 s; the API prints nothing."""
    import rdyn
    from rdyn.reduced_dynamics.model_a.limits import asymptotics

    assert rt.asymptotics_estimate("leaky", True).line() == (
        "rdyn asymptotics: about 28 s (the sympy derivation for leaky and its check at D = 1e3..1e6)")
    assert rt.asymptotics_estimate("relu", False).seconds == pytest.approx(7.0)
    monkeypatch.setattr(asymptotics, "asymptotic_summary", _stop)
    assert _err_before_work(capsys, ["asymptotics", "--activation", "leaky"]).startswith(
        "rdyn asymptotics: about 28 s")
    assert _err_before_work(capsys, ["asymptotics"]) == ""   # relu: 9 s
    with pytest.raises(_Stop):
        rdyn.asymptotics(activation="leaky")
    assert capsys.readouterr().err == ""


def test_prove_estimate_arithmetic():
    """--route arb: 1.8 s + 14 us per certified step up to T0 = T* + max(1000, T*/100); the float route:
    1.8 s + 0.6 us per step up to T*, 40 us per step from T* to T0; the iteration capped at 1e9."""
    arb = rt.prove_estimate([1165870], route="arb")
    assert arb.steps == 1165870 + 11658 and arb.seconds == pytest.approx(1.8 + 1177528 * 1.4e-5)
    assert arb.line() == "rdyn prove: about 18 s (1.18e+06 certified steps to T0 = T* + max(1000, T*/100))"
    one = rt.prove_estimate([1165870])
    assert one.steps == 1177528 and one.seconds == pytest.approx(1.8 + 1165870 * 6e-7 + 11658 * 4e-5)
    assert rt.prove_estimate([50000, 37857]).steps == 51000 + 38857
    capped = rt.prove_estimate([10**12])
    assert capped.steps == 10**9 and "stops at its cap of 1e+09 steps" in capped.line()


def test_prove_prints_its_estimate_before_the_work(capsys, monkeypatch):
    from rdyn.verification.proofs import engine, sweep

    monkeypatch.setattr(engine, "prove", _stop)
    # ReLU D = 12, K = 3, eta = 0.01: float64 T* = 1165870 (the certified one, docs/proofs.md)
    err = _err_before_work(capsys, ["prove", "--D", "12", "--K", "3", "--eta", "0.01", "--route", "arb"])
    assert err.startswith("rdyn prove: about 18 s (1.18e+06 certified steps")
    assert "about" not in _err_before_work(capsys, ["prove", "--D", "12", "--K", "3", "--eta", "0.01"])   # float
    assert "about" not in _err_before_work(capsys, ["prove", "--D", "5", "--K", "2"])   # T* ~ 1e3: short
    monkeypatch.setattr(sweep, "run", _stop)
    err = _err_before_work(capsys, ["prove", "--grid", "D=12;K=3;eta=0.01", "--max-tstar", "2000000", "--route",
                                    "arb"])
    assert "rdyn prove: about 18 s (1 instances" not in err and "about 18 s" in err
    err = _err_before_work(capsys, ["prove", "--grid", "D=12;K=3;eta=0.01", "--route", "arb"])   # T* found first
    assert "no time estimate" not in err and "1 instance to prove, 0 skipped; about 18 s" in err
    err = _err_before_work(capsys, ["prove", "--grid", "D=12;K=3;eta=0.01"])
    assert "1 instance to prove, 0 skipped; about 3 s" in err
