"""How the ``rdyn`` command stops on a signal (docs/input_rules.md#signals).

SIGINT (Ctrl-C) and SIGTERM (what batch schedulers send on pre-emption) stop a run the same
way: the first one raises :class:`KeyboardInterrupt` in the main thread, so a run with
``--checkpoint FILE`` saves its last consistent state, prints the command that resumes and
exits with 143 (128 + 15) if a SIGTERM was among the signals, else 130. Every further SIGINT or SIGTERM is
recorded and otherwise ignored, so repeated signals cannot interrupt the save or the message
that follows it, and the process always exits with its status (never killed by the signal).
Checkpoint writes additionally block both signals while the file is written and renamed
(:func:`rdyn.reduced_dynamics.runs.checkpoint.save`).
"""
from __future__ import annotations

import signal

EXIT_STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}


class SignalStop:
    """The signal handler of one CLI run: ``first`` is the first signal received (or None)."""

    def __init__(self) -> None:
        self.first: int | None = None
        self.received: set[int] = set()

    def __call__(self, signum, frame) -> None:
        self.received.add(signum)
        if self.first is None:
            self.first = signum
            raise KeyboardInterrupt

    def exit_status(self) -> int:
        """143 when a SIGTERM was received (also after or together with SIGINTs: Python runs
        pending handlers in signal-number order, SIGINT first), else 130."""
        return EXIT_STATUS[signal.SIGTERM] if signal.SIGTERM in self.received else 130


def install() -> SignalStop | None:
    """Install the handler for SIGINT and SIGTERM (main thread only; else None)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    stop = SignalStop()
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    return stop


def restore(previous: dict) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)


def current_handlers() -> dict:
    return {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
