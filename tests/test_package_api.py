"""Each sub-package states its API with explicit imports and ``__all__`` (issue #24 item 1).

No import hooks and no string forwarders: what ``__all__`` lists is bound in the package when
it is imported, is the object its module defines, and is what type checkers see.
"""

from __future__ import annotations

import importlib
import sys

import pytest

from _fresh import fresh_python

SUB_PACKAGES = ["straggler.analysis", "straggler.timing", "straggler.reporting",
                "straggler.telemetry", "straggler.dist", "straggler.sinks"]


@pytest.mark.parametrize("name", SUB_PACKAGES)
def test_every_name_in_all_is_bound_by_an_explicit_import(name):
    package = importlib.import_module(name)
    assert package.__all__, f"{name} has an empty __all__"
    assert len(set(package.__all__)) == len(package.__all__)
    # One lazy name only: NVRx's path straggler.reporting.ReportGenerator (it imports torch).
    lazy = {"straggler.reporting": {"ReportGenerator"}}.get(name, set())
    assert lazy or not hasattr(package, "__getattr__"), f"{name} resolves names lazily"
    for attr in sorted(set(package.__all__) - lazy):
        value = vars(package)[attr]  # bound by the import, not computed on access
        module = getattr(value, "__module__", None)
        if module is not None and isinstance(value, type | type(len) | type(lambda: 0)):
            assert module.startswith(name + "."), f"{name}.{attr} comes from {module}"


@pytest.mark.parametrize("old", ["straggler.report", "straggler.policy", "straggler.sections",
                                 "straggler.comm", "straggler.reportlog"])
def test_module_paths_that_were_never_released_are_gone(old):
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)


def test_no_import_hook_of_ours_is_installed():
    import straggler  # noqa: F401

    assert [f for f in sys.meta_path if type(f).__module__.startswith("straggler")] == []


def test_the_telemetry_options_an_error_names_exist_where_it_says():
    from straggler.options import to_options
    from straggler.telemetry import TelemetryOptions

    with pytest.raises(TypeError, match=r"straggler\.options\.TelemetryOptions") as info:
        to_options(TelemetryOptions, "yes", "telemetry")
    path = str(info.value).rsplit(" ", 1)[-1]
    module, _, attr = path.rpartition(".")
    assert getattr(importlib.import_module(module), attr).__name__ == "TelemetryOptions"


def test_importing_a_sub_package_api_in_a_fresh_interpreter():
    code = ("from straggler.telemetry import TelemetryOptions, NvmlTelemetry; "
            "from straggler.reporting import Report; from straggler.analysis import "
            "PolicyConfig; import sys; print(TelemetryOptions.__module__, Report.__module__, "
            "'torch' in sys.modules)")
    # The API of these packages needs no torch: importing them stays cheap.
    assert fresh_python(code, "-W", "error").split() == [
        "straggler.telemetry.options", "straggler.reporting.report", "False"]


def test_importing_straggler_loads_no_module_only_one_feature_needs():
    # statistics (0.3 MiB with decimal and fractions): the cause rules' peer median, imported
    # there; the exporter's HTTP server and prometheus_client: only with an exporter.
    code = ("import sys; from straggler import Detector; print(sorted(m for m in ("
            "'statistics', 'decimal', 'http.server', 'socketserver', 'prometheus_client') "
            "if m in sys.modules))")
    assert fresh_python(code) == "[]"
