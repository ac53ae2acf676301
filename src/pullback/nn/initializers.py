"""Parameter initializers (``jax.nn.initializers``): each returns ``init(key, shape, dtype)``."""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from .. import numpy as jnp
from .. import random

Initializer = Callable[..., Any]


def zeros(key: Any, shape: Sequence[int], dtype: Any = jnp.float32) -> Any:
    """All zeros."""
    return jnp.zeros(shape, dtype)


def ones(key: Any, shape: Sequence[int], dtype: Any = jnp.float32) -> Any:
    """All ones."""
    return jnp.ones(shape, dtype)


def constant(value: Any, dtype: Any = jnp.float32) -> Initializer:
    """An initializer filling with ``value``."""
    return lambda key, shape, dtype=dtype: jnp.full(shape, value, dtype)


def normal(stddev: float = 1e-2, dtype: Any = jnp.float32) -> Initializer:
    """Normal with standard deviation ``stddev``."""
    return lambda key, shape, dtype=dtype: random.normal(key, shape, dtype) * stddev


def uniform(scale: float = 1e-2, dtype: Any = jnp.float32) -> Initializer:
    """Uniform on [0, scale)."""
    return lambda key, shape, dtype=dtype: random.uniform(key, shape, dtype) * scale


def _fans(shape: Sequence[int], in_axis: int, out_axis: int) -> tuple[float, float]:
    shape = tuple(shape)
    receptive = math.prod(s for i, s in enumerate(shape)
                          if i not in (in_axis % len(shape), out_axis % len(shape)))
    return shape[in_axis] * receptive, shape[out_axis] * receptive


def variance_scaling(scale: float, mode: str, distribution: str, in_axis: int = -2,
                     out_axis: int = -1, dtype: Any = jnp.float32) -> Initializer:
    """Samples with variance ``scale / n`` where n is fan_in, fan_out or their average; the
    distribution is "truncated_normal", "normal" or "uniform"."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        fan_in, fan_out = _fans(shape, in_axis, out_axis)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[mode]
        var = scale / max(n, 1)
        if distribution == "truncated_normal":
            std = math.sqrt(var) / 0.87962566103423978  # the std of a N(0,1) truncated to [-2, 2]
            return random.truncated_normal(key, -2, 2, shape, dtype) * std
        if distribution == "normal":
            return random.normal(key, shape, dtype) * math.sqrt(var)
        if distribution == "uniform":
            lim = math.sqrt(3 * var)
            return random.uniform(key, shape, dtype, -lim, lim)
        raise ValueError(f"variance_scaling: unknown distribution {distribution!r}")
    return init


def glorot_uniform(in_axis: int = -2, out_axis: int = -1, dtype: Any = jnp.float32) -> Initializer:
    """Glorot/Xavier uniform."""
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, dtype)


def glorot_normal(in_axis: int = -2, out_axis: int = -1, dtype: Any = jnp.float32) -> Initializer:
    """Glorot/Xavier (truncated) normal."""
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis, dtype)


def he_uniform(in_axis: int = -2, out_axis: int = -1, dtype: Any = jnp.float32) -> Initializer:
    """He/Kaiming uniform."""
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, dtype)


def he_normal(in_axis: int = -2, out_axis: int = -1, dtype: Any = jnp.float32) -> Initializer:
    """He/Kaiming (truncated) normal."""
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, dtype)


def lecun_normal(in_axis: int = -2, out_axis: int = -1, dtype: Any = jnp.float32) -> Initializer:
    """LeCun (truncated) normal."""
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, dtype)


xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal
