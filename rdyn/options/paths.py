"""The filesystem checks of the options, made before any work:

* an output path (``out`` options, :func:`check_output_path`): an output file is not a
  directory, and its folder exists, is a directory and is writable; a file path that names a
  stream (``/dev/stdout``), device, FIFO or socket is refused; an output folder is not a file,
  and its nearest existing ancestor is a writable directory (the folder is created with its
  parents when the job writes). Writability is probed by creating (then removing) a file, so
  validation leaves nothing behind;
* an input path (``path`` options, :func:`check_input_file`): an existing regular file;
* distinct files (:func:`check_distinct_outputs`): no two outputs name the same file and no
  output names an input, compared after resolving symbolic links (one exception,
  :data:`OUTPUT_MAY_BE_INPUT`).
"""
from __future__ import annotations

import os
import tempfile

from rdyn.derivations.atomic_files import output_target, reaches_descriptor, unwritable_reason
from rdyn.options.option import Command, Option
from rdyn.options.shown_values import shown_path
from rdyn.output import UsageError


def check_output_path(flag: str, path, kind: str = "file") -> None:
    """Refuse (UsageError) an output path that cannot be written: its folder missing, not a
    directory or not writable; a file path that is a directory; a folder path that is a file;
    a file path that names a stream (``/dev/stdout``) or an existing device, FIFO or socket
    (the output-path rule of :mod:`rdyn.derivations.atomic_files`, which the write applies
    again). A symbolic link is followed: its target is checked, and later written.
    ``kind="dir"``: the folder is created with its parents, so the nearest existing ancestor
    must be a writable directory."""
    given = os.fspath(path)
    if reaches_descriptor(given):
        raise UsageError(f"{flag} {shown_path(given)} names a file descriptor (a stream such as "
                         "standard output), not a file; give a regular file's path")
    if kind == "file":
        reason = unwritable_reason(given)
        if reason is not None and not os.path.isdir(given):
            raise UsageError(f"{flag} {shown_path(given)} {reason}; rdyn never replaces a device, "
                             "FIFO or socket")
    path = output_target(given)
    if kind == "dir":
        if os.path.exists(path):
            if not os.path.isdir(path):
                raise UsageError(f"{flag}: {path} is not a directory")
            if not os.access(path, os.W_OK):
                raise UsageError(f"{flag}: folder {path} is not writable")
            return
        folder = os.path.dirname(path)
        while not os.path.exists(folder):
            folder = os.path.dirname(folder)
    else:
        if os.path.isdir(path):
            raise UsageError(f"{flag}: {path} is a directory, not a file")
        folder = os.path.dirname(path)
        if not os.path.exists(folder):
            ancestor = folder
            while not os.path.exists(ancestor):
                ancestor = os.path.dirname(ancestor)
            if not os.path.isdir(ancestor):
                raise UsageError(f"{flag}: {ancestor} is not a directory")
            raise UsageError(f"{flag}: folder {folder} does not exist")
    if not os.path.isdir(folder):
        raise UsageError(f"{flag}: {folder} is not a directory")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"{flag}: folder {folder} is not writable")
    if kind == "dir":
        probe_folder(flag, path)
    else:
        probe_file(flag, path)


def probe_file(flag: str, path: str) -> None:
    """Open ``path`` for appending (created if missing, then removed again): refuses, before
    any work, a file that exists read-only or a folder where files cannot be created (e.g.
    /proc), which the permission bits alone do not show."""
    existed = os.path.exists(path)
    try:
        with open(path, "a"):
            pass
    except OSError as exc:
        raise UsageError(f"{flag}: cannot write {path}: {exc.strerror or exc}") from None
    if not existed:
        try:
            os.remove(path)
        except OSError:
            pass


def probe_folder(flag: str, path: str) -> None:
    """Create the folder ``path`` (with its parents) and a probe file in it, then remove the
    probe and every folder the probe created: validation leaves nothing behind, so a check
    that refuses later leaves no folder (the job creates the folder when it writes, after
    every check has passed)."""
    created = []   # the folders the probe creates, deepest first
    missing = path
    while not os.path.exists(missing):
        created.append(missing)
        missing = os.path.dirname(missing)
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".rdyn-probe-"):
            pass
    except OSError as exc:
        raise UsageError(f"{flag}: cannot write in {path}: {exc.strerror or exc}") from None
    finally:
        for folder in created:
            try:
                os.rmdir(folder)
            except OSError:
                pass


def check_input_file(flag: str, path) -> None:
    """Refuse (UsageError) an input path that is missing or not a regular file."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise UsageError(f"{flag}: file {path} does not exist")
    if not os.path.isfile(path):
        raise UsageError(f"{flag}: {path} is not a file")


# the one output that may name its command's input file: a run resumed from a checkpoint
# goes on saving to it (the command line that an interruption prints does exactly that)
OUTPUT_MAY_BE_INPUT = {("checkpoint", "resume")}


def check_distinct_outputs(cmd: Command, values: dict) -> None:
    """Refuse two output options naming the same file (``rdyn claims --report same.md --errata
    same.md``: the second write would replace the first), and an output naming an input file
    (``rdyn teacher --groups g.json --checkpoint g.json`` would replace the groups with a
    checkpoint; only ``--checkpoint F --resume F`` is allowed, :data:`OUTPUT_MAY_BE_INPUT`),
    compared after resolving symbolic links and relative paths; an output's sibling
    (``FILE.tmp`` of a checkpoint) counts as that output."""
    inputs: dict[str, Option] = {}
    for o in cmd.options:
        if o.kind == "path" and isinstance(values.get(o.name), (str, os.PathLike)):
            inputs.setdefault(output_target(values[o.name]), o)
    seen: dict[str, str] = {}
    for o in cmd.options:
        if o.output != "file" or values.get(o.name) is None:
            continue
        real = output_target(values[o.name])
        if real in seen:
            raise UsageError(f"{o.flag} {shown_path(values[o.name])} names the same file as "
                             f"{seen[real]}; give each output its own file")
        seen[real] = o.flag
        for name in [real] + [real + suffix for suffix in o.siblings]:
            source = inputs.get(name)
            if source is not None and (o.name, source.name) not in OUTPUT_MAY_BE_INPUT:
                raise UsageError(f"{o.flag} {shown_path(values[o.name])} names the input file of "
                                 f"{source.flag}; the output would replace it: give the output "
                                 "its own file")
