"""What the reporting rank makes of a report: Megatron-LM-style lines and the summary."""

from __future__ import annotations

import datetime
import logging
import math
import time
from collections.abc import Mapping
from typing import Any

from .. import _common
from ..controller import ControlState
from .config import StragglerDetectionConfig

__all__ = ["megatron_lines", "read_report"]


def read_report(report: Any, iteration: int, config: StragglerDetectionConfig,
                state: ControlState, section: str | None, log: logging.Logger,
                decision: Any = None) -> tuple[_common.Evaluation, dict[str, Any]]:
    """Evaluate `report` against `state`'s thresholds, log it, and summarize it for the controller.

    `section` names the train step's timer (its scores are preferred); `decision` is the
    report's agreed decision, whose line ends the log block; returns the evaluation and the
    summary the controller serves.
    """
    ev = _common.evaluate_report(report, state.gpu_relative_perf_threshold,
                                 state.gpu_individual_perf_threshold, section, log,
                                 config.num_gpu_perf_scores_to_print)
    for line in megatron_lines(report, iteration, config.straggler_minmax_count,
                               ev.relative, ev.individual):
        log.info(line)
    _common.log_decision(report, decision, log, causes_logged=ev.found)
    stats = ev.stats()
    if config.enable_logging:
        for prefix in ("gpu_relative_perf", "gpu_individual_perf"):
            part = {k: v for k, v in stats.items() if k.startswith(prefix + "/")}
            if part:
                log.info("%s scores: %s", prefix, part)
    causes = {r: _common.cause_label(report, r) for r in {*ev.relative, *ev.individual}}
    summary = {"iteration": iteration, "time": time.time(),
               "relative_perf_scores": ev.relative, "relative_source": ev.relative_source,
               "individual_perf_scores": ev.individual,
               "individual_source": ev.individual_source,
               "stragglers_relative": sorted(s.rank for s in ev.stragglers_relative),
               "stragglers_individual": sorted(s.rank for s in ev.stragglers_individual),
               "causes": {r: c for r, c in causes.items() if c}, "stats": stats,
               "culprits": [{"rank": c.rank, "time_lost_s": c.time_lost_s, "share": c.share}
                            for c in getattr(report, "culprits", ())],
               "rank_to_node": dict(getattr(report, "rank_to_node", {}) or {})}
    return ev, summary


def megatron_lines(report: Any, iteration: int, minmax_count: int,
                   relative: Mapping[int, float] | None = None,
                   individual: Mapping[int, float] | None = None) -> list[str]:
    """Megatron-LM-style lines: min and max score with their ranks, then the bottom/top N.

    The first line reads ``[time] | iteration N | MnRelPerf/Rnk: 0.50/3 (cause) | MxRelPerf/Rnk:
    1.00/0 | MnIndPerf/Rnk: ... | MxIndPerf/Rnk: ...``; with ``minmax_count > 1`` two lines
    follow per score kind, as Megatron's ``^^^^ Bottom``/``^^^^ Top`` lines, with cause labels.
    ``relative``/``individual`` default to the report's GPU scores.
    """
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S")
    parts = [f"[{stamp}]", f"iteration {iteration:8d}"]
    extra: list[str] = []
    for tag, field_name, given in (("RelPerf", "gpu_relative_perf_scores", relative),
                                   ("IndPerf", "gpu_individual_perf_scores", individual)):
        scores = dict(given if given is not None else getattr(report, field_name, {}) or {})
        finite = sorted(((s, r) for r, s in scores.items() if not math.isnan(s)))
        if not finite:
            if scores:
                parts.append(f"Mn{tag}/Rnk: nan | Mx{tag}/Rnk: nan")
            continue
        (lo, lo_rank), (hi, hi_rank) = finite[0], max(finite, key=lambda sr: (sr[0], -sr[1]))
        cause = _common.cause_label(report, lo_rank)
        parts.append(f"Mn{tag}/Rnk: {lo:.2f}/{lo_rank}" + (f" ({cause})" if cause else ""))
        parts.append(f"Mx{tag}/Rnk: {hi:.2f}/{hi_rank}")
        if minmax_count > 1:
            n = min(minmax_count, len(finite))

            def entry(score: float, rank: int) -> str:
                label = _common.cause_label(report, rank)
                return f"{score:.2f}/{rank}" + (f" [{label}]" if label else "")

            bottom = ", ".join(entry(s, r) for s, r in finite[:n])
            top = ", ".join(entry(s, r) for s, r in sorted(finite, key=lambda sr: (-sr[0],
                                                                                   sr[1]))[:n])
            extra.append(f"^^^^ Bottom {n} Ranks with lowest  {tag}: {bottom},")
            extra.append(f"^^^^ Top    {n} Ranks with highest {tag}: {top},")
    return [" | ".join(parts), *extra]
