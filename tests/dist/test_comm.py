"""Comm: collectives on a private gloo backend, with and without torch.distributed."""

import os
import time

import pytest
import torch
import torch.distributed as dist

from _multirank import run_ranks
from straggler.dist.comm import Comm, CommError


# -- no process group: a world of one ----------------------------------------------------------

def test_without_torch_distributed_the_world_is_this_process():
    assert not dist.is_initialized()
    comm = Comm.create()
    assert (comm.rank, comm.world_size, comm.global_ranks) == (0, 1, [0])
    t = torch.tensor([3.0, -1.0], dtype=torch.float64)
    assert comm.all_reduce(t, "min") is t and t.tolist() == [3.0, -1.0]
    assert [x.tolist() for x in comm.gather_to_first(t)] == [[3.0, -1.0]]
    assert [x.tolist() for x in comm.all_gather(t)] == [[3.0, -1.0]]
    assert comm.all_gather_object({"a": 1}) == [{"a": 1}]
    assert comm.broadcast_from_first(t).tolist() == [3.0, -1.0]
    assert comm.calls == {"all_reduce": 1, "gather_to_first": 1, "all_gather": 1,
                          "all_gather_object": 1, "broadcast_from_first": 1}


@pytest.mark.parametrize("value", [0, -1.0, float("nan"), float("inf"), True, "10"])
def test_timeout_must_be_a_positive_number(value):
    with pytest.raises(ValueError, match=r"`timeout_s="):
        Comm.create(timeout_s=value)


def test_a_process_group_without_torch_distributed_is_an_error():
    with pytest.raises(ValueError, match="`process_group="):
        Comm.create(process_group=object())


def test_unknown_reduce_op_names_the_value():
    with pytest.raises(ValueError, match="`op='avg'`"):
        Comm.create().all_reduce(torch.zeros(1), "avg")


def test_closed_comm_refuses_collectives_and_closes_twice():
    comm = Comm.create()
    comm.close()
    comm.close()
    with pytest.raises(RuntimeError, match=r"Comm.all_reduce\(\) called after close"):
        comm.all_reduce(torch.zeros(1), "max")


@pytest.mark.parametrize("world", ["2", "16"])
def test_a_launcher_world_without_a_process_group_is_an_error(monkeypatch, world):
    monkeypatch.setenv("WORLD_SIZE", world)
    with pytest.raises(RuntimeError, match=rf"Detector.initialize\(\) was called before "
                       rf"torch.distributed.init_process_group\(\), but `WORLD_SIZE={world}`"):
        Comm.create(call="Detector.initialize()")


@pytest.mark.parametrize("world", ["1", "", "not-a-number"])
def test_a_single_process_world_needs_no_process_group(monkeypatch, world):
    monkeypatch.setenv("WORLD_SIZE", world)
    assert Comm.create().world_size == 1


def test_non_tensor_is_a_type_error():
    with pytest.raises(TypeError, match=r"torch\.Tensor"):
        Comm.create().all_reduce([1.0], "max")


# -- several ranks --------------------------------------------------------------------------------

def _collectives_worker(rank, world_size):
    out = {}
    # Twice over the same ranks: a detector shut down and initialized again must not meet the
    # first Comm's rendezvous (torch's hashed group names would).
    for attempt in range(2):
        comm = Comm.create(timeout_s=60)
        t = torch.tensor([float(rank), -float(rank)], dtype=torch.float64)
        comm.all_reduce(t, dist.ReduceOp.MAX)
        as_int = comm.all_reduce(torch.tensor([rank + 1], dtype=torch.int64), "sum")
        gathered = comm.gather_to_first(torch.full((2,), float(rank), dtype=torch.float64))
        out[attempt] = dict(
            max=t.tolist(), sum=as_int.tolist(),
            gathered=None if gathered is None else [g.tolist() for g in gathered],
            all=[g.tolist() for g in comm.all_gather(torch.tensor([rank * 10.0]))],
            objects=comm.all_gather_object(("x" * (rank * 1000), {rank})),
            bcast=comm.broadcast_from_first(torch.tensor([100.0 + rank])).tolist(),
            ranks=(comm.rank, comm.world_size, comm.global_ranks))
        comm.close()
    sub = dist.new_group([2, 1])  # torch sorts ranks by default: group ranks 1 -> 0, 2 -> 1
    if rank == 0:
        with pytest.raises(ValueError, match="`process_group="):
            Comm.create(sub, timeout_s=60)
        return out
    comm = Comm.create(sub, timeout_s=60)
    gathered = comm.gather_to_first(torch.tensor([float(rank)]))
    out["sub"] = (comm.rank, comm.global_ranks,
                  None if gathered is None else [g.item() for g in gathered])
    comm.close()
    return out


@pytest.mark.multirank
def test_collectives_across_ranks_and_a_subgroup():
    results = run_ranks(_collectives_worker, 3, timeout_s=150)
    for rank, out in enumerate(results):
        for attempt in range(2):
            got = out[attempt]
            assert got["max"] == [2.0, 0.0] and got["sum"] == [6]
            assert got["gathered"] == ([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]] if rank == 0
                                       else None)
            assert got["all"] == [[0.0], [10.0], [20.0]]
            assert got["objects"] == [("x" * (r * 1000), {r}) for r in range(3)]
            assert got["bcast"] == [100.0]
            assert got["ranks"] == (rank, 3, [0, 1, 2])
    assert "sub" not in results[0]
    assert results[1]["sub"] == (0, [1, 2], [1.0, 2.0])
    assert results[2]["sub"] == (1, [1, 2], None)


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))  # gloo's threads are native: not in `threading`


def _close_worker(rank, world_size):
    before = _threads()
    comm = Comm.create(timeout_s=30)
    comm.all_reduce(torch.ones(1))
    comm.all_reduce_async(torch.ones(1)).wait()
    opened = _threads()
    comm.close()
    return before, opened, _threads()


@pytest.mark.multirank
@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_close_ends_the_backends_gloo_threads():
    """After `close` no gloo thread of ours is left for the interpreter's finalization, where
    torch 2.13 aborts the process when one releases a finished collective's tensors
    (docs/detector.md "Exit"): the backend's last reference goes, and its destructor joins
    them. (A `Pending` still held keeps gloo's network thread, which never takes the GIL.)"""
    for before, opened, closed in run_ranks(_close_worker, 2, timeout_s=60):
        assert opened > before
        assert closed == before


def _partial_worker(rank, world_size):
    """Rank 1 skips the second collective: rank 0's error names the call it waited for."""
    comm = Comm.create(timeout_s=2)
    comm.all_reduce(torch.zeros(1), "max")
    if rank == 1:
        time.sleep(6)  # longer than the timeout, shorter than run_ranks' bound
        return None
    with comm.during("Detector.generate_report() (report 3)"), pytest.raises(CommError) as info:
        comm.all_reduce(torch.zeros(1), "max")
    assert comm.call == "a straggler collective"  # restored after the block
    return str(info.value)


@pytest.mark.multirank
def test_a_collective_some_ranks_skip_names_the_call_they_did_not_make():
    message = run_ranks(_partial_worker, 2, timeout_s=60)[0]
    assert message.startswith("straggler: rank 0 waited 2 s for the other ranks of its group "
                              "(2 ranks) to call Detector.generate_report() (report 3);")
    assert "comm_timeout_s=2" in message


def _one_rank_disabled(rank, world_size):
    """Rank 1 has STRAGGLER_DISABLE=1 (set through rank_env): the others' initialize returns at
    once with the API off, instead of waiting comm_timeout_s for it and raising CommError."""
    from straggler import Detector

    start = time.monotonic()
    Detector.initialize(report_time_interval=0, comm_timeout_s=60)
    took = time.monotonic() - start
    with Detector.detection_section("step"):
        pass
    report = Detector.generate_report()
    off = Detector.core() is None and report is None and Detector.last_decision() is None
    Detector.shutdown()
    import os

    os.environ.pop("STRAGGLER_DISABLE", None)  # a later detector on every rank still meets
    Detector.initialize(report_time_interval=0, comm_timeout_s=60)
    with Detector.detection_section("step"):
        pass
    again = Detector.generate_report()
    Detector.shutdown()
    return took, off, again is not None


@pytest.mark.multirank
def test_a_rank_with_straggler_disable_turns_the_detector_off_on_every_rank_at_once():
    results = run_ranks(_one_rank_disabled, 3, timeout_s=120,
                        rank_env={1: {"STRAGGLER_DISABLE": "1"}})
    for took, off, _ in results:
        assert took < 30  # generous for a loaded machine; before the fix: 60 s, then CommError
        assert off
    assert [again for _, _, again in results] == [True, False, False]  # gathered on rank 0
