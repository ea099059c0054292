"""Fixtures shared by several test modules."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

# The suite runs with --import-mode=importlib (pyproject.toml), which does not put test folders on
# sys.path; the shared helper modules beside this file (cli_runs, signal_runs, checkout) are
# imported by name from test modules at any depth, so tests/ goes on sys.path here. rdyn is
# imported FIRST: tests/rdyn/ (the tests of the rdyn folder, no __init__.py) would otherwise be a
# namespace package that shadows an editable install of rdyn when the checkout itself is not on
# sys.path (a plain install, a regular package, always wins over a namespace folder).
_TESTS = os.path.dirname(os.path.abspath(__file__))
_AT_TESTS = [p for p in sys.path if os.path.abspath(p or os.curdir) == _TESTS]   # pytest run from tests/
for _p in _AT_TESTS:
    sys.path.remove(_p)
import rdyn  # noqa: E402
import rdyn.cli  # noqa: E402

# one BLAS thread, as in the command line (rdyn.cli.pin_blas_threads), before any test imports numpy: the
# in-process CLI runs (golden outputs) then have the command line's digits whatever the test order
assert rdyn.cli.pin_blas_threads() or os.environ.get("OPENBLAS_NUM_THREADS") == "1", \
    "numpy was imported before tests/conftest.py: its BLAS thread count is no longer the command line's"

assert getattr(rdyn, "__file__", None) and not os.path.abspath(rdyn.__file__).startswith(_TESTS + os.sep), \
    f"rdyn resolved to the test folder tests/rdyn/, not the package: {rdyn!r}"
sys.path.insert(0, _TESTS)


@pytest.fixture(autouse=True)
def _mpmath_context_restored():
    """A test that sets ``mpmath.mp.dps`` does not change the precision of the next test in the same
    worker (the library never depends on ``mpmath.mp``; tests must not depend on each other's)."""
    import mpmath

    prec, pretty = mpmath.mp.prec, mpmath.mp.pretty
    yield
    mpmath.mp.prec, mpmath.mp.pretty = prec, pretty


@pytest.fixture
def full_disk(tmp_path):
    """A folder on a 64 KiB tmpfs with ``free`` bytes left: ``fill(free)`` after the previous
    files are in place. Unmounted afterwards."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs (needs root): {mounted.stderr.strip()}")

    def fill(free: int = 0) -> None:
        """Fill the disk, then free ``free`` bytes (whole 4 KiB pages: tmpfs counts pages)."""
        with open(disk / ".filler", "wb", buffering=0) as fh:
            try:
                while True:
                    fh.write(b"\0" * 4096)
            except OSError:
                pass
        size = os.path.getsize(disk / ".filler")
        os.truncate(disk / ".filler", max(size - free, 0))

    try:
        yield disk, fill
    finally:
        subprocess.run(["umount", str(disk)], capture_output=True)


@pytest.fixture
def interrupt_second_proof(monkeypatch):
    """Make the proof sweep's ``prove_point`` raise KeyboardInterrupt (a Ctrl-C) when it starts
    its second instance; yields ``(calls, real)``: the D of each instance started, and the
    unpatched function (to patch it back or wrap it again)."""
    from rdyn.verification.proofs import sweep

    real = sweep.prove_point
    calls = []

    def interrupt_second(point, *args):
        calls.append(point.instance.D)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(point, *args)

    monkeypatch.setattr(sweep, "prove_point", interrupt_second)
    return calls, real
