"""Fixtures of the FT tests: a real rank monitor (`monitor_factory`) and its kill signal."""

from __future__ import annotations

import signal
import threading

import pytest
from straggler.integrations import ft


@pytest.fixture
def monitor_factory(monkeypatch):
    """Start rank monitors (``start(sections, oos=30.0)``) pointed at by this process's env."""
    pytest.importorskip("nvidia_resiliency_ext.fault_tolerance")
    from ft_monitor import Monitor

    monitors = []

    def start(sections, oos=30.0):
        m = Monitor(sections, oos)
        monitors.append(m)
        monkeypatch.setenv(ft.RANK_MONITOR_SOCKET_ENV, m.socket)
        return m

    monkeypatch.setenv("RANK", "0")
    monkeypatch.delenv(ft.LAUNCHER_SOCKET_ENV, raising=False)
    monkeypatch.delenv(ft.STATE_PATH_ENV, raising=False)
    yield start
    for m in monitors:
        m.close()


@pytest.fixture
def kill_signal():
    """Counts SIGUSR1s from the monitor (its 'kill') instead of dying of them."""
    event = threading.Event()
    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: event.set())
    yield event
    signal.signal(signal.SIGUSR1, previous)
