"""What the Prometheus exporter and the report log cost the training thread (one process).

Scrapes: a training loop of GIL-holding steps (pure Python, the worst case for a server thread
in the same process) runs while another process scrapes ``/metrics``: nobody, 10 scrapes/s
(Prometheus scrapes every 15-60 s: this is generous), or a flood (200 idle connections plus 8
clients scraping as fast as they can). Two exporters serve the same 1,024-rank record: ours
(`PrometheusExporter`: a snapshot rendered once per report, a pooled server) and the design it
replaced (prometheus_client's ``start_http_server``: a thread per connection, the record
rendered on every scrape, i.e. `_RecordCollector` on its registry). Conditions alternate over
``--rounds`` rounds; each row gives the median and p99 step time and their ratio to no exporter,
measured in the same run.

Report log: the time `generate_report` spends handing one record to the log, ours (queue it for
the writer thread) vs writing it in the training thread (encode + ``os.write``, the previous
design), on a local file and on a file system that takes ``--slow-ms`` per write (simulated with
a sleep in the write, as a slow NFS mount would).

    .venv/bin/python benchmarks/sinks_cost.py
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

SCRAPER = r"""
import os, signal, socket, sys, threading, time, urllib.request
port, mode = int(sys.argv[1]), sys.argv[2]
url = f"http://127.0.0.1:{port}/metrics"
stop = time.monotonic() + float(sys.argv[3])
done = [0]
def report(*_):
    print(done[0], flush=True)
    os._exit(0)
signal.signal(signal.SIGTERM, report)
def once():
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            r.read()
        done[0] += 1
    except OSError:
        pass
if mode == "rate10":
    while time.monotonic() < stop:
        once(); time.sleep(0.1)
elif mode == "flood":
    idle = []
    for _ in range(200):  # a server that paces its accepts leaves some in the kernel's backlog
        try:
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=0.05))
        except OSError:
            pass
    def loop():
        while time.monotonic() < stop:
            once()
    ts = [threading.Thread(target=loop) for _ in range(8)]
    [t.start() for t in ts]; [t.join() for t in ts]
report()
"""


def record(n_ranks: int, n_sections: int) -> dict[str, Any]:
    from straggler.sinks.record import SCHEMA, SCHEMA_VERSION

    ranks = list(range(n_ranks))
    rel = [1.0 - 0.3 * (r % 97 == 0) for r in ranks]
    return {
        "schema": SCHEMA, "version": SCHEMA_VERSION, "run_id": "bench", "time": 1.7e9,
        "iteration": 100, "window_iterations": 10, "window_s": 60.0, "reporting_rank": 0,
        "threshold": 0.75, "ranks": ranks, "nodes": [f"n{r // 8}" for r in ranks],
        "gpu": {"relative": rel, "individual": [1.0] * n_ranks},
        "sections": {f"s{i}": {"relative": rel, "individual": [1.0] * n_ranks,
                               "median_ms": [10.0] * n_ranks} for i in range(n_sections)},
        "flagged": [{"rank": r, "metrics": ["gpu:relative"]} for r in ranks if rel[r] < 0.75],
        "confirmed": [], "policy": {}, "causes": [], "telemetry": {}, "telemetry_flagged": {},
        "overhead": {"report_ms": 20.0, "scores_ms": 12.0, "sections": n_sections,
                     "gpu_timers": 3},
    }


class OldExporter:
    """The replaced design: prometheus_client's server, the record rendered per scrape."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, start_http_server

        from straggler.sinks.prometheus import _RecordCollector

        self.collector = _RecordCollector()
        registry = CollectorRegistry(auto_describe=False)
        registry.register(self.collector)
        self.server, self.thread = start_http_server(0, addr="127.0.0.1", registry=registry)
        self.port = self.server.server_address[1]

    def update(self, rec: dict[str, Any]) -> None:
        self.collector.record, self.collector.reports = rec, self.collector.reports + 1

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def step(work: int) -> None:
    total = 0
    for i in range(work):  # holds the GIL throughout, as Python-heavy training code does
        total += i * i


def run_steps(steps: int, work: int) -> list[float]:
    out = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step(work)
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def scrape_condition(exporter: str, load: str, steps: int, work: int, rec: dict) -> tuple:
    from straggler.sinks.prometheus import PrometheusExporter, PrometheusOptions

    server: Any = None
    if exporter == "ours":
        server = PrometheusExporter(PrometheusOptions(0))
        server.update(rec)
        server.wait_rendered(60)
    elif exporter == "old":
        server = OldExporter()
        server.update(rec)
    proc = None
    if load != "none" and server is not None:
        proc = subprocess.Popen([sys.executable, "-c", SCRAPER, str(server.port), load, "3600"],
                                stdout=subprocess.PIPE, text=True)
        time.sleep(1.0)  # let it connect
    t0, cpu0, own0 = time.monotonic(), time.process_time(), time.thread_time()
    times = run_steps(steps, work)
    span = time.monotonic() - t0
    # CPU of every other thread of this process (the exporter's): what it can take from the
    # training thread, measured without the machine's load in it.
    others_cpu_s = (time.process_time() - cpu0) - (time.thread_time() - own0)
    scrapes = 0
    if proc is not None:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
        scrapes = int(out.strip() or 0) if out else 0
    if server is not None:
        server.close()
    return times, span, scrapes, others_cpu_s


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def scrapes_table(args: argparse.Namespace) -> None:
    rec = record(args.ranks, args.sections)
    conditions = [("none", "none")] + [(e, load) for load in ("none", "rate10", "flood")
                                       for e in ("ours", "old")]
    times: dict[tuple, list[float]] = {c: [] for c in conditions}
    rates: dict[tuple, list[float]] = {c: [] for c in conditions}
    cpu: dict[tuple, list[float]] = {c: [] for c in conditions}
    for _ in range(args.rounds):
        for c in conditions:
            t, span, scrapes, others = scrape_condition(c[0], c[1], args.steps, args.work, rec)
            times[c] += t[args.steps // 10:]  # the first steps warm up
            rates[c].append(scrapes / span)
            cpu[c].append(others * 1e3 / span)
    base_med = statistics.median(times[("none", "none")])
    base_mean = statistics.fmean(times[("none", "none")])
    base_p99 = pct(times[("none", "none")], 0.99)
    print(f"\n{args.ranks} ranks x {args.sections} sections per record; {args.steps} steps x "
          f"{args.rounds} rounds per row; step = {base_med:.2f} ms of GIL-holding Python\n")
    print("| exporter | scrapers | scrapes served/s | exporter CPU (ms per s) | mean step (ms) | "
          "x no exporter | median (ms) | x no exporter | p99 (ms) | x no exporter |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    names = {"none": "none", "ours": "ours (snapshot, pooled)",
             "old": "prometheus_client, render per scrape"}
    loads = {"none": "none", "rate10": "10/s", "flood": "200 idle + 8 flooding"}
    for c in conditions:
        med, p99 = statistics.median(times[c]), pct(times[c], 0.99)
        mean = statistics.fmean(times[c])
        print(f"| {names[c[0]]} | {loads[c[1]] if c[0] != 'none' else '-'} | "
              f"{statistics.fmean(rates[c]):.1f} | {statistics.fmean(cpu[c]):.1f} | "
              f"{mean:.3f} | {mean / base_mean:.3f} | "
              f"{med:.3f} | {med / base_med:.3f} | {p99:.3f} | {p99 / base_p99:.3f} |")


def log_table(args: argparse.Namespace) -> None:
    from straggler.sinks import reportlog
    from straggler.sinks.reportlog import ReportLog, ReportLogOptions

    rec = record(args.ranks, args.sections)
    real = reportlog._write_all

    def slow_write(fd: int, data: bytes) -> None:
        time.sleep(args.slow_ms / 1e3)
        real(fd, data)

    print(f"\nReport log, one {len(json.dumps(rec)) / 1e3:.0f} kB record per report, "
          f"{args.log_reports} reports per row: time in the training thread per report\n")
    print("| file system | writer | median (ms) | max (ms) | x ours |")
    print("|---|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for fs, write in (("local", real), (f"{args.slow_ms:g} ms per write", slow_write)):
            reportlog._write_all = write
            rows = {}
            for writer in ("ours (queue + writer thread)", "in the training thread"):
                path = os.path.join(tmp, f"{fs[:5]}-{len(rows)}.jsonl")
                log = ReportLog(ReportLogOptions(path))
                got = []
                for _ in range(args.log_reports):
                    t0 = time.perf_counter()
                    if writer.startswith("ours"):
                        log.write(rec)
                    else:
                        log._write_line(rec)  # what the previous writer did in the caller
                    got.append((time.perf_counter() - t0) * 1e3)
                    time.sleep(args.slow_ms / 1e3 + 0.005)  # reports are seconds apart
                log.close(timeout_s=30)
                rows[writer] = got
            ours = statistics.median(rows["ours (queue + writer thread)"])
            for writer, got in rows.items():
                med = statistics.median(got)
                print(f"| {fs} | {writer} | {med:.3f} | {max(got):.3f} | {med / ours:.0f} |")
    reportlog._write_all = real


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=1024)
    ap.add_argument("--sections", type=int, default=8)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--work", type=int, default=100_000, help="loop length of one step")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--slow-ms", type=float, default=50.0)
    ap.add_argument("--log-reports", type=int, default=40)
    ap.add_argument("--only", choices=["scrapes", "log"], default=None)
    args = ap.parse_args()
    load = os.getloadavg()
    print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, "
          f"{os.cpu_count()} CPUs")
    if args.only in (None, "scrapes"):
        scrapes_table(args)
    if args.only in (None, "log"):
        log_table(args)


if __name__ == "__main__":
    main()
