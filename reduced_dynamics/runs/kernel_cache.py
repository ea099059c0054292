"""On-disk cache of generated kernel source and of numba's machine code for it.

Two levels, both under :func:`cache_root` ($RDYN_CACHE_DIR, else $XDG_CACHE_HOME/rdyn, else
~/.cache/rdyn; a per-user temporary directory if none is writable):

* ``sources/<kind>-<key>.py``: generated source text (printed from sympy derivations), keyed by
  the kind, the derivation inputs and a hash of every ``.py`` file of ``derivations/`` and
  ``reduced_dynamics/`` (:func:`package_fingerprint`). A warm run reads it back instead of
  importing sympy. The first line holds the sha256 of the rest; a file whose hash does not
  match (truncated, edited, half written) is regenerated, never used.
* ``kernels/rdyn_<kind>_<key>.py``: a module holding that source, keyed by the sha256 of the
  source, the numba version and the Python version. Its functions are compiled with
  :func:`njit` (numba ``cache=True`` with a checked cache file: every index and data file
  numba writes carries a sha256 of its contents; a file that does not match, or whose data
  numba cannot rebuild, counts as a miss and is recompiled and rewritten). The module file
  is compared byte for byte with the expected text before import and rewritten on mismatch.

Every file is written to a unique temporary name and moved into place with ``os.replace``, so
concurrent processes (pytest-xdist workers, parallel sweeps) never see a partial file; two
processes that both miss write identical bytes.

When numba has to compile (a cold cache, or an entry rebuilt), one line goes to stderr:
``rdyn: compiling <label> (first run, cached in <dir>)``. Warm runs print nothing.
"""
from __future__ import annotations

import hashlib
import importlib.abc
import importlib.util
import io
import os
import re
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

_HEADER = "# rdyn generated source sha256="
_PACKAGE_DIRS = ("derivations", "reduced_dynamics")


# --------------------------------------------------------------------------------------------
# Locations and keys
# --------------------------------------------------------------------------------------------

def _candidates():
    env = os.environ.get("RDYN_CACHE_DIR")
    if env:
        yield Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        yield Path(xdg) / "rdyn"
    yield Path.home() / ".cache" / "rdyn"
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    yield Path(tempfile.gettempdir()) / f"rdyn-{uid}"


def cache_root() -> Path:
    """The cache folder (created): $RDYN_CACHE_DIR, $XDG_CACHE_HOME/rdyn, ~/.cache/rdyn, or a
    per-user temporary directory, whichever is writable first. Read on every call (tests
    point RDYN_CACHE_DIR at a temporary folder)."""
    for candidate in _candidates():
        try:
            candidate.mkdir(mode=0o700, parents=True, exist_ok=True)
            if os.access(candidate, os.W_OK) and _private(candidate):
                return candidate
        except OSError:
            continue
    raise OSError("rdyn: no writable cache directory owned by this user and not writable by "
                  "others (set RDYN_CACHE_DIR)")


def _private(folder: Path) -> bool:
    """The folder is this user's and nobody else can write it. numba's cache files (and ours,
    which carry numba's) are pickles: a folder another user can write would let that user's
    file be unpickled, that is run, here (docs/input_rules.md, "Security")."""
    if not hasattr(os, "getuid"):
        return True
    info = folder.stat()
    return info.st_uid == os.getuid() and not info.st_mode & 0o022


def _subdir(name: str) -> Path:
    path = cache_root() / name
    path.mkdir(parents=True, exist_ok=True)
    return path


@lru_cache(maxsize=None)
def package_fingerprint() -> str:
    """sha256 of every ``.py`` file of ``derivations/`` and ``reduced_dynamics/`` with their
    subpackages (paths and bytes, in sorted order): any edit to a derivation, a printer or a
    kernel template gives new source-cache keys. Fixed for the life of the process."""
    root = Path(__file__).resolve().parents[2]  # reduced_dynamics/runs/ -> the checkout (or rdyn/)
    h = hashlib.sha256()
    for folder in _PACKAGE_DIRS:
        for path in sorted((root / folder).rglob("*.py")):
            h.update(f"{folder}/{path.relative_to(root / folder).as_posix()}\0".encode())
            h.update(path.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


def source_key(kind: str, inputs: tuple) -> str:
    """Key of a generated source: kind, derivation inputs (their ``repr``; plain strings and
    numbers only) and :func:`package_fingerprint`."""
    text = f"{kind}\0{inputs!r}\0{package_fingerprint()}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def module_key(source: str) -> str:
    """Key of a compiled module: sha256 of the source, the numba version and the Python
    version (numba's machine code is valid for exactly that combination)."""
    import platform

    import numba

    h = hashlib.sha256()
    h.update(source.encode())
    h.update(f"\0numba={numba.__version__}\0python={sys.version}\0"
             f"{sys.implementation.name}\0{platform.machine()}".encode())
    return h.hexdigest()[:32]


# --------------------------------------------------------------------------------------------
# Atomic files
# --------------------------------------------------------------------------------------------

def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a unique temporary file in the same folder and
    ``os.replace`` (readers see the old file or the whole new one, never a partial one)."""
    from rdyn.reduced_dynamics.runs.atomic_files import write_bytes_atomic

    write_bytes_atomic(path, data)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


# --------------------------------------------------------------------------------------------
# Level 1: generated source
# --------------------------------------------------------------------------------------------

def _seal(body: str) -> bytes:
    return (f"{_HEADER}{hashlib.sha256(body.encode()).hexdigest()}\n{body}").encode()


def _unseal(data: bytes | None) -> str | None:
    """The body of a sealed source file, or None if it is missing or does not match its hash."""
    if data is None:
        return None
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return None
    first, sep, body = text.partition("\n")
    if not sep or not first.startswith(_HEADER):
        return None
    if hashlib.sha256(body.encode()).hexdigest() != first[len(_HEADER):]:
        return None
    return body


def source_path(kind: str, inputs: tuple) -> Path:
    return _subdir("sources") / f"{kind}-{source_key(kind, inputs)}.py"


def cached_source(kind: str, inputs: tuple, generate: Callable[[], str]) -> str:
    """The generated source for ``(kind, inputs)``: read from the source cache if present and
    intact, else ``generate()`` (sympy) and stored. The result is identical either way."""
    path = source_path(kind, inputs)
    body = _unseal(_read(path))
    if body is None:
        body = generate()
        try:
            write_atomic(path, _seal(body))
        except OSError:
            pass  # read-only cache: still correct, just not faster next time
    return body


# --------------------------------------------------------------------------------------------
# Level 2: compiled modules
# --------------------------------------------------------------------------------------------

_announced: set[str] = set()


def announce_compiling(label: str, where: Path) -> None:
    """One line on stderr, once per process and label, when numba compiles."""
    if label in _announced:
        return
    _announced.add(label)
    print(f"rdyn: compiling {label} (first run, cached in {where})", file=sys.stderr, flush=True)


def module_text(source: str, label: str) -> str:
    return (f"# Generated by rdyn ({label}). Do not edit: the file name is a hash of this\n"
            f"# text, numba {_numba_version()} and Python {sys.version.split()[0]}.\n"
            f"__rdyn_label__ = {label!r}\n\n{source}")


def _numba_version() -> str:
    import numba

    return numba.__version__


def _defer_scipy_linalg() -> None:
    """Import numba's array library without importing ``scipy.linalg`` (about 0.3 s, a
    quarter of a warm run). numba.np.arraymath probes BLAS once at import, only to choose
    how ``np.correlate``/``np.convolve`` compute inner products; every BLAS/LAPACK function
    (np.dot, np.linalg.*) calls ``ensure_blas()`` itself when it is compiled. The probe is
    answered with ``find_spec("scipy.linalg")`` (no import of it), which gives the same answer whenever scipy is
    installed (it is a dependency). Skipped when scipy.linalg or that module is already
    loaded, or when numba's internals differ (then numba imports scipy.linalg as usual)."""
    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return

    class _Defer(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "scipy.linalg" or name.startswith("scipy.linalg."):
                raise ImportError(f"{name}: deferred by rdyn")
            return None

    blocker = _Defer()
    sys.meta_path.insert(0, blocker)
    try:
        import numba.np.arraymath as arraymath
    except ImportError:
        return
    finally:
        sys.meta_path.remove(blocker)
    if hasattr(arraymath, "_HAVE_BLAS"):
        try:
            arraymath._HAVE_BLAS = importlib.util.find_spec("scipy.linalg") is not None
        except ImportError:
            arraymath._HAVE_BLAS = False


def load_module(kind: str, source: str, label: str):
    """Import ``source`` (a complete module: it imports what it needs, and decorates the
    functions to compile with :func:`njit`) from ``kernels/`` in the cache. The file is
    (re)written when missing or not byte-identical to the expected text."""
    text = module_text(source, label).encode()
    name = f"rdyn_{kind}_{module_key(source)}"
    if name in sys.modules:
        return sys.modules[name]
    _defer_scipy_linalg()
    folder = _subdir("kernels")
    path = folder / f"{name}.py"
    if _read(path) != text:
        write_atomic(path, text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # numba's cache finds the module by name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def compiled_function(template: Callable, kind: str, label: str, imports: str):
    """``template`` (a plain Python function whose body needs only ``imports``) compiled by
    numba in its own cached module ``kind`` (:func:`load_module`); returns the compiled twin."""
    import inspect

    source = (f"{imports}\n\nfrom rdyn.reduced_dynamics.runs.kernel_cache import njit\n\n\n@njit\n"
              + inspect.getsource(template))
    return getattr(load_module(kind, source, label), template.__name__)


# --------------------------------------------------------------------------------------------
# numba with a checked cache
# --------------------------------------------------------------------------------------------

_DIGEST = 32  # bytes of sha256 in front of every cache file numba writes through us


def _checked_cache_classes():
    """(cache file class, function cache class) whose files carry a sha256 of their bytes."""
    import pickle

    from numba.core import caching

    class CheckedCacheFile(caching.IndexDataCacheFile):
        """numba's index + data files, each with a sha256 prefix; a data file is named after
        its key and holds the key, which is compared on load (two processes compiling
        different signatures at once cannot swap each other's machine code)."""

        def save(self, key, data):
            name = self._data_name(int(hashlib.sha256(repr(key).encode()).hexdigest()[:15], 16))
            self._save_data(name, (key, data))  # data first: an index never names a missing file
            overloads = self._load_index()
            overloads[key] = name
            self._save_index(overloads)

        def load(self, key):
            name = self._load_index().get(key)
            if name is None:
                return None
            try:
                stored_key, data = self._load_data(name)
            except Exception:
                return None
            return data if stored_key == key else None

        def _load_index(self):
            data = self._checked_read(self._index_path)
            if data is None:
                return {}
            try:
                stream = io.BytesIO(data)
                if pickle.load(stream) != self._version:
                    return {}
                stamp, overloads = pickle.loads(stream.read())
            except Exception:
                return {}
            return overloads if stamp == self._source_stamp else {}

        def _save_index(self, overloads):
            body = pickle.dumps(self._version, protocol=-1) + \
                self._dump((self._source_stamp, overloads))
            self._checked_write(self._index_path, body)

        def _load_data(self, name):
            data = self._checked_read(self._data_path(name))
            if data is None:
                raise OSError(f"rdyn: cache file {name} is corrupt")  # load() -> None
            return pickle.loads(data)

        def _save_data(self, name, data):
            self._checked_write(self._data_path(name), self._dump(data))

        @staticmethod
        def _checked_read(path):
            raw = _read(Path(path))
            if raw is None or len(raw) < _DIGEST:
                return None
            digest, body = raw[:_DIGEST], raw[_DIGEST:]
            return body if hashlib.sha256(body).digest() == digest else None

        @staticmethod
        def _checked_write(path, body: bytes):
            write_atomic(Path(path), hashlib.sha256(body).digest() + body)

    class CheckedFunctionCache(caching.FunctionCache):
        def __init__(self, py_func):
            super().__init__(py_func)
            self._cache_file = CheckedCacheFile(cache_path=self._cache_path,
                                                filename_base=self._impl.filename_base,
                                                source_stamp=self._impl.locator.get_source_stamp())
            self._label = py_func.__globals__.get("__rdyn_label__", "kernel")

        def load_overload(self, sig, target_context):
            try:
                data = super().load_overload(sig, target_context)
            except Exception:  # unpicklable / unrebuildable entry: recompile and overwrite
                data = None
            if data is None:
                announce_compiling(self._label, Path(self._cache_path))
            return data

        def save_overload(self, sig, data):
            try:
                super().save_overload(sig, data)
            except Exception:  # e.g. a full or read-only disk: the compiled code still runs
                pass

    return CheckedCacheFile, CheckedFunctionCache


@lru_cache(maxsize=None)
def _function_cache_class():
    return _checked_cache_classes()[1]


def njit(*args, **options):
    """``numba.njit(**options)`` with an on-disk cache that checks its files (see module
    docstring). Use as ``@njit`` or ``@njit(parallel=True, ...)`` in generated modules."""
    import numba

    options.pop("cache", None)

    def decorate(func):
        dispatcher = numba.njit(**options)(func)
        dispatcher._cache = _function_cache_class()(dispatcher.py_func)
        return dispatcher

    if args and callable(args[0]) and len(args) == 1 and not options:
        return decorate(args[0])
    return decorate


def nested_function_source(factory: Callable, name: str) -> str:
    """The source of the function ``name`` defined inside ``factory`` (a template such as
    :func:`rdyn.reduced_dynamics.model_a.dynamics._make_advance`), dedented to module level, so that a
    generated module can define it with its callees as module globals (numba can cache
    that, not a closure)."""
    import inspect
    import textwrap

    lines = textwrap.dedent(inspect.getsource(factory)).splitlines()
    pattern = re.compile(rf"^(\s+)def {re.escape(name)}\(")
    for start, line in enumerate(lines):
        match = pattern.match(line)
        if match:
            break
    else:
        raise ValueError(f"no nested function {name!r} in {factory.__name__}")
    indent = len(match.group(1))
    end = start + 1
    while end < len(lines) and (not lines[end].strip()
                                or len(lines[end]) - len(lines[end].lstrip()) > indent):
        end += 1
    return textwrap.dedent("\n".join(lines[start:end]).rstrip() + "\n")


def assemble_module(origin: str, imports: Sequence[str], body: str, compiled: Sequence[str],
                    loop_template: Callable) -> str:
    """The text of a generated kernel module: a header naming ``origin``, the ``imports``
    (lines), ``body`` with each function in ``compiled`` decorated with :func:`njit`, and the
    source of ``loop_template`` compiled as ``advance``."""
    import inspect

    header = [f"# Generated by {origin} from the derived expressions.",
              "from rdyn.reduced_dynamics.runs.kernel_cache import njit", *imports, ""]
    for name in compiled:
        body = body.replace(f"def {name}(", f"@njit\ndef {name}(")
    loop = inspect.getsource(loop_template).replace(
        f"def {loop_template.__name__}(", "@njit\ndef advance(")
    return "\n".join(header) + "\n" + body + "\n\n" + loop
