"""The Threefry-2x32 counter-based generator and JAX's key-level random primitives.

jax.lax has no public random functions, so nothing here is star-exported (``__all__`` is
empty): these binders are the primitive-level API that ``pullback.random`` is written in.
Key data is raw uint32[..., 2] (a batch of threefry keys); Python ints become uint32 scalars.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..primitives.random_bits import (random_bits_p, random_fold_in_p, random_seed_p,
                                      random_uniform_range_p,
                                      random_split_p, threefry2x32_p)
from ..tracer.array import Array
from ._operands import ArrayLike

__all__: list[str] = []


def _u32(x: Any) -> Any:
    # Python ints are words of the hash, not weakly typed int32 values
    if isinstance(x, int) and not isinstance(x, bool):
        return Array(np.asarray(x, np.uint32))
    return x


def threefry2x32(key1: ArrayLike, key2: ArrayLike, x1: ArrayLike, x2: ArrayLike) -> list[Array]:
    """Threefry-2x32 (20 rounds) of the counter words (x1, x2) under the key (key1, key2).

    Args:
      key1, key2, x1, x2: uint32 arrays; 0-d operands broadcast, the others share one rank
        and broadcast along size-1 dimensions (JAX's rule for this primitive).

    Returns:
      The two output words, uint32 arrays of the broadcast shape.
    """
    return threefry2x32_p.bind(*(_u32(x) for x in (key1, key2, x1, x2)))


def random_seed(seeds: ArrayLike) -> Array:
    """Threefry key data uint32[*seeds.shape, 2] from integer seeds: (high, low) words of
    64-bit seeds, (0, seed mod 2**32) for narrower ones."""
    return random_seed_p.bind(seeds)


def random_bits(keys: ArrayLike, bit_width: int, shape: Sequence[int]) -> Array:
    """Uniform unsigned ints of ``bit_width`` bits, of shape ``keys.shape[:-1] + shape``."""
    return random_bits_p.bind(keys, bit_width=int(bit_width), shape=tuple(shape))


def random_split(keys: ArrayLike, shape: Sequence[int]) -> Array:
    """New keys, uint32[*keys.shape[:-1], *shape, 2], from each key of ``keys``."""
    return random_split_p.bind(keys, shape=tuple(shape))


def random_fold_in(keys: ArrayLike, msgs: ArrayLike) -> Array:
    """Each key with a uint32 message folded in (``msgs`` broadcasts to the batch shape)."""
    return random_fold_in_p.bind(keys, _u32(msgs))


def random_uniform_range(u: ArrayLike, minval: ArrayLike, maxval: ArrayLike) -> Array:
    """``max(minval, u * (maxval - minval) + minval)`` rounded as XLA's CPU backend rounds
    JAX's uniform (a fused multiply-add for float32/float64 and, via float32, float16)."""
    return random_uniform_range_p.bind(u, minval, maxval)
