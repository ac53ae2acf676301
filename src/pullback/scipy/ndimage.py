"""``pullback.scipy.ndimage``: ``map_coordinates`` (``jax.scipy.ndimage``).

Interpolation of order 0 (nearest) or 1 (linear) as a sum over the 2**ndim corner gathers,
each weighted by the product of its per-axis weights: the weights are differentiable in the
coordinates and the gathers in the input. The modes are JAX's, which follow SciPy's documented
meaning: "constant" is SciPy's "grid-constant" and "wrap" SciPy's "grid-wrap"; order 0 rounds
half-integers away from zero (SciPy rounds some of them the other way).
"""
from __future__ import annotations

import functools
import itertools
import operator
from typing import Any, Callable, Sequence

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..tracer import dtypes

__all__ = ["map_coordinates"]

Array = Any


def _mirror(index: Array, size: int) -> Array:
    # a triangular wave of period 2 (size - 1): ... 1 0 1 2 .. size-1 size-2 ...
    if size == 1:
        return jnp.zeros_like(index)
    s = size - 1
    return jnp.abs((index + s) % (2 * s) - s)


def _reflect(index: Array, size: int) -> Array:
    # the mirror of the half-integer grid: ... 1 0 0 1 .. size-1 size-1 size-2 ...
    return jnp.floor_divide(_mirror(2 * index + 1, 2 * size + 1) - 1, 2)


_INDEX_FIXERS: dict[str, Callable[[Array, int], Array]] = {
    "constant": lambda index, size: jnp.clip(index, 0, size - 1),
    "nearest": lambda index, size: jnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def _round_half_away(x: Array) -> Array:
    return x if dtypes.is_integer(x.dtype) else lax.round(x)


def _nearest(coordinate: Array) -> list[tuple[Array, Any]]:
    return [(_round_half_away(coordinate).astype(np.int32), None)]


def _linear(coordinate: Array) -> list[tuple[Array, Any]]:
    lower = jnp.floor(coordinate)
    upper_weight = coordinate - lower
    index = lower.astype(np.int32)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


def map_coordinates(input: Any, coordinates: Sequence[Any], order: int,
                    mode: str = "constant", cval: Any = 0.0) -> Array:
    """Interpolates ``input`` at ``coordinates`` (``jax.scipy.ndimage.map_coordinates``).

    Args:
      input: an N-dimensional array.
      coordinates: a sequence of N arrays (of one broadcast shape): the index along each axis
        of every point to evaluate.
      order: 0 (nearest neighbour, ties away from zero) or 1 (linear).
      mode: how points outside ``input`` are filled: "constant" (``cval``; SciPy's
        "grid-constant"), "nearest", "wrap" (periodic; SciPy's "grid-wrap"), "mirror" or
        "reflect".
      cval: the value outside the input in "constant" mode.

    Returns:
      The interpolated values, of the coordinates' broadcast shape and ``input``'s dtype
      (integer inputs round the interpolated value half away from zero).
    """
    input_arr = jnp.asarray(input)
    coords = [jnp.asarray(c) for c in coordinates]
    if len(coords) != input_arr.ndim:
        raise ValueError("map_coordinates: `coordinates` must be a sequence of length "
                         f"input.ndim, but {len(coords)} != {input_arr.ndim}")
    fixer = _INDEX_FIXERS.get(mode) if isinstance(mode, str) else None
    if fixer is None:
        raise NotImplementedError(f"map_coordinates does not support `mode` {mode!r}; the "
                                  f"supported modes are {sorted(_INDEX_FIXERS)}.")
    if order == 0:
        nodes = _nearest
    elif order == 1:
        nodes = _linear
    else:
        raise NotImplementedError(f"map_coordinates requires `order` 0 or 1, got {order!r}")
    if 0 in input_arr.shape:
        raise ValueError(f"map_coordinates: `input` must not be empty, got shape "
                         f"{input_arr.shape}")
    coords = jnp.broadcast_arrays(*coords) if coords else coords
    cval = jnp.asarray(cval, input_arr.dtype)

    per_axis = []  # for each axis: [(index into input, in bounds or None, weight or None)]
    for coordinate, size in zip(coords, input_arr.shape):
        items = []
        for index, weight in nodes(coordinate):
            valid = (index >= 0) & (index < size) if mode == "constant" else None
            items.append((fixer(index, size), valid, weight))
        per_axis.append(items)

    outputs = []
    for corner in itertools.product(*per_axis):
        indices = tuple(c[0] for c in corner)
        value = input_arr[indices] if indices else input_arr
        valids = [c[1] for c in corner if c[1] is not None]
        if valids:
            value = jnp.where(functools.reduce(operator.and_, valids), value, cval)
        weights = [c[2] for c in corner if c[2] is not None]
        if weights:
            value = functools.reduce(operator.mul, weights) * value
        outputs.append(value)
    result = functools.reduce(operator.add, outputs)
    if dtypes.is_integer(input_arr.dtype):
        result = _round_half_away(result)
    return result.astype(input_arr.dtype)
