"""AttachSettings: the STRAGGLER_* variables of an attached job, read and written."""

from __future__ import annotations

import pytest

from straggler.attach import AttachSettings, attach_env, site_dir


def test_defaults_when_nothing_is_set():
    s = AttachSettings.from_env({})
    assert (s.report_interval_s, s.step, s.quiet, s.comm_timeout_s) == (60.0, "auto", False,
                                                                        120.0)


def test_variables_are_read():
    s = AttachSettings.from_env({"STRAGGLER_REPORT_INTERVAL": "2.5", "STRAGGLER_STEP": "Collective",
                                 "STRAGGLER_QUIET": "yes", "STRAGGLER_COMM_TIMEOUT": "30"})
    assert (s.report_interval_s, s.step, s.quiet, s.comm_timeout_s) == (2.5, "collective", True,
                                                                        30.0)


@pytest.mark.parametrize(("name", "value", "message"), [
    ("STRAGGLER_REPORT_INTERVAL", "banana", r"`STRAGGLER_REPORT_INTERVAL='banana'` must be"),
    ("STRAGGLER_REPORT_INTERVAL", "-1", r"`STRAGGLER_REPORT_INTERVAL='-1'` must be"),
    ("STRAGGLER_STEP", "epoch", r"`STRAGGLER_STEP='epoch'` must be one of auto, optimizer"),
    ("STRAGGLER_QUIET", "maybe", r"`STRAGGLER_QUIET='maybe'` must be one of 1/true/yes/on"),
    ("STRAGGLER_COMM_TIMEOUT", "0", r"`STRAGGLER_COMM_TIMEOUT='0'` must be a positive"),
])
def test_a_bad_value_is_named(name, value, message):
    with pytest.raises(ValueError, match=message):
        AttachSettings.from_env({name: value})


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match=r"`step='epoch'`"):
        AttachSettings(step="epoch")
    with pytest.raises(ValueError, match=r"`report_interval=-1`"):
        AttachSettings(report_interval_s=-1)


def test_settings_round_trip_through_the_environment():
    s = AttachSettings(report_interval_s=0.5, step="optimizer", quiet=True, comm_timeout_s=9)
    env = s.to_env()
    assert env["STRAGGLER_AUTO"] == "1"
    assert AttachSettings.from_env(env) == s


def test_attach_env_puts_the_site_folder_first_once():
    env = attach_env(AttachSettings(), {"PYTHONPATH": f"/a:{site_dir()}:/b"},
                     report_log="/tmp/x.jsonl", prometheus=9400)
    assert env["PYTHONPATH"] == f"{site_dir()}:/a:/b"
    assert env["STRAGGLER_REPORT_LOG"] == "/tmp/x.jsonl"
    assert env["STRAGGLER_PROMETHEUS_PORT"] == "9400"
    assert attach_env(AttachSettings(), {})["PYTHONPATH"] == site_dir()
