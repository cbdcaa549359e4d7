"""Detector across ranks (spawned processes on gloo): who gets flagged, on which group, and
what happens when a peer dies.

Timing is injected with sleeps of 50 ms vs 150 ms (a 3x effect), so a slow rank scores about
1/3 and a healthy one stays far above the 0.75 threshold. Under CPU contention a sleep
overshoots by the wake-up latency, a few ms and more (at load ~18 on 2 cores: ~9 ms in the
median of 5 sleeps, which put a healthy rank sleeping 20 ms at 0.70); the overshoot adds, so
longer sleeps keep it small beside them. No test asserts a speed.
"""

from __future__ import annotations

import os
import time

import pytest
from straggler import Statistic, StragglerId

from _multirank import run_ranks

pytestmark = pytest.mark.multirank

FAST_S, SLOW_S = 0.050, 0.150


def _window(steps, sleep_s, extra=None):
    from straggler import Detector

    for _ in range(steps):
        with Detector.detection_section("compute", profile_cuda=False):
            time.sleep(sleep_s)
        if extra:
            with Detector.detection_section(extra, profile_cuda=False):
                time.sleep(0.002)
    return Detector.generate_report()


def _phases(rank, world_size):
    """One spawn, several scenarios in a row (spawning ranks is the expensive part):

    three host-time windows (clean; rank 1 slow; rank 2 slow in the last one only), a window of
    simulated GPU work (SIMCUDA_SLOWDOWN=3 on rank 1), then a detector on the subgroup {1, 2}
    where global rank 2 is slow.
    """
    import torch.distributed as dist
    from straggler import Detector

    from sim.simcuda import SimCuda

    Detector.initialize(node_name=f"node{rank}", report_time_interval=0, comm_timeout_s=30)
    only0 = "only-on-rank0" if rank == 0 else None
    clean = _window(5, FAST_S, only0)
    rank1 = _window(5, SLOW_S if rank == 1 else FAST_S, only0)
    rank2 = _window(5, SLOW_S if rank == 2 else FAST_S, only0)

    sim = SimCuda()
    for _ in range(6):
        with Detector.detection_section("step"):
            # 40 ms of "kernel" on the default stream (x slowdown). A step's GPU time is its
            # work plus any time the stream sat idle inside the section: a host descheduled
            # past the queued work (10 ms kernels at load ~10 measured rank 1 at 0.19, not 1/3).
            sim.kernel(Detector.core().engine, 0, 40.0)
    gpu = (Detector.generate_report(), Detector.core().engine.backend, sim.slowdown)
    Detector.shutdown()

    group = dist.new_group([1, 2])  # every rank calls new_group; only members use it
    sub = None
    if rank != 0:
        Detector.initialize(process_group=group, node_name=f"node{rank}",
                            report_time_interval=0, comm_timeout_s=30)
        sub = _window(5, SLOW_S if rank == 2 else FAST_S)
        Detector.shutdown()
    return clean, rank1, rank2, gpu, sub


@pytest.fixture(scope="module")
def phases():
    from sim.simcuda import LIBCUDA

    if not LIBCUDA.exists():
        pytest.fail(f"{LIBCUDA} is missing: run `make sim`")
    return run_ranks(_phases, 3, timeout_s=150, env={"STRAGGLER_LIBCUDA": str(LIBCUDA)},
                     rank_env={1: {"SIMCUDA_SLOWDOWN": "3"}})


def test_only_the_first_rank_gets_the_gathered_reports(phases):
    assert all(r is not None for r in phases[0][:3]) and phases[0][3][0] is not None
    assert phases[1][:3] == (None, None, None) and phases[2][:3] == (None, None, None)
    assert phases[0][0].rank_to_node == {0: "node0", 1: "node1", 2: "node2"}


def test_clean_window_flags_nobody(phases):
    found = phases[0][0].identify_stragglers()
    assert not found["straggler_sections_relative"]
    assert not found["straggler_sections_individual"]
    assert not found["straggler_gpus_relative"] and not found["straggler_gpus_individual"]


def test_straggler_is_named_with_its_node(phases):
    report = phases[0][1]
    found = report.identify_stragglers()
    assert found["straggler_sections_relative"] == {"compute": {StragglerId(1, "node1")}}
    assert report.section_relative_perf_scores["compute"][1] < 0.6


def test_individual_slowdown_is_detected_in_a_later_window(phases):
    found = phases[0][2].identify_stragglers()
    assert StragglerId(2, "node2") in found["straggler_sections_individual"]["compute"]
    assert StragglerId(1, "node1") not in found["straggler_sections_individual"]["compute"]


def test_section_present_on_some_ranks_only_is_scored_where_it_exists(phases):
    report = phases[0][1]
    scores = report.section_relative_perf_scores
    # The shared section is scored on every rank, unaffected by the one-rank section.
    assert set(scores["compute"]) == {0, 1, 2}
    assert scores["compute"][0] > 0.75 and scores["compute"][2] > 0.75
    # The one-rank section is never flagged.
    assert "only-on-rank0" not in report.identify_stragglers()["straggler_sections_relative"]


def _no_gather(rank, world_size):
    """gather_on_rank0=False, individual-only reports driven by the interval tracker."""
    from straggler import Detector

    Detector.initialize(gather_on_rank0=False, report_time_interval=0.4, node_name=f"n{rank}",
                        comm_timeout_s=30)
    reports = []
    for i in range(1, 21):
        with Detector.detection_section("compute", profile_cuda=False):
            time.sleep(SLOW_S if rank == 1 else FAST_S)
        report = Detector.generate_report_if_interval_elapsed()
        if report is not None:
            reports.append((i, report))
    Detector.shutdown()
    return reports


def test_gather_on_rank0_false_gives_each_rank_its_own_report_on_the_same_iteration():
    results = run_ranks(_no_gather, 3, timeout_s=120)
    iterations = [[i for i, _ in reports] for reports in results]
    assert iterations[0] and iterations[0] == iterations[1] == iterations[2]
    for rank, reports in enumerate(results):
        for _, report in reports:
            assert report.rank == rank and report.rank_to_node == {rank: f"n{rank}"}
            assert set(report.section_relative_perf_scores["compute"]) == {rank}
    # Relative scores still compare with the group: rank 1 is slow in its own report.
    assert results[1][0][1].section_relative_perf_scores["compute"][1] < 0.6
    assert results[0][0][1].section_relative_perf_scores["compute"][0] > 0.75


def test_subgroup_without_rank0_reports_on_its_first_rank_with_global_ranks(phases):
    assert phases[0][4] is None and phases[2][4] is None
    report = phases[1][4]
    assert report.rank == 1 and report.rank_to_node == {1: "node1", 2: "node2"}
    found = report.identify_stragglers()
    assert found["straggler_sections_relative"] == {"compute": {StragglerId(2, "node2")}}


def _dead_peer(rank, world_size):
    import logging

    from straggler import Detector

    Detector.initialize(report_time_interval=0, comm_timeout_s=5)
    _window(2, FAST_S)  # one good report first
    if rank == 2:
        os._exit(0)  # dies before the next report
    with Detector.detection_section("compute", profile_cuda=False):
        time.sleep(FAST_S)
    errors = []

    class Catch(logging.Handler):
        def emit(self, record):
            errors.append(record.getMessage())

    logging.getLogger("straggler").addHandler(Catch(logging.ERROR))
    start = time.monotonic()
    report = Detector.generate_report()
    elapsed = time.monotonic() - start
    again = Detector.generate_report()
    with Detector.detection_section("compute", profile_cuda=False):  # still harmless
        pass
    enabled = Detector.core().enabled
    Detector.shutdown()
    return report, again, elapsed, enabled, len(errors)


def test_dead_peer_during_a_report_makes_survivors_return_none_promptly():
    results = run_ranks(_dead_peer, 3, timeout_s=120, may_die=[2])
    for report, again, elapsed, enabled, n_errors in results[:2]:
        assert report is None and again is None and not enabled
        assert n_errors == 1  # logged once
        assert elapsed < 25  # bounded by comm_timeout_s=5 (plus slack for a loaded machine)


def test_gpu_scores_through_the_simulated_driver_flag_only_the_slow_gpu(phases):
    assert [p[3][1] for p in phases] == ["cuda"] * 3
    assert [p[3][2] for p in phases] == [1.0, 3.0, 1.0]  # SIMCUDA_SLOWDOWN per rank
    report = phases[0][3][0]
    assert report.gpu_relative_perf_scores[1] == pytest.approx(1 / 3, rel=0.2)
    found = report.identify_stragglers()
    assert found["straggler_gpus_relative"] == {StragglerId(1, "node1")}
    assert "step" in report.local_kernel_summaries


def _per_op(rank, world_size):
    """Per-op capture around a DDP step with an explicit all_reduce inside the section."""
    import torch
    import torch.distributed as dist
    from straggler import Detector

    torch.manual_seed(0)
    Detector.initialize(per_op_capture=True, report_time_interval=0, comm_timeout_s=30,
                        node_name=f"node{rank}")
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(32, 8))
    x = torch.randn(16, 32)
    for _ in range(3):
        with Detector.detection_section("step"):
            model(x).sum().backward()
            dist.all_reduce(torch.ones(4))
    report = Detector.generate_report()
    Detector.shutdown()
    return report


def test_per_op_capture_times_compute_ops_and_never_collectives():
    # No CUDA driver at all: the engine's host backend times the ops (their CPU time).
    results = run_ranks(_per_op, 2, timeout_s=120,
                        env={"STRAGGLER_LIBCUDA": "/nonexistent/libcuda.so.1"})
    report = results[0]
    names = list(report.local_kernel_summaries)
    # The C++ observer (straggler._ops) sees outermost ops (aten.linear), the Python fallback
    # the ops after autograd (aten.addmm).
    addmm = [n for n in names if n.startswith(("aten.addmm.default(", "aten.linear.default("))]
    assert report.local_kernel_summaries[addmm[0]][Statistic.MED] > 0
    assert any("float32" in n for n in addmm), names
    assert any(n.startswith("aten.mm.default(") for n in names), names  # backward ops too
    assert not any("c10d" in n or "allreduce" in n.lower() for n in names), names
    assert "step" not in names  # the section's own GPU timer holds the all-reduce: left out
    assert set(report.gpu_relative_perf_scores) == {0, 1}
