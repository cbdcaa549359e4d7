"""Turn each rank's timing summaries into a `Report`: scoring plus communication.

`ReportGenerator` is the glue between `straggler.analysis.scoring` (pure arithmetic) and
`straggler.dist.comm` (fixed-size collectives). It keeps two pieces of state across reports: the
name registry (timer name -> integer id, identical on every rank of the group) and each rank's
individual baseline.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import torch

from .._checks import (
    check_bool,
    check_choice,
    check_name,
    check_names,
    check_scores_to_compute,
)
from .._constants import SCORE_KINDS
from .._log import WarnOnce
from ..analysis import scoring
from ..analysis.own_time import OwnTimeTable
from ..analysis.policy import make_policy
from ..analysis.statistics import Statistic
from ..analysis.waits import OWN as WAITS_OWN
from ..analysis.waits import WIDTH as WAITS_WIDTH
from ..analysis.waits import attribute as attribute_waits
from ..dist.comm import Comm
from .annotation import apply_policy
from .layout import RankScores, pack, present, unpack
from .registry import NameMapping, NameRegistry
from .report import Report

__all__ = ["SCORE_KINDS", "ReportGenerator"]

log = logging.getLogger("straggler")

_STATE_VERSION = 2  # 2: NVRx's best medians ("best") next to the windows
_CHURN_FORGET_REPORTS = 2  # at a registry rebuild, names unused this long are forgotten

Summaries = Mapping[str, Mapping[Statistic, float]]


def _check_pg(pg: Any, comm: Comm | None) -> None:
    """NVRx's ``pg``: a ProcessGroup or None, and not together with ``comm``."""
    if pg is None:
        return
    if comm is not None:
        raise ValueError(f"`pg={pg!r}` and `comm={comm!r}`: pass one or the other")
    if not (torch.distributed.is_available() and isinstance(pg, torch.distributed.ProcessGroup)):
        raise ValueError(f"`pg={pg!r}` must be a torch.distributed.ProcessGroup or None (NVRx's "
                         "signature: ReportGenerator(scores_to_compute, gather_on_rank0, pg, "
                         "node_name); pass node_name= and comm= by keyword)")


class ReportGenerator:
    """Builds a `Report` from this rank's summaries; `generate_report` is a collective.

    NVRx's signature: ``ReportGenerator(scores_to_compute, gather_on_rank0=True, pg=None,
    node_name='<notset>')``; the rest are keywords of ours.

    Args:
        scores_to_compute: ``"all"`` or a list of ``"relative_perf_scores"`` /
            ``"individual_perf_scores"``.
        gather_on_rank0: gather every rank's scores on the group's first rank (the others get
            None), or give every rank a report about itself.
        pg: the process group to report over (default: the whole world), as in NVRx; the
            report's collectives run on a private gloo backend over its ranks (`Comm`).
        node_name: this rank's node, shown next to its rank.
        comm: a `Comm` to talk over instead of ``pg`` (not both).
        telemetry_fields: names of the ``telemetry`` vector's entries (see `generate_report`).
        relative_reference: the reference of the ``robust_*_relative_scores``: ``"min"``
            (NVRx: the fastest rank) or ``"median"`` (the median rank; robust to one unusually
            fast rank, scores may exceed 1). NVRx's fields always use ``"min"``.
        individual_window: number of recent reports whose best median is a rank's own reference
            in the ``robust_*_individual_scores``.
        individual_support: how many reports of the window must reach that best median (the
            reference is their ``individual_support``-th smallest median, capped by the current
            one): 2 keeps one fast report, e.g. the warm-up, from lowering the robust individual
            scores of the whole window. NVRx's fields use the best median ever seen.
        communication_markers: substrings (case-insensitive) that mark a GPU timer as
            communication; such timers are left out of every score.
        policy: the persistence policy that fills ``Report.confirmed`` (a
            `straggler.analysis.policy.PolicyConfig`, a `StragglerPolicy`, True for the defaults, or
            None/False for none); it runs where the report lands and keeps its state here.
        roles: global rank -> role (any hashable key, e.g. the pipeline stage) for the policy;
            ranks are compared only within their role. Implies the default policy (with
            ``policy=None``); `ValueError` with ``policy=False``.

    Per report, with relative scores and gathering, the group exchanges: one all_reduce(MAX) of
    ``2 + len(extra)`` floats (a "new names" flag, the count of names in use and ``extra``);
    only when some rank has timer names unknown so far (and on the first report), one
    ``all_gather_object`` of those names and the node names; one all_reduce(MIN) of
    ``3 * (sections + GPU timers)`` floats (``"median"``: an all_gather of
    ``sections + GPU timers`` floats instead); one gather of the scores to the first rank
    (`straggler.reporting.layout`; plus `straggler.analysis.waits.WIDTH` floats with ``waits``).
    Individual scores without gathering and without ``extra`` need no communication at all.

    The name registry stays about as large as the names in use: the MAX reduction also carries
    each rank's count of names in this report, and when the registry holds more than
    ``2 * world_size * that maximum + 64`` names (so at least half are used by no rank), every
    rank drops it at the same report and rebuilds it from the names in use (one object gather).
    A rank's individual reference of a timer absent for ``individual_window`` reports or more
    is forgotten when stale names pile up (at most 4096 timers are kept); at a rebuild, the
    references and the policy's state of names unused in the last 2 reports are forgotten.

    ``extra``: a fixed-length float vector that every rank passes to every `generate_report`
    (or none does); its element-wise maximum over the group is then available on every rank as
    `last_extra_max`, at no extra collective. NaN entries mean "no value" and are ignored by the
    maximum (all NaN: NaN). The detector uses it for its report interval.
    """

    def __init__(self, scores_to_compute: str | Sequence[str] = "all",
                 gather_on_rank0: bool = True, pg: Any = None, node_name: str = "<notset>",
                 comm: Comm | None = None, telemetry_fields: Sequence[str] = (), *,
                 relative_reference: str = "min", individual_window: int = 20,
                 individual_support: int = 2,
                 communication_markers: Iterable[str] = scoring.COMMUNICATION_MARKERS,
                 policy: Any = None, roles: Mapping[int, Any] | None = None) -> None:
        kinds = check_scores_to_compute(scores_to_compute)
        _check_pg(pg, comm)
        self.policy = make_policy(policy, roles)
        check_bool("gather_on_rank0", gather_on_rank0)
        check_name("node_name", node_name, printable=True)
        fields = check_names("telemetry_fields", telemetry_fields, distinct=True)
        check_choice("relative_reference", relative_reference, scoring.REFERENCES)
        markers = check_names("communication_markers", communication_markers)
        self.is_computing_rel_scores = "relative_perf_scores" in kinds
        self.is_computing_indiv_scores = "individual_perf_scores" in kinds
        self.gather_on_rank0 = gather_on_rank0
        self.node_name = node_name
        self.telemetry_fields = fields
        self.relative_reference = relative_reference
        self.communication_markers = markers
        # NVRx's individual reference (its field names) and ours (the robust_* fields).
        self._section_best = scoring.BestMedianBaseline()
        self._gpu_best = scoring.BestMedianBaseline()
        self._section_baseline = scoring.WindowedMinBaseline(individual_window,
                                                             support=individual_support)
        self._gpu_baseline = scoring.WindowedMinBaseline(individual_window,
                                                         support=individual_support)
        self.comm = comm if comm is not None else Comm.create(process_group=pg)
        self.names = NameRegistry()  # timer name -> id, agreed over the group
        self._warn_once = WarnOnce(log)
        self._communication: dict[str, bool] = {}  # name -> is it communication (cache)
        self._broken = False
        self._early: bool | None = None  # whether this report's window is an early one
        self._wait_groups: dict[str, str] = {}  # the last report's (generate_report)
        self.last_extra_max: tuple[float, ...] | None = None

    @property
    def registry_rebuilds(self) -> int:
        """Times the name registry was rebuilt (see the class doc)."""
        return self.names.rebuilds

    @property
    def individual_window(self) -> int:
        """Reports in the individual reference window."""
        return self._section_baseline.window

    @property
    def individual_support(self) -> int:
        """Reports of the window that must reach the individual reference."""
        return self._section_baseline.support

    @property
    def name_mapper(self) -> NameMapping:
        """NVRx's ``name_mapper``: a snapshot of the name -> id mapping agreed over the group."""
        return self.names.name_mapping()

    # -- public API ------------------------------------------------------------------------

    def generate_report(self, section_summaries: Summaries, kernel_summaries: Summaries,
                        telemetry: Sequence[float] | None = None,
                        extra: Sequence[float] | None = None,
                        waits: Sequence[float] | None = None,
                        wait_groups: Mapping[str, str] | None = None,
                        section_quartiles: Mapping[str, Sequence[float]] | None = None,
                        early: bool | None = None) -> Report | None:
        """Scores for this report interval; every rank of the group calls it together.

        ``section_summaries`` and ``kernel_summaries`` (NVRx's names; ours are GPU timers) map
        timer names to statistics in ms (GPU timers whose name marks communication are dropped
        first). ``telemetry`` holds one value
        per ``telemetry_fields`` entry (NaN: absent) and lands in ``Report.rank_telemetry``.
        ``waits``: this rank's collective waits (`straggler.analysis.waits.pack`, every rank
        passes them or none does); when gathering they become ``Report.waits`` and
        ``Report.culprits`` (`straggler.analysis.waits.attribute`); ``wait_groups`` names
        this rank's groups for people (``{c10d group name: name}``,
        `straggler.analysis.waits.group_name`). ``section_quartiles``: section -> (lower,
        upper) quartile of its times in the window, optionally its low percentile and the
        median and low percentile of the window's recent part (ms,
        `straggler.timing.registry.host_window`), ``Report.section_quartiles_ms``,
        ``Report.section_low_ms`` and ``Report.section_recent_ms``: the within-window spread the
        policy weighs each median by, the rank's fast steps, and its last steps
        (`straggler.analysis.recent`). ``early``: whether this window was an early report's
        (`straggler.report_cycle`: shorter, after a report with suspects), for the policy
        (None: unknown, the policy reads it from the window's steps).
        Returns None on all but the first rank when gathering. A collective error propagates;
        the generator refuses further use after one, since its peers' state is then unknown.
        """
        if self._broken:
            raise RuntimeError("ReportGenerator failed in an earlier report and cannot be reused")
        start_ns = time.perf_counter_ns()
        telemetry_vec = self._vector("telemetry", telemetry, len(self.telemetry_fields))
        extra_vec = None if extra is None else self._vector("extra", extra, None)
        sections = {str(k): dict(v) for k, v in section_summaries.items()}
        gpus = {str(k): dict(v) for k, v in kernel_summaries.items()
                if not self._is_communication(str(k))}
        for kind, summaries in (("section", sections), ("GPU timer", gpus)):
            for name, stats in summaries.items():
                low = stats.get(Statistic.MIN)
                if low is not None and low <= 0:
                    self._warn_once(f"nonpositive:{name}", "straggler: %s %r has zero or "
                                    "negative durations (min %.3g ms); they carry no timing and "
                                    "its scores may be NaN", kind, name, low)
        if not sections and not gpus:
            self._warn_once("empty", "straggler: nothing was timed on rank %d since the last "
                            "report (no detection_section entries or GPU timers); its scores are "
                            "NaN", self._global_rank)
        try:
            waits_vec = None if waits is None else self._vector("waits", waits, WAITS_WIDTH)
            self._wait_groups = dict(wait_groups or {})
            quartiles = np.array([_window_quantiles((section_quartiles or {}).get(n))
                                  for n in sections], dtype=np.float64).reshape(-1, 5)
            self._early = early
            return self._generate(sections, gpus, telemetry_vec, extra_vec, start_ns, waits_vec,
                                  quartiles)
        except BaseException:
            self._broken = True
            raise

    def state_dict(self) -> dict[str, Any]:
        """The individual references, to carry across a restart: NVRx's best medians
        (``"best"``) and the robust windows (recent medians per timer), and the policy's state
        (``"policy"``, None without a policy)."""
        return {"version": _STATE_VERSION, "individual_window": self.individual_window,
                "sections": self._section_baseline.state_dict(),
                "gpu": self._gpu_baseline.state_dict(),
                "best": {"sections": self._section_best.state_dict(),
                         "gpu": self._gpu_best.state_dict()},
                "policy": self.policy.state_dict() if self.policy is not None else None}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore `state_dict` output, so a resumed job keeps its individual baseline.

        A version 1 state (no ``"best"``) takes NVRx's best medians from the windows.
        """
        if not isinstance(state, Mapping) or state.get("version") not in (1, _STATE_VERSION) \
                or not isinstance(state.get("sections"), Mapping) \
                or not isinstance(state.get("gpu"), Mapping):
            raise ValueError(f"`state` is not a ReportGenerator state of version "
                             f"{_STATE_VERSION}: {state!r:.200}")
        self._section_baseline.load_state_dict(state["sections"])
        self._gpu_baseline.load_state_dict(state["gpu"])
        best = state.get("best")
        if not isinstance(best, Mapping):  # version 1
            best = {kind: {name: min(values) for name, values in state[kind].items() if values}
                    for kind in ("sections", "gpu")}
        self._section_best.load_state_dict(best.get("sections", {}))
        self._gpu_best.load_state_dict(best.get("gpu", {}))
        if self.policy is not None and state.get("policy") is not None:  # absent in old states
            self.policy.load_state_dict(state["policy"])

    # -- internals -----------------------------------------------------------------------

    def _is_communication(self, name: str) -> bool:
        verdict = self._communication.get(name)
        if verdict is None:
            if len(self._communication) >= 65536:  # a cache: keep it bounded under name churn
                self._communication.clear()
            verdict = self._communication[name] = scoring.is_communication(
                name, self.communication_markers)
        return verdict

    @property
    def _global_rank(self) -> int:
        return self.comm.global_ranks[self.comm.rank]

    def _vector(self, name: str, values: Sequence[float] | None, length: int | None) -> np.ndarray:
        vec = np.full(length or 0, np.nan) if values is None \
            else np.asarray(values, dtype=np.float64).reshape(-1)
        if length is not None and vec.shape[0] != length:
            raise ValueError(f"`{name}` has {vec.shape[0]} values, expected {length}")
        return vec

    def _generate(self, sections: dict, gpus: dict, telemetry: np.ndarray,
                  extra: np.ndarray | None, start_ns: int,
                  waits: np.ndarray | None = None, quartiles: np.ndarray | None = None
                  ) -> Report | None:
        sec_names, gpu_names = list(sections), list(gpus)
        # A missing statistic is NaN (numpy turns None into NaN in a float64 array).
        med, num, avg = Statistic.MED, Statistic.NUM, Statistic.AVG
        sec_med = np.array([s.get(med) for s in sections.values()], dtype=np.float64)
        gpu_stats = np.array([[s.get(med), s.get(num), s.get(avg)] for s in gpus.values()],
                             dtype=np.float64).reshape(-1, 3)
        gpu_med, gpu_weight = gpu_stats[:, 0], gpu_stats[:, 1] * gpu_stats[:, 2]
        nan = math.nan
        no_sections = np.full(len(sec_names), nan)
        sc = RankScores(nan, nan, no_sections, no_sections, nan, no_sections)

        if self.is_computing_indiv_scores:
            # NVRx's: the best median ever seen; ours (robust_*): the windowed baseline.
            sc.sec_ind = scoring.ratio_scores(self._section_best.update(sec_names, sec_med),
                                              sec_med)
            sc.gpu_ind = _gpu_score(self._gpu_best.update(gpu_names, gpu_med), gpu_med,
                                    gpu_weight)
            sc.robust_sec_ind = scoring.ratio_scores(
                self._section_baseline.update(sec_names, sec_med), sec_med)
            sc.robust_gpu_ind = _gpu_score(self._gpu_baseline.update(gpu_names, gpu_med),
                                           gpu_med, gpu_weight)

        relative, gather = self.is_computing_rel_scores, self.gather_on_rank0
        if relative or gather or extra is not None:
            self._sync(sec_names if relative or gather else [], gpu_names if relative else [],
                       extra)
        if relative:
            refs = _relative_references(self.comm, self.names, self.relative_reference,
                                        sec_names, sec_med, gpu_names, gpu_med)
            sc.sec_rel = scoring.ratio_scores(refs["min"][0], sec_med)
            sc.gpu_rel = _gpu_score(refs["min"][1], gpu_med, gpu_weight)
            if self.relative_reference != "min":
                sec_ref, gpu_ref = refs[self.relative_reference]
                sc.robust_sec_rel = scoring.ratio_scores(sec_ref, sec_med)
                sc.robust_gpu_rel = _gpu_score(gpu_ref, gpu_med, gpu_weight)

        own = self._global_rank
        local: dict[str, Any] = dict(  # the fields both layouts share
            local_section_summaries=sections, local_kernel_summaries=gpus,
            gather_on_rank0=gather, rank=own, group_ranks=tuple(self.comm.global_ranks))
        if not gather:
            indiv = self.is_computing_indiv_scores

            def pick(wanted: bool, values: np.ndarray | None) -> dict[str, dict[int, float]]:
                return ({n: {own: float(v)} for n, v in zip(sec_names, values, strict=True)}
                        if wanted and values is not None else {})

            robust_gpu_rel = sc.gpu_rel if sc.robust_gpu_rel is None else sc.robust_gpu_rel
            robust_sec_rel = sc.sec_rel if sc.robust_sec_rel is None else sc.robust_sec_rel
            report = Report(
                gpu_relative_perf_scores={own: sc.gpu_rel} if relative else {},
                section_relative_perf_scores=pick(relative, sc.sec_rel),
                gpu_individual_perf_scores={own: sc.gpu_ind} if indiv else {},
                section_individual_perf_scores=pick(indiv, sc.sec_ind),
                rank_to_node={own: self.node_name},
                section_medians_ms={n: {own: float(v)}
                                    for n, v in zip(sec_names, sec_med, strict=True)
                                    if not math.isnan(v)},
                rank_telemetry={own: present(self.telemetry_fields, telemetry)},
                section_quartiles_ms={} if quartiles is None else {
                    n: {own: (float(q[0]), float(q[1]))}
                    for n, q in zip(sec_names, quartiles, strict=True)
                    if not np.isnan(q[:2]).any()},
                section_low_ms={} if quartiles is None else {
                    n: {own: float(q[2])}
                    for n, q in zip(sec_names, quartiles, strict=True) if not np.isnan(q[2])},
                section_recent_ms={} if quartiles is None else {
                    n: {own: (float(q[3]), float(q[4]))}
                    for n, q in zip(sec_names, quartiles, strict=True) if not np.isnan(q[3])},
                generate_report_elapsed_time=_elapsed_ms(start_ns),
                robust_gpu_relative_scores={own: robust_gpu_rel} if relative else {},
                robust_section_relative_scores=pick(relative, robust_sec_rel),
                robust_gpu_individual_scores={own: sc.robust_gpu_ind} if indiv else {},
                robust_section_individual_scores=pick(indiv, sc.robust_sec_ind), **local)
            return self._with_policy(report, start_ns)

        ids = np.array([self.names.section_ids[n] for n in sec_names], dtype=np.int64)
        row = pack(sc, ids, len(self.names.section_ids), sec_med, telemetry, quartiles)
        if waits is not None:  # a fixed-size block at the end (docs/culprits.md)
            row = np.concatenate([row, waits])
        gathered = self.comm.gather_to_first(torch.from_numpy(row))
        if gathered is None:
            return None
        ranks = self.comm.global_ranks
        rows = gathered.numpy()  # one tensor of rows (straggler.dist.comm)
        if waits is not None:
            block = rows[:, -WAITS_WIDTH:]
            local["waits"], local["culprits"] = attribute_waits(block, ranks, self._wait_groups)
            local["own_time"] = OwnTimeTable(ranks, block[:, WAITS_OWN:])
            local["waits_window_s"] = float(np.nanmax(block[:, 0])) \
                if np.isfinite(block[:, 0]).any() else math.nan
            rows = np.ascontiguousarray(rows[:, :-WAITS_WIDTH])  # unpack reads rows
        report = Report(
            **unpack(rows, ranks, self.names.section_ids,
                     self.telemetry_fields, relative, self.is_computing_indiv_scores),
            rank_to_node={r: self.names.nodes.get(r, "<unknown>") for r in ranks},
            generate_report_elapsed_time=_elapsed_ms(start_ns), **local)
        self._check_all_nan(report)
        return self._with_policy(report, start_ns)

    def _with_policy(self, report: Report, start_ns: int) -> Report:
        """The report with the policy's confirmed set (unchanged without a policy)."""
        if self.policy is None:
            return report
        report = apply_policy(self.policy, report, self._early)
        return dataclasses.replace(report, generate_report_elapsed_time=_elapsed_ms(start_ns))

    def _sync(self, sec_names: list[str], gpu_names: list[str], extra: np.ndarray | None) -> None:
        """Agree on the names' ids and the maximum of ``extra`` (`NameRegistry.sync`)."""
        extra_max, rebuilt = self.names.sync(
            self.comm, self.node_name, sec_names, gpu_names, extra,
            names_needed=self.is_computing_rel_scores or self.gather_on_rank0)
        if extra is not None:
            self.last_extra_max = extra_max
        if rebuilt:
            # Most names went out of use: forget what was learned about them now, not later.
            for baseline in (self._section_baseline, self._gpu_baseline, self._section_best,
                             self._gpu_best):
                baseline.forget_stale(_CHURN_FORGET_REPORTS)
            if self.policy is not None:
                self.policy.forget_unseen(_CHURN_FORGET_REPORTS)

    def _check_all_nan(self, report: Report) -> None:
        if _all_scores_nan(report):
            self._warn_once("all-nan", "straggler: every score of the report is NaN: no rank "
                            "timed anything scorable (for relative scores a timer must run on "
                            "two ranks or more); is the training step inside detection_section?")


def _all_scores_nan(report: Report) -> bool:
    scores = list(report.gpu_relative_perf_scores.values())
    scores += list(report.gpu_individual_perf_scores.values())
    for kind in (report.section_relative_perf_scores, report.section_individual_perf_scores):
        for by_rank in kind.values():
            scores += list(by_rank.values())
    return all(math.isnan(s) for s in scores)


def _relative_references(comm: Comm, names: NameRegistry, method: str, sec_names: list[str],
                         sec_med: np.ndarray, gpu_names: list[str], gpu_med: np.ndarray
                         ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Collective: each timer's relative references over the group, (sections, GPU timers) per
    method: ``"min"`` always (NVRx's), and ``method`` when it is another one."""
    n_sec, n_gpu = len(names.section_ids), len(names.gpu_ids)
    if n_sec + n_gpu == 0:  # identical on every rank: the registry is shared
        none = np.full(len(sec_names), np.nan), np.full(len(gpu_names), np.nan)
        return {"min": none, method: none}
    row = np.full(n_sec + n_gpu, np.nan)
    sec_ids = np.array([names.section_ids[n] for n in sec_names], dtype=np.int64)
    gpu_ids = n_sec + np.array([names.gpu_ids[n] for n in gpu_names], dtype=np.int64)
    row[sec_ids], row[gpu_ids] = sec_med, gpu_med
    if method == "min":
        packed = torch.from_numpy(scoring.pack_for_min_reduce(row, comm.rank))
        comm.all_reduce(packed, "min")
        references = {"min": scoring.reference_from_min_reduce(packed.numpy(), comm.world_size)}
    else:  # one gather serves both references
        matrix = torch.stack(comm.all_gather(torch.from_numpy(row))).numpy()
        references = {m: scoring.relative_reference(matrix, m) for m in ("min", method)}
    return {m: (ref[sec_ids], ref[gpu_ids]) for m, ref in references.items()}


def _gpu_score(reference: np.ndarray, medians: np.ndarray, weights: np.ndarray) -> float:
    """A rank's GPU score: its timers' ratios to ``reference``, weighted by time spent."""
    return float(scoring.gpu_scores(scoring.ratio_scores(reference, medians), weights))


def _elapsed_ms(start_ns: int) -> float:
    return (time.perf_counter_ns() - start_ns) * 1e-6


def _window_quantiles(given: Any) -> tuple[float, float, float, float, float]:
    """A section's ``(lower quartile, upper quartile, low percentile, recent median, recent low
    percentile)``: NaN where not given (a caller may pass the quartiles alone)."""
    values = tuple(float(v) for v in given) if given is not None else ()
    return (values + (math.nan,) * 5)[:5]  # type: ignore[return-value]
