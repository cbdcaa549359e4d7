"""The name registry of a report: timer name -> integer id, identical on every rank of a group.

Names cross the group as text only when some rank has names unknown so far (one
``all_gather_object``); every later report moves fixed-size float vectors indexed by these ids
(`straggler.reporting.layout`). `NameRegistry.sync` is the per-report agreement: one
all_reduce(MAX) of [new-names flag, names in use, *extra], then the gather if names are new or
the registry is rebuilt (see `ReportGenerator` for when).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

__all__ = ["NameMapping", "NameRegistry"]


@dataclass(frozen=True)
class NameMapping:
    """NVRx's ``NameMapper`` interface over a snapshot of the registry (read-only, picklable).

    Section and kernel (GPU timer) ids are the same on every rank of the group. ``get_*`` raise
    ``KeyError`` for an unknown name or id, as NVRx's.
    """

    section_name_to_id: dict[str, int]
    kernel_name_to_id: dict[str, int]

    @property
    def id_to_section_name(self) -> dict[int, str]:
        """Section id -> name."""
        return {i: n for n, i in self.section_name_to_id.items()}

    @property
    def id_to_kernel_name(self) -> dict[int, str]:
        """GPU timer id -> name."""
        return {i: n for n, i in self.kernel_name_to_id.items()}

    @property
    def section_counter(self) -> int:
        """Section names with an id."""
        return len(self.section_name_to_id)

    @property
    def kernel_counter(self) -> int:
        """GPU timer names with an id."""
        return len(self.kernel_name_to_id)

    def get_section_id(self, name: str) -> int:
        """The id of section ``name``."""
        return self.section_name_to_id[name]

    def get_kernel_id(self, name: str) -> int:
        """The id of GPU timer ``name``."""
        return self.kernel_name_to_id[name]

    def get_section_name(self, section_id: int) -> str:
        """The name of section id ``section_id``."""
        return self.id_to_section_name[section_id]

    def get_kernel_name(self, kernel_id: int) -> str:
        """The name of GPU timer id ``kernel_id``."""
        return self.id_to_kernel_name[kernel_id]


class NameRegistry:
    """Section and GPU timer ids and each rank's node name, agreed over a group."""

    def __init__(self) -> None:
        self.section_ids: dict[str, int] = {}
        self.gpu_ids: dict[str, int] = {}
        self.nodes: dict[int, str] = {}  # global rank -> node name
        self.rebuilds = 0  # times the registry was dropped and rebuilt from the names in use

    def name_mapping(self) -> NameMapping:
        """A snapshot of the ids in NVRx's ``NameMapper`` interface."""
        return NameMapping(dict(self.section_ids), dict(self.gpu_ids))

    def sync(self, comm: Any, node_name: str, sec_names: Sequence[str],
             gpu_names: Sequence[str], extra: np.ndarray | None, names_needed: bool
             ) -> tuple[tuple[float, ...] | None, bool]:
        """Collective: agree on the ids of this report's names (when ``names_needed``).

        Returns the group's element-wise maximum of ``extra`` (NaN: no rank had a value; None
        without ``extra``) and whether the registry was rebuilt (its ids all changed).
        """
        new_sec = [n for n in sec_names if n not in self.section_ids]
        new_gpu = [n for n in gpu_names if n not in self.gpu_ids]
        flag = float(names_needed and (bool(new_sec or new_gpu) or not self.nodes))
        # NaN in ``extra`` means "no value": it travels as -inf, which MAX ignores.
        values = np.where(np.isnan(extra), -np.inf, extra) if extra is not None else np.zeros(0)
        in_use = float(len(sec_names) + len(gpu_names))
        vec = torch.from_numpy(np.concatenate([[flag, in_use], values]))
        comm.all_reduce(vec, "max")
        extra_max = None if extra is None else tuple(
            v if v != -math.inf else math.nan for v in vec[2:].tolist())
        # Identical on every rank (same registry, same reduced maximum): a deterministic choice.
        known = len(self.section_ids) + len(self.gpu_ids)
        rebuild = names_needed and known > 2 * comm.world_size * vec[1].item() + 64
        if rebuild:
            self.section_ids.clear()
            self.gpu_ids.clear()
            new_sec, new_gpu = list(sec_names), list(gpu_names)
            self.rebuilds += 1
        elif vec[0].item() <= 0:
            return extra_max, False
        gathered = comm.all_gather_object((node_name, new_sec, new_gpu))
        # Every rank walks the same gathered list in group order, so ids agree everywhere.
        for group_rank, (node, ranks_sec, ranks_gpu) in enumerate(gathered):
            self.nodes[comm.global_ranks[group_rank]] = str(node)
            for name in ranks_sec:
                self.section_ids.setdefault(name, len(self.section_ids))
            for name in ranks_gpu:
                self.gpu_ids.setdefault(name, len(self.gpu_ids))
        return extra_max, rebuild
