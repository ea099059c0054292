"""The check record of ``rdyn verify`` (docs/interface.md).

Each check has ``id``, ``source`` (paper and lemma/equation), ``claim``, ``status``
(``pass``, ``fail``, ``discrepancy`` where the paper's printed form differs from the
derivation, ``info`` for measured constants), ``max_error`` (relative; ``None`` for exact
symbolic identities) and ``digits`` (``None`` when exact). ``detail`` carries both forms of
a discrepancy, or the measured value of an ``info`` check.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

STATUSES = ("pass", "fail", "discrepancy", "info")


@dataclass(frozen=True)
class Check:
    id: str
    source: str
    claim: str
    status: str
    max_error: float | None = None
    digits: float | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def digits_of(max_error: float | None) -> float | None:
    """Correct decimal digits implied by a relative error (``None`` when exact: no error, or an
    error of exactly 0, where the digit count is unbounded and JSON has no infinity)."""
    if max_error is None or max_error <= 0:
        return None
    return -math.log10(max_error)


def numeric_check(id: str, source: str, claim: str, max_error: float, tolerance: float,
                  **detail: Any) -> Check:
    """A check that passes when the measured relative error is below ``tolerance``."""
    status = "pass" if max_error <= tolerance else "fail"
    return Check(id, source, claim, status, float(max_error), digits_of(max_error),
                 {"tolerance": tolerance, **detail})


def exact_check(id: str, source: str, claim: str, holds: bool, **detail: Any) -> Check:
    """A symbolic identity: ``pass`` when sympy proves it, else ``fail``."""
    return Check(id, source, claim, "pass" if holds else "fail", None, None, detail)
