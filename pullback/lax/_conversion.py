"""Dtype conversion: convert_element_type, bitcast_convert_type."""
from __future__ import annotations

__all__: list[str] = []
