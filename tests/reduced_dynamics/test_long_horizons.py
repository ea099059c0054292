"""Long horizons (issue 15): 64-bit step counters, the fixed-point stop, the double-double
backend against arb and mpmath, and the resumable --certify pass."""
from __future__ import annotations

import json
import shutil

import mpmath
import numpy as np
import pytest

from rdyn.reduced_dynamics.numerics import double_double as ddm
from rdyn.reduced_dynamics.model_a.dynamics import (MAX_STEPS, NO_EVENT, TeacherConfig, Thresholds, _Loop,
                                      _iterate, _save_loop, run, run_identity)
from rdyn.reduced_dynamics.model_a.engine import log_grid
from rdyn.reduced_dynamics.model_a.kernels import kernels

CFG = TeacherConfig(D=20, K=4)


def _python_states(config, steps):
    """States 0..steps of the plain-Python float64 kernels (independent of the numba loop)."""
    k = kernels(config.activation, config.logit_scale, "float64")
    c = k.prepare(config.D, config.K, config.step_size, config.vstar_norm2, config.kappa,
                  config.sigma_prime_zero)
    states = [(0.0, 0.0, 0.0)]
    for _ in range(steps):
        states.append(k.step(*states[-1], c))
    return k, c, states


@pytest.mark.parametrize("backend", ["float64", "dd"])
@pytest.mark.parametrize("boundary", [2**31, 2**32])
def test_step_counters_past_32_bits(tmp_path, backend, boundary):
    """A checkpoint placed 8 steps below 2^31 / 2^32 (state: the real state at step 300,
    relabelled) resumes past the boundary: final t, a recorded step and T* above the boundary
    come out exactly, and the state equals 20 plain-Python steps from the saved one."""
    k, c, states = _python_states(CFG, 320)
    t0 = boundary - 8
    steps = boundary + 12
    record = [boundary + 3]
    # T* level between p after 11 and after 12 steps from the saved state: T* = t0 + 12
    p11, p12 = (k.attention(s[1], s[2], c) for s in (states[311], states[312]))
    assert p11 < p12
    thresholds = Thresholds(tstar_attention=(p11 + p12) / 2)
    capture = np.unique(np.concatenate([log_grid(steps), record])).astype(np.int64)
    capture = capture[capture <= steps]
    cursor = int(np.searchsorted(capture, t0))
    if backend == "float64":
        state = np.array(states[300])
        out = np.full((len(capture), 3), np.nan)
    else:
        state = np.array([[x, 0.0] for x in states[300]])
        out = np.full((len(capture), 3, 2), np.nan)
    loop = _Loop(t0, state, np.array([14, NO_EVENT, NO_EVENT, steps], dtype=np.int64),
                 np.array([cursor], dtype=np.int64), out)
    dps = 31 if backend == "dd" else None
    path = str(tmp_path / "near_boundary.npz")
    _save_loop(path, run_identity(CFG, steps, record, thresholds, backend, dps), loop, capture)
    result = run(CFG, steps=steps, record=record, thresholds=thresholds, backend=backend,
                 resume=path)
    assert result.steps == steps and result.final.t == steps
    assert result.T_star == t0 + 12 > boundary
    assert result.t1 == 14
    assert set(result.record) == {boundary + 3} and result.record[boundary + 3].t == boundary + 3
    for got, want in zip((result.final.C1, result.final.C2, result.final.C3), states[320]):
        assert float(got) == pytest.approx(want, rel=1e-13)


def test_step_counters_in_cli_json(tmp_path, capsys):
    """The same resume through ``rdyn teacher --json``: T_star and final.t are JSON integers
    above 2^32."""
    from rdyn.cli import main

    k, c, states = _python_states(CFG, 312)
    t0, steps = 2**32 - 8, 2**32 + 12
    level = (k.attention(states[311][1], states[311][2], c)
             + k.attention(states[312][1], states[312][2], c)) / 2
    thresholds = Thresholds(tstar_attention=level)
    capture = log_grid(steps).astype(np.int64)
    loop = _Loop(t0, np.array(states[300]),
                 np.array([14, NO_EVENT, NO_EVENT, steps], dtype=np.int64),
                 np.array([int(np.searchsorted(capture, t0))], dtype=np.int64),
                 np.full((len(capture), 3), np.nan))
    path = str(tmp_path / "cli.npz")
    _save_loop(path, run_identity(CFG, steps, [], thresholds, "float64", None), loop, capture)
    status = main(["teacher", "--D", "20", "--K", "4", "--steps", str(steps),
                   "--tstar-attention", repr(level), "--resume", path, "--json", "--quiet"])
    assert status == 0
    out = json.loads(capsys.readouterr().out)
    assert out["T_star"] == t0 + 12 and out["final"]["t"] == steps
    assert MAX_STEPS >= 10**11


def test_fixed_point_stop():
    """A default run stops where the iterates are a fixed point of the arithmetic (here
    x <- x + (1 - x)/2 reaches 1.0 exactly after about 54 steps) and says where."""
    def advance(state, t, n, c, capture_steps, capture_out, cursor, events, settings):
        for _ in range(n):
            if t >= events[3]:
                break
            state[0] = state[0] + (1.0 - state[0]) / 2
            t += 1
        return t

    loop = _Loop(0, np.zeros(1), np.array([-1, -1, -1, 10**12], dtype=np.int64),
                 np.zeros(1, dtype=np.int64), np.zeros((0, 1)))
    out = _iterate(advance, loop, 100, None, [], None, strip=None, bar=None, checkpoint=None,
                   identity={}, save_every=60.0, stop_at_fixed_point=True)
    assert out.state[0] == 1.0
    assert out.fixed_point_at == 100 and out.t == 200


# ------------------------------------------------------------------ double-double


def test_dd_exp_atan_sqrt_div_against_mpmath():
    """dexp, datan, dsqrt, ddiv on 1500 random dd arguments each: relative error below 1e-31
    against 50-digit mpmath (u^2 = 1.2e-32; the documented bounds are a few u^2)."""
    rng = np.random.default_rng(15)
    worst = {}
    with mpmath.workdps(50):
        for name, f, ref, lo, hi, log in [("exp", ddm.dexp, mpmath.exp, -60, 60, False),
                                          ("atan", ddm.datan, mpmath.atan, -8, 8, True),
                                          ("sqrt", ddm.dsqrt, mpmath.sqrt, -8, 8, True)]:
            w = 0.0
            for _ in range(1500):
                x = 10 ** rng.uniform(lo, hi) * rng.choice([-1, 1]) if log else rng.uniform(lo, hi)
                if name == "sqrt":
                    x = abs(x)
                pair = ddm.two_sum(x, x * rng.uniform(-1, 1) * 2.0**-53)
                exact = ref(ddm.dd_to_mpf(pair))
                w = max(w, float(abs(ddm.dd_to_mpf(f(pair)) - exact) / abs(exact)))
            worst[name] = w
        w = 0.0
        for _ in range(1500):
            a = ddm.two_sum(rng.normal(), rng.normal() * 1e-17)
            b = ddm.two_sum(rng.normal(), rng.normal() * 1e-17)
            exact = ddm.dd_to_mpf(a) / ddm.dd_to_mpf(b)
            w = max(w, float(abs(ddm.dd_to_mpf(ddm.ddiv(a, b)) - exact) / abs(exact)))
        worst["div"] = w
    assert all(v < 1e-31 for v in worst.values()), worst
    assert ddm.dexp((0.0, 0.0)) == (1.0, 0.0) and ddm.datan((0.0, 0.0)) == (0.0, 0.0)
    assert ddm.dexp((-800.0, 0.0)) == (0.0, 0.0)


def _agreement(a, b) -> float:
    worst = 0.0
    for key in ("C1", "C2", "C3", "p", "C1_star", "loss"):
        x, y = getattr(a.final, key), getattr(b.final, key)
        worst = max(worst, float(abs(x - y) / abs(y)))
    return worst


def test_dd_agrees_with_arb_short():
    """10^4 steps at D=20, K=4, ReLU: dd and the 30-digit arb path agree to 1e-28 relative
    in every reported value, and the phase integers are equal."""
    steps = 10**4
    dd = run(CFG, steps=steps, backend="dd")
    arb = run(CFG, steps=steps, backend="arb", dps=30)
    assert dd.backend == "dd" and dd.t1 == arb.t1 == 14
    assert _agreement(dd, arb) < 1e-28


@pytest.mark.slow
@pytest.mark.parametrize("activation", ["relu", "identity", "leaky"])
def test_dd_agrees_with_arb_long(activation):
    """10^6 steps (past T* = 163348 at eta = 0.5): dd vs arb at 30 digits to 1e-28."""
    cfg = TeacherConfig(D=20, K=4, activation=activation, eta=0.5)
    dd = run(cfg, steps=10**6, backend="dd")
    arb = run(cfg, steps=10**6, backend="arb", dps=30)
    assert (dd.t1, dd.T_star) == (arb.t1, arb.T_star)
    assert _agreement(dd, arb) < 1e-28


def test_dd_resume_is_bit_identical(tmp_path):
    """dd state is stored exactly (float pairs): interrupted + resumed = uninterrupted."""
    from rdyn.reduced_dynamics.model_a import dynamics as model_a

    whole = run(CFG, steps=3000, backend="dd")
    path = str(tmp_path / "dd.npz")
    calls = {"n": 0}
    original = model_a._save_loop

    def save_then_stop(*args):
        original(*args)
        calls["n"] += 1
        raise KeyboardInterrupt

    model_a._save_loop = save_then_stop
    try:
        with pytest.raises(KeyboardInterrupt):
            run(CFG, steps=3000, backend="dd", chunk=1000, checkpoint=path, checkpoint_every=0)
    finally:
        model_a._save_loop = original
    resumed = run(CFG, steps=3000, backend="dd", resume=path)
    assert resumed.final == whole.final and resumed.t1 == whole.t1


def test_cli_precision_options(capsys):
    from rdyn.cli import main

    assert main(["teacher", "--precision", "dd", "--dps", "40"]) == 2
    assert "--dps must be <= 31" in capsys.readouterr().err
    assert main(["teacher", "--precision", "float64", "--dps", "20"]) == 2
    assert main(["teacher", "--precision", "arb"]) == 2
    assert "needs --dps" in capsys.readouterr().err
    assert main(["teacher", "--steps", str(2 * 10**12)]) == 2


# ------------------------------------------------------------------ certify checkpoints


def test_certify_resume_is_bit_identical(tmp_path, monkeypatch):
    """The interval64 certified pass, saved after every (small) chunk and resumed from a
    middle save, gives the same certificate, state and radii bit for bit."""
    from rdyn.reduced_dynamics.certified import interval_pass as ci
    from rdyn.reduced_dynamics.certified.arb_pass import certified_run

    cfg = TeacherConfig(D=20, K=4, eta=0.5)
    monkeypatch.setattr(ci, "CHUNK", 20_000)
    whole = certified_run(cfg, steps=120_000, backend="interval64")
    path = str(tmp_path / "cert.npz")
    middle = str(tmp_path / "middle.npz")
    saves = {"n": 0}
    original = ci._save_certify

    def save_and_copy(p, *args):
        original(p, *args)
        saves["n"] += 1
        if saves["n"] == 3:
            shutil.copy(p, middle)

    monkeypatch.setattr(ci, "_save_certify", save_and_copy)
    certified_run(cfg, steps=120_000, backend="interval64", checkpoint=path,
                  checkpoint_every=0)
    assert saves["n"] >= 4
    resumed = certified_run(cfg, steps=120_000, backend="interval64", resume=middle)
    assert resumed.summary() == whole.summary()
    assert resumed.radius_growth == whole.radius_growth
    assert [(x.mid().str(30), x.rad().str(10)) for x in resumed.state] == \
        [(x.mid().str(30), x.rad().str(10)) for x in whole.state]
    other = TeacherConfig(D=20, K=4, eta=0.4)
    from rdyn.reduced_dynamics.runs.checkpoint import CheckpointError

    with pytest.raises(CheckpointError, match="eta"):
        certified_run(other, steps=120_000, backend="interval64", resume=middle)


def test_cli_certify_checkpoint_companion(tmp_path, capsys):
    """``--certify --checkpoint run.npz`` writes run.certify.npz; ``--resume run.npz``
    continues the certified pass from it and reports the same certificate."""
    from rdyn.cli import main

    path = str(tmp_path / "run.npz")
    args = ["teacher", "--D", "20", "--K", "4", "--eta", "0.5", "--steps", "50000",
            "--certify", "--checkpoint", path, "--json", "--quiet"]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert (tmp_path / "run.certify.npz").exists()
    assert main(args + ["--resume", path]) == 0
    again = json.loads(capsys.readouterr().out)
    assert first["certified"] is True and first["certificate"] == again["certificate"]
    assert first["t1"] == again["t1"] == 11
