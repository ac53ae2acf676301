"""The Threefry-2x32 counter-based generator (backends/cpu/csrc/random.c).

``threefry2x32`` is the hash itself (JAX's primitive of that name). The key-level primitives
below it carry JAX's names too (``random_seed``, ``random_bits``, ``random_split``,
``random_fold_in``, as in JAX's Jaxprs) and act on raw key data, uint32[..., 2]: a batch of
keys. Their results are those of JAX's default, partitionable threefry (``jax_threefry_
partitionable=True``, JAX >= 0.5), where the counter of output element i is the 64-bit
row-major index i split into (high word, low word):

- ``random_split(k, shape)[i] = threefry2x32(k, (hi(i), lo(i)))`` (both words),
- ``random_bits(k, 32, shape)[i] = y0 ^ y1`` of that pair (8/16 bits: truncated; 64 bits:
  ``y0 << 32 | y1``),
- ``random_fold_in(k, m) = threefry2x32(k, (0, m))``,
- ``random_seed(s) = (s >> 32, s & 0xffffffff)`` for 64-bit seeds, ``(0, s mod 2**32)`` else.

Their CPU kernels generate the counters in registers; their references compose the NumPy
Threefry reference with explicit counters.

Transformations: every result here is integer-valued, so none has a derivative (the JVP trace
gives float0 zero tangents); under vmap, a batch of keys is just more leading key dimensions,
and the counters depend only on the position within ``shape``, so a vmapped draw is
bit-identical to a loop of draws. ``random_uniform_range`` is differentiable in all its float
operands (in ``uniform`` only minval and maxval carry tangents: the bits are constants).
"""
from __future__ import annotations

import math

import numpy as np

from ..tracer import dtypes
from ..tracer.array import Array
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive, get_aval
from ..tracer.shapes import check_shape
from .conversion import convert_element_type_p
from .elementwise import ge_p, mul_p, sub_p
from .movement import broadcast_in_dim_p
from .rules import (INTEGER_OUTPUT, NONLINEAR, Kernel, batch_size, broadcast_batcher,
                    check_examples, elementwise_jvp, move_bdim)

_UINT = {8: dtypes.uint8, 16: dtypes.uint16, 32: dtypes.uint32, 64: dtypes.uint64}


def _no_params(*avals, **params) -> bytes:
    """The kernels of csrc/random.c take no params: their outputs' shapes and dtypes say all."""
    return b""


def _declare(name: str, abstract_eval, reference, multiple_results: bool = False) -> Primitive:
    """A key-level primitive run by the kernel of its name (csrc/random.c)."""
    p = Primitive(name, multiple_results=multiple_results)
    p.abstract_eval = abstract_eval
    p.cpu = Kernel(p, name, _no_params)
    p.reference = reference
    p.jvp = INTEGER_OUTPUT
    p.transpose = NONLINEAR
    p.batch = _leading_batcher(p, trailing_words=True)
    return p


def _leading_batcher(prim: Primitive, trailing_words: bool):
    """The batching rule of a one-operand primitive whose operand's leading dimensions (all,
    or all but the trailing key words) are a batch that reappears in place as the result's
    leading dimensions: the vmapped dimension is one more of them, kept where it is unless it
    sits in the key-word position."""
    def rule(vals, dims, **params):
        check_examples(prim, vals, dims, **params)
        (x,), (d,) = vals, dims
        aval = get_aval(x)
        if trailing_words and d == aval.ndim - 1:
            x, d = move_bdim(x, d, 0, aval.shape[d]), 0
        return prim.bind(x, **params), d
    return rule


# ---- the hash: NumPy reference ----

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def threefry2x32_reference(k0: np.ndarray, k1: np.ndarray, x0: np.ndarray,
                           x1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Threefry-2x32 with 20 rounds on broadcastable uint32 arrays, in NumPy."""
    u32 = np.uint32
    k0, k1, x0, x1 = (np.asarray(a, u32) for a in (k0, k1, x0, x1))
    ks = (k0, k1, k0 ^ k1 ^ u32(0x1BD11BDA))
    with np.errstate(over="ignore"):  # uint32 arithmetic wraps, as intended
        x0, x1 = x0 + ks[0], x1 + ks[1]
        for group in range(5):
            for r in _ROTATIONS[group % 2]:
                x0 = x0 + x1
                x1 = (x1 << u32(r)) | (x1 >> u32(32 - r))
                x1 = x1 ^ x0
            x0 = x0 + ks[(group + 1) % 3]
            x1 = x1 + ks[(group + 2) % 3] + u32(group + 1)
    return np.asarray(x0, u32), np.asarray(x1, u32)


# ---- threefry2x32(key1, key2, x1, x2) ----

_TF_ARGS = ("key1", "key2", "x1", "x2")


def _threefry_shape(avals) -> tuple[int, ...]:
    """JAX's rule: 0-d operands broadcast; the others share a rank and broadcast size-1 dims."""
    ranked = [(n, a) for n, a in zip(_TF_ARGS, avals) if a.ndim]
    if not ranked:
        return ()
    rank = ranked[0][1].ndim
    for n, a in ranked:
        if a.ndim != rank:
            raise TypeError(f"threefry2x32: argument '{n}' has shape {a.shape}, but operands must "
                            "be scalars or share one rank: got "
                            f"{', '.join(str(x.shape) for x in avals)}")
    out = []
    for d in range(rank):
        sizes = {a.shape[d] for _, a in ranked} - {1}
        if len(sizes) > 1:
            raise TypeError("threefry2x32: shapes "
                            f"{', '.join(str(a.shape) for a in avals)} cannot be broadcast "
                            f"together (dimension {d})")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _threefry_aval(*avals: ShapedArray) -> list[ShapedArray]:
    for n, a in zip(_TF_ARGS, avals):
        if a.dtype != dtypes.uint32:
            raise TypeError(f"threefry2x32: argument '{n}' must have dtype uint32, got {a.dtype}")
    out = ShapedArray(_threefry_shape(avals), dtypes.uint32)
    return [out, out]


def _threefry_ref(*xs: np.ndarray) -> list[np.ndarray]:
    shape = np.broadcast_shapes(*(x.shape for x in xs))
    return [np.broadcast_to(y, shape).copy() for y in threefry2x32_reference(*xs)]


threefry2x32_p = _declare("threefry2x32", _threefry_aval, _threefry_ref,
                          multiple_results=True)  # (the kernel broadcasts its operands)
# 0-d operands broadcast and the others share one rank, as for element-wise ops
threefry2x32_p.batch = broadcast_batcher(threefry2x32_p)


# ---- key data checks ----

def check_keys(name: str, keys: ShapedArray) -> tuple[int, ...]:
    """The batch shape of raw key data ``keys`` (uint32[..., 2]), or a TypeError naming op."""
    if keys.dtype != dtypes.uint32:
        raise TypeError(f"{name}: argument 'keys' must be threefry key data of dtype uint32, got "
                        f"{keys.dtype}")
    if keys.ndim < 1 or keys.shape[-1] != 2:
        raise TypeError(f"{name}: argument 'keys' must be threefry key data of shape (..., 2), "
                        f"got shape {keys.shape}")
    return keys.shape[:-1]


def _counters(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The partitionable counters of an output of ``shape``: its row-major index as (hi, lo)."""
    i = np.arange(math.prod(shape), dtype=np.uint64).reshape(shape)
    return (i >> np.uint64(32)).astype(np.uint32), i.astype(np.uint32)


def _per_key(keys: np.ndarray, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Key words broadcast against an output of batch + ``shape``."""
    expand = keys.reshape(keys.shape[:-1] + (1,) * len(shape) + (2,))
    return expand[..., 0], expand[..., 1]


# ---- random_seed ----

def _seed_aval(seeds: ShapedArray) -> ShapedArray:
    if not dtypes.is_integer(seeds.dtype):
        raise TypeError(f"random_seed: argument 'seeds' must be an integer array, got "
                        f"{seeds.dtype}")
    return ShapedArray(seeds.shape + (2,), dtypes.uint32)


def _seed_ref(seeds: np.ndarray) -> np.ndarray:
    wide = seeds.astype(np.int64 if seeds.dtype.kind == "i" else np.uint64).view(np.uint64)
    hi = (wide >> np.uint64(32)).astype(np.uint32) if seeds.dtype.itemsize == 8 else \
        np.zeros(seeds.shape, np.uint32)
    return np.stack([hi, wide.astype(np.uint32)], axis=-1)


random_seed_p = _declare("random_seed", _seed_aval, _seed_ref)
random_seed_p.batch = _leading_batcher(random_seed_p, trailing_words=False)  # any seed shape


# ---- random_bits ----

def _bits_aval(keys: ShapedArray, *, bit_width: int, shape: tuple[int, ...]) -> ShapedArray:
    batch = check_keys("random_bits", keys)
    if bit_width not in _UINT:
        raise TypeError(f"random_bits: argument 'bit_width' must be 8, 16, 32 or 64, got "
                        f"{bit_width!r}")
    shape = check_shape(shape, "random_bits")
    return ShapedArray(batch + shape, _UINT[bit_width])


def _bits_ref(keys: np.ndarray, *, bit_width: int, shape: tuple[int, ...]) -> np.ndarray:
    y0, y1 = threefry2x32_reference(*_per_key(keys, shape), *_counters(shape))
    if bit_width == 64:
        return (y0.astype(np.uint64) << np.uint64(32)) | y1.astype(np.uint64)
    return (y0 ^ y1).astype(_UINT[bit_width])


random_bits_p = _declare("random_bits", _bits_aval, _bits_ref)  # (the output's dtype: the width)


# ---- random_split ----

def _split_aval(keys: ShapedArray, *, shape: tuple[int, ...]) -> ShapedArray:
    batch = check_keys("random_split", keys)
    return ShapedArray(batch + check_shape(shape, "random_split") + (2,), dtypes.uint32)


def _split_ref(keys: np.ndarray, *, shape: tuple[int, ...]) -> np.ndarray:
    return np.stack(threefry2x32_reference(*_per_key(keys, shape), *_counters(shape)), axis=-1)


random_split_p = _declare("random_split", _split_aval, _split_ref)


# ---- random_fold_in ----

def _fold_in_aval(keys: ShapedArray, msgs: ShapedArray) -> ShapedArray:
    batch = check_keys("random_fold_in", keys)
    if msgs.dtype != dtypes.uint32:
        raise TypeError(f"random_fold_in: argument 'msgs' must have dtype uint32, got {msgs.dtype}")
    if msgs.ndim and (msgs.ndim != len(batch) or
                      any(m not in (1, b) for m, b in zip(msgs.shape, batch))):
        raise TypeError(f"random_fold_in: argument 'msgs' has shape {msgs.shape}, which does not "
                        f"broadcast to the batch shape {batch} of 'keys'")
    return ShapedArray(keys.shape, dtypes.uint32)


def _fold_in_ref(keys: np.ndarray, msgs: np.ndarray) -> np.ndarray:
    return np.stack(threefry2x32_reference(keys[..., 0], keys[..., 1], np.uint32(0), msgs),
                    axis=-1)


def _fold_in_batch(vals, dims):
    check_examples(random_fold_in_p, vals, dims)
    (keys, msgs), (dk, dm) = vals, dims
    size = batch_size(vals, dims)
    nbatch = get_aval(keys).ndim - (dk is not None) - 1  # the example's batch of keys
    keys = move_bdim(keys, dk, 0, size)
    if dm is None and not get_aval(msgs).ndim:
        return random_fold_in_p.bind(keys, msgs), 0  # one message for every key
    msgs = move_bdim(msgs, dm, 0, size)
    if get_aval(msgs).ndim == 1 and nbatch:  # one message per lane: size-1 dims broadcast
        msgs = broadcast_in_dim_p.bind(msgs, shape=(size,) + (1,) * nbatch,
                                       broadcast_dimensions=(0,))
    return random_fold_in_p.bind(keys, msgs), 0


random_fold_in_p = _declare("random_fold_in", _fold_in_aval, _fold_in_ref)  # (msgs broadcast)
random_fold_in_p.batch = _fold_in_batch


# ---- random_uniform_range: unit uniforms to [minval, maxval) ----
#
# JAX's uniform computes max(minval, u * (maxval - minval) + minval) as four XLA ops, which
# XLA's CPU backend compiles with a fused multiply-add (float32, float64; float16 evaluated in
# float32) and per-op rounding (bfloat16). Composing pullback's separately rounded mul and add
# would differ in the last bits (many ulps near 0), so this fused primitive reproduces XLA's
# rounding exactly.

_RANGE_ARGS = ("u", "minval", "maxval")


def _range_aval(u: ShapedArray, lo: ShapedArray, hi: ShapedArray) -> ShapedArray:
    name = "random_uniform_range"
    if u.dtype not in (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64):
        raise TypeError(f"{name}: argument 'u' must be float16, bfloat16, float32 or float64, "
                        f"got {u.dtype}")
    for n, a in zip(_RANGE_ARGS[1:], (lo, hi)):
        if a.dtype != u.dtype:
            raise TypeError(f"{name}: argument '{n}' must have the dtype of 'u' ({u.dtype}), got "
                            f"{a.dtype}")
        if a.ndim and a.shape != u.shape:
            raise TypeError(f"{name}: argument '{n}' must have the shape of 'u' {u.shape} or be "
                            f"0-d, got {a.shape}")
    return ShapedArray(u.shape, u.dtype)


def _fma_rounded(a: np.ndarray, b: np.ndarray, c: np.ndarray, dt: np.dtype) -> np.ndarray:
    """a * b + c rounded once to float32 or float64, from exact rational arithmetic (the
    reference backend's oracle of a fused multiply-add; slow, for small test arrays)."""
    from fractions import Fraction
    flat = [np.asarray(f, np.float64).ravel().tolist() for f in np.broadcast_arrays(a, b, c)]
    out = []
    for x, y, z in zip(*flat):
        if not np.isfinite([x, y, z]).all():
            out.append(dt.type(x * y + z))
            continue
        exact = Fraction(x) * Fraction(y) + Fraction(z)
        near = dt.type(float(exact))  # within one unit of the correctly rounded value
        cands = [np.nextafter(near, dt.type(-np.inf)), near, np.nextafter(near, dt.type(np.inf))]
        best = min(cands, key=lambda v: (abs(Fraction(float(v)) - exact),
                                         int(np.asarray(v).view(f"u{dt.itemsize}")) & 1))
        out.append(best)
    return np.array(out, dt).reshape(np.broadcast_shapes(np.shape(a), np.shape(b), np.shape(c)))


def _range_ref(u: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    dt = u.dtype
    lo, hi = np.broadcast_to(lo, u.shape), np.broadcast_to(hi, u.shape)
    f32 = np.dtype(np.float32)
    with np.errstate(all="ignore"):
        if dt in (dtypes.float32, dtypes.float64):
            y = _fma_rounded(u, hi - lo, lo, dt)
        elif dt == dtypes.float16:  # one float32 FMA, then one rounding to float16
            span = (hi.astype(f32) - lo.astype(f32)).astype(dt)
            y = _fma_rounded(u, span, lo, f32).astype(dt)
        else:  # bfloat16: every operation rounds to bfloat16
            span = (hi.astype(f32) - lo.astype(f32)).astype(dt)
            prod = (u.astype(f32) * span.astype(f32)).astype(dt)
            y = (prod.astype(f32) + lo.astype(f32)).astype(dt)
    return np.where(np.isnan(lo) | np.isnan(y), np.nan, np.maximum(lo, y)).astype(dt)


# Derivatives: rounding never takes u * (maxval - minval) + minval below minval when
# maxval >= minval, so the result is that affine map there; when maxval < minval, every u > 0
# is clamped to minval. (At u = 0 both agree; d/du is taken from above, u being in [0, 1).)

def _affine(u, lo, hi):
    """1 where maxval >= minval (the result is the affine map), else 0, in u's dtype."""
    return convert_element_type_p.bind(ge_p.bind(hi, lo), new_dtype=get_aval(u).dtype,
                                       weak_type=False)


def _d_u(u, lo, hi, out):
    return mul_p.bind(sub_p.bind(hi, lo), _affine(u, lo, hi))


def _d_maxval(u, lo, hi, out):
    return mul_p.bind(u, _affine(u, lo, hi))


def _d_minval(u, lo, hi, out):
    return sub_p.bind(Array(np.ones((), get_aval(u).dtype)), _d_maxval(u, lo, hi, out))


def _range_batch(vals, dims):
    """u carries the shape (so it is always batched); minval and maxval are 0-d or u-shaped."""
    check_examples(random_uniform_range_p, vals, dims)
    size = batch_size(vals, dims)
    u_shape = get_aval(vals[0]).shape
    if dims[0] is not None:
        u_shape = u_shape[:dims[0]] + u_shape[dims[0] + 1:]
    out = [move_bdim(vals[0], dims[0], 0, size)]
    for v, d in zip(vals[1:], dims[1:]):
        if d is None and not get_aval(v).ndim:
            out.append(v)  # a 0-d bound shared by every lane
            continue
        v = move_bdim(v, d, 0, size)
        if get_aval(v).ndim == 1 and u_shape:  # a 0-d bound per lane: spread over the lane
            v = broadcast_in_dim_p.bind(v, shape=(size,) + u_shape, broadcast_dimensions=(0,))
        out.append(v)
    return random_uniform_range_p.bind(*out), 0


random_uniform_range_p = Primitive("random_uniform_range")
random_uniform_range_p.abstract_eval = _range_aval
random_uniform_range_p.cpu = Kernel(random_uniform_range_p, "random_uniform_range", _no_params)
random_uniform_range_p.reference = _range_ref
random_uniform_range_p.jvp = elementwise_jvp(random_uniform_range_p, _d_u, _d_minval, _d_maxval)
random_uniform_range_p.transpose = NONLINEAR
random_uniform_range_p.batch = _range_batch
