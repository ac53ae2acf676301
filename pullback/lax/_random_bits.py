"""The Threefry-2x32 counter-based generator."""
from __future__ import annotations

__all__: list[str] = []
