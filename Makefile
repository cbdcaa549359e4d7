# One-command set-up from a clean clone: `make test` and `make demo` build everything they need.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
SIMDIR := build/sim
# flock (util-linux) serialises installs that run at the same time in one checkout; without it,
# installs simply run unserialised.
LOCK   := $(if $(shell command -v flock 2>/dev/null),flock build/.install.lock)

CORE_SOURCES := CMakeLists.txt pyproject.toml $(wildcard csrc/*/*.cpp csrc/*/*.h csrc/*/*.cu csrc/*/*.ptx cmake/*.cmake) \
                straggler/attach/straggler_attach.pth
SIM_LIBS     := $(SIMDIR)/libcuda.so.1 $(if $(wildcard tests/sim/sim_nvml.cpp),$(SIMDIR)/libnvidia-ml.so.1)

.PHONY: all install sim cpp-test cpp-test-bins stress-bins test test-setup test-fast test-install lint demo bench gpu-check \
        clean

all: install sim

# The environment: a venv with the CPU wheel of torch (pinned, so pip never pulls a CUDA build)
# and what building the package needs; `make demo` needs no more.
# One pip call per step: each call costs seconds of resolving even when nothing is new.
$(VENV)/.deps-run: pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q torch==2.13.0 "numpy>=1.24" "scikit-build-core>=0.10" \
	    "pybind11>=2.12,<4" ninja
	touch $@

# Tests, tools and lint: `make test`, `make lint`.
# In one call: pytest and its plugins; the report log's tools and exporter (straggler plot, the
# Prometheus exporter); the optional integrations tested in the suite (Lightning, and what NVRx's
# FT engine needs); the lint and type gate (`make lint`), pinned so every checkout sees the same
# findings. NVRx's FT engine itself (0.4.1 is the newest build for CPython 3.11 / glibc 2.36)
# goes in with --no-deps, which keeps its heavy extras out.
$(VENV)/.deps: $(VENV)/.deps-run
	$(PY) -m pip install -q "pytest>=7.4" "pytest-timeout>=2.2" "pytest-xdist>=3.5" \
	    "matplotlib>=3.6" "prometheus-client>=0.17" \
	    "lightning>=2.2" psutil pyyaml packaging defusedxml nvidia-ml-py \
	    ruff==0.17.6 mypy==2.4.1 clang-format==23.1.5
	$(PY) -m pip install -q --no-deps nvidia-resiliency-ext==0.4.1
	touch $@

# The editable install maps each module to its file when it is made: a module added, moved or
# removed re-installs (build/.pyfiles, the list of the package's files, changes only then).
PY_FILES_STAMP := build/.pyfiles
# (Through a file of this make's own, renamed at once: `make test-setup` runs makes side by side.)
$(shell mkdir -p build; new=$(PY_FILES_STAMP).$$$$; find straggler -name '*.py' | sort >$$new; \
        if cmp -s $$new $(PY_FILES_STAMP); then rm -f $$new; else mv $$new $(PY_FILES_STAMP); fi)

# The package, editable: Python edits apply at once, C++ edits rebuild here. --no-deps: its
# dependencies (torch, numpy) are .deps-run's, and it installs nothing but the package, so that
# it can run beside .deps's pip (`make test-setup`).
$(VENV)/.built: $(VENV)/.deps-run $(CORE_SOURCES) $(PY_FILES_STAMP)
	mkdir -p build
	$(LOCK) $(PY) -m pip install -q --no-build-isolation --no-deps -e .
	touch $@

$(VENV)/.installed: $(VENV)/.deps $(VENV)/.built
	touch $@

install: $(VENV)/.installed

# Simulated libcuda.so.1 / libnvidia-ml.so.1 for tests (see tests/sim/README.md).
SIM_CXX := g++ -std=c++17 -O2 -Wall -Wextra -fPIC -shared -pthread -Icsrc

$(SIMDIR)/libcuda.so.1: tests/sim/sim_cuda.cpp csrc/driver/cuda_driver.h $(wildcard tests/sim/*.h)
	mkdir -p $(SIMDIR)
	$(SIM_CXX) -Wl,-soname,libcuda.so.1 -o $@ $<

$(SIMDIR)/libnvidia-ml.so.1: tests/sim/sim_nvml.cpp csrc/driver/nvml.h $(wildcard tests/sim/*.h)
	mkdir -p $(SIMDIR)
	$(SIM_CXX) -Wl,-soname,libnvidia-ml.so.1 -o $@ $<

sim: $(SIM_LIBS)

# The timer engine's C++ unit tests (tests/cpp/, doctest from third_party/) against a fake
# backend: no driver, no simulator, no Python. Built three ways, each run: plain, under
# ThreadSanitizer, and under AddressSanitizer + UBSan. Objects are kept per build in
# build/cpp-test/, so a rerun rebuilds only what changed.
CPP_TEST_DIR     := build/cpp-test
CPP_TEST_BUILDS  := plain tsan asan
CPP_TEST_SOURCES := $(wildcard tests/cpp/*.cpp) $(wildcard csrc/timing/*.cpp) \
                    csrc/driver/cuda_driver.cpp
CPP_TEST_HEADERS := $(wildcard tests/cpp/*.h csrc/timing/*.h csrc/driver/*.h) \
                    third_party/doctest/doctest.h
CPP_TEST_CXX     := g++ -std=c++17 -Wall -Wextra -Werror -pthread -Icsrc -Itests/cpp \
                    -isystem third_party
CPP_TEST_SAN_plain :=
CPP_TEST_SAN_tsan  := -fsanitize=thread
CPP_TEST_SAN_asan  := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
                      -fno-omit-frame-pointer
CPP_TEST_OPT := -O1 -g1
$(CPP_TEST_DIR)/plain/%.o: CPP_TEST_OPT := -O2 -g1

define cpp_test_build
$(CPP_TEST_DIR)/$(1)/%.o: %.cpp $(CPP_TEST_HEADERS)
	@mkdir -p $$(dir $$@)
	$(CPP_TEST_CXX) $(CPP_TEST_SAN_$(1)) $$(CPP_TEST_OPT) -c -o $$@ $$<

# doctest's runner, the slowest file to compile and never hot: unoptimised.
$(CPP_TEST_DIR)/$(1)/tests/cpp/main.o: CPP_TEST_OPT := -O0

$(CPP_TEST_DIR)/$(1)/engine_tests: $(patsubst %.cpp,$(CPP_TEST_DIR)/$(1)/%.o,$(CPP_TEST_SOURCES))
	$(CPP_TEST_CXX) $(CPP_TEST_SAN_$(1)) -o $$@ $$^ -ldl
endef
$(foreach b,$(CPP_TEST_BUILDS),$(eval $(call cpp_test_build,$(b))))

# The sanitizer stress programs that tests/core/test_engine_sanitizers.py (engine, TSan) and
# tests/telemetry/test_nvml_sanitizers.py (NVML sampler, TSan and ASan + UBSan) run, each with
# its simulated library built the same way; the tests `make` them (nothing to do after
# `make test-setup`). Built here, the engine's objects are the unit tests' own, and the set-up
# compiles the rest beside its pip installs: in the parallel pass the two tests compiled all
# of it (28 of their 33 CPU-s, load ~10).
STRESS_BUILDS  := tsan asan
STRESS_CXX     := g++ -std=c++17 -Wall -Wextra -Werror -pthread -Icsrc -O1 -g1
STRESS_HEADERS := $(wildcard csrc/*/*.h tests/sim/*.h)
ENGINE_STRESS_SOURCES  := tests/sim/engine_stress.cpp $(wildcard csrc/timing/*.cpp) \
                          csrc/driver/cuda_driver.cpp
SAMPLER_STRESS_SOURCES := tests/sim/sampler_stress.cpp csrc/telemetry/nvml_sampler.cpp \
                          csrc/telemetry/nvml_fields.cpp csrc/driver/nvml.cpp csrc/driver/cuda_driver.cpp
STRESS_BINS := $(CPP_TEST_DIR)/tsan/engine_stress $(CPP_TEST_DIR)/tsan/sim/libcuda.so.1 \
               $(foreach b,$(STRESS_BUILDS),$(CPP_TEST_DIR)/$(b)/sampler_stress \
                                            $(CPP_TEST_DIR)/$(b)/sim/libnvidia-ml.so.1)

define stress_build
$(patsubst %.cpp,$(CPP_TEST_DIR)/$(1)/%.o,$(ENGINE_STRESS_SOURCES) $(SAMPLER_STRESS_SOURCES)): \
    $(STRESS_HEADERS)

$(CPP_TEST_DIR)/$(1)/engine_stress: $(patsubst %.cpp,$(CPP_TEST_DIR)/$(1)/%.o,$(ENGINE_STRESS_SOURCES))
	$(CPP_TEST_CXX) $(CPP_TEST_SAN_$(1)) -o $$@ $$^ -ldl

$(CPP_TEST_DIR)/$(1)/sampler_stress: $(patsubst %.cpp,$(CPP_TEST_DIR)/$(1)/%.o,$(SAMPLER_STRESS_SOURCES))
	$(CPP_TEST_CXX) $(CPP_TEST_SAN_$(1)) -o $$@ $$^ -ldl

$(CPP_TEST_DIR)/$(1)/sim/libcuda.so.1: tests/sim/sim_cuda.cpp $(STRESS_HEADERS)
	@mkdir -p $$(dir $$@)
	$(STRESS_CXX) $(CPP_TEST_SAN_$(1)) -fPIC -shared -Wl,-soname,libcuda.so.1 -o $$@ $$<

$(CPP_TEST_DIR)/$(1)/sim/libnvidia-ml.so.1: tests/sim/sim_nvml.cpp $(STRESS_HEADERS)
	@mkdir -p $$(dir $$@)
	$(STRESS_CXX) $(CPP_TEST_SAN_$(1)) -fPIC -shared -Wl,-soname,libnvidia-ml.so.1 -o $$@ $$<
endef
$(foreach b,$(STRESS_BUILDS),$(eval $(call stress_build,$(b))))

stress-bins: $(STRESS_BINS)

cpp-test-bins: $(foreach b,$(CPP_TEST_BUILDS),$(CPP_TEST_DIR)/$(b)/engine_tests) stress-bins

cpp-test:
	@$(MAKE) --no-print-directory -j2 cpp-test-bins
	@set -e; for b in $(CPP_TEST_BUILDS); do \
	    echo "== C++ engine tests ($$b)"; \
	    TSAN_OPTIONS=halt_on_error=1 ASAN_OPTIONS=detect_leaks=1 \
	    UBSAN_OPTIONS=print_stacktrace=1 $(CPP_TEST_DIR)/$$b/engine_tests --no-version=true \
	    | grep -v '^\[doctest\] run with'; \
	done

# The suite in two passes, the second run whatever the first gave; either failing fails `make
# test`. Pass 1: every test but the `serial` ones, the multi-rank tests included, on three
# workers over both cores (pytest-xdist -n 3, --dist loadfile: a file's tests, and the job its
# tests share, on one worker). tests/conftest.py hands out the files longest first
# (tests/durations.json, written by tools/test_durations.py), so no long file starts last
# beside an idle core. Pass 2: the
# `serial` tests one at a time: those that observe thread scheduling or assert what a
# neighbour's load skews (measured waits and scores, verdict latency, the demos; each file says
# why). Until 4b6ef1f the tests without ranks and the multi-rank ones were two passes: each
# paid its own collection (every worker imports torch, Lightning and matplotlib: ~7 CPU-s) and
# its own tail, and the multi-rank pass's waits (hang timeouts, dead peers, report intervals)
# left a core idle that the rank-free tests now fill.
#
# Clean clones, `make test` (wall; CPU-s of the whole process tree from a cpuacct cgroup) on the
# shared 2-core machine, loaded by others (load average given):
#
#   phase              old layout (4b6ef1f's Makefile   this layout (70c5c35, run 16 min
#                      and conftest on a192ceb)         before; 2 tests more)
#   set-up             296 s, 195 CPU-s (load 7.7)      228 s, 200 CPU-s (load 5.4)
#   rank-free tests    271 s, 1,235 passed            } one pass: 468 s, 1,309 passed,
#   multi-rank tests   225 s, 72 passed; both with    } 367 CPU-s (load 8.3)
#                      collections 504 s, 381 CPU-s
#                      (load 8.8)
#   serial tests       142 s, 28 passed, 122 CPU-s    193 s, 28 passed, 124 CPU-s (load 5.9)
#                      (load 4.1)
#   whole              942 s, 698 CPU-s               892 s, 691 CPU-s
#   (average load averages over each phase; 4b6ef1f itself, at load 2-10: 1,035 s; this layout
#   earlier at load 11-14: 1,387 s, 680 CPU-s)
#
# At load 8-14 no core is ever idle: wall time follows CPU time, and neither layout can gain
# by overlap (nor can -n 3: the one pass took 462 s, 358 CPU-s at load 6-14, against 476 s,
# 363 CPU-s with -n 2 at load 8-11; -n 2 kept because the shared hang job took 54 s of its 90 s
# bound at -n 3 and load 14; that bound is 150 s now). The overlaps are for a near-idle machine (CI, and this one at
# load ~2, where 4b6ef1f took 524 s: set-up ~137 s, the rank-free tests 107 s, the multi-rank
# tests 148 s, the serial tests 132 s).
#
# -n 3 since 2026-11-25: near idle the parallel pass is not CPU-bound but waits (ranks sleeping
# their injected delays, hang timeouts, report intervals, dead peers): a clean clone of main at
# 74d91f0 on this machine (load 2-5, nobody else's jobs) took 609 s in all with -n 2 (set-up
# 139 s; parallel pass 310 s for 316 CPU-s, one core's worth; serial pass 157 s, 118 CPU-s),
# over CI's 600 s; the same checkout's parallel pass with -n 3 took 195 s (1,355 passed, load
# ~3). The load-sensitive tests stay in the serial pass; a third worker costs a loaded machine
# nothing it was not already short of (no core is idle there either way).
#
# The set-up (`make test-setup`) keeps both cores busy along its longest chain: the venv's first
# pip install (.deps-run: torch and the build tools, 27 CPU-s; 32 s near idle), then the package
# build (.built: 69 CPU-s; one core for much of it: the torch-heavy collectives.cpp and the LTO
# links are serial). Beside the pip install, from the start: the C++ tests' three builds and the
# simulated libraries (54 + 2 CPU-s); beside the package build: the test tools' pip install
# (.deps, 17 CPU-s), which until 4b6ef1f waited behind the C++ builds (make -j2 picked their
# objects first) and the build behind it. The two pip installs share the venv: the package's is
# --no-deps (it writes the package alone) and .deps adds packages without touching those of
# .deps-run that the build reads (their dist-info dates in a clean clone). (Step CPU-s: each
# step alone in a clean clone, load 5-10.)
test-setup:
	@$(MAKE) --no-print-directory -j2 sim cpp-test-bins & cxx=$$!; \
	{ $(MAKE) --no-print-directory $(VENV)/.deps-run && \
	  { $(MAKE) --no-print-directory $(VENV)/.deps & tools=$$!; \
	    $(MAKE) --no-print-directory $(VENV)/.built; built=$$?; \
	    wait $$tools && test $$built = 0; }; }; venv=$$?; \
	wait $$cxx && test $$venv = 0
	@$(MAKE) --no-print-directory install cpp-test

test: test-setup
	@status=0; \
	$(PY) -m pytest -m "not serial and not install" -n 3 --dist loadfile --no-loadscope-reorder \
	    || status=1; \
	$(PY) -m pytest -m "serial and not install" || status=1; \
	exit $$status

# A plain `pip install` of a clean clone into a fresh venv ends with the native op observer
# (tests/test_install.py; minutes of compiling, so not part of `make test`).
test-install: install
	$(PY) -m pytest -m install tests/test_install.py

# The fast lane: no multi-rank tests (tests spawning ranks must carry the `multirank` marker;
# run_ranks refuses otherwise) and no GPU tests, on every core (pytest-xdist). On 2 cores
# -n 2 took a 307-test slice from 58 s to 27 s (load average ~10).
test-fast: install sim
	$(PY) -m pytest -m "not multirank and not gpu and not install" -n auto

# The gate: ruff (bug-finding rules), mypy on the package, the C++ style, and the `_core` stub
# against the built module, every file included (no per-file exclusions). Configuration:
# pyproject.toml, .clang-format, tools/stubtest_allowlist.txt.
CXX_STYLE_SOURCES := $(wildcard csrc/*/*.cpp csrc/*/*.h csrc/*/*.cu tests/sim/*.cpp \
                     tests/sim/*.c tests/sim/*.h tests/cpp/*.cpp tests/cpp/*.h)

lint: install
	$(VENV)/bin/ruff check .
	$(PY) -m mypy
	$(VENV)/bin/clang-format --dry-run --Werror $(CXX_STYLE_SOURCES)
	$(PY) -m mypy.stubtest straggler._core --allowlist tools/stubtest_allowlist.txt
	$(PY) -m pytest -q -p no:cacheprovider tests/test_docs_paths.py

# The demo writes its report log to build/demo/report.jsonl (`straggler summarize` / `plot` read it).
demo: $(VENV)/.built sim
	$(PY) examples/demo.py --report-log build/demo/report.jsonl

# Every CPU benchmark in turn; each prints the markdown table recorded in benchmarks/README.md.
BENCHMARKS := bench_timer_engine report_vs_nvrx bench_nvml quality scale overhead

bench: install sim
	set -e; for b in $(BENCHMARKS); do echo "== benchmarks/$$b.py"; $(PY) benchmarks/$$b.py; done

# The GPU tier, on a host with an NVIDIA GPU: the system's python3 and its CUDA torch, no venv.
# Builds in place, runs the suite (sharded over parallel pytest processes), the `gpu` tests and
# benchmarks/gpu/*.py --quick, and prints one summary (logs: $$GPU_CHECK_OUT, default
# build/gpu-check), within a 470 s budget: one device call of under 10 minutes. Options pass
# through, e.g. make gpu-check GPU_CHECK_ARGS="--steps gpu,bench --limit gpu=200"; the
# variables GPU_CHECK_OUT, GPU_CHECK_BUDGET_S, GPU_CHECK_STEPS, GPU_CHECK_SHARDS too. See
# tools/gpu_check.py.
GPU_CHECK_ARGS ?=

gpu-check:
	$(PYTHON) tools/gpu_check.py $(GPU_CHECK_ARGS)

clean:
	rm -rf build $(VENV) straggler/_core*.so
