"""``straggler plot LOG -o heatmap.png``: ranks x reports heat map of scores.

Each cell is a rank's lowest relative score in a report (GPU or any section; 1 = as fast as
the reference). Flagged cells carry an ``x`` (confirmed ones too), confirmed cells also a box;
lines separate nodes. The colour scale starts at 0.25, or lower when a score is lower (never
clipped: 0.10 looks different from 0.25), and the colour bar says where. When
there are more ranks than ``max_rows`` (or reports than ``max_cols``), consecutive ranks
(reports) are aggregated into one row (column) by their minimum, so a slow rank stays visible,
and the figure says so. matplotlib is imported here, with the Agg backend (no display needed).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .logdata import LogData, load_log

__all__ = ["colour_floor", "heatmap_arrays", "plot_heatmap", "run_plot"]

COLOUR_FLOOR = 0.25
"""The colour scale's lowest score unless a lower one is shown."""


def colour_floor(score: np.ndarray) -> float:
    """Lowest score the colour scale shows: `COLOUR_FLOOR`, or the lowest score rounded down
    to 0.05, so no cell is clipped to the floor's colour."""
    finite = score[np.isfinite(score)]
    low = float(finite.min()) if finite.size else COLOUR_FLOOR
    return min(COLOUR_FLOOR, max(0.0, np.floor(low * 20) / 20))


def heatmap_arrays(data: LogData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(score, flagged, confirmed): arrays of shape (ranks, reports), ranks in sorted order."""
    ranks = data.ranks
    row = {r: i for i, r in enumerate(ranks)}
    shape = (len(ranks), len(data.reports))
    score = np.full(shape, np.nan)
    flagged = np.zeros(shape, dtype=bool)
    confirmed = np.zeros(shape, dtype=bool)
    for j, rep in enumerate(data.reports):
        idx = np.array([row[int(r)] for r in rep.ranks], dtype=np.int64)
        score[idx, j] = rep.score
        for r in rep.flagged & row.keys():
            flagged[row[r], j] = True
        for r in rep.confirmed & row.keys():
            confirmed[row[r], j] = True
    return score, flagged, confirmed


def _bins(n: int, most: int) -> np.ndarray:
    """Start index of each bin when `n` items are grouped into at most `most` bins."""
    per = -(-n // most)
    return np.arange(0, n, per)


def _reduce(a: np.ndarray, starts: np.ndarray, axis: int, how: str) -> np.ndarray:
    if len(starts) == a.shape[axis]:
        return a
    if how == "min":
        with np.errstate(all="ignore"):
            filled = np.where(np.isnan(a), np.inf, a)
            out = np.minimum.reduceat(filled, starts, axis=axis)
        return np.where(np.isinf(out), np.nan, out)
    return np.logical_or.reduceat(a, starts, axis=axis)


def plot_heatmap(data: LogData, output: str, max_rows: int = 256, max_cols: int = 400,
                 title: str | None = None) -> str:
    """Write the heat map of `data` to `output`; returns a note on aggregation ("" if none)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    score, flagged, confirmed = heatmap_arrays(data)
    ranks = data.ranks
    n_ranks, n_reports = score.shape
    rows, cols = _bins(n_ranks, max_rows), _bins(n_reports, max_cols)
    score = _reduce(_reduce(score, rows, 0, "min"), cols, 1, "min")
    flagged = _reduce(_reduce(flagged, rows, 0, "any"), cols, 1, "any")
    confirmed = _reduce(_reduce(confirmed, rows, 0, "any"), cols, 1, "any")
    per_row = int(rows[1] - rows[0]) if len(rows) > 1 else 1
    per_col = int(cols[1] - cols[0]) if len(cols) > 1 else 1
    notes = []
    if per_row > 1:
        notes.append(f"each row: min over {per_row} consecutive ranks")
    if per_col > 1:
        notes.append(f"each column: min over {per_col} consecutive reports")

    n_r, n_c = score.shape
    fig_h = min(3.0 + 0.28 * n_r, 14.0)
    fig_w = min(max(7.0, 3.0 + 0.12 * n_c), 16.0)
    fig, ax = plt.subplots(figsize=(fig_w, fig_h), dpi=110)
    cmap = matplotlib.colormaps["RdYlGn"].with_extremes(bad="#d0d0d0")
    vmin = colour_floor(score)
    image = ax.imshow(np.ma.masked_invalid(score), aspect="auto", cmap=cmap, vmin=vmin,
                      vmax=1.0, interpolation="nearest")
    cbar = fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
    cbar.set_label(f"lowest relative score, {vmin:.2f} to 1 (1: as fast as the reference)")

    small = n_r * n_c <= 40_000
    ys, xs = np.nonzero(flagged)  # confirmed cells keep their x; the box comes on top
    marker = max(3.0, min(60.0, 2500.0 / max(n_r, n_c)))
    if len(xs):
        ax.scatter(xs, ys, marker="x", s=marker, c="black", linewidths=0.8,
                   label="flagged (one report, NVRx rule)")
    ys, xs = np.nonzero(confirmed)
    if small:
        for x, y in zip(xs, ys, strict=True):
            ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, edgecolor="black",
                                   linewidth=1.2))
        if len(xs):
            ax.plot([], [], "s", mfc="none", mec="black", label="confirmed (policy)")
    elif len(xs):
        ax.scatter(xs, ys, marker="s", s=marker, facecolors="none", edgecolors="black",
                   linewidths=0.8, label="confirmed (policy)")

    # Node boundaries: between consecutive rows whose first ranks sit on different nodes.
    nodes = [data.nodes[ranks[i]] for i in rows]
    node_count = len(set(data.nodes.values()))
    boundaries = [i - 0.5 for i in range(1, n_r) if nodes[i] != nodes[i - 1]]
    if boundaries and len(boundaries) <= 64:
        for boundary in boundaries:
            ax.axhline(boundary, color="#303030", linewidth=0.8)
    elif boundaries:
        notes.append(f"{node_count} nodes: boundaries not drawn")

    ticks = np.arange(n_r) if n_r <= 40 else np.linspace(0, n_r - 1, 16).round().astype(int)
    labels = []
    for t in ticks:
        first = ranks[rows[t]]
        last = ranks[min(rows[t] + per_row, n_ranks) - 1]
        label = f"{first}" if first == last else f"{first}-{last}"
        labels.append(f"{label} ({nodes[t]})" if n_r <= 40 else label)
    if n_r > 40:  # name the rows holding flagged or confirmed ranks (up to 8), in red
        marked = np.nonzero((flagged | confirmed).any(axis=1))[0]
        worst = sorted(marked, key=lambda i: np.nanmin(score[i], initial=np.inf))[:8]
        extra = {int(i): f"{ranks[rows[i]]}-{ranks[min(rows[i] + per_row, n_ranks) - 1]} >"
                 for i in worst}
        keep = [(int(t), lab) for t, lab in zip(ticks, labels, strict=True)
                if all(abs(int(t) - i) > n_r / 40 for i in extra)]
        pairs = sorted(keep + list(extra.items()))
        ticks, labels = [t for t, _ in pairs], [lab for _, lab in pairs]
    ax.set_yticks(ticks, labels, fontsize=8 if n_r <= 40 else 7)
    for tick, lab in zip(ax.get_yticklabels(), labels, strict=True):
        if lab.endswith(">"):
            tick.set_color("#b00000")
    ax.set_ylabel("rank (node)" if n_r <= 40 else "ranks")
    xt = np.linspace(0, n_c - 1, min(n_c, 12)).round().astype(int)
    ax.set_xticks(xt, [str(int(cols[i]) + 1) for i in xt], fontsize=8)
    ax.set_xlabel(f"report (1..{n_reports})")
    head = title or f"straggler scores: {n_ranks} ranks x {n_reports} reports"
    ax.set_title(head + ("\n" + "; ".join(notes) if notes else ""), fontsize=10)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14 if n_r <= 40 else -0.04),
                  ncol=2, fontsize=8, frameon=False)
    fig.tight_layout()
    fig.savefig(output, bbox_inches="tight")
    plt.close(fig)
    return "; ".join(notes)


MAX_CULPRITS_DRAWN = 8
"""Culprit ranks drawn on their own in the waits plot; the others are summed as "other"."""


def waits_arrays(data: LogData) -> tuple[list[int], np.ndarray]:
    """The culprit ranks (most time lost first) and the time lost to each per report (s)."""
    total: dict[int, float] = {}
    for row in data.reports:
        for rank, seconds, _ in row.culprits:
            total[rank] = total.get(rank, 0.0) + seconds
    ranks = sorted(total, key=lambda r: (-total[r], r))
    index = {r: i for i, r in enumerate(ranks)}
    lost = np.zeros((len(ranks), len(data.reports)))
    for j, row in enumerate(data.reports):
        for rank, seconds, _ in row.culprits:
            lost[index[rank], j] += seconds
    return ranks, lost


def plot_waits(data: LogData, output: str, title: str | None = None) -> str:
    """Write the plot of who the job waits for: per report, the time the other ranks lost
    waiting at collectives for each culprit rank (stacked). Returns a note ("" if none)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ranks, lost = waits_arrays(data)
    note = ""
    if len(ranks) > MAX_CULPRITS_DRAWN:
        note = f"{len(ranks) - MAX_CULPRITS_DRAWN + 1} culprit ranks summed as 'other'"
        lost = np.vstack([lost[:MAX_CULPRITS_DRAWN - 1], lost[MAX_CULPRITS_DRAWN - 1:].sum(0)])
        labels = [f"rank {r} ({data.nodes.get(r, '?')})" for r in ranks[:MAX_CULPRITS_DRAWN - 1]]
        labels.append("other")
    else:
        labels = [f"rank {r} ({data.nodes.get(r, '?')})" for r in ranks]
    n = len(data.reports)
    fig, ax = plt.subplots(figsize=(min(max(7.0, 3.0 + 0.1 * n), 16.0), 4.5), dpi=110)
    x = np.arange(1, n + 1)
    bottom = np.zeros(n)
    for values, label in zip(lost, labels, strict=True):
        ax.bar(x, values, bottom=bottom, label=label, width=0.9)
        bottom += values
    if n <= 40:
        ax.set_xticks(x)
    ax.set_xlabel(f"report (1..{n})")
    ax.set_ylabel("rank time lost waiting for it (s)")
    head = title or "who the job waits for at its collectives"
    ax.set_title(head + (f"\n{note}" if note else "") + ("" if ranks else "\nno culprit named"),
                 fontsize=10)
    if ranks:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(output, bbox_inches="tight")
    plt.close(fig)
    return note


def run_plot(logs: Sequence[str], output: str, max_rows: int = 256, max_cols: int = 400,
             title: str | None = None, skip_bad: bool = False, run: str | None = None,
             waits: bool = False) -> int:
    """Read `logs`, write the heat map (``waits``: who the job waits for) to `output`; 0."""
    for name, value in (("--max-rows", max_rows), ("--max-cols", max_cols)):
        if value < 2:
            raise ValueError(f"`{name}={value!r}` must be at least 2")
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise ImportError("`straggler plot` needs matplotlib: pip install 'matplotlib>=3.6' "
                          "(or pip install '.[plot]' in a straggler checkout)") from exc
    data = load_log(logs, skip_bad=skip_bad, run=run)
    if data.bad_lines:
        import sys

        print(f"straggler: skipped {len(data.bad_lines)} bad line(s); the first: "
              f"{data.bad_lines[0]}", file=sys.stderr)
    if waits:
        note = plot_waits(data, output, title)
        print(f"wrote {output}: who the job waits for over {len(data.reports)} reports"
              + (f" ({note})" if note else ""))
        return 0
    note = plot_heatmap(data, output, max_rows, max_cols, title)
    print(f"wrote {output}: {len(data.nodes)} ranks x {len(data.reports)} reports"
          + (f" ({note})" if note else ""))
    return 0
