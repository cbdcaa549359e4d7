"""Constants shared by the detector and an integration, kept here so neither imports the other."""

from __future__ import annotations

__all__ = ["DATA_LOADING_SECTION", "FT_SECTIONS_MODES", "HANG_ACTIONS", "SCORE_KINDS"]

#: ``Detector.initialize(ft_sections=...)``: FT sections under ``ft_launcher`` only when it is
#: there (``auto``), always or raise (``required``), never (``off``). See docs/ft.md.
FT_SECTIONS_MODES = ("auto", "required", "off")

#: ``scores_to_compute``'s kinds ("all" is both), NVRx's names.
SCORE_KINDS: tuple[str, ...] = ("relative_perf_scores", "individual_perf_scores")

#: ``Detector.initialize(hang_action=...)``: report only, or the culprits exit (docs/hang.md).
HANG_ACTIONS = ("none", "exit")

#: The section `straggler run`'s workers time around each ``DataLoader`` batch (host time): the
#: cause rules call a rank slow in it slow at data loading (docs/telemetry.md, ``host_side``).
DATA_LOADING_SECTION = "dataloader"
