"""full_like: a broadcast scalar shaped like another array (used throughout jnp's
element-wise compositions)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..primitives.movement import broadcast_in_dim_p
from ..tracer import core, dtypes
from ..tracer.array import Array

__all__ = ["full_like", "stop_gradient"]


def full_like(x: Any, fill_value: Any, dtype: Any = None,
              shape: Sequence[int] | None = None) -> Any:
    """An array shaped like ``x`` (or ``shape``) filled with ``fill_value``.

    Args:
      x: the array whose shape and dtype (and weak type, when ``dtype`` is None) to take.
      fill_value: a scalar.
      dtype: the result dtype (default: ``x``'s).
      shape: the result shape (default: ``x``'s).

    Returns:
      A zero-copy broadcast of the one value.
    """
    av = core.get_aval(x)
    dt = av.dtype if dtype is None else dtypes.requested(dtype)
    weak = av.weak_type if dtype is None else False
    value = Array(np.asarray(fill_value, dt), weak)
    shape = av.shape if shape is None else tuple(shape)
    return broadcast_in_dim_p.bind(value, shape=shape, broadcast_dimensions=())


def stop_gradient(x: Any) -> Any:
    """``x``, treated as a constant by differentiation (a pytree of arrays)."""
    from ..primitives.gradient_control import stop_gradient_p
    from ..tracer import pytree
    from ._operands import scalars_to
    return pytree.tree_map(lambda v: stop_gradient_p.bind(*scalars_to((v,))), x)
