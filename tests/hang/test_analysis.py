"""The finding from hand-made progress records (pure: no process group, no store)."""

from __future__ import annotations

from straggler.hang import EXITED, GONE, HANG, NOT_ARRIVED, STALL, ProgressRecord, analyse

NOW = 1000.0


def _rec(r: int, *, seq: int = 5, wait: bool = True, sec: str = "step", age: float = 0.5,
         stall: float = 10.0, group: str = "0", op: str = "all_reduce") -> ProgressRecord:
    w = {"op": op, "group": group, "seq": seq} if wait else None
    return ProgressRecord(r=r, node=f"n{r // 2}", pid=100 + r, t=NOW - age, sec=sec,
                          sec_s=stall, g={group: seq}, stall_s=stall, wait=w)


def _analyse(records: dict[int, ProgressRecord], world: int = 4, **kw: object):
    return analyse(records, world, NOW, gone_after_s=5.0, timeout_s=3.0, **kw)  # type: ignore


def test_rank_behind_in_the_waited_collective_is_the_culprit() -> None:
    recs = {r: _rec(r) for r in (0, 1, 3)}
    recs[2] = _rec(2, seq=4, wait=False, sec="data")
    f = _analyse(recs)
    assert f.kind == HANG
    assert f.culprit_ranks == [2]
    assert f.culprits[0].state == NOT_ARRIVED and f.culprits[0].section == "data"
    assert f.culprits[0].node == "n1" and f.culprits[0].seq == 4
    assert f.waiting == (0, 1, 3)
    assert f.wait is not None and (f.wait.op, f.wait.group, f.wait.seq) == ("all_reduce", "0", 5)


def test_the_collective_most_ranks_wait_in_decides() -> None:
    # rank 2 skipped collective #5 of group 0 and waits in group 7, where rank 3 is behind
    recs = {r: _rec(r) for r in (0, 1)}
    recs[3] = _rec(3)
    recs[3].g["7"] = 1
    recs[2] = _rec(2, seq=2, group="7")
    recs[2].g["0"] = 4
    f = _analyse(recs)
    assert f.culprit_ranks == [2]
    assert f.culprits[0].waiting_in is not None and f.culprits[0].waiting_in.group == "7"


def test_silent_rank_is_gone_and_an_exited_one_is_named_so() -> None:
    recs = {r: _rec(r) for r in (0, 1, 3)}
    recs[2] = _rec(2, seq=5, wait=False, age=30.0)
    f = _analyse(recs)
    assert [(c.rank, c.state) for c in f.culprits] == [(2, GONE)]
    assert f.culprits[0].last_seen_s == 30.0
    f = _analyse(recs, exited=lambda rec: rec.r == 2)
    assert f.culprits[0].state == EXITED
    assert "its process exited" in f.format()


def test_rank_that_never_published_is_gone() -> None:
    recs = {r: _rec(r) for r in (0, 1, 2)}
    f = _analyse(recs)
    assert [(c.rank, c.state) for c in f.culprits] == [(3, GONE)]
    assert "never published" in f.format()
    assert f.to_dict()["culprits"][0]["last_seen_s"] is None


def test_whole_job_stall_in_one_section_blames_nobody() -> None:
    recs = {r: _rec(r, wait=False, sec="checkpoint") for r in range(4)}
    f = _analyse(recs)
    assert f.kind == STALL and f.culprits == ()
    assert f.sections == (("checkpoint", 4),)
    assert "No rank is blamed" in f.format()


def test_without_sequence_numbers_the_ranks_outside_collectives_are_named() -> None:
    recs = {r: _rec(r, seq=-1) for r in (0, 1, 3)}
    recs[2] = _rec(2, seq=-1, wait=False)
    assert _analyse(recs).culprit_ranks == [2]


def test_stacks_are_attached_and_formatted() -> None:
    recs = {r: _rec(r) for r in (0, 1, 3)}
    recs[2] = _rec(2, seq=4, wait=False)
    f = _analyse(recs).with_stacks({2: '  File "x.py", line 3, in stuck\n'})
    text = f.format()
    assert "rank 2 (node n1) has not reached all_reduce #5" in text
    assert 'File "x.py", line 3, in stuck' in text
    assert f.to_dict()["culprits"][0]["stack"].endswith("in stuck\n")


def test_ops_named_by_the_collective_observer_read_as_the_python_api_names_them() -> None:
    # The observer says "allreduce_" (c10d's name); an attached job printed it as such.
    recs = {r: _rec(r, op="allreduce_") for r in (0, 1, 3)}
    recs[2] = _rec(2, seq=4, wait=False)
    text = _analyse(recs).format()
    assert "waited 10.5 s in all_reduce on WORLD (group 0), collective #5" in text
    assert "has not reached all_reduce #5" in text and "allreduce_" not in text


def test_ranks_waiting_further_on_in_the_same_group_are_listed() -> None:
    # 3 gloo ranks, rank 2 stopped: rank 0 waits in broadcast #5, rank 1 (let through by the
    # root) in all_reduce #6. It was in neither list: "1 of 3 ranks have waited".
    from straggler.hang import HangFinding

    recs = {0: _rec(0, op="broadcast_"), 1: _rec(1, seq=6), 2: _rec(2, seq=4, wait=False)}
    f = _analyse(recs, world=3)
    assert (f.culprit_ranks, f.waiting, f.waiting_later) == ([2], (0,), (1,))
    text = f.format()
    assert "  waiting: rank(s) 0; further on, in later collectives of that group: rank(s) 1" \
        in text
    assert HangFinding.from_dict(f.to_dict()).format() == text


def test_a_finding_read_back_from_its_record_formats_as_the_log_did() -> None:
    # `straggler summarize` rebuilds the log block from the report log's hang record
    from straggler.hang import HangFinding

    recs = {r: _rec(r) for r in (0, 1, 3)}
    recs[2] = _rec(2, seq=4, wait=False, sec="data")
    recs[3] = _rec(3, age=30.0)  # gone: never seen again (last_seen_s set)
    hang = _analyse(recs).with_stacks({2: '  File "x.py", line 3, in stuck\n'})
    stall = _analyse({r: _rec(r, wait=False, sec="checkpoint") for r in range(4)})
    for f in (hang, stall):
        again = HangFinding.from_dict(f.to_dict())
        assert again.format() == f.format()
        assert again.to_dict() == f.to_dict()


def test_ranks_in_different_collectives_of_a_group_are_a_mismatch_naming_each() -> None:
    # The Lightning trial: rank 0 in a barrier, rank 1 in a broadcast, both collective #4 of
    # group "1" (a new_group), nobody behind. It read "whole-job stall ... none inside a
    # collective ... No rank is blamed".
    from straggler.hang import MISMATCHED, HangFinding

    recs = {0: _rec(0, seq=4, group="1", op="barrier"),
            1: _rec(1, seq=4, group="1", op="broadcast_")}
    f = _analyse(recs, world=2)
    assert f.kind == HANG
    assert [(c.rank, c.state) for c in f.culprits] == [(0, MISMATCHED), (1, MISMATCHED)]
    assert [(w.op, w.group, w.seq, ranks) for w, ranks in f.mismatch] == [
        ("barrier", "1", 4, (0,)), ("broadcast", "1", 4, (1,))]
    text = f.format()
    assert text.startswith("straggler: HANG: collective mismatch (desync): 2 of 2 ranks")
    assert "  in barrier on group 1, collective #4: rank(s) 0\n" in text
    assert "  in broadcast on group 1, collective #4: rank(s) 1\n" in text
    assert "rank 1 (node n0) is in broadcast on group 1, collective #4" in text
    assert "none inside a collective" not in text and "No rank is blamed" not in text
    assert HangFinding.from_dict(f.to_dict()).format() == text


def test_a_mismatch_names_the_ranks_outside_the_collective_most_ranks_wait_in() -> None:
    # ranks 0, 1, 3 in all_reduce #5 of WORLD; rank 2 in all_reduce #6 of WORLD (a different
    # sequence number), nobody behind; then rank 2 in collective #5 of another group instead.
    from straggler.hang import MISMATCHED

    for odd in (_rec(2, seq=6), _rec(2, seq=5, group="3", op="barrier")):
        recs = {r: _rec(r) for r in (0, 1, 3)}
        recs[2] = odd
        if odd.waiting is not None and odd.waiting.group == "3":
            recs[2].g["0"] = 5
        f = _analyse(recs)
        assert [(c.rank, c.state) for c in f.culprits] == [(2, MISMATCHED)], f.format()
        assert f.wait is not None and (f.wait.group, f.wait.seq) == ("0", 5)
        assert f.waiting == (0, 1, 3) and len(f.mismatch) == 2


def test_every_rank_in_the_same_collective_is_not_called_outside_collectives() -> None:
    recs = {r: _rec(r) for r in range(4)}
    f = _analyse(recs)
    assert f.kind == STALL and f.mismatch == ()
    assert "all inside all_reduce on WORLD (group 0), collective #5, none behind" in f.format()


def test_a_rank_behind_that_waits_in_another_group_says_for_whom_and_that_it_is_a_deadlock(
        ) -> None:
    # Rank 2 skipped all_reduce #7 of WORLD and waits in a barrier of group 1 (ranks 2, 3),
    # whose rank 3 waits in that all_reduce: each waits for the other. The report read
    # "has not reached all_reduce #7 ... waiting itself in barrier on group 1", which did not
    # say whom rank 2 waits for, nor that rank 3 waits for rank 2.
    from straggler.hang import HangFinding

    recs = {r: _rec(r, seq=7) for r in (0, 1, 3)}
    recs[3].g["1"] = 0
    recs[2] = _rec(2, seq=1, group="1", op="barrier")
    recs[2].g["0"] = 6
    f = _analyse(recs)
    assert f.culprit_ranks == [2] and f.culprits[0].blocked_by == (3,)
    text = f.format()
    assert ("    it waits instead in barrier on group 1, collective #1, for rank(s) 3, which "
            "wait in all_reduce #7 for rank 2: a deadlock, each waits for the other") in text
    assert "waiting itself" not in text
    assert HangFinding.from_dict(f.to_dict()).format() == text


def test_a_rank_behind_that_waits_for_a_gone_rank_in_another_group_says_so() -> None:
    recs = {r: _rec(r, seq=7) for r in (0, 1)}
    recs[3] = _rec(3, seq=7, wait=False, age=30.0)  # dead before group 1's barrier
    recs[3].g["1"] = 0
    recs[2] = _rec(2, seq=1, group="1", op="barrier")
    recs[2].g["0"] = 6
    text = _analyse(recs).format()
    assert "it waits instead in barrier on group 1, collective #1, for rank(s) 3 (gone)" in text


def test_the_report_says_where_in_their_code_the_waiting_ranks_wait() -> None:
    # A DDP job: ranks 0, 1 in a barrier of their own code, rank 2 in the backward's
    # all-reduce. The report named rank 2's line only; where ranks 0 and 1 waited was not said.
    from straggler.hang import HangFinding

    recs = {r: _rec(r, seq=14, op="barrier") for r in (0, 1)}
    recs[2] = _rec(2, seq=14, op="allreduce_")
    for r in (0, 1):
        recs[r].loc = "/job/train.py:44 in main (innermost: torch/distributed/c10d.py:9 in x)"
    recs[2].loc = "/job/train.py:50 in main"
    f = _analyse(recs, world=3)
    text = f.format()
    assert ("  in barrier on WORLD (group 0), collective #14: rank(s) 0,1, at /job/train.py:44 "
            "in main (innermost: ") in text, text
    assert HangFinding.from_dict(f.to_dict()).format() == text
    # ranks behind: the waiting line says where the others wait, each place with its ranks
    recs = {r: _rec(r) for r in (0, 1, 3)}
    recs[2] = _rec(2, seq=4, wait=False)
    recs[0].loc = recs[1].loc = "/job/train.py:50 in main"
    recs[3].loc = "/job/train.py:61 in evaluate"
    text = _analyse(recs).format()
    assert ("  waiting: rank(s) 0,1,3 (rank(s) 0,1 at /job/train.py:50 in main; rank(s) 3 at "
            "/job/train.py:61 in evaluate)") in text, text
