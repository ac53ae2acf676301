"""Sliding windows: unfold (im2col) and fold (col2im)."""
from __future__ import annotations

__all__: list[str] = []
