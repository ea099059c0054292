"""Connecting to a Dask distributed scheduler for the sweeps that can run on one
(``rdyn sweep --scheduler``, ``rdyn prove --grid GRID --scheduler``; docs/proofs.md, "Proof sweep").

Paper sections: none (run machinery).

Everything that can go wrong with the cluster itself is found before the first task is
submitted, and reported as one :class:`SchedulerError` line (the commands print it and exit 2):

* the address is not ``[PROTOCOL://]HOST:PORT`` (:func:`check_address`, also used by the
  option table, so the CLI refuses it before anything is imported);
* nothing answers within :data:`CONNECT_TIMEOUT_S` (distributed retries a refused connection
  until its timeout, 30 s by default), or what answers is not a Dask scheduler;
* no worker joins within :data:`WORKER_WAIT_S` (``as_completed`` would wait forever);
* the scheduler or a worker cannot import rdyn and the task's module, or runs another rdyn
  version: the scheduler unpickles the task graph and the workers run it, so both need the
  same package (install ``rdyn-theory[dask]`` where they run, or start them from the checkout
  with ``PYTHONPATH`` set to it).
"""
from __future__ import annotations

import contextlib
import importlib
import re

from rdyn.derivations.messages import error_kind

CONNECT_TIMEOUT_S = 10.0
WORKER_WAIT_S = 10.0
PROTOCOLS = ("tcp", "tls", "ucx", "ws", "wss")
_ADDRESS = re.compile(r"^(?:(?P<proto>[a-z]+)://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(?P<port>[0-9]{1,5})/?$")


class SchedulerError(OSError):
    """The scheduler at the given address cannot take the sweep (one-line message)."""


def check_address(address: str) -> None:
    """A :class:`~rdyn.derivations.fields.FieldError` of the field ``scheduler`` (one line) unless
    ``address`` is ``[PROTOCOL://]HOST:PORT`` with a known protocol and a port in 1..65535 (what
    ``distributed.Client`` accepts for a remote scheduler), or the ``inproc://...`` address of a
    scheduler in this process."""
    from rdyn.derivations.fields import FieldError

    if re.fullmatch(r"inproc://\S+", address.strip()):   # a LocalCluster(processes=False) in this process
        return
    m = _ADDRESS.match(address.strip())
    if m is None or (m["proto"] or "tcp") not in PROTOCOLS or not 1 <= int(m["port"]) <= 65535:
        raise FieldError("scheduler", "{scheduler} must be a Dask scheduler address [PROTOCOL://]HOST:PORT "
                         f"(PROTOCOL one of {', '.join(PROTOCOLS)}; e.g. tcp://127.0.0.1:8786), got {address!r}")


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{error_kind(exc)}: {text[0]}" if text else error_kind(exc)


def _probe_function():
    """The function run on the scheduler and on every worker: rdyn's version and whether the
    given modules import. A nested function, so cloudpickle sends it by value (the far side
    needs nothing of rdyn to unpickle it, only to run what it imports)."""
    def probe(modules):
        try:
            # importing the version module imports the rdyn package first
            version = importlib.import_module("rdyn.reduced_dynamics._version").__version__
            for name in modules:
                importlib.import_module(name)
        except Exception as exc:   # any import failure is reported, not raised
            lines = str(exc).strip().splitlines()
            return None, type(exc).__name__ + (": " + lines[0] if lines else "")
        return version, None

    return probe


def check_environment(client, modules=()) -> None:
    """SchedulerError unless a worker is connected and the scheduler and every worker import
    rdyn (this version) and ``modules``."""
    from rdyn.reduced_dynamics._version import __version__

    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT_S)
    except (TimeoutError, OSError):
        raise SchedulerError(f"no Dask worker joined the scheduler within {WORKER_WAIT_S:g} s") from None
    probe = _probe_function()
    modules = tuple(modules)
    where = {"the scheduler": client.run_on_scheduler(probe, modules)}
    where.update({f"worker {w}": r for w, r in sorted(client.run(probe, modules).items())})
    for name, (version, error) in where.items():
        if error is not None:
            raise SchedulerError(f"{name} cannot import rdyn ({error}): the scheduler and the workers need this "
                                 "package (pip install 'rdyn-theory[dask]' there, or start them with PYTHONPATH set "
                                 "to the checkout)")
        if version != __version__:
            raise SchedulerError(f"{name} runs rdyn {version}, this is rdyn {__version__}: install the same "
                                 "version on the scheduler and the workers")


HANDSHAKE_WAIT_S = 5.0


def probe_tcp(address: str, timeout: float | None = None) -> None:
    """For a ``tcp://`` (or bare HOST:PORT) address: SchedulerError unless a TCP connection opens
    within ``timeout`` and the far side speaks first within :data:`HANDSHAKE_WAIT_S`, as a Dask
    scheduler does (its listener writes its handshake as soon as a connection opens,
    ``distributed.comm.core.Listener.on_connection``). An HTTP server (``python -m http.server
    8786``) waits for a request instead, and ``distributed.Client`` would then wait forever for
    the handshake (its own timeout does not cover it). Other protocols are left to distributed."""
    import socket

    timeout = CONNECT_TIMEOUT_S if timeout is None else timeout
    m = _ADDRESS.match(address.strip())
    if m is None or (m["proto"] or "tcp") != "tcp":
        return
    host = m["host"].strip("[]")
    try:
        sock = socket.create_connection((host, int(m["port"])), timeout=timeout)
    except OSError as exc:
        raise SchedulerError(f"cannot connect within {timeout:g} s ({_one_line(exc)})") from None
    try:
        sock.settimeout(HANDSHAKE_WAIT_S)
        try:
            first = sock.recv(16)
        except (TimeoutError, socket.timeout):
            raise SchedulerError(f"no Dask scheduler answers there (the server sent no Dask handshake within "
                                 f"{HANDSHAKE_WAIT_S:g} s; is it another service, e.g. an HTTP server?)") from None
        except OSError as exc:
            raise SchedulerError(f"no Dask scheduler answers there ({_one_line(exc)})") from None
        if not first:
            raise SchedulerError("no Dask scheduler answers there (the connection was closed without a handshake)")
        if first[:5] in (b"HTTP/", b"SSH-2", b"<!DOC", b"<html"):
            raise SchedulerError(f"no Dask scheduler answers there (the server speaks {first[:8]!r}..., not Dask)")
    finally:
        with contextlib.suppress(OSError):
            sock.close()


@contextlib.contextmanager
def connect(address, modules=()):
    """A ``distributed.Client`` for ``address`` (a scheduler address, a ``LocalCluster``, or a
    ``Client``, used as is and left open), checked by :func:`check_environment` before it is handed out; closed on
    exit when this function opened it. SchedulerError (one line) when the address is malformed,
    nothing answers within :data:`CONNECT_TIMEOUT_S`, or the answer is not a Dask scheduler's."""
    from distributed import Client

    address = getattr(address, "scheduler_address", address)   # a LocalCluster: its scheduler
    if isinstance(address, Client):
        check_environment(address, modules)
        yield address
        return
    try:
        check_address(str(address))
    except ValueError as exc:
        raise SchedulerError(str(exc)) from None
    probe_tcp(str(address))   # a server that never sends the Dask handshake: refused here, not a hang
    client = Client.__new__(Client)   # kept to close it if the constructor fails (else its __del__
    try:                              # blocks the interpreter's exit for 2 x the timeout, then prints a traceback)
        client.__init__(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except Exception as exc:
        with contextlib.suppress(Exception):
            client.close(timeout=1)
        if isinstance(exc, (OSError, TimeoutError)):
            raise SchedulerError(f"cannot connect within {CONNECT_TIMEOUT_S:g} s ({_one_line(exc)})") from None
        what = ("its reply is not a Dask message" if isinstance(exc, MemoryError)   # e.g. an HTTP server's reply
                else _one_line(exc))                                              # read as a message length
        raise SchedulerError(f"no Dask scheduler answers there ({what})") from None
    try:
        check_environment(client, modules)
        yield client
    finally:
        client.close()
