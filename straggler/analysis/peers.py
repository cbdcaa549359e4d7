"""Peer groups and peer references of the persistence policy: pure numpy over one report.

`RankSlots` (each rank's fixed position in the per-rank arrays, and the groups of declared
roles), `median_of_others` (a rank's reference: the median of the *other* members of its group),
`group_min` (NVRx's reference: the group's fastest) and `learn_clusters` (stable clusters of
ranks, e.g. pipeline stages, learned from the first reports, that become the peer groups).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping

import numpy as np

__all__ = ["RankSlots", "group_min", "learn_clusters", "median_of_others", "nan_mean_rows",
           "only_confirmed_peers"]

_GAP_FACTOR = 8.0  # a cluster boundary is this many times wider than the median spacing


class RankSlots:
    """A fixed slot (array position) for every rank seen, and the peer groups of declared roles.

    Per-rank state lives in arrays indexed by slot; a rank keeps its slot for good, so a report
    may list any subset of the ranks, in any order. ``roles`` maps a rank to its role (any
    hashable key); ranks of one role form a group, a rank without a role is alone in its own.
    """

    def __init__(self, roles: Mapping[int, Hashable] | None = None) -> None:
        if roles is not None and not isinstance(roles, Mapping):
            raise ValueError(f"`roles={roles!r}` must be a mapping rank -> role")
        self.role_of: dict[int, int] = {}
        codes: dict[Hashable, int] = {}
        for rank, role in (roles or {}).items():
            try:
                self.role_of[int(rank)] = codes.setdefault(role, len(codes))
            except TypeError as exc:
                raise ValueError(f"`roles` entry {rank!r}: {role!r} is not hashable") from exc
        self.reset(())

    def reset(self, ranks: Iterable[int]) -> None:
        """Forget every slot; then ``ranks`` hold slots 0, 1, ... in that order."""
        self.slot_of: dict[int, int] = {r: i for i, r in enumerate(ranks)}
        self.rank = np.array(list(self.slot_of), dtype=np.int64)  # slot -> rank
        self._last: tuple[np.ndarray, np.ndarray] | None = None  # the last (ranks, slots)
        self._role_groups: np.ndarray | None = None

    @property
    def size(self) -> int:
        """Number of slots (ranks seen so far)."""
        return int(self.rank.size)

    def slots(self, ranks: np.ndarray) -> np.ndarray:
        """The slot of each of ``ranks``, new ranks taking the next free slots."""
        if self._last is not None and np.array_equal(ranks, self._last[0]):
            return self._last[1]
        slots = np.empty(ranks.size, dtype=np.int64)
        for i, r in enumerate(ranks.tolist()):
            s = self.slot_of.get(r)
            if s is None:
                s = self.slot_of[r] = len(self.slot_of)
            slots[i] = s
        if len(self.slot_of) > self.rank.size:
            self.rank = np.array(list(self.slot_of), dtype=np.int64)
        if np.unique(slots).size != slots.size:
            raise ValueError("`ranks` must not repeat a rank")
        self._last = (ranks.copy(), slots)
        return slots

    def role_groups(self) -> np.ndarray | None:
        """Group label per slot from the declared roles; None when no role was declared."""
        if not self.role_of:
            return None
        if self._role_groups is None or self._role_groups.size != self.rank.size:
            self._role_groups = np.array(
                [self.role_of.get(int(r), -1 - i) for i, r in enumerate(self.rank)],
                dtype=np.int64)
        return self._role_groups


def median_of_others(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Median of the *other* members of each element's group (NaN values are not members).

    ``groups`` are integer labels aligned with ``values``. A rank alone in its group gets NaN.
    O(n) per group: only the order statistics around the middle are needed (``np.partition``).
    """
    out = np.full(values.shape, np.nan)
    valid = ~np.isnan(values)
    labels = groups[valid]
    single = labels.size and labels.min() == labels.max()
    for g in (labels[:1] if single else np.unique(labels)):
        idx = np.flatnonzero(valid) if single else np.flatnonzero(valid & (groups == g))
        m = idx.size - 1  # peers of each member
        if m < 1:
            continue
        x = values[idx]
        # Removing x from the sorted values shifts the order statistics above it down by one;
        # comparing values instead of positions gives the same result under ties.
        if m % 2:
            j = (m - 1) // 2
            v = np.partition(x, [j, j + 1])
            med = np.where(x > v[j], v[j], v[j + 1])
        else:
            j1, j2 = m // 2 - 1, m // 2
            v = np.partition(x, [j1, j2, j2 + 1])
            med = 0.5 * (np.where(x > v[j1], v[j1], v[j1 + 1])
                         + np.where(x > v[j2], v[j2], v[j2 + 1]))
        out[idx] = med
    return out


def only_confirmed_peers(values: np.ndarray, groups: np.ndarray,
                         confirmed: np.ndarray) -> np.ndarray:
    """Whether each unconfirmed element has peers (group members with a value) and every one of
    them is ``confirmed``: its only reference is a straggler (a group of two once one is
    confirmed), so a ratio to it says nothing about the element itself."""
    valid = ~np.isnan(values)
    out = np.zeros(values.shape, dtype=bool)
    if not (confirmed & valid).any():
        return out
    for g in np.unique(groups[valid]):
        idx = np.flatnonzero(valid & (groups == g))
        healthy = idx[~confirmed[idx]]
        if healthy.size == 1 and idx.size > 1:  # its peers are all confirmed
            out[healthy] = True
    return out


def group_min(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Fastest (smallest) value of each element's group; NaN for a rank alone in its group."""
    out = np.full(values.shape, np.nan)
    valid = ~np.isnan(values)
    for g in np.unique(groups[valid]):
        idx = np.flatnonzero(valid & (groups == g))
        if idx.size > 1:
            out[idx] = values[idx].min()
    return out


def nan_mean_rows(rows: list[np.ndarray], size: int) -> np.ndarray:
    """Column means ignoring NaN (NaN where a column has no value), without warnings."""
    stack = np.full((len(rows), size), np.nan)
    for i, row in enumerate(rows):
        stack[i, : row.size] = row
    count = np.sum(~np.isnan(stack), axis=0)
    total = np.nansum(stack, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def learn_clusters(levels: np.ndarray, gap: float = 0.01, min_fraction: float = 0.1,
                   min_size: int = 2) -> np.ndarray:
    """Group ranks by level (log time relative to the median): stable clusters become groups.

    Sorted levels are split where two neighbours differ by more than ``gap`` and by more
    than eight times the median spacing of neighbours (so a tight stage is cut from the next one
    even when the per-GPU spread fills most of the space between them); a cluster
    with at least ``min_fraction`` of the ranks (and ``min_size``) is structural.
    Members of smaller clusters (candidate stragglers) join the nearest structural cluster that
    is faster than them (else the nearest). With fewer than two structural clusters every rank
    is in group 0. NaN levels get group 0 too.
    """
    groups = np.zeros(levels.shape, dtype=np.int64)
    valid = np.flatnonzero(~np.isnan(levels))
    if valid.size < 2 * min_size:
        return groups
    order = valid[np.argsort(levels[valid], kind="stable")]
    sorted_levels = levels[order]
    gaps = np.diff(sorted_levels)
    # A gap separates clusters when it is both wide (`gap`) and unusual for this world:
    # many times the typical spacing of neighbours, which the per-GPU spread sets.
    cut = max(math.log1p(gap), _GAP_FACTOR * float(np.median(gaps)))
    breaks = np.flatnonzero(gaps > cut) + 1
    clusters = np.split(order, breaks)
    min_size = max(min_size, math.ceil(min_fraction * valid.size))
    big = [c for c in clusters if c.size >= min_size]
    if len(big) < 2:
        return groups
    centres = np.array([np.median(levels[c]) for c in big])
    for gid, c in enumerate(big):
        groups[c] = gid
    for c in clusters:
        if c.size >= min_size:
            continue
        for r in c:
            faster = np.flatnonzero(centres <= levels[r])
            cand = faster if faster.size else np.arange(centres.size)
            groups[r] = cand[np.argmin(np.abs(centres[cand] - levels[r]))]
    return groups
