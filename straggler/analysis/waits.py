"""Who the job waits for: each rank's waits at collectives, read the other way round.

Within one collective of a process group, the rank that arrived last waits least (only for the
transfer); every other member's wait beyond that is time lost to it. Waits are local durations,
so no clock synchronisation is needed. To keep what each rank sends small and fixed (no
per-collective timelines), each rank summarises a report window per group in `FIELDS` numbers
(`pack`), for its `SLOTS` busiest groups, and the report's first rank attributes (`attribute`):

- the group's **floor** ``f``: the smallest median wait of a member, the collective's own
  latency as the rank that waits least sees it;
- a rank's **waited** time in the group: ``sum(waits) - count * f``, its waiting beyond that;
- the group's **loss**: the members' waited times summed;
- a rank's **late count**: its collectives whose wait is at most `LATE_FACTOR` times the floor
  (it arrived last, or about with the last), read off the wait quantiles it sends;
- a rank's **lateness** in the group: the others' mean wait less its own (how much later than
  their average it arrived, per collective: the latency, common to all, cancels), with a
  standard error from the members' spreads of waits (their quantiles);
- the **time lost** to a rank in the group: the loss less ``(members - 1)`` times its own
  waited time, for a rank late beyond the noise (`FALSE_RATE`; none
  otherwise), scaled down where the shares exceed the loss. Where rank r arrived last by d,
  each of the others waited d: the members' waits sum to ``(members - 1)`` times everyone's
  delays and r's to all but its own, so the difference is what the others lost to r, from
  exact sums. Collectives nobody waited in give nobody anything.

Exact for a rank that is late in every collective of a group (the usual straggler) and for
ranks taking turns; the approximations (the floor is a median; a rank waiting for a rank that
arrived before the last one) are in docs/culprits.md.

A rank is a **culprit** when, over all its groups, its peers waited for it longer than it
waited for them by at least `MIN_NET_FRACTION` of the window (its net lateness times
``members - 1``, summed), beyond what the noise gives one of the job's ranks by chance
(`FALSE_RATE`); when the time lost to it is at least `MIN_LOST_FRACTION` of the window and
`DOMINANCE` times the time it lost to its peers where it arrived early (a rank late in one
group only because it waited for the culprit in another is that early there); its groups are
those with time lost to it. Live (docs/culprits.md, "Recall and false culprits"): the earlier
rule, a lateness of at least one floor per collective and late in half of a group's
collectives, named nobody on a loaded 2-core host, where the floor (gloo's latency) was 3 ms and
a slow rank 1-2 ms late a step.

Pure numpy: no process group, no torch.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from . import own_time
from .rank_table import RankTable

__all__ = ["FIELDS", "MIN_LOST_FRACTION", "OWN", "SLOTS", "WIDTH", "WORLD", "Culprit",
           "CulpritGroup", "RankWaits", "WaitsTable", "attribute", "group_id", "group_name",
           "pack"]

SLOTS = 8
"""Groups per rank in a report (the ones with the most collectives in the window)."""
QUANTILES = (0.25, 0.5, 0.75, 0.9, 1.0)
"""The wait quantiles each rank sends per group (1.0: the top of its highest histogram bin)."""
FIELDS = 4 + len(QUANTILES)
"""Per group: id, count, wait sum (s), wait min (s), the `QUANTILES` of the waits (s)."""
OWN = 1 + SLOTS * FIELDS
"""Where a row's own time per step starts (`straggler.analysis.own_time.FIELDS` numbers)."""
WIDTH = OWN + own_time.FIELDS
"""Numbers one rank sends per report: the window's length (s), the slots, its own time per
step (`straggler.analysis.own_time.summarize`)."""
MIN_LOST_FRACTION = 0.05
"""A culprit costs the others at least this share of the window (in rank-seconds)."""
LATE_FACTOR = 2.0
"""A wait within this factor of the group's floor counts as arriving last (`RankWaits.late_share`,
`CulpritGroup.late_share`: what people read, not what decides)."""
MIN_NET_FRACTION = 0.1
"""A culprit's peers waited for it longer than it waited for them, over all its groups, by at
least this share of the window."""
FALSE_RATE = 0.1
"""The chance that noise alone makes one member of a group late against its peers there (time
lost to it), and one rank of the job a culprit: a lateness of at least the normal deviate of
``FALSE_RATE / members`` standard errors (1.96 for 2 members, 2.13 for 3, 5.0 for 16,384).
The errors come from each rank's spread of waits, which also holds the latency all members
share, so they overstate the noise of a difference."""
DOMINANCE = 2.0
"""A culprit costs the others at least this many times the time it lost to them (where it
arrived earlier than their average)."""
WORLD = "world"
"""`CulpritGroup.name` of the default process group (every rank)."""
_P2P_BIT = 2 ** 48
MAX_LISTED = 64
"""Members listed per culprit group (``CulpritGroup.size`` counts them all)."""


@dataclasses.dataclass(frozen=True)
class RankWaits:
    """One rank's collectives in a report window.

    Attributes:
        rank: the global rank.
        collectives: collectives it finished in the window (its reported groups).
        waited_s: time it spent waiting for others, beyond each collective's own latency.
        time_lost_s: time its peers lost waiting for it.
        late_share: the share of its collectives where it arrived last (within the floor band).
    """

    rank: int
    collectives: int
    waited_s: float
    time_lost_s: float
    late_share: float


@dataclasses.dataclass(frozen=True)
class CulpritGroup:
    """A group where a culprit made the others wait.

    ``ranks``: the members that reported the group (global ranks, sorted; the first
    `MAX_LISTED` of a larger group), ``size`` how many they are; ``time_lost_s``:
    their time lost to the culprit there; ``late_share``: how often it arrived last there;
    ``name``: the group's name as the reporting rank knows it (`group_name`), "" unknown.
    """

    ranks: tuple[int, ...]
    size: int
    time_lost_s: float
    late_share: float
    name: str = ""

    @property
    def members(self) -> str:
        """The members, short: ``"ranks 2,3"`` or ``"64 ranks from 0"``."""
        r = self.ranks
        if self.size <= 8:
            return "ranks " + ",".join(map(str, r))
        return f"{self.size} ranks from {r[0]}"

    @property
    def label(self) -> str:
        """The group for people: ``"world"``, ``"tp [ranks 2,3]"``, ``"p2p [ranks 1,2]"``, or
        its members alone (``"ranks 2,3"``) when the reporting rank does not know its name."""
        if self.name == WORLD:
            return WORLD
        return f"{self.name} [{self.members}]" if self.name else self.members


@dataclasses.dataclass(frozen=True)
class Culprit:
    """A rank the job waits for.

    Attributes:
        rank: the global rank.
        time_lost_s: time the other ranks lost waiting for it in the window.
        share: that time over the job's rank-time in the window (ranks reporting waits x the
            window's length): "the job waited `share` of its time for this rank".
        groups: the groups where it made the others wait, most time lost first.
    """

    rank: int
    time_lost_s: float
    share: float
    groups: tuple[CulpritGroup, ...]


class WaitsTable(RankTable[RankWaits]):
    """``{global rank: RankWaits}`` over columns: built in O(1) Python objects, a `RankWaits`
    is made when looked up (a report at 16k ranks does not build 16k objects)."""

    def __init__(self, ranks: np.ndarray, collectives: np.ndarray, waited_s: np.ndarray,
                 time_lost_s: np.ndarray, late_share: np.ndarray) -> None:
        self._set_ranks(ranks)
        self.collectives = np.asarray(collectives, dtype=np.float64)
        self.waited_s = np.asarray(waited_s, dtype=np.float64)
        self.time_lost_s = np.asarray(time_lost_s, dtype=np.float64)
        self.late_share = np.asarray(late_share, dtype=np.float64)

    def aligned(self, ranks: Sequence[int], column: str) -> np.ndarray:
        """One column (``"collectives"``, ``"waited_s"``, ...) aligned with ``ranks``, NaN for a
        rank the table does not hold; whole arrays, no `RankWaits` per rank."""
        found, at = self._rows_of(ranks)
        values = np.full(len(found), np.nan)
        values[found] = getattr(self, column)[at[found]]
        return values

    def __getitem__(self, rank: int) -> RankWaits:
        i = self._row(rank)
        return RankWaits(int(self.ranks[i]), int(self.collectives[i]), float(self.waited_s[i]),
                         float(self.time_lost_s[i]), float(self.late_share[i]))


def group_id(name: str) -> float:
    """A group name as a float every member computes alike (48 bits of BLAKE2b, plus bit 48
    for a point-to-point pair, ``"<group>:p2p:<a>-<b>"``: exact in a float64)."""
    digest = hashlib.blake2b(name.encode(), digest_size=6).digest()
    return float(int.from_bytes(digest, "little") + (_P2P_BIT if ":p2p:" in name else 0))


def group_name(name: str, desc: str = "", world: str | None = None) -> str:
    """What people call a group: `WORLD` for the default group (its c10d name ``world``, or
    description ``"default_pg"``), ``"p2p"`` for a point-to-point pair, else its description
    (``new_group(group_desc=...)``), "" when it has none."""
    if name == world or desc == "default_pg":
        return WORLD
    if ":p2p:" in name:
        return "p2p"
    return "" if desc in ("undefined", "default_pg") else desc


def _quantiles(hist: Sequence[int], wait_min_s: float) -> np.ndarray:
    """The `QUANTILES` of waits (s) from a log2 histogram (geometric within a bin, never
    below the smallest wait)."""
    counts = np.asarray(hist, dtype=np.float64)
    cum = np.cumsum(counts)
    out = np.empty(len(QUANTILES))
    for i, q in enumerate(QUANTILES):
        target = q * cum[-1]
        b = int(np.searchsorted(cum, target))
        below = cum[b - 1] if b > 0 else 0.0
        frac = (target - below) / counts[b] if counts[b] > 0 else 0.0
        lo_us, hi_us = (0.5, 1.0) if b == 0 else (2.0 ** (b - 1), 2.0 ** b)
        out[i] = max(lo_us * (hi_us / lo_us) ** frac * 1e-6, wait_min_s)
    return out


def pack(groups: Iterable[tuple[str, int, float, float, Sequence[int]]],
         window_s: float, own: Sequence[float] | np.ndarray | None = None) -> np.ndarray:
    """This rank's `WIDTH` numbers: ``groups`` as (name, count, wait sum s, wait min s,
    histogram) (e.g. `straggler.timing.collectives.take_window`), the busiest `SLOTS` kept;
    ``own``: its own time per step (`straggler.analysis.own_time.summarize`), None: unknown."""
    row = np.full(WIDTH, math.nan)
    row[0] = window_s
    if own is not None:
        row[OWN:] = own
    kept = sorted((g for g in groups if g[1] > 0), key=lambda g: (-g[1], g[0]))[:SLOTS]
    for i, (name, count, wait_sum, wait_min, hist) in enumerate(kept):
        row[1 + i * FIELDS: 1 + (i + 1) * FIELDS] = (group_id(name), count, wait_sum, wait_min,
                                                     *_quantiles(hist, wait_min))
    return row


def _share_below(limit: np.ndarray, wait_min: np.ndarray, quantiles: np.ndarray) -> np.ndarray:
    """Per entry, the share of its waits at most ``limit``: the piecewise-linear CDF through
    (smallest wait, 0) and its `QUANTILES`, flat after the last one.

    Column by column (one segment of the CDF at a time, 1-D arrays): at 16,384 ranks a
    two-dimensional version took 4 ms of the report, this one under 1 ms.
    """
    out = np.zeros(len(limit))
    frac = np.empty(len(limit))
    width = np.empty(len(limit))
    lo, y_lo = wait_min, 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        for j, y_hi in enumerate(QUANTILES):
            hi = np.maximum(lo, quantiles[:, j])  # the CDF never goes down
            # The segment's part of the share: all of it below the limit, none above, linear
            # inside. An empty segment (hi == lo) divides by 0: +inf or NaN (limit == lo)
            # count whole (fmin ignores NaN), -inf nothing.
            np.subtract(limit, lo, out=frac)
            np.subtract(hi, lo, out=width)
            np.divide(frac, width, out=frac)
            np.fmin(frac, 1.0, out=frac)
            np.fmax(frac, 0.0, out=frac)
            frac *= y_hi - y_lo
            out += frac
            lo, y_lo = hi, y_hi
    return out


_last_grouping: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None


def _spread(quantiles: np.ndarray) -> np.ndarray:
    """Per entry, a standard deviation of its waits from its quantiles: the larger of the
    quartiles' and the upper tail's (waits are skewed: a normal's 90th percentile is 1.28
    sigmas over the median, an exponential's 1.6 of its sigma)."""
    q25, q50, q75, q90 = (quantiles[:, QUANTILES.index(q)] for q in (0.25, 0.5, 0.75, 0.9))
    return np.maximum((q75 - q25) / 1.349, (q90 - q50) / 1.2816)


def _z(members: np.ndarray) -> np.ndarray:
    """The significance threshold for a group of ``members``: the normal deviate that one of
    them passes by chance with probability `FALSE_RATE` (Bonferroni)."""
    import statistics  # 0.3 MiB with decimal and fractions: loaded once there are waits

    sizes, at = np.unique(members, return_inverse=True)
    normal = statistics.NormalDist()
    return np.array([normal.inv_cdf(1.0 - FALSE_RATE / max(int(m), 2)) for m in sizes])[at]


def _grouping(gid: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The entries sorted by group (``order``), where each group starts in that order, and each
    entry's group number (0, 1, ... in id order).

    The last report's grouping is reused when every entry has the same id as then (the usual
    case: the same ranks report the same groups in the same slots); at 16,384 ranks the sort
    of 49,152 ids took 1-6 ms of the report on a loaded machine, the comparison 0.05 ms.
    """
    global _last_grouping  # noqa: PLW0603 (one cache slot, replaced whole)
    last = _last_grouping  # one read: a report on another thread replaces it whole
    if last is not None and np.array_equal(last[0], gid):
        return last[1], last[2], last[3]
    order = np.argsort(gid, kind="stable")
    sorted_gid = gid[order]
    new_group = np.r_[True, sorted_gid[1:] != sorted_gid[:-1]]
    starts = np.flatnonzero(new_group)
    group = np.empty(len(gid), dtype=np.int64)
    group[order] = np.cumsum(new_group) - 1
    for a in (order, starts, group):
        a.flags.writeable = False  # shared with the next report's attribution
    _last_grouping = (gid.copy(), order, starts, group)
    return order, starts, group


def attribute(rows: np.ndarray, ranks: Sequence[int], names: Mapping[str, str] | None = None
              ) -> tuple[Mapping[int, RankWaits], tuple[Culprit, ...]]:
    """Per-rank waits and the culprits, from the group's `pack` rows (row i: ``ranks[i]``).

    Rows of all NaN (a rank that observed nothing) give no entry. ``names``: the groups the
    caller knows, ``{c10d group name: name for people}`` (`group_name`), for
    `CulpritGroup.name`; a point-to-point pair is called ``"p2p"`` without it.
    """
    rows = np.asarray(rows, dtype=np.float64).reshape(len(ranks), WIDTH)  # a view if it can
    rank_arr = np.asarray(ranks, dtype=np.int64)
    # The used slots (entries), rank by rank: a count above 0 (`pack` fills a slot only then;
    # an unused slot is NaN, and NaN > 0 is False).
    ok = rows[:, 2:OWN:FIELDS] > 0
    who = np.nonzero(ok)[0]
    if not len(who):
        return WaitsTable(*np.empty((5, 0))), ()
    entries = rows[:, 1:OWN].reshape(len(ranks), SLOTS, FIELDS)[ok]
    gid, count, wsum, wmin = entries[:, 0], entries[:, 1], entries[:, 2], entries[:, 3]
    quantiles = entries[:, 4:]
    median = quantiles[:, QUANTILES.index(0.5)]
    order, starts, group = _grouping(gid)
    n_groups = len(starts)
    # The collective's own latency: the smallest median wait of a member.
    floor = np.minimum.reduceat(median[order], starts)
    members = np.bincount(group, minlength=n_groups)
    late = count * _share_below(LATE_FACTOR * floor[group], wmin, quantiles)
    waited = np.maximum(0.0, wsum - count * floor[group])
    alone = members[group] < 2
    waited[alone] = 0.0  # alone in a group: nobody to wait for
    loss = np.bincount(group, weights=waited, minlength=n_groups)
    # Who the loss goes to. In a collective where member r arrived last, each other member
    # waited about r's delay d beyond the floor: summed over the group, the members wait
    # (members - 1) x the delays of all, and r waits all but its own. So the time lost to r,
    # (members - 1) x its delays, is the group's loss less (members - 1) x its own waited time:
    # exact sums, no quantiles. Collectives nobody waited in add nothing to anyone (a DDP step's
    # later buckets). Only a member that arrived significantly later than its peers gets any:
    # its mean wait is below the others' mean by more than noise gives (`FALSE_RATE`): standard
    # error, from the members' spreads of waits (before, a floor per collective: on a loaded
    # host the floor, gloo's latency, was larger than a straggler's delay). The shares are scaled
    # down where they add up to more than the group's loss, never up: the loss also holds every
    # member's latency beyond the floor (the culprit's own waits included), which scaling up
    # would hand to the culprit (on a loaded host, DDP's 4 buckets a step: 1.5x its peers').
    mean = wsum / count
    # The variance of a member's mean wait: its spread over the count, and its largest wait's
    # share of the mean (one stall, such as the first collective waiting for a rank that
    # started late, moves the mean by itself and is not a straggler).
    top = quantiles[:, QUANTILES.index(1.0)] - median
    spread2 = _spread(quantiles) ** 2 / count + (top / count) ** 2
    others = np.maximum(members[group] - 1, 1)
    ahead = (np.bincount(group, weights=mean, minlength=n_groups)[group] - mean) / others - mean
    noise = np.sqrt(spread2 + (np.bincount(group, weights=spread2, minlength=n_groups)[group]
                               - spread2) / others ** 2)
    late_vs_peers = ahead > _z(members[group]) * noise
    raw = np.maximum(0.0, loss[group] - (members[group] - 1) * waited)
    raw[alone | ~late_vs_peers] = 0.0
    raw_total = np.bincount(group, weights=raw, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        lost = np.where(raw_total[group] > loss[group], raw * loss[group] / raw_total[group],
                        raw)

    n_ranks = len(ranks)
    r_count = np.bincount(who, weights=count, minlength=n_ranks)
    r_waited = np.bincount(who, weights=waited, minlength=n_ranks)
    # The time this rank lost to its peers: (members - 1) x how much earlier than their
    # average it arrived, in the groups where it did (a rank late in one group only because
    # it waited for a culprit in another is that much early there).
    relative = (members[group] - 1) * count * ahead
    relative[alone] = 0.0
    r_behind = np.bincount(who, weights=np.maximum(0.0, -relative), minlength=n_ranks)
    # Over all its groups, how much longer its peers waited for it than it waited for them.
    r_net = np.bincount(who, weights=relative, minlength=n_ranks)
    r_net_se = np.sqrt(np.bincount(who, weights=((members[group] - 1) * count * noise) ** 2,
                                   minlength=n_ranks))
    r_lost = np.bincount(who, weights=lost, minlength=n_ranks)
    r_late = np.bincount(who, weights=late, minlength=n_ranks)
    seen = np.bincount(who, minlength=n_ranks) > 0
    idx = np.flatnonzero(seen)
    waits = WaitsTable(rank_arr[idx], r_count[idx], r_waited[idx], r_lost[idx],
                       r_late[idx] / r_count[idx])

    window_s = float(np.nanmax(rows[:, 0])) if np.isfinite(rows[:, 0]).any() else math.nan
    rank_time = window_s * int(seen.sum())
    floor_lost = MIN_LOST_FRACTION * window_s if math.isfinite(window_s) else 0.0
    z_job = _z(np.array([int(seen.sum())]))[0]
    suspects = np.flatnonzero(seen & (r_lost >= DOMINANCE * r_behind) & (r_lost > floor_lost)
                              & (r_net >= MIN_NET_FRACTION * window_s)
                              & (r_net >= z_job * r_net_se))
    known = {float(x): "p2p" for x in np.unique(gid[gid >= _P2P_BIT])} if len(suspects) else {}
    known.update({group_id(g): n for g, n in (names or {}).items() if n})
    qualifying = np.flatnonzero(lost > 0)
    culprits = []
    for i in suspects:
        mine = qualifying[who[qualifying] == i]
        if not len(mine):
            continue
        found = []
        for e in mine:
            members_e = np.sort(rank_arr[who[group == group[e]]])
            found.append(CulpritGroup(tuple(members_e[:MAX_LISTED].tolist()), len(members_e),
                                      float(lost[e]), float(late[e] / count[e]),
                                      known.get(float(gid[e]), "")))
        found.sort(key=lambda g: -g.time_lost_s)
        share = float(r_lost[i] / rank_time) if rank_time > 0 else math.nan
        culprits.append(Culprit(int(rank_arr[i]), float(r_lost[i]), share, tuple(found)))
    culprits.sort(key=lambda c: -c.time_lost_s)
    return waits, tuple(culprits)
