"""Dtype conversion primitives (backends/cpu/csrc/cast.c).

``convert_element_type`` converts values between any two of the 19 dtypes. C leaves several
conversions undefined; pullback defines them (as XLA does on CPU):

- float -> integer truncates toward zero; values beyond the integer range and infinities
  saturate to its limits; NaN becomes 0.
- integer -> narrower integer wraps (two's complement); integer -> float rounds to nearest even.
- x -> bool is ``x != 0`` (NaN is True); bool -> x is 0 or 1.
- complex -> any real dtype (bool included, as in JAX) takes the real part; real -> complex
  has imaginary part 0.
- bfloat16 and the float8 formats are reached through float32 (round to float32, then to the
  narrow format, each to nearest even), exactly as ml_dtypes and XLA convert. float8 overflow
  follows each format: e5m2 gives inf; e4m3fn, e4m3fnuz and e5m2fnuz (no infinity) give NaN;
  the fnuz formats have no -0.

``bitcast_convert_type`` reinterprets the bytes of each element (zero-copy when the layout
allows), with JAX's shape rule.

Derivatives (as JAX): ``convert_element_type`` is linear between inexact dtypes (its tangent
and its transpose convert back; complex -> real keeps the real part, and its transpose is a
complex cotangent with imaginary part 0); converting to or from an integer or bool carries no
derivative. ``bitcast_convert_type`` has a zero derivative (its result is not a smooth function
of its operand).
"""
from __future__ import annotations

import numpy as np

from ..tracer import dtypes
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive, get_aval
from .rules import NONLINEAR, Zero, check_examples, move_bdim


def check_dtype(op: str, arg: str, dtype) -> np.dtype:
    """``dtype`` as a supported np.dtype, or a TypeError naming the op and argument."""
    try:
        d = np.dtype(dtype)
    except TypeError:
        d = None
    if d is None or d not in dtypes.SUPPORTED:
        raise TypeError(f"{op}: argument '{arg}' must be a supported dtype "
                        f"({', '.join(str(s) for s in dtypes.SUPPORTED)}), got {dtype!r}")
    return d


# ---- convert_element_type ----

def _convert_aval(operand: ShapedArray, *, new_dtype, weak_type) -> ShapedArray:
    new_dtype = check_dtype("convert_element_type", "new_dtype", new_dtype)
    return ShapedArray(operand.shape, new_dtype, bool(weak_type))


def _convert_cpu(k, x: np.ndarray, *, new_dtype, weak_type) -> np.ndarray:
    # Arrays are immutable, so a same-dtype conversion (weak type only) can share x.
    return x if x.dtype == new_dtype else k.convert(x, new_dtype)


def _saturate(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    hi = 2.0 ** (info.bits - 1 if info.min else info.bits)
    lo = float(info.min)
    inside = (x > lo) & (x < hi)
    r = np.where(inside, x, 0).astype(dtype)
    r = np.where(x >= hi, info.max, r)
    return np.where(x <= lo, info.min, r).astype(dtype)


_NARROW_FLOATS = (dtypes.bfloat16,) + dtypes.FLOAT8


def convert_reference(x: np.ndarray, new_dtype: np.dtype) -> np.ndarray:
    """The NumPy oracle of convert_element_type (the semantics in this module's docstring)."""
    with np.errstate(all="ignore"):  # overflow and NaN have defined results here
        return _convert_reference(np.asarray(x), new_dtype)


def _convert_reference(x: np.ndarray, new_dtype: np.dtype) -> np.ndarray:
    if x.dtype == new_dtype:
        return x.copy()
    if dtypes.is_complex(x.dtype) and not dtypes.is_complex(new_dtype):
        x = x.real
    if x.dtype in _NARROW_FLOATS or x.dtype == dtypes.float16:
        x = x.astype(np.float32)  # exact
    if new_dtype == dtypes.bool_:
        return x != 0
    if dtypes.is_integer(new_dtype) and x.dtype.kind == "f":
        return _saturate(x, new_dtype)
    if new_dtype in _NARROW_FLOATS:
        x = x.astype(np.float32)
    return x.astype(new_dtype)


def _convert_jvp(primals, tangents, *, new_dtype, weak_type):
    (x,), (t,) = primals, tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if type(t) is Zero or not dtypes.is_inexact(new_dtype):
        return out, Zero.from_primal(out)  # to integer or bool: a float0 zero
    return out, convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=weak_type)


def _convert_transpose(ct, operand, *, new_dtype, weak_type):
    aval = operand.aval  # the one operand is what the transpose solves for
    if type(ct) is Zero:
        return [Zero(aval)]
    # back to the operand's dtype: complex -> real keeps the real part, real -> complex
    # gets imaginary part 0, which is exactly the adjoint of the forward conversion
    return [convert_element_type_p.bind(ct, new_dtype=aval.dtype, weak_type=aval.weak_type)]


def _convert_batch(vals, dims, *, new_dtype, weak_type):
    (x,), (d,) = vals, dims
    return convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type), d


convert_element_type_p = Primitive("convert_element_type")
convert_element_type_p.abstract_eval = _convert_aval
convert_element_type_p.cpu = _convert_cpu
convert_element_type_p.reference = lambda x, *, new_dtype, weak_type: convert_reference(x, new_dtype)
convert_element_type_p.jvp = _convert_jvp
convert_element_type_p.transpose = _convert_transpose
convert_element_type_p.batch = _convert_batch


# ---- bitcast_convert_type ----

def _bitcast_aval(operand: ShapedArray, *, new_dtype) -> ShapedArray:
    new_dtype = check_dtype("bitcast_convert_type", "new_dtype", new_dtype)
    old = operand.dtype
    if old != new_dtype and (old.kind in "bc" or new_dtype.kind in "bc"):
        raise TypeError(f"bitcast_convert_type: bool and complex values can only be bitcast to "
                        f"their own dtype; got argument 'operand' of dtype {old} and "
                        f"'new_dtype' {new_dtype} (use convert_element_type to convert values)")
    ob, nb = old.itemsize, new_dtype.itemsize
    if ob == nb:
        shape = operand.shape
    elif ob > nb:
        shape = operand.shape + (ob // nb,)
    else:
        last = operand.shape[-1] if operand.shape else 1
        if last * ob != nb:
            raise ValueError(f"bitcast_convert_type: converting argument 'operand' of shape "
                             f"{operand.shape} from {old} ({8 * ob} bits) to {new_dtype} "
                             f"({8 * nb} bits) needs a trailing dimension of size {nb // ob}, "
                             f"got {last if operand.shape else 'a 0-d operand'}")
        shape = operand.shape[:-1]
    return ShapedArray(shape, new_dtype, False)


def _bitcast_cpu(k, x: np.ndarray, *, new_dtype) -> np.ndarray:
    v = k.reinterpret(x, new_dtype)
    return v if v is not None else k.reinterpret(k.copy(x), new_dtype)


def _bitcast_ref(x: np.ndarray, *, new_dtype) -> np.ndarray:
    x = np.asarray(x, order="C")  # np.ascontiguousarray would make a scalar 1-d
    ob, nb = x.itemsize, new_dtype.itemsize
    if ob >= nb:
        return x.reshape(x.shape + (1,)).view(new_dtype).reshape(
            x.shape + ((ob // nb,) if ob > nb else ()))
    return x.view(new_dtype).reshape(x.shape[:-1])


def _bitcast_jvp(primals, tangents, *, new_dtype):
    # as JAX: a zero tangent (float results too; the bits are not a smooth function)
    out = bitcast_convert_type_p.bind(primals[0], new_dtype=new_dtype)
    return out, Zero.from_primal(out)


def _bitcast_batch(vals, dims, *, new_dtype):
    (x,), (d,) = vals, dims
    check_examples(bitcast_convert_type_p, vals, dims, new_dtype=new_dtype)
    aval = get_aval(x)
    if d == aval.ndim - 1 and aval.dtype.itemsize < new_dtype.itemsize:
        # widening consumes the trailing dimension, which must be the example's own
        x, d = move_bdim(x, d, 0, aval.shape[d]), 0
    # the other dimensions keep their places (narrowing appends one after them all)
    return bitcast_convert_type_p.bind(x, new_dtype=new_dtype), d


bitcast_convert_type_p = Primitive("bitcast_convert_type")
bitcast_convert_type_p.abstract_eval = _bitcast_aval
bitcast_convert_type_p.cpu = _bitcast_cpu
bitcast_convert_type_p.reference = _bitcast_ref
bitcast_convert_type_p.jvp = _bitcast_jvp
bitcast_convert_type_p.transpose = NONLINEAR
bitcast_convert_type_p.batch = _bitcast_batch
