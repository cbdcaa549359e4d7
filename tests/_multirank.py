"""Run a function on several fresh ranks joined by a gloo process group.

Every multi-rank test in the project uses :func:`run_ranks`::

    from _multirank import run_ranks

    def _worker(rank, world_size, scale):          # module level, so spawn can pickle it
        return rank * scale

    @pytest.mark.multirank                         # required: `make test-fast` skips them
    def test_something():
        assert run_ranks(_worker, 3, 10) == [0, 10, 20]

How it works: the parent starts ``world_size`` fresh processes: under pytest from a fork server
that imported torch once (``forkserver`` context, `_context`: importing torch costs each rank about
1.6 s of CPU, most of a short multi-rank test on 2 cores), elsewhere with ``spawn``. The fork
server imports nothing else (no straggler module), so a child is as fresh as a spawned one apart
from torch (imported before ``OMP_NUM_THREADS`` is set: the child sets its thread count itself).
Each child sets its environment (the parent's as it is at the call, ``RANK``, ``WORLD_SIZE``,
``LOCAL_RANK``, ``OMP_NUM_THREADS=1``, then ``env`` and ``rank_env[rank]``) *before* it unpickles
the function, so modules that read the environment at import see it; then it joins a gloo group
through a ``file://`` store in a fresh temporary directory, calls ``fn(rank, world_size, *args,
**kwargs)`` and sends the return value (or the formatted traceback) back through a queue. The
parent waits at most ``timeout_s`` for everything, kills what is left, and raises with the child's
traceback when a rank failed.

A rank listed in ``may_die`` may exit without a result (tests of a dead peer call ``os._exit``
there); its entry in the returned list is ``None``.
"""

from __future__ import annotations

import datetime
import multiprocessing as mp
import os
import pickle
import queue
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from typing import Any

# Whether the running test carries the `multirank` marker (set by tests/conftest.py for each
# test): run_ranks refuses to run without it, so `make test-fast` (-m "not multirank") stays
# free of spawned ranks. None outside pytest (benchmarks call run_ranks too).
CURRENT_TEST_MARKED: bool | None = None

# A rank that exited without a result is declared failed after this grace period, which lets its
# last queue message (flushed by a feeder thread) reach the parent first.
_EXIT_GRACE_S = 3.0
# How long the parent waits for ranks that returned their result to exit.
_EXIT_WAIT_S = 30.0


def _context(start_method: str | None) -> tuple[Any, bool]:
    """Where ranks start, and whether they end with the interpreter's normal exit.

    A fork server with torch imported under pytest (the test functions live in importable test
    modules); ``spawn`` elsewhere, where a caller's function may live in its ``__main__``
    (benchmarks), which only a spawned child imports, and where asked. A fork server's child
    ends with ``os._exit`` (no ``atexit`` handler, no interpreter finalization); so does a
    spawned one unless ``spawn`` was asked for (tests of what happens at exit): a normal exit
    risks torch 2.13's gloo at-exit abort (tests/attach/scripts/_common.py `finish`).
    """
    if start_method == "spawn":
        return mp.get_context("spawn"), True
    if CURRENT_TEST_MARKED is None or "forkserver" not in mp.get_all_start_methods():
        return mp.get_context("spawn"), False
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["torch", "torch.distributed"])
    return ctx, False


def _child(rank: int, world_size: int, store_path: str, env: dict[str, str],
           payload: bytes, results: mp.Queue, timeout_s: float,
           tcp_store_port: int | None = None, exit_normally: bool = True) -> None:
    """Body of one spawned rank: environment, process group, the function, the result; then,
    unless `exit_normally`, ``os._exit`` once the result is sent."""
    os.environ.clear()
    os.environ.update(env)
    try:
        if "torch" in sys.modules:  # from the fork server: it read no OMP_NUM_THREADS
            sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
        import torch.distributed as dist

        fn, args, kwargs = pickle.loads(payload)
        timeout = datetime.timedelta(seconds=timeout_s)
        if tcp_store_port is None:
            dist.init_process_group("gloo", init_method=f"file://{store_path}", rank=rank,
                                    world_size=world_size, timeout=timeout)
        else:  # a TCPStore served by the parent (tests of a store that goes away)
            store = dist.TCPStore("127.0.0.1", tcp_store_port, world_size, is_master=False,
                                  timeout=timeout)
            dist.init_process_group("gloo", store=store, rank=rank, world_size=world_size,
                                    timeout=timeout)
        try:
            value = fn(rank, world_size, *args, **kwargs)
        finally:
            dist.destroy_process_group()
        # Pickled here, so that an unpicklable result fails with a traceback instead of vanishing
        # in the queue's feeder thread.
        results.put((rank, True, pickle.dumps(value)))
    except BaseException:  # noqa: BLE001 - everything goes back to the parent
        results.put((rank, False, traceback.format_exc()))
    if not exit_normally:
        results.close()
        results.join_thread()  # the result is in the pipe before the process ends
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def run_ranks(fn: Callable[..., Any], world_size: int, *args: Any, timeout_s: float = 90.0,
              env: Mapping[str, str] | None = None,
              rank_env: Mapping[int, Mapping[str, str]] | None = None,
              may_die: Iterable[int] = (), tcp_store_port: int | None = None,
              start_method: str | None = None, **kwargs: Any) -> list[Any]:
    """Run ``fn(rank, world_size, *args, **kwargs)`` on ``world_size`` gloo ranks.

    Returns the ranks' return values in rank order. Raises ``RuntimeError`` (with the child's
    traceback) when a rank raised or exited without a result, and ``TimeoutError`` when the ranks
    did not all finish within ``timeout_s``; leftover processes are killed in both cases. A rank
that returned and then exited with a non-zero code (not in ``may_die``) fails the run too.
    ``tcp_store_port``: join through the TCPStore the caller serves on that port instead.
    ``start_method="spawn"``: start each rank as a fresh interpreter that exits normally (tests
    of what happens at interpreter exit); default: see `_context`.
    """
    if CURRENT_TEST_MARKED is False:
        raise RuntimeError("a test that spawns ranks must carry @pytest.mark.multirank "
                           "(make test-fast deselects them)")
    ctx, exit_normally = _context(start_method)
    tmpdir = tempfile.mkdtemp(prefix="straggler-mr-")
    store_path = os.path.join(tmpdir, "store")
    payload = pickle.dumps((fn, args, kwargs))
    results: mp.Queue = ctx.Queue()
    may_die = set(may_die)
    procs = []
    try:
        for rank in range(world_size):
            # The parent's environment now, as a spawned child would get it: a fork server's
            # children would otherwise inherit the server's, as it was when it started.
            child_env = {**os.environ, "RANK": str(rank), "WORLD_SIZE": str(world_size),
                         "LOCAL_RANK": str(rank), "MASTER_ADDR": "127.0.0.1",
                         "OMP_NUM_THREADS": "1"}
            child_env.update(env or {})
            child_env.update((rank_env or {}).get(rank, {}))
            p = ctx.Process(target=_child, name=f"rank{rank}", daemon=True,
                            args=(rank, world_size, store_path, child_env, payload, results,
                                  timeout_s, tcp_store_port, exit_normally))
            p.start()
            procs.append(p)
        values = _collect(procs, results, may_die, timeout_s)
        # Ranks exit at once, normally: the bound is for a loaded machine. A rank still running
        # after it is killed below, before its atexit hooks ran (10 s, the old bound, once cost
        # tests/test_exit_multirank.py its exit record at load ~13).
        deadline = time.monotonic() + _EXIT_WAIT_S
        for p in procs:
            p.join(timeout=max(0.1, deadline - time.monotonic()))
        # A rank that returned but then crashed while exiting (a detector thread aborting the
        # interpreter's finalization, say) failed its job all the same.
        crashed = {rank: p.exitcode for rank, p in enumerate(procs)
                   if rank not in may_die and p.exitcode not in (0, None)}
        if crashed:
            raise RuntimeError(f"ranks exited abnormally after returning (rank: exit code): "
                               f"{crashed}")
        return values
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
                p.join(timeout=5.0)
        results.close()
        shutil.rmtree(tmpdir, ignore_errors=True)


def _collect(procs: list, results: mp.Queue, may_die: set[int], timeout_s: float) -> list[Any]:
    """Read one message per rank, failing fast on an error, a silent exit or the deadline."""
    world_size = len(procs)
    values: list[Any] = [None] * world_size
    pending = set(range(world_size))
    dead_since: dict[int, float] = {}
    deadline = time.monotonic() + timeout_s
    while pending:
        now = time.monotonic()
        if now > deadline:
            raise TimeoutError(f"ranks {sorted(pending)} did not finish within {timeout_s} s")
        try:
            rank, ok, value = results.get(timeout=0.1)
        except queue.Empty:
            for rank in list(pending):
                if procs[rank].exitcode is None:
                    continue
                first = dead_since.setdefault(rank, now)
                if now - first < _EXIT_GRACE_S:
                    continue
                if rank in may_die:
                    pending.discard(rank)
                    continue
                raise RuntimeError(f"rank {rank} exited with code {procs[rank].exitcode} "
                                   "without a result") from None
            continue
        if not ok:
            raise RuntimeError(f"rank {rank} failed:\n{value}")
        values[rank] = pickle.loads(value)
        pending.discard(rank)
    return values
