"""Score arithmetic (straggler.analysis.scoring): pure functions, no process group."""

import math

import numpy as np
import pytest

from straggler.analysis import scoring
from straggler.analysis.scoring import (WindowedMinBaseline, gpu_scores, is_communication,
                               pack_for_min_reduce, ratio_scores, reference_from_min_reduce,
                               relative_reference, relative_scores)

NAN = math.nan


def test_score_is_one_when_all_ranks_equal():
    ratios, gpu = relative_scores(np.full((4, 3), 7.5), np.ones((4, 3)))
    assert np.array_equal(ratios, np.ones((4, 3)))
    assert np.array_equal(gpu, np.ones(4))


def test_scores_are_one_over_rank_plus_one_when_rank_r_is_r_plus_one_times_slower():
    base = np.array([1.0, 3.0, 0.25])
    medians = np.array([base * (r + 1) for r in range(4)])
    ratios, gpu = relative_scores(medians, medians * 10)
    expected = np.array([1.0, 1 / 2, 1 / 3, 1 / 4])
    assert np.allclose(ratios, expected[:, None], rtol=0, atol=1e-15)
    assert np.allclose(gpu, expected, rtol=0, atol=1e-15)


def test_relative_score_never_exceeds_one_with_min_reference():
    # NVRx's float32 reference gave 0.1/0.3-style cases a score of 1.0000000149.
    medians = np.array([[0.1], [0.3], [0.7]])
    ratios, _ = relative_scores(medians)
    assert ratios[0, 0] == 1.0 and (ratios <= 1.0).all()


def test_weighting_example_uses_this_ranks_time_in_each_timer():
    # Timer A: equal on both ranks, 1000 ms in total on rank 1. Timer B: rank 1 twice as slow,
    # 10 calls of 2 ms = 20 ms. rank 1 = (1.0 * 1000 + 0.5 * 20) / 1020.
    medians = np.array([[1.0, 1.0], [1.0, 2.0]])
    num = np.array([[1000, 10], [1000, 10]])
    avg = np.array([[1.0, 1.0], [1.0, 2.0]])
    _, gpu = relative_scores(medians, num * avg)
    assert gpu[0] == 1.0
    assert gpu[1] == pytest.approx((1.0 * 1000 + 0.5 * 20) / 1020, rel=1e-15)


def test_timer_missing_on_some_ranks_does_not_make_everyone_nan():
    # NVRx: one rank without timer B made B's reference NaN for all. Here B is scored against the
    # ranks that have it, and rank 1 is scored on A alone.
    medians = np.array([[1.0, 2.0], [2.0, NAN], [1.0, 4.0]])
    ratios, gpu = relative_scores(medians, np.ones_like(medians))
    assert ratios[1, 1] != ratios[1, 1]  # NaN: rank 1 lacks B
    assert ratios[2, 1] == 0.5 and ratios[0, 1] == 1.0
    assert gpu.tolist() == [1.0, 0.5, pytest.approx(0.75)]


def test_timer_on_only_one_rank_carries_no_relative_information():
    # Rank 0's unique timer (huge weight) must not pull its score; ranks with only unique timers
    # have no relative score, the others still do.
    medians = np.array([[1.0, 100.0, NAN], [2.0, NAN, NAN], [NAN, NAN, 5.0]])
    weights = np.array([[1.0, 1e6, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    ratios, gpu = relative_scores(medians, weights)
    assert np.isnan(ratios[:, 1:]).all()
    assert gpu[0] == 1.0 and gpu[1] == 0.5 and math.isnan(gpu[2])


def test_single_rank_group_scores_one():
    ratios, gpu = relative_scores(np.array([[3.0, 4.0]]), np.array([[1.0, 1.0]]))
    assert ratios.tolist() == [[1.0, 1.0]] and gpu.tolist() == [1.0]


@pytest.mark.parametrize("bad", [0.0, -1.0, NAN, math.inf])
def test_invalid_median_is_ignored_not_divided_by(bad):
    medians = np.array([[1.0, 1.0], [bad, 2.0], [3.0, 2.0]])
    ratios, gpu = relative_scores(medians, np.ones_like(medians))
    assert math.isnan(ratios[1, 0])  # no score for the invalid entry
    assert ratios[2, 0] == pytest.approx(1 / 3)  # and it is not the reference either
    assert gpu[1] == 0.5  # rank 1 is scored on its valid timer


def test_gpu_score_is_nan_without_positive_finite_weights():
    assert math.isnan(gpu_scores([0.5, 1.0], [0.0, NAN]))
    assert math.isnan(gpu_scores([NAN], [3.0]))
    assert gpu_scores([0.5, NAN], [1.0, 5.0]) == 0.5
    assert math.isnan(gpu_scores(np.empty(0), np.empty(0)))


def test_median_reference_is_robust_to_one_fast_rank():
    medians = np.array([[1.0], [10.0], [10.0], [10.0], [20.0]])
    assert relative_reference(medians, "min")[0] == 1.0
    assert relative_reference(medians, "median")[0] == 10.0
    ratios, _ = relative_scores(medians, method="median")
    assert ratios[:, 0].tolist() == [10.0, 1.0, 1.0, 1.0, 0.5]


def test_unknown_reference_method_names_the_parameter():
    with pytest.raises(ValueError, match=r"`relative_reference='mean'`"):
        relative_reference(np.ones((2, 2)), "mean")


@pytest.mark.parametrize("seed", range(5))
def test_min_reduce_packing_matches_the_matrix_reference(seed):
    rng = np.random.default_rng(seed)
    ranks, timers = rng.integers(1, 6), rng.integers(0, 8)
    medians = rng.uniform(0.5, 3.0, (ranks, timers))
    medians[rng.random((ranks, timers)) < 0.4] = NAN
    medians[rng.random((ranks, timers)) < 0.1] = 0.0
    reduced = np.min([pack_for_min_reduce(row, g) for g, row in enumerate(medians)], axis=0)
    got = reference_from_min_reduce(reduced, ranks)
    assert np.array_equal(got, relative_reference(medians, "min"), equal_nan=True)


def test_ratio_scores_broadcast_and_reject_invalid_reference():
    assert ratio_scores([2.0, 0.0], [[4.0, 1.0], [2.0, 1.0]]).tolist()[1][0] == 1.0
    assert math.isnan(ratio_scores(0.0, 1.0))


@pytest.mark.parametrize("name", ["ncclDevKernel_AllReduce_Sum_f32_RING_LL", "c10d::allreduce_",
                                  "_c10d_functional::all_gather_into_tensor", "NCCLkernel",
                                  "rcclGenericKernel"])
def test_communication_timers_are_recognised(name):
    assert is_communication(name)


@pytest.mark.parametrize("name", ["aten::mm", "ampere_sgemm_128x64_nn", "step", "fwd"])
def test_compute_timers_are_not_communication(name):
    assert not is_communication(name)


def test_communication_markers_are_configurable():
    assert is_communication("my_allreduce_kernel", ("allreduce",))
    assert not is_communication("ncclDevKernel", ())
    assert "nccl" in scoring.COMMUNICATION_MARKERS


class TestWindowedMinBaseline:
    def test_first_report_scores_one_and_slowdowns_score_below_one(self):
        base = WindowedMinBaseline(window=20)
        scores = []
        for med in [1.0, 1.25, 2.0, 3.0]:
            scores.append(ratio_scores(base.update(["k"], [med]), [med])[0])
        assert scores == [1.0, 0.8, 0.5, pytest.approx(1 / 3)]

    def test_reference_recovers_after_an_unusually_fast_period(self):
        # NVRx's all-time minimum would keep scoring the normal 2.0 ms at 0.5 forever.
        base = WindowedMinBaseline(window=3)
        score = lambda med: float(ratio_scores(base.update(["k"], [med]), [med])[0])  # noqa: E731
        assert score(1.0) == 1.0  # fast start (e.g. before data loading warmed up)
        assert [score(2.0) for _ in range(2)] == [0.5, 0.5]  # the fast period is in the window
        assert score(2.0) == 1.0  # three reports later it has left the window

    def test_with_support_two_a_single_fast_report_is_never_the_reference(self):
        base = WindowedMinBaseline(window=5, support=2)
        refs = [float(base.update(["k"], [med])[0]) for med in [1.0, 3.0, 3.0, 2.5, 3.0, 0.5]]
        # warm-up 1.0 alone; then 3.0 reached twice; 2.5 caps as the current one and is then the
        # second best after 1.0; the fast 0.5 is the current median (a score stays <= 1)
        assert refs == [1.0, 3.0, 3.0, 2.5, 2.5, 0.5]

    def test_support_must_be_a_positive_integer(self):
        with pytest.raises(ValueError, match=r"^`individual_support=0` must be a positive"):
            WindowedMinBaseline(3, support=0)

    def test_absent_and_invalid_medians_neither_score_nor_age_the_window(self):
        base = WindowedMinBaseline(window=2)
        base.update(["k"], [1.0])
        ref = base.update(["k", "j"], [0.0, 5.0])
        assert math.isnan(ref[0]) and ref[1] == 5.0
        assert base.update(["k"], [3.0])[0] == 1.0  # window of k: [1.0, 3.0]
        assert base.update(["k"], [3.0])[0] == 3.0

    def test_state_dict_round_trip_keeps_the_baseline(self):
        base = WindowedMinBaseline(window=4)
        for med in [1.0, 2.0]:
            base.update(["k"], [med])
        restored = WindowedMinBaseline(window=4)
        restored.load_state_dict(base.state_dict())
        assert restored.update(["k"], [2.0])[0] == 1.0
        shorter = WindowedMinBaseline(window=1)
        shorter.load_state_dict({"k": [1.0, 2.0]})  # only the newest median fits
        assert shorter.update(["k"], [4.0])[0] == 4.0

    @pytest.mark.parametrize("window", [0, -3, 2.5, True, "5"])
    def test_window_must_be_a_positive_integer(self, window):
        with pytest.raises(ValueError, match=r"`individual_window="):
            WindowedMinBaseline(window)

    def test_names_and_medians_must_match(self):
        with pytest.raises(ValueError, match="2 names"):
            WindowedMinBaseline(3).update(["a", "b"], [1.0])
