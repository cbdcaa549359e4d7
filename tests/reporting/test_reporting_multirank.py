"""ReportGenerator across spawned gloo ranks: gathering, own-rank reports, subgroups, partial
timers, name exchange, telemetry and a dead or stuck peer.

The scenarios of one world run in one spawn (`world` fixture) to keep the suite short; each test
checks one behaviour of the recorded results.
"""

import math
import os
import time

import numpy as np
import pytest
import torch.distributed as dist
from straggler.analysis.scoring import relative_scores
from straggler.analysis.statistics import Statistic
from straggler.dist.comm import Comm
from straggler.reporting.generator import ReportGenerator
from straggler.reporting.report import StragglerId

from _multirank import run_ranks

pytestmark = pytest.mark.multirank

NAN = math.nan
WORLD = 3


def summary(med, num=100):
    return {Statistic.MIN: med, Statistic.MAX: med, Statistic.MED: med, Statistic.AVG: med,
            Statistic.STD: 0.0, Statistic.NUM: num}


def _timers(rank):
    """Rank r is (r+1) times slower; a NCCL kernel is timed the other way round (waiting ranks)."""
    sections = {"step": summary(10.0 * (rank + 1))}
    if rank > 0:
        sections["partial"] = summary(5.0 * rank)  # ranks 1 and 2 only
    if rank == 2:
        sections["solo"] = summary(1.0)  # rank 2 only
    gpus = {"gemm": summary(2.0 * (rank + 1)),
            "ncclDevKernel_AllReduce_Sum": summary(60.0 / (rank + 1))}
    return sections, gpus


def _random_timers(seed=7, sections=6, gpus=9):
    """(ranks, timers) medians with absent (NaN) and zero entries, and call counts."""
    rng = np.random.default_rng(seed)
    sec = rng.uniform(1.0, 30.0, (WORLD, sections))
    gpu = rng.uniform(0.01, 3.0, (WORLD, gpus))
    for matrix in (sec, gpu):
        matrix[rng.random(matrix.shape) < 0.3] = NAN
        matrix[rng.random(matrix.shape) < 0.1] = 0.0
    return sec, gpu, rng.integers(1, 500, (WORLD, gpus)).astype(float)


def _world_worker(rank, world_size):
    out = {}
    comm = Comm.create(timeout_s=60)
    sections, gpus = _timers(rank)

    gen = ReportGenerator("all", True, node_name=f"node{rank}", comm=comm)
    reports, calls = [], [dict(comm.calls)]
    new_on_rank1 = dict(gpus, **({"only_rank1_new": summary(1.0)} if rank == 1 else {}))
    for kernels in (gpus, gpus, new_on_rank1):
        reports.append(gen.generate_report(sections, kernels))
        calls.append(dict(comm.calls))
    out["gather"], out["calls"] = reports, calls

    own = ReportGenerator("all", False, node_name=f"node{rank}", comm=comm)
    out["own"] = own.generate_report(sections, gpus)

    tele = ReportGenerator(["relative_perf_scores"], True, node_name=f"node{rank}", comm=comm,
                           telemetry_fields=("clock_mhz", "power_w"))
    out["telemetry"] = tele.generate_report(
        sections, gpus, telemetry=[1000.0 + rank, NAN if rank == 1 else 300.0],
        extra=[float(rank), -float(rank), NAN if rank == 2 else 1.0 + rank, NAN])
    out["extra"] = tele.last_extra_max

    robust = ReportGenerator(["relative_perf_scores"], True, node_name=f"node{rank}", comm=comm,
                             relative_reference="median")
    out["median"] = robust.generate_report(sections, gpus)

    sec_med, gpu_med, gpu_num = _random_timers()
    rnd = ReportGenerator(["relative_perf_scores"], True, node_name=f"node{rank}", comm=comm)
    out["random"] = rnd.generate_report(
        {f"s{i}": summary(m) for i, m in enumerate(sec_med[rank]) if not math.isnan(m)},
        {f"k{i}": summary(m, n)
         for i, (m, n) in enumerate(zip(gpu_med[rank], gpu_num[rank], strict=True))
         if not math.isnan(m)})

    no_gpu = ReportGenerator(["relative_perf_scores"], True, node_name=f"node{rank}", comm=comm)
    out["no_gpu_on_1"] = no_gpu.generate_report(sections, {} if rank == 1 else gpus)
    comm.close()

    # A subgroup without global rank 0: rank 0 only takes part in creating it (a torch rule for
    # new_group) and then leaves; the detector's set-up and reports involve ranks 1 and 2 alone.
    sub = dist.new_group([1, 2])
    if rank == 0:
        return out
    sub_comm = Comm.create(sub, timeout_s=60)
    sub_gen = ReportGenerator("all", True, node_name=f"node{rank}", comm=sub_comm)
    out["sub"] = sub_gen.generate_report({"step": summary(10.0 * rank)},
                                         {"gemm": summary(1.0 * rank)})
    out["sub_comm"] = (sub_comm.rank, sub_comm.world_size, sub_comm.global_ranks)
    sub_comm.close()
    return out


@pytest.fixture(scope="module")
def world():
    return run_ranks(_world_worker, WORLD, timeout_s=150)


def _approx(mapping):
    return {k: pytest.approx(v, nan_ok=True) for k, v in mapping.items()}


def test_gathered_report_is_on_the_first_rank_only(world):
    assert world[0]["gather"][0] is not None
    assert world[1]["gather"] == [None, None, None] and world[2]["gather"] == [None, None, None]


def test_relative_scores_are_one_over_rank_plus_one_and_ignore_nccl(world):
    report = world[0]["gather"][0]
    expected = {0: 1.0, 1: 1 / 2, 2: 1 / 3}
    assert report.gpu_relative_perf_scores == _approx(expected)
    assert report.section_relative_perf_scores["step"] == _approx(expected)
    flagged = report.identify_stragglers()["straggler_gpus_relative"]
    assert flagged == {StragglerId(1, "node1"), StragglerId(2, "node2")}


def test_ranks_are_named_with_their_nodes(world):
    report = world[0]["gather"][0]
    assert report.rank_to_node == {0: "node0", 1: "node1", 2: "node2"}
    assert report.rank == 0 and report.group_ranks == (0, 1, 2)


def test_first_individual_report_scores_one_everywhere(world):
    report = world[0]["gather"][0]
    assert report.gpu_individual_perf_scores == {0: 1.0, 1: 1.0, 2: 1.0}
    assert report.section_individual_perf_scores["step"] == {0: 1.0, 1: 1.0, 2: 1.0}


def test_section_on_some_ranks_is_scored_among_those_ranks(world):
    report = world[0]["gather"][0]
    assert report.section_relative_perf_scores["partial"] == _approx({0: NAN, 1: 1.0, 2: 0.5})
    assert report.section_medians_ms["partial"] == {1: 5.0, 2: 10.0}


def test_section_on_one_rank_has_no_relative_score_but_an_individual_one(world):
    report = world[0]["gather"][0]
    assert report.section_relative_perf_scores["solo"] == _approx({0: NAN, 1: NAN, 2: NAN})
    assert report.section_individual_perf_scores["solo"] == _approx({0: NAN, 1: NAN, 2: 1.0})


def test_names_are_exchanged_once_then_only_when_new_ones_appear(world):
    for rank in range(WORLD):
        gathers = [c.get("all_gather_object", 0) for c in world[rank]["calls"]]
        assert gathers == [0, 1, 1, 2], rank  # first report, repeat (none), new name on rank 1
        reduces = [c.get("all_reduce", 0) for c in world[rank]["calls"]]
        assert reduces == [0, 2, 4, 6], rank  # flag + references, every report
        assert world[rank]["calls"][-1].get("gather_to_first") == 3


def test_a_name_new_on_one_rank_gets_scored_against_nobody(world):
    report = world[0]["gather"][2]
    assert report.gpu_relative_perf_scores == _approx({0: 1.0, 1: 1 / 2, 2: 1 / 3})


def test_without_gather_every_rank_gets_its_own_scores(world):
    for rank in range(WORLD):
        report = world[rank]["own"]
        assert report.gather_on_rank0 is False and report.rank == rank
        assert report.gpu_relative_perf_scores == _approx({rank: 1 / (rank + 1)})
        assert report.section_relative_perf_scores["step"] == _approx({rank: 1 / (rank + 1)})
        assert report.rank_to_node == {rank: f"node{rank}"}
        assert set(report.local_kernel_summaries) == {"gemm"}


def test_telemetry_travels_with_the_scores(world):
    report = world[0]["telemetry"]
    assert report.rank_telemetry == {0: {"clock_mhz": 1000.0, "power_w": 300.0},
                                     1: {"clock_mhz": 1001.0},
                                     2: {"clock_mhz": 1002.0, "power_w": 300.0}}
    assert report.gpu_individual_perf_scores == {}


def test_extra_maximum_is_the_same_on_every_rank_and_skips_nan(world):
    for rank in range(WORLD):
        assert world[rank]["extra"][:3] == (2.0, 0.0, 2.0), rank
        assert math.isnan(world[rank]["extra"][3]), rank


def test_median_reference_scores_against_the_middle_rank(world):
    report = world[0]["median"]
    assert report.robust_gpu_relative_scores == _approx({0: 2.0, 1: 1.0, 2: 2 / 3})
    assert report.robust_section_relative_scores["step"] == _approx({0: 2.0, 1: 1.0, 2: 2 / 3})
    # NVRx's fields keep NVRx's reference, the smallest median.
    assert report.gpu_relative_perf_scores == _approx({0: 1.0, 1: 1 / 2, 2: 1 / 3})


def test_distributed_scores_equal_the_pure_matrix_computation(world):
    sec_med, gpu_med, gpu_num = _random_timers()
    sec_ratios, _ = relative_scores(sec_med)
    _, gpu = relative_scores(gpu_med, gpu_num * gpu_med)  # weight = NUM * AVG, AVG = MED here
    report = world[0]["random"]
    assert report.gpu_relative_perf_scores == _approx(dict(enumerate(gpu)))
    for i in range(sec_med.shape[1]):
        if np.isnan(sec_med[:, i]).all():
            assert f"s{i}" not in report.section_relative_perf_scores
            continue
        expected = dict(enumerate(sec_ratios[:, i]))
        assert report.section_relative_perf_scores[f"s{i}"] == _approx(expected), i


def test_a_rank_without_gpu_timers_does_not_make_everyone_nan(world):
    report = world[0]["no_gpu_on_1"]
    assert report.gpu_relative_perf_scores == _approx({0: 1.0, 1: NAN, 2: 1 / 3})


def test_subgroup_without_rank_zero_reports_on_its_first_rank_by_global_rank(world):
    assert "sub" not in world[0]
    assert world[1]["sub_comm"] == (0, 2, [1, 2]) and world[2]["sub_comm"] == (1, 2, [1, 2])
    report = world[1]["sub"]
    assert world[2]["sub"] is None
    assert report.rank == 1 and report.group_ranks == (1, 2)
    assert report.rank_to_node == {1: "node1", 2: "node2"}
    assert report.gpu_relative_perf_scores == _approx({1: 1.0, 2: 0.5})
    assert report.section_relative_perf_scores == {"step": _approx({1: 1.0, 2: 0.5})}


# -- a peer that dies or stops answering --------------------------------------------------------

TIMEOUT_S = 4.0


def _peer_fails_worker(rank, world_size, how, done_dir):
    comm = Comm.create(timeout_s=TIMEOUT_S)
    gen = ReportGenerator("all", True, node_name=f"node{rank}", comm=comm)
    gen.generate_report({"step": summary(1.0)}, {})
    if rank == world_size - 1:
        if how == "dies":
            os._exit(1)
        # Stuck: alive, but never joins the next report; it leaves once the survivors are done.
        deadline = time.monotonic() + 10 * TIMEOUT_S
        while len(os.listdir(done_dir)) < world_size - 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        return "was stuck"
    start = time.monotonic()
    try:
        gen.generate_report({"step": summary(1.0)}, {})
        outcome = ("returned", time.monotonic() - start, None)
    except Exception as error:  # noqa: BLE001 - the test inspects it
        outcome = ("raised", time.monotonic() - start, type(error).__name__)
    start = time.monotonic()
    comm.close()  # what the detector does when it disables itself: must not hang either
    outcome += (time.monotonic() - start,)
    open(os.path.join(done_dir, str(rank)), "w").close()
    return outcome


@pytest.mark.parametrize("how", ["dies", "stuck"])
def test_a_failed_peer_ends_the_report_with_an_error_not_a_hang(how, tmp_path):
    results = run_ranks(_peer_fails_worker, 2, how, str(tmp_path), timeout_s=90, may_die=[1])
    outcome, elapsed_s, error, close_s = results[0]
    assert outcome == "raised" and error == "CommError", results  # a RuntimeError
    # The bound is the comm timeout; 10x slack because 2 shared cores can stall the survivor.
    assert elapsed_s < 10 * TIMEOUT_S and close_s < 10 * TIMEOUT_S, results


# -- side by side with NVRx's ReportGenerator on the same summaries ----------------------------

def _side_by_side_worker(rank, world_size):
    from nvidia_resiliency_ext.straggler.reporting import ReportGenerator as NvrxGenerator
    from nvidia_resiliency_ext.straggler.statistics import Statistic as NvrxStatistic

    def nvrx_summary(med, num=100):
        return {NvrxStatistic[s.name]: v for s, v in summary(med, num).items()}

    # Defaults: NVRx's fields carry NVRx's arithmetic (docs/nvrx.md).
    ours = ReportGenerator("all", True, node_name=f"node{rank}", comm=Comm.create(timeout_s=60))
    theirs = NvrxGenerator(["relative_perf_scores", "individual_perf_scores"], True,
                           node_name=f"node{rank}")
    slow = rank + 1
    rounds = [
        # (sections, GPU timers): rank r is (r+1)x slower; NCCL inversely; a kernel and a section
        # only on rank 0; a kernel whose weights differ per rank.
        ({"step": 10.0 * slow, "solo": 3.0 if rank == 0 else None},
         {"gemm": (2.0 * slow, 100), "softmax": (0.5, 40 * slow), "only0": (9.0, 5) if rank == 0
          else None, "ncclDevKernel_AllReduce": (60.0 / slow, 100)}),
        # Everyone 1.5x slower: individual scores drop, relative ones stay.
        ({"step": 15.0 * slow}, {"gemm": (3.0 * slow, 100), "softmax": (0.75, 40 * slow)}),
        # Rank 2 recovers to the first report's speed.
        ({"step": 10.0 * slow if rank == 2 else 15.0 * slow},
         {"gemm": (2.0 * slow if rank == 2 else 3.0 * slow, 100), "softmax": (0.75, 40 * slow)}),
    ]
    out = []
    for round_sections, round_kernels in rounds:
        # Odd ranks list their timers in reverse: ids must not depend on the local order.
        order = reversed if rank % 2 else iter
        sections = {k: v for k, v in order(list(round_sections.items())) if v is not None}
        kernels = {k: v for k, v in order(list(round_kernels.items())) if v is not None}
        a = ours.generate_report({k: summary(v) for k, v in sections.items()},
                                 {k: summary(*v) for k, v in kernels.items()})
        b = theirs.generate_report({k: nvrx_summary(v) for k, v in sections.items()},
                                   {k: nvrx_summary(*v) for k, v in kernels.items()})
        out.append(None if a is None else (a, {
            f: getattr(b, f) for f in ("gpu_relative_perf_scores", "gpu_individual_perf_scores",
                                       "section_relative_perf_scores",
                                       "section_individual_perf_scores", "rank_to_node")}))
    return out


def test_scores_equal_nvrx_where_its_semantics_hold():
    pytest.importorskip("nvidia_resiliency_ext.straggler")
    results = run_ranks(_side_by_side_worker, WORLD, timeout_s=150)
    assert all(r is None for rank in (1, 2) for r in results[rank])
    for ours, theirs in results[0]:
        # NVRx moves values as float32; ours are float64.
        assert ours.rank_to_node == dict(theirs["rank_to_node"])
        for field in ("gpu_relative_perf_scores", "gpu_individual_perf_scores"):
            assert getattr(ours, field) == pytest.approx(theirs[field], rel=1e-6, nan_ok=True)
        for field in ("section_relative_perf_scores", "section_individual_perf_scores"):
            got = getattr(ours, field)
            assert set(got) <= set(theirs[field])
            for stale in set(theirs[field]) - set(got):  # NVRx lists every section ever seen
                assert all(math.isnan(v) for v in theirs[field][stale].values())
            for name in got:
                assert got[name] == pytest.approx(theirs[field][name], rel=1e-6, nan_ok=True)
    first = results[0][0][0]
    assert first.gpu_relative_perf_scores[0] == 1.0 and first.gpu_relative_perf_scores[2] < 0.75
    assert results[0][1][0].gpu_individual_perf_scores[0] == pytest.approx(2 / 3)
