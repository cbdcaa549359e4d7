"""Constants shared by the detector and an integration, kept here so neither imports the other."""

from __future__ import annotations

__all__ = ["FT_SECTIONS_MODES"]

#: ``Detector.initialize(ft_sections=...)``: FT sections under ``ft_launcher`` only when it is
#: there (``auto``), always or raise (``required``), never (``off``). See docs/ft.md.
FT_SECTIONS_MODES = ("auto", "required", "off")
