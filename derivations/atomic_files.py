"""Output files are written whole or not at all (docs/input_rules.md, "Output files").

Every file rdyn writes for a user (CSV, JSON, PNG/SVG figures, Markdown/LaTeX/HTML reports and
errata, checkpoints, the compiled-kernel cache) goes through :class:`AtomicFiles`: each file is
written to a temporary sibling in the same folder (same suffix, so a writer that infers the
format from the name, such as matplotlib's ``savefig``, still does), flushed to disk, and moved
into place with ``os.replace`` only when every file of the group is complete. If anything fails
(a full disk, a signal, an exception in the writer) the temporaries are removed and every file
that existed before is left untouched: a reader sees the old file or the whole new one, never a
partial one, at the requested path.

Used by :mod:`rdyn.output` (``--out`` files), the figure writers of :mod:`rdyn.verification`,
the claims report and erratum, :mod:`rdyn.reduced_dynamics.runs.checkpoint`, and the
developer-only catalogue regenerators of this layer (``python -m rdyn.derivations.catalog``,
``python -m rdyn.derivations.activations``). It lives in the lowest layer and imports nothing of
rdyn, so every layer may use it; :mod:`rdyn.reduced_dynamics.runs.atomic_files` re-exports it
under the name the upper layers use (one implementation).
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable


def _mode() -> int:
    """The permission bits of a new file under the process umask (0666 & ~umask): mkstemp
    creates 0600 files, which the rename would otherwise keep."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


class AtomicFiles:
    """A group of output files committed together::

        with AtomicFiles() as files:
            fig.savefig(files.path("e_fig1.png"))
            Path(files.path("erratum.md")).write_text(text)

    :meth:`path` returns a new temporary sibling of the final path (hidden, unique, same
    suffix); on a normal exit every temporary is flushed and renamed onto its final path, in
    the order the paths were asked for (a document after its figures); on an exception every
    temporary is removed and the exception propagates. ``fixed_suffix``: use ``FINAL +
    fixed_suffix`` as the temporary name instead of a unique one (checkpoints: ``FILE.tmp``,
    probed for writability before the run)."""

    def __init__(self, fixed_suffix: str | None = None):
        self._pairs: list[tuple[str, str]] = []
        self._fixed = fixed_suffix

    def path(self, final) -> str:
        final = os.fspath(final)
        folder, name = os.path.split(os.path.abspath(final))
        if self._fixed is not None:
            tmp = final + self._fixed
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        else:
            stem, suffix = os.path.splitext(name)
            fd, tmp = tempfile.mkstemp(prefix=f".{stem}.", suffix=f".tmp{suffix}", dir=folder)
        os.close(fd)
        self._pairs.append((tmp, final))
        return tmp

    def __enter__(self) -> "AtomicFiles":
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is None:
            try:
                self._commit()
                return False
            except BaseException:
                self._discard()
                raise
        self._discard()
        return False

    def _commit(self) -> None:
        mode = _mode()
        for tmp, _ in self._pairs:   # every file complete and on disk before any is renamed
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
            if self._fixed is None:
                os.chmod(tmp, mode)
        for tmp, final in self._pairs:
            os.replace(tmp, final)
        self._pairs = []

    def _discard(self) -> None:
        for tmp, _ in self._pairs:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        self._pairs = []


def write_atomic(path, write: Callable[[str], None]) -> None:
    """``write(tmp)`` a whole file at a temporary sibling of ``path``, then move it onto
    ``path`` (:class:`AtomicFiles` with one file)."""
    with AtomicFiles() as files:
        write(files.path(path))


def write_text_atomic(path, text: str, encoding: str = "utf-8") -> None:
    write_atomic(path, lambda tmp: Path(tmp).write_text(text, encoding=encoding))


def write_bytes_atomic(path, data: bytes) -> None:
    write_atomic(path, lambda tmp: Path(tmp).write_bytes(data))
