"""unfold / fold: im2col and col2im (backends/cpu/csrc/unfold.c)."""
from __future__ import annotations
