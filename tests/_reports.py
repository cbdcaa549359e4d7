"""Hand-made gathered reports for the cause rules and the report annotator (no process group)."""

from __future__ import annotations

from straggler.reporting.report import Report, StragglerId

HEALTHY = {"nvml_samples": 60.0, "sm_clock_mhz_mean": 1980.0, "sm_clock_max_mhz": 1980.0,
           "gpu_temp_c_max": 60.0, "power_w_mean": 450.0, "power_limit_w": 700.0,
           "reason_idle_frac": 0.0, "reason_sw_power_cap_frac": 0.0,
           "reason_hw_slowdown_frac": 0.0, "reason_sw_thermal_frac": 0.0,
           "reason_hw_thermal_frac": 0.0, "reason_hw_power_brake_frac": 0.0,
           "reason_applications_clocks_frac": 0.0, "power_violation_frac": 0.0,
           "thermal_violation_frac": 0.0, "pcie_gen_mean": 5.0, "pcie_gen_limit": 5.0,
           "pcie_width_mean": 16.0, "pcie_width_limit": 16.0}


def make_report(gpu=None, section=None, telemetry=None, ranks=4, confirmed=(), gpus=None):
    """A gathered report of `ranks` ranks; scores default to 1.0, telemetry to HEALTHY."""
    gpu_scores = {r: 1.0 for r in range(ranks)} | (gpu or {})
    sec_scores = {r: 1.0 for r in range(ranks)} | (section or {})
    tel = {r: dict(HEALTHY) for r in range(ranks)}
    for r, changes in (telemetry or {}).items():
        if changes is None:
            tel.pop(r)
        else:
            tel[r].update(changes)
    return Report(
        gpu_relative_perf_scores=gpu_scores, section_relative_perf_scores={"step": sec_scores},
        gpu_individual_perf_scores={}, section_individual_perf_scores={},
        rank_to_node={r: f"node{r}" for r in range(ranks)}, local_section_summaries={},
        local_kernel_summaries={}, generate_report_elapsed_time=1.0, gather_on_rank0=True,
        rank=0, rank_telemetry=tel, confirmed=frozenset(StragglerId(r, f"node{r}")
                                                        for r in confirmed),
        gpus=gpus or {})
