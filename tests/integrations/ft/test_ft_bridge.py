"""FTBridge logic against fake rank-monitor clients of both NVRx API generations (no server).

`FakeClient041` behaves like NVRx 0.4.1's client: a name outside the launcher's section table
raises, ``end_all_sections()`` works, ``init_workload_monitoring()`` takes no argument.
`FakeClient07` has the 0.5+/0.7 differences: ``_should_monitor_section`` (unknown names are
skipped silently), ``end_all_sections()`` that does nothing (the NVRx bug), an optional
``num_warmup_iters`` and ``cfg.num_warmup_iterations``. Both refuse to open an open section.
The real engine is exercised in test_ft_engine.py and test_ft_launcher.py.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest
import torch
from straggler.integrations import ft
from straggler.integrations.ft import CHECKPOINTING, SETUP, STEP, FTBridge, FTUnavailableError

from _clock import FakeClock


class FakeError(Exception):
    pass


@dataclass
class FakeSectionTimeouts:
    section: dict[str, float | None]
    out_of_section: float | None = None
    calculated_sections: Any = field(default_factory=set)
    is_out_of_section_calculated: bool = False


class FakeCalc:
    """The fields of NVRx's TimeoutsCalc that the bridge reduces."""

    def __init__(self, sections):
        self.initial_max_time = -1.0
        self.subsequent_max_time = -1.0
        self.out_of_section_max_time = -1.0
        self.section_to_max_time = {s: -1.0 for s in sections}
        self.syncs = 0

    def synchronize_all(self):
        self.syncs += 1


class FakeClient041:
    """NVRx 0.4.1's client surface, recording every call."""

    def __init__(self, sections=None, oos=30.0, calc_result=True):
        sections = {SETUP: 30.0, STEP: 3.0, CHECKPOINTING: 30.0} if sections is None else sections
        self.cfg = SimpleNamespace(rank_section_timeouts=dict(sections),
                                   rank_out_of_section_timeout=oos, safety_factor=5.0)
        self.is_initialized = False
        self.calls: list[tuple] = []
        self.open: list[str] = []
        self.section_timeouts: FakeSectionTimeouts | None = None
        self.timeouts_calc: FakeCalc | None = None
        self.calc_result = calc_result
        self.fail_on: str | None = None
        self.requests: list[Any] = []

    def init_workload_monitoring(self):
        self.calls.append(("init",))
        self.is_initialized = True
        self.timeouts_calc = FakeCalc(self.cfg.rank_section_timeouts)
        self.section_timeouts = FakeSectionTimeouts(dict(self.cfg.rank_section_timeouts),
                                                    self.cfg.rank_out_of_section_timeout)

    def _check_name(self, name):
        if name not in self.cfg.rank_section_timeouts:
            raise FakeError(f"Unknown section: {name}. Does it have an entry in the config?")

    def start_section(self, name):
        if self.fail_on == "start":
            raise FakeError("RankMonitorClient could not send section update: broken pipe")
        self._check_name(name)
        if name in self.open:
            raise FakeError(f"Tried to open {name} that is already open.")
        self.open.append(name)
        self.calls.append(("start", name))

    def end_section(self, name):
        self._check_name(name)
        if name not in self.open:
            raise FakeError(f"Tried to close {name} that is not open.")
        self.open.remove(name)
        self.calls.append(("end", name))

    def end_all_sections(self):
        self.calls.append(("end_all",))
        self.open.clear()

    def calculate_and_set_section_timeouts(self, selected_sections=None, calc_out_of_section=True,
                                           skip_if_not_ready=False):
        self.timeouts_calc.synchronize_all()
        self.calls.append(("calc", tuple(selected_sections), calc_out_of_section))
        if not self.calc_result:
            return False
        st = self.section_timeouts
        for s in selected_sections:
            st.section[s] = 1.5
        st.calculated_sections = set(st.calculated_sections) | set(selected_sections)
        if calc_out_of_section:
            st.out_of_section, st.is_out_of_section_calculated = 9.0, True
        return True

    def state_dict(self):
        st = self.section_timeouts
        return {"current_timeouts": {"section": {
            "section": dict(st.section), "out_of_section": st.out_of_section,
            "calculated_sections": sorted(st.calculated_sections),
            "is_out_of_section_calculated": st.is_out_of_section_calculated}}}

    def load_state_dict(self, state):
        self.calls.append(("load", json.loads(json.dumps(state))))
        sec = state.get("current_timeouts", {}).get("section")
        if sec is not None:
            self.section_timeouts = FakeSectionTimeouts(**sec)

    def shutdown_workload_monitoring(self):
        self.calls.append(("shutdown",))
        self.is_initialized = False

    def send_workload_control_request(self, req):
        self.requests.append(req)


class FakeClient07(FakeClient041):
    """The NVRx 0.5+/0.7 differences the bridge must cope with."""

    def __init__(self, *args, warmup=3, **kwargs):
        super().__init__(*args, **kwargs)
        self.cfg.num_warmup_iterations = warmup

    def init_workload_monitoring(self, num_warmup_iters=None):
        super().init_workload_monitoring()

    def _should_monitor_section(self, name):
        return name in self.cfg.rank_section_timeouts

    def start_section(self, name):
        if self._should_monitor_section(name):
            super().start_section(name)

    def end_section(self, name):
        if self._should_monitor_section(name):
            super().end_section(name)

    def end_all_sections(self):  # the NVRx >= 0.5 bug: sends nothing, closes nothing
        self.calls.append(("end_all",))


@pytest.fixture
def launcher_env(tmp_path, monkeypatch):
    """What ft_launcher gives a worker: an existing rank-monitor socket path, RANK."""
    sock = tmp_path / "rmon.socket"
    sock.touch()
    monkeypatch.setenv(ft.RANK_MONITOR_SOCKET_ENV, str(sock))
    monkeypatch.setenv("RANK", "0")
    monkeypatch.delenv(ft.STATE_PATH_ENV, raising=False)
    return sock


def sections_of(client):
    return [c for c in client.calls if c[0] in ("start", "end", "end_all")]


def run_steps(bridge, n, name="train_step", clock=None, step_s=0.0):
    """`n` steps; with a fake `clock`, each takes `step_s` seconds of it."""
    for _ in range(n):
        bridge.on_section_enter(name)
        if clock is not None:
            clock.advance(step_s)
        bridge.on_section_exit(name)


# -- on / off --------------------------------------------------------------------------------
def test_auto_is_off_without_the_launcher(monkeypatch, caplog):
    monkeypatch.delenv(ft.RANK_MONITOR_SOCKET_ENV, raising=False)
    client = FakeClient041()
    with caplog.at_level(logging.INFO, logger="straggler"):
        bridge = FTBridge("auto", client=client)
        assert bridge.setup() is False
    assert "not started by ft_launcher" in caplog.text
    assert client.calls == []
    # every hook is a no-op
    run_steps(bridge, 3)
    bridge.on_checkpointing_start()
    bridge.on_checkpointing_end()
    assert bridge.on_report() is False
    assert bridge.maybe_setup_simulated_fault(fault_type="rank_killed") is None
    assert bridge.act_on_stragglers([1]) is False
    bridge.shutdown()
    assert client.calls == []
    assert ft.create_bridge("auto", client=client) is None


def test_required_without_the_launcher_says_what_is_missing(monkeypatch):
    monkeypatch.delenv(ft.RANK_MONITOR_SOCKET_ENV, raising=False)
    with pytest.raises(FTUnavailableError, match=r"not started by ft_launcher.*"
                       r"FT_RANK_MONITOR_IPC_SOCKET is not set.*ft_launcher"):
        FTBridge("required").setup()


def test_required_with_a_stale_socket_path(monkeypatch, tmp_path):
    monkeypatch.setenv(ft.RANK_MONITOR_SOCKET_ENV, str(tmp_path / "gone.socket"))
    with pytest.raises(FTUnavailableError, match=r"gone\.socket.*does not exist"):
        ft.create_bridge("required")


def test_required_without_nvrx_says_how_to_install(launcher_env, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_nvrx(name, *args, **kwargs):
        if name.startswith("nvidia_resiliency_ext"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_nvrx)
    with pytest.raises(FTUnavailableError, match="nvidia-resiliency-ext"):
        FTBridge("required").setup()
    assert FTBridge("auto").setup() is False


def test_required_when_the_monitor_refuses(launcher_env):
    client = FakeClient041()
    client.init_workload_monitoring = lambda: (_ for _ in ()).throw(ConnectionRefusedError(111))
    with pytest.raises(FTUnavailableError, match="ConnectionRefusedError"):
        FTBridge("required", client=client).setup()


def test_off_never_touches_ft(launcher_env):
    client = FakeClient041()
    assert ft.create_bridge("off", client=client) is None
    assert client.calls == []


@pytest.mark.parametrize("kwargs, match", [
    ({"mode": "on"}, r"`ft_sections='on'` must be one of \['auto', 'required', 'off'\]"),
    ({"step_section": ""}, r"`step_section=''`"),
    ({"calc_timeouts": 1}, r"`calc_timeouts=1` must be True or False"),
    ({"warmup_iters": -1}, r"`warmup_iters=-1` must be a non-negative integer"),
    ({"straggler_action": "kill"}, r"`straggler_action='kill'` must be one of"),
    ({"state_path": 3}, r"`state_path=3` must be a path"),
])
def test_bad_options_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        FTBridge(**kwargs)


def test_create_bridge_rejects_unknown_options():
    with pytest.raises(ValueError, match=r"unknown keys \['step_timeout'\]"):
        ft.create_bridge("auto", step_timeout=3)


# -- sections ---------------------------------------------------------------------------------
@pytest.mark.parametrize("client_cls", [FakeClient041, FakeClient07])
def test_setup_then_steps_after_warmup(launcher_env, client_cls):
    client = client_cls()
    bridge = ft.create_bridge("required", client=client, warmup_iters=2)
    assert bridge is not None and bridge.enabled
    assert client.calls[:2] == [("init",), ("start", SETUP)]
    run_steps(bridge, 4)
    # setup closes at the first step; the two warm-up steps stay out of `step`
    assert sections_of(client) == [("start", SETUP), ("end", SETUP),
                                   ("start", STEP), ("end", STEP), ("start", STEP), ("end", STEP)]
    assert bridge.train_iters == 4


def test_warmup_defaults_to_the_launchers_setting_on_new_nvrx(launcher_env):
    assert ft.create_bridge("required", client=FakeClient07(warmup=3)).warmup_iters == 3
    assert ft.create_bridge("required", client=FakeClient041()).warmup_iters == \
        ft.DEFAULT_WARMUP_ITERS


def test_step_follows_the_first_outermost_section(launcher_env):
    client = FakeClient041()
    bridge = ft.create_bridge("required", client=client, warmup_iters=0)
    for _ in range(2):
        bridge.on_section_enter("iteration")
        bridge.on_section_enter("forward")     # nested: not the step
        bridge.on_section_exit("forward")
        bridge.on_section_exit("iteration")
        bridge.on_section_enter("logging")     # a later outermost section: not the step either
        bridge.on_section_exit("logging")
    assert bridge.step_section == "iteration"
    assert sections_of(client)[2:] == [("start", STEP), ("end", STEP)] * 2


def test_named_step_section(launcher_env):
    client = FakeClient041()
    bridge = ft.create_bridge("required", client=client, step_section="fwd_bwd", warmup_iters=0)
    run_steps(bridge, 1, "data")
    run_steps(bridge, 1, "fwd_bwd")
    assert sections_of(client)[-2:] == [("start", STEP), ("end", STEP)]
    assert bridge.train_iters == 1


@pytest.mark.parametrize("client_cls", [FakeClient041, FakeClient07])
def test_nested_use_is_reference_counted(launcher_env, client_cls):
    client = client_cls()
    bridge = ft.create_bridge("required", client=client, warmup_iters=0)
    bridge.on_training_step_start()
    bridge.on_training_step_start()           # e.g. a callback and a section both mark it
    with bridge.checkpointing(), bridge.checkpointing():
        pass
    bridge.on_training_step_end()
    assert client.open == [STEP]              # still inside the outer step
    bridge.on_training_step_end()
    assert client.open == []
    assert sections_of(client)[2:] == [("start", STEP), ("start", CHECKPOINTING),
                                       ("end", CHECKPOINTING), ("end", STEP)]
    assert bridge.train_iters == 1 and bridge.checkpoints == 2


@pytest.mark.parametrize("client_cls", [FakeClient041, FakeClient07])
def test_shutdown_closes_sections_one_by_one(launcher_env, client_cls):
    """Never end_all_sections(): it does nothing on NVRx >= 0.5, so `step` would stay open."""
    client = client_cls()
    bridge = ft.create_bridge("required", client=client, warmup_iters=0, calc_timeouts=False)
    bridge.on_training_step_start()
    bridge.on_checkpointing_start()
    bridge.shutdown()
    assert ("end_all",) not in client.calls
    assert client.open == []
    assert sections_of(client)[-2:] == [("end", CHECKPOINTING), ("end", STEP)]
    assert client.calls[-1] == ("shutdown",)
    bridge.shutdown()  # idempotent
    assert client.calls.count(("shutdown",)) == 1


@pytest.mark.parametrize("client_cls, why", [(FakeClient041, "NVRx 0.4 raises"),
                                             (FakeClient07, "NVRx 0.5\\+ ignores")])
def test_unknown_names_are_not_sent_and_logged_once(launcher_env, client_cls, why, caplog):
    client = client_cls(sections={STEP: 3.0})   # no setup, no checkpointing configured
    bridge = ft.create_bridge("required", client=client, warmup_iters=0)
    with caplog.at_level(logging.WARNING, logger="straggler"):
        for _ in range(3):
            with bridge.checkpointing():
                run_steps(bridge, 1)
    assert bridge.enabled                        # no exception reached FT or the loop
    assert sections_of(client) == [("start", STEP), ("end", STEP)] * 3
    assert len([r for r in caplog.records if "'checkpointing' is not configured" in r.message]) == 1
    assert pytest.importorskip("re").search(why, caplog.text)


def test_eval_steps_have_their_own_warmup(launcher_env):
    client = FakeClient041()
    bridge = ft.create_bridge("required", client=client, warmup_iters=1)
    for _ in range(3):
        bridge.on_eval_step_start()
        bridge.on_eval_step_end()
    assert sections_of(client) == [("start", SETUP), ("end", SETUP),
                                   ("start", STEP), ("end", STEP), ("start", STEP), ("end", STEP)]
    assert bridge.train_iters == 0


def test_a_broken_monitor_turns_ft_off_without_raising(launcher_env, caplog):
    client = FakeClient041()
    bridge = ft.create_bridge("required", client=client, warmup_iters=0)
    client.fail_on = "start"
    with caplog.at_level(logging.ERROR, logger="straggler"):
        run_steps(bridge, 3)
    assert not bridge.enabled
    assert caplog.text.count("FT start_section('step') failed") == 1


# -- timeouts ---------------------------------------------------------------------------------
def test_timeouts_follow_megatron_bridge_rules(launcher_env, tmp_path):
    client = FakeClient041()
    reductions = []
    bridge = ft.create_bridge("required", client=client, warmup_iters=1, state_path=tmp_path,
                              reduce_max=lambda t: reductions.append(t) or t)
    calcs = lambda: [c for c in client.calls if c[0] == "calc"]  # noqa: E731
    run_steps(bridge, 15)
    assert bridge.on_report() is False          # < 16 iterations: nothing selected...
    assert calcs() == [] and len(reductions) == 1  # ...but it joined the peers' reduction
    run_steps(bridge, 1)
    assert bridge.on_report() is True
    assert calcs()[-1] == ("calc", (STEP,), False)
    with bridge.checkpointing():
        pass
    bridge.on_report()
    assert calcs()[-1] == ("calc", (STEP, CHECKPOINTING), False)
    bridge.shutdown()                           # no persistent load: still no OOS, no setup
    assert calcs()[-1] == ("calc", (STEP, CHECKPOINTING), False)
    saved = json.loads((tmp_path / ft.STATE_FILE_NAME).read_text())
    assert saved["current_timeouts"]["section"]["calculated_sections"] == [CHECKPOINTING, STEP]


def test_out_of_section_only_at_a_clean_end_of_a_complete_run(launcher_env):
    client = FakeClient041()
    bridge = ft.create_bridge("required", client=client, warmup_iters=1)
    bridge.on_checkpoint_loaded(is_local_chkpt=False)
    run_steps(bridge, 20)
    with bridge.checkpointing():
        pass
    bridge.on_report()
    assert client.calls[-1][0] != "calc" or client.calls[-1][2] is False
    assert ("calc", (SETUP, STEP, CHECKPOINTING), False) in client.calls
    bridge.shutdown(clean=True)
    assert ("calc", (SETUP, STEP, CHECKPOINTING), True) in client.calls


def test_abort_learns_nothing(launcher_env):
    client = FakeClient041()
    bridge = ft.create_bridge("required", client=client, warmup_iters=0)
    bridge.on_checkpoint_loaded()
    run_steps(bridge, 20)
    bridge.abort()
    assert not [c for c in client.calls if c[0] == "calc"]
    assert client.calls[-1] == ("shutdown",)


def test_local_and_async_checkpoints_are_not_learned(launcher_env):
    client = FakeClient041()
    bridge = ft.create_bridge("required", client=client, warmup_iters=0)
    bridge.on_checkpoint_loaded(is_local_chkpt=True)
    run_steps(bridge, 16)
    with bridge.checkpointing(is_async_finalization=True):
        pass
    bridge.on_report()
    assert [c for c in client.calls if c[0] == "calc"] == [("calc", (STEP,), False)]


def test_saved_timeouts_are_fitted_to_the_current_config(launcher_env, tmp_path):
    (tmp_path / ft.STATE_FILE_NAME).write_text(json.dumps({"current_timeouts": {"section": {
        "section": {STEP: 0.8, "old": 4.0, SETUP: 99.0},
        "out_of_section": 7.0, "calculated_sections": [STEP, "old"],
        "is_out_of_section_calculated": True}}}))
    client = FakeClient041(sections={SETUP: 30.0, STEP: 3.0, CHECKPOINTING: None})
    ft.create_bridge("required", client=client, state_path=tmp_path / ft.STATE_FILE_NAME)
    loads = [c for c in client.calls if c[0] == "load"]
    assert loads == [("load", {"current_timeouts": {"section": {
        "section": {SETUP: 30.0, STEP: 0.8, CHECKPOINTING: None}, "out_of_section": 7.0,
        "calculated_sections": [STEP], "is_out_of_section_calculated": True}}})]
    # loaded after init, so the values reach the monitor at once; setup opens afterwards
    assert [c[0] for c in client.calls[:4]] == ["init", "load", "start"]


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", json.dumps({"current_timeouts": 3}),
                                     json.dumps({"current_timeouts": {"section": {
                                         "section": {STEP: -1.0}, "calculated_sections": [STEP],
                                         "out_of_section": None,
                                         "is_out_of_section_calculated": False}}})])
def test_a_bad_state_file_is_ignored(launcher_env, tmp_path, content):
    path = tmp_path / ft.STATE_FILE_NAME
    path.write_text(content)
    client = FakeClient041()
    assert ft.create_bridge("required", client=client, state_path=path).enabled
    assert not [c for c in client.calls if c[0] == "load"]


def test_state_path_from_the_environment(launcher_env, tmp_path, monkeypatch):
    monkeypatch.setenv(ft.STATE_PATH_ENV, str(tmp_path / "ckpt"))
    assert FTBridge().state_file == str(tmp_path / "ckpt" / ft.STATE_FILE_NAME)
    assert FTBridge(state_path=tmp_path / "x.json").state_file == str(tmp_path / "x.json")


def test_only_rank0_writes_the_state_file(launcher_env, tmp_path, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    bridge = ft.create_bridge("required", client=FakeClient041(), state_path=tmp_path,
                              warmup_iters=0)
    run_steps(bridge, 16)
    assert bridge.on_report() is True
    assert not (tmp_path / ft.STATE_FILE_NAME).exists()


def test_state_file_write_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "d" / ft.STATE_FILE_NAME
    ft.write_state_file(str(path), {"a": 1})

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(json, "dump", boom)
    with pytest.raises(OSError, match="disk full"):
        ft.write_state_file(str(path), {"a": 2})
    assert json.loads(path.read_text()) == {"a": 1}       # the old file is intact
    assert os.listdir(path.parent) == [ft.STATE_FILE_NAME]  # no temporary left behind


def test_timeouts_from_our_statistics(launcher_env, monkeypatch):
    client = FakeClient07()
    clock = FakeClock()
    reduced = []

    def reduce_max(t):
        reduced.append(t.tolist())
        return torch.maximum(t, torch.full_like(t, 0.2)) if t.numel() == 1 else t  # a peer's

    bridge = ft.create_bridge("required", client=client, warmup_iters=0, clock=clock,
                              timeouts_from_stats=True, reduce_max=reduce_max)
    run_steps(bridge, 15, clock=clock, step_s=0.05)
    run_steps(bridge, 1, clock=clock, step_s=0.125)  # this rank's longest step
    assert bridge.on_report() is True
    assert reduced[-1] == [0.125]  # the longest step this rank measured on the injected clock
    # NVRx's own calculation did not pick `step` (the statistics own it)
    assert not [c for c in client.calls if c[0] == "calc"]
    pushed = [c for c in client.calls if c[0] == "load"][-1][1]["current_timeouts"]["section"]
    assert pushed["section"][STEP] == pytest.approx(5.0 * 0.2)  # safety x longest on any rank
    assert set(pushed["section"]) == {SETUP, STEP, CHECKPOINTING}  # every configured name
    assert pushed["calculated_sections"] == [STEP]
    run_steps(bridge, 1)
    bridge.on_report()                            # merged with the previous value as NVRx does
    pushed = [c for c in client.calls if c[0] == "load"][-1][1]["current_timeouts"]["section"]
    assert pushed["section"][STEP] == pytest.approx(1.0)
    assert bridge.current_timeouts()[STEP] == pytest.approx(1.0)


def test_our_reduction_replaces_nvrx_default_group_sync(launcher_env):
    client = FakeClient041()
    seen = []

    def reduce_max(t):
        seen.append(t.clone())
        out = t.clone()
        out[3:] = 2.0   # a peer saw 2 s in every section
        return out

    bridge = ft.create_bridge("required", client=client, reduce_max=reduce_max, warmup_iters=0)
    run_steps(bridge, 16)
    bridge.on_report()
    assert len(seen) == 1 and seen[0].dtype == torch.float64 and seen[0].numel() == 6
    assert client.timeouts_calc.section_to_max_time == {SETUP: 2.0, STEP: 2.0,
                                                        CHECKPOINTING: 2.0}


def test_a_rank_whose_ft_broke_still_joins_the_reduction(launcher_env):
    client = FakeClient041()
    sizes = []
    bridge = ft.create_bridge("required", client=client, warmup_iters=0,
                              reduce_max=lambda t: sizes.append(t.numel()) or t)
    client.fail_on = "start"
    run_steps(bridge, 16)
    assert not bridge.enabled
    assert bridge.on_report() is False
    assert sizes == [6]   # same shape as the healthy ranks' reduction: no collective mismatch


# -- straggler actions and drills ---------------------------------------------------------------
@pytest.mark.parametrize("action, rank, sends", [("exclude_node", "1", "ExcludeThisNode"),
                                                 ("exclude_node", "0", None),
                                                 ("shutdown", "1", "ShutdownWorkload"),
                                                 ("shutdown", "0", None)])
def test_acting_on_stragglers(launcher_env, monkeypatch, action, rank, sends):
    pytest.importorskip("nvidia_resiliency_ext.fault_tolerance")
    monkeypatch.setenv("RANK", rank)
    client = FakeClient041()
    bridge = ft.create_bridge("required", client=client, straggler_action=action)
    with pytest.raises(SystemExit) as exited:
        bridge.act_on_stragglers([1], description="rank 1 at 0.4")
    assert exited.value.code == 1
    if sends is None:
        assert client.requests == []
    else:
        (req,) = client.requests
        assert req.action.name == sends and "rank 1 at 0.4" in req.description
    assert client.calls[-1] == ("shutdown",)     # disconnected without a collective
    assert not [c for c in client.calls if c[0] == "calc"]


def test_stragglers_known_on_one_rank_are_agreed(launcher_env, monkeypatch):
    """Only the reporting rank knows the stragglers; the reduction tells rank 1 it is one."""
    pytest.importorskip("nvidia_resiliency_ext.fault_tolerance")
    monkeypatch.setenv("RANK", "1")
    client = FakeClient041()

    def reduce_max(t):   # rank 0 (the peer) flagged rank 1
        peer = torch.tensor([0.0, 1.0], dtype=t.dtype)
        return torch.maximum(torch.nn.functional.pad(t, (0, 2 - t.numel())), peer)

    bridge = ft.create_bridge("required", client=client, straggler_action="exclude_node",
                              reduce_max=reduce_max)
    assert bridge.act_on_stragglers([], agree=True, exit_process=False) is True
    (req,) = client.requests
    assert req.action.name == "ExcludeThisNode"
    assert not bridge.enabled


def test_a_rank_whose_ft_broke_still_joins_the_stragglers_agreement(launcher_env):
    """Its peers reduce the straggler flags: it must take part (no collective mismatch)."""
    client = FakeClient041()
    sizes = []
    bridge = ft.create_bridge("required", client=client, straggler_action="exclude_node",
                              warmup_iters=0, reduce_max=lambda t: sizes.append(t.numel()) or t)
    client.fail_on = "start"
    run_steps(bridge, 1)
    assert not bridge.enabled
    assert bridge.act_on_stragglers([0], agree=True, exit_process=False) is False
    assert sizes == [1]  # the world-sized flag vector, as on the healthy ranks
    assert client.requests == []


def test_a_failed_stragglers_agreement_does_not_raise(launcher_env, caplog):
    def broken(t):
        raise RuntimeError("peer gone")

    bridge = ft.create_bridge("required", client=FakeClient041(), straggler_action="shutdown",
                              reduce_max=broken)
    assert bridge.act_on_stragglers([], agree=True, exit_process=False) is False
    assert "agreeing on the stragglers failed (RuntimeError: peer gone)" in caplog.text


def test_no_straggler_action_by_default(launcher_env):
    bridge = ft.create_bridge("required", client=FakeClient041())
    assert bridge.act_on_stragglers([1]) is False
    assert bridge.enabled


def test_simulated_fault_validation(launcher_env):
    bridge = ft.create_bridge("required", client=FakeClient041())
    with pytest.raises(ValueError, match="`fault_type='oom'`"):
        bridge.maybe_setup_simulated_fault(fault_type="oom")
    with pytest.raises(ValueError, match="`base_delay_s=-1`"):
        bridge.maybe_setup_simulated_fault(base_delay_s=-1)
    with pytest.raises(ValueError, match="`fault_rank=3` must be below the world size 1"):
        bridge.maybe_setup_simulated_fault(fault_rank=3)
    assert bridge.maybe_setup_simulated_fault(simulate_fault=False) is None


def test_finished_flag_on_rank0_only(tmp_path, monkeypatch):
    flag = tmp_path / "out" / "finished.flag"
    monkeypatch.setenv(ft.FINISHED_FLAG_ENV, str(flag))
    monkeypatch.setenv("RANK", "1")
    assert ft.write_finished_flag() is None and not flag.exists()
    monkeypatch.setenv("RANK", "0")
    assert ft.write_finished_flag() == str(flag) and flag.exists()
    monkeypatch.delenv(ft.FINISHED_FLAG_ENV)
    assert ft.finished_flag_path() is None
    with pytest.raises(RuntimeError, match="FAULT_TOL_FINISHED_FLAG_FILE' env variable is not") \
            as info:
        ft.finished_flag_path(required=True)
    assert "ft_launcher does not set it" in str(info.value)  # not "launched with FT launcher?"


def test_generation_detection():
    assert ft.client_generation(FakeClient041()) == "0.4"
    assert ft.client_generation(FakeClient07()) == "0.5+"


# -- the detector seam ------------------------------------------------------------------------
class SlowFake(FakeClient041):
    """FT's IPC made slow (0.2 s per message) so its cost would show in our timer if inside."""

    def start_section(self, name):
        time.sleep(0.2)
        super().start_section(name)

    def end_section(self, name):
        super().end_section(name)
        time.sleep(0.2)


def test_ft_cost_stays_out_of_our_timings(launcher_env):
    from straggler import Detector, Statistic

    client = SlowFake(sections={STEP: 3.0})
    Detector.initialize(report_time_interval=0, ft_sections="required",
                        ft_options={"client": client, "warmup_iters": 0, "calc_timeouts": False})
    try:
        for _ in range(3):
            with Detector.detection_section("step", profile_cuda=False):
                assert client.open == [STEP]          # FT's step is open inside our section
        assert client.open == []
        longest_ms = Detector.core().section_summaries()["step"][Statistic.MAX]
    finally:
        Detector.shutdown()
    # The body is empty and each FT message takes 200 ms: a timer that enclosed them would read
    # >= 400 ms. The 200 ms bound leaves room for scheduling noise on 2 shared cores.
    assert longest_ms < 200.0
    assert client.calls[-1] == ("shutdown",)


def test_options_object_and_dict_are_one_way_in(launcher_env):
    opts = ft.FTOptions(client=FakeClient041(), warmup_iters=0, straggler_action="shutdown")
    by_object = ft.create_bridge("required", opts)
    by_dict = ft.create_bridge("required", client=FakeClient041(), warmup_iters=0,
                               straggler_action="shutdown")
    assert by_object.options is opts
    assert by_dict.options == ft.FTOptions(client=by_dict.client, warmup_iters=0,
                                           straggler_action="shutdown")
    assert by_object.straggler_action == by_dict.straggler_action == "shutdown"
    with pytest.raises(ValueError, match=r"`warmup_iters=-1` must be a non-negative integer"):
        ft.FTOptions(warmup_iters=-1)
    with pytest.raises(ValueError, match=r"pass one or the other"):
        FTBridge("auto", opts, warmup_iters=1)
    with pytest.raises(ValueError, match=r"`ft_options=3` must be None, a dict or a "
                                         r"straggler\.options\.FTOptions"):
        FTBridge("auto", 3)


def test_ft_sections_modes_are_defined_once():
    from straggler import _constants, detector_options

    assert detector_options.FT_SECTIONS_MODES is ft.FT_SECTIONS_MODES \
        is _constants.FT_SECTIONS_MODES
