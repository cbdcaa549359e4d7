"""The simulator path (one process standing in for a world) agrees with real gloo ranks."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import simulator

from _multirank import run_ranks

REPORTS = 6


def _samples(world: int, name: str = "slow_from_start", seed: int = 0):
    return list(simulator.generate(simulator.scenario(name), world, REPORTS, seed, gpu_timers=4))


def _essentials(report) -> dict:
    return {
        "gpu_rel": dict(report.gpu_relative_perf_scores),
        "gpu_ind": dict(report.gpu_individual_perf_scores),
        "sec_rel": {k: dict(v) for k, v in report.section_relative_perf_scores.items()},
        "sec_ind": {k: dict(v) for k, v in report.section_individual_perf_scores.items()},
        "medians": {k: dict(v) for k, v in report.section_medians_ms.items()},
        "quartiles": {k: dict(v) for k, v in report.section_quartiles_ms.items()},
        "low": {k: dict(v) for k, v in report.section_low_ms.items()},
        "recent": {k: dict(v) for k, v in report.section_recent_ms.items()},
        "nodes": dict(report.rank_to_node),
        "confirmed": sorted((s.rank, s.node) for s in report.confirmed),
    }


def _lockstep_section(rank: int) -> None:
    """One "step" section on each of ranks 0 and 1, rank 1's at least 3x as long as rank 0's
    by construction, however loaded the machine (sleeps only ever overshoot, so two sleeps of
    10 and 30 ms can measure alike).

    Rank 1 opens its section, lets rank 0 run its whole section (``d0`` s, timed around it, so
    at least what the detector measured), then sleeps ``2 * d0`` before it closes its own.
    """
    import time

    import torch
    import torch.distributed as dist
    from straggler import Detector

    if rank == 1:
        d0 = torch.zeros(1, dtype=torch.float64)
        with Detector.detection_section("step", profile_cuda=False):
            dist.send(torch.zeros(1), dst=0)  # rank 0 may start its section now ...
            dist.recv(d0, src=0)  # ... and it has ended, d0 s long
            time.sleep(2 * d0.item())
    else:
        dist.recv(torch.zeros(1), src=1)
        t0 = time.monotonic()
        with Detector.detection_section("step", profile_cuda=False):
            time.sleep(0.01)
        dist.send(torch.tensor([time.monotonic() - t0], dtype=torch.float64), dst=1)


def _real_rank(rank: int, world_size: int) -> tuple[list[dict], list] | None:
    """One gloo rank: the real ReportGenerator over the real Comm, fed this rank's samples;
    then the Detector end to end, rank 1 at least three times slower in its section."""
    from straggler import Detector
    from straggler.analysis.policy import PolicyConfig
    from straggler.dist.comm import Comm
    from straggler.reporting.generator import ReportGenerator

    comm = Comm.create(timeout_s=60)
    gen = ReportGenerator("all", True, node_name=simulator.node_name(rank), comm=comm,
                          policy=True)
    out = []
    for sample in _samples(world_size):
        report = gen.generate_report(sample.section_summaries(rank), sample.gpu_summaries(rank),
                                     section_quartiles=sample.section_quantiles(rank))
        if rank == 0:
            out.append(_essentials(report))
        else:
            assert report is None
    comm.close()

    # Rank 1 >= 3x slower in every section (_lockstep_section); k=2 of n=2 keeps the run short.
    Detector.initialize(report_time_interval=3600, node_name=simulator.node_name(rank),
                        telemetry=False, policy=PolicyConfig(rule="k_of_n", k=2, n=2,
                                                            structure_warmup=1),
                        roles={0: "a", 1: "a"})
    confirmed = []
    try:
        for _ in range(3):
            for _ in range(4):
                _lockstep_section(rank)
            report = Detector.generate_report()
            if rank == 0:
                confirmed.append(sorted(s.rank for s in report.confirmed))
    finally:
        Detector.shutdown()
    return (out, confirmed) if rank == 0 else None


def _assert_same(a: dict, b: dict) -> None:
    assert a["nodes"] == b["nodes"]
    assert a["confirmed"] == b["confirmed"]
    for key in ("gpu_rel", "gpu_ind"):
        assert a[key].keys() == b[key].keys()
        for r in a[key]:
            assert a[key][r] == pytest.approx(b[key][r], rel=1e-12, nan_ok=True)
    for key in ("sec_rel", "sec_ind", "medians", "quartiles", "low", "recent"):
        assert a[key].keys() == b[key].keys()
        for name in a[key]:
            assert a[key][name].keys() == b[key][name].keys()
            for r, v in a[key][name].items():
                assert v == pytest.approx(b[key][name][r], rel=1e-12, nan_ok=True)


@pytest.mark.multirank
def test_simulated_world_gives_the_report_real_gloo_ranks_give():
    world = 2  # the other rank is the peer median; spawning more costs time, not coverage
    real, detector_confirmed = run_ranks(_real_rank, world, timeout_s=120)[0]
    sim = simulator.SimWorld(world, policy=True)
    simulated = [_essentials(sim.report(s)) for s in _samples(world)]
    assert len(real) == len(simulated) == REPORTS
    for r, s in zip(real, simulated, strict=True):
        _assert_same(r, s)
    # The injected straggler (20 % slower from the start) is confirmed on both paths.
    truth = _samples(world)[0].truth
    assert {rank for rank, _ in real[-1]["confirmed"]} == set(truth)
    # Through the Detector: confirmed after two slow reports (k=2), never before.
    assert detector_confirmed == [[], [1], [1]]


def test_detector_rejects_a_bad_policy_and_stays_uninitialized():
    from straggler import Detector

    with pytest.raises(ValueError, match=r"`policy='yes'` must be True, False, None"):
        Detector.initialize(policy="yes", telemetry=False)
    assert not Detector.initialized


def test_detector_alone_confirms_its_own_slowdown_by_the_individual_rule():
    import time

    from straggler import Detector
    from straggler.analysis.policy import PolicyConfig

    # One process: no peers, so the decaying personal baseline is the only reference.
    Detector.initialize(report_time_interval=3600, telemetry=False,
                        policy=PolicyConfig(k=2, n=2, noise_z=0.0))
    try:
        confirmed = []
        for i in range(6):
            for _ in range(3):
                with Detector.detection_section("step", profile_cuda=False):
                    time.sleep(0.005 if i < 3 else 0.03)  # 6x slower from report 3
            confirmed.append(bool(Detector.generate_report().confirmed))
    finally:
        Detector.shutdown()
    assert confirmed == [False, False, False, False, True, True]


def test_simulator_confirms_a_slow_node_in_a_large_world():
    world = 2048
    sim = simulator.SimWorld(world, policy=True)
    samples = list(simulator.generate(simulator.scenario("slow_node"), world, 12, seed=1,
                                      gpu_timers=4))
    reports = [sim.report(s) for s in samples]
    assert {s.rank for s in reports[-1].confirmed} == set(samples[-1].truth)
    assert len(samples[-1].truth) == simulator.GPUS_PER_NODE
    assert all(not r.confirmed for r in reports[:simulator.ONSET])


def test_nvrx_rule_flags_one_report_below_075():
    sim = simulator.SimWorld(16)
    sample = next(simulator.generate(simulator.scenario("slow50"), 16, 1, seed=0))
    assert simulator.nvrx_flags(sim.report(sample)) == frozenset()  # onset at report 8
    samples = list(simulator.generate(simulator.scenario("slow_from_start"), 16, 1, seed=0))
    assert simulator.nvrx_flags(sim.report(samples[0])) == frozenset()  # 20 %: score 0.83


def test_unknown_scenario_is_rejected_with_the_names():
    with pytest.raises(ValueError, match=r"`scenario='nope'` must be one of \["):
        simulator.scenario("nope")


def test_quality_quick_run_prints_both_rules(capsys):
    import quality

    assert quality.main(["--quick", "--no-sweep", "--no-large", "--scenarios", "clean",
                         "slow50"]) == 0
    out = capsys.readouterr().out
    assert "| slow50 | ours (default policy) | 1.00 | 1.00 | 0.0 |" in out
    assert "| slow50 | NVRx rule, 0.75 |" in out
    # Column 3 of the clean row: false alarms per 1,000 reports, a number.
    assert not math.isnan(float(out.split("| clean | ours (default policy) |")[1].split("|")[2]))


def test_report_generator_state_dict_carries_the_policy():
    from straggler.reporting.generator import ReportGenerator

    world = 64
    samples = list(simulator.generate(simulator.scenario("slow_from_start"), world, 4, seed=2,
                                      gpu_timers=4))
    sim = simulator.SimWorld(world, policy=True)
    confirmed = [sim.report(s).confirmed for s in samples][-1]
    assert confirmed
    state = sim.generator.state_dict()
    fresh = ReportGenerator("all", True, node_name="n0", policy=True)
    fresh.load_state_dict(state)
    assert {s.rank for s in confirmed} == fresh.policy.confirmed


def test_the_simulators_real_noise_model_is_fitted_to_the_recorded_traces_and_matches_them():
    import numpy as np
    import replay

    traces = replay.traces()
    fitted = replay.fit_noise(traces, 5.0)
    model = simulator.REAL_CPU_GLOO
    assert fitted["tail_df"] == model.tail_df
    assert fitted["jitter"] == pytest.approx(model.jitter, rel=0.1)
    assert fitted["rank_offset"] == pytest.approx(model.rank_offset, rel=0.1)
    # The simulated reports' log ratios to the peers have the real ones' spread and tails.
    samples = simulator.generate(simulator.scenario("clean"), 4, 400, 0, gpu_timers=2,
                                 noise=model)
    logs = np.log(np.stack([s.section_med[:, 0] for s in samples], axis=1))
    sim = np.stack([logs[r] - np.median(np.delete(logs, r, axis=0), axis=0) for r in range(4)])
    real = np.concatenate([replay.log_ratios(t, 5.0, s).ravel() for t in traces
                           for s in replay.SCORED])
    for q in (50, 95):
        assert np.percentile(np.abs(sim), q) == pytest.approx(np.percentile(np.abs(real), q),
                                                              rel=0.35)
    assert replay.tail_ratio(sim) > 3.2 and replay.tail_ratio(real) > 3.2  # Gaussian: 2.9
