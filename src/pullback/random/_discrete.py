"""``randint``, ``bernoulli`` and ``categorical``."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .. import lax
from ..lax._random_bits import random_bits
from ..tracer import dtypes
from ..tracer.shapes import canonicalize_axis
from ._checks import canonicalize_shape, check_broadcast, shape_or_broadcast, user_dtype
from ._continuous import check_gumbel_mode, gumbel_from_keys
from ._derive import split2
from ._keys import check_key
from ._ops import UINT, as_value, broadcast, const, finfo, index0, is_python_scalar, shape_of
from ._uniform import uniform_from_keys


# ---- randint ----

def _int_param(x: Any, arg: str, wide: bool) -> Any:
    """An integer bound as JAX sees it: Python ints are int32 (int64 when sampling a 64-bit
    dtype, as in JAX's x64 mode) and must fit; floats are truncated to int32."""
    if isinstance(x, (bool, int)) and not isinstance(x, np.generic):
        dt = dtypes.int64 if wide else dtypes.int32
        info = np.iinfo(dt)
        if not info.min <= x <= info.max:
            raise OverflowError(f"randint: argument '{arg}' is the Python int {x}, which "
                                f"overflows {dt}")
        return const(x, dt)
    x = as_value(x)
    if not dtypes.is_integer(x.dtype):
        x = lax.convert_element_type(x, dtypes.int32)
    return x


def _convert_and_clip(x: Any, dtype: np.dtype) -> Any:
    """``x`` converted to integer ``dtype``, clipped to its range instead of wrapping."""
    src = np.iinfo(x.dtype)
    dst = np.iinfo(dtype)
    lo, hi = max(src.min, dst.min), min(src.max, dst.max)
    clipped = lax.min(const(hi, x.dtype), lax.max(const(lo, x.dtype), x))
    return clipped if x.dtype == dtype else lax.convert_element_type(clipped, dtype)


def _randint(keys: Any, shape: tuple[int, ...], minval: Any, maxval: Any, dtype: np.dtype) -> Any:
    # two draws of nbits per value reduce the modulo bias of a non-power-of-2 span
    top = const(np.iinfo(dtype).max, dtype)
    top = top if maxval.dtype == dtype else _convert_and_clip(top, maxval.dtype)
    maxval_out_of_range = lax.gt(maxval, top)
    minval = broadcast(_convert_and_clip(minval, dtype), shape)
    maxval = broadcast(_convert_and_clip(maxval, dtype), shape)
    maxval_out_of_range = broadcast(maxval_out_of_range, shape)
    nbits = np.iinfo(dtype).bits
    k1, k2 = split2(keys)
    higher, lower = random_bits(k1, nbits, shape), random_bits(k2, nbits, shape)
    udt = UINT[nbits]
    span = lax.convert_element_type(lax.sub(maxval, minval), udt)
    one = const(1, udt)
    span = lax.select_n(lax.le(maxval, minval), span, broadcast(one, shape_of(span), keep_scalar=False))
    # maxval past the dtype's range (e.g. 256 for uint8) means a span one larger
    wider = lax.select_n(lax.gt(maxval, minval), span, lax.add(span, one))
    span = lax.select_n(maxval_out_of_range, span, wider)
    multiplier = lax.rem(const(2 ** (nbits // 2), udt), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(higher, span), multiplier), lax.rem(lower, span))
    offset = lax.rem(offset, span)
    return lax.add(minval, lax.convert_element_type(offset, dtype))


def randint(key: Any, shape: Sequence[int], minval: Any, maxval: Any, dtype: Any = None) -> Any:
    """Uniform random integers in [minval, maxval).

    Args:
      key: a PRNG key (typed or raw).
      shape: the result shape.
      minval: the inclusive lower bound(s), broadcast-compatible with ``shape``.
      maxval: the exclusive upper bound(s); where ``maxval <= minval`` the result is minval.
      dtype: an integer dtype (int32 by default). Types below 32 bits are sampled in int32.

    Returns:
      An array of ``shape`` and ``dtype``, computed from two ``nbits``-wide draws per value
      with JAX's modular reduction (slightly biased when the span is not a power of 2).
    """
    keys, _ = check_key("randint", key)
    dtype = user_dtype("randint", int if dtype is None else dtype)
    if not dtypes.is_integer(dtype):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    shape = canonicalize_shape("randint", shape)
    check_broadcast("randint", shape, shape_of(minval), shape_of(maxval))
    info = np.iinfo(dtype)
    wide = info.bits == 64
    minval, maxval = _int_param(minval, "minval", wide), _int_param(maxval, "maxval", wide)
    if info.bits >= 32:
        return _randint(keys, shape, minval, maxval, dtype)
    # narrow types: sample in int32 between the clipped bounds, then narrow
    i32 = dtypes.int32
    as32 = lambda v: v if v.dtype == i32 else lax.convert_element_type(v, i32)
    clip = lambda v, lo, hi: lax.min(const(hi, i32), lax.max(const(lo, i32), as32(v)))
    minval = clip(minval, info.min, info.max)
    maxval = clip(maxval, info.min, info.max + 1)
    return lax.convert_element_type(_randint(keys, shape, minval, maxval, i32), dtype)


# ---- bernoulli ----

def bernoulli(key: Any, p: Any = 0.5, shape: Sequence[int] | None = None,
              mode: str = "low") -> Any:
    """Bernoulli random booleans, True with probability ``p``.

    Args:
      key: a PRNG key (typed or raw).
      p: a float or float array of probabilities, broadcast-compatible with ``shape``.
      shape: the result shape; by default ``p``'s shape.
      mode: "low" (default) compares one uniform with ``p``; "high" uses two to resolve
        probabilities below ~1e-7 in float32.

    Returns:
      A boolean array: ``uniform < p``.
    """
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    keys, _ = check_key("bernoulli", key)
    if is_python_scalar(p) and isinstance(p, float):
        p = const(np.float32(p), dtypes.float32)
    p = as_value(p)
    if not dtypes.is_float(p.dtype):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {p.dtype}.")
    shape = shape_or_broadcast("bernoulli", shape, shape_of(p))
    p = broadcast(p, shape)
    if mode == "low":
        return lax.lt(uniform_from_keys(keys, shape, p.dtype, 0.0, 1.0), p)
    both = uniform_from_keys(keys, (2,) + shape, p.dtype, 0.0, 1.0)
    u1 = index0(both, 0)
    u2 = lax.mul(index0(both, 1), const(2.0 ** -finfo(p.dtype).nmant, p.dtype))
    return lax.lt(u2, lax.sub(p, u1))


# ---- categorical ----

def categorical(key: Any, logits: Any, axis: int = -1, shape: Sequence[int] | None = None,
                replace: bool = True, mode: str | None = None) -> Any:
    """Samples from categorical distributions given by unnormalized log-probabilities.

    Args:
      key: a PRNG key (typed or raw).
      logits: log-probabilities (up to a constant) along ``axis``.
      axis: the axis of the categories. Default -1.
      shape: the result shape, broadcast-compatible with the batch shape (``logits.shape``
        without ``axis``); by default that batch shape.
      replace: True samples with replacement (Gumbel-max), False without (Gumbel-top-k).
      mode: the gumbel sampler's mode ("low" by default, or "high").

    Returns:
      category indices of ``shape``: the default int with replacement (int64 with x64),
      int32 without (JAX's dtypes).
    """
    keys, _ = check_key("categorical", key)
    logits = as_value(logits)
    dtype = logits.dtype
    if not dtypes.is_float(dtype):
        raise ValueError(f"dtype argument to `gumbel` must be a float dtype, got {dtype}")
    mode = check_gumbel_mode(mode, dtype)
    axis = canonicalize_axis(axis, logits.ndim, "categorical")
    batch_shape = logits.shape[:axis] + logits.shape[axis + 1:]
    shape = shape_or_broadcast("categorical", shape, batch_shape)
    prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        logits_shape = list(shape[len(prefix):])
        logits_shape.insert(axis, logits.shape[axis])
        full = prefix + tuple(logits_shape)
        g = gumbel_from_keys(keys, full, dtype, mode)
        dims = tuple(range(len(prefix), len(full)))
        return lax.argmax(lax.add(g, lax.broadcast_in_dim(logits, full, dims)),
                          len(prefix) + axis, dtypes.DEFAULT_INT)
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number of "
                         f"categories ({logits.shape[axis]}).")
    perturbed = lax.add(logits, gumbel_from_keys(keys, logits.shape, dtype, mode))
    last = tuple(i for i in range(logits.ndim) if i != axis) + (axis,)
    _, indices = lax.top_k(lax.transpose(perturbed, last), k)
    nd = indices.ndim
    return lax.reshape(indices, shape, (nd - 1,) + tuple(range(nd - 1)))
