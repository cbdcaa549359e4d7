"""FTBridge against NVRx's real rank monitor (RankMonitorServer in a subprocess, on CPU).

The monitor (ft_monitor.py) kills a rank that overstays a section with SIGUSR1, counted by the
`kill_signal` fixture (conftest.py), so a test can see *that the server* saw a section open (a
timeout fired) without the test process dying. Every wait is bounded.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import time

import pytest

fault_tolerance = pytest.importorskip("nvidia_resiliency_ext.fault_tolerance")

from ft_monitor import CHECK_INTERVAL_S, Monitor  # noqa: E402 - tests/integrations/ft/ft_monitor.py
from straggler.integrations import ft  # noqa: E402
from straggler.integrations.ft import CHECKPOINTING, SETUP, STEP  # noqa: E402


class Recording:
    """A real RankMonitorClient whose section calls are also written down, in order."""

    def __init__(self, client):
        self.__dict__["_client"] = client
        self.__dict__["log"] = []

    def __getattr__(self, name):
        return getattr(self._client, name)

    def __setattr__(self, name, value):
        setattr(self._client, name, value)

    def start_section(self, name):
        self.log.append(("start", name))
        self._client.start_section(name)

    def end_section(self, name):
        self.log.append(("end", name))
        self._client.end_section(name)


def wait_for(event, timeout_s):
    deadline = time.monotonic() + timeout_s
    while not event.is_set() and time.monotonic() < deadline:
        time.sleep(0.02)  # the handler runs between bytecodes of this loop
    return event.is_set()


def test_sections_open_and_close_in_order_on_the_real_monitor(monitor_factory, kill_signal):
    monitor_factory({SETUP: 30.0, STEP: 1.0, CHECKPOINTING: 30.0})
    client = Recording(fault_tolerance.RankMonitorClient())
    bridge = ft.create_bridge("required", client=client, warmup_iters=1)
    assert bridge.generation == ft.client_generation(client._client)
    for _ in range(3):
        bridge.on_section_enter("train_step")
        bridge.on_section_exit("train_step")
    with bridge.checkpointing():
        pass
    assert client.log == [("start", SETUP), ("end", SETUP), ("start", STEP), ("end", STEP),
                          ("start", STEP), ("end", STEP), ("start", CHECKPOINTING),
                          ("end", CHECKPOINTING)]
    # The monitor holds `step` open: a hang inside it gets this rank "killed" (1 s timeout;
    # up to 15 s allowed because the test machine's 2 cores are shared).
    bridge.on_section_enter("train_step")
    assert wait_for(kill_signal, 15.0), "the monitor never saw `step` open"
    bridge.on_section_exit("train_step")
    # ...and sees it closed again: out of section (30 s timeout) nothing fires.
    time.sleep(5 * CHECK_INTERVAL_S)
    kill_signal.clear()
    time.sleep(5 * CHECK_INTERVAL_S)
    assert not kill_signal.is_set()
    bridge.shutdown()
    assert not client.is_initialized


def _train(bridge, steps, step_s):
    for _ in range(steps):
        bridge.on_section_enter("train_step")
        time.sleep(step_s)
        bridge.on_section_exit("train_step")


def test_timeouts_learned_saved_and_enforced_by_the_next_run(monitor_factory, kill_signal,
                                                             tmp_path):
    sections = {SETUP: 30.0, STEP: 30.0, CHECKPOINTING: 30.0}
    # run 1: learn `step` from 16 steps of ~50 ms and save it
    monitor_factory(sections)
    bridge = ft.create_bridge("required", state_path=tmp_path, warmup_iters=1)
    _train(bridge, ft.MIN_ITERS_FOR_STEP_TIMEOUT_UPDATE, 0.05)
    assert bridge.on_report() is True
    learned = bridge.current_timeouts()[STEP]
    # 5 x the longest step; the upper bound only guards against a unit error (contention can
    # stretch a 50 ms sleep, never to seconds)
    assert 5 * 0.05 <= learned < 5.0
    assert bridge.current_timeouts()[SETUP] == 30.0   # no checkpoint load: setup not learned
    bridge.shutdown()
    saved = json.loads((tmp_path / ft.STATE_FILE_NAME).read_text())
    assert saved["current_timeouts"]["section"]["section"][STEP] == pytest.approx(learned)
    assert saved["current_timeouts"]["section"]["calculated_sections"] == [STEP]

    # run 2: a fresh monitor with the launcher's 30 s; the saved value is loaded and enforced
    monitor_factory(sections)
    bridge = ft.create_bridge("required", state_path=tmp_path, warmup_iters=0)
    assert bridge.current_timeouts()[STEP] == pytest.approx(learned)
    kill_signal.clear()
    t0 = time.monotonic()
    bridge.on_section_enter("train_step")
    fired = wait_for(kill_signal, learned + 15.0)
    bridge.on_section_exit("train_step")
    assert fired, "the loaded step timeout did not reach the monitor"
    assert time.monotonic() - t0 >= learned  # not before the learned timeout
    bridge.abort()


def test_unknown_section_names_do_not_break_nvrx(monitor_factory):
    monitor_factory({STEP: 30.0})           # no setup, no checkpointing
    client = fault_tolerance.RankMonitorClient()
    bridge = ft.create_bridge("required", client=client, warmup_iters=0)
    for _ in range(2):
        with bridge.checkpointing(), bridge.section("data_loading"):
            _train(bridge, 1, 0.0)
    assert bridge.enabled and bridge.open_sections() == {}
    assert client.timeouts_calc.section_to_max_time[STEP] > 0
    bridge.shutdown()


def _drill_child(socket_path, kind):
    os.environ[ft.RANK_MONITOR_SOCKET_ENV] = socket_path
    os.environ["RANK"] = "0"
    signal.signal(signal.SIGUSR1, signal.SIG_DFL)  # the monitor's kill acts for real here
    bridge = ft.create_bridge("required", warmup_iters=0)
    bridge.maybe_setup_simulated_fault(fault_type=kind, fault_rank=0, base_delay_s=0.3)
    bridge.on_training_step_start()
    time.sleep(30)  # the drill ends this process long before
    os._exit(0)


@pytest.mark.parametrize("kind, exitcode", [("rank_killed", -signal.SIGKILL),
                                            ("rank_hung", -signal.SIGUSR1)])
def test_fault_drill_kills_or_hangs_the_rank(monitor_factory, kind, exitcode):
    """rank_killed dies at once; rank_hung stops (SIGSTOP) and the monitor ends it in `step`."""
    m = monitor_factory({STEP: 1.0})
    child = multiprocessing.get_context("fork").Process(target=_drill_child,
                                                        args=(m.socket, kind))
    child.start()
    child.join(25)
    if child.is_alive():
        child.kill()
        child.join(5)
        pytest.fail(f"the {kind} drill did not end the rank")
    assert child.exitcode == exitcode


# -- through the Detector --------------------------------------------------------------------------
def test_detector_drives_ft_sections_and_learns_at_reports(monitor_factory, kill_signal,
                                                           tmp_path):
    from straggler import Detector

    monitor_factory({SETUP: 30.0, STEP: 30.0, CHECKPOINTING: 30.0})
    Detector.initialize(report_time_interval=0, ft_sections="required",
                        ft_options={"state_path": str(tmp_path), "warmup_iters": 1})
    try:
        bridge = Detector.ft_bridge()
        assert bridge is not None and bridge.open_sections() == {SETUP: 1}
        client = bridge.client
        for _ in range(ft.MIN_ITERS_FOR_STEP_TIMEOUT_UPDATE):
            with Detector.detection_section("train_step", profile_cuda=False):
                assert bridge.open_sections() in ({}, {STEP: 1})  # {} during warm-up
                time.sleep(0.01)
        assert bridge.open_sections() == {}
        assert client.timeouts_calc.section_to_max_time[STEP] > 0
        with bridge.checkpointing():
            time.sleep(0.01)
        assert Detector.generate_report() is not None
        assert bridge.current_timeouts()[STEP] < 30.0       # learned at the report point
        assert (tmp_path / ft.STATE_FILE_NAME).exists()
    finally:
        Detector.shutdown()
    assert not client.is_initialized
    assert not kill_signal.is_set()


def test_detector_required_without_launcher_fails_clearly(monkeypatch):
    from straggler import Detector

    monkeypatch.delenv(ft.RANK_MONITOR_SOCKET_ENV, raising=False)
    with pytest.raises(ft.FTUnavailableError, match="not started by ft_launcher"):
        Detector.initialize(ft_sections="required")
    assert Detector.core() is None
    Detector.initialize()                      # auto: quietly off
    try:
        assert Detector.ft_bridge() is None
    finally:
        Detector.shutdown()


def test_auto_leaves_ft_to_a_client_already_connected(monitor_factory):
    """The monitor serves one connection: a second client would stall 180 s and then break the
    first one's monitoring. So we stay off (auto) or refuse (required), and can share it."""
    monitor_factory({STEP: 30.0})
    theirs = fault_tolerance.RankMonitorClient()
    theirs.init_workload_monitoring()
    try:
        assert ft.connected_clients() == [theirs]
        assert ft.create_bridge("auto") is None
        with pytest.raises(ft.FTUnavailableError, match="already connected"):
            ft.create_bridge("required")
        shared = ft.create_bridge("required", client=theirs, warmup_iters=0)
        _train(shared, 1, 0.0)
        assert theirs.timeouts_calc.section_to_max_time[STEP] > 0
        shared.shutdown()
        assert theirs.is_initialized                  # their connection stays theirs
        assert "synchronize_all" not in vars(theirs.timeouts_calc)  # and their reduction
    finally:
        theirs.shutdown_workload_monitoring()
    assert ft.connected_clients() == []


def test_straggler_action_reaches_the_launcher_channel(monitor_factory, monkeypatch):
    """The request travels over NVRx's real launcher IPC (the receiving end ft_launcher uses)."""
    from nvidia_resiliency_ext.fault_tolerance.ipc_connector import IpcConnector

    m = monitor_factory({STEP: 30.0})
    launcher_socket = os.path.join(m.dir, "launcher.socket")
    receiver = IpcConnector(launcher_socket)
    receiver.start_receiving()
    try:
        monkeypatch.setenv(ft.LAUNCHER_SOCKET_ENV, launcher_socket)
        bridge = ft.create_bridge("required", straggler_action="shutdown")
        assert bridge.act_on_stragglers([0], description="rank 0 at 0.3",
                                        exit_process=False) is True
        deadline = time.monotonic() + 10.0
        received = []
        while not received and time.monotonic() < deadline:
            received = receiver.fetch_received()
            time.sleep(0.05)
    finally:
        receiver.stop_receiving()
    ((rank, request),) = received
    assert int(rank) == 0  # RankInfo takes it from $RANK (a string) without a process group
    assert request.action == fault_tolerance.WorkloadAction.ShutdownWorkload
    assert "rank 0 at 0.3" in request.description
    assert not bridge.enabled


def _learn_across_ranks(rank, world_size, state_dir):
    from straggler import Detector

    Detector.initialize(report_time_interval=0, ft_sections="required",
                        ft_options={"state_path": state_dir, "warmup_iters": 0})
    try:
        bridge = Detector.ft_bridge()
        for _ in range(ft.MIN_ITERS_FOR_STEP_TIMEOUT_UPDATE):
            with Detector.detection_section("step", profile_cuda=False):
                time.sleep(0.12 if rank == 1 else 0.01)  # rank 1's steps are the longest
        Detector.generate_report()
        return bridge.current_timeouts()[STEP], \
            bridge.client.timeouts_calc.section_to_max_time[STEP]
    finally:
        Detector.shutdown()


@pytest.mark.multirank
def test_learned_timeouts_are_the_same_on_every_rank(tmp_path):
    """The longest step of any rank sets everyone's timeout (MAX over our communicator)."""
    from _multirank import run_ranks

    monitors = [Monitor({SETUP: 30.0, STEP: 30.0}) for _ in range(2)]
    try:
        results = run_ranks(_learn_across_ranks, 2, str(tmp_path), timeout_s=120,
                            rank_env={r: {ft.RANK_MONITOR_SOCKET_ENV: m.socket}
                                      for r, m in enumerate(monitors)})
    finally:
        for m in monitors:
            m.close()
    (t0, max0), (t1, max1) = results
    assert t0 == pytest.approx(t1) and max0 == pytest.approx(max1)
    assert max0 >= 0.12                      # rank 1's step, seen by rank 0 too
    assert t0 == pytest.approx(5.0 * max0)   # NVRx's safety factor
    saved = json.loads((tmp_path / ft.STATE_FILE_NAME).read_text())
    assert saved["current_timeouts"]["section"]["section"][STEP] == pytest.approx(t0)
