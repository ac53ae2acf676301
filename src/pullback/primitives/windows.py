"""unfold / fold: im2col and col2im (backends/cpu/csrc/unfold.c), with Nx's semantics.

``unfold`` extracts the sliding windows of the last K = len(kernel_size) dimensions:
(lead..., spatial...) becomes (lead..., prod(kernel_size), L). Row ``k`` of the result is the
kernel offset k (row-major over kernel_size), column ``l`` the window position (row-major over
the K window grids); the element is ``padded[..., pos * stride + offset * dilation]`` where
``padded`` has ``padding[i] = (low, high)`` zeros around spatial dimension i. Along dimension
i there are ``L_i = (size + low + high - dilation * (kernel - 1) - 1) // stride + 1`` windows.

``fold`` is unfold's transpose: (lead..., prod(kernel_size), L) becomes (lead...,
output_size...), each column added back at its window's positions (overlaps sum; padding
positions are dropped). So ``fold(unfold(x))`` is ``x`` times the number of windows covering
each position, and ``<unfold(x), y> == <x, fold(y)>``.
"""
from __future__ import annotations

import math
import struct

import numpy as np

from ..tracer import dtypes
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive, get_aval
from ..tracer.shapes import check_shape
from .rules import Kernel, linear_jvp, linear_transpose, move_bdim


def window_counts(op: str, size: tuple[int, ...], kernel_size, stride, dilation,
                  padding) -> tuple[int, ...]:
    """Checks a window geometry against spatial ``size`` and returns L_i per dimension."""
    K = len(kernel_size)
    if K == 0:
        raise ValueError(f"{op}: argument 'kernel_size' must not be empty")
    for arg, v in (("stride", stride), ("dilation", dilation), ("padding", padding)):
        if len(v) != K:
            raise ValueError(f"{op}: argument '{arg}' must have {K} entries (one per kernel "
                             f"dimension), got {v}")
    for arg, v in (("kernel_size", kernel_size), ("stride", stride), ("dilation", dilation)):
        if any(not isinstance(i, (int, np.integer)) or i < 1 for i in v):
            raise ValueError(f"{op}: argument '{arg}' must hold positive ints, got {v}")
    if any(len(p) != 2 or any(not isinstance(i, (int, np.integer)) or i < 0 for i in p)
           for p in padding):
        raise ValueError(f"{op}: argument 'padding' must hold (low, high) pairs of non-negative "
                         f"ints, got {padding}")
    counts = []
    for i, (n, k, s, d, (lo, hi)) in enumerate(zip(size, kernel_size, stride, dilation, padding)):
        span = n + lo + hi - d * (k - 1)
        if span < 1:
            raise ValueError(f"{op}: spatial dimension {i} has size {n} + padding ({lo}, {hi}), "
                             f"smaller than the dilated kernel extent {d * (k - 1) + 1}")
        counts.append((span - 1) // s + 1)
    return tuple(counts)


def _unfold_aval(x: ShapedArray, *, kernel_size, stride, dilation, padding) -> ShapedArray:
    K = len(kernel_size)
    if x.ndim < K:
        raise TypeError(f"unfold: argument 'operand' must have at least {K} dimensions (one per "
                        f"kernel dimension), got shape {x.shape}")
    counts = window_counts("unfold", x.shape[x.ndim - K:], kernel_size, stride, dilation, padding)
    shape = x.shape[:x.ndim - K] + (math.prod(kernel_size), math.prod(counts))
    return x.update(shape=shape)


def _fold_aval(x: ShapedArray, *, output_size, kernel_size, stride, dilation,
               padding) -> ShapedArray:
    size = check_shape(output_size, "fold", "output_size")
    if len(size) != len(kernel_size):
        raise ValueError(f"fold: argument 'output_size' must have {len(kernel_size)} entries (one "
                         f"per kernel dimension), got {size}")
    if x.dtype in dtypes.FLOAT8:
        raise TypeError(f"fold: argument 'operand' has dtype {x.dtype}; fold sums windows and "
                        "has no float8 arithmetic")
    counts = window_counts("fold", size, kernel_size, stride, dilation, padding)
    want = (math.prod(kernel_size), math.prod(counts))
    if x.ndim < 2 or x.shape[-2:] != want:
        raise TypeError(f"fold: argument 'operand' must have shape (..., {want[0]}, {want[1]}) "
                        f"for this geometry, got {x.shape}")
    return x.update(shape=x.shape[:-2] + size)


def _unpack(padding):
    return tuple(lo for lo, _ in padding), tuple(hi for _, hi in padding)


def _offsets(kernel_size):
    return np.ndindex(*kernel_size)


def _window_slices(offset, counts, stride, dilation):
    return tuple(slice(o * d, o * d + (n - 1) * s + 1, s)
                 for o, n, s, d in zip(offset, counts, stride, dilation))


def _unfold_ref(x, *, kernel_size, stride, dilation, padding):
    K = len(kernel_size)
    lead, size = x.shape[:x.ndim - K], x.shape[x.ndim - K:]
    counts = window_counts("unfold", size, kernel_size, stride, dilation, padding)
    padded = np.zeros(lead + tuple(n + lo + hi for n, (lo, hi) in zip(size, padding)), x.dtype)
    padded[(Ellipsis,) + tuple(slice(lo, lo + n) for n, (lo, _) in zip(size, padding))] = x
    rows = [padded[(Ellipsis,) + _window_slices(o, counts, stride, dilation)].reshape(
        lead + (math.prod(counts),)) for o in _offsets(kernel_size)]
    return np.stack(rows, axis=-2)


def _fold_ref(x, *, output_size, kernel_size, stride, dilation, padding):
    lead = x.shape[:-2]
    counts = window_counts("fold", output_size, kernel_size, stride, dilation, padding)
    padded = np.zeros(lead + tuple(n + lo + hi for n, (lo, hi) in zip(output_size, padding)),
                      x.dtype)
    for k, o in enumerate(_offsets(kernel_size)):
        region = (Ellipsis,) + _window_slices(o, counts, stride, dilation)
        padded[region] += x[..., k, :].reshape(lead + counts)
    return padded[(Ellipsis,) + tuple(slice(lo, lo + n)
                                      for n, (lo, _) in zip(output_size, padding))]


unfold_p = Primitive("unfold")
unfold_p.abstract_eval = _unfold_aval
# the kernels' parameter struct (csrc/unfold.c: window_params): five tuples padded to 32 entries
_WINDOW_PARAMS = struct.Struct("=160q2i")


def _window_params(kernel_size, stride, dilation, padding) -> bytes:
    lo, hi = _unpack(padding)
    rows = [tuple(t) + (0,) * (32 - len(t)) for t in (kernel_size, stride, dilation, lo, hi)]
    return _WINDOW_PARAMS.pack(*(v for r in rows for v in r), len(kernel_size), 0)


unfold_p.cpu = Kernel(unfold_p, "unfold", lambda x, **geometry: _window_params(**geometry))
unfold_p.reference = _unfold_ref
unfold_p.jvp = linear_jvp(unfold_p)
unfold_p.transpose = linear_transpose(lambda ct, x, **geometry: [fold_p.bind(
    ct, output_size=x.aval.shape[x.aval.ndim - len(geometry["kernel_size"]):], **geometry)])

fold_p = Primitive("fold")
fold_p.abstract_eval = _fold_aval
fold_p.cpu = Kernel(fold_p, "fold",
                    lambda x, *, output_size, **geometry: _window_params(**geometry))
fold_p.reference = _fold_ref
fold_p.jvp = linear_jvp(fold_p)
fold_p.transpose = linear_transpose(
    lambda ct, x, *, output_size, **geometry: [unfold_p.bind(ct, **geometry)])


def _lead_dims_batcher(prim: Primitive, trailing) -> object:
    """The batching rule of a primitive that maps its leading dimensions through unchanged and
    works on its last ``trailing(**params)`` ones: a leading batch dimension stays where it
    is, one among the trailing dimensions moves to the front."""
    def rule(vals, dims, **params):
        (x,), (d,) = vals, dims
        if d >= get_aval(x).ndim - trailing(**params):
            x, d = move_bdim(x, d, 0, 0), 0
        return prim.bind(x, **params), d
    return rule


unfold_p.batch = _lead_dims_batcher(unfold_p, lambda **params: len(params["kernel_size"]))
fold_p.batch = _lead_dims_batcher(fold_p, lambda **params: 2)
