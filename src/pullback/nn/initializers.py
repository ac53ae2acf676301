"""Parameter initializers (``jax.nn.initializers``): each returns ``init(key, shape, dtype)``."""
from __future__ import annotations

import math as _math
from typing import Any as _Any, Callable as _Callable, Sequence as _Sequence

from .. import numpy as jnp
from .. import random as _random
from ..lax import linalg as _lax_linalg

Initializer = _Callable[..., _Any]


def zeros(key: _Any, shape: _Sequence[int], dtype: _Any = jnp.float32) -> _Any:
    """All zeros."""
    return jnp.zeros(shape, dtype)


def ones(key: _Any, shape: _Sequence[int], dtype: _Any = jnp.float32) -> _Any:
    """All ones."""
    return jnp.ones(shape, dtype)


def constant(value: _Any, dtype: _Any = jnp.float32) -> Initializer:
    """An initializer filling with ``value``."""
    return lambda key, shape, dtype=dtype: jnp.full(shape, value, dtype)


def normal(stddev: float = 1e-2, dtype: _Any = jnp.float32) -> Initializer:
    """Normal with standard deviation ``stddev``."""
    return lambda key, shape, dtype=dtype: _random.normal(key, shape, dtype) * stddev


def uniform(scale: float = 1e-2, dtype: _Any = jnp.float32) -> Initializer:
    """Uniform on [0, scale)."""
    return lambda key, shape, dtype=dtype: _random.uniform(key, shape, dtype) * scale


def _fans(shape: _Sequence[int], in_axis: int, out_axis: int) -> tuple[float, float]:
    shape = tuple(shape)
    receptive = _math.prod(s for i, s in enumerate(shape)
                          if i not in (in_axis % len(shape), out_axis % len(shape)))
    return shape[in_axis] * receptive, shape[out_axis] * receptive


def variance_scaling(scale: float, mode: str, distribution: str, in_axis: int = -2,
                     out_axis: int = -1, dtype: _Any = jnp.float32) -> Initializer:
    """Samples with variance ``scale / n`` where n is fan_in, fan_out or their average; the
    distribution is "truncated_normal", "normal" or "uniform"."""
    def init(key: _Any, shape: _Sequence[int], dtype: _Any = dtype) -> _Any:
        fan_in, fan_out = _fans(shape, in_axis, out_axis)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[mode]
        var = scale / max(n, 1)
        if distribution == "truncated_normal":
            std = _math.sqrt(var) / 0.87962566103423978  # the std of a N(0,1) truncated to [-2, 2]
            return _random.truncated_normal(key, -2, 2, shape, dtype) * std
        if distribution == "normal":
            return _random.normal(key, shape, dtype) * _math.sqrt(var)
        if distribution == "uniform":
            lim = _math.sqrt(3 * var)
            return _random.uniform(key, shape, dtype, -lim, lim)
        raise ValueError(f"variance_scaling: unknown distribution {distribution!r}")
    return init


def glorot_uniform(in_axis: int = -2, out_axis: int = -1, dtype: _Any = jnp.float32) -> Initializer:
    """Glorot/Xavier uniform."""
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, dtype)


def glorot_normal(in_axis: int = -2, out_axis: int = -1, dtype: _Any = jnp.float32) -> Initializer:
    """Glorot/Xavier (truncated) normal."""
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis, dtype)


def he_uniform(in_axis: int = -2, out_axis: int = -1, dtype: _Any = jnp.float32) -> Initializer:
    """He/Kaiming uniform."""
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, dtype)


def he_normal(in_axis: int = -2, out_axis: int = -1, dtype: _Any = jnp.float32) -> Initializer:
    """He/Kaiming (truncated) normal."""
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, dtype)


def lecun_normal(in_axis: int = -2, out_axis: int = -1, dtype: _Any = jnp.float32) -> Initializer:
    """LeCun (truncated) normal."""
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, dtype)


xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def lecun_uniform(in_axis: int = -2, out_axis: int = -1, dtype: _Any = jnp.float32
                  ) -> Initializer:
    """LeCun uniform: variance ``1 / fan_in``."""
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, dtype)


def truncated_normal(stddev: float = 1e-2, dtype: _Any = jnp.float32, lower: float = -2.0,
                     upper: float = 2.0) -> Initializer:
    """A normal of standard deviation ``stddev`` (before truncation) truncated to
    ``[lower, upper]`` standard deviations."""
    def init(key: _Any, shape: _Sequence[int], dtype: _Any = dtype) -> _Any:
        return _random.truncated_normal(key, lower, upper, shape, dtype) * stddev
    return init


def _orthonormal_columns(a: _Any) -> _Any:
    """The Q of ``a = QR`` (a tall matrix) with R's diagonal positive -- the unique such Q, so
    equal to JAX's Householder Q after its sign fix. CholeskyQR2: two passes of
    ``Q = A R^-1`` with ``R^T R = A^T A``; the second restores the orthogonality the first loses
    for an ill-conditioned A (a Gaussian matrix is well-conditioned)."""
    for _ in range(2):
        gram = jnp.matmul(a.T, a, precision="highest")
        low = _lax_linalg.cholesky(gram)
        a = _lax_linalg.triangular_solve(low, a, left_side=False, lower=True, transpose_a=True)
    return a


def orthogonal(scale: float = 1.0, column_axis: int = -1, dtype: _Any = jnp.float32
               ) -> Initializer:
    """A (scaled) random orthogonal matrix, as ``jax.nn.initializers.orthogonal``: the
    ``column_axis`` dimension against the product of the others; orthonormal rows when there
    are fewer of them than columns.

    Raises:
      ValueError: the shape has fewer than 2 dimensions.
    """
    def init(key: _Any, shape: _Sequence[int], dtype: _Any = dtype) -> _Any:
        shape = tuple(shape)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        n_cols = shape[column_axis]
        n_rows = _math.prod(shape) // n_cols if n_cols else 0
        matrix_shape = (n_cols, n_rows) if n_rows < n_cols else (n_rows, n_cols)
        q = _orthonormal_columns(_random.normal(key, matrix_shape, dtype))
        if n_rows < n_cols:
            q = q.T
        rest = tuple(s for i, s in enumerate(shape) if i != column_axis % len(shape))
        q = jnp.moveaxis(jnp.reshape(q, rest + (n_cols,)), -1, column_axis)
        return scale * q
    return init


def delta_orthogonal(scale: float = 1.0, column_axis: int = -1, dtype: _Any = jnp.float32
                     ) -> Initializer:
    """The delta-orthogonal convolution kernel (Xiao et al. 2018): zeros but an orthogonal
    matrix over the last two dimensions at the spatial centre.

    Raises:
      ValueError: the shape is not 3-, 4- or 5-dimensional, or its last dimension is smaller
        than the one before (fan_in > fan_out).
    """
    def init(key: _Any, shape: _Sequence[int], dtype: _Any = dtype) -> _Any:
        shape = tuple(shape)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return jnp.zeros(shape, dtype).at[centre].set(ortho)
    return init


__all__ = ["Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform",
           "he_normal", "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal",
           "lecun_uniform", "normal", "ones", "orthogonal", "truncated_normal", "uniform",
           "variance_scaling", "xavier_normal", "xavier_uniform", "zeros"]


def __dir__() -> list[str]:
    return sorted(__all__)
