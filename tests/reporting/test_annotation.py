"""What completes a report: the policy's decision (apply_policy) and the ReportAnnotator (GPU
identities once, the probe on suspects, causes).

A fake communicator stands in for the group (its collectives return what the peers would send)
so each collective can be counted; the probe runs on the simulated driver.
"""

from __future__ import annotations

import logging

import pytest
from _reports import make_report as _report

from straggler.analysis.causes import Cause, CauseRules
from straggler.analysis.policy import PolicyConfig, StragglerPolicy
from straggler.reporting import annotation
from straggler.reporting.annotation import ReportAnnotator, apply_policy
from straggler.reporting.report import StragglerId
from straggler.telemetry.nvml import GpuIdentity

GPU0 = GpuIdentity("NVIDIA H100", "GPU-0", "s0", "0000:10:00.0", "555")


class FakeComm:
    """Rank 0 of a group of 4; the peers' GPUs are fine and their probe runs at full speed."""

    rank = 0
    global_ranks = (0, 1, 2, 3)

    def __init__(self, peer_wants_probe=False):
        self.calls: list[str] = []
        self.peer_wants_probe = peer_wants_probe

    def all_gather_object(self, obj):
        self.calls.append("all_gather_object")
        return [obj] + [GpuIdentity("NVIDIA H100", f"GPU-{r}", f"s{r}", f"0000:1{r}:00.0",
                                    "555") for r in (1, 2, 3)]

    def all_reduce(self, t, op):
        self.calls.append(f"all_reduce({op})")
        if self.peer_wants_probe:
            t.fill_(1.0)
        return t

    def all_gather(self, t):
        self.calls.append("all_gather")
        # Rank 1's GPU runs the probe at a third of the others' speed.
        return [t, t / 3, t.clone(), t.clone()]


def test_identities_are_gathered_once_and_land_on_the_report():
    comm = FakeComm()
    annotate = ReportAnnotator(comm, lambda: GPU0, gather=True)
    first = annotate(_report(gpu={1: 0.4}))
    second = annotate(_report())
    assert comm.calls == ["all_gather_object"]  # nothing per report after the first
    assert first.gpus[0] == GPU0 and first.gpus[3].uuid == "GPU-3"
    assert first.causes[1].cause is Cause.GPU_SLOW_HEALTHY_TELEMETRY
    assert first.causes[1].gpu.uuid == "GPU-1"
    assert second.causes == {} and second.gpus == first.gpus


def test_without_gathering_a_rank_knows_only_its_own_gpu_and_sends_nothing():
    comm = FakeComm()
    report = ReportAnnotator(comm, GPU0, gather=False)(_report(ranks=1))
    assert comm.calls == [] and report.gpus == {0: GPU0}
    unknown = ReportAnnotator(FakeComm(), GpuIdentity(), gather=False)(_report(ranks=1))
    assert unknown.gpus == {}


def test_ranks_without_a_report_still_join_every_collective():
    comm = FakeComm(peer_wants_probe=True)  # the reporting rank asked for the probe
    annotate = ReportAnnotator(comm, GPU0, gather=True, device=0, probe_suspects=True,
                               probe_options={"repeats": 1})
    assert annotate(None) is None
    assert comm.calls == ["all_gather_object", "all_reduce(max)", "all_gather"]


def test_probe_on_suspects_runs_only_when_a_slow_gpu_is_unexplained(sim_cuda):
    comm = FakeComm()
    annotate = ReportAnnotator(comm, GPU0, gather=True, device=0, probe_suspects=True,
                               probe_options={"repeats": 1})
    throttled = annotate(_report(gpu={1: 0.4}, telemetry={1: {"reason_hw_thermal_frac": 1.0}}))
    assert throttled.causes[1].cause is Cause.GPU_THERMAL_THROTTLING
    assert comm.calls == ["all_gather_object", "all_reduce(max)"]  # explained: no probe
    unexplained = annotate(_report(gpu={1: 0.4}))
    assert comm.calls[2:] == ["all_reduce(max)", "all_gather"]
    assert unexplained.causes[1].cause is Cause.GPU_SLOW_PROBE_CONFIRMED
    assert unexplained.causes[1].values["probe_relative"] == pytest.approx(1 / 3)
    assert annotate.last_probe[1].relative == pytest.approx(1 / 3)


def test_a_diagnosis_error_is_logged_once_and_the_report_goes_on(caplog, monkeypatch):
    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(annotation, "diagnose", broken)
    annotate = ReportAnnotator(FakeComm(), GPU0, gather=True, rules=CauseRules())
    with caplog.at_level(logging.WARNING, logger="straggler"):
        first = annotate(_report(gpu={1: 0.4}))
        annotate(_report(gpu={1: 0.4}))
    assert first.causes == {} and first.gpus[0] == GPU0
    assert caplog.text.count("diagnosing the report's stragglers failed") == 1


class ReasonComm(FakeComm):
    """Rank 0 of 4 whose peers send (identity, why no GPU timers) pairs."""

    def all_gather_object(self, obj):
        self.calls.append("all_gather_object")
        return [obj] + [(None, "no usable CUDA device: no driver")] * 3


def test_why_a_rank_has_no_gpu_timers_rides_with_the_identities_into_the_evidence():
    comm = ReasonComm()
    annotate = ReportAnnotator(comm, lambda: GPU0, gather=True, gpu_timing=lambda: None)
    report = _report(section={2: 0.3}, telemetry={2: None})
    report = annotate(type(report)(**{**report.__dict__, "gpu_relative_perf_scores": {}}))
    assert comm.calls == ["all_gather_object"]
    assert report.gpus == {0: GPU0}
    assert "(no usable CUDA device: no driver)" in report.causes[2].evidence


def test_apply_policy_fills_confirmed_with_nodes_and_keeps_nvrx_fields():
    policy = StragglerPolicy(PolicyConfig(rule="k_of_n", k=1, n=1, learn_structure=False))
    report = _report(gpu={3: 0.5}, ranks=6)
    report = apply_policy(policy, report)
    assert report.confirmed == frozenset({StragglerId(3, "node3")})
    assert report.straggler_states[3].reasons == {"gpu": "relative"}
    assert report.gpu_relative_perf_scores == {r: 1.0 for r in range(6)} | {3: 0.5}
    assert report.identify_stragglers()["straggler_gpus_relative"] == {StragglerId(3, "node3")}
