"""StragglerDetectionManager: wrapping, log lines, fail-open, and multi-rank loops on gloo.

Timing: GPU timers run on the simulated driver (tests/conftest.py). GPU scores come from busy
time, so a step that only sleeps gives no GPU score and the adapters judge the host time of its
section instead; steps wrapping ``gpu_sleep`` (simulated kernel time reported as an op) give
GPU scores. The slowed rank's step takes 3x longer (score about 0.33, threshold 0.7): a margin
no CPU contention on the shared cores can close.
"""

from __future__ import annotations

import enum
import http.client
import json
import logging
import math
import re
import time
from types import SimpleNamespace

import pytest
from straggler import Detector
from straggler.integrations import _common
from straggler.integrations.controller import MIN_REPORT_INTERVAL_S
from straggler.integrations.megatron import (
    StragglerDetectionConfig,
    StragglerDetectionManager,
    TrainStep,
    megatron_lines,
)

from _clock import FakeClock
from _multirank import run_ranks
from sim.simcuda import gpu_sleep

LOGGER = "test.straggler.megatron"


pytestmark = pytest.mark.usefixtures("clean_detector")

TOKEN = "megatron-test-controller-token"


@pytest.fixture(autouse=True)
def _controller_token(monkeypatch):
    """The controller's token, given (spawned ranks inherit it): no token file is written."""
    monkeypatch.setenv("STRAGGLER_CONTROLLER_TOKEN", TOKEN)


def _config(**kwargs) -> StragglerDetectionConfig:
    base = dict(enabled=True, report_time_interval=0.2, logger_name=LOGGER,
                straggler_ctrlr_port=0, num_gpu_perf_scores_to_print=2,
                straggler_minmax_count=2)
    base.update(kwargs)
    return StragglerDetectionConfig(**base)


# -- formatting (no Detector) -------------------------------------------------------------------


class Label(enum.Enum):
    THERMAL = "thermal"


def _fake_report(scores: dict[int, float], causes=None) -> SimpleNamespace:
    report = SimpleNamespace(gpu_relative_perf_scores=scores,
                             gpu_individual_perf_scores={r: 1.0 for r in scores},
                             rank_to_node={r: f"node{r // 2}" for r in scores})
    if causes is not None:
        report.causes = causes
    return report


def test_megatron_lines_have_min_max_with_ranks_and_causes():
    report = _fake_report({0: 1.0, 1: 0.98, 2: 0.41, 3: 0.99},
                          causes={2: SimpleNamespace(label=Label.THERMAL), 1: "power cap"})
    lines = megatron_lines(report, 120, minmax_count=2)
    assert " | iteration      120 | MnRelPerf/Rnk: 0.41/2 (thermal) | MxRelPerf/Rnk: 1.00/0 | " \
           "MnIndPerf/Rnk: 1.00/0 | MxIndPerf/Rnk: 1.00/0" in lines[0]
    assert lines[1] == "^^^^ Bottom 2 Ranks with lowest  RelPerf: 0.41/2 [thermal], " \
                       "0.98/1 [power cap],"
    assert lines[2] == "^^^^ Top    2 Ranks with highest RelPerf: 1.00/0, 0.99/3,"
    assert len(megatron_lines(report, 1, minmax_count=1)) == 1  # Megatron: no lists for 1


def test_megatron_lines_without_causes_field_and_with_nan():
    report = _fake_report({0: float("nan"), 1: 0.5})
    line = megatron_lines(report, 7, minmax_count=1)[0]
    assert "MnRelPerf/Rnk: 0.50/1 | MxRelPerf/Rnk: 0.50/1" in line and "(" not in line
    all_nan = _fake_report({0: float("nan")})
    assert "MnRelPerf/Rnk: nan" in megatron_lines(all_nan, 7, 1)[0]


def test_score_block_lists_worst_then_best_with_nodes_and_causes():
    scores = {r: 1.0 - 0.1 * r for r in range(6)}
    report = _fake_report(scores, causes={5: "thermal"})
    block = _common.format_score_block(report, scores, 2, 2)
    assert block == (" Worst performing 2/6 ranks:\n"
                     "  Rank=5 Node=node2 Score=0.50 Cause=thermal\n"
                     "  Rank=4 Node=node2 Score=0.60\n"
                     " Best performing 2/6 ranks:\n"
                     "  Rank=0 Node=node0 Score=1.00\n"
                     "  Rank=1 Node=node0 Score=0.90\n")
    small = _common.format_score_block(report, {0: 1.0, 1: float("nan"), 2: 0.5}, 2, 2)
    assert small.splitlines() == ["  Rank=2 Node=node1 Score=0.50",
                                  "  Rank=0 Node=node0 Score=1.00",
                                  "  Rank=1 Node=node0 Score=nan"]


def test_cause_label_reads_strings_labels_and_enums_and_tolerates_absence():
    report = _fake_report({0: 1.0}, causes={0: SimpleNamespace(label="clocks"), 1: Label.THERMAL,
                                            2: "power", 3: None})
    assert [_common.cause_label(report, r) for r in range(5)] == ["clocks", "thermal", "power",
                                                                  None, None]
    assert _common.cause_label(SimpleNamespace(), 0) is None
    assert _common.score_stats({0: 0.5, 1: 1.0, 2: 0.75, 3: 0.9}) == {"min": 0.5, "median": 0.75,
                                                                      "max": 1.0}


def test_decision_line_names_the_ranks_acted_on_with_node_cause_and_suspects():
    from straggler.reporting.decision import Decision, Verdict

    report = _fake_report({0: 1.0, 1: 1.0, 2: 0.9}, causes={1: "late_outside_compute"})
    acted = Decision(frozenset({1}), frozenset({2}), Verdict.CONFIRMED)
    assert _common.decision_line(report, acted) == (
        "straggler detection: verdict (confirmed): stragglers: rank 1 (node node0): "
        "late_outside_compute; suspects (not confirmed yet): rank 2 (node node1)")
    none = Decision(frozenset(), frozenset(), Verdict.SINGLE_REPORT)
    assert _common.decision_line(report, none) == (
        "straggler detection: verdict (single_report): stragglers: none")


def test_a_verdict_naming_a_rank_no_threshold_flags_logs_its_cause_and_line(caplog):
    # A rank confirmed from the collectives' waits (a slow data loader) keeps step scores near
    # 1: no NVRx warning names it, so the causes and the verdict line must.
    from straggler.analysis.causes import Cause, Diagnosis
    from straggler.reporting.decision import Decision, Verdict

    report = _fake_report({0: 1.0, 1: 0.97}, causes={1: Diagnosis(
        1, Cause.LATE_OUTSIDE_COMPUTE, "its peers lost 0.5 s waiting for it")})
    acted = Decision(frozenset({1}), frozenset(), Verdict.CONFIRMED)
    logger = logging.getLogger(LOGGER)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        ev = _common.evaluate_report(report, 0.7, 0.7, None, logger, 0, acted)
    assert not ev.found
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert any(m.startswith("straggler detection: causes:\n") for m in warned), warned
    assert "its peers lost 0.5 s waiting for it" in warned[0], warned
    assert warned[-1] == ("straggler detection: verdict (confirmed): stragglers: rank 1 "
                          "(node node0): late_outside_compute")


# -- one process ------------------------------------------------------------------------------


def test_disabled_config_leaves_the_step_alone():
    m = StragglerDetectionManager()
    m.initialize(StragglerDetectionConfig())

    def fn(x):
        return x + 1

    assert m.wrap_train_step(fn) is fn
    assert m.check_stragglers(1) is False and not m.active and not Detector.initialized
    m.shutdown()


def test_wrapping_before_initialize_warns_and_leaves_the_step_alone(caplog):
    def fn():
        return 1

    m = StragglerDetectionManager(_config(enable_controller=False))
    with caplog.at_level(logging.WARNING):
        assert m.wrap_train_step(fn) is fn
    assert "called before initialize()" in caplog.text


def test_initialize_checks_its_input_and_runs_once():
    with pytest.raises(ValueError, match="`process_group='world'` must be"):
        StragglerDetectionManager(process_group="world")
    with pytest.raises(ValueError, match="`clock=5` must be a callable"):
        StragglerDetectionManager(clock=5)
    with pytest.raises(ValueError, match="`config=None`"):
        StragglerDetectionManager().initialize()
    with pytest.raises(TypeError, match=r"`config=3` must be .*StragglerDetectionConfig"):
        StragglerDetectionManager().initialize(3)
    with pytest.raises(ValueError, match=r"unknown keys \['enable'\]"):
        StragglerDetectionManager().initialize({"enable": True})
    m = StragglerDetectionManager(_config(enable_controller=False))
    m.initialize()
    with pytest.raises(RuntimeError, match="already called"):
        m.initialize()
    with pytest.raises(ValueError, match="must be callable"):
        m.wrap_train_step(3)
    m.shutdown()
    m.shutdown()  # idempotent
    assert not Detector.initialized


def test_straggler_disable_env_makes_it_a_quiet_no_op(monkeypatch, caplog):
    monkeypatch.setenv("STRAGGLER_DISABLE", "1")
    m = StragglerDetectionManager()
    m.initialize(_config(enable_controller=False))

    def fn():
        return 5

    assert m.wrap_train_step(fn) is fn and m.check_stragglers(0) is False
    assert "unwrapped" not in caplog.text
    m.shutdown()


def _loop(manager, step, iterations, slow=False, step_s=0.005, clock=None):
    """Run `iterations` steps of `step_s` (3x with `slow`); with a fake `clock`, the manager's
    schedule sees that time pass whatever the step really takes."""
    stops = []
    for it in range(iterations):
        step(step_s * (3 if slow else 1))
        if clock is not None:
            clock.advance(step_s * (3 if slow else 1))
        if manager.check_stragglers(it):
            stops.append(it)
    return stops


def _untimed_work(seconds: float) -> None:
    """A train step whose duration only the fake clock sees (the schedule's time)."""


def test_single_rank_loop_reports_with_megatron_and_nvrx_lines(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    clock = FakeClock()  # the schedule's time; the steps' simulated GPU work is timed for real
    m = StragglerDetectionManager(clock=clock)
    m.initialize(_config(enable_controller=False))
    step = m.wrap_train_step(gpu_sleep)
    assert isinstance(step, TrainStep) and step.is_wrapped
    assert _loop(m, step, 60, clock=clock) == []
    m.shutdown()
    assert m.last_report is not None
    text = caplog.text
    assert "MnRelPerf/Rnk: 1.00/0 | MxRelPerf/Rnk: 1.00/0" in text
    assert "GPU relative performance:" in text and "gpu_relative_perf scores: {" in text
    assert "no train step was timed" not in text
    assert not step.is_wrapped  # shutdown put the original back


def test_the_controller_shows_the_agreed_decision_next_to_the_threshold_flags():
    clock = FakeClock()
    m = StragglerDetectionManager(clock=clock)
    m.initialize(_config(verdict="confirmed"))
    step = m.wrap_train_step(gpu_sleep)
    _loop(m, step, 60, clock=clock)
    status = _http(m.controller.address[1], "GET", "/")
    m.shutdown()
    d = m.last_decision
    assert d is not None
    assert status["last_report"]["decision"] == {"verdict": "confirmed",
                                                 "stragglers": sorted(d.stragglers),
                                                 "suspects": sorted(d.suspects)}


def test_calling_the_original_step_warns_that_nothing_was_captured(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    clock = FakeClock()
    m = StragglerDetectionManager(clock=clock)
    m.initialize(_config(enable_controller=False))
    m.wrap_train_step(_untimed_work)  # the Megatron-Bridge bug: the wrapper is dropped ...
    for it in range(40):  # 0.4 s on the clock: the report (0.2 s) is due at iteration 20
        _untimed_work(0.01)  # ... and the original is called
        clock.advance(0.01)
        m.check_stragglers(it)
    m.shutdown()
    assert "no train step was timed since the last report" in caplog.text
    assert "every score is NaN" in caplog.text


def test_internal_failure_switches_detection_off_and_training_goes_on(monkeypatch, caplog):
    clock = FakeClock()
    m = StragglerDetectionManager(clock=clock)
    m.initialize(_config(enable_controller=False, report_time_interval=0.05))
    step = m.wrap_train_step(lambda s: clock.advance(0.005) or s * 2)

    def broken():
        raise RuntimeError("boom")

    monkeypatch.setattr(Detector, "generate_report", broken)
    with caplog.at_level(logging.ERROR, logger="straggler"):
        results = [(step(it), m.check_stragglers(it)) for it in range(40)]
    assert all(stop is False for _, stop in results)
    assert [v for v, _ in results] == [2 * it for it in range(40)]
    assert not m.active and not m.timing
    assert caplog.text.count("straggler detection is now off") == 1
    m.shutdown()


def _post(port: int, path: str, payload=None) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Content-Type": "application/json"} if payload is not None else {}
    headers["Authorization"] = f"Bearer {TOKEN}"
    conn.request("POST", path, body=json.dumps(payload) if payload is not None else None,
                 headers=headers)
    resp = conn.getresponse()
    data = json.loads(resp.read())
    conn.close()
    assert resp.status == 200, data
    return data


def test_interval_change_through_the_controller_sets_the_report_cadence():
    # The ranks meet every control_poll_s to hear the controller, however long the interval.
    clock = FakeClock()
    m = StragglerDetectionManager(control_poll_s=0.1, clock=clock)
    m.initialize(_config(report_time_interval=3600.0))  # no report within this test ...
    step = m.wrap_train_step(_untimed_work)
    _loop(m, step, 40, clock=clock)
    assert m.last_report is None
    # ... until now: the shortest interval the controller accepts (MIN_REPORT_INTERVAL_S)
    _post(m.controller.address[1], "/", {"report_time_interval": MIN_REPORT_INTERVAL_S})
    for it in range(40, 1000):  # 5 s of 5 ms steps; the report comes after about 1 s
        step(0.005)
        clock.advance(0.005)
        m.check_stragglers(it)
        if m.last_report is not None:
            break
    assert m.state.report_time_interval == MIN_REPORT_INTERVAL_S
    assert m.last_report is not None
    m.shutdown()
    with pytest.raises(ValueError, match="`control_poll_s=0`"):
        StragglerDetectionManager(control_poll_s=0)


def test_disabled_on_startup_times_nothing_until_switched_on():
    clock = FakeClock()
    m = StragglerDetectionManager(clock=clock)
    m.initialize(_config(report_time_interval=0.05, disable_straggler_on_startup=True))
    step = m.wrap_train_step(_untimed_work)
    assert not m.timing and m.controller.status()["state"]["enabled"] is False
    _loop(m, step, 40, clock=clock)
    assert m.last_report is None and step.calls_timed == 0
    assert _post(m.controller.address[1], "/toggle")["pending"]["enabled"] is True
    _loop(m, step, 80, clock=clock)
    assert m.timing and m.state.enabled
    assert m.last_report is not None  # reports start once it is on
    m.shutdown()


# -- several ranks on gloo -------------------------------------------------------------------


def _manager_run(rank: int, slow_rank: int, stop: bool, verdict: str = "single_report",
                 steps: int = 50) -> dict:
    logger = logging.getLogger(LOGGER)
    logger.setLevel(logging.INFO)
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record):
            lines.append(record.getMessage())

    handler = Keep()
    logger.addHandler(handler)
    m = StragglerDetectionManager()
    m.initialize(_config(stop_if_detected=stop, report_time_interval=0.25,
                         node_name=f"node{rank}", verdict=verdict))
    step = m.wrap_train_step(time.sleep)
    stops = _loop(m, step, steps, slow=(rank == slow_rank), step_s=0.02)
    flagged = {k: sorted(s.rank for s in v) for k, v in m.last_stragglers.items()}
    reported = m.last_report is not None
    has_controller = m.controller is not None
    m.shutdown()
    logger.removeHandler(handler)
    decision = m.last_decision
    return {"stops": stops, "flagged": flagged, "reported": reported, "lines": lines,
            "controller": has_controller,
            "stragglers": sorted(decision.stragglers) if decision is not None else None}


def _manager_worker(rank: int, world_size: int) -> dict:
    """Two loops in the same ranks (spawning is the slow part): rank 2 slow without
    stop_if_detected, then rank 1 slow with it."""
    return {"watch": _manager_run(rank, 2, False), "stop": _manager_run(rank, 1, True),
            "confirmed": _manager_run(rank, 1, True, verdict="confirmed", steps=90)}


@pytest.mark.multirank
@pytest.mark.serial  # alone in `make test`: scores and timings of a live run
def test_slow_rank_is_flagged_logged_and_the_stop_decision_is_identical_on_every_rank():
    results = run_ranks(_manager_worker, 3, timeout_s=150)
    watch = [r["watch"] for r in results]
    r0 = watch[0]
    assert r0["reported"] and not any(r["reported"] for r in watch[1:])
    assert r0["controller"] and not any(r["controller"] for r in watch[1:])
    text = "\n".join(r0["lines"])
    assert r0["flagged"]["straggler_gpus_relative"] == [2], text
    assert "STRAGGLER DETECTION WARNING: Some GPUs have worse relative performance. " \
           "Affected ranks: {StragglerId(rank=2, node='node2')}" in text
    assert re.search(r"MnRelPerf/Rnk: 0\.\d\d/2( \([a-z_]+\))? \| MxRelPerf/Rnk: 1\.00/[01]",
                     text), text
    assert "^^^^ Bottom 2 Ranks with lowest  RelPerf:" in text
    assert "Rank=2 Node=node2 Score=0." in text
    assert all(r["stops"] == [] for r in watch)  # stop_if_detected is off

    stop = [r["stop"] for r in results]
    assert stop[0]["flagged"]["straggler_gpus_relative"] == [1], stop[0]["lines"]
    stops = [r["stops"] for r in stop]
    assert stops[0] and stops[0] == stops[1] == stops[2]
    assert any("Detected stragglers [1]. Training should be stopped." in line
               for line in stop[2]["lines"])
    # The reporting rank names the ranks it acts on, whatever the thresholds' warnings say.
    assert any(line.startswith("straggler detection: verdict (single_report): stragglers: "
                               "rank 1 (node node1)") for line in stop[0]["lines"])

    # By default the manager acts on the policy's confirmed verdict, agreed in the report:
    # the same stops and the same stragglers on every rank, without a broadcast of its own.
    confirmed = [r["confirmed"] for r in results]
    stops = [r["stops"] for r in confirmed]
    assert stops[0] and stops[0] == stops[1] == stops[2], confirmed[0]["lines"]
    assert all(r["stragglers"] == [1] for r in confirmed)
    assert any(line.startswith("straggler detection: verdict (confirmed): stragglers: rank 1 "
                               "(node node1)") for line in confirmed[0]["lines"])


def _http(port: int, method: str, path: str, payload=None) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    body = json.dumps(payload) if payload is not None else None
    headers = {"Content-Type": "application/json"} if payload is not None else {}
    headers["Authorization"] = f"Bearer {TOKEN}"
    conn.request(method, path, body=body, headers=headers)
    resp = conn.getresponse()
    data = json.loads(resp.read())
    conn.close()
    assert resp.status == 200, data
    return data


def _controlled_worker(rank: int, world_size: int) -> dict:
    """Rank 1 is 2x slower (score ~0.5): not flagged at 0.2, flagged once 0.9 is posted; then
    detection is toggled off and on again. Both ranks stop after the second switch."""
    m = StragglerDetectionManager()
    m.initialize(_config(report_time_interval=0.25, gpu_relative_perf_threshold=0.2,
                         calc_individual_gpu_perf=False))
    step = m.wrap_train_step(time.sleep)
    port = m.controller.address[1] if m.controller else None
    events: list[tuple] = []
    phase, reports_seen, last, switches, enabled, status_off = "low", 0, None, 0, True, None
    for it in range(300):
        step(0.02 * (2.0 if rank == 1 else 1.0))
        m.check_stragglers(it)
        state = m.state
        if state.enabled != enabled:  # applied on the same iteration on every rank
            switches, enabled = switches + 1, state.enabled
        events.append(("state", it, state.enabled, state.gpu_relative_perf_threshold, m.timing))
        if rank == 0 and m.last_report is not last:
            last = m.last_report
            reports_seen += 1
            flagged = sorted(s.rank for s in m.last_stragglers["straggler_gpus_relative"])
            events.append((phase, state.gpu_relative_perf_threshold, flagged))
        # The reporting rank drives the controller over loopback.
        if rank == 0 and phase == "low" and reports_seen >= 1:
            _http(port, "POST", "/", {"gpu_relative_perf_threshold": 0.9})
            phase = "high"
        elif rank == 0 and phase == "high" and any(e[0] == "high" and e[2] for e in events):
            assert _http(port, "POST", "/toggle")["pending"]["enabled"] is False
            phase = "off"
        elif rank == 0 and phase == "off" and switches == 1:
            status_off = _http(port, "GET", "/")
            assert _http(port, "POST", "/toggle")["pending"]["enabled"] is True
            phase = "on again"
        if switches == 2:
            break
    m.shutdown()
    return {"events": events, "status_off": status_off}


@pytest.mark.multirank
@pytest.mark.serial  # alone in `make test`: scores and timings of a live run
def test_controller_changes_reach_every_rank_at_the_next_report():
    r0, r1 = run_ranks(_controlled_worker, 2, timeout_s=150)
    reports = [e for e in r0["events"] if e[0] != "state"]
    low = [e for e in reports if e[0] == "low"]
    assert low and all(e[1] == 0.2 and e[2] == [] for e in low), reports  # 0.5 > 0.2
    high = [e for e in reports if e[0] == "high" and e[1] == 0.9]
    assert high and high[-1][2] == [1], reports  # the new threshold flags rank 1
    # Both ranks applied each change on the same iteration: identical state histories.
    states0 = [e[1:] for e in r0["events"] if e[0] == "state"]
    states1 = [e[1:] for e in r1["events"] if e[0] == "state"]
    assert states0 == states1
    enabled = [e[1] for e in states0]
    assert True in enabled and False in enabled and enabled[-1] is True
    off = enabled.index(False)
    assert all(not e[3] for e in states0 if not e[1])  # switched off: steps are not timed
    status = r0["status_off"]
    assert status["state"]["enabled"] is False and off > 0
    assert status["state"]["gpu_relative_perf_threshold"] == 0.9
    assert status["last_report"]["stragglers_relative"] == [1]


def _host_only_worker(rank: int, world_size: int) -> dict:
    m = StragglerDetectionManager()
    m.initialize(_config(report_time_interval=0.2, enable_controller=False))
    step = m.wrap_train_step(time.sleep)
    _loop(m, step, 50, slow=(rank == 1), step_s=0.02)
    out = {"flagged": {k: sorted(s.rank for s in v) for k, v in m.last_stragglers.items()},
           "gpu": dict(m.last_report.gpu_relative_perf_scores) if m.last_report else None,
           "host": dict(m.last_report.section_relative_perf_scores) if m.last_report else None}
    m.shutdown()
    return out


@pytest.mark.multirank
@pytest.mark.serial  # alone in `make test`: scores and timings of a live run
def test_without_gpu_timers_the_host_time_of_the_step_is_judged():
    # No driver at all: the engine times nothing on a GPU, so every GPU score is NaN and the
    # wrapped step's host time decides (the step here has no communication inside).
    r0, _ = run_ranks(_host_only_worker, 2, env={"STRAGGLER_LIBCUDA": "/nonexistent/libcuda.so.1"},
                      timeout_s=120)
    assert all(math.isnan(v) for v in r0["gpu"].values()), r0
    assert r0["flagged"]["straggler_gpus_relative"] == [1], r0


def test_cause_label_reads_the_diagnosis_of_straggler_causes():
    causes = pytest.importorskip("straggler.analysis.causes")
    diagnosis = causes.Diagnosis(rank=1, cause=causes.Cause.GPU_THERMAL_THROTTLING,
                                 evidence="clocks cut 40% for temperature")
    report = _fake_report({0: 1.0, 1: 0.4}, causes={1: diagnosis})
    assert _common.cause_label(report, 1) == "gpu_thermal_throttling"
    assert "MnRelPerf/Rnk: 0.40/1 (gpu_thermal_throttling)" in megatron_lines(report, 5, 1)[0]


def test_state_dict_carries_the_individual_baseline_across_a_restart():
    def run(state=None):
        m = StragglerDetectionManager()
        m.initialize(_config(enable_controller=False, report_time_interval=0.05))
        if state is not None:
            m.load_state_dict(state)
        step = m.wrap_train_step(gpu_sleep)
        # A resumed job 3x slower than before its restart: only the carried baseline shows it.
        _loop(m, step, 40, slow=state is not None, step_s=0.005)
        out = m.state_dict(), dict(m.last_report.gpu_individual_perf_scores)
        m.shutdown()
        return out

    state, scores = run()
    assert set(state) == {"detector"} and scores[0] > 0.7
    _, resumed = run(state)
    assert resumed[0] < 0.7  # about 0.33, judged against the baseline from before the restart
    with pytest.raises(ValueError, match="not a StragglerDetectionManager state"):
        m = StragglerDetectionManager()
        m.initialize(_config(enable_controller=False))
        try:
            m.load_state_dict({"other": 1})
        finally:
            m.shutdown()
    assert StragglerDetectionManager().state_dict() == {}


def test_after_a_stop_the_state_leaves_the_verdict_out_and_keeps_the_baselines():
    # The state saved at a stop restarts the job: restored with the policy's verdict, the
    # resumed job stopped again at its first report (a restart loop until the verdict cleared).
    m = StragglerDetectionManager()
    m.initialize(_config(enable_controller=False, report_time_interval=0.05))
    step = m.wrap_train_step(gpu_sleep)
    _loop(m, step, 30, step_s=0.005)
    kept = m.state_dict()["detector"]["reporter"]
    assert kept["policy"] is not None  # no stop yet: the whole state
    m.shutdown()
    m = StragglerDetectionManager()
    m.initialize(_config(enable_controller=False, report_time_interval=0.05,
                         stop_if_detected=True, verdict="single_report"))
    m.load_state_dict({"detector": {"version": 1, "reporter": kept,
                                    "interval": m.state_dict()["detector"]["interval"]}})
    step = m.wrap_train_step(gpu_sleep)
    stops = _loop(m, step, 40, slow=True, step_s=0.005)  # 3x its own baseline: a stop
    state = m.state_dict()["detector"]["reporter"]
    m.shutdown()
    assert stops
    assert state["policy"] is None and state["sections"]  # the baselines stay


# -- faults (#22 item 2): the manager never runs a collective on the training group ------------


def _manager_fault(rank: int, world_size: int, how: str) -> dict:
    """A loop with a training all_reduce every step; `how` breaks rank 0 (a stall longer than
    sync_timeout_s before a sync point) or rank 1 (its manager fails outside a sync point)."""
    import torch
    import torch.distributed as dist

    m = StragglerDetectionManager(control_poll_s=0.1)
    m.initialize(_config(report_time_interval=0.2, sync_timeout_s=1.0, stop_if_detected=True,
                         enable_controller=False))
    step = m.wrap_train_step(time.sleep)
    stops, stalled, start = [], [], time.monotonic()
    for it in range(60):
        if it == 20 and how == "fail" and rank == 1:
            m._fail("injected failure")
        step(0.01)
        t = torch.ones(1)
        dist.all_reduce(t)  # the training's own collective: must keep working
        tracker = m._schedule._tracker if m._schedule is not None else None
        at_sync = tracker is not None and tracker.current_iter + 1 == tracker.next_report_iter
        if it >= 20 and how == "stall" and rank == 0 and at_sync and not stalled:
            stalled.append(it)  # once, just before a sync point
            time.sleep(3.0)  # a checkpoint, a GC pause: longer than sync_timeout_s
        if m.check_stragglers(it):
            stops.append(it)
    core = Detector.core()
    result = {"stops": stops, "active": m.active, "sum": t.item(),
              "detector_on": core is not None and core.enabled,
              "seconds": time.monotonic() - start}
    m.shutdown()
    return result


@pytest.mark.multirank
@pytest.mark.serial  # alone in `make test`: scores and timings of a live run
@pytest.mark.parametrize("how", ["stall", "fail"])
def test_one_ranks_stall_or_failure_leaves_the_job_running_and_every_rank_off(how):
    results = run_ranks(_manager_fault, 3, how, timeout_s=150)
    for result in results:
        assert result["sum"] == 3.0 and result["stops"] == [], results  # the normal result
        # The manager is off on every rank for the rest of the run (docs/integrations.md).
        assert not result["active"] and not result["detector_on"], results
        assert result["seconds"] < 30, results  # far from the old 60 s process-group timeout
