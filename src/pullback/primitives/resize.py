"""Resampling primitives (backends/cpu/csrc/resize.c) behind ``pullback.image``.

``resize_contract(x, w, axis=a)``: ``x`` contracted along axis ``a`` with the (m, n) weight
matrix ``w``, ``y[..., j, ...] = sum_i w[i, j] x[..., i, ...]`` (``x.shape[a] == m``; ``y``
has n there). jax.image's separable resampling is one such contraction per spatial dimension
(JAX writes them as one einsum). The kernel runs only each column's band of nonzero taps, so a
resize costs a few multiply-adds per output. It is bilinear: its jvp is itself twice, its
transpose in ``x`` is itself on ``w``'s transposed view and in ``w`` a ``dot_general`` over every
other axis. Weights are in ``x``'s dtype (JAX casts them so); float16/bfloat16 compute in
float32.

``resize_repeat(x, factors=f)``: every element repeated ``f[d]`` times along each dimension d
(nearest-neighbour upsampling by integer factors, any dtype). Linear: its transpose sums each
block of repeats (a reshape and a ``reduce_sum``).
"""
from __future__ import annotations

import struct

import numpy as np

from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive, get_aval
from .building_blocks import reduce_sum_p, transpose_p
from .dot import dot_general_p
from .movement import reshape_p
from .reductions import FLOATING, check_axis, check_dtype
from .rules import (Kernel, Zero, add_tangents, batch_size, check_examples, instantiate,
                    is_undefined, linear_jvp, linear_transpose, move_bdim, tangent_aval)

MAX_REPEAT_DIMS = 8  # csrc/resize.c: repeat_params holds a factor per dimension


# ---- the NumPy oracle ----

def _compute_type(dtype: np.dtype) -> type:
    return np.float64 if dtype == np.float64 else np.float32


def contract_reference(x: np.ndarray, w: np.ndarray, *, axis: int) -> np.ndarray:
    ct = _compute_type(x.dtype)
    # einsum's own loops multiply every term (0 * NaN is NaN, as XLA's dot); BLAS, behind
    # tensordot, may skip zero weights.
    y = np.einsum("...i,ij->...j", np.moveaxis(x.astype(ct), axis, -1), w.astype(ct))
    return np.moveaxis(y, -1, axis).astype(x.dtype)


def repeat_reference(x: np.ndarray, *, factors: tuple[int, ...]) -> np.ndarray:
    for d, f in enumerate(factors):
        if f != 1:
            x = np.repeat(x, f, axis=d)
    return np.array(x)


# ---- checking ----

def _contract_aval(x: ShapedArray, w: ShapedArray, *, axis: int) -> ShapedArray:
    check_dtype("resize_contract", x, FLOATING, "x")
    check_axis("resize_contract", x, axis)
    if w.ndim != 2 or w.shape[0] != x.shape[axis]:
        raise ValueError(f"resize_contract: argument 'w' must be a matrix of shape "
                         f"({x.shape[axis]}, n) for x of shape {x.shape} and axis {axis}, got "
                         f"{w.shape}")
    if w.dtype != x.dtype:
        raise TypeError(f"resize_contract: argument 'w' must have x's dtype {x.dtype}, got "
                        f"{w.dtype}")
    shape = x.shape[:axis] + (w.shape[1],) + x.shape[axis + 1:]
    return ShapedArray(shape, x.dtype, x.weak_type and w.weak_type)


def _repeat_aval(x: ShapedArray, *, factors: tuple[int, ...]) -> ShapedArray:
    if (not isinstance(factors, tuple) or len(factors) != x.ndim
            or any(not isinstance(f, int) or f < 1 for f in factors)):
        raise ValueError(f"resize_repeat: argument 'factors' must be a tuple of {x.ndim} positive "
                         f"ints (one per dimension of x of shape {x.shape}), got {factors!r}")
    if x.ndim > MAX_REPEAT_DIMS:
        raise ValueError(f"resize_repeat: argument 'x' may have at most {MAX_REPEAT_DIMS} "
                         f"dimensions, got shape {x.shape}")
    return ShapedArray(tuple(n * f for n, f in zip(x.shape, factors)), x.dtype, x.weak_type)


# ---- resize_contract's rules ----

def _contract_jvp(primals, tangents, *, axis):
    (x, w), (tx, tw) = primals, tangents
    out = resize_contract_p.bind(x, w, axis=axis)
    t = Zero.from_primal(out)
    if type(tx) is not Zero:
        t = resize_contract_p.bind(tx, w, axis=axis)
    if type(tw) is not Zero:
        t = add_tangents(t, resize_contract_p.bind(x, tw, axis=axis))
    return out, t


def _contract_transpose(ct, x, w, *, axis):
    if is_undefined(x) and is_undefined(w):
        raise ValueError("resize_contract: cannot transpose in both 'x' and 'w' (it is "
                         "bilinear)")
    if is_undefined(x):
        if type(ct) is Zero:
            return [Zero(tangent_aval(x.aval)), None]
        wt = transpose_p.bind(w, permutation=(1, 0))
        return [resize_contract_p.bind(ct, wt, axis=axis), None]
    if type(ct) is Zero:
        return [None, Zero(tangent_aval(w.aval))]
    # dw[i, j] = sum over every other axis of x[..., i, ...] ct[..., j, ...]
    others = tuple(d for d in range(get_aval(x).ndim) if d != axis)
    dw = dot_general_p.bind(x, instantiate(ct), dimension_numbers=((others, others), ((), ())),
                            precision=None, preferred_element_type=None)
    return [None, dw]


def _contract_batch(vals, dims, *, axis):
    check_examples(resize_contract_p, vals, dims, axis=axis)
    (x, w), (bx, bw) = vals, dims
    if bw is None:  # the batch dim of x is one more outer or inner dim
        return resize_contract_p.bind(x, w, axis=axis + (bx <= axis)), bx
    # one weight matrix per example: a batched product (dense; vmapped scales are rare)
    size = batch_size(vals, dims)
    x = move_bdim(x, bx, 0, size)
    w = move_bdim(w, bw, 0, size)
    y = dot_general_p.bind(x, w, dimension_numbers=(((axis + 1,), (1,)), ((0,), (0,))),
                           precision=None, preferred_element_type=None)
    nd = get_aval(y).ndim  # (B, the other axes of x..., n): n back to its place
    perm = list(range(nd - 1))
    perm.insert(axis + 1, nd - 1)
    return transpose_p.bind(y, permutation=tuple(perm)), 0


# the kernel's parameter struct (csrc/resize.c: contract_params)
_CONTRACT_PARAMS = struct.Struct("=2i")  # axis, pad

resize_contract_p = Primitive("resize_contract")
resize_contract_p.abstract_eval = _contract_aval
resize_contract_p.reference = contract_reference
resize_contract_p.cpu = Kernel(resize_contract_p, "resize_contract",
                               lambda x, w, *, axis: _CONTRACT_PARAMS.pack(axis, 0))
resize_contract_p.jvp = _contract_jvp
resize_contract_p.transpose = _contract_transpose
resize_contract_p.batch = _contract_batch


# ---- resize_repeat's rules ----

@linear_transpose
def _repeat_transpose(ct, x, *, factors):
    # (.., m*f, ..) -> (.., m, f, ..), then the f axes summed away
    split, axes = [], []
    for n, f in zip(x.aval.shape, factors):
        split.append(n)
        if f != 1:
            axes.append(len(split))
            split.append(f)
    ct = reshape_p.bind(ct, new_sizes=tuple(split), dimensions=None)
    return [reduce_sum_p.bind(ct, axes=tuple(axes)) if axes else ct]


def _repeat_batch(vals, dims, *, factors):
    check_examples(resize_repeat_p, vals, dims, factors=factors)
    (x,), (b,) = vals, dims
    shape = get_aval(x).shape
    if len(shape) <= MAX_REPEAT_DIMS:
        return resize_repeat_p.bind(x, factors=factors[:b] + (1,) + factors[b:]), b
    # too many dims for the kernel's params: the batch dim merges into the first (repeating
    # the merged dim keeps each example's block of repeats apart)
    x = move_bdim(x, b, 0, 0)
    shape = get_aval(x).shape
    merged = reshape_p.bind(x, new_sizes=(shape[0] * shape[1],) + shape[2:], dimensions=None)
    y = resize_repeat_p.bind(merged, factors=factors)
    return reshape_p.bind(y, new_sizes=(shape[0], shape[1] * factors[0]) + get_aval(y).shape[1:],
                          dimensions=None), 0


# the kernel's parameter struct (csrc/resize.c: repeat_params)
_REPEAT_PARAMS = struct.Struct(f"={1 + MAX_REPEAT_DIMS}i")  # ndim, factors


def _repeat_pack(x, *, factors):
    return _REPEAT_PARAMS.pack(len(factors), *factors,
                               *([1] * (MAX_REPEAT_DIMS - len(factors))))


resize_repeat_p = Primitive("resize_repeat")
resize_repeat_p.abstract_eval = _repeat_aval
resize_repeat_p.reference = repeat_reference
resize_repeat_p.cpu = Kernel(resize_repeat_p, "resize_repeat", _repeat_pack)
resize_repeat_p.jvp = linear_jvp(resize_repeat_p)
resize_repeat_p.transpose = _repeat_transpose
resize_repeat_p.batch = _repeat_batch
