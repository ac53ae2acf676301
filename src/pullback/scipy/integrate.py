"""``pullback.scipy.integrate``: ``trapezoid``, as ``jax.scipy.integrate`` has it (the same
function as ``pullback.numpy.trapezoid``)."""
from __future__ import annotations

from ..numpy import trapezoid

__all__ = ["trapezoid"]
