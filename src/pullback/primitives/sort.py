"""Sorting primitives (backends/cpu/csrc/sort.c): sort, argsort and top_k.

Orders (as JAX):
  * ``sort``/``argsort``: ascending; -0.0 and 0.0 are equal; every NaN (whatever its sign or
    payload) equals every other NaN and sorts after +inf; complex compares real parts, then
    imaginary parts, each that way. Always stable: equal keys keep their input order.
    ``descending=True`` (a pullback extension) reverses the order of unequal keys only: equal
    keys still keep their input order and NaNs come first, exactly as
    ``jnp.argsort(x, descending=True)``. (``jnp.sort(x, descending=True)`` reverses the whole
    ascending result instead; the two differ only in the bit patterns of tied -0.0/0.0 or of
    NaNs with different payloads.)
  * ``top_k``: IEEE totalOrder, descending: +NaN > +inf > ... > 0.0 > -0.0 > ... > -inf > -NaN,
    so positive NaNs come first and negative NaNs last (what XLA's TopK gives); equal values by
    lower index.

``argsort`` is not a JAX primitive: JAX sorts an iota operand along with the keys. Here it is a
primitive of its own so ``jnp.argsort`` is one kernel call that never materializes the iota.

Derivatives: each sorted output's tangent is its operand's tangent permuted like its values
(``sort`` with an iota operand gives the permutation, a gather applies it); ``top_k``'s values
take the tangent at their indices. Ties and NaNs follow the primal order, whatever it is.
"""
from __future__ import annotations

import struct
from typing import Sequence

import numpy as np

from ..tracer import dtypes
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive, get_aval
from . import indexing as _ix, movement as _mv
from .reductions import (axis_param_batcher, check_axis, check_dtype, _FLOATS, _HALVES,
                         _INTS)
from .rules import INTEGER_OUTPUT, NONLINEAR, Kernel, Zero, batch_size, move_bdim

SORTABLE = ((dtypes.bool_,) + _INTS + _FLOATS + (dtypes.complex64, dtypes.complex128),
            "a boolean, integer, floating or complex")
ORDERED = ((dtypes.bool_,) + _INTS + _FLOATS, "a boolean, integer or floating")


# ---- the NumPy oracle ----

def _key_parts(x: np.ndarray) -> list[np.ndarray]:
    """Arrays NumPy's stable sorts order as lax.sort orders ``x``: NumPy already puts every NaN
    last and ties -0.0 with 0.0; complex becomes (real, imag)."""
    if x.dtype.kind == "c":
        return [x.real, x.imag]
    if x.dtype in _HALVES:
        return [x.astype(np.float32)]
    return [x]


def stable_order(keys: Sequence[np.ndarray], axis: int, descending: bool) -> np.ndarray:
    """Indices that stably sort along ``axis`` by ``keys`` (the first primary)."""
    keys = [np.moveaxis(k, axis, -1) for k in keys]
    if descending:  # sort the reversed rows ascending, then reverse back: ties keep input order
        keys = [k[..., ::-1] for k in keys]
    lex = [p for k in reversed(keys) for p in reversed(_key_parts(k))]  # lexsort: last primary
    perm = np.lexsort(lex, axis=-1) if keys[0].size else np.zeros(keys[0].shape, np.intp)
    if descending:
        perm = (keys[0].shape[-1] - 1 - perm)[..., ::-1]
    return np.moveaxis(perm, -1, axis)


def total_order_key(x: np.ndarray) -> np.ndarray:
    """Integers whose order is IEEE totalOrder of ``x`` (the value itself for bool/integers)."""
    if x.dtype.kind in "biu":
        return x
    bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize]
    u = x.view(bits)
    sign = bits(1) << bits(8 * x.dtype.itemsize - 1)
    return np.where(u & sign, ~u, u | sign)


def _sort_reference(*xs: np.ndarray, dimension: int, is_stable: bool, num_keys: int,
                    descending: bool) -> list[np.ndarray]:
    perm = stable_order(xs[:num_keys], dimension, descending)
    return [np.take_along_axis(x, perm, dimension) for x in xs]


def _argsort_reference(x: np.ndarray, *, dimension: int, descending: bool,
                       index_dtype: np.dtype) -> np.ndarray:
    return stable_order([x], dimension, descending).astype(index_dtype)


def _top_k_reference(x: np.ndarray, *, k: int, axis: int) -> list[np.ndarray]:
    perm = np.take(stable_order([total_order_key(x)], axis, True), np.arange(k), axis)
    return [np.take_along_axis(x, perm, axis), perm.astype(np.int32)]


# ---- checking ----

def _operand_name(i: int, n: int) -> str:
    return "operand" if n == 1 else f"operand[{i}]"


def _sort_aval(*avals: ShapedArray, dimension: int, is_stable: bool, num_keys: int,
               descending: bool) -> list[ShapedArray]:
    if not avals:
        raise TypeError("sort: argument 'operand' must hold at least one array")
    for i, a in enumerate(avals):
        name = _operand_name(i, len(avals))
        if a.shape != avals[0].shape:
            raise TypeError(f"sort: argument '{name}' has shape {a.shape}, but the operands must "
                            f"have equal shapes: got {', '.join(str(x.shape) for x in avals)}")
        check_dtype("sort", a, SORTABLE, name)
    check_axis("sort", avals[0], dimension, "dimension")
    if not isinstance(num_keys, int) or not 1 <= num_keys <= len(avals):
        raise ValueError(f"sort: argument 'num_keys' is {num_keys!r}; it must be in "
                         f"[1, {len(avals)}] for {len(avals)} operand(s)")
    return list(avals)


def _argsort_aval(x: ShapedArray, *, dimension: int, descending: bool, index_dtype: np.dtype
                  ) -> ShapedArray:
    check_dtype("argsort", x, SORTABLE)
    check_axis("argsort", x, dimension, "dimension")
    if not isinstance(index_dtype, np.dtype) or index_dtype.kind not in "iu":
        raise TypeError(f"argsort: argument 'index_dtype' must be an integer dtype, got "
                        f"{index_dtype}")
    if x.shape[dimension] - 1 > np.iinfo(index_dtype).max:
        raise ValueError(f"argsort: argument 'index_dtype' {index_dtype} cannot hold the indices "
                         f"of an axis of size {x.shape[dimension]}")
    return ShapedArray(x.shape, index_dtype, False)


def _top_k_aval(x: ShapedArray, *, k: int, axis: int) -> list[ShapedArray]:
    check_dtype("top_k", x, ORDERED)
    check_axis("top_k", x, axis)
    if not isinstance(k, int) or not 0 <= k <= x.shape[axis]:
        raise ValueError(f"top_k: argument 'k' is {k!r}; it must be an int in "
                         f"[0, {x.shape[axis]}] for an operand of shape {x.shape} and axis {axis}")
    shape = x.shape[:axis] + (k,) + x.shape[axis + 1:]
    return [ShapedArray(shape, x.dtype, x.weak_type), ShapedArray(shape, dtypes.int32, False)]


# ---- rules ----

def _take_along_axis(t, indices, axis: int):
    """``t`` at ``indices`` along ``axis`` (one gather; the other dimensions are batching
    dimensions, so ``indices`` may be shorter than ``t`` only along ``axis``)."""
    shape, ishape = get_aval(t).shape, get_aval(indices).shape
    nd = len(shape)
    others = tuple(d for d in range(nd) if d != axis)
    dn = _ix.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(axis,),
                                    start_index_map=(axis,), operand_batching_dims=others,
                                    start_indices_batching_dims=others)
    index_vectors = _mv.broadcast_in_dim_p.bind(indices, shape=ishape + (1,),
                                                broadcast_dimensions=tuple(range(nd)))
    return _ix.gather_p.bind(t, index_vectors, dimension_numbers=dn,
                             slice_sizes=tuple(1 if d == axis else min(1, n)
                                               for d, n in enumerate(shape)),
                             indices_are_sorted=False, unique_indices=True,
                             mode=_ix.GatherScatterMode.PROMISE_IN_BOUNDS, fill_value=None)


def _index_dtype(n: int) -> np.dtype:
    return dtypes.int32 if n < 2**31 else dtypes.int64


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys, descending):
    shape = get_aval(primals[0]).shape
    iota = _mv.iota_p.bind(dtype=_index_dtype(shape[dimension]), shape=shape,
                           dimension=dimension)
    *outs, perm = sort_p.bind(*primals, iota, dimension=dimension, is_stable=is_stable,
                              num_keys=num_keys, descending=descending)
    empty = 0 in shape  # nothing to gather (and no valid gather over an empty axis)
    tangents_out = [Zero.from_primal(o) if type(t) is Zero or empty else
                    _take_along_axis(t, perm, dimension) for o, t in zip(outs, tangents)]
    return outs, tangents_out


def _sort_batch(vals, dims, *, dimension, **params):
    # every operand gets the batch dim of the first batched one (broadcast where unbatched)
    b = next(d for d in dims if d is not None)
    size = batch_size(vals, dims)
    outs = sort_p.bind(*[move_bdim(v, d, b, size) for v, d in zip(vals, dims)],
                       dimension=dimension + (dimension >= b), **params)
    return outs, [b] * len(outs)


def _top_k_jvp(primals, tangents, *, k, axis):
    (x,), (t,) = primals, tangents
    values, indices = top_k_p.bind(x, k=k, axis=axis)
    if type(t) is Zero or get_aval(values).size == 0:
        return [values, indices], [Zero.from_primal(values), Zero.from_primal(indices)]
    return [values, indices], [_take_along_axis(t, indices, axis), Zero.from_primal(indices)]


# ---- the primitives ----

sort_p = Primitive("sort", multiple_results=True)
sort_p.abstract_eval = _sort_aval
sort_p.reference = _sort_reference
# the kernels' parameter structs (csrc/sort.c: sort_params, argsort_params, top_k_params)
_SORT_PARAMS = struct.Struct("=3i")     # dimension, num_keys, descending
_ARGSORT_PARAMS = struct.Struct("=2i")  # dimension, descending
_TOP_K_PARAMS = struct.Struct("=i")     # axis (k: the outputs' size along it)

sort_p.cpu = Kernel(sort_p, "sort", lambda *xs, dimension, is_stable, num_keys, descending:
                    _SORT_PARAMS.pack(dimension, num_keys, descending))
sort_p.jvp = _sort_jvp
sort_p.transpose = NONLINEAR
sort_p.batch = _sort_batch

argsort_p = Primitive("argsort")
argsort_p.abstract_eval = _argsort_aval
argsort_p.reference = _argsort_reference
argsort_p.cpu = Kernel(argsort_p, "argsort", lambda x, *, dimension, descending, index_dtype:
                       _ARGSORT_PARAMS.pack(dimension, descending))
argsort_p.jvp = INTEGER_OUTPUT
argsort_p.transpose = NONLINEAR
argsort_p.batch = axis_param_batcher(argsort_p, "dimension")

top_k_p = Primitive("top_k", multiple_results=True)
top_k_p.abstract_eval = _top_k_aval
top_k_p.reference = _top_k_reference
top_k_p.cpu = Kernel(top_k_p, "top_k", lambda x, *, k, axis: _TOP_K_PARAMS.pack(axis))
top_k_p.jvp = _top_k_jvp
top_k_p.transpose = NONLINEAR
top_k_p.batch = axis_param_batcher(top_k_p, "axis")
