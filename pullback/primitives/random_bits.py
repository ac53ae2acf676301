"""threefry2x32: the counter-based generator (backends/cpu/csrc/random.c)."""
from __future__ import annotations
