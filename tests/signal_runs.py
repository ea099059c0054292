"""Shared by the signal tests (reduced_dynamics/runs/test_checkpoint.py,
rdyn/cli/test_hostile_inputs.py): a real ``python -m rdyn`` run that receives signals once its first
checkpoint is written."""
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
