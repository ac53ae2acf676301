"""full_like (a broadcast scalar shaped like another array, used throughout jnp's element-wise
compositions; the transforms' array_ops defines it, as grad needs it) and stop_gradient."""
from __future__ import annotations

from typing import Any

from ..primitives.gradient_control import stop_gradient_p
from ..tracer import pytree
from ..transforms.array_ops import full_like
from ._operands import scalars_to

__all__ = ["full_like", "stop_gradient"]


def stop_gradient(x: Any) -> Any:
    """``x``, treated as a constant by differentiation (a pytree of arrays)."""
    return pytree.tree_map(lambda v: stop_gradient_p.bind(*scalars_to((v,))), x)
