"""The CUDA device of this process, as torch sees it (without CUDA: the driver's device 0).

The telemetry provider, the health probe and the report annotator all follow this choice, so
it lives once, here.
"""

from __future__ import annotations

__all__ = ["current_cuda_device"]


def current_cuda_device() -> int:
    """torch's current CUDA ordinal; 0 when torch has no CUDA (the driver's first device)."""
    try:
        import torch

        if torch.cuda.is_available():
            return int(torch.cuda.current_device())
    except Exception:  # noqa: BLE001 - torch without CUDA: the driver's device 0
        pass
    return 0
