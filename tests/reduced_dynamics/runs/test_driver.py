"""The one loop of long runs (reduced_dynamics/runs/driver.py): a toy engine checks chunking,
progress, periodic and final checkpoints, Ctrl-C (saved, then Interrupted) and a bit-identical
resume; a scan of the library checks that no other module keeps a loop of its own."""
from __future__ import annotations

import ast
import os
import re
import types

import numpy as np
import pytest

from rdyn.reduced_dynamics.runs import checkpoint as ck
from rdyn.reduced_dynamics.runs import driver
from rdyn.reduced_dynamics.runs.driver import StepLines, drive

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


class State:
    def __init__(self, t: int = 0, x: float = 0.1):
        self.t, self.x = t, x


class Toy:
    """The logistic map x -> 3.9 x (1 - x) (chaotic: one changed bit shows within ~50 steps),
    ``steps`` steps; ``interrupt_in`` = k: the k-th chunk makes half its steps, then Ctrl-C."""

    def __init__(self, steps: int, interrupt_in: int | None = None, clock=None):
        self.steps, self.interrupt_in, self.clock = steps, interrupt_in, clock
        self.calls: list[int] = []
        self.saved: list[int] = []

    def _step(self, s: State, n: int) -> None:
        for _ in range(min(n, self.steps - s.t)):
            s.x = 3.9 * s.x * (1 - s.x)
            s.t += 1

    def advance(self, s: State, n: int) -> State:
        self.calls.append(n)
        if self.clock is not None:
            self.clock.now += 10.0
        if self.interrupt_in is not None and len(self.calls) == self.interrupt_in:
            self._step(s, n // 2)     # the state is changed in place, then the signal lands
            raise KeyboardInterrupt
        self._step(s, n)
        return s

    def done(self, s: State) -> bool:
        return s.t >= self.steps

    def position(self, s: State) -> int:
        return s.t

    def snapshot(self, s: State) -> State:
        return State(s.t, s.x)

    def save(self, path: str, s: State) -> int:
        ck.save(path, "toy", {"steps": self.steps}, {"x": np.array([s.x])}, {"t": s.t})
        self.saved.append(s.t)
        return s.t

    def restore(self, path: str) -> State:
        arrays, meta = ck.load(path, "toy", {"steps": self.steps})
        return State(int(meta["t"]), float(arrays["x"][0]))


class Bar:
    def __init__(self):
        self.updates, self.closed, self.total = [], 0, None

    def update(self, delta):
        self.updates.append(delta)

    def close(self):
        self.closed += 1


class Clock:
    def __init__(self):
        self.now = 0.0

    def monotonic(self):
        return self.now


def reference(steps: int) -> State:
    return drive(Toy(steps), State(), chunk=10**9)


def test_chunks_and_progress():
    toy, bar = Toy(1000), Bar()
    end = drive(toy, State(), chunk=300, bar=bar)
    assert toy.calls == [300] * 4 and end.t == 1000
    assert bar.updates == [300, 300, 300, 100] and bar.closed == 1
    assert end.x.hex() == reference(1000).x.hex()
    bar = Bar()
    drive(Toy(1000), State(), chunk=300, bar=bar, bar_every=500)
    assert bar.updates == [600, 400]        # at most every 500, always at the end
    toy = Toy(0)
    assert drive(toy, State(), chunk=300).t == 0 and toy.calls == []   # done: no chunk


def test_total_once_known():
    class Known(Toy):
        def total(self, s):
            return 700 if s.t >= 600 else None

    bar = Bar()
    drive(Known(700), State(), chunk=300, bar=bar)
    assert bar.total == 700


def test_checkpoint_at_the_interval_and_at_the_end(tmp_path, monkeypatch):
    path = str(tmp_path / "toy.npz")
    clock = Clock()
    monkeypatch.setattr(driver, "time", types.SimpleNamespace(monotonic=clock.monotonic))
    toy = Toy(1000, clock=clock)            # every chunk takes 10 s
    drive(toy, State(), chunk=100, checkpoint=path, checkpoint_every=25.0)
    assert toy.saved == [300, 600, 900, 1000]   # 30 s after the last save, never after the last chunk; the end
    toy = Toy(1000, clock=clock)
    drive(toy, State(), chunk=300, checkpoint=path, checkpoint_every=0)
    assert toy.saved == [300, 600, 900, 1000]
    toy = Toy(1000, clock=clock)
    drive(toy, State(), chunk=300, checkpoint=path, checkpoint_every=1e9)
    assert toy.saved == [1000]
    assert toy.restore(path).x.hex() == reference(1000).x.hex()

    class KeepsLast(Toy):
        def final_save(self, s):
            return False

    toy = KeepsLast(1000)
    drive(toy, State(), chunk=300, checkpoint=path, checkpoint_every=1e9)
    assert toy.saved == []


def test_unwritable_periodic_checkpoint_warns_and_the_run_goes_on(tmp_path, capsys):
    toy = Toy(1000)
    end = drive(toy, State(), chunk=300, checkpoint=str(tmp_path / "no" / "toy.npz"),
                checkpoint_every=0)
    assert end.t == 1000 and end.x.hex() == reference(1000).x.hex()
    err = capsys.readouterr().err
    assert err.count("cannot write checkpoint") == 4 and "the run goes on" in err


def test_ctrl_c_saves_the_chunk_start_then_resume_is_bit_identical(tmp_path):
    path = str(tmp_path / "toy.npz")
    toy, bar = Toy(1000, interrupt_in=3), Bar()
    with pytest.raises(ck.Interrupted) as info:
        drive(toy, State(), chunk=300, checkpoint=path, checkpoint_every=1e9, bar=bar)
    assert info.value.step == 600 and info.value.path == path and bar.closed == 1
    assert isinstance(info.value.__cause__, KeyboardInterrupt)
    assert toy.saved == [600] and toy.restore(path).x.hex() == reference(600).x.hex()
    toy = Toy(1000)
    end = drive(toy, checkpoint=path, resume=path, chunk=300)
    assert toy.calls == [300, 300] and end.t == 1000
    assert end.x.hex() == reference(1000).x.hex()
    assert toy.restore(path).x.hex() == end.x.hex()      # the final checkpoint


def test_ctrl_c_without_checkpoint_propagates():
    bar = Bar()
    with pytest.raises(KeyboardInterrupt) as info:
        drive(Toy(1000, interrupt_in=2), State(), chunk=300, bar=bar)
    assert not isinstance(info.value, ck.Interrupted) and bar.closed == 1


def test_ctrl_c_between_chunks_saves_the_current_state(tmp_path, monkeypatch):
    """An interrupt outside ``advance`` (here: in the periodic save's clock check) saves the
    state as it is, a chunk boundary."""
    path = str(tmp_path / "toy.npz")
    ticks = {"n": 0}

    def monotonic():
        ticks["n"] += 1
        if ticks["n"] == 3:
            raise KeyboardInterrupt
        return 0.0

    monkeypatch.setattr(driver, "time", types.SimpleNamespace(monotonic=monotonic))
    toy = Toy(1000)
    with pytest.raises(ck.Interrupted) as info:
        drive(toy, State(), chunk=300, checkpoint=path, checkpoint_every=1e9)
    assert info.value.step == 600 and toy.restore(path).x.hex() == reference(600).x.hex()


def test_step_lines():
    seen = []
    lines = StepLines(seen.append, 200, start=150, last=1000)
    for delta in (8, 42, 8, 400, 392, 1):
        lines.update(delta)
    assert seen == [200, 400, 600, 800, 1000]


# ------------------------------------------------------------------------ one loop only

# Loop-level checkpoint / signal handling belongs to the driver, checkpoint.py (signals blocked
# while a file is written), rdyn/signals.py (the handlers) and rdyn/cli/ (Interrupted to messages).
OWNERS = ("reduced_dynamics/runs/driver.py", "reduced_dynamics/runs/checkpoint.py",
          "rdyn/signals.py", "rdyn/cli/")
ALLOWED = {
    # (path, what): why it is not a loop of its own
    ("rdyn/api/_teacher.py", "except KeyboardInterrupt"):
        "turns the certified pass's interrupt into CertifyInterrupted (no loop, no save)",
    ("rdyn/api/_prove_b.py", "except KeyboardInterrupt"):
        "turns an interrupted rdyn prove --paper B --steps run into RangeInterrupted with the steps certified "
        "(the training runs on drive(); no loop, no save)",
    ("rdyn/api/_prove.py", "except KeyboardInterrupt"):
        "rescues the finished rows of rdyn prove --grid into --out (an output file, then re-raised), and the D "
        "decided of --D LO:HI and the eta sub-boxes of --eta LO:HI into RangeInterrupted (no loop, no save)",
    ("derivations/formula.py", "signal handling"):
        "SIGALRM: the time limit of evaluating a user formula, not a run's loop",
    ("verify/proofs/model_b/training.py", "signal handling"):
        "holds SIGINT/SIGTERM during each step of the training engine (an arb integral whose Python callback must "
        "not raise); the loop is drive()'s",
    # loops not yet on the driver: ("path", "what"): "not yet on the driver"
}
LIBRARY = ("rdyn", "reduced_dynamics", "derivations", "verify")
PATTERNS = {
    "except KeyboardInterrupt": re.compile(r"except\s*\(?[^:\n]*\bKeyboardInterrupt\b"),
    "Interrupted(": re.compile(r"(?<![\w])Interrupted\("),
    "signal handling": re.compile(r"\bsignal\.(signal|pthread_sigmask)\("),
    "checkpoint interval": re.compile(r"monotonic\(\)[^\n]*(every|last_save)"
                                      r"|(every|last_save)[^\n]*monotonic\(\)"),
}


def _library_files():
    for top in LIBRARY:
        for folder, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    yield os.path.relpath(path, ROOT).replace(os.sep, "/"), path


def _code_lines(source: str) -> str:
    """The source without docstrings and comments (mentions in prose are not loops)."""
    tree = ast.parse(source)
    lines = source.splitlines()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            for i in range(body[0].lineno - 1, body[0].end_lineno):
                lines[i] = ""
    return "\n".join(re.sub(r"#.*$", "", line) for line in lines)


def test_no_run_loop_outside_the_driver():
    found = []
    for rel, path in _library_files():
        if rel.startswith(OWNERS):
            continue
        code = _code_lines(open(path, encoding="utf-8").read())
        for what, pattern in PATTERNS.items():
            if pattern.search(code) and (rel, what) not in ALLOWED:
                found.append(f"{rel}: {what}")
    assert not found, ("loop-level checkpoint / signal handling outside "
                       f"reduced_dynamics/runs/driver.py (use drive()): {found}")


def test_allow_list_is_current():
    """An entry whose file no longer has that code is removed (H4: once a loop is converted)."""
    files = dict(_library_files())
    stale = [key for key in ALLOWED
             if key[0] not in files
             or not PATTERNS[key[1]].search(_code_lines(open(files[key[0]], encoding="utf-8").read()))]
    assert not stale, f"remove from ALLOWED: {stale}"


def test_the_scan_sees_a_hand_written_loop(tmp_path):
    code = _code_lines('"""except KeyboardInterrupt in prose"""\n'
                       "try:\n    pass\nexcept KeyboardInterrupt:  # the loop\n"
                       "    raise checkpoint.Interrupted(1, p)\n"
                       "if time.monotonic() - last_save >= every:\n    pass\n")
    assert all(PATTERNS[w].search(code) for w in ("except KeyboardInterrupt", "Interrupted(",
                                                  "checkpoint interval"))
    assert not PATTERNS["except KeyboardInterrupt"].search(_code_lines('"""except KeyboardInterrupt"""\n'))
    assert not PATTERNS["Interrupted("].search("raise CertifyInterrupted()")
