"""Output files are written whole or not at all (docs/input_rules.md, "Output files"): the
name the upper layers use for :mod:`rdyn.derivations.atomic_files`, where the one implementation
lives (the lowest layer, so that the derivations' catalogue regenerators use it too)."""
from __future__ import annotations

from rdyn.derivations.atomic_files import (AtomicFiles, write_atomic, write_bytes_atomic,
                                           write_text_atomic)

__all__ = ["AtomicFiles", "write_atomic", "write_bytes_atomic", "write_text_atomic"]
