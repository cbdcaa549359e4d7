"""`straggler.options`: every option type, and the one conversion `to_options` (issue #24)."""

from __future__ import annotations

import ast
import dataclasses
import pathlib
from typing import is_typeddict

import pytest
from straggler import options
from straggler.analysis.policy import make_policy
from straggler.detector_options import DetectorOptions
from straggler.options import OPTION_TYPES, OptionTypeError, to_options

PACKAGE = pathlib.Path(options.__file__).parent


@pytest.mark.parametrize("name", OPTION_TYPES)
def test_every_option_type_converts_instances_dicts_and_rejects_the_rest(name):
    cls = getattr(options, name)
    assert cls.__name__ == name
    required = {"ReportLogOptions": {"path": "r.jsonl"}, "PrometheusOptions": {"port": 0}}
    fields = required.get(name, {})
    made = to_options(cls, dict(fields), "x", {})
    if is_typeddict(cls):  # ReportOptions: a dict with known keys
        assert made == fields
    else:
        assert dataclasses.is_dataclass(cls) and isinstance(made, cls)
        assert to_options(cls, made, "x", {}) is made  # an instance is taken as it is
    with pytest.raises(ValueError, match=r"^`x=\{.*'bogus': 1\}` has unknown keys \['bogus'\]; "
                                         r"known: \["):
        to_options(cls, {**fields, "bogus": 1}, "x", {})
    with pytest.raises(OptionTypeError, match=rf"^`x=\[\]` must be .*a dict or a "
                                              rf"straggler\.options\.{name}$") as info:
        to_options(cls, [], "x", {})
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


def test_unknown_report_options_are_named_before_anything_is_built():
    with pytest.raises(ValueError, match=r"`report_options=\{'window': 4\}` has unknown keys "
                                         r"\['window'\]; known: \['relative_reference'"):
        DetectorOptions(report_options={"window": 4})


def test_a_mapping_needs_string_keys_and_the_required_fields():
    with pytest.raises(OptionTypeError, match=r"`report_log=\{1: 'a'\}` must have string keys"):
        to_options(options.ReportLogOptions, {1: "a"}, "report_log", {})
    with pytest.raises(ValueError, match=r"`report_log=\{'backups': 1\}` lacks the required "
                                         r"keys \['path'\]"):
        to_options(options.ReportLogOptions, {"backups": 1}, "report_log", {})


def test_a_bad_field_value_is_named_by_the_type_itself():
    with pytest.raises(ValueError, match=r"^`warmup_iters=-1` must be a non-negative integer$"):
        to_options(options.FTOptions, {"warmup_iters": -1}, "ft_options")
    with pytest.raises(ValueError, match=r"^`prometheus=70000` must be an integer between 0 and "
                                         r"65535$"):
        to_options(options.PrometheusOptions, 70000, "prometheus", {})


def test_shorthands_and_off():
    assert to_options(options.TelemetryOptions, False, "telemetry").enabled is False
    assert to_options(options.TelemetryOptions, None, "telemetry") == options.TelemetryOptions()
    assert to_options(options.PolicyConfig, True, "policy") == options.PolicyConfig()
    for off in (None, False):
        assert to_options(options.PolicyConfig, off, "policy") is None
    assert to_options(options.ReportLogOptions, False, "report_log",
                      {"STRAGGLER_REPORT_LOG": "env.jsonl"}) is None
    assert to_options(options.PrometheusOptions, None, "prometheus", {}) is None
    assert to_options(options.HangOptions, "off", "hang_timeout_s", {}) is None
    assert to_options(options.HangOptions, 30, "hang_timeout_s", {}, action="exit") == \
        options.HangOptions(30.0, "exit")


def test_the_environment_fills_what_code_leaves_out_but_never_an_instance():
    env = {"STRAGGLER_REPORT_LOG": "env.jsonl", "STRAGGLER_REPORT_LOG_BACKUPS": "2",
           "STRAGGLER_PROMETHEUS_PORT": "9400", "STRAGGLER_PROMETHEUS_ADDR": "0.0.0.0"}
    log = options.ReportLogOptions
    assert to_options(log, None, "report_log", env) == log("env.jsonl", backups=2)
    assert to_options(log, "code.jsonl", "report_log", env) == log("code.jsonl", backups=2)
    assert to_options(log, {"path": "d.jsonl", "backups": 0}, "report_log", env) == \
        log("d.jsonl", backups=0)
    prom = options.PrometheusOptions
    assert to_options(prom, None, "prometheus", env) == prom(9400, "0.0.0.0")
    assert to_options(prom, {"port": 1}, "prometheus", env) == prom(1, "0.0.0.0")
    explicit = prom(2)
    assert to_options(prom, explicit, "prometheus", env) is explicit


def test_dicts_reach_every_option_of_initialize():
    opts = DetectorOptions(telemetry={"probe_suspects": True, "rules": {"slow_score": 0.8}},
                           policy={"threshold": 0.9}, report_log={"path": "r.jsonl"},
                           prometheus={"port": 0}, ft_options={"warmup_iters": 3},
                           hang_timeout_s={"timeout_s": 9.0, "period_s": 0.5})
    assert opts.telemetry.probe_suspects and opts.telemetry.rules.slow_score == 0.8
    assert opts.policy.config.threshold == 0.9
    assert opts.report_log.path == "r.jsonl" and opts.prometheus.port == 0
    assert opts.ft_options.warmup_iters == 3
    assert (opts.hang.timeout_s, opts.hang.period_s, opts.hang.action) == (9.0, 0.5, "none")
    assert make_policy({"rule": "k_of_n"}).config.rule == "k_of_n"
    assert DetectorOptions(report_options={"individual_window": 4}).report_options == \
        {"individual_window": 4}


def test_no_option_converter_is_left_beside_to_options():
    # One dialect: option objects come from to_options, not from per-type functions.
    banned = {"check_or_create_options", "telemetry_options", "report_log_options",
              "prometheus_options", "hang_options", "ft_options"}
    found = [f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}"
             for path in sorted(PACKAGE.rglob("*.py"))
             for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.FunctionDef) and node.name in banned]
    assert found == []


def test_option_types_are_found_where_the_table_says():
    for name in OPTION_TYPES:
        home = options._HOMES[name]
        assert getattr(options, name).__module__ == home
        assert (PACKAGE.parent / (home.replace(".", "/") + ".py")).exists()
