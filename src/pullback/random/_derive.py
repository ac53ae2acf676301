"""Deriving keys and raw bits: ``split``, ``fold_in``, ``bits``.

These are single primitives over the key data (JAX's ``random_split``, ``random_fold_in`` and
``random_bits``), with the results of JAX's default partitionable threefry, or compositions
giving those of its original scheme under ``jax_threefry_partitionable=False``.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import lax
from ..config import config
from ..lax._random_bits import random_bits, random_fold_in, random_split
from ..tracer import core, dtypes
from ..tracer.array import Array
from ..tracer.shapes import index_arg
from ._checks import canonicalize_shape, user_dtype
from ._keys import PRNGKeyArray, check_key, like_input


def split(key: Any, num: int | Sequence[int] = 2) -> Any:
    """Splits a PRNG key into ``num`` new keys by adding leading axes.

    Args:
      key: a PRNG key (typed, from ``key``, or raw, from ``PRNGKey``).
      num: the number of keys, or a tuple giving their shape. Default 2.

    Returns:
      Keys of shape ``(num,)`` (or ``num``), of the kind ``key`` is. Key ``i`` (row-major) is
      the Threefry hash of ``key`` over the counter (i >> 32, i & 0xffffffff).
    """
    data, typed = check_key("split", key)
    shape = tuple(num) if isinstance(num, Sequence) else (index_arg(num, "split", "num"),)
    return like_input(typed, random_split(data, canonicalize_shape("split", shape, "num")))


def _message(data: Any) -> Any:
    """fold_in's data as a uint32 scalar, converted as ``jnp.asarray(data, 'uint32')`` does."""
    if isinstance(data, PRNGKeyArray):
        raise TypeError("fold_in: argument 'data' must be an integer, got a PRNG key")
    if dtypes.is_python_scalar(data):
        if isinstance(data, int) and not 0 <= data < 2 ** 32:
            raise OverflowError(f"fold_in: Python integer {data} out of bounds for uint32")
        return Array(np.asarray(data).astype(np.uint32))
    aval = core.get_aval(data)
    if aval.ndim:
        raise TypeError("fold_in accepts a scalar, but was given an array of shape "
                        f"{aval.shape} != (). Use vmap for batching.")
    if isinstance(data, core.Tracer):
        return data if aval.dtype == dtypes.uint32 else \
            lax.convert_element_type(data, dtypes.uint32)
    return Array(np.asarray(data).astype(np.uint32))  # a concrete scalar: wraps mod 2**32


def fold_in(key: Any, data: Any) -> Any:
    """Folds ``data`` into a PRNG key, giving a new key.

    Args:
      key: a PRNG key (typed or raw).
      data: a 32-bit integer scalar (other integers wrap modulo 2**32).

    Returns:
      The new key, of the kind ``key`` is: the Threefry hash of ``key`` over the counter
      (0, data), which is also ``split(key, n)[data]``.
    """
    keys, typed = check_key("fold_in", key)
    return like_input(typed, random_fold_in(keys, _message(data)))


def split2(keys: Any) -> tuple[Any, Any]:
    """The two keys of ``split(key)`` as separate key data (with the partitionable threefry,
    ``split(k, n)[i]`` is ``fold_in(k, i)``, which needs no slicing)."""
    if not config.jax_threefry_partitionable:
        both = random_split(keys, (2,))
        axis = core.get_aval(both).ndim - 2
        return tuple(lax.index_in_dim(both, i, axis, keepdims=False) for i in (0, 1))
    return tuple(random_fold_in(keys, np.uint32(i)) for i in (0, 1))


def bits(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Uniform random bits as unsigned integers.

    Args:
      key: a PRNG key (typed or raw).
      shape: the result shape. Default ().
      dtype: an unsigned integer dtype; default uint32.

    Returns:
      An array of ``shape`` and ``dtype``: for element i, the Threefry pair (y0, y1) of counter
      (i >> 32, i & 0xffffffff) gives y0 ^ y1 (truncated below 32 bits; y0 << 32 | y1 for 64).
    """
    data, _ = check_key("bits", key)
    dtype = user_dtype("bits", dtypes.uint32 if dtype is None else dtype)
    if dtype.kind != "u":
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    return random_bits(data, dtype.itemsize * 8, canonicalize_shape("bits", shape))
