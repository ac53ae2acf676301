"""The Threefry-2x32 counter-based generator and JAX's key-level random primitives.

jax.lax has no public random functions, so nothing here is star-exported (``__all__`` is
empty): these binders are the primitive-level API that ``pullback.random`` is written in.
Key data is raw uint32[..., 2] (a batch of threefry keys); Python ints become uint32 scalars.

``random_bits`` and ``random_split`` follow ``jax_threefry_partitionable``: True (the default)
binds the primitives (their counters are each output's index); False composes JAX's original
scheme from the ``threefry2x32`` primitive, bit for bit (``_original_*`` below). ``fold_in`` is
the same in both.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..config import config
from ..primitives.random_bits import (random_bits_p, random_fold_in_p, random_seed_p,
                                      random_uniform_range_p,
                                      random_split_p, threefry2x32_p)
from ..tracer import core, dtypes
from ..tracer.array import Array
from ._conversion import convert_element_type
from ._elementwise import add, bitwise_and, bitwise_or, shift_left, shift_right_logical
from ._movement import broadcast_in_dim, concatenate, iota, reshape, slice_in_dim
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
    if not config.jax_threefry_partitionable:
        return _original_bits(keys, int(bit_width), tuple(shape))
    return random_bits_p.bind(keys, bit_width=int(bit_width), shape=tuple(shape))


def random_split(keys: ArrayLike, shape: Sequence[int]) -> Array:
    """New keys, uint32[*keys.shape[:-1], *shape, 2], from each key of ``keys``."""
    if not config.jax_threefry_partitionable:
        return _original_split(keys, tuple(shape))
    return random_split_p.bind(keys, shape=tuple(shape))


# ---- jax_threefry_partitionable=False: JAX's original scheme ----
#
# threefry_2x32(key, iota(n)) hashes the counters pairwise as (i, i + ceil(n/2)) for
# i < ceil(n/2) (an odd n pads the second half with one 0) and returns the first n words of
# concat(y0, y1). split(key, shape) takes 2 * size such words as the keys' (hi, lo) pairs;
# bits(key, w, shape) takes ceil(w * size / 32) words: 32 bits each, 64 as (first half << 32)
# | second half, 8 and 16 bits as the little-endian parts of each word.

_MAX_WORDS = 2 ** 32 - 1  # JAX splits longer draws into blocks under split keys


def _original_words(keys: ArrayLike, n: int) -> Array:
    """uint32[*batch, n]: threefry_2x32 of each key of ``keys`` over the counters 0..n-1."""
    aval = core.get_aval(keys)
    random_bits_p.rule("abstract_eval")(aval, bit_width=32, shape=(n,))  # JAX's key checks
    batch = aval.shape[:-1]
    if n > _MAX_WORDS:
        raise ValueError(f"random_bits: with jax_threefry_partitionable=False a draw takes "
                         f"{n} 32-bit words; more than {_MAX_WORDS} are not supported (JAX "
                         "splits the key into blocks); set jax_threefry_partitionable=True")
    if n == 0:
        return broadcast_in_dim(Array(np.zeros((), np.uint32)), batch + (0,), ())
    half = (n + 1) // 2
    nb = len(batch)
    x0 = iota(dtypes.uint32, half)
    x1 = add(iota(dtypes.uint32, n - half), Array(np.asarray(half, np.uint32)))
    if n % 2:
        x1 = concatenate([x1, Array(np.zeros(1, np.uint32))], 0)
    if nb:
        x0, x1 = (broadcast_in_dim(x, (1,) * nb + (half,), (nb,)) for x in (x0, x1))
    k0, k1 = (reshape(slice_in_dim(keys, i, i + 1, axis=nb), batch + (1,) * (nb > 0))
              for i in (0, 1))
    y0, y1 = threefry2x32_p.bind(k0, k1, x0, x1)
    out = concatenate([y0, y1], nb)
    return slice_in_dim(out, 0, n, axis=nb) if n % 2 else out


def _original_split(keys: ArrayLike, shape: tuple[int, ...]) -> Array:
    batch = core.get_aval(keys).shape[:-1]
    words = _original_words(keys, 2 * math.prod(shape))
    return reshape(words, batch + shape + (2,))


def _original_bits(keys: ArrayLike, bit_width: int, shape: tuple[int, ...]) -> Array:
    aval = core.get_aval(keys)
    random_bits_p.rule("abstract_eval")(aval, bit_width=bit_width, shape=shape)
    batch, nb, size = aval.shape[:-1], len(aval.shape) - 1, math.prod(shape)
    n = -(-bit_width * size // 32)
    words = _original_words(keys, n)
    dtype = np.dtype(f"uint{bit_width}")
    if bit_width == 32:
        return reshape(words, batch + shape)
    if bit_width == 64:
        hi, lo = (convert_element_type(slice_in_dim(words, a, a + size, axis=nb), dtype)
                  for a in (0, size))
        return reshape(bitwise_or(shift_left(hi, Array(np.asarray(32, dtype))), lo),
                       batch + shape)
    per = 32 // bit_width  # parts of each word, lowest bits first
    spread = broadcast_in_dim(words, batch + (n, per), tuple(range(nb + 1)))
    shifts = Array((np.arange(per, dtype=np.uint32) * np.uint32(bit_width)))
    parts = bitwise_and(shift_right_logical(spread, broadcast_in_dim(shifts, batch + (n, per),
                                                                     (nb + 1,))),
                        Array(np.asarray(np.iinfo(dtype).max, np.uint32)))
    flat = convert_element_type(reshape(parts, batch + (n * per,)), dtype)
    return reshape(slice_in_dim(flat, 0, size, axis=nb), batch + shape)


def random_fold_in(keys: ArrayLike, msgs: ArrayLike) -> Array:
    """Each key with a uint32 message folded in (``msgs`` broadcasts to the batch shape)."""
    return random_fold_in_p.bind(keys, _u32(msgs))


def random_uniform_range(u: ArrayLike, minval: ArrayLike, maxval: ArrayLike) -> Array:
    """``max(minval, u * (maxval - minval) + minval)`` rounded as XLA's CPU backend rounds
    JAX's uniform (a fused multiply-add for float32/float64 and, via float32, float16)."""
    return random_uniform_range_p.bind(u, minval, maxval)
