"""The hot path allocates nothing once warm: start/stop through Python, counted by malloc.

A small LD_PRELOAD shim (tests/sim/malloc_count.c, compiled here) counts malloc, calloc and
realloc calls in a child process while the loop runs. operator new goes through malloc, so this
covers the C++ core, pybind11's argument handling and the simulated driver alike. (CPython's
small-object allocator serves Python objects from its own arenas; a new arena would show up.)
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from sim.simcuda import REPO, run_python

SHIM_SOURCE = REPO / "tests" / "sim" / "malloc_count.c"

# Both children: the shim's counter, and an engine per backend with one timer `t`.
PRELUDE = """
import ctypes, json, os
shim = ctypes.CDLL(os.environ["LD_PRELOAD"])
shim.malloc_count_stop.restype = ctypes.c_long
from straggler import _core
result = {}
for backend in ("host", "cuda"):
    eng = _core.TimerEngine(backend)
    t = eng.timer_id("hot")
"""

CHILD = PRELUDE + """    start, stop, harvest = eng.start, eng.stop, eng.harvest
    for stream in (0, 5):                      # warm-up: the event pool, the pending queue,
        for i in range(3000):                  # this thread's slot, the ring buffer all fill
            start(t, stream); stop(t, stream)
            start("named", stream); stop("named", stream)
            if i % 100 == 0:
                harvest()
    eng.flush()
    counts = []
    for _ in range(3):                         # the least of 3 runs: a stray allocation by the
        shim.malloc_count_start()              # interpreter (e.g. a GC pass) is not ours
        for i in range(5000):
            start(t, 5); stop(t, 5)
            start("named", 0); stop("named", 0)
            if i % 100 == 0:
                harvest()
        counts.append(shim.malloc_count_stop())
    result[backend] = min(counts)
    eng.flush()
    eng.close()
print(json.dumps(result))
"""


@pytest.fixture(scope="module")
def malloc_shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The malloc-counting LD_PRELOAD shim, built once (the suite's `make sim` needs a compiler)."""
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    assert compiler is not None, "no C compiler to build the malloc-counting shim"
    shim = tmp_path_factory.mktemp("shim") / "libmalloc_count.so"
    subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-o", str(shim), str(SHIM_SOURCE),
                    "-ldl"], check=True, capture_output=True, timeout=120)
    return shim


def allocations_in(child: str, shim: Path) -> dict[str, int]:
    """Runs `child` under the shim; its last line is the JSON of allocations per backend."""
    out = run_python(child, LD_PRELOAD=shim)
    return json.loads(out.strip().splitlines()[-1])


def test_start_stop_allocate_nothing_once_warm(malloc_shim: Path):
    assert allocations_in(CHILD, malloc_shim) == {"host": 0, "cuda": 0}


# One report window per 100 start/stop pairs: reset() must keep this thread's slot, else every
# window's first start() allocates it again.
CHILD_WINDOWS = PRELUDE + """\
    start, stop, harvest, reset = eng.start, eng.stop, eng.harvest, eng.reset
    def windows():
        for i in range(3000):
            start(t, 0); stop(t, 0)
            if i % 100 == 99:
                harvest(); reset()
    windows()                                  # warm-up
    eng.flush()
    counts = []
    for _ in range(3):
        shim.malloc_count_start()
        windows()
        counts.append(shim.malloc_count_stop())
    result[backend] = min(counts)
    eng.close()
print(json.dumps(result))
"""


def test_start_stop_allocate_nothing_across_report_windows(malloc_shim: Path):
    assert allocations_in(CHILD_WINDOWS, malloc_shim) == {"host": 0, "cuda": 0}


# The op path of busy time (docs/engine.md "Busy time"): a busy scope with ops reported as the
# op observer reports them (op_begin/op_end, with and without a per-op timer) and a collective
# (comm_end). Warm-up fills the mark pool, this thread's chain and the timers' rings.
CHILD_OPS = PRELUDE + """    op = eng.timer_id("op")
    eng.set_busy(t, True)
    start, stop, harvest = eng.start, eng.stop, eng.harvest
    op_begin, op_end, comm_end = eng.op_begin, eng.op_end, eng.comm_end
    def steps(stream, n):
        for i in range(n):
            start(t, stream)
            tok = op_begin(stream); op_end(tok, op, stream)
            tok = op_begin(stream); op_end(tok, -1, stream)
            comm_end(stream)
            tok = op_begin(stream); op_end(tok, op, stream)
            stop(t, stream)
            if i % 100 == 0:
                harvest()
    for stream in (0, 5):                      # warm-up
        steps(stream, 3000)
    eng.flush()
    assert eng.open_scopes() == 0 and len(eng.durations("hot")) > 0
    counts = []
    for _ in range(3):
        shim.malloc_count_start()
        steps(5, 3000)
        counts.append(shim.malloc_count_stop())
    result[backend] = min(counts)
    eng.flush()
    eng.close()
print(json.dumps(result))
"""


def test_busy_scope_ops_allocate_nothing_once_warm(malloc_shim: Path):
    assert allocations_in(CHILD_OPS, malloc_shim) == {"host": 0, "cuda": 0}
