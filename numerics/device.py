"""Device and dtype selection: CUDA when present, else CPU; float64 for comparisons."""

from __future__ import annotations

import torch

__all__ = ["DEFAULT_DTYPE", "select_device"]

DEFAULT_DTYPE = torch.float64


def select_device(name: str | None = "auto") -> torch.device:
    """``"auto"`` (CUDA if available, else CPU), ``"cpu"`` or ``"cuda"``.

    Raises ``ValueError`` for an unknown name or for ``"cuda"`` on a machine without a GPU.
    """
    name = (name or "auto").lower()
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ValueError("device 'cuda' requested but no CUDA device is available")
        return torch.device(name)
    raise ValueError(f"device must be one of auto, cpu, cuda, got {name!r}")
