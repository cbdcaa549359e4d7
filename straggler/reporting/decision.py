"""The one decision: after a report, who is a straggler and whether to act.

`decide` turns a report into a `Decision` under a `DecisionRule`: by default the persistence
policy's *confirmed* verdict (``Report.confirmed``), or NVRx's single-report rule (a score
strictly below a threshold) as an option. The threshold rule (`below`) and its default
(`DEFAULT_PERF_THRESHOLD`) live here and nowhere else.

The detector agrees the decision inside its report, on its own group (one all_reduce of a
vector with one code per rank, `encode`/`decode`), so every rank holds the same `Decision`
(`Detector.last_decision()`) and the integrations (Lightning, the Megatron manager, FT) act on
it without any collective of their own. Pure: no process group here.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._checks import check_choice, check_fraction, check_name

__all__ = ["DEFAULT_PERF_THRESHOLD", "Verdict", "DecisionRule", "Decision", "below",
           "step_scores", "flagged_ranks", "suspects", "decide", "encode", "decode"]

#: A rank whose score is strictly below this is flagged by NVRx's single-report rule (the
#: NeMo recipe's value, also Lightning's and the Megatron manager's default).
DEFAULT_PERF_THRESHOLD = 0.7

# Codes per rank in the agreed vector.
_NONE, _SUSPECT, _STRAGGLER = 0.0, 1.0, 2.0


class Verdict(str, enum.Enum):
    """Which ranks a decision acts on."""

    #: The persistence policy's confirmed ranks (`Report.confirmed`): robust to noise.
    CONFIRMED = "confirmed"
    #: NVRx's rule: any rank with a score below the threshold in this one report.
    SINGLE_REPORT = "single_report"


def below(scores: Mapping[int, float], threshold: float) -> set[int]:
    """The ranks whose score is strictly below `threshold` (NVRx's rule; NaN never is)."""
    return {rank for rank, score in scores.items() if score < threshold}


@dataclass(frozen=True)
class DecisionRule:
    """How a report becomes a decision.

    Args:
        verdict: `Verdict.CONFIRMED` (default) or `Verdict.SINGLE_REPORT` (or their values).
        relative_threshold: the single-report rule's bar for relative scores, in [0, 1].
        individual_threshold: the same for individual scores.
        section: the wrapped step's section, whose host-time scores stand in for GPU scores
            when a report has none (see `step_scores`).
    """

    verdict: Verdict | str = Verdict.CONFIRMED
    relative_threshold: float = DEFAULT_PERF_THRESHOLD
    individual_threshold: float = DEFAULT_PERF_THRESHOLD
    section: str | None = None

    def __post_init__(self) -> None:
        value = self.verdict.value if isinstance(self.verdict, Verdict) else self.verdict
        object.__setattr__(self, "verdict", Verdict(check_choice(
            "verdict", value, [v.value for v in Verdict])))
        check_fraction("relative_threshold", self.relative_threshold, allow_zero=True)
        check_fraction("individual_threshold", self.individual_threshold, allow_zero=True)
        check_name("section", self.section, optional=True)


@dataclass(frozen=True)
class Decision:
    """What every rank acts on after a report (identical on every rank of the group).

    ``stragglers``: global ranks to act on (the rule's verdict); ``suspects``: ranks that look
    slow but are not confirmed yet (an early report may confirm or clear them); ``report``: the
    detector's report count when it was made; ``iteration``: the tracker's iteration then.
    """

    stragglers: frozenset[int]
    suspects: frozenset[int]
    verdict: Verdict
    report: int = 0
    iteration: int = 0

    @property
    def act(self) -> bool:
        """Whether there is a straggler to act on."""
        return bool(self.stragglers)

    @property
    def suspects_pending(self) -> bool:
        """Whether a rank looks slow without being confirmed (the early-report signal)."""
        return bool(self.suspects)


def step_scores(report: Any, kind: str, section: str | None) -> tuple[dict[int, float], str]:
    """The scores to judge ranks by, and where they come from.

    ``kind`` is "relative" or "individual". GPU scores (NVRx's choice) when any is finite; with
    no GPU time (every GPU score NaN) the scores of the step's section ``section``, which time
    the step on the host. Returns (rank -> score, source), source "gpu" or "host time of <s>".
    """
    gpu = dict(getattr(report, f"gpu_{kind}_perf_scores", {}) or {})
    if section is None or any(not math.isnan(v) for v in gpu.values()):
        return gpu, "gpu"
    sections = getattr(report, f"section_{kind}_perf_scores", {}) or {}
    host = dict(sections.get(section) or {})
    if any(not math.isnan(v) for v in host.values()):
        return host, f"host time of {section}"
    return gpu, "gpu"


def flagged_ranks(report: Any, rule: DecisionRule) -> tuple[set[int], set[int]]:
    """NVRx's single-report rule: (relative, individual) ranks below the rule's thresholds."""
    rel, _ = step_scores(report, "relative", rule.section)
    ind, _ = step_scores(report, "individual", rule.section)
    return below(rel, rule.relative_threshold), below(ind, rule.individual_threshold)


def suspects(report: Any) -> set[int]:
    """Ranks that look slow in this report but are not confirmed: the early-report signal.

    Read from ``report.suspects`` when the policy provides it; otherwise from
    ``report.straggler_states``: a watched rank, not confirmed, slow in this very report
    (``healthy_streak == 0``).
    """
    given = getattr(report, "suspects", None)
    if given is not None:
        return {int(getattr(r, "rank", r)) for r in given}
    states = getattr(report, "straggler_states", None) or {}
    return {int(rank) for rank, state in states.items()
            if not getattr(state, "confirmed", False)
            and getattr(state, "healthy_streak", 1) == 0}


def decide(report: Any, rule: DecisionRule | None = None, *, count: int = 0,
           iteration: int = 0) -> Decision:
    """The decision for `report` under `rule` (default: `DecisionRule()`, the confirmed verdict).
    """
    rule = rule if rule is not None else DecisionRule()
    if rule.verdict is Verdict.CONFIRMED:
        chosen = {int(s.rank) for s in getattr(report, "confirmed", ()) or ()}
    else:
        rel, ind = flagged_ranks(report, rule)
        chosen = rel | ind
    pending = suspects(report) - chosen
    return Decision(frozenset(chosen), frozenset(pending), Verdict(rule.verdict), count,
                    iteration)


def encode(decision: Decision | None, ranks: Sequence[int]) -> list[float]:
    """One code per rank of `ranks` (group order): 2 straggler, 1 suspect, 0 neither.

    A rank without a decision (None: not the reporting rank) sends zeros; the group's MAX is
    then the reporting rank's vector.
    """
    if decision is None:
        return [_NONE] * len(ranks)
    return [_STRAGGLER if r in decision.stragglers else _SUSPECT if r in decision.suspects
            else _NONE for r in ranks]


def decode(codes: Iterable[float], ranks: Sequence[int], verdict: Verdict | str, *,
           count: int = 0, iteration: int = 0) -> Decision:
    """The `Decision` an agreed vector of codes (see `encode`) stands for."""
    values = list(codes)
    stragglers = frozenset(r for r, c in zip(ranks, values, strict=True) if c >= _STRAGGLER)
    pending = frozenset(r for r, c in zip(ranks, values, strict=True)
                        if _SUSPECT <= c < _STRAGGLER)
    return Decision(stragglers, pending, Verdict(verdict), count, iteration)
