"""Sorting primitives (backends/cpu/csrc/sort.c)."""
from __future__ import annotations
