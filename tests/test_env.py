"""One reader of the STRAGGLER_* environment (straggler/_env.py), one dialect for bad options
(issue #24 items 4 and 16)."""

from __future__ import annotations

import pathlib
import re

import pytest
from straggler import Detector, _env
from straggler._checks import OptionTypeError, check_int
from straggler.cli.doctor import checks
from straggler.detector_options import DetectorOptions
from straggler.options import to_options
from straggler.sinks.prometheus import PrometheusOptions
from straggler.sinks.reportlog import DEFAULT_BACKUPS, ReportLogOptions


@pytest.mark.parametrize(("raw", "on"), [("1", True), ("TRUE", True), (" yes ", True),
                                         ("on", True), ("0", False), ("false", False),
                                         ("No", False), ("off", False), ("", False)])
def test_disable_reads_the_usual_switch_words(monkeypatch, raw, on):
    monkeypatch.setenv("STRAGGLER_DISABLE", raw)
    assert _env.DISABLE.read() is on


def test_a_malformed_switch_is_refused_by_initialize_and_shown_bad_by_doctor(monkeypatch):
    monkeypatch.setenv("STRAGGLER_DISABLE", "banana")
    with pytest.raises(ValueError, match=r"`STRAGGLER_DISABLE='banana'` must be one of "
                                         r"1/true/yes/on \(on\) or 0/false/no/off \(off\)"):
        Detector.initialize()
    assert Detector.core() is None
    env = next(c for c in checks() if c.name == "straggler env")
    assert not env.ok and "STRAGGLER_DISABLE='banana'" in env.detail


def test_arguments_are_checked_when_disabled(monkeypatch):
    monkeypatch.setenv("STRAGGLER_DISABLE", "1")
    with pytest.raises(ValueError, match="`profiling_interval=0` must be a positive integer"):
        Detector.initialize(profiling_interval=0)
    Detector.initialize(profiling_interval=3)  # valid: a no-op
    assert Detector.core() is None and not Detector.initialized


def test_rotation_from_the_environment_applies_to_a_path_given_in_code(monkeypatch, tmp_path):
    monkeypatch.setenv("STRAGGLER_REPORT_LOG_MAX_BYTES", "4096")
    options = to_options(ReportLogOptions, tmp_path / "r.jsonl", "report_log")
    assert options == ReportLogOptions(str(tmp_path / "r.jsonl"), 4096, DEFAULT_BACKUPS)
    explicit = ReportLogOptions("x.jsonl", max_bytes=10, backups=1)
    # Said in full: the environment is not read.
    assert to_options(ReportLogOptions, explicit, "report_log") is explicit
    monkeypatch.setenv("STRAGGLER_REPORT_LOG_BACKUPS", "-1")
    with pytest.raises(ValueError, match=r"`STRAGGLER_REPORT_LOG_BACKUPS='-1'` must be an "
                                         r"integer >= 0"):
        to_options(ReportLogOptions, "x.jsonl", "report_log")


@pytest.mark.parametrize(("arguments", "message"), [
    ({"profiling_interval": "3"}, "`profiling_interval='3'` must be a positive integer"),
    ({"gather_on_rank0": 1}, "`gather_on_rank0=1` must be True or False"),
    ({"comm_timeout_s": "5"}, "`comm_timeout_s='5'` must be a positive number of seconds"),
    ({"telemetry": "yes"}, "`telemetry='yes'` must be True, False, None, a dict or a"),
    ({"report_log": 3}, "`report_log=3` must be a path"),
    ({"ft_options": 3}, "`ft_options=3` must be None, a dict or a straggler.options.FTOptions"),
    ({"policy": "on"}, "`policy='on'` must be True, False, None, a dict or a "
                       "straggler.options.PolicyConfig"),
    ({"prometheus": "9400"}, "`prometheus='9400'` must be a port number"),
    ({"hang_timeout_s": "soon"}, "`hang_timeout_s='soon'` must be seconds"),
    ({"ft_options": {1: 2}}, "`ft_options=\\{1: 2\\}` must have string keys"),
    ({"process_group": "world"}, "`process_group='world'` must be a torch.distributed"),
    ({"scores_to_compute": 3}, "`scores_to_compute=3` must be 'all'"),
    ({"report_options": []}, r"`report_options=\[\]` must be None, a dict or a "
                             r"straggler\.options\.ReportOptions"),
])
def test_a_value_of_the_wrong_type_raises_type_error(arguments, message):
    with pytest.raises(TypeError, match=message) as info:
        DetectorOptions(**arguments)
    assert isinstance(info.value, ValueError)  # what code written before catches


def test_a_value_out_of_range_raises_value_error_only():
    with pytest.raises(ValueError, match="`x=0` must be a positive integer") as info:
        check_int("x", 0)
    assert not isinstance(info.value, TypeError)
    with pytest.raises(OptionTypeError):
        check_int("x", True)


def test_prometheus_port_from_the_environment_is_checked(monkeypatch):
    monkeypatch.setenv("STRAGGLER_PROMETHEUS_PORT", "70000")
    with pytest.raises(ValueError, match="`STRAGGLER_PROMETHEUS_PORT='70000'` must be an "
                                         "integer between 0 and 65535"):
        to_options(PrometheusOptions, None, "prometheus")


def test_the_package_reads_straggler_variables_only_through_the_reader():
    package = pathlib.Path(__file__).resolve().parents[1] / "straggler"
    found = [f"{path.name}: {line.strip()}" for path in sorted(package.rglob("*.py"))
             if path.name != "_env.py"
             for line in path.read_text().splitlines()
             if re.search(r"os\.environ|getenv\(", line) and "STRAGGLER_" in line]
    assert found == []
    names = {v.name for v in _env.VARIABLES}
    assert len(names) == len(_env.VARIABLES)
    docs = (package.parent / "docs" / "detector.md").read_text()
    assert sorted(n for n in names if n not in docs) == []
