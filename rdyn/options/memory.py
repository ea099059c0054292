"""The memory check of a job, before any work: the API estimates the bytes a configuration
needs (its arrays, quadrature nodes, ...) and :func:`check_memory` refuses it when the estimate
exceeds the machine's available memory (MemAvailable of /proc/meminfo; no check where that
cannot be read).
"""
from __future__ import annotations

from rdyn.output import UsageError


def available_memory() -> int | None:
    """MemAvailable of /proc/meminfo in bytes (None where it cannot be read)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _gb(n: float) -> str:
    """Bytes in decimal gigabytes, three significant digits."""
    return f"{n / 1e9:.3g} GB"


def check_memory(what: str, needed: float, available: int | None = None) -> None:
    """Refuse (UsageError) a job whose estimated memory ``needed`` (bytes) exceeds the
    machine's available memory; ``what`` names the option(s) that set the size."""
    available = available_memory() if available is None else available
    if available is not None and needed > available:
        raise UsageError(f"{what}: this job needs about {_gb(needed)} of memory, "
                         f"{_gb(available)} available")
