"""Pieces the trainer integrations share: reading a Report and formatting it.

Nothing here imports a trainer. The functions read a :class:`straggler.Report` only through
NVRx's field names (plus ``causes`` when the report carries it), so they also work on NVRx's own
``Report``.
"""

from __future__ import annotations

import enum
import logging
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist

from ..reporting.decision import below, step_scores

# NVRx's warning texts, kept word for word: log filters and alerting rules match on them.
REL_WARNING = ("STRAGGLER DETECTION WARNING: Some GPUs have worse relative performance. "
               "Affected ranks: {}")
INDIV_WARNING = "STRAGGLER DETECTION WARNING: Some GPUs performance dropped. Affected ranks: {}"

# The integrations' default comm_timeout_s: the longest wait in one of the detector's collectives
# (ranks arrive at a report one step apart at most, so minutes cover a slow step).
DEFAULT_SYNC_TIMEOUT_S = 300.0


def without_verdicts(state: Mapping[str, Any]) -> dict[str, Any]:
    """`state` (a `Detector.state_dict()`) without the persistence policy's part, for the
    checkpoint a straggler stop saves: the job restarts from it (often without the straggler's
    node, its rank now on another one), so the policy must confirm a straggler again from
    fresh reports; the individual baselines and the interval stay. Restored with the policy's
    verdict, the resumed job acted on it at its first report, stopping again (a restart loop
    until the verdict cleared)."""
    out = dict(state)
    reporter = out.get("reporter")
    if isinstance(reporter, Mapping) and reporter.get("policy") is not None:
        out["reporter"] = {**reporter, "policy": None}
    return out


def cause_label(report: Any, rank: int) -> str | None:
    """The cause label of ``rank`` in ``report``, or None when the report has no diagnosis for it.

    ``report.causes`` maps rank -> diagnosis: a `straggler.analysis.causes.Diagnosis` (its ``cause``
    enum's value is the label), an object with a ``label``, a `Cause`-like enum, or a string.
    """
    causes = getattr(report, "causes", None) or {}
    try:
        diagnosis = causes.get(rank)
    except AttributeError:
        return None
    if diagnosis is None:
        return None
    label = diagnosis
    if not isinstance(diagnosis, (str, enum.Enum)):
        label = getattr(diagnosis, "cause", None) or getattr(diagnosis, "label", None) or diagnosis
    label = label.value if isinstance(label, enum.Enum) else label
    text = str(label)
    return text or None


def score_stats(scores: Mapping[int, float]) -> dict[str, float]:
    """``min``, ``median`` and ``max`` of the finite-or-NaN scores, NaN when there are none.

    The median is ``torch.median``'s (the lower middle value), as in NVRx's callback.
    """
    if not scores:
        nan = float("nan")
        return {"min": nan, "median": nan, "max": nan}
    values = torch.tensor(list(scores.values()), dtype=torch.float64)
    return {"min": values.min().item(), "median": values.median().item(),
            "max": values.max().item()}


def _fmt_score(score: float) -> str:
    return "nan" if math.isnan(score) else f"{score:.2f}"


def _ordered(scores: Mapping[int, float]) -> list[tuple[int, float]]:
    """Ranks from worst to best; NaN scores (nothing measured) go last, ties by rank."""
    return sorted(scores.items(), key=lambda kv: (math.isnan(kv[1]),
                                                  kv[1] if not math.isnan(kv[1]) else 0.0, kv[0]))


def format_score_block(report: Any, scores: Mapping[int, float], num_best: int,
                       num_worst: int) -> str:
    """NVRx's per-rank score listing, with a cause column when the report has one.

    More than ``num_best + num_worst`` ranks: the worst ``num_worst`` then the best ``num_best``;
    otherwise every rank, worst first.
    """
    rank_to_node = getattr(report, "rank_to_node", {}) or {}

    def line(rank: int, score: float) -> str:
        text = f"  Rank={rank} Node={rank_to_node.get(rank, '<unk>')} Score={_fmt_score(score)}"
        cause = cause_label(report, rank)
        return text + (f" Cause={cause}" if cause else "") + "\n"

    ordered = _ordered(scores)
    total = len(ordered)
    if total > num_best + num_worst:
        worst = ordered[:num_worst]
        best = list(reversed(ordered[total - num_best:])) if num_best else []
        out = f" Worst performing {len(worst)}/{total} ranks:\n"
        out += "".join(line(r, s) for r, s in worst)
        out += f" Best performing {len(best)}/{total} ranks:\n"
        out += "".join(line(r, s) for r, s in best)
        return out
    return "".join(line(r, s) for r, s in ordered)


@dataclass
class Evaluation:
    """One report judged against thresholds, on the reporting rank."""

    relative: dict[int, float]
    individual: dict[int, float]
    relative_source: str
    individual_source: str
    stragglers_relative: set
    stragglers_individual: set

    @property
    def found(self) -> bool:
        """Whether any rank was flagged."""
        return bool(self.stragglers_relative or self.stragglers_individual)

    @property
    def stragglers(self) -> dict[str, set]:
        """NVRx's two GPU keys of ``identify_stragglers``."""
        return {"straggler_gpus_relative": self.stragglers_relative,
                "straggler_gpus_individual": self.stragglers_individual}

    def stats(self) -> dict[str, float]:
        """``gpu_relative_perf/{min,median,max}`` and ``gpu_individual_perf/...`` (NVRx keys)."""
        out: dict[str, float] = {}
        for prefix, scores in (("gpu_relative_perf", self.relative),
                               ("gpu_individual_perf", self.individual)):
            if scores:
                out.update({f"{prefix}/{k}": v for k, v in score_stats(scores).items()})
        return out


def _ids(report: Any, ranks: set[int]) -> set:
    from straggler import StragglerId

    nodes = getattr(report, "rank_to_node", {}) or {}
    return {StragglerId(r, nodes.get(r, "<unknown>")) for r in ranks}


def _ids_text(ids: set) -> str:
    return "{" + ", ".join(f"StragglerId(rank={i.rank}, node={i.node!r})"
                           for i in sorted(ids, key=lambda i: i.rank)) + "}"


def evaluate_report(report: Any, relative_threshold: float, individual_threshold: float,
                    section: str | None, logger: logging.Logger, num_to_print: int,
                    decision: Any = None) -> Evaluation:
    """Flag ranks and log NVRx's lines: warnings, then the worst/best ``num_to_print`` ranks.

    With ``num_to_print == 0`` the scores are listed only when a rank is flagged (3 each way).
    When a rank is flagged, the scores and each flagged rank's cause with its evidence are logged
    at WARNING, so Python's default logging set-up shows who is slow and why (a clean report's
    scores stay at INFO). Warns when every score is NaN (nothing was timed: e.g. the step was not
    wrapped). With the report's agreed `decision`, its line (`decision_line`) ends the block,
    and the causes are logged when it names a rank even if no threshold flagged one.
    """
    rel, rel_src = step_scores(report, "relative", section)
    ind, ind_src = step_scores(report, "individual", section)
    ev = Evaluation(rel, ind, rel_src, ind_src, _ids(report, below(rel, relative_threshold)),
                    _ids(report, below(ind, individual_threshold)))
    if ev.stragglers_relative:
        logger.warning(REL_WARNING.format(_ids_text(ev.stragglers_relative)))
    if ev.stragglers_individual:
        logger.warning(INDIV_WARNING.format(_ids_text(ev.stragglers_individual)))
    values = [*rel.values(), *ind.values()]
    if values and all(math.isnan(v) for v in values):
        logger.warning("straggler detection: every score is NaN; no timed step was common to "
                       "all ranks in this interval (is the wrapped step the one being called?)")
    n = num_to_print or (3 if ev.found else 0)
    level = logging.WARNING if ev.found else logging.INFO
    for title, scores, source in (("relative", rel, rel_src), ("individual", ind, ind_src)):
        if n and scores:
            note = "" if source == "gpu" else f" ({source}: no GPU time)"
            logger.log(level, "\nGPU %s performance%s:\n%s", title, note,
                       format_score_block(report, scores, n, n))
    acted = decision is not None and bool(decision.act)
    if (ev.found or acted) and getattr(report, "causes", None):
        from straggler.analysis.causes import format_causes

        logger.warning("straggler detection: causes:\n%s", format_causes(report))
    if getattr(report, "culprits", None):  # who the job waits for (docs/culprits.md)
        logger.warning("straggler detection: %s", report.format_culprits())
    log_decision(report, decision, logger, causes_logged=True)
    return ev


def log_decision(report: Any, decision: Any, logger: logging.Logger, *,
                 causes_logged: bool) -> None:
    """Log `decision`'s line (`decision_line`: WARNING when it acts, else INFO), after the
    report's causes when it names a rank and they were not logged yet (``causes_logged``: a
    threshold flagged a rank); nothing without a decision."""
    if decision is None:
        return
    acted = bool(decision.act)
    if acted and not causes_logged and getattr(report, "causes", None):
        from straggler.analysis.causes import format_causes

        logger.warning("straggler detection: causes:\n%s", format_causes(report))
    logger.log(logging.WARNING if acted else logging.INFO, decision_line(report, decision))


def decision_line(report: Any, decision: Any) -> str:
    """The agreed decision in one line: the ranks the integration acts on, with node and cause.

    ``straggler detection: verdict (confirmed): stragglers: rank 1 (node n1): host_side``,
    ``... stragglers: none`` and, for ranks that look slow but are not confirmed yet,
    ``; suspects (not confirmed yet): rank 2 (node n1)``. What ``stop_if_detected`` acts on is
    this line's ranks, which NVRx's threshold warnings alone do not show (a rank confirmed from
    the collectives' waits keeps step scores near 1).
    """
    nodes = getattr(report, "rank_to_node", {}) or {}

    def named(rank: int, with_cause: bool) -> str:
        text = f"rank {rank} (node {nodes.get(rank, '<unknown>')})"
        cause = cause_label(report, rank) if with_cause else None
        return text + (f": {cause}" if cause else "")

    verdict = getattr(decision.verdict, "value", decision.verdict)
    chosen = ", ".join(named(r, True) for r in sorted(decision.stragglers)) or "none"
    line = f"straggler detection: verdict ({verdict}): stragglers: {chosen}"
    if decision.suspects:
        line += "; suspects (not confirmed yet): " + ", ".join(
            named(r, False) for r in sorted(decision.suspects))
    return line


def group_rank(group: Any = None, *, env_rank: bool = False) -> int:
    """This process's rank in ``group`` (0 without a process group).

    With `env_rank`, a process with no process group up (before ``init_process_group`` or after
    it was destroyed) answers the launcher's ``$RANK`` instead of 0.
    """
    if not (dist.is_available() and dist.is_initialized()):
        if env_rank:
            try:
                return int(os.environ.get("RANK", "0"))
            except ValueError:
                return 0
        return 0
    return dist.get_rank(group)


def group_size(group: Any = None) -> int:
    """The size of ``group`` (1 without a process group)."""
    if not (dist.is_available() and dist.is_initialized()):
        return 1
    return dist.get_world_size(group)
