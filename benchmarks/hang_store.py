"""Store traffic of hang detection: what one TCPStore server takes, and what 16,384 ranks ask.

Measures, on this machine, against a real ``torch.distributed.TCPStore`` server (libuv):

1. the size of a typical progress record (a Megatron-like rank: 10 groups, a section);
2. the server's throughput for those writes from `CLIENTS` client processes doing nothing else
   (the ceiling, ops/s), and the round trip of one write from an idle client;
3. the reporter's read of every record after a hang (`ProgressStore.get_many`: ``check`` and
   ``multi_get`` per 256 keys).

Then prints the budget at 16,384 ranks: `HangOptions.max_store_qps` (2,000/s) sets each rank's
publish interval to world / 2,000 s (8.2 s), so the server sees at most 2,000 writes per second
(plus the same number of ``check`` reads while ranks stall), whatever the world size.

    .venv/bin/python benchmarks/hang_store.py [--clients 4] [--seconds 3] [--ranks 16384]
"""

from __future__ import annotations

import argparse
import datetime
import multiprocessing as mp
import os
import statistics
import sys
import time

import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from straggler.hang import HangOptions, ProgressRecord, ProgressStore


def typical_record(rank: int) -> ProgressRecord:
    """A Megatron-like rank's record: TP/PP/DP/CP/EP/embedding... groups, one open section."""
    groups = {str(i): 123456 + i for i in range(10)}
    return ProgressRecord(r=rank, node="dgx-a100-0123", gpu="GPU-8c1f4f0e-5a8d-5b39-9f2e-3b5e",
                          pid=4242, t=time.time(), step=120345, sec="forward_backward",
                          sec_s=0.412, open=["train_step", "forward_backward"], g=groups,
                          op={k: "allreduce_" for k in groups}, stall_s=0.0)


def _client(port: int, seconds: float, index: int, out: mp.Queue) -> None:
    store = dist.TCPStore("127.0.0.1", port, is_master=False,
                          timeout=datetime.timedelta(seconds=30))
    value = typical_record(index).to_json()
    n = 0
    t0 = time.monotonic()
    end = t0 + seconds
    while time.monotonic() < end:
        store.set(f"p/{index}/{n % 1000}", value)
        n += 1
    store.get(f"p/{index}/0")  # a set is not acknowledged: this waits until all were served
    out.put((n, time.monotonic() - t0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--ranks", type=int, default=16384)
    args = parser.parse_args()

    record = typical_record(16383).to_json()
    size = len(record.encode())
    server = dist.TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False,
                           timeout=datetime.timedelta(seconds=30))
    port = server.port
    client = dist.TCPStore("127.0.0.1", port, is_master=False,
                           timeout=datetime.timedelta(seconds=30))

    lat, rtt = [], []
    for i in range(2000):
        t0 = time.perf_counter()
        client.set(f"lat/{i % 100}", record)
        t1 = time.perf_counter()
        client.add("lat/n", 1)  # a request the server answers: one round trip
        lat.append(t1 - t0)
        rtt.append(time.perf_counter() - t1)
    set_us = statistics.median(lat) * 1e6
    rtt_us = statistics.median(rtt) * 1e6

    ctx = mp.get_context("spawn")
    out: mp.Queue = ctx.Queue()
    procs = [ctx.Process(target=_client, args=(port, args.seconds, i, out))
             for i in range(args.clients)]
    for p in procs:
        p.start()
    done = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join()
    qps = sum(n for n, _ in done) / max(s for _, s in done)

    keys = [f"p/{r}" for r in range(args.ranks)]
    t0 = time.perf_counter()
    for k in keys:  # as the ranks publish: one set each (one big multi_set is slow to serve)
        client.set(f"bench/{k}", record)
    client.get(f"bench/{keys[-1]}")  # served in order: every set is in
    fill_s = time.perf_counter() - t0
    reader = ProgressStore(client, "bench")  # PrefixStore("bench"): keys bench/p/<rank>
    t0 = time.perf_counter()
    values = reader.get_many(keys)  # what the reporter does: check + multi_get per 256 keys
    read_s = time.perf_counter() - t0
    assert len(values) == args.ranks and not reader.failed

    opts = HangOptions()
    interval = opts.publish_interval_s(args.ranks)
    budget = args.ranks / interval
    load = os.getloadavg()[0]
    print(f"machine: {os.cpu_count()} CPUs, load average {load:.1f}; torch "
          f"{__import__('torch').__version__}")
    print()
    print("| quantity | value |")
    print("|---|---|")
    print(f"| progress record (10 groups, one section) | {size} bytes |")
    print(f"| one `set` from an idle client (not acknowledged: the rank does not wait) | "
          f"{set_us:.0f} µs |")
    print(f"| one `add` (a request the server answers), median round trip | {rtt_us:.0f} µs |")
    print(f"| server ceiling, {args.clients} clients writing flat out | {qps:,.0f} writes/s |")
    print(f"| publish interval at {args.ranks:,} ranks (max_store_qps {opts.max_store_qps:,.0f})"
          f" | {interval:.1f} s |")
    print(f"| writes/s at the server at {args.ranks:,} ranks | {budget:,.0f} "
          f"({budget / qps:.0%} of the ceiling measured here) |")
    print(f"| bytes/s into the server at {args.ranks:,} ranks | {budget * size / 1e6:.2f} MB/s |")
    print(f"| server memory for every record | {args.ranks * size / 1e6:.1f} MB |")
    print(f"| {args.ranks:,} records written back to back by one client, until served | "
          f"{fill_s * 1e3:.0f} ms |")
    print(f"| reporter reads {args.ranks:,} records (check + multi_get) | {read_s * 1e3:.0f} ms |")
    print(f"| stacks fetched per finding (cap) | {8} x <= {opts.stack_bytes} bytes |")


if __name__ == "__main__":
    main()
