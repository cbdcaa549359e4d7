"""Each cause rule on hand-made reports (pure: no process group, no library)."""

from __future__ import annotations

import dataclasses

import pytest
from straggler.analysis.causes import Cause, CauseRules, Diagnosis, diagnose, flagged_ranks
from straggler.analysis.waits import Culprit
from straggler.reporting.report import Report
from straggler.telemetry.nvml import GpuIdentity

from _reports import make_report as _report


def _cause(report, rank, **kwargs):
    return diagnose(report, **kwargs)[rank].cause


def test_clean_report_has_no_causes():
    assert diagnose(_report()) == {}


def test_thermal_throttling_from_reasons_or_violation_time():
    by_reason = _report(gpu={2: 0.4}, telemetry={2: {"reason_sw_thermal_frac": 0.8,
                                                     "gpu_temp_c_max": 91.0}})
    d = diagnose(by_reason)[2]
    assert d.cause is Cause.GPU_THERMAL_THROTTLING
    assert "80% of the window thermally throttled (peers 0%)" in d.evidence and "91 C" in d.evidence
    by_counter = _report(gpu={2: 0.4}, telemetry={2: {"thermal_violation_frac": 0.5}})
    assert _cause(by_counter, 2) is Cause.GPU_THERMAL_THROTTLING


def test_power_capping_is_blamed_only_above_what_the_peers_share():
    mine = _report(gpu={1: 0.5}, telemetry={1: {"reason_sw_power_cap_frac": 0.9}})
    assert _cause(mine, 1) is Cause.GPU_POWER_CAPPING
    # Every GPU at its power cap under a heavy load: the cap does not explain rank 1.
    everyone = _report(gpu={1: 0.5}, telemetry={r: {"reason_sw_power_cap_frac": 0.9}
                                                for r in range(4)})
    assert _cause(everyone, 1) is Cause.GPU_SLOW_HEALTHY_TELEMETRY


def test_hw_slowdown_alone_has_its_own_label():
    report = _report(gpu={3: 0.3}, telemetry={3: {"reason_hw_slowdown_frac": 1.0}})
    assert _cause(report, 3) is Cause.GPU_HW_SLOWDOWN


def test_low_clocks_without_a_reason_and_with_another_reason():
    bare = diagnose(_report(gpu={0: 0.6}, telemetry={0: {"sm_clock_mhz_mean": 1100.0}}))[0]
    assert bare.cause is Cause.GPU_CLOCKS_LOW
    assert "1100 MHz vs 1980 MHz (peers' median), no reason reported" in bare.evidence
    app = diagnose(_report(gpu={0: 0.6}, telemetry={0: {
        "sm_clock_mhz_mean": 1100.0, "reason_applications_clocks_frac": 1.0}}))[0]
    assert app.cause is Cause.GPU_CLOCKS_LOW and "applications_clocks" in app.evidence
    # Idle most of the window: low clocks are the GPU resting, not a fault.
    idle = _report(gpu={0: 0.6}, telemetry={0: {"sm_clock_mhz_mean": 300.0,
                                                "reason_idle_frac": 0.9}})
    assert _cause(idle, 0) is Cause.GPU_SLOW_HEALTHY_TELEMETRY


def test_degraded_pcie_link_below_max_and_below_peers():
    narrow = _report(section={1: 0.5}, telemetry={1: {"pcie_width_mean": 4.0}})
    d = diagnose(narrow)[1]
    assert d.cause is Cause.PCIE_LINK_DEGRADED and "x4 of x16, peers x16" in d.evidence
    # A platform whose links all run at gen 4: not a degraded link.
    platform = _report(gpu={1: 0.5}, telemetry={r: {"pcie_gen_mean": 4.0} for r in range(4)})
    assert _cause(platform, 1) is Cause.GPU_SLOW_HEALTHY_TELEMETRY


def test_host_side_when_sections_are_slow_and_gpu_timers_normal():
    d = diagnose(_report(section={3: 0.3}))[3]
    assert d.cause is Cause.HOST_SIDE
    assert "section 'step' score 0.30 while the GPU score is 1.00" in d.evidence
    # Host side wins over GPU telemetry oddities when the GPU timers are normal.
    hot = _report(section={3: 0.3}, telemetry={3: {"reason_sw_thermal_frac": 1.0}})
    assert _cause(hot, 3) is Cause.HOST_SIDE


def test_host_stall_on_a_shared_gpu_is_host_side_not_more_work():
    # Measured on one H100 shared by 4 ranks (examples/demo.py --gpu --gpu-slow host): the
    # stalled rank's host section scores 0.34 while time-slicing dips its GPU score to 0.6-0.8.
    # The host lost far more than the GPU: host_side, whatever the probe says.
    for gpu in (0.61, 0.8):
        report = _report(gpu={2: gpu}, section={2: 0.34})
        d = diagnose(report, probe={0: 1.0, 1: 1.0, 2: 1.0, 3: 1.0})[2]
        assert d.cause is Cause.HOST_SIDE, d
        assert f"score 0.34 while the GPU score is {gpu:.2f}" in d.evidence
    # More GPU work slows the GPU-timed section as much as the GPU score: not the host's.
    report = _report(gpu={2: 0.25}, section={2: 0.24})
    assert _cause(report, 2, probe={0: 1.0, 1: 1.0, 2: 1.0, 3: 1.0}) is Cause.MORE_WORK
    # The ratio is a rule like the others: at 0.4, 0.34 vs 0.8 is no longer host-dominated.
    report = _report(gpu={2: 0.8}, section={2: 0.34})
    assert _cause(report, 2, rules=CauseRules(host_ratio=0.4)) is \
        Cause.GPU_SLOW_HEALTHY_TELEMETRY


def test_probe_separates_a_slow_gpu_from_a_rank_with_more_work():
    report = _report(gpu={1: 0.4, 2: 0.4})
    causes = diagnose(report, probe={0: 1.0, 1: 0.45, 2: 1.0, 3: 1.0})
    assert causes[1].cause is Cause.GPU_SLOW_PROBE_CONFIRMED
    assert causes[2].cause is Cause.MORE_WORK
    assert causes[1].values["probe_relative"] == 0.45
    # In between the two thresholds the probe is inconclusive: back to the telemetry verdict.
    assert _cause(report, 1, probe={1: 0.92}) is Cause.GPU_SLOW_HEALTHY_TELEMETRY


def test_unknown_is_honest():
    no_nvml = diagnose(_report(gpu={2: 0.3}, telemetry={2: None}))[2]
    assert no_nvml.cause is Cause.UNKNOWN and "no NVML telemetry" in no_nvml.evidence
    report = _report(section={2: 0.3})
    no_gpu_timer = Report(**{**report.__dict__, "gpu_relative_perf_scores": {}})
    assert _cause(no_gpu_timer, 2) is Cause.UNKNOWN
    # Confirmed by the policy on earlier reports, nothing slow in this one.
    policy_only = diagnose(_report(confirmed=[1]))[1]
    assert policy_only.cause is Cause.UNKNOWN and "persistence policy" in policy_only.evidence


def test_a_mildly_slow_confirmed_rank_names_the_policys_metric_and_its_score():
    # A 10 % straggler scores about 0.91, above slow_score: the policy confirmed it on a
    # section, and the evidence says so instead of guessing at earlier reports.
    from straggler.analysis.policy import RankState

    report = _report(section={2: 0.92}, confirmed=[2])
    state = RankState(rank=2, confirmed=True, reasons={"section:step": "relative"},
                      slow_reports={"section:step": 3}, healthy_streak=0)
    report = Report(**{**report.__dict__, "straggler_states": {2: state}})
    evidence = diagnose(report)[2].evidence
    assert evidence.startswith("confirmed by the persistence policy on section:step (relative)")
    assert "section 'step' 0.92" in evidence and "slow_score=0.9" in evidence
    assert "?" not in evidence


def test_a_slow_section_without_gpu_timers_quotes_why_the_rank_has_none():
    report = _report(section={2: 0.3}, telemetry={2: None})
    no_gpu_timer = Report(**{**report.__dict__, "gpu_relative_perf_scores": {}})
    why = "no usable CUDA device: cannot load the CUDA driver 'libcuda.so.1'"
    told = diagnose(no_gpu_timer, no_gpu_timers={2: why})[2]
    assert told.cause is Cause.UNKNOWN
    assert f"no GPU timers on this rank to tell host from GPU time ({why})" in told.evidence
    # Not told: the possible reasons, never advice to set what may already be set.
    untold = diagnose(no_gpu_timer)[2].evidence
    assert "profile_cuda=False, or it has no usable CUDA device" in untold
    assert "use profile_cuda=True" not in untold


def test_diagnosis_carries_the_gpu_identity_and_formats_a_line():
    gpu = GpuIdentity("NVIDIA H100", "GPU-abc", "1650", "0000:3B:00.0", "555.42")
    report = _report(gpu={1: 0.4}, telemetry={1: {"reason_sw_thermal_frac": 1.0}},
                     gpus={1: gpu})
    report = Report(**{**report.__dict__, "causes": diagnose(report)})
    assert isinstance(report.causes[1], Diagnosis) and report.causes[1].gpu == gpu
    line = report.format_causes()
    assert line.startswith("rank 1 (node1, NVIDIA H100 (GPU-abc, serial 1650, PCI 0000:3B:00.0, "
                           "driver 555.42)): gpu_thermal_throttling: 100% of the window")
    as_dict = report.causes[1].as_dict()
    assert as_dict["cause"] == "gpu_thermal_throttling" and as_dict["gpu"]["uuid"] == "GPU-abc"
    assert as_dict["values"]["peers_throttled_share"] == 0.0
    table = report.format_table()
    assert "cause" in table.splitlines()[1] and "gpu_thermal_throttling" in table
    assert "sm_clock_mhz_mean" in table and "reason_sw_thermal_frac" not in table


def test_flagged_ranks_are_the_nvrx_rule_plus_the_policy():
    assert flagged_ranks(_report(gpu={1: 0.5}, section={2: 0.7}, confirmed=[3])) == {1, 2, 3}


def test_rules_are_validated():
    with pytest.raises(ValueError, match=r"`clock_ratio=1.5` must be a number in \(0, 1\]"):
        CauseRules(clock_ratio=1.5)
    with pytest.raises(ValueError, match=r"`throttle_margin=-0\.1`"):
        CauseRules(throttle_margin=-0.1)
    assert _cause(_report(gpu={1: 0.95}), 1, rules=CauseRules(slow_score=0.99),
                  flagged=[1]) is Cause.GPU_SLOW_HEALTHY_TELEMETRY


def test_a_slow_data_loading_section_is_host_side_with_or_without_gpu_timers():
    """The attach's `dataloader` section times each DataLoader batch on the host: slow there
    is slow data loading, even where no GPU timer tells host from GPU time (README's
    `straggler run` example read `unknown`)."""
    report = _report(section={2: 0.3}, telemetry={2: None})
    sections = {"dataloader": {0: 1.0, 1: 1.0, 2: 0.01, 3: 1.0},
                "step": report.section_relative_perf_scores["step"]}
    cpu = Report(**{**report.__dict__, "gpu_relative_perf_scores": {},
                    "section_relative_perf_scores": sections})
    d = diagnose(cpu)[2]
    assert d.cause is Cause.HOST_SIDE, d
    assert d.evidence.startswith("section 'dataloader' score 0.01: loading its batches")
    assert "input pipeline" in d.evidence
    # Thermal telemetry on a rank without GPU timers does not explain a data-loading section.
    hot = Report(**{**cpu.__dict__, "rank_telemetry": _report(
        telemetry={2: {"reason_sw_thermal_frac": 1.0}}).rank_telemetry})
    assert _cause(hot, 2) is Cause.HOST_SIDE
    # Another section slow without GPU timers stays unknown; a slow GPU keeps the GPU rules.
    assert _cause(Report(**{**report.__dict__, "gpu_relative_perf_scores": {}}), 2) \
        is Cause.UNKNOWN
    gpu = _report(gpu={2: 0.3})
    gpu_slow = Report(**{**gpu.__dict__, "section_relative_perf_scores": {"dataloader": {2: 0.25}}})
    assert _cause(gpu_slow, 2) is Cause.GPU_SLOW_HEALTHY_TELEMETRY


def _with_tiny_section(report, individual, medians_ms=None):
    """``report`` plus a long `step` (50 ms) and a `zero_grad` of microseconds (10 us) whose
    individual scores are ``individual`` (a user trial: such a section's job-wide dips labelled
    a slow GPU `host_side` and listed healthy ranks with causes)."""
    ranks = list(report.rank_to_node)
    step = {r: 50.0 for r in ranks}
    return Report(**{**report.__dict__,
                     "section_individual_perf_scores": {"zero_grad": individual},
                     "section_medians_ms": {"step": step,
                                            "zero_grad": medians_ms or {r: 0.01 for r in ranks}}})


def test_a_negligible_section_neither_flags_a_rank_nor_drives_its_cause():
    dipped = {0: 0.45, 1: 0.4, 2: 0.42, 3: 0.45}  # microseconds: every rank dips
    healthy = _with_tiny_section(_report(), dipped)
    assert flagged_ranks(healthy) == set()
    assert diagnose(healthy) == {}  # no healthy rank listed with a cause
    # A GPU clearly slower than its peers, its sections not slower: a GPU cause, not host_side.
    slow_gpu = _with_tiny_section(_report(gpu={1: 0.7}), dipped)
    assert flagged_ranks(slow_gpu) == {1}
    assert _cause(slow_gpu, 1) is Cause.GPU_SLOW_HEALTHY_TELEMETRY
    # The same section grown to matter on the rank (6 ms of 50 ms) counts again.
    grown = _with_tiny_section(_report(gpu={1: 0.7}), {0: 1.0, 1: 0.002, 2: 1.0, 3: 1.0},
                               {0: 0.01, 1: 6.0, 2: 0.01, 3: 0.01})
    assert _cause(grown, 1) is Cause.HOST_SIDE
    assert _cause(grown, 1, rules=CauseRules(min_section_share=0.2)) \
        is Cause.GPU_SLOW_HEALTHY_TELEMETRY
    with pytest.raises(ValueError, match=r"`min_section_share=1\.5`"):
        CauseRules(min_section_share=1.5)


def test_a_section_dip_the_peers_share_is_not_host_side():
    """A 1.1x slower GPU (score 0.909) confirmed by the policy in a report where every rank's
    `step` individual score dipped to 0.8 (a loaded machine): its host is no slower than its
    peers', so it is not `host_side` (it was)."""
    report = _report(gpu={1: 0.909}, confirmed=[1])
    dipped = Report(**{**report.__dict__, "section_relative_perf_scores": {},
                       "section_individual_perf_scores": {"step": {0: 0.8, 1: 0.79, 2: 0.8,
                                                                   3: 0.81}}})
    d = diagnose(dipped, flagged=[1])[1]
    assert d.cause is Cause.UNKNOWN and "no score of this report is below" in d.evidence, d
    # Slower than its peers in the section: host_side as before.
    alone = Report(**{**dipped.__dict__, "section_individual_perf_scores": {
        "step": {0: 0.8, 1: 0.5, 2: 0.8, 3: 0.81}}})
    assert _cause(alone, 1, flagged=[1]) is Cause.HOST_SIDE


def test_a_culprit_stays_late_outside_compute_when_a_negligible_section_dips():
    """A rank sleeping outside its sections (a culprit at the collectives) kept its label only
    while no section of microseconds happened to dip below slow_score."""
    report = dataclasses.replace(
        _with_tiny_section(_report(), {0: 0.95, 1: 0.4, 2: 0.97, 3: 0.96}),
        culprits=(Culprit(1, 0.77, 0.07, ()),))
    d = diagnose(report)[1]
    assert d.cause is Cause.LATE_OUTSIDE_COMPUTE, d
