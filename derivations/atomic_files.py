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
developer-only catalogue regenerators of this layer (``python -m rdyn.derivations.model_a.catalog``,
``python -m rdyn.derivations.activations``). It lives in the lowest layer and imports nothing of
rdyn, so every layer may use it; :mod:`rdyn.reduced_dynamics.runs.atomic_files` re-exports it
under the name the upper layers use (one implementation).

The output-path rule (docs/input_rules.md, "Output paths") lives here too, so that the checks
before the work (:func:`rdyn.options.check_output_path`) and the write itself apply the same
one: a regular file or a new path is written by temporary sibling and rename; a symbolic link
is followed and its target written the same way (the link stays a link); a name that reaches
a file descriptor (``/dev/stdout``, ``/dev/fd/N``, ``/proc/PID/fd/N``) and an existing device,
FIFO, socket or directory are refused (:func:`unwritable_reason`), never replaced.
"""
from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path
from typing import Callable


_STREAM_NAMES = ("/dev/stdin", "/dev/stdout", "/dev/stderr")
_MAX_LINKS = 40   # the kernel's own limit on symbolic links followed in one lookup


def output_target(path) -> str:
    """The file an output path names: absolute, every symbolic link followed (a dangling
    link names its target, which the write creates)."""
    return os.path.realpath(os.path.abspath(os.fspath(path)))


def reaches_descriptor(path) -> bool:
    """Whether ``path``, or a link on the way to its target, names a process's file
    descriptor (``/dev/stdout``, ``/dev/fd/1``, ``/proc/self/fd/1``, ``/proc/PID/fd/N``):
    a stream that a rename would detach or replace, not a file."""
    here = os.path.abspath(os.fspath(path))
    for _ in range(_MAX_LINKS):
        here = os.path.join(os.path.realpath(os.path.dirname(here)), os.path.basename(here))
        if here in _STREAM_NAMES or here.startswith(("/dev/fd/", "/proc/")):
            return True
        if not os.path.islink(here):
            return False
        here = os.path.join(os.path.dirname(here), os.readlink(here))
    return False


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words, from its ``st_mode``."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a regular file"


def unwritable_reason(path) -> str | None:
    """Why the output file ``path`` must not be written (None: it may be). An output is a
    regular file or a new path, reached directly or through symbolic links; a stream name, a
    device, a FIFO, a socket or a directory is never opened for writing nor replaced."""
    if reaches_descriptor(path):
        return "names a file descriptor (a stream such as standard output), not a file"
    target = output_target(path)
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return None   # a new file (or a dangling link, whose target the write creates)
    if stat.S_ISREG(mode):
        return None
    where = "" if target == os.path.abspath(os.fspath(path)) else f" ({target})"
    return f"is {file_kind(mode)}{where}, not a regular file"


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
        reason = unwritable_reason(final)
        if reason is not None:   # a stream, device, FIFO, socket or directory: never replaced
            raise OSError(errno.EINVAL, f"{os.fspath(final)} {reason}; not replaced")
        final = output_target(final)   # a symbolic link: its target is written, the link stays
        folder, name = os.path.split(final)
        if self._fixed is not None:
            tmp = final + self._fixed
            if os.path.lexists(tmp) and not stat.S_ISREG(os.lstat(tmp).st_mode):
                raise OSError(errno.EINVAL, f"{tmp} is {file_kind(os.lstat(tmp).st_mode)}, not a "
                              "regular file; not replaced")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o666)
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
            reason = unwritable_reason(final)   # made special since the temporary was opened
            if reason is not None:
                raise OSError(errno.EINVAL, f"{final} {reason}; not replaced")
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
