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
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..tracer import dtypes
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive
from .reductions import INTEGER_OUTPUT, check_axis, check_dtype, _FLOATS, _HALVES, _INTS
from .rules import AUTODIFF, BATCHING, NONLINEAR

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


# ---- the primitives ----

sort_p = Primitive("sort", multiple_results=True)
sort_p.abstract_eval = _sort_aval
sort_p.reference = _sort_reference
sort_p.cpu = lambda k, *xs, dimension, is_stable, num_keys, descending: list(
    k.sort(xs, dimension, num_keys, descending))
sort_p.jvp = AUTODIFF
sort_p.transpose = NONLINEAR
sort_p.batch = BATCHING

argsort_p = Primitive("argsort")
argsort_p.abstract_eval = _argsort_aval
argsort_p.reference = _argsort_reference
argsort_p.cpu = lambda k, x, *, dimension, descending, index_dtype: k.argsort(
    x, dimension, descending, index_dtype)
argsort_p.jvp = INTEGER_OUTPUT
argsort_p.transpose = NONLINEAR
argsort_p.batch = BATCHING

top_k_p = Primitive("top_k", multiple_results=True)
top_k_p.abstract_eval = _top_k_aval
top_k_p.reference = _top_k_reference
# the kernel namespace is passed positionally: `k` is top_k's own parameter
top_k_p.cpu = lambda kernels, x, *, k, axis: list(kernels.top_k(x, k, axis))
top_k_p.jvp = AUTODIFF
top_k_p.transpose = NONLINEAR
top_k_p.batch = BATCHING
