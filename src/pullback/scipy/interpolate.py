"""``pullback.scipy.interpolate``: ``RegularGridInterpolator`` (``jax.scipy.interpolate``).

Linear and nearest interpolation on a rectilinear grid, as JAX's: each query's cell is found
by ``searchsorted`` per axis (points past an end use the end cell, so "linear" extrapolates
before ``fill_value`` replaces them), and the value is the weighted sum over the cell's
2**ndim corners. The interpolator is a pytree (grid, values and fill value are its leaves), so
it passes through jit, vmap and grad.
"""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from .. import numpy as jnp
from ..numpy._promotion import promote_dtypes_inexact
from ..tracer.pytree import register_pytree_node

__all__ = ["RegularGridInterpolator"]

Array = Any

_METHODS = ("linear", "nearest")


def _check_method(method: Any) -> None:
    if method not in _METHODS:
        raise ValueError(f"RegularGridInterpolator: `method` {method!r} is not defined; "
                         f"expected one of {list(_METHODS)}")


def _points_array(xi: Any, ndim: int) -> Array:
    """Query points as an array of shape (..., ndim): a tuple of coordinate arrays is
    broadcast and stacked along a new last axis (in the default float dtype, as JAX)."""
    if isinstance(xi, tuple) and len(xi) == 1:
        xi = xi[0]
    if isinstance(xi, tuple):
        parts = jnp.broadcast_arrays(*[jnp.asarray(p) for p in xi])
        return jnp.stack([p.astype(float) for p in parts], axis=-1)
    xi = jnp.asarray(xi)
    if xi.ndim == 1:
        xi = xi.reshape(-1, ndim)
    return xi


class RegularGridInterpolator:
    """Interpolation on a regular (rectilinear) grid
    (``jax.scipy.interpolate.RegularGridInterpolator``).

    Args:
      points: N 1-D arrays, the strictly increasing grid coordinates of each axis.
      values: an array whose first N axes are the grid's (trailing axes are carried along).
      method: "linear" or "nearest".
      bounds_error: must be False (JAX cannot raise on traced data); points outside the grid
        get ``fill_value``.
      fill_value: the value outside the grid (NaN by default), or None to extrapolate.

    Calling the interpolator with points of shape ``(..., N)`` (or a tuple of N coordinate
    arrays) returns the values of shape ``(...,) + values.shape[N:]``.
    """

    def __init__(self, points: Any, values: Any, method: str = "linear",
                 bounds_error: bool = False, fill_value: Any = np.nan) -> None:
        _check_method(method)
        self.method = method
        self.bounds_error = bounds_error
        if bounds_error:
            raise NotImplementedError("RegularGridInterpolator: `bounds_error` takes no effect "
                                      "under JIT; pass bounds_error=False")
        values = jnp.asarray(values)
        if len(points) > values.ndim:
            raise ValueError(f"RegularGridInterpolator: there are {len(points)} point arrays, "
                             f"but `values` has {values.ndim} dimensions")
        (values,) = promote_dtypes_inexact("RegularGridInterpolator", values)
        if fill_value is not None:
            fill_value = jnp.asarray(fill_value)
            if not jnp.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError("RegularGridInterpolator: `fill_value` must be either None "
                                 "or of a type compatible with values")
        self.fill_value = fill_value
        self.grid = tuple(jnp.asarray(p) for p in points)
        for n, (g, size) in enumerate(zip(self.grid, values.shape)):
            if g.ndim != 1 or g.shape[0] != size:
                raise ValueError(f"RegularGridInterpolator: `points[{n}]` must be 1-D with "
                                 f"{size} entries (values.shape[{n}]), got shape {g.shape}")
            if size < 2:
                raise ValueError(f"RegularGridInterpolator: `points[{n}]` needs at least 2 "
                                 f"grid points, got {size}")
        self.values = values

    def __call__(self, xi: Any, method: str | None = None) -> Array:
        method = self.method if method is None else method
        _check_method(method)
        ndim = len(self.grid)
        xi = _points_array(xi, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(f"RegularGridInterpolator: the requested sample points `xi` have "
                             f"dimension {xi.shape[-1]}, but this interpolator has dimension "
                             f"{ndim}")
        xi_shape = xi.shape
        xi = xi.reshape(-1, ndim)
        indices, distances, outside = self._find_indices(xi.T)
        if method == "linear":
            result = self._linear(indices, distances)
        else:
            result = self._nearest(indices, distances)
        if self.fill_value is not None:
            mask = outside.reshape(outside.shape + (1,) * (result.ndim - 1))
            result = jnp.where(mask, self.fill_value, result)
        return result.reshape(xi_shape[:-1] + self.values.shape[ndim:])

    def _linear(self, indices: list, distances: list) -> Array:
        trailing = (slice(None),) + (None,) * (self.values.ndim - len(indices))
        result = None
        for corner in itertools.product(*[(0, 1)] * len(indices)):
            weight = None
            for upper, y in zip(corner, distances):
                w = y if upper else 1 - y
                weight = w if weight is None else weight * w
            term = self.values[tuple(i + u for i, u in zip(indices, corner))] * weight[trailing]
            result = term if result is None else result + term
        return result

    def _nearest(self, indices: list, distances: list) -> Array:
        return self.values[tuple(jnp.where(y <= .5, i, i + 1)
                                 for i, y in zip(indices, distances))]

    def _find_indices(self, xi: Array) -> tuple[list, list, Array]:
        indices, distances = [], []
        outside = jnp.zeros((xi.shape[1],), dtype=bool)
        for x, g in zip(xi, self.grid):
            i = jnp.clip(jnp.searchsorted(g, x) - 1, 0, g.shape[0] - 2)
            indices.append(i)
            distances.append((x - g[i]) / (g[i + 1] - g[i]))
            outside = outside | (x < g[0]) | (x > g[-1])
        return indices, distances, outside


def _flatten(obj: RegularGridInterpolator):
    return (obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)


def _unflatten(aux: Any, children: Any) -> RegularGridInterpolator:
    # not through __init__: the leaves may be tracers or placeholders
    obj = RegularGridInterpolator.__new__(RegularGridInterpolator)
    obj.grid, obj.values, obj.fill_value = children
    obj.method, obj.bounds_error = aux
    return obj


register_pytree_node(RegularGridInterpolator, _flatten, _unflatten)
