"""Windowed reductions (backends/cpu/csrc/reduce_window.c), as JAX's reduce_window_sum/max/min.

Geometry (XLA's ReduceWindow): the operand is dilated (``base_dilation - 1`` holes between
elements), padded by ``padding[i] = (low, high)`` (negative crops), and a window of
``window_dimensions`` with ``window_dilation`` slides over it by ``window_strides``. Holes and
padding hold the reduction's identity, so they never change a result. Along dimension i there
are ``max(0, (padded_i - dilated_window_i) // stride_i + 1)`` windows.

Primitives:
  * ``reduce_window_sum``/``_max``/``_min``/``_mul``: one operand; the monoid with its identity
    (0, -inf or the dtype's minimum, +inf or its maximum, 1). Integers wrap; float16/bfloat16
    accumulate in float32 and round once.
  * ``reduce_window_sum_transpose``: sum's transpose: every output cotangent added back at each
    operand position of its window (no padded or dilated copy of the cotangent).
  * ``select_and_gather_add(tangents, operand)``: per window, the tangent at the position the
    window's max (``select="max"``) or min selects; ``select_and_scatter_add(source,
    operand)``: its transpose, each window's source value added at that position. The
    selected position is the window's FIRST extreme in row-major window order (NaN counting as
    the extreme, as argmax), as XLA's select-and-scatter; padding and holes are never selected
    (a window without operand elements selects nothing: tangent 0).

Derivatives: sum and its transpose are linear and transpose into each other; max/min's tangent
is ``select_and_gather_add`` of the operand's tangent; the two select primitives are linear in
their first operand and transpose into each other, so every order differentiates. mul's
tangent is ``sum_k t_k * prod_{j != k} x_j`` over the window, from prefix and suffix products
of the window's slices (no division, so zeros get exact derivatives). Batching folds the mapped
axis in as a window dimension of size 1.
"""
from __future__ import annotations

import math
import struct

import numpy as np

from ..tracer import dtypes
from ..tracer.array import Array
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive, get_aval
from . import elementwise as _ew, movement as _mv
from .reductions import _FLOATS, _HALVES, _INTS, check_dtype
from .rules import (Kernel, Zero, batch_size, instantiate, is_undefined, linear_jvp,
                    linear_transpose, move_bdim, not_applicable)

SUMMABLE = (_INTS + _FLOATS, "an integer or floating")
ORDERED = ((dtypes.bool_,) + _INTS + _FLOATS, "a boolean, integer or floating")
GEOMETRY = ("window_dimensions", "window_strides", "padding", "base_dilation", "window_dilation")
MAXDIMS = 32  # csrc/pb_kernel.h's PB_KERNEL_MAXDIMS


# ---- geometry ----

def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None) -> tuple[int, ...]:
    """The output shape of a window reduction (no checks: see :func:`check_geometry`)."""
    nd = len(operand_shape)
    bd = base_dilation or (1,) * nd
    wd = window_dilation or (1,) * nd
    out = []
    for n, w, s, (lo, hi), b, d in zip(operand_shape, window_dimensions, window_strides,
                                       padding, bd, wd):
        padded = (0 if n == 0 else (n - 1) * b + 1) + lo + hi
        extent = (w - 1) * d + 1
        out.append(0 if padded < extent else (padded - extent) // s + 1)
    return tuple(out)


def _ints(op: str, arg: str, v, nd: int, least: int) -> tuple[int, ...]:
    try:
        t = tuple(v)
    except TypeError:
        raise TypeError(f"{op}: argument '{arg}' must be a sequence of {nd} ints, got {v!r}") from None
    if any(not isinstance(i, (int, np.integer)) or isinstance(i, bool) for i in t):
        raise TypeError(f"{op}: argument '{arg}' must hold ints, got {v!r}")
    if len(t) != nd:
        raise TypeError(f"{op}: argument '{arg}' must have {nd} entries (one per operand "
                        f"dimension), got {t} for an operand of rank {nd}")
    if any(i < least for i in t):
        raise TypeError(f"{op}: argument '{arg}' must hold ints >= {least}, got {t}")
    return tuple(int(i) for i in t)


def check_geometry(op: str, shape: tuple[int, ...], *, window_dimensions, window_strides,
                   padding, base_dilation, window_dilation) -> tuple[int, ...]:
    """Checks a window geometry against an operand ``shape``; returns the output shape."""
    nd = len(shape)
    w = _ints(op, "window_dimensions", window_dimensions, nd, 1)
    s = _ints(op, "window_strides", window_strides, nd, 1)
    b = _ints(op, "base_dilation", base_dilation, nd, 1)
    d = _ints(op, "window_dilation", window_dilation, nd, 1)
    try:
        pads = tuple((int(lo), int(hi)) for lo, hi in padding)
        ok = all(isinstance(v, (int, np.integer)) for p in padding for v in p)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise TypeError(f"{op}: argument 'padding' must be a sequence of (low, high) int pairs, "
                        f"got {padding!r}")
    if len(pads) != nd:
        raise TypeError(f"{op}: argument 'padding' must have {nd} (low, high) pairs (one per "
                        f"operand dimension), got {pads}")
    for i, (n, (lo, hi), bi) in enumerate(zip(shape, pads, b)):
        if (0 if n == 0 else (n - 1) * bi + 1) + lo + hi < 0:
            raise ValueError(f"{op}: argument 'padding' {pads[i]} makes dimension {i} (size {n}) "
                             "negative")
    return reduce_window_shape_tuple(shape, w, s, pads, b, d)


def _geometry_params(window_dimensions, window_strides, padding, base_dilation,
                     window_dilation) -> list[int]:
    rows = [window_dimensions, window_strides, tuple(lo for lo, _ in padding),
            tuple(hi for _, hi in padding), base_dilation, window_dilation]
    return [v for r in rows for v in tuple(r) + (0,) * (MAXDIMS - len(r))]


# csrc/reduce_window.c's rw_params: six int64 arrays of MAXDIMS (window, stride, low, high,
# base dilation, window dilation), then ndim and the op code
_PARAMS = struct.Struct(f"={6 * MAXDIMS}q2i")
OPS = {"sum": 0, "max": 1, "min": 2, "mul": 3}


def _pack(op: str):
    def pack(*avals, **params):
        geo = {k: params[k] for k in GEOMETRY}
        return _PARAMS.pack(*_geometry_params(**geo), len(geo["window_dimensions"]), OPS[op])
    return pack


def _geo(params: dict) -> dict:
    return {k: params[k] for k in GEOMETRY}


# ---- the NumPy oracle ----

def identity(op: str, dtype: np.dtype):
    """The reduction's identity in ``dtype`` (the value of padding and holes)."""
    dtype = np.dtype(dtype)
    if op == "sum":
        return dtype.type(0)
    if op == "mul":
        return dtype.type(1)
    if dtype == np.bool_:
        return np.bool_(op == "min")
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return dtype.type(info.min if op == "max" else info.max)
    return dtype.type(-np.inf if op == "max" else np.inf)


def _dilate_pad(x: np.ndarray, fill, base_dilation, padding) -> np.ndarray:
    config = [(lo, hi, b - 1) for (lo, hi), b in zip(padding, base_dilation)]
    grown = [n + max(n - 1, 0) * inner + max(lo, 0) + max(hi, 0)
             for (lo, hi, inner), n in zip(config, x.shape)]
    out = np.full(grown, fill, dtype=x.dtype)
    out[tuple(slice(max(lo, 0), max(lo, 0) + n + max(n - 1, 0) * inner, inner + 1)
              for (lo, _, inner), n in zip(config, x.shape))] = x
    return out[tuple(slice(-min(lo, 0), g + min(hi, 0)) for (lo, hi, _), g in zip(config, grown))]


def window_slices(padded_shape, out_shape, window_dimensions, window_strides, window_dilation):
    """Per window offset (row-major), the slice of the padded operand it reads for every
    window: element ``[o]`` of it is window ``o``'s element at that offset."""
    for off in np.ndindex(*window_dimensions):
        yield tuple(slice(k * d, k * d + (m - 1) * s + 1 if m else 0, s)
                    for k, d, m, s in zip(off, window_dilation, out_shape, window_strides))


_NP_OPS = {"sum": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def _reduce_window_reference(op: str):
    def ref(x: np.ndarray, **geo) -> np.ndarray:
        out_shape = reduce_window_shape_tuple(x.shape, **geo)
        work = x.astype(np.float32) if x.dtype in _HALVES else x
        padded = _dilate_pad(work, identity(op, work.dtype), geo["base_dilation"], geo["padding"])
        acc = np.full(out_shape, identity(op, work.dtype), work.dtype)
        if acc.size:
            with np.errstate(all="ignore"):
                for sl in window_slices(padded.shape, out_shape, geo["window_dimensions"],
                                        geo["window_strides"], geo["window_dilation"]):
                    acc = _NP_OPS[op](acc, padded[sl]).astype(work.dtype)
        return acc.astype(x.dtype)
    return ref


def selected_positions(x: np.ndarray, select: str, **geo) -> np.ndarray:
    """Per window, the flat index into ``x`` of its first max (min), NaN counting as the
    extreme; -1 for a window holding no operand element."""
    out_shape = reduce_window_shape_tuple(x.shape, **geo)
    work = x.astype(np.float32) if x.dtype in _HALVES else x
    if work.dtype == np.bool_:
        work = work.astype(np.int8)
    index = _dilate_pad(np.arange(x.size, dtype=np.int64).reshape(x.shape), -1,
                        geo["base_dilation"], geo["padding"])
    values = _dilate_pad(work, identity(select, work.dtype), geo["base_dilation"], geo["padding"])
    best = np.zeros(out_shape, work.dtype)
    pick = np.full(out_shape, -1, np.int64)
    if pick.size == 0:
        return pick
    better = np.greater if select == "max" else np.less
    for sl in window_slices(values.shape, out_shape, geo["window_dimensions"],
                            geo["window_strides"], geo["window_dilation"]):
        v, i = values[sl], index[sl]
        with np.errstate(all="ignore"):
            nan_v = np.isnan(v) if v.dtype.kind == "f" else np.zeros(v.shape, bool)
            nan_b = np.isnan(best) if v.dtype.kind == "f" else np.zeros(v.shape, bool)
            take = (i >= 0) & ((pick < 0) | better(v, best) | (nan_v & ~nan_b))
        best = np.where(take, v, best)
        pick = np.where(take, i, pick)
    return pick


def _gather_reference(t: np.ndarray, x: np.ndarray, *, select: str, **geo) -> np.ndarray:
    pick = selected_positions(x, select, **geo)
    flat = t.reshape(-1)
    return np.where(pick >= 0, flat[np.maximum(pick, 0)] if flat.size else 0,
                    np.zeros((), t.dtype)).astype(t.dtype)


def _scatter_reference(src: np.ndarray, x: np.ndarray, *, select: str, **geo) -> np.ndarray:
    pick = selected_positions(x, select, **geo)
    work = src.astype(np.float32) if src.dtype in _HALVES else src
    out = np.zeros(x.size, work.dtype)
    ok = pick >= 0
    np.add.at(out, pick[ok], work[ok])
    return out.reshape(x.shape).astype(src.dtype)


def _sum_transpose_reference(ct: np.ndarray, *, operand_shape, **geo) -> np.ndarray:
    work = ct.astype(np.float32) if ct.dtype in _HALVES else ct
    index = _dilate_pad(np.arange(math.prod(operand_shape), dtype=np.int64).reshape(
        operand_shape), -1, geo["base_dilation"], geo["padding"])
    out = np.zeros(math.prod(operand_shape), work.dtype)
    if ct.size:
        for sl in window_slices(index.shape, ct.shape, geo["window_dimensions"],
                                geo["window_strides"], geo["window_dilation"]):
            i = index[sl]
            np.add.at(out, i[i >= 0], work[i >= 0])
    return out.reshape(operand_shape).astype(ct.dtype)


# ---- abstract evaluation ----

def _reduce_window_aval(name: str, kinds: tuple):
    def aval(x: ShapedArray, **geo) -> ShapedArray:
        check_dtype(name, x, kinds)
        return x.update(shape=check_geometry(name, x.shape, **geo))
    return aval


def _sum_transpose_aval(ct: ShapedArray, *, operand_shape, **geo) -> ShapedArray:
    name = "reduce_window_sum_transpose"
    check_dtype(name, ct, SUMMABLE, "cotangent")
    shape = tuple(int(n) for n in operand_shape)
    want = check_geometry(name, shape, **geo)
    if ct.shape != want:
        raise TypeError(f"{name}: argument 'cotangent' must have shape {want} (the window "
                        f"grid of an operand of shape {shape}), got {ct.shape}")
    return ct.update(shape=shape)


def _select_aval(name: str, first: str, out_is_operand: bool):
    def aval(t: ShapedArray, x: ShapedArray, *, select: str, **geo) -> ShapedArray:
        if select not in ("max", "min"):
            raise ValueError(f"{name}: argument 'select' must be 'max' or 'min', got {select!r}")
        check_dtype(name, x, ORDERED)
        check_dtype(name, t, (_FLOATS, "a floating"), first)
        out = check_geometry(name, x.shape, **geo)
        want = x.shape if not out_is_operand else out
        if t.shape != want:
            raise TypeError(f"{name}: argument '{first}' must have shape {want} for an operand "
                            f"of shape {x.shape}, got {t.shape}")
        return t.update(shape=x.shape if out_is_operand else out)
    return aval


# ---- rules ----

def _insert(params: dict, d: int) -> dict:
    """The geometry with a window dimension of size 1 inserted at ``d`` (a batch axis)."""
    p = dict(params)
    for k, v in (("window_dimensions", 1), ("window_strides", 1), ("padding", (0, 0)),
                 ("base_dilation", 1), ("window_dilation", 1)):
        p[k] = tuple(params[k][:d]) + (v,) + tuple(params[k][d:])
    return p


def _one_operand_batcher(prim: Primitive):
    def rule(vals, dims, **params):
        (x,), (d,) = vals, dims
        return prim.bind(x, **_insert(params, d)), d
    return rule


def _two_operand_batcher(prim: Primitive):
    def rule(vals, dims, **params):
        size = batch_size(vals, dims)
        b = next(d for d in dims if d is not None)
        a, x = (move_bdim(v, d, b, size) for v, d in zip(vals, dims))
        return prim.bind(a, x, **_insert(params, b)), b
    return rule


def _sum_transpose_batch(vals, dims, *, operand_shape, **geo):
    (ct,), (d,) = vals, dims
    shape = tuple(operand_shape[:d]) + (get_aval(ct).shape[d],) + tuple(operand_shape[d:])
    return reduce_window_sum_transpose_p.bind(ct, operand_shape=shape, **_insert(geo, d)), d


def _chooser_jvp(prim: Primitive, select: str):
    def rule(primals, tangents, **geo):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, **geo)
        if type(t) is Zero:
            return out, Zero.from_primal(out)
        return out, select_and_gather_add_p.bind(t, x, select=select, **geo)
    return rule


def _padded_slices(x, fill, geo, out_shape):
    """The window-offset slices (row-major) of ``x`` dilated and padded with ``fill``."""
    dt = get_aval(x).dtype
    padded = _mv.pad_p.bind(x, _full((), fill, dt), padding_config=tuple(
        (lo, hi, b - 1) for (lo, hi), b in zip(geo["padding"], geo["base_dilation"])))
    pshape = get_aval(padded).shape
    out = []
    for sl in window_slices(pshape, out_shape, geo["window_dimensions"], geo["window_strides"],
                            geo["window_dilation"]):
        out.append(_mv.slice_p.bind(padded, start_indices=tuple(s.start for s in sl),
                                    limit_indices=tuple(max(s.stop, s.start) for s in sl),
                                    strides=tuple(s.step for s in sl)))
    return out


def _full(shape, value, dtype):
    scalar = Array(np.array(value, dtype))
    if not shape:
        return scalar
    return _mv.broadcast_in_dim_p.bind(scalar, shape=tuple(shape), broadcast_dimensions=())


def _mul_jvp(primals, tangents, **geo):
    (x,), (t,) = primals, tangents
    out = reduce_window_mul_p.bind(x, **geo)
    if type(t) is Zero:
        return out, Zero.from_primal(out)
    out_shape = get_aval(out).shape
    if math.prod(out_shape) == 0:
        return out, _full(out_shape, 0, get_aval(out).dtype)
    xs = _padded_slices(x, 1, geo, out_shape)
    ts = _padded_slices(t, 0, geo, out_shape)
    n = len(xs)
    suffix = [None] * n  # suffix[k]: product of xs[k+1:]
    acc = None
    for k in range(n - 1, -1, -1):
        suffix[k] = acc
        acc = xs[k] if acc is None else _ew.mul_p.bind(xs[k], acc)
    total, prefix = None, None
    for k in range(n):
        others = prefix if suffix[k] is None else (
            suffix[k] if prefix is None else _ew.mul_p.bind(prefix, suffix[k]))
        term = ts[k] if others is None else _ew.mul_p.bind(ts[k], others)
        total = term if total is None else _ew.add_p.bind(total, term)
        prefix = xs[k] if prefix is None else _ew.mul_p.bind(prefix, xs[k])
    return out, total


# ---- the primitives ----

def _declare(op: str, kinds: tuple) -> Primitive:
    prim = Primitive(f"reduce_window_{op}")
    prim.abstract_eval = _reduce_window_aval(prim.name, kinds)
    prim.reference = _reduce_window_reference(op)
    prim.cpu = Kernel(prim, "reduce_window", _pack(op))
    prim.batch = _one_operand_batcher(prim)
    return prim


reduce_window_sum_p = _declare("sum", SUMMABLE)
reduce_window_max_p = _declare("max", ORDERED)
reduce_window_min_p = _declare("min", ORDERED)
reduce_window_mul_p = _declare("mul", SUMMABLE)

reduce_window_sum_transpose_p = Primitive("reduce_window_sum_transpose")
reduce_window_sum_transpose_p.abstract_eval = _sum_transpose_aval
reduce_window_sum_transpose_p.reference = _sum_transpose_reference
reduce_window_sum_transpose_p.cpu = Kernel(
    reduce_window_sum_transpose_p, "reduce_window_sum_transpose",
    lambda ct, *, operand_shape, **geo: _pack("sum")(ct, **geo))
reduce_window_sum_transpose_p.batch = _sum_transpose_batch

select_and_gather_add_p = Primitive("select_and_gather_add")
select_and_gather_add_p.abstract_eval = _select_aval("select_and_gather_add", "tangents", False)
select_and_gather_add_p.reference = _gather_reference
select_and_gather_add_p.cpu = Kernel(
    select_and_gather_add_p, "select_and_gather_add",
    lambda t, x, *, select, **geo: _pack(select)(t, x, **geo))
select_and_gather_add_p.batch = _two_operand_batcher(select_and_gather_add_p)

select_and_scatter_add_p = Primitive("select_and_scatter_add")
select_and_scatter_add_p.abstract_eval = _select_aval("select_and_scatter_add", "source", True)
select_and_scatter_add_p.reference = _scatter_reference
select_and_scatter_add_p.cpu = Kernel(
    select_and_scatter_add_p, "select_and_scatter_add",
    lambda s, x, *, select, **geo: _pack(select)(s, x, **geo))
select_and_scatter_add_p.batch = _two_operand_batcher(select_and_scatter_add_p)

# derivatives
reduce_window_sum_p.jvp = linear_jvp(reduce_window_sum_p)
reduce_window_sum_p.transpose = linear_transpose(
    lambda ct, x, **geo: [reduce_window_sum_transpose_p.bind(
        ct, operand_shape=x.aval.shape, **geo)])
reduce_window_sum_transpose_p.jvp = linear_jvp(reduce_window_sum_transpose_p)
reduce_window_sum_transpose_p.transpose = linear_transpose(
    lambda ct, x, *, operand_shape, **geo: [reduce_window_sum_p.bind(ct, **geo)])

reduce_window_max_p.jvp = _chooser_jvp(reduce_window_max_p, "max")
reduce_window_min_p.jvp = _chooser_jvp(reduce_window_min_p, "min")
reduce_window_mul_p.jvp = _mul_jvp
for _p in (reduce_window_max_p, reduce_window_min_p, reduce_window_mul_p):
    _p.transpose = not_applicable("not linear in its operand, so it has no transpose")


def _select_transpose(other: Primitive):
    def rule(ct, t, x, *, select, **geo):
        if is_undefined(x):
            raise TypeError(f"{other.name}: transposing with respect to 'operand' (the values "
                            "that select the positions): not linear in it")
        if type(ct) is Zero:
            return [Zero(t.aval), None]
        return [other.bind(instantiate(ct), x, select=select, **geo), None]
    return rule


select_and_gather_add_p.jvp = linear_jvp(select_and_gather_add_p, linear=(0,))
select_and_gather_add_p.transpose = _select_transpose(select_and_scatter_add_p)
select_and_scatter_add_p.jvp = linear_jvp(select_and_scatter_add_p, linear=(0,))
select_and_scatter_add_p.transpose = _select_transpose(select_and_gather_add_p)

MONOIDS = {"sum": reduce_window_sum_p, "max": reduce_window_max_p, "min": reduce_window_min_p,
           "mul": reduce_window_mul_p}
