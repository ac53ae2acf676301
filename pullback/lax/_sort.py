"""Sorting: sort, argsort-style multi-operand sort, top_k."""
from __future__ import annotations

__all__: list[str] = []
