"""Lifecycle: fail open outside and inside a report, the forked child and shutdown steps.

Pure state: a recording communicator and disable callback stand in for the detector's parts.
"""

from __future__ import annotations

import logging

import pytest
from straggler.lifecycle import Lifecycle


class _Comm:
    def __init__(self, events):
        self.events = events

    def close(self):
        self.events.append("comm closed")


def _lifecycle(events, agree_by_comm=True):
    life = Lifecycle(lambda: events.append("disabled"), agree_by_comm)
    life.comm = _Comm(events)
    return life


def test_a_failure_outside_a_report_leaves_at_the_next_report(caplog):
    events = []
    life = _lifecycle(events)
    with caplog.at_level(logging.ERROR, logger="straggler"):
        life.fail(RuntimeError("first"))
        life.fail(RuntimeError("second"))
    assert events == ["disabled", "disabled"]  # the communicator stays for the gate
    assert life.leaving and not life.done and life.in_reports(enabled=False)
    assert [r.getMessage().count("RuntimeError: first") for r in caplog.records] == [1]


@pytest.mark.parametrize("in_report, agree_by_comm", [(True, True), (False, False)])
def test_a_failure_in_a_report_or_without_a_gate_leaves_at_once(in_report, agree_by_comm):
    events = []
    life = _lifecycle(events, agree_by_comm)
    life.fail(RuntimeError("boom"), in_report=in_report)
    assert life.done and not life.leaving and not life.in_reports(enabled=True)
    assert "comm closed" in events


def test_a_forked_child_keeps_its_objects_and_closes_nothing(monkeypatch):
    from straggler import forksafe

    kept, events = [], []
    monkeypatch.setattr(forksafe, "keep_forever", kept.append)
    life = _lifecycle(events)
    native = object()
    life.forget_after_fork([native])
    life.stop_reporting()
    life.close([("engine", lambda: events.append("engine closed"))])
    assert kept == [native] and life.done and life.forked
    assert "comm closed" not in events and "engine closed" not in events


def test_close_runs_every_step_even_after_one_fails(caplog):
    events = []
    life = _lifecycle(events)

    def broken():
        raise OSError("disk gone")

    with caplog.at_level(logging.WARNING, logger="straggler"):
        life.close([("log", broken), ("engine", lambda: events.append("engine closed"))])
    assert events == ["disabled", "engine closed"]
    assert any("closing the log failed: disk gone" in r.getMessage() for r in caplog.records)
