"""`hang_timeout_s`/`hang_action` checks, the environment override, the learned timeout."""

from __future__ import annotations

import math

import pytest
from straggler.hang import HangOptions, HangTimeout
from straggler.hang.options import AUTO_INITIAL_S, AUTO_MIN_S, LEARN_AFTER_STEPS
from straggler.options import to_options


def hang_options(timeout: object, action: str = "none", environ: dict | None = None):
    """What ``initialize(hang_timeout_s=timeout, hang_action=action)`` makes of them."""
    return to_options(HangOptions, timeout, "hang_timeout_s", environ, action=action)


def test_auto_is_the_default_and_off_values_turn_it_off() -> None:
    assert hang_options("auto", environ={}) == HangOptions(None, "none")
    for off in (None, False, 0, "off"):
        assert hang_options(off, environ={}) is None
    assert hang_options(30, "exit", environ={}) == HangOptions(30.0, "exit")


@pytest.mark.parametrize(("value", "match"), [
    (-1, r"`hang_timeout_s=-1`"), ("soon", r"`hang_timeout_s='soon'`"),
    (True, r"`hang_timeout_s=True`"), (math.nan, r"`hang_timeout_s=nan`")])
def test_bad_timeout_is_named(value: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        hang_options(value, environ={})


def test_bad_action_is_named() -> None:
    with pytest.raises(ValueError, match="`hang_action='kill'`"):
        hang_options("auto", "kill", environ={})


def test_environment_overrides_auto_only() -> None:
    env = {"STRAGGLER_HANG_TIMEOUT": "42"}
    assert hang_options("auto", environ=env) == HangOptions(42.0)
    assert hang_options(7, environ=env) == HangOptions(7.0)
    assert hang_options("auto", environ={"STRAGGLER_HANG_TIMEOUT": "off"}) is None
    with pytest.raises(ValueError, match="STRAGGLER_HANG_TIMEOUT='x'"):
        hang_options("auto", environ={"STRAGGLER_HANG_TIMEOUT": "x"})


def test_auto_timeout_waits_for_steps_then_follows_them() -> None:
    t = HangTimeout(None)
    assert t.value_s == AUTO_INITIAL_S
    t.observe_step(900.0)  # the first step (compilation) is not a step time
    for _ in range(LEARN_AFTER_STEPS):
        t.observe_step(2.0)
    assert t.learned and t.value_s == AUTO_MIN_S
    t.observe_step(30.0)
    assert t.value_s == 300.0


def test_timeout_stays_under_half_the_jobs_own() -> None:
    t = HangTimeout(1000.0)
    t.cap_s = 600.0
    assert t.value_s == 300.0


def test_publish_interval_stretches_with_the_world() -> None:
    o = HangOptions()
    assert o.publish_interval_s(8) == 1.0
    assert o.publish_interval_s(16384) == pytest.approx(16384 / 2000)


def test_the_jobs_timeout_is_the_shortest_of_the_group_and_ft() -> None:
    from straggler.hang import job_timeout_s

    class _Bridge:
        enabled = True

        def current_timeouts(self) -> dict[str, float | None]:
            return {"step": 40.0, "checkpointing": None, "out_of_section": 90.0}

    assert job_timeout_s(_Bridge(), 600.0) == 40.0
    assert job_timeout_s(None, 600.0) == 600.0
