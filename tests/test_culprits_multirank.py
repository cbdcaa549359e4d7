"""Culprits at the collectives on real gloo ranks (docs/culprits.md): one spawn of four ranks
runs the scenarios of issue #18 in a row, each ending with a report on rank 0.

Delays are sleeps of 60 ms (far above gloo's latency); the stalling rank measures how long each
really lasted (a loaded machine's sleeps overshoot), and the time lost to it is asserted within
35 % of its peers times that, since the scheduler adds its own waits.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from _multirank import run_ranks

# serial: `make test` runs these alone (its serial pass): the lost time must be within 35 % of
# the injected, and a neighbouring multi-rank test's load adds waits of its own.
pytestmark = [pytest.mark.multirank, pytest.mark.serial]

STEPS, DELAY_S, STEP_S = 12, 0.06, 0.01
OWN_STEPS, OWN_DELAY_S = 30, 0.03
NESTED_S = 0.01  # a step's sleep in a section nested in the loop's section
LATE_WAKE_S = 0.02  # a caller woken this long after the completion was noted
OVERLAP_S = 0.04  # work after an async collective is issued, before its wait()
DROP_ROUNDS, DROPPED_SECTION_S, OWN_OUTSIDE_S, SECTION_S = 6, 0.03, 0.01, 0.005
STALLED = ("ddp", "no_sections", "grid", "async")  # the scenarios where one rank stalls


def _summary(report):
    if report is None:
        return None
    return {"culprits": [(c.rank, c.time_lost_s, [g.ranks for g in c.groups],
                          sorted(g.label for g in c.groups))
                         for c in report.culprits],
            "waits": {r: (w.collectives, w.waited_s, w.time_lost_s, w.late_share)
                      for r, w in report.waits.items()},
            "causes": {r: d.cause.value for r, d in report.causes.items()}}


def _scenarios(rank, world_size):
    import torch
    import torch.distributed as dist
    from straggler import Detector

    # The ranks start at different times: DDP's first broadcast absorbs that skew before the
    # detector observes anything (initialize() joins the ranks' detector group together).
    # Tiny buckets: DDP issues four overlapping all-reduces a step (one per parameter), and the
    # victims wait in the first only; the later ones finish right after it.
    model = torch.nn.parallel.DistributedDataParallel(
        torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Linear(8, 8)),
        bucket_cap_mb=1e-5)
    Detector.initialize(report_time_interval=0, comm_timeout_s=60, telemetry=False)
    batch = torch.ones(4, 8)
    x = torch.ones(4)
    out = {}

    stalled = {}  # scenario -> this rank's stalls as they really lasted (sleeps overshoot)

    def stall(scenario):
        t0 = time.perf_counter()
        time.sleep(DELAY_S)
        stalled[scenario] = stalled.get(scenario, 0.0) + time.perf_counter() - t0

    def ddp_steps(stall_rank):
        for _ in range(STEPS):
            if rank == stall_rank:
                stall("ddp")  # "data loading", outside every section
            with Detector.detection_section("compute", profile_cuda=False):
                time.sleep(STEP_S)
                model(batch).sum().backward()
        return _summary(Detector.generate_report())

    out["clean"] = ddp_steps(None)
    out["ddp"] = ddp_steps(2)
    out["clean_again"] = ddp_steps(None)

    for _ in range(STEPS):  # no sections at all
        if rank == 1:
            stall("no_sections")
        dist.all_reduce(x)
    out["no_sections"] = _summary(Detector.generate_report())

    # Two tensor-parallel pairs inside two data-parallel pairs; rank 3 is slow.
    tp = [dist.new_group([0, 1], group_desc="tp"), dist.new_group([2, 3], group_desc="tp")]
    dp = [dist.new_group([0, 2]), dist.new_group([1, 3])]
    for _ in range(STEPS):
        if rank == 3:
            stall("grid")
        dist.all_reduce(x, group=tp[rank // 2])
        dist.all_reduce(x, group=dp[rank % 2])
    out["grid"] = _summary(Detector.generate_report())

    for _ in range(STEPS):  # async collectives: rank 0 issues late, everyone waits later
        if rank == 0:
            stall("async")
        work = dist.all_reduce(x, async_op=True)
        time.sleep(0.002)
        work.wait()
    out["async"] = _summary(Detector.generate_report())

    # A job that calls only generate_report() (NVRx's style, no step loop of the detector's):
    # the loop's section marks its steps (collectives.SectionSteps); rank 1 works OWN_DELAY_S
    # more a step outside it.
    for _ in range(OWN_STEPS):
        if rank == 1:
            time.sleep(OWN_DELAY_S)
        with Detector.detection_section("compute", profile_cuda=False):
            with Detector.detection_section("load", profile_cuda=False):  # nested: once
                time.sleep(NESTED_S)
            model(batch).sum().backward()
    report = Detector.generate_report()
    out["own_sections"] = None if report is None else {
        r: (o.steps, o.median_ms, o.sections_ms) for r, o in report.own_time.items()}

    # Own time per step (analysis/own_time.py): every rank works 2 ms a step outside its
    # collectives, rank 1 OWN_DELAY_S more; each rank marks its steps and summarises them as a
    # report does, all gathered here. Two all-reduces a step: their gaps add up. The work comes
    # first, so a completion noted late by gloo's thread rarely makes a step's first arrival
    # find a collective in flight (such a step is dropped).
    from straggler.analysis import own_time
    from straggler.timing import collectives

    collectives.take_own_time()  # the window starts here
    for _ in range(OWN_STEPS):
        time.sleep(0.002 + (OWN_DELAY_S if rank == 1 else 0.0))
        dist.all_reduce(x)
        dist.all_reduce(x)
        collectives.mark_step()
    steps = collectives.take_own_time()
    row = torch.tensor(own_time.summarize(steps.steps_s))
    rows = [torch.zeros_like(row) for _ in range(world_size)]
    dist.all_gather(rows, row)
    out["own"] = torch.stack(rows).numpy()

    # A caller that resumes from wait() well after gloo's worker noted the completion (here the
    # worker first runs a LATE_WAKE_S callback of the user's): that time is not the rank's own,
    # its gap starts when wait() returns (the caller's Work, csrc/ops/collectives.cpp).
    collectives.take_own_time()
    for _ in range(OWN_STEPS):
        time.sleep(0.002)
        work = dist.all_reduce(x, async_op=True)
        work.get_future().add_done_callback(lambda _: time.sleep(LATE_WAKE_S))
        assert work.wait() and work.is_completed() and work.exception() is None
        assert torch.equal(work.result()[0], x)
        collectives.mark_step()
    steps = collectives.take_own_time()
    out["late_wake"] = (steps.count, float(torch.tensor(steps.steps_s).median()))
    # Lightning's DDP step: an all-reduce waited for on its future (DDP's reducer), then a
    # broadcast from rank 0 waited for with wait(). Rank 0 waits in the all-reduce (it never
    # waits for the others in the broadcast) and the others in the broadcast, and each is
    # woken LATE_WAKE_S late: rank 0 after the future's wait() (here a sleep: from the
    # observer's side a late wake-up looks the same), the others when their Work's wait()
    # returns (a callback of the user's on their future first). Only the Work's resume is seen;
    # steps that hold a gap from a completion nobody waited on take every gap from the
    # completions, so each rank's wake-up counts alike. Before, rank 0 alone had its wake-up
    # in its own time: it looked LATE_WAKE_S a step slower than its peers.
    collectives.take_own_time()
    for _ in range(OWN_STEPS):
        time.sleep(0.002)
        dist.all_reduce(x, async_op=True).get_future().wait()
        # DDP's copy-out, then rank 0's late wake-up. (The future's waiter is woken before
        # its callbacks run, the observer's too: without work here a rank could issue its
        # next collective before the completion is noted.)
        time.sleep(0.001 + (LATE_WAKE_S if rank == 0 else 0.0))
        work = dist.broadcast(x, src=0, async_op=True)
        if rank != 0:
            work.get_future().add_done_callback(lambda _: time.sleep(LATE_WAKE_S))
        work.wait()
        collectives.mark_step()
    steps = collectives.take_own_time()
    row = torch.tensor([steps.count, float(torch.tensor(steps.steps_s).median())])
    rows = [torch.zeros_like(row) for _ in range(world_size)]
    dist.all_gather(rows, row)
    out["mixed_waits"] = torch.stack(rows).numpy()  # (the all-gather also lines the ranks up)
    # An async collective waited for after OVERLAP_S of work: it finished meanwhile, so that
    # work after its completion stays the rank's own (wait() returns at once, nothing moves).
    for _ in range(OWN_STEPS):
        time.sleep(0.002)
        work = dist.all_reduce(x, async_op=True)
        time.sleep(OVERLAP_S)
        work.wait()
        collectives.mark_step()
    steps = collectives.take_own_time()
    out["overlap"] = (steps.count, float(torch.tensor(steps.steps_s).median()))
    # A dropped step's sections stay in it. Each round: a kept step; a step whose first
    # arrival finds rank 1's late async all-reduce still in flight on rank 0 (dropped there),
    # with DROPPED_SECTION_S in a section inside a gap; a kept step of OWN_OUTSIDE_S outside
    # its SECTION_S section. Before the fix the dropped step's section was taken off the next
    # step's own time as well (rank 1 of Lightning's clean DDP runs: 5 % of steps at 1-2 ms
    # where the rest were 5-6 ms, which put rank 0 4-15 % behind it).
    collectives.take_own_time()
    for _ in range(DROP_ROUNDS):
        dist.all_reduce(x)
        if rank == 1:
            time.sleep(DELAY_S)
        late = dist.all_reduce(x, async_op=True)
        collectives.mark_step()  # kept
        dist.all_reduce(x)  # first arrival: rank 0's `late` is still in flight
        late.wait()
        with Detector.detection_section("dropped", profile_cuda=False):
            time.sleep(DROPPED_SECTION_S)
        dist.all_reduce(x)
        collectives.mark_step()  # dropped on rank 0
        time.sleep(OWN_OUTSIDE_S)
        with Detector.detection_section("kept", profile_cuda=False):
            time.sleep(SECTION_S)
        dist.all_reduce(x)
        collectives.mark_step()  # kept
    steps = collectives.take_own_time()
    out["dropped_sections"] = (steps.count, [float(v) for v in steps.outside_s])
    Detector.shutdown()
    # Every rank's real stalls, gathered once the detector no longer observes collectives.
    row = torch.tensor([stalled.get(k, 0.0) for k in STALLED], dtype=torch.float64)
    rows = [torch.zeros_like(row) for _ in range(world_size)]
    dist.all_gather(rows, row)
    out["stalled_s"] = {k: float(torch.stack(rows)[:, i].sum()) for i, k in enumerate(STALLED)}
    return out


@pytest.fixture(scope="module")
def reports():
    return run_ranks(_scenarios, 4, timeout_s=240)[0]


def _lost(reports, scenario, waiters=3):
    # What the waiters lost: the culprit's stalls as they really lasted (a loaded machine's
    # sleeps overshoot), each waited for by every other member of its groups.
    return reports["stalled_s"][scenario] * waiters


def _assert_named(summary, rank, lost_s, groups=None, labels=None):
    culprits = summary["culprits"]
    assert [c[0] for c in culprits] == [rank], culprits
    assert culprits[0][1] == pytest.approx(lost_s, rel=0.35), culprits
    if groups is not None:
        assert sorted(culprits[0][2]) == groups
    if labels is not None:
        assert culprits[0][3] == labels


def test_a_clean_job_names_nobody_in_any_report(reports):
    for phase in ("clean", "clean_again"):
        assert reports[phase]["culprits"] == [], reports[phase]
        assert set(reports[phase]["waits"]) == {0, 1, 2, 3}


def test_a_ddp_rank_stalling_outside_every_section_is_named(reports):
    _assert_named(reports["ddp"], 2, _lost(reports, "ddp"), [(0, 1, 2, 3)], ["world"])
    waits = reports["ddp"]["waits"]
    assert waits[2][0] >= 3 * STEPS  # several bucket all-reduces a step
    # Each waiter's wait, counted once although DDP's all-reduces overlap; no time lost to it.
    # Beyond the latency the culprit waits too (on a loaded host the ranks' wake-ups in 4
    # bucket all-reduces a step: 0.23 s over 12 steps at load 12), a waiter waits its stalls.
    for victim in (0, 1, 3):
        assert waits[victim][1] - waits[2][1] == \
            pytest.approx(reports["stalled_s"]["ddp"], rel=0.35), (waits, reports["stalled_s"])
        # What is lost to a victim is the culprit's own waiting for it on a loaded host.
        assert waits[victim][2] < 0.25 * waits[2][2], waits


def test_a_job_without_sections_is_covered(reports):
    _assert_named(reports["no_sections"], 1, _lost(reports, "no_sections"), [(0, 1, 2, 3)])


def test_the_slow_rank_of_a_grid_is_named_in_its_groups_only(reports):
    # Rank 3 makes rank 2 wait (tensor-parallel) and rank 1 (data-parallel); rank 2, late for
    # rank 0 only because it waited for rank 3, is not named.
    # Rank 0, which reports, is in neither of rank 3's groups: they are named by members.
    _assert_named(reports["grid"], 3, _lost(reports, "grid", waiters=2), [(1, 3), (2, 3)],
                  ["ranks 1,3", "ranks 2,3"])


def test_async_collectives_name_the_late_issuer(reports):
    _assert_named(reports["async"], 0, _lost(reports, "async"))


def test_a_rank_slow_outside_every_collective_has_more_own_time_a_step(reports):
    from straggler.analysis import own_time

    table = own_time.OwnTimeTable([0, 1, 2, 3], reports["own"])
    assert sorted(table) == [0, 1, 2, 3]
    # Every step marked; the first one's gap before it is known, a step may be dropped when a
    # completion is noted after its training thread issued the next collective.
    assert all(own_time.MIN_STEPS <= table[r].steps <= OWN_STEPS for r in table), dict(table)
    others = max(table[r].median_ms for r in (0, 2, 3))
    # 30 ms of sleep a step: the others spend 2 ms (their own sleep) and a little more (a
    # loaded host adds some).
    assert min(table[r].low_ms for r in (0, 2, 3)) >= 2.0, dict(table)
    assert table[1].median_ms - others > 0.6 * OWN_DELAY_S * 1e3, dict(table)
    assert table[1].low_ms > others, dict(table)
    # The lower-trimmed mean, what the policy judges (own_time.policy_inputs), shows it as well.
    times = own_time.policy_inputs(table, np.arange(4))[0][own_time.METRIC]
    assert times[1] - max(times[[0, 2, 3]]) > 0.6 * OWN_DELAY_S * 1e3, dict(table)


def test_a_job_calling_only_generate_report_has_its_steps_marked_by_its_section(reports):
    own = reports["own_sections"]
    assert sorted(own) == [0, 1, 2, 3], own
    # Its 30 steps (the first also holds what came before: the earlier scenarios, unmarked).
    assert all(20 <= steps <= OWN_STEPS for steps, _, _ in own.values()), own
    others = max(own[r][1] for r in (0, 2, 3))
    assert own[1][1] - others > 0.6 * OWN_DELAY_S * 1e3, own
    # The sections' time inside the gaps (the sleep in the nested section and the forward, up
    # to DDP's first all-reduce in the backward: 1-2 ms at load 15) is taken off the own time:
    # what is left is outside them. The nested section's time counts once (twice: 20 ms more).
    nested_ms = NESTED_S * 1e3
    assert all(nested_ms <= own[r][2] < 1.5 * nested_ms for r in own), own
    assert others < 1.5, own  # its sleep, in the sections, is not in it


def test_a_caller_woken_late_is_not_charged_for_its_wake_up(reports):
    steps, median_s = reports["late_wake"]
    # Its own time is its 2 ms of sleep a step (a loaded host adds a little), not the 20 ms
    # it spent waking up: before the caller's Work noted the resume, 22-25 ms.
    assert steps >= OWN_STEPS - 2 and median_s < 0.002 + LATE_WAKE_S / 2, reports["late_wake"]


def test_a_dropped_steps_sections_are_not_taken_off_the_next_steps_own_time(reports):
    count, outside = reports["dropped_sections"]
    # Rank 0 keeps 2 steps a round (its middle one is dropped): the last one's time outside its
    # section is its OWN_OUTSIDE_S of sleep, not that less the dropped step's 30 ms section
    # (0 once clamped).
    assert count == 2 * DROP_ROUNDS, (count, outside)
    after = outside[1::2]
    assert min(after) > OWN_OUTSIDE_S * 0.8 and np.median(after) < OWN_OUTSIDE_S + 0.015, outside


def test_a_rank_waiting_on_a_future_does_not_look_slower_than_ranks_waiting_on_their_work(
        reports):
    counts, medians = reports["mixed_waits"].T
    assert (counts >= OWN_STEPS - 3).all(), counts
    # Every rank: 3 ms of sleep and one late wake-up a step. Before the fix rank 0 had 23 ms,
    # the others about 3 ms.
    assert medians.max() - medians.min() < LATE_WAKE_S / 2, medians
    assert (medians > LATE_WAKE_S).all(), medians


def test_work_done_after_an_async_collective_finished_stays_the_ranks_own(reports):
    steps, median_s = reports["overlap"]
    # 2 ms before the collective, then 40 ms of which the all-reduce takes what the ranks'
    # arrivals spread (up to 33 ms at load 10 on 2 cores: a median of 9.3 ms was seen): some
    # of the 40 ms stays its own. Were the gap moved to wait()'s return, it would be the 2 ms
    # alone, so three times that tells the two apart on any load.
    assert steps >= OWN_STEPS - 2 and median_s > 3 * 0.002, reports["overlap"]
