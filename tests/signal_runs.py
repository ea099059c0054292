"""Shared by the signal tests (reduced_dynamics/runs/test_checkpoint.py,
rdyn/cli/test_hostile_inputs.py, verify/proofs/test_eta_box.py, verify/proofs/test_all_d.py): a real
``python -m rdyn`` run that receives signals once its first checkpoint is written, or after a delay."""
from __future__ import annotations

import os
import subprocess
import sys
import time


def signal_when_checkpointed(argv, path, signals, gap: float = 0.002):
    """Run ``python -m rdyn *argv``; once ``path`` holds a written checkpoint (not the empty
    file of the up-front write probe, rdyn/options/paths.py) send ``signals`` ``gap`` seconds apart.
    Returns (returncode, stdout, stderr); fails clearly if the run finished first."""
    proc = subprocess.Popen([sys.executable, "-m", "rdyn", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (os.path.exists(path) and os.path.getsize(path) > 0) \
                and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.poll() is None, "the run finished before its first checkpoint"
        for s in signals:
            proc.send_signal(s)
            time.sleep(gap)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    return proc.returncode, out, err


def signal_after(argv, seconds: float, sig=None):
    """Run ``python -m rdyn *argv`` and send ``sig`` (default SIGTERM) after ``seconds``. Returns (returncode,
    stdout, stderr); fails clearly if the run finished first."""
    import signal

    proc = subprocess.Popen([sys.executable, "-m", "rdyn", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(seconds)
        assert proc.poll() is None, "the run finished before the signal"
        proc.send_signal(signal.SIGTERM if sig is None else sig)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    return proc.returncode, out, err
