"""Sweep checkpoints are checked row by row on --resume (issue 20; docs/input_rules.md rule 9):
a diverged row legitimately holds NaN/inf and resumes byte-identically; NaN in a row that is
not diverged, or a diverged row with impossible fields, is refused in one line naming the row."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from cli_runs import run_main
from rdyn.reduced_dynamics.runs import checkpoint as ck
from rdyn.reduced_dynamics.runs.checkpoint import CheckpointError, Interrupted

GRID = "D=20;K=4;eta=5,0.1"     # eta = 5 diverges at step 11165 (tests/rdyn/cli/test_hostile_inputs.py)
STEPS = 30000
ARGV = ["sweep", "--grid", GRID, "--steps", str(STEPS), "--json", "--quiet"]


def _configs():
    from rdyn.reduced_dynamics.model_a.grid import config, parse_grid

    return [config(p) for p in parse_grid(GRID)]


@pytest.fixture(scope="module")
def diverged_checkpoint(tmp_path_factory):
    """A real checkpoint at step 15000, after row 1 (eta = 5) diverged: its state is
    non-finite, its events and captures hold what the kernel wrote after the overflow."""
    import rdyn.reduced_dynamics.model_a.batch as batch

    path = str(tmp_path_factory.mktemp("ck") / "sweep.npz")
    real = batch.compiled_batch_advance

    def patched(*key):
        advance = real(*key)

        def interrupted(*args):
            advance(*args)
            raise KeyboardInterrupt

        return interrupted

    batch.compiled_batch_advance = patched
    try:
        with pytest.raises(Interrupted):
            batch.run_batch(_configs(), STEPS, chunk=15000, checkpoint=path)
    finally:
        batch.compiled_batch_advance = real
    return path


def _edit(src, dst, **changes):
    """Copy checkpoint ``src`` to ``dst`` with arrays changed by ``changes[name](array)``."""
    from rdyn.reduced_dynamics.model_a.batch import checkpoint_identity
    from rdyn.reduced_dynamics.model_a.dynamics import Thresholds

    ident = checkpoint_identity(_configs(), STEPS, Thresholds(), False)
    arrays, meta = ck.load(src, "sweep", ident)
    for name, change in changes.items():
        arrays[name] = np.array(arrays[name])
        change(arrays[name])
    ck.save(dst, "sweep", ident, arrays, meta)
    return dst


def test_diverged_row_checkpoint_resumes_byte_identically(capsys, diverged_checkpoint, tmp_path):
    arrays, _ = np.load(diverged_checkpoint), None
    assert int(arrays["g0_clock"][0]) == 15000
    assert not np.all(np.isfinite(arrays["g0_C1"][:1]))        # row 1: overflowed state
    assert np.isfinite(arrays["g0_C1"][1])                     # row 2: a normal state
    rc, whole, err = run_main(capsys, ARGV)
    assert rc == 0 and "1 of 2 rows diverged" in err
    path = shutil.copy(diverged_checkpoint, tmp_path / "c.npz")
    rc, resumed, err = run_main(capsys, ARGV + ["--resume", str(path)])
    assert rc == 0 and resumed == whole, err
    rows = json.loads(resumed)["rows"]
    assert rows[0]["diverged_at_step"] == 11165 and rows[0]["steps"] == 11164
    assert rows[1]["diverged_at_step"] is None and rows[1]["t1"] == 59


def _nan_at(index):
    def change(a):
        a[index] = np.nan
    return change


def _set(index, value):
    def change(a):
        a[index] = value
    return change


CORRUPT = {  # name: (array changes, the words of the refusal)
    "nan-state-of-normal-row": ({"g0_C1": _nan_at(1)},
                                "row 2 (D=20, K=4, eta=0.1, activation=relu) is marked diverged"),
    "huge-finite-state": ({"g0_C3": _set(1, 1e200)}, "does not diverge within"),
    "nan-capture-of-normal-row": ({"g0_capture_out": _nan_at((1, 5, 0))},
                                  "row 2 (D=20, K=4, eta=0.1, activation=relu) holds a non-finite"),
    "inf-capture-before-divergence": ({"g0_capture_out": _set((0, 3, 1), np.inf)},
                                      "row 1 (D=20, K=4, eta=5.0, activation=relu) holds a "
                                      "non-finite or out-of-range captured state before its "
                                      "divergence at step 11165"),
    "diverged-row-future-event": ({"g0_events": _set((0, 0), 10**9)}, "row 1"),
    "unreached-capture-slot": ({"g0_capture_out": _set((1, -1, 0), 1.0)}, "not reached yet"),
    "impossible-clock": ({"g0_clock": _set(0, STEPS + 1)}, "impossible loop position"),
}


@pytest.mark.parametrize("case", sorted(CORRUPT))
def test_corrupt_sweep_checkpoint_is_refused_naming_the_row(capsys, diverged_checkpoint,
                                                            tmp_path, case):
    changes, words = CORRUPT[case]
    path = _edit(diverged_checkpoint, str(tmp_path / "bad.npz"), **changes)
    rc, out, err = run_main(capsys, ARGV + ["--resume", path])
    assert rc == 2 and out == "" and "Traceback" not in err, err
    assert err.count("\n") == 1 and words in err and "not resumable" in err, err


# ------------------------------------------------------------------ smooth sweeps (rows in JSON)

def _smooth_setup(tmp_path):
    from rdyn.derivations.activations import Activation
    from rdyn.reduced_dynamics.model_a.grid import parse_grid, smooth_config
    from rdyn.reduced_dynamics.model_a.smooth_sweep import checkpoint_identity, run_smooth_batch
    from rdyn.reduced_dynamics.model_a.dynamics import Thresholds

    configs = [smooth_config(p, Activation("erf"), 2)
               for p in parse_grid("D=6;K=2;eta=1e300,0.2")]
    path = str(tmp_path / "s.npz")
    whole = run_smooth_batch(configs, 200, checkpoint=path).rows
    return configs, path, whole, checkpoint_identity(configs, 200, Thresholds())


def test_smooth_checkpoint_rows(tmp_path):
    from rdyn.reduced_dynamics.model_a.smooth_sweep import CHECKPOINT_KIND, run_smooth_batch

    configs, path, whole, ident = _smooth_setup(tmp_path)
    assert whole[0]["diverged_at_step"] == 1 and whole[0]["steps"] == 0
    assert whole[1]["diverged_at_step"] is None
    assert run_smooth_batch(configs, 200, resume=path).rows == whole

    def rewrite(**row0):
        _, meta = ck.load(path, CHECKPOINT_KIND, ident)
        meta["rows"][0].update(row0)
        bad = str(tmp_path / "bad.npz")
        ck.save(bad, CHECKPOINT_KIND, ident, {}, meta)
        return bad

    # NaN in a field a diverged row leaves empty: read as empty, same rows
    assert run_smooth_batch(configs, 200, resume=rewrite(loss_slope=float("nan"))).rows == whole
    for change, words in [({"t1": 5}, "is marked diverged at step 1 but holds t1=5"),
                          ({"steps": 200}, "holds steps=200, expected 0"),
                          ({"diverged_at_step": 0}, "not a step in 1..200"),
                          ({"C1": float("nan")}, "holds C1=nan"),
                          ({"diverged_at_step": None, "steps": 200, "t1": float("inf")},
                           "holds t1=inf but is not diverged"),
                          ({"D": 7}, "holds D=7")]:
        with pytest.raises(CheckpointError, match="row 1 ") as info:
            run_smooth_batch(configs, 200, resume=rewrite(**change))
        assert words in str(info.value) and "\n" not in str(info.value)
