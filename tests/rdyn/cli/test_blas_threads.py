"""rdyn.cli.pin_blas_threads: one BLAS thread for the command line's process (docs/input_rules.md,
"Reproducible digits")."""
from __future__ import annotations

import os
import subprocess
import sys

PROBE = ("import os, sys; import rdyn.cli as c; took = c.pin_blas_threads(); import numpy; "
         "print(took, os.environ.get('OPENBLAS_NUM_THREADS'), os.environ.get('MKL_NUM_THREADS'))")


def _probe(code: str, **env) -> str:
    environment = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    environment.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment,
                          check=True).stdout.split()


def test_the_command_line_runs_blas_on_one_thread():
    assert _probe(PROBE) == ["True", "1", "1"]


def test_a_thread_count_the_user_set_is_kept():
    assert _probe(PROBE, OPENBLAS_NUM_THREADS="2") == ["True", "2", "1"]


def test_too_late_once_numpy_is_loaded():
    assert _probe("import numpy; " + PROBE)[0] == "False"
