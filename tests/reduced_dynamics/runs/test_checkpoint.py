"""Checkpoint and resume (issue 5, item 4): the file format, bit-identical resume of
``rdyn teacher`` (Model A: float64, arb, mpmath) and ``rdyn ln`` (Model B: float64, dps),
refusal of mismatched or corrupt checkpoints, and Ctrl-C (simulated and a real SIGINT)."""
import json
import os
import signal
import sys

import mpmath
import numpy as np
import pytest

from rdyn import cli
from signal_runs import signal_when_checkpointed
from rdyn.reduced_dynamics.runs import checkpoint as ck
from rdyn.reduced_dynamics.model_a import dynamics as ma
from rdyn.reduced_dynamics.model_b import run as mb
from rdyn.reduced_dynamics.model_b import iterate as model_b_iterate


# ------------------------------------------------------------------------------ helpers
def interrupting(factory, after: int, partial: bool = False):
    """Wrap an ``advance`` factory so the (after+1)-th chunk raises KeyboardInterrupt; with
    ``partial`` it first runs half of that chunk (state, events, cursor partly updated)."""
    calls = {"n": 0}

    def make(*args):
        advance = factory(*args)

        def wrapped(state, t, n, *rest):
            calls["n"] += 1
            if calls["n"] > after:
                if partial:
                    advance(state, t, max(n // 2, 1), *rest)
                raise KeyboardInterrupt
            return advance(state, t, n, *rest)

        return wrapped

    make.calls = calls
    return make


def counting(factory):
    calls = {"n": 0}

    def make(*args):
        advance = factory(*args)

        def wrapped(*a):
            calls["n"] += 1
            return advance(*a)

        return wrapped

    make.calls = calls
    return make


def teacher_outcome(r):
    return (r.steps, r.t1, r.T_star, r.lost_at_step, r.final, r.record, r.loss_curve, r.loss_slope)


def trajectory(tr):
    return (tr.alpha, tr.beta, tr.gamma, tr.loss, tr.F, tr.std_error, tr.gamma_star, tr.upsilon1)


# ------------------------------------------------------------------------------ the format
def test_exact_text_round_trips_bits_at_any_precision():
    import flint

    with mpmath.workdps(40):
        values = [mpmath.sqrt(2), -mpmath.pi / 7, mpmath.mpf(0), mpmath.mpf("1e-300")]
    with mpmath.workdps(10):  # the restored bits do not depend on the working precision
        back = ck.from_exact_array(ck.exact_array(values), "mpmath")
    assert [v._mpf_ for v in back] == [v._mpf_ for v in values]
    old = flint.ctx.prec
    try:
        flint.ctx.prec = 150
        balls = [flint.arb(2).sqrt(), -flint.arb(1) / 3, flint.arb(0)]
        flint.ctx.prec = 53
        restored = ck.from_exact_array(ck.exact_array(balls), "arb")
        assert all((r.mid() == b.mid()) is True and r.rad() == 0 for r, b in zip(restored, balls))
        assert restored[0].mid() != flint.arb(2).sqrt().mid()  # 150-bit midpoint kept
    finally:
        flint.ctx.prec = old
    floats = [0.1, -1e-310, 5e-324, 1e300, -0.0]
    assert [ck.from_exact_text(ck.exact_text(x), "float64") for x in floats] == floats
    assert ck.exact_text(-1.5) == "-3p-1"
    assert [ck.exact_text(x) for x in (float("inf"), float("-inf"))] == ["inf", "-inf"]


def test_save_load_and_refusals(tmp_path):
    path = str(tmp_path / "c.npz")
    ident = {"D": 20, "eta": 0.1, "record": (1, 5), "dps": None}
    ck.save(path, "teacher", ident, {"state": np.array([1.5, np.nan, -2.0])}, {"t": 7})
    assert not os.path.exists(path + ".tmp")
    arrays, meta = ck.load(path, "teacher", dict(ident, record=[1, 5]))
    assert meta == {"t": 7} and arrays["state"][0] == 1.5 and np.isnan(arrays["state"][1])

    def refusal(kind, identity, target=path):
        with pytest.raises(ck.CheckpointError) as info:
            ck.load(target, kind, identity)
        message = str(info.value)
        assert "\n" not in message
        return message

    assert "different eta: 0.1 in the checkpoint, 0.2 now" in refusal("teacher", dict(ident, eta=0.2))
    assert "different dps" in refusal("teacher", dict(ident, dps=30))
    assert "different seed" in refusal("teacher", dict(ident, seed=1))
    assert "not 'rdyn ln'" in refusal("ln", ident)
    assert "does not exist" in refusal("teacher", ident, path + "x")
    data = open(path, "rb").read()
    open(path, "wb").write(data[: len(data) // 2])        # truncated archive
    assert "not a readable rdyn checkpoint" in refusal("teacher", ident)
    open(path, "wb").write(b"not a checkpoint at all")
    assert "not an .npz archive" in refusal("teacher", ident)
    with pytest.raises(ValueError, match="exact_text"):
        ck.save(path, "teacher", ident, {"x": np.array([mpmath.mpf(1)], dtype=object)}, {})


def test_format_version_is_checked(tmp_path):
    path = str(tmp_path / "c.npz")
    header = json.dumps({"format": 99, "kind": "ln", "identity": {}, "meta": {}})
    np.savez(path, __header__=np.array(header))
    with pytest.raises(ck.CheckpointError, match="format 99"):
        ck.load(path, "ln", {})


def test_resume_command_replaces_resume_option():
    argv = ["/bin/rdyn", "teacher", "--D", "20", "--checkpoint", "a b.npz", "--resume", "old.npz"]
    assert ck.resume_command(argv, "teacher", "a b.npz") == \
        "rdyn teacher --D 20 --checkpoint 'a b.npz' --resume 'a b.npz'"


# ------------------------------------------------------------------------------ Model A
CFG_A = ma.TeacherConfig(D=20, K=4)


@pytest.mark.parametrize("backend, dps, steps, chunk, partial", [
    ("float64", None, 5000, 400, False),     # a fixed number of steps
    ("float64", None, None, 50_000, False),  # default end 2 T*, set by the T* event
    ("arb", 20, 300, None, True),            # interrupted in the middle of a chunk
    ("mpmath", 15, 120, None, False),
])
def test_teacher_resume_is_bit_identical(tmp_path, monkeypatch, backend, dps, steps, chunk, partial):
    kw = dict(steps=steps, record=[3, 77], backend=backend, dps=dps, **({"chunk": chunk} if chunk else {}))
    reference = ma.run(CFG_A, **kw)
    path = str(tmp_path / "a.npz")
    name = "compiled_advance" if backend == "float64" else "python_advance"
    original = getattr(ma, name)
    monkeypatch.setattr(ma, name, interrupting(original, 3, partial))
    with pytest.raises(ck.Interrupted) as info:
        ma.run(CFG_A, checkpoint=path, checkpoint_every=1e9, **kw)
    chunk_steps = chunk or ma.STRIP_EVERY
    assert info.value.step == 3 * chunk_steps and info.value.path == path
    ident = ma.run_identity(CFG_A, steps, [3, 77], ma.Thresholds(), backend, dps)
    if backend == "mpmath":  # the precision the run sets (and restores afterwards)
        with ma.working_precision(backend, dps):
            ident["mpmath_prec_bits"] = mpmath.mp.prec
    assert ck.load(path, "teacher", ident)[1]["t"] == 3 * chunk_steps
    counter = counting(original)
    monkeypatch.setattr(ma, name, counter)
    resumed = ma.run(CFG_A, checkpoint=path, resume=path, **kw)
    assert teacher_outcome(resumed) == teacher_outcome(reference)
    uninterrupted_calls = counter.calls["n"]
    ma.run(CFG_A, **kw)
    assert uninterrupted_calls == counter.calls["n"] - uninterrupted_calls - 3  # 3 chunks skipped
    assert resumed.final.t == reference.steps and reference.record[77].C1 != 0


def test_teacher_resume_uses_the_saved_state(tmp_path):
    path = str(tmp_path / "a.npz")
    kw = dict(steps=2000, chunk=500)
    reference = ma.run(CFG_A, checkpoint=path, **kw)  # final checkpoint at step 2000
    assert teacher_outcome(ma.run(CFG_A, resume=path, **kw)) == teacher_outcome(reference)
    ident = ma.run_identity(CFG_A, 2000, (), ma.Thresholds(), "float64", None)
    arrays, meta = ck.load(path, "teacher", ident)
    meta["t"] = 1000
    arrays["state"] = arrays["state"] * 1.01
    ck.save(path, "teacher", ident, arrays, meta)
    assert ma.run(CFG_A, resume=path, **kw).final.C1 != reference.final.C1


def test_teacher_periodic_checkpoints(tmp_path, monkeypatch):
    path = str(tmp_path / "a.npz")
    ident = ma.run_identity(CFG_A, 4000, (), ma.Thresholds(), "float64", None)
    seen = []
    original = ma._save_loop

    def spy(p, identity, loop, capture_steps):
        seen.append(loop.t)
        original(p, identity, loop, capture_steps)

    monkeypatch.setattr(ma, "_save_loop", spy)
    ma.run(CFG_A, steps=4000, chunk=1000, checkpoint=path, checkpoint_every=0)
    assert seen == [1000, 2000, 3000, 4000]  # every chunk (the last one at the end)
    seen.clear()
    ma.run(CFG_A, steps=4000, chunk=1000, checkpoint=path, checkpoint_every=1e9)
    assert seen == [4000]
    assert ck.load(path, "teacher", ident)[1]["t"] == 4000


# ------------------------------------------------------------------------------ Model B
def interrupting_terms(monkeypatch, after: int):
    original = model_b_iterate.step_terms

    def make(*args):
        f = original(*args)
        calls = {"n": 0}

        def g(x):
            calls["n"] += 1
            if calls["n"] > after:
                raise KeyboardInterrupt
            return f(x)

        return g

    monkeypatch.setattr(model_b_iterate, "step_terms", make)
    return original


@pytest.mark.parametrize("cfg", [
    mb.Config(model="ln", data="spectrum", d=4, n=6, spectrum=(3, 1, 1, 1), steps=300),
    mb.Config(model="looped", data="sphere", d=4, n=8, L=2, steps=300, samples=500, seed=3,
              expectation="monte_carlo"),
    mb.Config(model="ln", data="spectrum", d=4, n=6, spectrum=(3, 1, 1, 1), steps=20, dps=20),
    mb.Config(model="noln", target="unnormalized", data="sphere", d=4, n=8, samples=200,
              steps=60, dps=25),
], ids=["ln-float64", "looped-monte-carlo", "ln-dps20", "noln-dps25"])
def test_model_b_resume_is_bit_identical(tmp_path, monkeypatch, cfg):
    rule = mb.build_rule(cfg)  # built once: identical to a rebuild (same seed / quadrature)
    reference = mb.run(cfg, rule=rule)
    path = str(tmp_path / "b.npz")
    stop = cfg.steps // 2 + 1
    original = interrupting_terms(monkeypatch, stop)
    with pytest.raises(ck.Interrupted) as info:
        mb.run(cfg, checkpoint=path, checkpoint_every=1e9, rule=rule)
    assert info.value.step == stop
    monkeypatch.setattr(model_b_iterate, "step_terms", original)
    resumed = mb.run(cfg, checkpoint=path, resume=path, rule=rule)
    assert trajectory(resumed) == trajectory(reference)
    assert len(resumed.alpha) == cfg.steps + 1 and resumed.gamma[-1] != reference.gamma[0]
    if cfg.dps is not None:
        assert isinstance(resumed.alpha[-1], mpmath.mpf)
    again = mb.run(cfg, resume=path, rule=rule)  # from the final checkpoint
    assert trajectory(again) == trajectory(reference)


def test_model_b_rebuilds_the_monte_carlo_rule_identically(tmp_path):
    cfg = mb.Config(model="looped", data="sphere", d=4, n=8, L=2, steps=40, samples=300, seed=5,
                    expectation="monte_carlo")
    path = str(tmp_path / "b.npz")
    reference = mb.run(cfg)
    ident = mb.run_identity(cfg, mb.build_rule(cfg))
    mb.run(mb.Config(**{**cfg.__dict__, "steps": 40}), checkpoint=path)
    arrays, meta = ck.load(path, "ln", ident)
    for name in ("alpha", "beta", "gamma"):
        arrays[name] = arrays[name][:21]
    for name in ("loss", "F"):
        arrays[name] = arrays[name][:20]
    ck.save(path, "ln", ident, arrays, dict(meta, t=20))  # as if stopped at step 20
    assert trajectory(mb.run(cfg, resume=path)) == trajectory(reference)


def test_model_b_refuses_other_monte_carlo_sample(tmp_path):
    cfg = mb.Config(model="ln", data="sphere", d=4, n=8, steps=5, samples=300, seed=1, expectation="monte_carlo")
    path = str(tmp_path / "b.npz")
    mb.run(cfg, checkpoint=path)
    for change in ({"seed": 2}, {"samples": 301}):
        with pytest.raises(ck.CheckpointError, match=f"different {next(iter(change))}"):
            mb.run(mb.Config(**{**cfg.__dict__, **change}), resume=path)


# ------------------------------------------------------------------------------ CLI
TEACHER = ["teacher", "--D", "20", "--K", "4", "--steps", "3000", "--record", "5,700", "--json"]
LN = ["ln", "--json", "--data", "spectrum", "--d", "4", "--spectrum", "3,1,1,1", "--steps", "300"]


def cli_run(capsys, argv):
    rc = cli.main(argv)
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def test_cli_teacher_ctrl_c_then_resume(tmp_path, capsys, monkeypatch):
    rc, reference, _ = cli_run(capsys, TEACHER)
    assert rc == 0
    path = str(tmp_path / "t.npz")
    argv = TEACHER + ["--checkpoint", path]
    monkeypatch.setattr(sys, "argv", ["rdyn", *argv])
    original = ma.compiled_advance
    monkeypatch.setattr(ma, "compiled_advance", interrupting(original, 0))
    rc, out, err = cli_run(capsys, argv)
    assert rc == 130 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("rdyn teacher: interrupted at step 0; resume with: rdyn teacher --D 20")
    assert err.rstrip().endswith(f"--checkpoint {path} --resume {path}")
    monkeypatch.setattr(ma, "compiled_advance", original)
    rc, out, err = cli_run(capsys, argv + ["--resume", path])
    assert rc == 0 and out == reference


def test_cli_teacher_refuses_mismatch_and_corrupt_checkpoint(tmp_path, capsys):
    path = str(tmp_path / "t.npz")
    assert cli_run(capsys, TEACHER + ["--checkpoint", path])[0] == 0
    argv = [a if a != "3000" else "2999" for a in TEACHER] + ["--resume", path]
    rc, out, err = cli_run(capsys, argv)
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert "is at step 3000, beyond --steps 2999" in err
    rc, _, err = cli_run(capsys, TEACHER + ["--eta", "0.1", "--resume", path])
    assert rc == 2 and "different eta: (default) in the checkpoint, 0.1 now" in err
    rc, _, err = cli_run(capsys, TEACHER + ["--dps", "20", "--resume", path])
    assert rc == 2 and "different backend" in err
    with open(path, "r+b") as handle:
        handle.seek(40)
        handle.write(b"\0" * 200)
    rc, _, err = cli_run(capsys, TEACHER + ["--resume", path])
    assert rc == 2 and err.count("\n") == 1 and "not a readable rdyn checkpoint" in err
    rc, _, err = cli_run(capsys, TEACHER + ["--resume", str(tmp_path / "none.npz")])
    assert rc == 2 and "does not exist" in err


def test_cli_ctrl_c_without_checkpoint(capsys, monkeypatch):
    monkeypatch.setattr(ma, "compiled_advance", interrupting(ma.compiled_advance, 0))
    rc, out, err = cli_run(capsys, TEACHER)
    assert rc == 130 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert "interrupted" in err and "--checkpoint" in err


def test_cli_ln_ctrl_c_then_resume_and_mismatch(tmp_path, capsys, monkeypatch):
    rc, reference, _ = cli_run(capsys, LN)
    assert rc == 0
    path = str(tmp_path / "b.npz")
    argv = LN + ["--checkpoint", path, "--checkpoint-every", "0"]
    monkeypatch.setattr(sys, "argv", ["rdyn", *argv])
    original = interrupting_terms(monkeypatch, 123)
    rc, out, err = cli_run(capsys, argv)
    assert rc == 130 and out == "" and err.count("\n") == 1
    assert err.startswith("rdyn ln: interrupted at step 123; resume with: rdyn ln --json --data spectrum")
    monkeypatch.setattr(model_b_iterate, "step_terms", original)
    rc, out, _ = cli_run(capsys, argv + ["--resume", path])
    assert rc == 0 and out == reference
    rc, out, err = cli_run(capsys, LN + ["--eta", "0.2", "--resume", path])
    assert rc == 2 and err.count("\n") == 1 and "different eta: 0.1 in the checkpoint, 0.2 now" in err
    rc, _, err = cli_run(capsys, LN + ["--checkpoint-every", "-1", "--checkpoint", path])
    assert rc == 2 and "--checkpoint-every" in err
    rc, _, err = cli_run(capsys, LN + ["--checkpoint", str(tmp_path / "no" / "b.npz")])
    assert rc == 2 and err.count("\n") == 1 and "does not exist" in err
    with pytest.raises(ck.CheckpointError, match="cannot write checkpoint"):
        ck.save(str(tmp_path / "no" / "b.npz"), "ln", {}, {}, {})


def _interrupt_when_checkpointed(argv, path):
    """Run ``python -m rdyn *argv``, send SIGINT once ``path`` exists; (returncode, out, err)."""
    return signal_when_checkpointed(argv, path, [signal.SIGINT])


def _assert_interrupt_message(rc, out, err, command, tail, steps):
    assert rc == 130, err
    progress = [line for line in err.splitlines() if line.startswith(f"rdyn {command}: step ")
                or line.startswith("rdyn: compiling ")]  # a cold kernel cache says so first
    err = err[sum(len(line) + 1 for line in progress):]  # rdyn ln prints progress lines first
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err
    step = int(err.split("interrupted at step ")[1].split(";")[0])
    assert 0 < step < steps
    assert f"; resume with: rdyn {command} " in err and err.rstrip().endswith(tail)


@pytest.mark.slow   # ~20 s; SIGINT/SIGTERM and resume of teacher runs stay in the default suite
def test_sigint_to_a_running_ln_then_resume(tmp_path, capsys):
    """A real Ctrl-C: SIGINT to ``python -m rdyn ln`` once its first checkpoint exists."""
    path = str(tmp_path / "b.npz")
    # the LN layer (about 5 s for these steps): the unnormalised noLN layer finishes 400000 steps in
    # 0.4 s, before a first timed checkpoint, so the signal would only hit the final output
    argv = ["ln", "--json", "--model", "ln", "--data", "spectrum",
            "--d", "4", "--spectrum", "3,1,1,1", "--steps", "400000", "--checkpoint", path,
            "--checkpoint-every", "0.3"]
    rc, out, err = _interrupt_when_checkpointed(argv, path)
    _assert_interrupt_message(rc, out, err, "ln", f"--checkpoint-every 0.3 --resume {path}", 400_000)
    rc, resumed, _ = cli_run(capsys, argv + ["--resume", path])
    assert rc == 0
    rc, reference, _ = cli_run(capsys, argv[:-4])
    assert rc == 0 and resumed == reference
    assert json.loads(resumed)["steps"] == 400_000


@pytest.mark.slow  # ~20 s: numba compilation in the subprocess plus two 3e7-step runs
def test_sigint_to_a_running_teacher_then_resume(tmp_path, capsys):
    """A real Ctrl-C: SIGINT to ``python -m rdyn teacher`` once its first checkpoint exists."""
    path = str(tmp_path / "t.npz")
    argv = ["teacher", "--D", "20", "--K", "4", "--steps", "30000000", "--record", "12345678",
            "--json", "--quiet", "--checkpoint", path, "--checkpoint-every", "0"]
    rc, out, err = _interrupt_when_checkpointed(argv, path)
    _assert_interrupt_message(rc, out, err, "teacher", f"--checkpoint-every 0 --resume {path}",
                              30_000_000)
    rc, resumed, _ = cli_run(capsys, argv + ["--resume", path])
    assert rc == 0
    rc, reference, _ = cli_run(capsys, argv[:-4])
    assert rc == 0 and resumed == reference
    assert json.loads(resumed)["final"]["t"] == 30_000_000
