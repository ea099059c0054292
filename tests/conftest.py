"""Fixtures shared by several test modules."""
from __future__ import annotations

import os
import subprocess

import pytest


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
