"""The shared argument checks (straggler/_checks.py) and the one `scores_to_compute` check."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from straggler._checks import (
    check_bool,
    check_choice,
    check_fraction,
    check_int,
    check_name,
    check_names,
    check_number,
    check_roles,
    check_scores_to_compute,
    check_seconds,
)


def test_check_bool_accepts_only_booleans():
    assert check_bool("flag", False) is False
    with pytest.raises(ValueError, match=r"^`flag=1` must be True or False$"):
        check_bool("flag", 1)


@pytest.mark.parametrize("value, low, message", [
    (0, 1, "`n=0` must be a positive integer"),
    (True, 1, "`n=True` must be a positive integer"),
    (2.0, 1, "`n=2.0` must be a positive integer"),
    (-1, 0, "`n=-1` must be a non-negative integer"),
    (2, 3, "`n=2` must be an integer >= 3")])
def test_check_int_names_the_bound(value, low, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        check_int("n", value, low)


def test_check_int_with_a_high_bound_names_the_range():
    assert check_int("port", 0, 0, 65535) == 0 and check_int("port", 65535, 0, 65535) == 65535
    for bad in (-1, 65536, 80.0, "80", True):
        with pytest.raises(ValueError,
                           match=f"^`port={bad!r}` must be an integer between 0 and 65535$"):
            check_int("port", bad, 0, 65535)


def test_check_seconds_and_fraction_take_numpy_numbers_and_refuse_nan_and_bools():
    assert check_seconds("t", np.float32(0.5)) == 0.5
    assert check_seconds("t", 0, allow_zero=True) == 0.0
    assert check_fraction("x", np.float64(1.0)) == 1.0
    assert check_fraction("x", 0, allow_zero=True) == 0.0
    for bad in (0, math.nan, math.inf, True, "1"):
        with pytest.raises(ValueError, match="must be a positive number of seconds"):
            check_seconds("t", bad)
    with pytest.raises(ValueError, match=r"`t=-1` must be a finite number of seconds >= 0"):
        check_seconds("t", -1, allow_zero=True)
    for bad in (0, math.nan, 1.5, False):
        with pytest.raises(ValueError, match=r"must be a number in \(0, 1\]"):
            check_fraction("x", bad)
    with pytest.raises(ValueError, match=r"`x=-0\.1` must be a number between 0 and 1"):
        check_fraction("x", -0.1, allow_zero=True)


@pytest.mark.parametrize("value, kwargs, message", [
    (-0.5, {"low": 0.0}, "`x=-0.5` must be a number >= 0"),
    (0, {"low": 0.0, "low_open": True, "unit": "reports"}, "`x=0` must be a positive number of "
                                                            "reports"),
    (10.5, {"low": 0.0, "high": 10.0}, r"`x=10.5` must be a number in \[0, 10\]"),
    (0.0, {"low": 0.0, "high": 10.0, "low_open": True}, r"`x=0.0` must be a number in \(0, 10\]"),
    (math.inf, {}, "`x=inf` must be a number >= -inf"),
    (True, {}, "`x=True`"), ("1", {}, "`x='1'`"),
])
def test_check_number_refuses_out_of_range_non_finite_and_non_numbers(value, kwargs, message):
    with pytest.raises(ValueError, match=f"^{message}"):
        check_number("x", value, **kwargs)


def test_check_number_returns_a_float_inside_the_bounds():
    assert check_number("x", np.float32(10.0), 0.0, 10.0) == 10.0
    assert check_number("x", 0, 0.0) == 0.0 and isinstance(check_number("x", 3), float)


def test_check_choice_lists_the_choices():
    assert check_choice("mode", "a", ("a", "b")) == "a"
    with pytest.raises(ValueError, match=r"^`mode='c'` must be one of \['a', 'b'\]$"):
        check_choice("mode", "c", ("a", "b"))
    with pytest.raises(ValueError, match=r"^`mode=\[\]` must be one of"):
        check_choice("mode", [], frozenset({"a"}))  # unhashable: refused, not a TypeError


def test_check_name_is_one_rule_for_names_and_optional_names():
    assert check_name("node_name", "n0") == "n0"
    assert check_name("node_name", None, optional=True) is None
    for bad in ("", 3, None):
        with pytest.raises(ValueError, match=f"^`node_name={bad!r}` must be a non-empty string$"):
            check_name("node_name", bad)
    with pytest.raises(ValueError, match=r"^`name=''` must be a non-empty string or None$"):
        check_name("name", "", optional=True)


def test_check_name_with_printable_refuses_control_characters_naming_the_value():
    assert check_name("node_name", "node-7.cluster (a100)", printable=True) == \
        "node-7.cluster (a100)"
    for bad in ("n0\nfake line", "n0\r", "tab\there", "nul\x00", "sep\u2028"):
        with pytest.raises(ValueError) as info:
            check_name("node_name", bad, printable=True)
        assert str(info.value).startswith(f"`node_name={bad!r}` holds "), info.value
    assert check_name("host", " h0\n", strip=True, printable=True) == "h0"  # stripped first


def test_the_report_generator_refuses_a_node_name_with_a_line_break():
    from straggler.reporting.generator import ReportGenerator

    with pytest.raises(ValueError, match=r"node_name='a\\nb'"):
        ReportGenerator(node_name="a\nb")


def test_check_name_with_strip_refuses_blank_names_and_returns_the_stripped_name():
    assert check_name("host", " h0\n", strip=True) == "h0"
    assert check_name("host", None, optional=True, strip=True) is None
    for bad in ("", " \t", 3):
        with pytest.raises(ValueError,
                           match=f"^{re.escape(f'`host={bad!r}`')} must be a non-blank string$"):
            check_name("host", bad, strip=True)
    with pytest.raises(ValueError, match=r"^`host=' '` must be a non-blank string or None$"):
        check_name("host", " ", optional=True, strip=True)
    assert check_name("host", " h0 ") == " h0 "  # without strip the name is kept as given


def test_check_names_takes_any_iterable_of_names_but_not_a_string():
    assert check_names("fields", ["a", "b"]) == ("a", "b")
    assert check_names("fields", iter(("a", "a"))) == ("a", "a")
    for bad in ("ab", ["a", ""], [1], 5):
        with pytest.raises(ValueError, match="must be a sequence of non-empty strings"):
            check_names("fields", bad)
    with pytest.raises(ValueError, match=r"^`fields=\['a', 'a'\]` must be a sequence of distinct"):
        check_names("fields", ["a", "a"], distinct=True)


def test_scores_to_compute_keeps_the_order_without_repeats():
    assert check_scores_to_compute("all") == ["relative_perf_scores", "individual_perf_scores"]
    assert check_scores_to_compute(("individual_perf_scores", "relative_perf_scores",
                                    "individual_perf_scores")) == [
        "individual_perf_scores", "relative_perf_scores"]
    # A single name: accepted by ReportGenerator, refused by Detector.initialize (NVRx: a list).
    assert check_scores_to_compute("relative_perf_scores") == ["relative_perf_scores"]
    with pytest.raises(ValueError, match="`scores_to_compute='relative_perf_scores'` must be"):
        check_scores_to_compute("relative_perf_scores", allow_name=False)


def test_integration_thresholds_accept_numpy_numbers():
    from straggler.integrations.megatron import StragglerDetectionConfig

    config = StragglerDetectionConfig(gpu_relative_perf_threshold=np.float32(0.5))
    assert config.gpu_relative_perf_threshold == 0.5


def test_check_roles_names_the_ranks_outside_the_group():
    check_roles(None, [0, 1])
    check_roles({1: "a", 2: "b"}, [1, 2])
    with pytest.raises(ValueError, match=r"^`roles` names 4, not global rank\(s\) of the "
                       r"detector's process group \(ranks 0-3\)$"):
        check_roles({0: "a", 4: "b"}, range(4))
    with pytest.raises(ValueError, match=r"`roles` names '1', True, .*\(ranks 1, 5\)"):
        check_roles({"1": "a", True: "b", 5: "c"}, [1, 5])
    with pytest.raises(ValueError, match=r"names 100, 101, .* and 2 more, .*\(rank 0\)"):
        check_roles({r: 0 for r in range(100, 110)}, [0])
