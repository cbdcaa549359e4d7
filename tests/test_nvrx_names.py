"""NVRx's names beyond the five public classes (docs/nvrx.md): `ReportGenerator`'s signature
and `name_mapper`, `Detector.reporter` and `Detector.report_interval_tracker`, and
`ReportIntervalTracker`'s attribute names. World of one process, no GPU."""

from __future__ import annotations

import pickle

import pytest
from straggler import Detector
from straggler.analysis.statistics import Statistic
from straggler.dist.comm import Comm
from straggler.reporting import ReportGenerator  # NVRx's path
from straggler.timing.interval import ReportIntervalTracker


def summary(med, num=10):
    return {Statistic.MIN: med, Statistic.MAX: med, Statistic.MED: med, Statistic.AVG: med,
            Statistic.STD: 0.0, Statistic.NUM: num}


# -- ReportGenerator ---------------------------------------------------------------------------

def test_report_generator_takes_nvrx_arguments_and_default_node_name():
    gen = ReportGenerator(["individual_perf_scores"], False, None)  # NVRx: pg third
    assert gen.node_name == "<notset>"
    report = gen.generate_report(section_summaries={}, kernel_summaries={"k": summary(2.0)})
    assert report.gpu_individual_perf_scores == {0: 1.0}
    assert report.rank_to_node == {0: "<notset>"}


def test_a_node_name_in_the_pg_place_says_how_to_call_it():
    with pytest.raises(ValueError, match=r"`pg='node0'` must be a torch.distributed.Process"
                                         r"Group or None .*pass node_name= and comm= by keyword"):
        ReportGenerator("all", True, "node0")
    with pytest.raises(ValueError, match=r"`pg=.*` and `comm=.*`: pass one or the other"):
        ReportGenerator("all", True, object(), comm=Comm.create())


def test_name_mapper_is_nvrx_name_mapper_interface():
    gen = ReportGenerator(["relative_perf_scores"], gather_on_rank0=True)
    gen.generate_report(kernel_summaries={"kernel0": summary(1.0), "kernel1": summary(2.0)},
                        section_summaries={"section0": summary(1.0)})
    gen.generate_report(kernel_summaries={"kernel2": summary(1.0)},
                        section_summaries={"section0": summary(1.0), "section1": summary(1.0)})
    mapper = pickle.loads(pickle.dumps(gen.name_mapper))  # NVRx's tests send it to the parent
    assert mapper.kernel_counter == 3 and mapper.section_counter == 2
    assert [mapper.get_kernel_id(f"kernel{i}") for i in range(3)] == [0, 1, 2]
    assert mapper.get_kernel_name(1) == "kernel1" and mapper.get_section_name(1) == "section1"
    assert mapper.id_to_section_name == {0: "section0", 1: "section1"}
    assert mapper.section_name_to_id == {"section0": 0, "section1": 1}
    with pytest.raises(KeyError):
        mapper.get_section_id("unknown")


def test_name_mapper_is_empty_when_nothing_needs_names():
    # Individual scores without gathering exchange no names (NVRx: the mapper is unused).
    gen = ReportGenerator(["individual_perf_scores"], gather_on_rank0=False)
    gen.generate_report({"section0": summary(1.0)}, {"kernel0": summary(1.0)})
    with pytest.raises(KeyError):
        gen.name_mapper.get_kernel_id("kernel0")


# -- Detector ------------------------------------------------------------------------------------

def test_detector_exposes_its_reporter_and_interval_tracker_while_initialized():
    assert Detector.reporter is None and Detector.report_interval_tracker is None
    Detector.initialize(report_time_interval=0, profiling_interval=2, telemetry=False)
    try:
        assert isinstance(Detector.reporter, ReportGenerator)
        tracker = Detector.report_interval_tracker
        assert isinstance(tracker, ReportIntervalTracker)
        assert tracker.iter_interval == 2  # time interval 0: every profiling_interval iterations
        for i in range(4):
            assert tracker.current_iter == i
            with Detector.detection_section("step", profile_cuda=False):
                pass
            report = Detector.generate_report_if_interval_elapsed()
            assert tracker.is_interval_elapsed() == (report is not None) \
                == Detector.is_interval_elapsed()
        mapping = Detector.reporter.name_mapper.id_to_section_name
        assert mapping == {0: "step"}
    finally:
        Detector.shutdown()
    assert Detector.reporter is None and Detector.report_interval_tracker is None


# -- ReportIntervalTracker --------------------------------------------------------------------

class StepClock:
    def __init__(self, steps):
        self.t, self.steps = 0.0, list(steps)

    def __call__(self):
        now = self.t
        if self.steps:
            self.t += self.steps.pop(0)
        return now


def test_interval_tracker_has_nvrx_attribute_names():
    tracker = ReportIntervalTracker(clock=StepClock([0.05] * 8 + [0.01] * 100))
    assert tracker.INTERVAL_ESTIMATION_ITERS == 16 and tracker.time_interval == 60.0
    tracker.time_interval = 0.5  # NVRx's test sets it after construction
    assert tracker.time_interval_s == 0.5
    for _ in range(16):
        tracker.iter_increase()
    assert tracker.iter_interval is None and len(tracker.step_times) == 15
    tracker.iter_increase()
    assert tracker.step_times == []  # not needed once estimated, as in NVRx
    assert 45 <= tracker.iter_interval <= 55  # lower median 10 ms: 0.5 s / 10 ms
    with pytest.raises(ValueError, match="`time_interval=-1` must be"):
        tracker.time_interval = -1
