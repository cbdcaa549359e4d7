"""Test doubles shared by the detector tests: an engine and a section hook that record calls."""

from __future__ import annotations

import numpy as np


class RecordingEngine:
    """A GPU engine that records start/stop calls; `fail_on` ("start"/"stop") raises there."""

    backend = "cuda"

    def __init__(self, events, fail_on=None):
        self.events = events
        self.fail_on = fail_on

    def timer_id(self, name):
        return 7

    def set_busy(self, timer, busy=True):
        pass

    def start(self, timer, stream):
        if self.fail_on == "start":
            raise RuntimeError("start exploded")
        self.events.append(("start", timer, stream))

    def stop(self, timer, stream):
        if self.fail_on == "stop":
            raise RuntimeError("stop exploded")
        self.events.append(("stop", timer, stream))

    def cancel(self, timer, stream):
        if self.fail_on == "cancel":
            raise RuntimeError("cancel exploded")
        self.events.append(("cancel", timer, stream))

    def flush(self):
        pass

    def summaries(self):
        return [], np.zeros((0, 7))

    def reset(self):
        pass

    def close(self):
        pass

class RecordingHook:
    """A section hook that records enter/exit calls."""

    def __init__(self, events):
        self.events = events

    def on_section_enter(self, name):
        self.events.append(("enter", name))

    def on_section_exit(self, name):
        self.events.append(("exit", name))
