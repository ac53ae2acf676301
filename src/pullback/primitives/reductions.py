"""Reductions, arg-reductions and cumulative ops (backends/cpu/csrc/reduce.c).

One C table row per op serves all three kernel kinds: ``reduce(op, x, axes)``,
``cumulative(op, x, axis, reverse)`` and, for the max/min rows, ``argreduce(op, x, axis,
index_dtype)``. float16/bfloat16 accumulate in float32 and round once per stored element.

Semantics (as JAX): empty reductions give the identity (0, 1, -inf or the integer minimum, +inf
or the integer maximum, all-ones/True, 0/False); max/min propagate NaN; argmax/argmin return the
first occurrence of the extreme, NaN counting as the extreme; integer sums and products wrap.

Derivatives: reduce_sum and cumsum are linear. reduce_max/reduce_min share the tangent equally
among the elements that attain the extreme (as JAX; NaN where the extreme is NaN or the
reduction is empty); cummax/cummin do the same over each prefix, so ``cummax(x)[-1]`` and
``reduce_max(x)`` have one derivative. reduce_prod and cumprod never divide, so zeros in the
operand get exact derivatives. The cumulative jvps solve the first-order linear recurrence
``d[i] = a[i] * d[i-1] + b[i]`` of their tangent by recursive doubling: log2(n) steps of
element-wise work, each linear in the tangent.
"""
from __future__ import annotations

import math
import struct
from typing import Callable

import numpy as np

from ..tracer import dtypes
from ..tracer.array import Array
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive, get_aval, not_applicable
# modules, not names: the families' rules refer to each other, so a name may not exist yet
# while these modules are being imported
from . import building_blocks, conversion as _cv, elementwise as _ew, movement as _mv
from .rules import INTEGER_OUTPUT, NONLINEAR, Kernel, Zero, linear_jvp

_HALVES = (dtypes.float16, dtypes.bfloat16)
_INTS = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64,
         dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64)
_FLOATS = _HALVES + (dtypes.float32, dtypes.float64)
_COMPLEX = (dtypes.complex64, dtypes.complex128)

# The dtypes each family of ops accepts, with the words an error uses for them.
NUMBER = (_INTS + _FLOATS + _COMPLEX, "a numeric (integer, floating or complex)")
REAL = ((dtypes.bool_,) + _INTS + _FLOATS, "a boolean, integer or floating")
REAL_NUMBER = (_INTS + _FLOATS, "an integer or floating")
LOGICAL = ((dtypes.bool_,) + _INTS, "a boolean or integer")
FLOATING = (_FLOATS, "a floating")

# The dtypes each kernel of reduce.c is declared for, by kernel kind and name: the C table is
# checked against these when the CPU backend loads (backends/cpu/op_facts.py).
KERNEL_DTYPES: dict[str, dict[str, tuple]] = {"reduce": {}, "cumulative": {}, "arg": {}}

LOGICAL_OUTPUT = not_applicable("boolean or integer output of a bitwise reduction: not "
                                "differentiable")


def check_dtype(name: str, aval: ShapedArray, kinds: tuple, arg: str = "operand") -> None:
    """Raises a TypeError naming op ``name`` unless ``aval``'s dtype is one of ``kinds``."""
    allowed, words = kinds
    if aval.dtype not in allowed:
        raise TypeError(f"{name}: argument '{arg}' must be {words} array, got {aval.dtype}"
                        + (" (float8 types are storage formats: convert to a wider float first)"
                           if aval.dtype in dtypes.FLOAT8 else ""))


def check_axis(name: str, aval: ShapedArray, axis: int, arg: str = "axis") -> None:
    """Raises unless ``axis`` is an int in [0, ndim) of ``aval``."""
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"{name}: argument '{arg}' must be an int, got {axis!r}")
    if not 0 <= axis < aval.ndim:
        raise ValueError(f"{name}: argument '{arg}' is {axis}, out of range for an operand of "
                         f"shape {aval.shape}")


def via_float32(f: Callable) -> Callable:
    """A NumPy reference that computes halves in float32 and rounds once, as the kernels do."""
    def ref(x: np.ndarray, **params) -> np.ndarray:
        with np.errstate(all="ignore"):  # inf - inf and the like are IEEE results, not errors
            if x.dtype in _HALVES:
                return np.asarray(f(x.astype(np.float32), **params)).astype(x.dtype)
            return np.asarray(f(x, **params))
    return ref


# ---- rule helpers ----

def axis_param_batcher(prim: Primitive, param: str, drops: bool = False) -> Callable:
    """The batching rule of a one-operand primitive whose ``param`` names operand axes (an int
    or a tuple of ints). The batch dim stays where it is (no data moves) and the axes are
    renumbered around it; with ``drops`` the named axes are reduced away, so the batch dim
    moves down past those before it."""
    def rule(vals, dims, **params):
        (x,), (b,) = vals, dims
        axes = params[param]
        logical = axes if isinstance(axes, tuple) else (axes,)
        physical = tuple(a + (a >= b) for a in logical)
        params[param] = physical if isinstance(axes, tuple) else physical[0]
        out = prim.bind(x, **params)
        out_b = b - sum(a < b for a in logical) if drops else b
        return out, [out_b] * len(out) if prim.multiple_results else out_b
    return rule


def _kept(ndim: int, axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(i for i in range(ndim) if i not in axes)


def _scalar(value, dtype: np.dtype) -> Array:
    return Array(np.array(value, dtype))


def _as(x, dtype: np.dtype):
    return _cv.convert_element_type_p.bind(x, new_dtype=dtype, weak_type=False)


def _pad_axis(x, axis: int, lo: int, hi: int, fill):
    """``x`` padded along ``axis`` by ``lo``/``hi`` elements of ``fill`` (negative: cropped)."""
    config = tuple((lo, hi, 0) if d == axis else (0, 0, 0) for d in range(get_aval(x).ndim))
    return _mv.pad_p.bind(x, _scalar(fill, get_aval(x).dtype), padding_config=config)


def _slice_axis(x, axis: int, start: int, stop: int):
    shape = get_aval(x).shape
    starts = tuple(start if d == axis else 0 for d in range(len(shape)))
    limits = tuple(stop if d == axis else n for d, n in enumerate(shape))
    return _mv.slice_p.bind(x, start_indices=starts, limit_indices=limits, strides=None)


def _shift(x, axis: int, by: int, reverse: bool, fill):
    """``x`` moved ``by`` places along ``axis`` in scan order (towards the end, or the start
    when ``reverse``): element i holds the one ``by`` places earlier in the scan, or ``fill``."""
    return _pad_axis(x, axis, -by, by, fill) if reverse else _pad_axis(x, axis, by, -by, fill)


def _times_earlier(a, b, axis: int, by: int, reverse: bool):
    """``a[i] * b[i - by]`` along ``axis`` in scan order, 0 where ``i - by`` is before the start.
    (Not ``a * shift(b)``: a shifted-in zero times an infinite ``a`` would be NaN.)"""
    n = get_aval(b).shape[axis]
    if reverse:
        prod = _ew.mul_p.bind(_slice_axis(a, axis, 0, n - by), _slice_axis(b, axis, by, n))
        return _pad_axis(prod, axis, 0, by, 0)
    prod = _ew.mul_p.bind(_slice_axis(a, axis, by, n), _slice_axis(b, axis, 0, n - by))
    return _pad_axis(prod, axis, by, 0, 0)


def _linear_recurrence(a, b, axis: int, reverse: bool):
    """``d`` with ``d[i] = a[i] * d[i-1] + b[i]`` along ``axis`` in scan order (``d[-1] = 0``),
    by recursive doubling: after the step of width ``w``, ``b[i]`` holds the recurrence over
    the window ``(i - 2w, i]`` and ``a[i]`` the product of ``a`` over it. Linear in ``b``."""
    n = get_aval(b).shape[axis]
    width = 1
    while width < n:
        b = _ew.add_p.bind(b, _times_earlier(a, b, axis, width, reverse))
        if 2 * width < n:
            a = _ew.mul_p.bind(a, _shift(a, axis, width, reverse, 1))
        width *= 2
    return b


def _exp_of_difference(a, b):
    """``exp(a - b)`` (``a <= b``), and 1 where ``a == b``, also where both are one infinity
    (``a - b`` is NaN there: it is replaced before ``exp`` so no NaN reaches a derivative)."""
    aval = get_aval(a)
    zeros = _mv.broadcast_in_dim_p.bind(_scalar(0, aval.dtype), shape=aval.shape,
                                        broadcast_dimensions=())
    diff = _ew.select_n_p.bind(_ew.eq_p.bind(a, b), _ew.sub_p.bind(a, b), zeros)
    return _ew.exp_p.bind(diff)


# ---- reductions over a set of axes ----

def _reduce_aval(name: str, kinds: tuple, x: ShapedArray, *, axes: tuple[int, ...]) -> ShapedArray:
    if not isinstance(axes, tuple) or any(not isinstance(a, int) for a in axes):
        raise TypeError(f"{name}: argument 'axes' must be a tuple of ints, got {axes!r}")
    if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
        raise ValueError(f"{name}: argument 'axes' must hold distinct axes in [0, {x.ndim}) for "
                         f"an operand of shape {x.shape}, got {axes}")
    check_dtype(name, x, kinds)
    shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return ShapedArray(shape, x.dtype, x.weak_type)


def _extreme(dtype: np.dtype, largest: bool):
    """The identity of max (``largest`` False: the smallest value) or min."""
    if dtype == dtypes.bool_:
        return largest
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.max if largest else info.min
    return np.inf if largest else -np.inf


def _declare_reduce(name: str | Primitive, kinds: tuple, reference: Callable, jvp,
                    transpose) -> Primitive:
    """A reduction; ``jvp`` builds the jvp rule from the primitive (or is a NoRule). ``name``
    may be a primitive building_blocks.py declares."""
    p = name if isinstance(name, Primitive) else Primitive(name)
    name = p.name
    KERNEL_DTYPES["reduce"][name] = kinds[0]
    p.abstract_eval = lambda x, *, axes: _reduce_aval(name, kinds, x, axes=axes)
    p.reference = reference
    p.cpu = lambda k, x, *, axes: k.reduce(k.REDUCE_OPS[name], x, axes)
    p.jvp = jvp(p) if callable(jvp) else jvp
    p.transpose = transpose
    p.batch = axis_param_batcher(p, "axes", drops=True)
    return p


def _bitwise(ufunc: np.ufunc) -> Callable:
    return lambda x, *, axes: np.asarray(ufunc.reduce(x, axis=axes)).astype(x.dtype)


def _reduce_sum_transpose(ct, x, *, axes):
    aval = x.aval
    if type(ct) is Zero:
        return [Zero(aval)]
    return [_mv.broadcast_in_dim_p.bind(ct, shape=aval.shape,
                                        broadcast_dimensions=_kept(aval.ndim, axes))]


def _reduce_prod_jvp(prim: Primitive) -> Callable:
    """reduce_prod: each tangent times the product of the other elements of its slice."""
    def rule(primals, tangents, *, axes):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axes=axes)
        if not axes:
            return out, t
        if any(get_aval(x).shape[a] == 0 for a in axes):  # an empty product is the constant 1
            return out, Zero.from_primal(out)
        others = _products_of_the_others(x, axes)
        return out, reduce_sum_p.bind(_ew.mul_p.bind(t, others), axes=axes)
    return rule


def _products_of_the_others(x, axes: tuple[int, ...]):
    """For each element, the product of the other elements of its reduced slice: the reduced
    axes are flattened into one, and its exclusive prefix and suffix products multiplied (no
    division, so zeros are exact)."""
    if len(axes) == 1:
        return _exclusive_products(x, axes[0])
    aval = get_aval(x)
    kept = _kept(aval.ndim, axes)
    perm = kept + tuple(axes)
    moved = _mv.transpose_p.bind(x, permutation=perm)
    moved_shape = get_aval(moved).shape
    n = math.prod(aval.shape[a] for a in axes)
    flat = _mv.reshape_p.bind(moved, new_sizes=moved_shape[:len(kept)] + (n,), dimensions=None)
    others = _exclusive_products(flat, len(kept))
    others = _mv.reshape_p.bind(others, new_sizes=moved_shape, dimensions=None)
    return _mv.transpose_p.bind(others, permutation=tuple(np.argsort(perm).tolist()))


def _exclusive_products(x, axis: int):
    before = _shift(cumprod_p.bind(x, axis=axis, reverse=False), axis, 1, False, 1)
    after = _shift(cumprod_p.bind(x, axis=axis, reverse=True), axis, 1, True, 1)
    return _ew.mul_p.bind(before, after)


def _chooser_jvp(prim: Primitive) -> Callable:
    """reduce_max/reduce_min: the mean of the tangents where the operand attains the result."""
    def rule(primals, tangents, *, axes):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axes=axes)
        aval = get_aval(x)
        spread = _mv.broadcast_in_dim_p.bind(out, shape=aval.shape,
                                             broadcast_dimensions=_kept(aval.ndim, axes))
        attains = _as(_ew.eq_p.bind(x, spread), aval.dtype)
        counts = reduce_sum_p.bind(attains, axes=axes)
        picked = reduce_sum_p.bind(_ew.mul_p.bind(t, attains), axes=axes)
        return out, _ew.div_p.bind(picked, counts)
    return rule


reduce_sum_p = _declare_reduce(
    building_blocks.reduce_sum_p, NUMBER,
    via_float32(lambda x, axes: np.sum(x, axis=axes, dtype=x.dtype)),
    linear_jvp, _reduce_sum_transpose)
reduce_prod_p = _declare_reduce(
    "reduce_prod", NUMBER, via_float32(lambda x, axes: np.prod(x, axis=axes, dtype=x.dtype)),
    _reduce_prod_jvp, NONLINEAR)
reduce_max_p = _declare_reduce(
    "reduce_max", REAL,
    via_float32(lambda x, axes: np.max(x, axis=axes, initial=_extreme(x.dtype, False))),
    _chooser_jvp, NONLINEAR)
reduce_min_p = _declare_reduce(
    "reduce_min", REAL,
    via_float32(lambda x, axes: np.min(x, axis=axes, initial=_extreme(x.dtype, True))),
    _chooser_jvp, NONLINEAR)
reduce_and_p = _declare_reduce("reduce_and", LOGICAL, _bitwise(np.bitwise_and), LOGICAL_OUTPUT,
                               NONLINEAR)
reduce_or_p = _declare_reduce("reduce_or", LOGICAL, _bitwise(np.bitwise_or), LOGICAL_OUTPUT,
                              NONLINEAR)
reduce_xor_p = _declare_reduce("reduce_xor", LOGICAL, _bitwise(np.bitwise_xor), LOGICAL_OUTPUT,
                               NONLINEAR)


# ---- argmax / argmin ----

def _arg_aval(name: str, x: ShapedArray, *, axes: tuple[int, ...], index_dtype: np.dtype
              ) -> ShapedArray:
    if not isinstance(axes, tuple) or len(axes) != 1:
        raise TypeError(f"{name}: argument 'axes' must be a tuple of one axis, got {axes!r}")
    (axis,) = axes
    check_axis(name, x, axis)
    check_dtype(name, x, REAL)
    if not isinstance(index_dtype, np.dtype) or index_dtype.kind not in "iu":
        raise TypeError(f"{name}: argument 'index_dtype' must be an integer dtype, got "
                        f"{index_dtype}")
    if x.shape[axis] == 0:
        raise ValueError(f"{name}: argument 'operand' has shape {x.shape}, but the reduced axis "
                         f"{axis} must not be empty")
    if x.shape[axis] - 1 > np.iinfo(index_dtype).max:
        raise ValueError(f"{name}: argument 'index_dtype' {index_dtype} cannot hold the indices "
                         f"of an axis of size {x.shape[axis]}")
    shape = tuple(d for i, d in enumerate(x.shape) if i != axis)
    return ShapedArray(shape, index_dtype, False)


def _arg_reference(np_fn: Callable) -> Callable:
    def ref(x: np.ndarray, *, axes: tuple[int, ...], index_dtype: np.dtype) -> np.ndarray:
        if x.dtype in _HALVES:
            x = x.astype(np.float32)
        return np.asarray(np_fn(x, axis=axes[0])).astype(index_dtype)
    return ref


# the kernels' parameter structs (csrc/reduce.c: argreduce_params, cumulative_params)
_ARG_PARAMS = struct.Struct("=i")           # axis
_CUMULATIVE_PARAMS = struct.Struct("=2i")   # axis, reverse


def _declare_arg(name: str, np_fn: Callable) -> Primitive:
    p = Primitive(name)
    KERNEL_DTYPES["arg"][name] = REAL[0]
    p.abstract_eval = lambda x, *, axes, index_dtype: _arg_aval(name, x, axes=axes,
                                                                index_dtype=index_dtype)
    p.reference = _arg_reference(np_fn)
    p.cpu = Kernel(p, name, lambda x, *, axes, index_dtype: _ARG_PARAMS.pack(axes[0]))
    p.jvp = INTEGER_OUTPUT
    p.transpose = NONLINEAR
    p.batch = axis_param_batcher(p, "axes", drops=True)
    return p


# NumPy's argmax/argmin also return the first NaN: the independent oracle is the same rule.
argmax_p = _declare_arg("argmax", np.argmax)
argmin_p = _declare_arg("argmin", np.argmin)


# ---- cumulative ops ----

def _cumulative_aval(name: str, kinds: tuple, x: ShapedArray, *, axis: int, reverse: bool
                     ) -> ShapedArray:
    check_axis(name, x, axis)
    if not isinstance(reverse, bool):
        raise TypeError(f"{name}: argument 'reverse' must be a bool, got {reverse!r}")
    check_dtype(name, x, kinds)
    return x


def _scan_reference(accumulate: Callable) -> Callable:
    def f(x: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
        if reverse:
            return np.flip(accumulate(np.flip(x, axis), axis), axis)
        return accumulate(x, axis)
    return via_float32(f)


def _declare_cumulative(name: str, kinds: tuple, accumulate: Callable, jvp, transpose
                        ) -> Primitive:
    """A cumulative op; ``jvp`` builds the jvp rule from the primitive."""
    p = Primitive(name)
    KERNEL_DTYPES["cumulative"][name] = kinds[0]
    p.abstract_eval = lambda x, *, axis, reverse: _cumulative_aval(name, kinds, x, axis=axis,
                                                                   reverse=reverse)
    p.reference = _scan_reference(accumulate)
    p.cpu = Kernel(p, name, lambda x, *, axis, reverse: _CUMULATIVE_PARAMS.pack(axis, reverse))
    p.jvp = jvp(p)
    p.transpose = transpose
    p.batch = axis_param_batcher(p, "axis")
    return p


def _cumsum_transpose(ct, x, *, axis, reverse):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    return [cumsum_p.bind(ct, axis=axis, reverse=not reverse)]


def _cumprod_jvp(prim: Primitive) -> Callable:
    """d out[i] = x[i] * d out[i-1] + t[i] * out[i-1]."""
    def rule(primals, tangents, *, axis, reverse):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axis=axis, reverse=reverse)
        earlier = _shift(out, axis, 1, reverse, 1)
        return out, _linear_recurrence(x, _ew.mul_p.bind(t, earlier), axis, reverse)
    return rule


def _cumlogsumexp_jvp(prim: Primitive) -> Callable:
    """d out[i] = exp(out[i-1] - out[i]) * d out[i-1] + exp(x[i] - out[i]) * t[i]: the
    factors are at most 1, so nothing overflows."""
    def rule(primals, tangents, *, axis, reverse):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axis=axis, reverse=reverse)
        decay = _exp_of_difference(_shift(out, axis, 1, reverse, -np.inf), out)
        weight = _exp_of_difference(x, out)
        return out, _linear_recurrence(decay, _ew.mul_p.bind(t, weight), axis, reverse)
    return rule


def _cumulative_chooser_jvp(prim: Primitive) -> Callable:
    """cummax/cummin: at each i, the mean of the tangents of the elements of the prefix that
    attain out[i] (as reduce_max over the prefix). Those elements all lie in i's run of equal
    results out[j]; with ties[i] the number of them up to i,
    d out[i] = [same run] * ties[i-1] / ties[i] * d out[i-1] + [x[i] attains] * t[i] / ties[i]."""
    def rule(primals, tangents, *, axis, reverse):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axis=axis, reverse=reverse)
        dtype = get_aval(x).dtype
        attains = _as(_ew.eq_p.bind(x, out), dtype)
        # NaN shifted in: the first element starts a run; a NaN result starts one everywhere
        same_run = _as(_ew.eq_p.bind(out, _shift(out, axis, 1, reverse, np.nan)), dtype)
        ties = _linear_recurrence(same_run, attains, axis, reverse)
        decay = _ew.div_p.bind(_ew.mul_p.bind(same_run, _shift(ties, axis, 1, reverse, 0)), ties)
        share = _ew.div_p.bind(attains, ties)
        return out, _linear_recurrence(decay, _ew.mul_p.bind(t, share), axis, reverse)
    return rule


cumsum_p = _declare_cumulative(
    "cumsum", NUMBER, lambda x, axis: np.cumsum(x, axis=axis, dtype=x.dtype), linear_jvp,
    _cumsum_transpose)
cumprod_p = _declare_cumulative(
    "cumprod", NUMBER, lambda x, axis: np.cumprod(x, axis=axis, dtype=x.dtype), _cumprod_jvp,
    NONLINEAR)
cummax_p = _declare_cumulative(
    "cummax", REAL_NUMBER, lambda x, axis: np.maximum.accumulate(x, axis=axis),
    _cumulative_chooser_jvp, NONLINEAR)
cummin_p = _declare_cumulative(
    "cummin", REAL_NUMBER, lambda x, axis: np.minimum.accumulate(x, axis=axis),
    _cumulative_chooser_jvp, NONLINEAR)
cumlogsumexp_p = _declare_cumulative(
    "cumlogsumexp", FLOATING, lambda x, axis: np.logaddexp.accumulate(x, axis=axis),
    _cumlogsumexp_jvp, NONLINEAR)
