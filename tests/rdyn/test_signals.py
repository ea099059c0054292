"""rdyn/signals.py: the first SIGINT or SIGTERM stops the run, later ones are only recorded,
and the exit status is 143 once a SIGTERM came, else 130."""
from __future__ import annotations

import signal
import threading

import pytest

from rdyn import signals


def test_first_signal_interrupts_later_ones_are_recorded():
    stop = signals.SignalStop()
    with pytest.raises(KeyboardInterrupt):
        stop(signal.SIGINT, None)
    stop(signal.SIGINT, None)                  # no second KeyboardInterrupt
    assert stop.first == signal.SIGINT and stop.exit_status() == 130
    stop(signal.SIGTERM, None)
    assert stop.first == signal.SIGINT and stop.exit_status() == 143


def test_sigterm_first_exits_143():
    stop = signals.SignalStop()
    with pytest.raises(KeyboardInterrupt):
        stop(signal.SIGTERM, None)
    assert stop.exit_status() == 143 == 128 + signal.SIGTERM


def test_install_and_restore_in_the_main_thread_only():
    previous = signals.current_handlers()
    try:
        stop = signals.install()
        assert signal.getsignal(signal.SIGINT) is stop and signal.getsignal(signal.SIGTERM) is stop
    finally:
        signals.restore(previous)
    assert signals.current_handlers() == previous
    found = []
    worker = threading.Thread(target=lambda: found.append(signals.install()))
    worker.start()
    worker.join()
    assert found == [None] and signals.current_handlers() == previous
