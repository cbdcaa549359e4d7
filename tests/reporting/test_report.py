"""Report, StragglerId, Statistic, and ReportGenerator in a world of one process."""

import logging
import math
import pickle

import pytest
from straggler.analysis.statistics import Statistic
from straggler.dist.comm import Comm
from straggler.reporting.generator import ReportGenerator
from straggler.reporting.report import Report, StragglerId

NAN = math.nan


def summary(med, num=10, avg=None):
    avg = med if avg is None else avg
    return {Statistic.MIN: med, Statistic.MAX: med, Statistic.MED: med, Statistic.AVG: avg,
            Statistic.STD: 0.0, Statistic.NUM: num}


def make_report(**overrides):
    fields = dict(
        gpu_relative_perf_scores={0: 1.0, 1: 0.5, 2: NAN, 3: 0.75},
        section_relative_perf_scores={"step": {0: 1.0, 1: 0.74, 2: 1.0}, "fwd": {0: 1.0, 1: 1.0}},
        gpu_individual_perf_scores={0: 1.0, 1: 0.9, 2: 0.2, 3: 1.0},
        section_individual_perf_scores={"step": {0: NAN, 1: 1.0, 2: 0.1}},
        rank_to_node={0: "a", 1: "a", 2: "b", 3: "b"},
        local_section_summaries={}, local_kernel_summaries={},
        generate_report_elapsed_time=1.5, gather_on_rank0=True, rank=0)
    fields.update(overrides)
    return Report(**fields)


# -- Statistic, StragglerId --------------------------------------------------------------------

def test_statistic_members_and_names_match_nvrx():
    assert [s.name for s in Statistic] == ["MIN", "MAX", "MED", "AVG", "STD", "NUM"]
    assert str(Statistic.MED) == "MED" and repr(Statistic.MED) == "Statistic.MED"


def test_straggler_id_is_hashable_and_frozen():
    sid = StragglerId(3, "node")
    assert {sid, StragglerId(3, "node")} == {sid}
    with pytest.raises(AttributeError):
        sid.rank = 4


# -- identify_stragglers ------------------------------------------------------------------------

def test_identify_stragglers_returns_the_four_nvrx_keys_with_node_names():
    found = make_report().identify_stragglers()
    assert found == {
        "straggler_gpus_relative": {StragglerId(1, "a")},
        "straggler_gpus_individual": {StragglerId(2, "b")},
        "straggler_sections_relative": {"step": {StragglerId(1, "a")}},
        "straggler_sections_individual": {"step": {StragglerId(2, "b")}},
    }


def test_a_score_equal_to_the_threshold_is_not_flagged():
    found = make_report().identify_stragglers(gpu_rel_threshold=0.5)
    assert found["straggler_gpus_relative"] == set()
    found = make_report().identify_stragglers(gpu_rel_threshold=0.76)
    assert found["straggler_gpus_relative"] == {StragglerId(1, "a"), StragglerId(3, "b")}


def test_nan_scores_are_never_flagged():
    found = make_report().identify_stragglers(1.0, 1.0, 1.0, 1.0)
    assert StragglerId(2, "b") not in found["straggler_gpus_relative"]
    assert StragglerId(0, "a") not in found["straggler_sections_individual"]["step"]


def test_sections_without_stragglers_are_left_out():
    found = make_report().identify_stragglers()
    assert "fwd" not in found["straggler_sections_relative"]


def test_unknown_node_is_named_not_a_key_error():
    report = make_report(rank_to_node={})
    assert StragglerId(1, "<unknown>") in report.identify_stragglers()["straggler_gpus_relative"]


@pytest.mark.parametrize("name", ["gpu_rel_threshold", "section_rel_threshold",
                                  "gpu_indiv_threshold", "section_indiv_threshold"])
@pytest.mark.parametrize("value", [0, 0.0, -0.5, 1.01, NAN, math.inf, True, "0.5", None])
def test_thresholds_outside_zero_one_raise_naming_the_parameter(name, value):
    with pytest.raises(ValueError, match=rf"`{name}=.*` must be a number in \(0, 1\]"):
        make_report().identify_stragglers(**{name: value})


def test_threshold_of_one_is_accepted():
    found = make_report().identify_stragglers(gpu_rel_threshold=1)
    assert found["straggler_gpus_relative"] == {StragglerId(1, "a"), StragglerId(3, "b")}


def test_report_is_frozen_and_picklable():
    report = make_report()
    with pytest.raises(AttributeError):
        report.rank = 1
    assert pickle.loads(pickle.dumps(report)).gpu_individual_perf_scores[2] == 0.2


# -- format_table -------------------------------------------------------------------------------

def test_format_table_has_a_row_per_rank_with_node_and_marked_scores():
    table = make_report(rank_telemetry={1: {"sm_clock_mhz": 1410.0}}).format_table()
    lines = table.splitlines()
    assert lines[1].split() == ["rank", "node", "gpu", "rel", "gpu", "ind", "fwd", "rel", "step",
                                "rel", "step", "ind", "sm_clock_mhz"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:]}
    assert set(rows) == {"0", "1", "2", "3"}
    assert rows["1"][:3] == ["a", "0.500*", "0.900"]
    assert rows["1"][-1] == "1410"
    assert rows["2"][1] == "-"  # NaN relative GPU score
    assert rows["3"][1] == "0.750"  # not below the threshold: no mark


def test_format_table_shortens_long_section_names_from_the_left():
    name = "/very/long/path/to/the/training/script.py:123"
    table = make_report(section_relative_perf_scores={name: {0: 1.0}},
                        section_individual_perf_scores={}).format_table(max_name_len=20)
    assert "…ining/script.py:123 rel" in table and name not in table  # 20 characters


@pytest.mark.parametrize("bad", [0, 1, -3, "x", 5.5])
def test_format_table_names_a_bad_name_length(bad):
    # 0 and -3 printed garbled names, "x" and 5.5 a TypeError from deep inside.
    with pytest.raises(ValueError, match=rf"^`max_name_len={bad!r}` must be an integer >= 2$"):
        make_report().format_table(max_name_len=bad)


def test_format_table_can_list_only_the_slowest_ranks():
    table = make_report().format_table(max_rows=2)
    rows = [line.split()[0] for line in table.splitlines()[2:-1]]
    assert rows == ["1", "2"]  # lowest scores: rank 1 (0.5 GPU) and rank 2 (0.1 section)
    assert table.splitlines()[-1] == "... 2 more rank(s) with higher scores"
    assert "more rank" not in make_report().format_table(max_rows=4)
    with pytest.raises(ValueError, match="`max_rows=0`"):
        make_report().format_table(max_rows=0)


def test_format_table_of_an_empty_report_says_so():
    report = make_report(gpu_relative_perf_scores={}, gpu_individual_perf_scores={},
                         section_relative_perf_scores={}, section_individual_perf_scores={},
                         rank_to_node={5: "n"})
    assert "no scores" in report.format_table() and "5  n" in report.format_table()


# -- ReportGenerator, world of one --------------------------------------------------------------

def generator(scores="all", gather=True, **kwargs):
    return ReportGenerator(scores, gather, node_name="node0", comm=Comm.create(), **kwargs)


@pytest.mark.parametrize("value", ["relative", ["relative_perf_scores", "gpu"], [], 3, None])
def test_bad_scores_to_compute_raise_naming_the_value(value):
    with pytest.raises(ValueError, match=r"`scores_to_compute="):
        generator(value)


@pytest.mark.parametrize("kwargs, name", [
    ({"relative_reference": "mean"}, "relative_reference"),
    ({"individual_window": 0}, "individual_window"),
    ({"telemetry_fields": ["a", "a"]}, "telemetry_fields"),
    ({"communication_markers": "nccl"}, "communication_markers"),
])
def test_bad_tunables_raise_naming_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=rf"`{name}="):
        generator(**kwargs)


def test_bad_node_name_and_gather_flag_raise():
    with pytest.raises(ValueError, match="`node_name="):
        ReportGenerator("all", True, node_name="", comm=Comm.create())
    with pytest.raises(ValueError, match="`gather_on_rank0="):
        ReportGenerator("all", 1, node_name="n", comm=Comm.create())


def test_single_score_kind_leaves_the_other_dicts_empty():
    report = generator(["individual_perf_scores"]).generate_report({"s": summary(1.0)},
                                                                   {"k": summary(1.0)})
    assert report.gpu_relative_perf_scores == {} and report.section_relative_perf_scores == {}
    assert report.gpu_individual_perf_scores == {0: 1.0}
    assert generator("relative_perf_scores").is_computing_indiv_scores is False


def test_individual_sequence_matches_nvrx():
    # NVRx's test_individual_gpu_scores_one_rank sequence: NVRx's fields, default options.
    gen = generator(["individual_perf_scores"])
    steps = [({"k0": 1.0, "k1": 1.0}, 1.0), ({"k0": 1.25, "k1": 1.25}, 1 / 1.25),
             ({"k0": 2.0, "k1": 2.0}, 0.5), ({"k0": 3.0, "k1": 3.0}, 1 / 3),
             ({"k0": 4.0}, 0.25), ({"k1": 5.0}, 0.2), ({}, NAN), ({"k2": 1.0}, 1.0),
             ({"k2": 0.5}, 1.0), ({"k2": 1.0}, 0.5)]
    for kernels, expected in steps:
        report = gen.generate_report({}, {k: summary(v) for k, v in kernels.items()})
        assert report.gpu_individual_perf_scores[0] == pytest.approx(expected, nan_ok=True)


def test_nvrx_individual_reference_is_the_best_median_ever_not_the_window():
    gen = generator(["individual_perf_scores"], individual_window=2, individual_support=1)
    for ms in (1.0, 2.0, 2.0, 2.0):
        report = gen.generate_report({"s": summary(ms)}, {})
    assert report.section_individual_perf_scores == {"s": {0: 0.5}}  # 1.0 ms stays the best
    assert report.robust_section_individual_scores == {"s": {0: 1.0}}  # it left the window


def test_one_fast_warm_up_report_is_not_the_robust_individual_reference():
    # A healthy one-rank run: a fast first report (warm-up), then steady slower steps. NVRx's
    # best median scores every later report 0.67 and flags it, in NVRx's fields as in NVRx; the
    # robust scores (support of 2) do not.
    gen = generator()
    assert gen.individual_support == 2
    reports = [gen.generate_report({"forward": summary(ms)}, {"k": summary(ms)})
               for ms in [2.0, 3.0, 3.1, 2.9, 3.0, 3.05]]
    for report in reports[1:]:
        assert report.identify_stragglers()["straggler_sections_individual"]
        assert report.gpu_individual_perf_scores[0] < 0.75
    for report in reports:
        assert report.robust_section_individual_scores["forward"][0] >= 0.95  # 2.9 / 3.05
        assert report.robust_gpu_individual_scores[0] >= 0.95
    # A lasting slowdown after two reports that agree is still seen at once.
    slow = gen.generate_report({"forward": summary(6.0)}, {"k": summary(6.0)})
    assert slow.robust_section_individual_scores["forward"][0] == pytest.approx(2.9 / 6.0)
    assert slow.section_individual_perf_scores["forward"][0] == pytest.approx(2.0 / 6.0)


def test_relative_scores_of_a_single_rank_are_one():
    report = generator().generate_report({"s": summary(3.0)}, {"k": summary(2.0)})
    assert report.gpu_relative_perf_scores == {0: 1.0}
    assert report.section_relative_perf_scores == {"s": {0: 1.0}}
    assert report.rank_to_node == {0: "node0"} and report.rank == 0


def test_communication_timers_are_dropped_before_scoring():
    gen = generator()
    gen.generate_report({}, {"k": summary(1.0)})
    report = gen.generate_report({}, {"k": summary(1.0), "ncclDevKernel_AllReduce": summary(9.0),
                                      "c10d::allreduce_": summary(9.0)})
    assert set(report.local_kernel_summaries) == {"k"}
    assert report.gpu_individual_perf_scores == {0: 1.0}


def test_zero_median_gives_nan_not_zero_division():
    report = generator().generate_report({"s": summary(0.0)}, {"k": summary(0.0)})
    assert math.isnan(report.section_individual_perf_scores["s"][0])
    assert math.isnan(report.gpu_relative_perf_scores[0])


def test_nothing_captured_warns_once_through_logging(caplog):
    gen = generator()
    with caplog.at_level(logging.WARNING, logger="straggler"):
        first = gen.generate_report({}, {})
        gen.generate_report({}, {})
    assert math.isnan(first.gpu_relative_perf_scores[0])
    nothing = [r for r in caplog.records if "nothing was timed" in r.getMessage()]
    assert len(nothing) == 1


def test_state_dict_carries_the_individual_baseline_across_a_restart():
    gen = generator(["individual_perf_scores"], individual_window=5)
    for _ in range(2):  # two reports reach the reference (individual_support=2)
        gen.generate_report({"s": summary(1.0)}, {"k": summary(1.0)})
    state = gen.state_dict()
    resumed = generator(["individual_perf_scores"], individual_window=5)
    resumed.load_state_dict(pickle.loads(pickle.dumps(state)))
    report = resumed.generate_report({"s": summary(2.0)}, {"k": summary(4.0)})
    assert report.section_individual_perf_scores == {"s": {0: 0.5}}
    assert report.gpu_individual_perf_scores == {0: 0.25}
    with pytest.raises(ValueError, match="`state`"):
        resumed.load_state_dict({"version": 99})


def test_telemetry_lands_in_rank_telemetry_without_nans():
    gen = generator(telemetry_fields=("sm_clock_mhz", "power_w"))
    report = gen.generate_report({}, {"k": summary(1.0)}, telemetry=[1410.0, NAN])
    assert report.rank_telemetry == {0: {"sm_clock_mhz": 1410.0}}
    with pytest.raises(ValueError, match="`telemetry` has 1 values, expected 2"):
        gen.generate_report({}, {}, telemetry=[1.0])


def test_extra_comes_back_as_the_group_maximum():
    gen = generator()
    assert gen.last_extra_max is None
    gen.generate_report({}, {"k": summary(1.0)}, extra=[12.0, -1.0])
    assert gen.last_extra_max == (12.0, -1.0)
    gen.generate_report({}, {"k": summary(1.0)}, extra=[NAN, math.inf])
    assert math.isnan(gen.last_extra_max[0]) and gen.last_extra_max[1] == math.inf


def test_individual_without_gather_does_no_communication():
    comm = Comm.create()
    gen = ReportGenerator(["individual_perf_scores"], False, node_name="n", comm=comm)
    gen.generate_report({"s": summary(1.0)}, {"k": summary(1.0)})
    assert sum(comm.calls.values()) == 0
    gen.generate_report({"s": summary(1.0)}, {}, extra=[1.0])
    assert comm.calls == {"all_reduce": 1}


def test_section_medians_are_reported_in_ms():
    report = generator(gather=False).generate_report({"s": summary(12.5)}, {})
    assert report.section_medians_ms == {"s": {0: 12.5}}
    assert report.group_ranks == (0,) and report.gather_on_rank0 is False
    assert report.generate_report_elapsed_time >= 0.0


def test_generator_refuses_reuse_after_a_failed_report():
    gen = generator()
    gen.comm.close()
    with pytest.raises(RuntimeError, match="after close"):
        gen.generate_report({"s": summary(1.0)}, {})
    with pytest.raises(RuntimeError, match="cannot be reused"):
        gen.generate_report({"s": summary(1.0)}, {})


@pytest.mark.parametrize("gather", [True, False])
def test_a_report_carries_each_windows_quantiles_and_recent_part(gather):
    # (q25, q75, 5th percentile, recent median, recent 5th percentile): host_window's order.
    report = generator(gather=gather, policy=False).generate_report(
        {"s": summary(1.0), "t": summary(2.0)}, {},
        section_quartiles={"s": (0.9, 1.1, 0.8, 1.2, 1.0), "t": (1.8, 2.2)})
    assert report.section_quartiles_ms == {"s": {0: (0.9, 1.1)}, "t": {0: (1.8, 2.2)}}
    assert report.section_low_ms["s"] == {0: 0.8}
    assert report.section_recent_ms["s"] == {0: (1.2, 1.0)}
    assert not report.section_recent_ms.get("t")  # quartiles alone: no recent part


def test_the_policy_is_told_whether_the_window_was_an_early_reports():
    # The report cycle knows which windows it brought forward (docs/policy.md, "Early
    # reports"); the policy no longer has to guess it from the window's steps.
    from straggler.analysis.policy import StragglerPolicy

    class Recording(StragglerPolicy):
        def __init__(self):
            super().__init__()
            self.early = []

        def update(self, *args, early=None, **kwargs):
            self.early.append(early)
            return super().update(*args, early=early, **kwargs)

    policy = Recording()
    gen = generator(policy=policy)
    for early in (False, True, None):
        gen.generate_report({"s": summary(1.0)}, {}, early=early)
    assert policy.early == [False, True, None]
