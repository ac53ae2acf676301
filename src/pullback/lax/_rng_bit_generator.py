"""``lax.rng_bit_generator`` with XLA's algorithms (xla/hlo/builder/lib/prng.cc and the
RngBitGenerator expander), bit for bit: the uint32[4] key is the u64 pair (key, counter);
Philox-4x32 (10 rounds, the CPU default) runs the 128-bit counter (counter, key) and returns
its outputs round-robin; ThreeFry-2x32 (20 rounds, the ``threefry2x32`` primitive) runs the
u64 counter over half the output and concatenates the two words along a split dimension.
Narrow dtypes keep the low bits of uint32 outputs; the new key advances the counter.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..tracer import core, dtypes
from ._composites import RandomAlgorithm, mulhi
from ._conversion import convert_element_type
from ._elementwise import add, bitwise_and, bitwise_or, bitwise_xor, lt, mul, shift_left
from ._movement import (broadcast_in_dim, concatenate, full, iota, reshape, slice,
                        slice_in_dim)
from ._operands import scalars_to
from ._random_bits import threefry2x32

__all__ = ["rng_bit_generator"]

_U32 = np.dtype(np.uint32)


def _c(x: Any, v: int) -> Any:
    return full(core.get_aval(x).shape, np.uint32(v & 0xFFFFFFFF), _U32)


def _add64(lo: Any, hi: Any, n_lo: Any) -> tuple[Any, Any]:
    """(lo, hi) + n_lo as 64-bit words (n_lo < 2**32), with the carry."""
    new_lo = add(lo, n_lo)
    carry = convert_element_type(lt(new_lo, lo), _U32)
    return new_lo, add(hi, carry)


def _philox(x: list, k0: Any, k1: Any) -> list:
    ka, kb = _c(x[0], 0x9E3779B9), _c(x[0], 0xBB67AE85)
    ma, mb = _c(x[0], 0xD2511F53), _c(x[0], 0xCD9E8D57)
    for _ in range(10):
        hi0, lo0 = mulhi(x[0], ma), mul(x[0], ma)
        hi1, lo1 = mulhi(x[2], mb), mul(x[2], mb)
        x = [bitwise_xor(bitwise_xor(hi1, x[1]), k0), lo1,
             bitwise_xor(bitwise_xor(hi0, x[3]), k1), lo0]
        k0, k1 = add(k0, ka), add(k1, kb)
    return x


def _philox_bits(words: list, n32: int) -> tuple[list, Any, Any]:
    """The 4 output words of ceil(n32 / 4) Philox blocks, and the new counter words."""
    k_lo, k_hi, c_lo, c_hi = words
    nv = -(-n32 // 4)
    i = iota(_U32, nv)
    b = lambda w: broadcast_in_dim(w, (nv,), ())  # noqa: E731
    lo_lo, lo_hi = _add64(b(c_lo), b(c_hi), i)
    # a carry out of the counter's low u64 runs into its high u64 (the key words)
    # (adding i < 2**32 wraps the 64-bit value exactly when its high word ends up smaller)
    carry = convert_element_type(lt(lo_hi, b(c_hi)), _U32)
    hi_lo, hi_hi = _add64(b(k_lo), b(k_hi), carry)
    out = _philox([lo_lo, lo_hi, hi_lo, hi_hi], b(k_lo), b(k_hi))
    n_lo, n_hi = _add64(c_lo, c_hi, full((), np.uint32(nv), _U32))
    return out, n_lo, n_hi


def _split_halves(shape: tuple[int, ...]) -> tuple[tuple, int]:
    """XLA's SplitShapeIntoHalves: the half shape (split dimension halved, rounded up, then
    a new dimension of 1) and the split dimension (-1 for a scalar)."""
    if not shape:
        return (1,), -1
    split = next((i for i, d in enumerate(shape) if d % 2 == 0), -1)
    if split == -1:
        split = max(range(len(shape)), key=lambda i: (shape[i], -i))
    half = []
    for i, d in enumerate(shape):
        half += [-(-d // 2), 1] if i == split else [d]
    return tuple(half), split


def _threefry32(words: list, shape: tuple[int, ...]) -> tuple[Any, Any, Any]:
    k_lo, k_hi, c_lo, c_hi = words
    half, split = _split_halves(shape)
    m = math.prod(half)
    idx = iota(_U32, m)
    b = lambda w: broadcast_in_dim(w, (m,), ())  # noqa: E731
    in_lo, in_hi = _add64(b(c_lo), b(c_hi), idx)
    x0, x1 = threefry2x32(b(k_lo), b(k_hi), in_lo, in_hi)
    n_lo, n_hi = _add64(c_lo, c_hi, full((), np.uint32(m), _U32))
    if split == -1:
        return reshape(slice_in_dim(x0, 0, 1), ()), n_lo, n_hi
    x0, x1 = reshape(x0, half), reshape(x1, half)
    both = concatenate([x0, x1], split + 1)
    dims = list(shape)
    dims[split] = dims[split] + dims[split] % 2
    out = reshape(both, tuple(dims))
    if tuple(dims) != tuple(shape):
        out = slice(out, (0,) * len(shape), tuple(shape))
    return out, n_lo, n_hi


def _threefry64(words: list, shape: tuple[int, ...]) -> tuple[Any, Any, Any]:
    k_lo, k_hi, c_lo, c_hi = words
    m = math.prod(shape)
    b = lambda w: broadcast_in_dim(w, (m,), ())  # noqa: E731
    in_lo, in_hi = _add64(b(c_lo), b(c_hi), iota(_U32, m))
    x0, x1 = threefry2x32(b(k_lo), b(k_hi), in_lo, in_hi)
    n_lo, n_hi = _add64(c_lo, c_hi, full((), np.uint32(m), _U32))
    return reshape(_u64(x0, x1), shape), n_lo, n_hi


def _u64(lo: Any, hi: Any) -> Any:
    u64 = np.dtype(np.uint64)
    h = convert_element_type(hi, u64)
    return bitwise_or(convert_element_type(lo, u64),
                      shift_left(h, full(core.get_aval(h).shape, np.uint64(32), u64)))


def rng_bit_generator(key: Any, shape: Sequence[int], dtype: Any = np.uint32,
                      algorithm: RandomAlgorithm = RandomAlgorithm.RNG_DEFAULT, *,
                      out_sharding: Any = None) -> tuple[Any, Any]:
    """Random bits of ``shape`` and ``dtype`` (an unsigned integer type) from the uint32[4]
    ``key``, and the key to use next, as XLA's RngBitGenerator on the CPU (RNG_DEFAULT is
    Philox there).

    Args:
      key: uint32[4]: (key, counter) as two 64-bit words.
      shape: the static output shape.
      dtype: uint8, uint16, uint32 or uint64 (uint64 needs x64).
      algorithm: RNG_DEFAULT, RNG_PHILOX or RNG_THREE_FRY.

    Returns:
      ``(new_key, bits)``.
    """
    (key,) = scalars_to((key,))
    kav = core.get_aval(key)
    if kav.shape != (4,) or kav.dtype != _U32:
        raise TypeError(f"rng_bit_generator: argument 'key' must be uint32[4], got "
                        f"{kav.dtype}{list(kav.shape)}")
    dt = dtypes.requested(dtype, "rng_bit_generator")
    if dt.kind != "u":
        raise TypeError(f"rng_bit_generator: argument 'dtype' must be an unsigned integer "
                        f"type, got {dt}")
    shape = tuple(int(d) for d in shape)
    alg = RandomAlgorithm(algorithm)
    words = [reshape(slice_in_dim(key, i, i + 1), ()) for i in range(4)]
    n = math.prod(shape)
    if alg == RandomAlgorithm.RNG_THREE_FRY:
        if dt.itemsize == 8:
            bits, n_lo, n_hi = _threefry64(words, shape)
        else:
            bits, n_lo, n_hi = _threefry32(words, shape)
    else:
        n32 = 2 * n if dt.itemsize == 8 else n
        out, n_lo, n_hi = _philox_bits(words, n32)
        nv = core.get_aval(out[0]).shape[0]
        if dt.itemsize == 8:  # u64 pairs (w0, w1) and (w2, w3), round-robin
            flat = reshape(concatenate([reshape(_u64(out[0], out[1]), (nv, 1)),
                                        reshape(_u64(out[2], out[3]), (nv, 1))], 1), (2 * nv,))
        else:
            flat = reshape(concatenate([reshape(w, (nv, 1)) for w in out], 1), (4 * nv,))
        bits = reshape(slice_in_dim(flat, 0, n), shape)
    if dt.itemsize < 4:  # the low bits of uint32 outputs
        bits = convert_element_type(bitwise_and(bits, _c(bits, (1 << (8 * dt.itemsize)) - 1)),
                                    dt)
    new_key = concatenate([reshape(w, (1,)) for w in (words[0], words[1], n_lo, n_hi)], 0)
    return new_key, bits
