"""One process standing in for a whole job: synthetic per-rank timings through the real code.

For every report window the simulator draws each rank's timer statistics (host sections and GPU
timers, in ms) from a scenario: a healthy baseline (per-GPU silicon spread, job-wide diurnal
drift, report-to-report noise) plus injected faults (a slow rank, a slow node, transient spikes,
gradual degradation, noisy ranks, a heavier pipeline stage). It then builds exactly what the
report's collectives would deliver on the gathering rank from those per-rank inputs and runs the
*real* ``straggler.reporting.generator.ReportGenerator`` on it (through `SimComm`, a stand-in for
`straggler.dist.comm.Comm` whose collectives combine the contributions of all simulated ranks), and
the real `straggler.analysis.policy.StragglerPolicy` on the resulting reports. Up to 16,384 ranks.

Run ``python benchmarks/simulator.py --scenario slow20 --world 256`` to watch one scenario.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from straggler.analysis.statistics import Statistic  # noqa: E402

__all__ = ["Scenario", "SCENARIOS", "WindowSample", "generate", "scenario"]

# Healthy job: the numbers below are the simulator's noise model (see benchmarks/README.md).
STEPS_PER_REPORT = 200         # steps timed per report window
STEP_CV = 0.02                 # per-step coefficient of variation of a healthy rank's timer
SILICON_SPREAD = 0.005         # static per-GPU speed spread (std of a log-normal factor)
REPORT_JITTER = 0.002          # extra report-to-report jitter of each rank (std, relative)
DIURNAL_AMPLITUDE = 0.015      # job-wide drift, +-1.5 % (Llama 3: 1-2 % diurnal)
DIURNAL_PERIOD = 48            # reports per drift cycle
GPUS_PER_NODE = 8


@dataclass(frozen=True)
class NoiseModel:
    """Report-to-report noise of each rank's log time, fitted to real traces.

    ``rank_offset``: sd of each rank's lasting offset; ``jitter``: robust sd (1.4826 MAD) of its
    report-to-report noise; ``tail_df``: Student-t degrees of freedom of that noise (heavy
    tails: a window in which a rank was descheduled). `benchmarks.replay.fit_noise` fits them.
    """

    rank_offset: float
    jitter: float
    tail_df: float


#: Fitted by ``python benchmarks/replay.py --fit`` to the recorded gloo traces (3-4 CPU ranks,
#: idle and loaded, tests/data/traces) at 5 s per report (120-300 steps): the noise of a shared
#: 2-core machine, far above the simulator's default (REPORT_JITTER, Gaussian).
REAL_CPU_GLOO = NoiseModel(rank_offset=0.0098, jitter=0.0175, tail_df=2.1)


@dataclass(frozen=True)
class Scenario:
    """A fault pattern: per-rank slowdown factors per report, plus what counts as a straggler.

    ``slowdown(t, rng, world)`` returns the persistent slowdown factor of every rank at report
    ``t`` (1.0 = healthy); ``transient`` the one-report factors (never stragglers);
    ``structure`` static per-rank factors of the workload (never stragglers) and ``roles`` the
    role per rank the user would declare (None: not declared).
    """

    name: str
    description: str
    slowdown: Callable[[int, np.random.Generator, int, dict], np.ndarray]
    transient: Callable[[int, np.random.Generator, int], np.ndarray] | None = None
    structure: Callable[[int], np.ndarray] | None = None
    roles: Callable[[int], dict[int, Any]] | None = None
    noisy_fraction: float = 0.0      # share of ranks with large report-to-report noise
    noisy_jitter: float = 0.04       # their jitter (std, relative)
    jitter: float = REPORT_JITTER    # report-to-report jitter of every other rank
    onset: int = 8                   # report where injected faults start
    #: A rank counts as a straggler at a report when its persistent slowdown is >= this.
    truth_min_slowdown: float = 0.05
    #: No rank is a straggler, whatever its slowdown (job-wide changes, weather-level drift).
    negatives_only: bool = False


def _none(t: int, rng: np.random.Generator, world: int, memo: dict) -> np.ndarray:
    return np.ones(world)


def _pick(memo: dict, rng: np.random.Generator, world: int, count: int) -> np.ndarray:
    if "victims" not in memo:
        memo["victims"] = rng.choice(world, size=count, replace=False)
    return memo["victims"]


def _slow_ranks(factors: Sequence[float], onset: int, stagger: int = 0):
    def slowdown(t: int, rng: np.random.Generator, world: int, memo: dict) -> np.ndarray:
        victims = _pick(memo, rng, world, len(factors))
        out = np.ones(world)
        for i, (rank, f) in enumerate(zip(victims, factors, strict=True)):
            if t >= onset + i * stagger:
                out[rank] = f
        return out
    return slowdown


def _gradual(onset: int, per_report: float, cap: float):
    def slowdown(t: int, rng: np.random.Generator, world: int, memo: dict) -> np.ndarray:
        rank = _pick(memo, rng, world, 1)[0]
        out = np.ones(world)
        out[rank] = 1.0 + min(cap, per_report * max(0, t - onset + 1))
        return out
    return slowdown


def _mild(fraction: float, low: float, high: float, onset: int):
    def slowdown(t: int, rng: np.random.Generator, world: int, memo: dict) -> np.ndarray:
        if "mild" not in memo:
            memo["mild"] = 1.0 + np.where(rng.random(world) < fraction,
                                          rng.uniform(low, high, world), 0.0)
        return memo["mild"] if t >= onset else np.ones(world)
    return slowdown


def _job_wide(factor: float, onset: int):
    def slowdown(t: int, rng: np.random.Generator, world: int, memo: dict) -> np.ndarray:
        return np.full(world, factor if t >= onset else 1.0)
    return slowdown


def _slow_node(factor: float, onset: int):
    def slowdown(t: int, rng: np.random.Generator, world: int, memo: dict) -> np.ndarray:
        if "node" not in memo:
            memo["node"] = int(rng.integers(0, max(1, world // GPUS_PER_NODE)))
        out = np.ones(world)
        if t >= onset:
            first = memo["node"] * GPUS_PER_NODE
            out[first:first + GPUS_PER_NODE] = factor
        return out
    return slowdown


def _spikes(rate: float, factor: float):
    def transient(t: int, rng: np.random.Generator, world: int) -> np.ndarray:
        out = np.ones(world)
        hit = rng.random(world) < rate
        out[hit] = factor
        return out
    return transient


PIPELINE_STAGES = (1.0, 1.03, 1.08, 1.4)  # e.g. the last stage carries the loss layer


def _stage_of(world: int) -> np.ndarray:
    return (np.arange(world) * len(PIPELINE_STAGES)) // world  # contiguous blocks, Megatron order


def _pipeline_structure(world: int) -> np.ndarray:
    return np.asarray(PIPELINE_STAGES)[_stage_of(world)]


def _pipeline_roles(world: int) -> dict[int, Any]:
    return {r: f"pp{s}" for r, s in enumerate(_stage_of(world))}


def _pipeline_straggler(factor: float, onset: int):
    def slowdown(t: int, rng: np.random.Generator, world: int, memo: dict) -> np.ndarray:
        if "victims" not in memo:  # one rank of stage 1 (a light stage: hardest to see)
            stage1 = np.flatnonzero(_stage_of(world) == 1)
            memo["victims"] = rng.choice(stage1, size=1)
        out = np.ones(world)
        if t >= onset:
            out[memo["victims"][0]] = factor
        return out
    return slowdown


ONSET = 8
SCENARIOS: dict[str, Scenario] = {s.name: s for s in [
    Scenario("clean", "healthy job: silicon spread, diurnal drift, noise", _none),
    *[Scenario(f"slow{p}", f"one rank {p}% slower from report {ONSET}",
               _slow_ranks([1 + p / 100], ONSET)) for p in (5, 10, 20, 50, 100)],
    Scenario("mild", "10 % of ranks 1-3 % slower for good (weather, not stragglers)",
             _mild(0.10, 0.01, 0.03, ONSET), negatives_only=True),
    Scenario("jobwide", "every rank 15 % slower from report 8 (a job change, no straggler)",
             _job_wide(1.15, ONSET), negatives_only=True),
    Scenario("transient", "1 % of ranks 1.5x slower for one report, every report",
             _none, transient=_spikes(0.01, 1.5)),
    Scenario("gradual", "one rank degrades by 1 % per report up to 30 %",
             _gradual(ONSET, 0.01, 0.30)),
    Scenario("noisy", "5 % of ranks with 4 % report-to-report noise, no fault", _none,
             noisy_fraction=0.05),
    Scenario("noisy_all", "every rank with 1.5 % report-to-report noise, no fault", _none,
             jitter=0.015),
    Scenario("slow10_noisy_all", "one rank 10 % slower, every rank with 1.5 % noise",
             _slow_ranks([1.1], ONSET), jitter=0.015),
    Scenario("slow5_noisy_all", "one rank 5 % slower, every rank with 1.5 % noise (the limit)",
             _slow_ranks([1.05], ONSET), jitter=0.015),
    Scenario("multi", "4 ranks slower by 10/20/30/50 %, onsets 4 reports apart",
             _slow_ranks([1.1, 1.2, 1.3, 1.5], ONSET, stagger=4)),
    Scenario("pipeline_roles", "4 stages x1.00/1.03/1.08/1.40, roles declared, one stage-1 "
             "rank 15 % slower", _pipeline_straggler(1.15, ONSET),
             structure=_pipeline_structure, roles=_pipeline_roles),
    Scenario("pipeline_noroles", "same, roles not declared", _pipeline_straggler(1.15, ONSET),
             structure=_pipeline_structure),
    Scenario("slow_node", f"all {GPUS_PER_NODE} ranks of one node 25 % slower",
             _slow_node(1.25, ONSET)),
    Scenario("slow_from_start", "one rank 20 % slower from the first report",
             _slow_ranks([1.2], 0), onset=0),
]}


def scenario(name: str) -> Scenario:
    """The scenario called ``name`` (ValueError listing the names otherwise)."""
    if name not in SCENARIOS:
        raise ValueError(f"`scenario={name!r}` must be one of {sorted(SCENARIOS)}")
    return SCENARIOS[name]


# ----------------------------------------------------------------------------------- samples
SECTIONS = ("step", "data")          # host sections: "step" follows the GPU, "data" does not
SECTION_BASE_MS = (100.0, 5.0)


def gpu_timer_names(count: int) -> list[str]:
    """Names of the simulated GPU compute timers (op name and shapes, as per-op capture)."""
    return [f"aten::mm[{64 * (i + 1)}x4096,4096x4096,bf16]" for i in range(count)]


@dataclass
class WindowSample:
    """Every rank's inputs to one report: what each rank's Detector would hand the reporter."""

    report: int
    #: (world, sections) median host time per section (ms); NaN: the rank lacks the section.
    section_med: np.ndarray
    #: (world, timers) median GPU time per timer (ms).
    gpu_med: np.ndarray
    #: (world, timers) number of samples per timer.
    gpu_num: np.ndarray
    #: Ranks that are stragglers at this report (ground truth).
    truth: frozenset[int]
    #: Ranks with an injected persistent slowdown in the grey zone (0 < s < truth minimum).
    grey: frozenset[int] = frozenset()
    section_names: tuple[str, ...] = SECTIONS
    gpu_names: tuple[str, ...] = ()

    def section_summaries(self, rank: int) -> dict[str, dict[Statistic, float]]:
        """Rank ``rank``'s section summaries, as `Detector` builds them."""
        return {name: _summary(self.section_med[rank, j], STEPS_PER_REPORT)
                for j, name in enumerate(self.section_names)
                if not math.isnan(self.section_med[rank, j])}

    def section_quantiles(self, rank: int) -> dict[str, tuple[float, ...]]:
        """Rank ``rank``'s within-window quantiles per section, as `Detector` hands them to the
        report (``section_quartiles``: lower and upper quartile, low percentile, the recent
        part's median and low percentile), from its median and the step spread."""
        return {name: tuple((self.section_med[rank, j] * QUANTILE_FACTORS).tolist())
                for j, name in enumerate(self.section_names)
                if not math.isnan(self.section_med[rank, j])}

    def gpu_summaries(self, rank: int) -> dict[str, dict[Statistic, float]]:
        """Rank ``rank``'s GPU timer summaries, as `Detector` builds them."""
        return {name: _summary(self.gpu_med[rank, j], int(self.gpu_num[rank, j]))
                for j, name in enumerate(self.gpu_names)}


def _summary(median: float, num: int) -> dict[Statistic, float]:
    spread = STEP_CV * median
    return {Statistic.MIN: median - 2 * spread, Statistic.MAX: median + 3 * spread,
            Statistic.MED: median, Statistic.AVG: median * (1 + 0.2 * STEP_CV),
            Statistic.STD: spread, Statistic.NUM: float(num)}


#: A section's window quantiles over its median (`WindowSample.section_quantiles`): normal steps
#: of spread ``STEP_CV``, the recent part as the whole window (a persistent rank factor).
QUANTILE_FACTORS = 1.0 + STEP_CV * np.array([-0.6745, 0.6745, -1.6449, 0.0, -1.6449])


class _TMad(dict):
    """1.4826 x median |t| of a Student-t with the given degrees of freedom (cached)."""

    def __missing__(self, df: float) -> float:
        draws = np.random.default_rng(0).standard_t(df, 200_000)
        value = self[df] = 1.4826 * float(np.median(np.abs(draws)))
        return value


_T_MAD = _TMad()


def generate(sc: Scenario, world: int, reports: int, seed: int, gpu_timers: int = 10,
             noise: NoiseModel | None = None) -> Iterator[WindowSample]:
    """Yield one `WindowSample` per report of scenario ``sc`` for ``world`` ranks.

    ``noise``: a fitted `NoiseModel` (e.g. `REAL_CPU_GLOO`) instead of the scenario's Gaussian
    jitter and the silicon spread.
    """
    rng = np.random.default_rng(seed)
    memo: dict = {}
    silicon = np.exp(SILICON_SPREAD * rng.standard_normal(world))
    structure = sc.structure(world) if sc.structure else np.ones(world)
    noisy = rng.random(world) < sc.noisy_fraction
    jitter = np.where(noisy, sc.noisy_jitter, sc.jitter)
    # Noise of a median of STEPS_PER_REPORT samples: 1.2533 sigma / sqrt(n).
    median_noise = 1.2533 * STEP_CV / math.sqrt(STEPS_PER_REPORT)
    timer_base = np.linspace(0.2, 2.0, gpu_timers)  # ms per call
    calls = np.full((world, gpu_timers), float(STEPS_PER_REPORT))
    names = tuple(gpu_timer_names(gpu_timers))
    phase = rng.uniform(0, 2 * math.pi)
    for t in range(reports):
        slow = sc.slowdown(t, rng, world, memo)
        spike = sc.transient(t, rng, world) if sc.transient else np.ones(world)
        drift = 1.0 + DIURNAL_AMPLITUDE * math.sin(2 * math.pi * t / DIURNAL_PERIOD + phase)
        rank_factor = silicon * structure * slow * spike * drift
        if noise is None:
            rank_factor *= 1.0 + jitter * rng.standard_normal(world)
        else:
            if "offset" not in memo:
                memo["offset"] = np.exp(noise.rank_offset * rng.standard_normal(world))
            draw = rng.standard_t(noise.tail_df, world) * (noise.jitter / _T_MAD[noise.tail_df])
            rank_factor *= memo["offset"] / silicon * np.exp(draw)
        gpu = timer_base[None, :] * rank_factor[:, None]
        gpu *= 1.0 + median_noise * rng.standard_normal((world, gpu_timers))
        # "step" follows the GPU; "data" (the data loader) does not slow down with the GPU.
        step = SECTION_BASE_MS[0] * rank_factor * (1 + median_noise * rng.standard_normal(world))
        data = SECTION_BASE_MS[1] * drift * (1 + 0.01 * rng.standard_normal(world))
        excess = slow - 1.0
        truth = frozenset(np.flatnonzero(excess >= sc.truth_min_slowdown - 1e-12).tolist())
        grey = frozenset(np.flatnonzero((excess > 1e-12)
                                        & (excess < sc.truth_min_slowdown - 1e-12)).tolist())
        if sc.negatives_only:
            truth = grey = frozenset()
        yield WindowSample(report=t, section_med=np.column_stack([step, data]), gpu_med=gpu,
                           gpu_num=calls, truth=truth, grey=grey, gpu_names=names)


# ------------------------------------------------------------------------- the collectives
def node_name(rank: int) -> str:
    """The simulated node of ``rank`` (``GPUS_PER_NODE`` ranks per node)."""
    return f"node{rank // GPUS_PER_NODE:04d}"


def simulated_waits(world: int, slow: int = 5, seed: int = 0) -> np.ndarray:
    """Every rank's packed collective waits (`straggler.analysis.waits.pack`) for a window of
    100 steps of a job with the world group, tensor-parallel groups of 8 and data-parallel
    groups (same index in the TP group), where rank ``slow`` is 20 ms late at each step."""
    from straggler.analysis.waits import pack

    rng = np.random.default_rng(seed)
    n = 100
    rows = []
    for r in range(world):
        groups = []
        for name in ("world", f"tp{r // 8}", f"dp{r % 8}"):
            waits = rng.lognormal(np.log(2e-4), 0.5, n)
            if r != slow and (name == "world" or name == f"tp{slow // 8}"
                              or name == f"dp{slow % 8}"):
                waits = waits + 0.02
            hist = np.bincount(np.minimum(1 + np.floor(np.log2(waits * 1e6)), 31).astype(int),
                               minlength=32)
            groups.append((name, n, float(waits.sum()), float(waits.min()), hist))
        rows.append(pack(groups, 10.0))
    return np.stack(rows)


class SimComm:
    """`straggler.dist.comm.Comm` as seen from group rank 0 of a simulated world.

    Each collective returns what the real one would: the simulator computes every other rank's
    contribution from the current `WindowSample` with the same `straggler.analysis.scoring`
    functions the ranks would run, and checks that its own version of rank 0's contribution
    equals the one the real `ReportGenerator` handed in (so the simulation cannot drift from the
    real code).
    ``bytes_sent`` counts the payload one rank contributes per collective; ``sim_ns`` the time
    spent simulating the other ranks (to subtract from rank-0 timings), ``sim_cpu_ns`` the same
    in this thread's CPU time.
    """

    def __init__(self, world: int, individual_window: int = 20) -> None:
        import collections

        self.rank = 0
        self.world_size = world
        self.global_ranks = list(range(world))
        self.calls: collections.Counter[str] = collections.Counter()
        self.bytes_sent: collections.Counter[str] = collections.Counter()
        self.sim_ns = 0
        self.sim_cpu_ns = 0  # the same in this thread's CPU time
        self.generator: Any = None
        self.sample: WindowSample | None = None
        self._window = individual_window
        self._sec_hist: list[np.ndarray] = []
        self._gpu_hist: list[np.ndarray] = []
        self._sec_best: np.ndarray | None = None  # NVRx's individual reference: best ever
        self._gpu_best: np.ndarray | None = None
        self._reference: np.ndarray | None = None  # the generator's relative reference
        self._reference_min: np.ndarray | None = None  # NVRx's (the smallest median)
        self.waits: np.ndarray | None = None  # packed collective waits per rank, or None

    # The matrices of this report, columns in the generator's id order.
    def _id_matrix(self) -> tuple[np.ndarray, list[int], list[int]]:
        s = self.sample
        sec_ids, gpu_ids = self.generator.names.section_ids, self.generator.names.gpu_ids
        n_sec = len(sec_ids)
        m = np.full((self.world_size, n_sec + len(gpu_ids)), np.nan)
        sec_cols = [sec_ids[n] for n in s.section_names]
        gpu_cols = [n_sec + gpu_ids[n] for n in s.gpu_names]
        m[:, sec_cols] = s.section_med
        m[:, gpu_cols] = s.gpu_med
        return m, sec_cols, gpu_cols

    def all_reduce(self, t: Any, op: Any = "sum") -> Any:
        import torch

        t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
        self.calls["all_reduce"] += 1
        self.bytes_sent["all_reduce"] += t.numel() * t.element_size()
        if op == "min":
            from straggler.analysis import scoring

            m, _, _ = self._id_matrix()
            own = scoring.pack_for_min_reduce(m[0], 0)
            _check_same("min all_reduce", own, t.numpy())
            present = np.isfinite(m) & (m > 0)
            ranks = np.arange(self.world_size, dtype=np.float64)[:, None]
            reduced = np.concatenate([
                np.where(present, m, np.inf).min(axis=0),
                np.where(present, ranks, np.inf).min(axis=0),
                np.where(present, -ranks, np.inf).min(axis=0)])
            t.copy_(torch.from_numpy(reduced))
            self._reference = scoring.reference_from_min_reduce(reduced, self.world_size)
            self._reference_min = self._reference
        # "max" carries [new-names flag, *extra]: identical on every simulated rank.
        self.sim_ns += time.perf_counter_ns() - t0
        self.sim_cpu_ns += time.thread_time_ns() - c0
        return t

    def all_gather(self, t: Any) -> list[Any]:
        import torch
        from straggler.analysis import scoring

        t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
        self.calls["all_gather"] += 1
        self.bytes_sent["all_gather"] += t.numel() * t.element_size()
        m, _, _ = self._id_matrix()
        _check_same("all_gather", m[0], t.numpy())
        self._reference = scoring.relative_reference(m, "median")
        self._reference_min = scoring.relative_reference(m, "min")
        rows = [torch.from_numpy(row) for row in m]
        self.sim_ns += time.perf_counter_ns() - t0
        self.sim_cpu_ns += time.thread_time_ns() - c0
        return rows

    def all_gather_object(self, obj: Any) -> list[Any]:
        import pickle

        self.calls["all_gather_object"] += 1
        self.bytes_sent["all_gather_object"] += len(pickle.dumps(obj))
        # Every simulated rank has the same timers: rank 0's new names register them all.
        return [obj] + [(node_name(r), [], []) for r in range(1, self.world_size)]

    def gather_to_first(self, t: Any) -> Any:
        import torch
        from straggler.analysis import scoring
        from straggler.reporting.layout import telemetry_offset

        t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
        self.calls["gather_to_first"] += 1
        self.bytes_sent["gather_to_first"] += t.numel() * t.element_size()
        s, gen = self.sample, self.generator
        _, sec_cols, gpu_cols = self._id_matrix()
        n_sec = len(gen.names.section_ids)
        weights = s.gpu_num * _summary_avg(s.gpu_med)  # NUM * AVG, as the summaries say
        rows = np.full((self.world_size, t.numel()), np.nan)
        ids = np.asarray(sec_cols)
        tail = telemetry_offset(n_sec) + len(gen.telemetry_fields)

        def put(gpu_col: int, sec_offset: int, sec_ref: np.ndarray, gpu_ref: np.ndarray) -> None:
            rows[:, sec_offset + ids] = scoring.ratio_scores(sec_ref, s.section_med)
            rows[:, gpu_col] = scoring.gpu_scores(scoring.ratio_scores(gpu_ref, s.gpu_med),
                                                  weights)

        if gen.is_computing_indiv_scores:
            # NVRx's individual reference (its fields): the best median ever seen.
            self._sec_best = s.section_med if self._sec_best is None \
                else np.fmin(self._sec_best, s.section_med)
            self._gpu_best = s.gpu_med if self._gpu_best is None \
                else np.fmin(self._gpu_best, s.gpu_med)
            put(0, 2, self._sec_best, self._gpu_best)
            self._sec_hist = [*self._sec_hist, s.section_med][-self._window:]
            self._gpu_hist = [*self._gpu_hist, s.gpu_med][-self._window:]
            # The robust individual reference: the support-th smallest recent median,
            # capped by the current one (straggler.analysis.scoring.WindowedMinBaseline).
            k = min(gen.individual_support, len(self._sec_hist)) - 1
            sec_ref = np.minimum(np.sort(np.stack(self._sec_hist), axis=0)[k], s.section_med)
            gpu_ref = np.minimum(np.sort(np.stack(self._gpu_hist), axis=0)[k], s.gpu_med)
            put(tail, tail + 1, sec_ref, gpu_ref)
        if gen.is_computing_rel_scores:
            ref = self._reference_min  # NVRx's fields: the smallest median
            put(1, 2 + n_sec, ref[sec_cols][None, :], ref[gpu_cols][None, :])
            if gen.relative_reference != "min":  # the robust relative scores follow
                ref = self._reference
                put(tail + 1 + n_sec, tail + 2 + n_sec, ref[sec_cols][None, :],
                    ref[gpu_cols][None, :])
        rows[:, 2 + 2 * n_sec + np.asarray(sec_cols)] = s.section_med
        for j, factor in enumerate(QUANTILE_FACTORS):  # the layout's sec_q25 ... sec_recent_low
            rows[:, 2 + (3 + j) * n_sec + np.asarray(sec_cols)] = s.section_med * factor
        if self.waits is not None:
            rows[:, -self.waits.shape[1]:] = self.waits
        _check_same("gather", rows[0], t.numpy())
        rows[0] = t.numpy()
        out = torch.from_numpy(rows)  # one tensor of rows, as straggler.dist.comm's
        self.sim_ns += time.perf_counter_ns() - t0
        self.sim_cpu_ns += time.thread_time_ns() - c0
        return out

    def broadcast_from_first(self, t: Any) -> Any:
        self.calls["broadcast_from_first"] += 1
        self.bytes_sent["broadcast_from_first"] += t.numel() * t.element_size()
        return t

    def close(self) -> None:
        """Nothing to release."""


def _summary_avg(median: float) -> float:
    return median * (1 + 0.2 * STEP_CV)


def _check_same(what: str, simulated: np.ndarray, real: np.ndarray) -> None:
    if simulated.shape != real.shape or not np.allclose(simulated, real, rtol=1e-12,
                                                        atol=0.0, equal_nan=True):
        raise AssertionError(f"simulator and ReportGenerator disagree on rank 0's {what} "
                             f"contribution:\n  simulated {simulated[:8]}\n  real      {real[:8]}")


class SimWorld:
    """A simulated job: the real `ReportGenerator` on rank 0, fed through `SimComm`.

    ``report(sample)`` returns the `Report` the gathering rank would get for that window,
    including ``confirmed`` when a policy is given (``policy``/``roles`` as for
    `ReportGenerator`).
    """

    def __init__(self, world: int, policy: Any = None, roles: Mapping[int, Any] | None = None,
                 relative_reference: str = "min", individual_window: int = 20,
                 waits: bool = False) -> None:
        from straggler.reporting.generator import ReportGenerator

        self.comm = SimComm(world, individual_window)
        # Collective waits (docs/culprits.md): each rank's packed row, fixed over reports.
        self.comm.waits = simulated_waits(world) if waits else None
        self.generator = ReportGenerator("all", True, node_name=node_name(0), comm=self.comm,
                                         relative_reference=relative_reference,
                                         individual_window=individual_window,
                                         policy=policy, roles=roles)
        self.comm.generator = self.generator
        self.last_rank0_ns = 0
        self.last_rank0_cpu_ns = 0  # the same in this thread's CPU time (not waiting for a core)

    def report(self, sample: WindowSample) -> Any:
        """The gathered report of ``sample``; ``last_rank0_ns`` is rank 0's own time for it
        (``last_rank0_cpu_ns``: its CPU time, without the time it waited for a core)."""
        self.comm.sample = sample
        # Rank 0's own inputs (the timing engine's summaries) are made outside the timed part:
        # a sample computes them once, so the first of two worlds fed the same sample paid more.
        sections, gpus = sample.section_summaries(0), sample.gpu_summaries(0)
        quantiles = sample.section_quantiles(0)
        sim_before, sim_cpu_before = self.comm.sim_ns, self.comm.sim_cpu_ns
        t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
        waits = None if self.comm.waits is None else self.comm.waits[0]
        report = self.generator.generate_report(sections, gpus, waits=waits,
                                                section_quartiles=quantiles)
        self.last_rank0_ns = time.perf_counter_ns() - t0 - (self.comm.sim_ns - sim_before)
        self.last_rank0_cpu_ns = (time.thread_time_ns() - c0
                                  - (self.comm.sim_cpu_ns - sim_cpu_before))
        return report


def nvrx_flags(report: Any) -> frozenset[int]:
    """Ranks NVRx's rule flags on one report: any of the four sets at threshold 0.75."""
    found = report.identify_stragglers()
    ranks = {s.rank for s in found["straggler_gpus_relative"] | found["straggler_gpus_individual"]}
    for key in ("straggler_sections_relative", "straggler_sections_individual"):
        for ids in found[key].values():
            ranks.update(s.rank for s in ids)
    return frozenset(ranks)


def main(argv: Sequence[str] | None = None) -> int:
    """Print, per report of one scenario, the injected truth and what each rule flags."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scenario", default="slow20", choices=sorted(SCENARIOS))
    parser.add_argument("--world", type=int, default=256)
    parser.add_argument("--reports", type=int, default=24)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    sc = scenario(args.scenario)
    roles = sc.roles(args.world) if sc.roles else None
    sim = SimWorld(args.world, policy=True, roles=roles)
    print(f"scenario {sc.name}: {sc.description}; {args.world} ranks")
    for sample in generate(sc, args.world, args.reports, args.seed):
        rep = sim.report(sample)
        confirmed = sorted(s.rank for s in rep.confirmed)
        print(f"report {sample.report:3d}  truth {sorted(sample.truth)!s:14}  "
              f"policy {confirmed!s:14}  nvrx {sorted(nvrx_flags(rep))}  "
              f"rank0 {sim.last_rank0_ns / 1e6:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
