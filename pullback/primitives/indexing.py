"""Gather and scatter (backends/cpu/csrc/gather.c)."""
from __future__ import annotations
