"""Output conventions of the interface contract (docs/interface.md).

* ``--json`` prints exactly one JSON object on stdout; progress and logs go to stderr.
* float64 results are JSON numbers in shortest round-trip form; with ``--dps N`` every
  real is a string of N significant digits; integers are always numbers.
* a non-finite value becomes ``null`` with a warning on stderr.
* bad input raises :class:`UsageError`: one line on stderr, exit status 2.
"""
from __future__ import annotations

import math
import numbers
import os
import sys
import tempfile
from fractions import Fraction
from typing import Any


class UsageError(ValueError):
    """Bad user input; reported as one line on stderr with exit status 2. The message is made
    one line of at most about 400 characters here, once for every refusal of the CLI and the
    API (a quoted 50,000-character grid or path is shortened in the middle:
    rdyn.derivations.messages.bounded)."""

    def __init__(self, *args):
        if len(args) == 1 and isinstance(args[0], str):
            from rdyn.derivations.messages import bounded

            args = (bounded(args[0]),)
        super().__init__(*args)


def require(condition: object, message: str) -> None:
    """Raise :class:`UsageError` with ``message`` unless ``condition`` holds."""
    if not condition:
        raise UsageError(message)


def warn(message: str) -> None:
    print(f"rdyn: warning: {message}", file=sys.stderr)


def _is_mpf(value: Any) -> bool:
    """An mpmath real (mpmath is not imported for this: no mpf exists unless it is loaded)."""
    mpmath = sys.modules.get("mpmath")
    return mpmath is not None and isinstance(value, mpmath.mpf)


def _real(value: Any, dps: int | None, path: str) -> Any:
    if _is_mpf(value):
        finite = sys.modules["mpmath"].isfinite(value)
    else:
        value = float(value)
        finite = math.isfinite(value)
    if not finite:
        warn(f"non-finite value at {path or 'result'} reported as null")
        return None
    if dps is None:
        return float(value)
    return _digits(value, dps)


def _digits(value: Any, dps: int) -> str:
    """``value`` as a string of exactly ``dps`` significant digits (scientific form)."""
    import mpmath

    with mpmath.workdps(dps + 10):
        x = mpmath.mpf(value.numerator) / value.denominator if isinstance(value, Fraction) \
            else mpmath.mpf(value)
        if x == 0:
            return "0." + "0" * (dps - 1) + "e+0" if dps > 1 else "0e+0"
        return mpmath.nstr(x, dps, strip_zeros=False, min_fixed=1, max_fixed=0)


def jsonable(obj: Any, dps: int | None = None, path: str = "") -> Any:
    """Convert a result tree to JSON-ready values following the contract."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v, dps, f"{path}.{k}" if path else str(k)) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v, dps, f"{path}[{i}]") for i, v in enumerate(obj)]
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return obj
    if isinstance(obj, numbers.Integral) or _integer_array(obj):   # numpy integers
        return int(obj)
    if isinstance(obj, Fraction):  # exact: rounded once to the dps digits, never via float64
        return float(obj) if dps is None else _digits(obj, dps)
    return _real(obj, dps, path)


def _integer_array(obj) -> bool:
    """A 0-d numpy array of integers (numpy is looked up, never imported: without it loaded
    there is none)."""
    np = sys.modules.get("numpy")
    return (np is not None and isinstance(obj, np.ndarray) and obj.ndim == 0
            and obj.dtype.kind in "iu")


def format_real(value: Any, digits: int = 10, dps: int | None = None) -> str:
    """Human-readable real for the text summary: ``digits`` significant digits, or, for a run
    at ``--dps N`` (``dps=N``), N significant digits for the values computed at that precision
    (mpmath reals) and exact ones (a Fraction such as 1/K). float64 values keep ``digits``:
    printing more would show digits the run never computed."""
    if value is None:
        return "none"
    if dps is not None and (_is_mpf(value) or isinstance(value, Fraction)):
        from rdyn.real import digits_text

        return digits_text(value, dps)
    if _is_mpf(value):
        return sys.modules["mpmath"].nstr(value, digits)
    return f"{float(value):.{digits}g}"


def write_text_atomic(path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (a temporary sibling renamed when
    complete; :mod:`rdyn.reduced_dynamics.runs.atomic_files`)."""
    from rdyn.reduced_dynamics.runs.atomic_files import write_text_atomic as write

    write(path, text)


def write_rescued(flag: str, path, write, text: str | None = None) -> str | None:
    """Write a finished result with ``write(path)`` (``write`` writes whole or not at all:
    :mod:`rdyn.reduced_dynamics.runs.atomic_files`, so a failure leaves no partial file at ``path``
    and any earlier file there untouched); if that fails (a full disk, a file made
    read-only meanwhile), write it to a new file in the temporary folder (same suffix) and
    warn where it went, or, failing that too, print ``text`` on stdout. Nothing finished is
    discarded. Returns the path written (None when printed)."""
    try:
        write(os.fspath(path))
        return os.fspath(path)
    except OSError as exc:
        reason = exc.strerror or str(exc)
    suffix = os.path.splitext(os.fspath(path))[1]
    rescue = None
    try:
        fd, rescue = tempfile.mkstemp(prefix="rdyn-rescued-", suffix=suffix)
        os.close(fd)
        write(rescue)
    except OSError:
        if rescue is not None:   # no empty or partial rescue file left behind
            try:
                os.remove(rescue)
            except OSError:
                pass
        if text is None:
            warn(f"cannot write {flag} {os.fspath(path)} ({reason}) nor a copy in "
                 f"{tempfile.gettempdir()}; the result is lost")
            return None
        warn(f"cannot write {flag} {os.fspath(path)} ({reason}); the result follows on stdout")
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return None
    warn(f"cannot write {flag} {os.fspath(path)} ({reason}); saved to {rescue} instead")
    return rescue
