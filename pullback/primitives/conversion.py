"""Dtype conversion primitives (backends/cpu/csrc/cast.c)."""
from __future__ import annotations
