"""The main API of this py.typed package says its types: no `Any` where a user or a type
checker reads them (issue #24 item 2). `make lint` (mypy) checks that the types are right."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from straggler import Detector
from straggler.detector import DetectorCore
from straggler.detector_options import DetectorOptions
from straggler.report_cycle import ReportCycle

PUBLIC = [Detector.initialize, Detector.generate_report,
          Detector.generate_report_if_interval_elapsed, Detector.detection_section,
          Detector.core, Detector.run_probe, Detector.ft_bridge,
          Detector.last_decision, Detector.set_decision_rule, Detector.is_interval_elapsed,
          Detector.wrap_callables, Detector.shutdown, DetectorCore.generate_report,
          DetectorCore.generate_report_if_interval_elapsed, DetectorCore.run_probe,
          DetectorCore.engine.fget, DetectorCore.capture.fget, DetectorOptions.__init__,
          ReportCycle.generate_report, ReportCycle.generate_report_if_interval_elapsed]


def _annotations(fn):
    sig = inspect.signature(fn)  # strings: the package uses `from __future__ import annotations`
    yield "return", sig.return_annotation
    for name, p in sig.parameters.items():
        if p.annotation is not inspect.Parameter.empty and p.kind is not p.VAR_KEYWORD:
            yield name, p.annotation


@pytest.mark.parametrize("fn", PUBLIC, ids=lambda fn: fn.__qualname__)
def test_the_public_api_says_its_types(fn):
    annotations = dict(_annotations(fn))
    assert annotations["return"] is not inspect.Signature.empty, "no return type"
    assert {k: v for k, v in annotations.items() if "Any" in str(v)} == {}


def test_detector_options_fields_and_the_report_cycle_parts_are_typed():
    fields = {f.name: f.type for f in dataclasses.fields(DetectorOptions)}
    assert {k: v for k, v in fields.items() if "Any" in str(v)} == {}
    cycle = dict(_annotations(ReportCycle.__init__))
    assert cycle["comm"] == "Comm"
    assert cycle["telemetry"] == "TelemetryProvider | None"
    assert cycle["observers"] == "ReportObservers | None"


def test_the_generated_report_type_is_the_report_class():
    import typing

    from straggler.reporting.report import Report

    hints = typing.get_type_hints(Detector.generate_report, {"Report": Report})
    assert hints["return"] == Report | None
