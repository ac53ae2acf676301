"""Gather and scatter with lax's dimension numbers."""
from __future__ import annotations

__all__: list[str] = []
