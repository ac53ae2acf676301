"""Pooling with Flax's functional signatures (``flax.linen.max_pool`` and friends).

Channels-last, as Flax: ``x`` is ``(batch..., spatial..., features)`` with one spatial
dimension per window entry, or unbatched ``(spatial..., features)``. Each is one
``lax.reduce_window`` with the monoid's identity as init, so it binds
``reduce_window_max``/``min``/``sum`` (C kernels; gradients through the first maximum, or the
window sum's transpose). ``max_pool``/``min_pool`` of integers use the dtype's extreme as the
identity (Flax passes -inf/+inf, which sends integers down JAX's generic path: same values).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from .. import lax
from .. import numpy as jnp
from ..primitives.reduce_window import identity
from ..tracer import dtypes
from ..tracer.core import get_aval, operator_index


def _pool(op: str, x: Any, init: Any, computation, window_shape: Sequence[int],
          strides: Sequence[int] | None, padding: Any) -> Any:
    x = jnp.asarray(x)
    try:
        window = tuple(operator_index(w) for w in window_shape)
    except TypeError:
        raise TypeError(f"{op}: argument 'window_shape' must be a sequence of ints, got "
                        f"{window_shape!r}") from None
    k = len(window)
    if strides is None:
        strides = (1,) * k
    try:
        strides = tuple(operator_index(s) for s in strides)
    except TypeError:
        raise TypeError(f"{op}: argument 'strides' must be a sequence of ints, got "
                        f"{strides!r}") from None
    if len(strides) != k:
        raise ValueError(f"{op}: argument 'strides' must have one entry per window dimension "
                         f"({k}), got {strides}")
    nd = get_aval(x).ndim
    batch = nd - (k + 1)
    if batch < 0:
        raise ValueError(f"{op}: argument 'inputs' must have at least {k + 1} dimensions "
                         f"(spatial..., features) for window_shape {window}, got shape "
                         f"{get_aval(x).shape}")
    single = batch == 0
    if single:
        x = jnp.expand_dims(x, 0)
        batch = 1
    if not isinstance(padding, str):
        try:
            padding = tuple((operator_index(lo), operator_index(hi)) for lo, hi in padding)
        except (TypeError, ValueError):
            raise TypeError(f"{op}: argument 'padding' must be a string or a sequence of "
                            f"(low, high) int pairs, got {padding!r}") from None
        if len(padding) != k:
            raise ValueError(f"{op}: argument 'padding' must have one (low, high) pair per "
                             f"window dimension ({k}), got {padding}")
        padding = ((0, 0),) * batch + padding + ((0, 0),)
    y = lax.reduce_window(x, init(get_aval(x).dtype), computation,
                          (1,) * batch + window + (1,), (1,) * batch + strides + (1,), padding)
    return jnp.squeeze(y, 0) if single else y


def max_pool(inputs: Any, window_shape: Sequence[int], strides: Sequence[int] | None = None,
             padding: str | Sequence[tuple[int, int]] = "VALID") -> Any:
    """Max pooling over the spatial dimensions of a channels-last array (Flax's ``max_pool``).

    Args:
      inputs: ``(batch..., spatial..., features)`` or ``(spatial..., features)``.
      window_shape: the window per spatial dimension.
      strides: the step per spatial dimension (default 1).
      padding: "VALID", "SAME", "SAME_LOWER" or (low, high) pairs per spatial dimension;
        padding never wins (it is the identity, -inf).

    Returns:
      The pooled array; its gradient goes to each window's first maximum.
    """
    return _pool("max_pool", inputs, lambda dt: identity("max", dt), lax.max, window_shape,
                 strides, padding)


def min_pool(inputs: Any, window_shape: Sequence[int], strides: Sequence[int] | None = None,
             padding: str | Sequence[tuple[int, int]] = "VALID") -> Any:
    """Min pooling (Flax's ``min_pool``): as :func:`max_pool` with the minimum."""
    return _pool("min_pool", inputs, lambda dt: identity("min", dt), lax.min, window_shape,
                 strides, padding)


def avg_pool(inputs: Any, window_shape: Sequence[int], strides: Sequence[int] | None = None,
             padding: str | Sequence[tuple[int, int]] = "VALID",
             count_include_pad: bool = True) -> Any:
    """Average pooling (Flax's ``avg_pool``): window sums divided by the window size.

    Args:
      inputs: ``(batch..., spatial..., features)`` or ``(spatial..., features)``.
      window_shape, strides, padding: as :func:`max_pool` (padding counts as zeros).
      count_include_pad: divide by the whole window size (True, Flax's default) or by the
        number of operand elements each window covers.

    Returns:
      The pooled array (integer inputs give floats, as Flax's division does).
    """
    x = jnp.asarray(inputs)
    y = _pool("avg_pool", x, lambda dt: identity("sum", dt), lax.add, window_shape, strides,
              padding)
    if count_include_pad:
        return y / math.prod(tuple(window_shape))
    shape = get_aval(x).shape
    div_shape = shape[:-1] + (1,)
    if len(div_shape) - 2 == len(tuple(window_shape)):  # batched: one count serves the batch
        div_shape = (1,) + div_shape[1:]
    dt = get_aval(x).dtype if dtypes.is_inexact(get_aval(x).dtype) else jnp.float32
    counts = _pool("avg_pool", jnp.ones(div_shape, dt), lambda d: identity("sum", d), lax.add,
                   window_shape, strides, padding)
    return y / counts
