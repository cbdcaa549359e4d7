"""Pieces the trainer integrations share: reading a Report, formatting it, agreeing on a decision.

Nothing here imports a trainer. The functions read a :class:`straggler.Report` only through
NVRx's field names (plus ``causes`` when the report carries it), so they also work on NVRx's own
``Report``.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.distributed as dist

# NVRx's warning texts, kept word for word: log filters and alerting rules match on them.
REL_WARNING = ("STRAGGLER DETECTION WARNING: Some GPUs have worse relative performance. "
               "Affected ranks: {}")
INDIV_WARNING = "STRAGGLER DETECTION WARNING: Some GPUs performance dropped. Affected ranks: {}"

# A collective at a report point waits at most this long by default. Ranks arrive at a report
# point one step apart at most, so minutes cover a slow step; a dead peer cannot hang us forever.
DEFAULT_SYNC_TIMEOUT_S = 300.0


def cause_label(report: Any, rank: int) -> str | None:
    """The cause label of ``rank`` in ``report``, or None when the report has no diagnosis for it.

    ``report.causes`` maps rank -> diagnosis; a diagnosis is either a string or an object with a
    ``label`` attribute (an enum's value or name is used when the label is an enum).
    """
    causes = getattr(report, "causes", None) or {}
    try:
        diagnosis = causes.get(rank)
    except AttributeError:
        return None
    if diagnosis is None:
        return None
    label = diagnosis if isinstance(diagnosis, str) else getattr(diagnosis, "label", diagnosis)
    label = getattr(label, "value", label)
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


def flagged_ranks(stragglers: Mapping[str, Any]) -> tuple[set, set]:
    """The (relative, individual) GPU straggler sets from ``identify_stragglers``' result."""
    return (set(stragglers.get("straggler_gpus_relative") or ()),
            set(stragglers.get("straggler_gpus_individual") or ()))


def all_nan(report: Any) -> bool:
    """True when the report computed GPU scores and every one of them is NaN (nothing captured)."""
    values = [*getattr(report, "gpu_relative_perf_scores", {}).values(),
              *getattr(report, "gpu_individual_perf_scores", {}).values()]
    return bool(values) and all(math.isnan(v) for v in values)


def group_rank(group: Any = None) -> int:
    """This process's rank in ``group`` (0 without a process group)."""
    if not (dist.is_available() and dist.is_initialized()):
        return 0
    return dist.get_rank(group)


def group_size(group: Any = None) -> int:
    """The size of ``group`` (1 without a process group)."""
    if not (dist.is_available() and dist.is_initialized()):
        return 1
    return dist.get_world_size(group)


def _device_for(group: Any) -> torch.device:
    """Where a tensor for a collective on ``group`` must live: CUDA for NCCL, else the CPU."""
    backend = str(dist.get_backend(group)).lower()
    if "nccl" in backend and torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def broadcast_values(values: Sequence[float], group: Any = None,
                     timeout_s: float = DEFAULT_SYNC_TIMEOUT_S) -> list[float]:
    """Send group rank 0's ``values`` to every rank of ``group``; return what rank 0 sent.

    Every rank must call it with a sequence of the same length. The tensor lives on the CPU for
    gloo and on the current CUDA device for NCCL (NVRx's callback always used CUDA, which fails
    on gloo). The wait is bounded by ``timeout_s``; a failure raises ``RuntimeError``.
    Without a process group (or with one rank) the values come back unchanged.
    """
    if group_size(group) == 1:
        return [float(v) for v in values]
    tensor = torch.tensor([float(v) for v in values], dtype=torch.float64,
                          device=_device_for(group))
    src = dist.get_global_rank(group, 0) if group is not None else 0
    work = dist.broadcast(tensor, src=src, group=group, async_op=True)
    if not work.wait(timeout=datetime.timedelta(seconds=timeout_s)):
        raise RuntimeError(f"broadcast at the report point did not finish within {timeout_s} s")
    return tensor.cpu().tolist()
