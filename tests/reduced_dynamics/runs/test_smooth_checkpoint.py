"""Checkpoint and resume of ``rdyn teacher`` with a smooth activation (issue 22): bit-identical
resume after a real SIGTERM (compiled erf and tanh in float64, quadrature at --dps 30), after a
simulated Ctrl-C mid-chunk, and one-line refusals of foreign checkpoints (ReLU, another
activation, formula, dps or node count)."""
import json
import signal

import numpy as np
import pytest

from rdyn import cli
from rdyn.reduced_dynamics.runs import checkpoint as ck
from rdyn.reduced_dynamics.model_a import smooth as ms
from signal_runs import signal_when_checkpointed

BASE = ["teacher", "--D", "8", "--K", "2", "--M", "2", "--eta", "0.2", "--json", "--quiet"]


def cli_run(capsys, argv):
    rc = cli.main(argv)
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def assert_one_line_refusal(rc, out, err, needle):
    assert rc == 2, err
    assert out == "" and "Traceback" not in err and err.count("\n") == 1, err
    assert needle in err, err


# (activation options, steps): each run lasts about a second after start-up (the first
# checkpoint comes after one chunk, well before), so the signal lands mid-run; in float64 erf
# runs its compiled closed form, tanh the compiled tensor rule (chunks of 256 steps), at --dps
# both the quadrature loop
SIGNAL_CASES = [
    # slow: the subprocess compiles erf's closed form with numba (about 20 s on 2 busy cores)
    pytest.param(["--activation", "erf"], 1_000_000, id="erf-float64-compiled",
                 marks=pytest.mark.slow),
    pytest.param(["--activation", "tanh", "--smooth-route", "exact"], 40_000,
                 id="tanh-float64-compiled-rule"),
    # the tabulated route (the float64 default since issue 31): 4-5e6 steps/s
    pytest.param(["--activation", "tanh"], 6_000_000, id="tanh-float64-table",
                 marks=pytest.mark.slow),
    pytest.param(["--activation", "erf", "--dps", "30"], 120, id="erf-dps30",
                 marks=pytest.mark.slow),
    pytest.param(["--activation", "tanh", "--dps", "30"], 80, id="tanh-dps30",
                 marks=pytest.mark.slow),
]


@pytest.mark.parametrize("activation,steps", SIGNAL_CASES)
def test_sigterm_then_resume_is_byte_identical(tmp_path, capsys, activation, steps):
    """SIGTERM to a real ``python -m rdyn teacher --activation ...`` once its first checkpoint
    exists: exit 143 with the resume command; the resumed run prints exactly the bytes of an
    uninterrupted run."""
    path = str(tmp_path / "s.npz")
    argv = BASE + activation + ["--steps", str(steps), "--record", "7",
                                "--checkpoint", path, "--checkpoint-every", "0"]
    rc, out, err = signal_when_checkpointed(argv, path, [signal.SIGTERM])
    assert rc == 143, err
    assert out == "" and "Traceback" not in err and err.count("\n") == 1, err
    step = int(err.split("interrupted at step ")[1].split(";")[0])
    assert 0 < step < steps
    assert err.rstrip().endswith(f"--checkpoint-every 0 --resume {path}")
    rc, resumed, _ = cli_run(capsys, argv + ["--resume", path])
    assert rc == 0
    rc, reference, _ = cli_run(capsys, argv[:-4])
    assert rc == 0 and resumed == reference
    data = json.loads(resumed)
    assert data["final"]["t"] == steps and data["model"]["activation"] == activation[1]


def _interrupt_after(monkeypatch, factory_name: str, chunks: int):
    """Make the ``chunks + 1``-th chunk of the next smooth run raise KeyboardInterrupt half way
    (its state partly advanced: the driver must fall back to the chunk's start).
    ``factory_name``: a function of model_a_smooth, or "TableRoute.advancer" (smooth_tables)."""
    from rdyn.reduced_dynamics.model_a import smooth_tables as st

    owner = st.TableRoute if factory_name == "TableRoute.advancer" else ms
    factory_name = factory_name.split(".")[-1]
    real = getattr(owner, factory_name)
    calls = {"n": 0}

    def factory(*args, **kwargs):
        advance = real(*args, **kwargs)

        def wrapped(loop, chunk_end):
            calls["n"] += 1
            if calls["n"] > chunks:
                advance(loop, loop.t + max((chunk_end - loop.t) // 2, 1))
                raise KeyboardInterrupt
            advance(loop, chunk_end)

        return wrapped

    monkeypatch.setattr(owner, factory_name, factory)
    return calls


@pytest.mark.parametrize("name,dps,factory,chunk,route", [
    ("erf", None, "_compiled_advance", "compiled", "exact"),
    ("gelu", None, "_compiled_advance", "compiled", "exact"),
    ("tanh", None, "_compiled_advance", "rule", "exact"),   # CHUNK["rule"]: lattice points (n = 128)
    ("tanh", None, "TableRoute.advancer", "compiled", "auto"),   # the tables (issue 31)
    ("sigmoid", 20, "_quadrature_advance", "precise", "auto"),
])
def test_interrupted_mid_chunk_resumes_bit_identically(tmp_path, monkeypatch, name, dps, factory,
                                                      chunk, route):
    """Simulated Ctrl-C in the third chunk (half advanced), in-process: Interrupted names the
    chunk boundary saved; the resume equals the uninterrupted run in every reported field,
    including the captured (record) states and the default run's stop at 2 T*."""
    from rdyn.derivations.activations import Activation

    config = ms.SmoothConfig(D=8, K=2, activation=Activation(name), eta=0.2, M=2)
    steps = None if dps is None else 40
    size = 7 if dps is not None else 97   # steps per chunk
    setting = size * 128 * 128 if chunk == "rule" else size
    monkeypatch.setitem(ms.CHUNK, chunk, setting)
    reference = ms.run(config, steps, record=[3, 33], dps=dps, route=route)
    path = str(tmp_path / "c.npz")
    calls = _interrupt_after(monkeypatch, factory, 2)
    with pytest.raises(ck.Interrupted) as info:
        ms.run(config, steps, record=[3, 33], dps=dps, checkpoint=path, checkpoint_every=1e9,
               route=route)
    assert info.value.step == 2 * size and calls["n"] == 3
    assert chunk != "rule" or reference.nodes == 128
    monkeypatch.undo()   # the real advance again, the same chunk size
    monkeypatch.setitem(ms.CHUNK, chunk, setting)
    resumed = ms.run(config, steps, record=[3, 33], dps=dps, resume=path, route=route)
    # table_error: the largest tile error of the whole run, the tiles built before the interruption
    # included (they are not rebuilt after the resume; the checkpoint carries their error)
    for key in ("steps", "t1", "T_star", "lost_at_step", "final", "record", "loss_curve",
                "loss_slope", "nodes", "quadrature_error", "backend", "route", "table_error"):
        assert getattr(resumed, key) == getattr(reference, key), key
    assert steps is not None or reference.T_star is not None   # default runs stop at 2 T*


def test_foreign_checkpoints_are_refused_in_one_line(tmp_path, capsys):
    """A ReLU checkpoint, another activation, formula, dps or node count: exit 2, one line
    naming the differing key."""
    relu, erf, expr = (str(tmp_path / f"{n}.npz") for n in ("relu", "erf", "expr"))
    small = ["teacher", "--D", "8", "--K", "2", "--eta", "0.2", "--steps", "30", "--json",
             "--quiet"]
    assert cli_run(capsys, small + ["--checkpoint", relu])[0] == 0
    smooth = small + ["--M", "2"]
    assert cli_run(capsys, smooth + ["--activation", "erf", "--checkpoint", erf])[0] == 0
    assert cli_run(capsys, smooth + ["--activation-expr", "tanh(x) + x/10",
                                     "--checkpoint", expr])[0] == 0
    assert_one_line_refusal(*cli_run(capsys, smooth + ["--activation", "erf", "--resume", relu]),
                            'different activation: "relu" in the checkpoint, "erf" now')
    assert_one_line_refusal(*cli_run(capsys, small + ["--resume", erf]),
                            'different activation: "erf" in the checkpoint, "relu" now')
    assert_one_line_refusal(*cli_run(capsys, smooth + ["--activation", "tanh", "--resume", erf]),
                            "different activation")
    assert_one_line_refusal(*cli_run(capsys, smooth + ["--activation-expr", "tanh(x) + x/11",
                                                       "--resume", expr]),
                            "different activation_expr")
    assert_one_line_refusal(*cli_run(capsys, smooth + ["--activation", "erf", "--dps", "20",
                                                       "--resume", erf]), "different ")
    assert_one_line_refusal(*cli_run(capsys, smooth + ["--activation", "erf", "--M", "3",
                                                       "--resume", erf]), "different M")
    # the node count is part of the identity (a checkpoint of another quadrature rule)
    with np.load(erf, allow_pickle=False) as archive:
        header = json.loads(str(archive["__header__"][()]))
        arrays = {k: archive[k] for k in archive.files if k != "__header__"}
    header["identity"]["nodes"] += 1
    ck.save(erf, "teacher", header["identity"], arrays, header["meta"])
    assert_one_line_refusal(*cli_run(capsys, smooth + ["--activation", "erf", "--resume", erf]),
                            "different nodes")
    # a finished run's checkpoint resumes to the same output
    rc, again, _ = cli_run(capsys, smooth + ["--activation-expr", "tanh(x) + x/10", "--resume", expr])
    rc2, fresh, _ = cli_run(capsys, smooth + ["--activation-expr", "tanh(x) + x/10"])
    assert rc == rc2 == 0 and again == fresh


def test_resumed_table_run_reports_the_whole_runs_table_error(tmp_path, monkeypatch):
    """erf on the tabulated route, 10^6 steps, interrupted after the first chunk of 2^18 steps: the
    tile with the largest error (4.8e-14 at these sizes) is built before the interruption, so the
    resumed run, which never rebuilds it, must take it from the checkpoint (it used to report 3.8e-15,
    the largest error of the tiles it built itself)."""
    from rdyn.derivations.activations import Activation

    config = ms.SmoothConfig(D=8, K=2, activation=Activation("erf"), eta=0.2, M=2)
    monkeypatch.setitem(ms.CHUNK, "compiled", 2**18)
    reference = ms.run(config, 10**6, record=[7], route="auto")
    assert reference.route == "table" and reference.table_error > 1e-14
    path = str(tmp_path / "t.npz")
    _interrupt_after(monkeypatch, "TableRoute.advancer", 1)
    with pytest.raises(ck.Interrupted) as info:
        ms.run(config, 10**6, record=[7], checkpoint=path, checkpoint_every=1e9, route="auto")
    assert info.value.step == 2**18
    monkeypatch.undo()
    monkeypatch.setitem(ms.CHUNK, "compiled", 2**18)
    resumed = ms.run(config, 10**6, record=[7], resume=path, route="auto")
    assert resumed.table_error == reference.table_error
    assert resumed.final == reference.final
