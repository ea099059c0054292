"""Checkpoint files for long runs: save the complete loop state, refuse a mismatched resume.

File format (version :data:`FORMAT`): one NumPy ``.npz`` archive (``np.savez``, read with
``allow_pickle=False``) holding

* ``__header__`` — a 0-d unicode array with a JSON object
  ``{"format": 1, "kind": ..., "identity": {...}, "meta": {...}}``: ``kind`` names the job
  ("teacher", "ln", "sweep"), ``identity`` is the full configuration and every option that
  affects the trajectory, ``meta`` the loop position (step, events, rdyn version, ...);
* one array per entry of ``arrays`` (numeric or unicode dtypes only; object arrays are
  refused).

Arbitrary-precision numbers are stored exactly as text by :func:`exact_text`: a binary
floating-point value ``man * 2**exp`` is written ``"<man>p<exp>"`` (``man`` a signed
decimal integer), e.g. ``"-3p-1"`` is -1.5; ``"inf"``, ``"-inf"``, ``"nan"`` for the
specials. An mpmath ``mpf`` is exactly such a value and a python-flint ``arb`` is stored by
its midpoint only (the radius is dropped: store point balls, as the drivers do between
chunks), so :func:`from_exact_text` rebuilds the same bits at any working precision.

The write is atomic: the archive goes to ``path + ".tmp"`` and is moved over ``path`` with
``os.replace``, so an interrupted save leaves the previous checkpoint intact; SIGINT and
SIGTERM are blocked while it is written (delivered right after), so repeated signals cannot
leave a half-written file in place of the last good one.
"""
from __future__ import annotations

import json
import os
import re
import sys
import zipfile
from contextlib import contextmanager
from typing import Any, Callable

import numpy as np

FORMAT = 1
HEADER_KEY = "__header__"


class CheckpointError(ValueError):
    """A checkpoint that cannot be used: missing, corrupt, other job/format or configuration.
    The message is one line."""


class Interrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C after saving its loop state: ``step`` is the step stored in
    the checkpoint at ``path`` (a :class:`KeyboardInterrupt`, so generic handlers still work)."""

    def __init__(self, step: int, path: str):
        super().__init__(f"interrupted at step {step}; checkpoint saved to {path}")
        self.step = step
        self.path = path


def _normalised(obj: Any) -> Any:
    """``obj`` as it reads back from JSON (tuples become lists, keys strings)."""
    return json.loads(json.dumps(obj, allow_nan=True))


def save(path: str, kind: str, identity: dict, arrays: dict[str, np.ndarray], meta: dict) -> None:
    """Write a checkpoint of job ``kind`` atomically to ``path`` (format: module docstring)."""
    if HEADER_KEY in arrays:
        raise ValueError(f"array name {HEADER_KEY!r} is reserved")
    payload = {}
    for name, value in arrays.items():
        array = np.asarray(value)
        if array.dtype.kind not in "biufcU":
            raise ValueError(f"checkpoint array {name!r} has dtype {array.dtype}; "
                             "store arbitrary-precision numbers with exact_text")
        payload[name] = array
    header = json.dumps({"format": FORMAT, "kind": kind, "identity": identity, "meta": meta},
                        allow_nan=True)
    payload[HEADER_KEY] = np.array(header)
    from rdyn.reduced_dynamics.runs.atomic_files import AtomicFiles

    with signals_blocked():
        try:   # FILE.tmp, then renamed; a failed write removes FILE.tmp, FILE stays as it was
            with AtomicFiles(fixed_suffix=".tmp") as files:
                with open(files.path(path), "wb") as handle:
                    np.savez(handle, **payload)
        except OSError as exc:
            raise CheckpointError(f"cannot write checkpoint {path}: {exc.strerror or exc}") from None


@contextmanager
def signals_blocked():
    """Block SIGINT and SIGTERM while a checkpoint is written and renamed (a signal that
    arrives meanwhile is delivered when the block ends, after the file is complete)."""
    import signal

    mask = {signal.SIGINT, signal.SIGTERM}
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, mask)
    except (AttributeError, OSError, ValueError):  # no pthread_sigmask on this platform
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def save_or_warn(write) -> bool:
    """Run ``write()`` (a periodic or final checkpoint save); if the file cannot be written
    (a full disk, a file made read-only meanwhile) warn on stderr and go on: the run's result
    is still computed and printed, nothing finished is lost. Returns whether it was saved."""
    try:
        write()
        return True
    except CheckpointError as exc:
        print(f"rdyn: warning: {exc}; the run goes on without it and prints its result",
              file=sys.stderr)
        return False


def identity_difference(saved: Any, wanted: Any, prefix: str = "") -> str | None:
    """The first key (dotted path, in the order of ``wanted``, then keys only in ``saved``)
    where two identities differ, or None if they agree. Lists of the same length are compared
    item by item (``configs[3].eta``: a sweep's grid of a million configurations is named by
    the first one that differs, not quoted whole)."""
    if isinstance(saved, list) and isinstance(wanted, list) and len(saved) == len(wanted):
        for i, (a, b) in enumerate(zip(saved, wanted)):
            found = identity_difference(a, b, f"{prefix}[{i}]")
            if found is not None:
                return found
        return None
    if isinstance(saved, dict) and isinstance(wanted, dict):
        for key in list(wanted) + [k for k in saved if k not in wanted]:
            where = f"{prefix}.{key}" if prefix else str(key)
            if key not in saved or key not in wanted:
                return where
            found = identity_difference(saved[key], wanted[key], where)
            if found is not None:
                return found
        return None
    return None if saved == wanted else (prefix or "identity")


def _show(value: Any) -> str:
    """A value of an identity for a message: None is an option left at its default; a long
    value (a sweep's list of configurations) is summarised (derivations/messages.py)."""
    from rdyn.derivations.messages import summarised

    if value is _ABSENT:
        return "(absent)"
    return "(default)" if value is None else summarised(value, json.dumps, limit=70)  # two a line


_ABSENT = object()


def _lookup(tree: Any, dotted: str) -> Any:
    """The value at a path of :func:`identity_difference` ("a.b", "configs[3].eta")."""
    for part in dotted.split("."):
        name = part.split("[", 1)[0]
        indices = [int(i) for i in re.findall(r"\[(\d+)\]", part)]
        if name:
            if not isinstance(tree, dict) or name not in tree:
                return _ABSENT
            tree = tree[name]
        for i in indices:
            if not isinstance(tree, list) or i >= len(tree):
                return _ABSENT
            tree = tree[i]
    return tree


def load(path: str, kind: str, identity: dict,
         ignore: tuple[str, ...] = ()) -> tuple[dict[str, np.ndarray], dict]:
    """Read the checkpoint at ``path``; return ``(arrays, meta)``.

    Raises :class:`CheckpointError` (one-line message) if the file is missing or corrupt,
    holds another job or format, or was written with a different ``identity`` (the message
    names the first differing key and both values). Top-level identity keys in ``ignore``
    are not compared (the caller checks them, e.g. a raised ``steps``); their saved values
    are returned in ``meta["saved_identity"]``.
    """
    if not os.path.isfile(path):
        raise CheckpointError(f"checkpoint {path} does not exist")
    with open(path, "rb") as handle:
        if handle.read(4) != b"PK\x03\x04":
            raise CheckpointError(f"checkpoint {path} is not an rdyn checkpoint (not an .npz archive)")
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
        header = json.loads(str(arrays.pop(HEADER_KEY)[()]))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CheckpointError(f"checkpoint {path} is not a readable rdyn checkpoint ({reason})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        found = header.get("format") if isinstance(header, dict) else None
        raise CheckpointError(f"checkpoint {path} has format {found!r}, expected {FORMAT}")
    if header.get("kind") != kind:
        raise CheckpointError(f"checkpoint {path} is for 'rdyn {header.get('kind')}', not 'rdyn {kind}'")
    saved, wanted = header.get("identity"), _normalised(identity)
    saved_ignored = {}
    if ignore and isinstance(saved, dict):
        saved_ignored = {k: saved[k] for k in ignore if k in saved}
        saved = {k: v for k, v in saved.items() if k not in ignore}
        wanted = {k: v for k, v in wanted.items() if k not in ignore}
    key = identity_difference(saved, wanted)
    if key is not None:
        raise CheckpointError(
            f"checkpoint {path} was written with a different {key}: "
            f"{_show(_lookup(saved, key) if key != 'identity' else saved)} in the checkpoint, "
            f"{_show(_lookup(wanted, key) if key != 'identity' else wanted)} now")
    meta = dict(header.get("meta", {}))
    if ignore:
        meta["saved_identity"] = saved_ignored
    return arrays, meta


def parsed(path: str, parse: Callable[[], Any]) -> Any:
    """``parse()`` (reading a loaded checkpoint's arrays and meta), a missing key or malformed
    value refused as an incomplete file (one line)."""
    try:
        return parse()
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, CheckpointError):
            raise
        raise CheckpointError(f"checkpoint {path} is incomplete ({exc})") from None


def check_state(path: str, shapes_ok: bool, values, names: str) -> None:
    """Refuse a loaded state whose arrays have the wrong shape or which has diverged
    (:func:`rdyn.reduced_dynamics.runs.divergence.is_diverged`; ``names``: its components, as
    "C1, C2, C3"): such a file is not resumable."""
    from rdyn.reduced_dynamics.runs.divergence import is_diverged

    if not shapes_ok:
        raise CheckpointError(f"checkpoint {path} has arrays of the wrong shape")
    if is_diverged(values):
        raise CheckpointError(
            f"checkpoint {path} holds a non-finite or diverged state ({names}); not resumable")


# --------------------------------------------------------------------------------------------
# Exact text for binary floating-point numbers (float, mpmath mpf, flint arb midpoints)
# --------------------------------------------------------------------------------------------

def exact_text(x: Any) -> str:
    """``x`` (float, mpmath ``mpf`` or python-flint ``arb``, by its midpoint) as exact text
    ``"<man>p<exp>"`` meaning ``man * 2**exp``; "inf", "-inf" or "nan" for specials."""
    module = type(x).__module__
    if module.startswith("flint"):
        mid = x.mid()
        if not mid.is_finite():
            return _special(float(mid.str(5, radius=False)) if not mid.is_nan() else float("nan"))
        man, exp = mid.man_exp()
        return f"{int(man)}p{int(exp)}"
    if module.startswith("mpmath"):
        import mpmath

        if not mpmath.isfinite(x):
            return _special(float(x))
        sign, man, exp, _ = x._mpf_
        return f"{-int(man) if sign else int(man)}p{int(exp)}"
    value = float(x)
    if value != value or value in (float("inf"), float("-inf")):
        return _special(value)
    num, den = value.as_integer_ratio()
    return f"{num}p{-(den.bit_length() - 1)}"


def _special(value: float) -> str:
    return "nan" if value != value else ("inf" if value > 0 else "-inf")


def from_exact_text(text: str, backend: str) -> Any:
    """Inverse of :func:`exact_text` on ``backend`` ("float64", "mpmath" or "arb"): the same
    binary value exactly, independent of the current working precision (a float64 result is
    exact when the value has at most 53 bits)."""
    text = str(text)
    if text in ("inf", "-inf", "nan"):
        value = float(text)
        if backend == "mpmath":
            import mpmath

            return mpmath.mpf(text)
        if backend == "arb":
            import flint

            return flint.arb(text)
        return value
    man_text, _, exp_text = text.partition("p")
    try:
        man, exp = int(man_text), int(exp_text)
    except ValueError:
        raise CheckpointError(f"bad exact number {text!r} in checkpoint") from None
    if backend == "mpmath":
        import mpmath
        from mpmath.libmp import from_man_exp

        return mpmath.mp.make_mpf(from_man_exp(man, exp))
    if backend == "arb":
        import flint

        return flint.arb(flint.arf((man, exp)))
    if backend == "float64":
        return float(man * 2**exp) if exp >= 0 else man / 2**-exp
    raise ValueError(f"unknown backend {backend!r}")


def exact_array(values) -> np.ndarray:
    """A unicode array of :func:`exact_text` for a (nested) sequence or object array."""
    array = np.asarray(values, dtype=object)
    flat = [exact_text(v) if v is not None else "none" for v in array.ravel()]
    return np.array(flat, dtype=str).reshape(array.shape) if flat else np.zeros(array.shape, dtype="U1")


def from_exact_array(strings: np.ndarray, backend: str) -> np.ndarray:
    """The object array of backend numbers stored by :func:`exact_array` ("none" -> None)."""
    strings = np.asarray(strings)
    out = np.empty(strings.shape, dtype=object)
    for index, text in np.ndenumerate(strings):
        out[index] = None if text == "none" else from_exact_text(text, backend)
    return out


def resume_command(argv: list[str], command: str, path: str) -> str:
    """The shell command that resumes ``rdyn <command>`` from ``path``: the arguments after
    the subcommand in ``argv`` (e.g. ``sys.argv``), any ``--resume`` option replaced by
    ``--resume path``. If ``argv`` does not contain the subcommand, the arguments are
    written as ``...``."""
    import shlex

    if command in argv:
        rest = list(argv[argv.index(command) + 1:])
    else:
        rest = ["..."]
    kept, skip = [], False
    for token in rest:
        if skip:
            skip = False
        elif token == "--resume":
            skip = True
        elif not token.startswith("--resume="):
            kept.append(token)
    return shlex.join(["rdyn", command, *kept, "--resume", path]).replace("'...'", "...")
