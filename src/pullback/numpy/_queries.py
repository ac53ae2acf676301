"""Array queries and small utilities: ndim, shape, size, isscalar, iterable, iscomplex,
isreal, iscomplexobj, isrealobj; printing options and array_str/array_repr (NumPy's, on the
values); packbits/unpackbits; fromfunction, frombuffer, fromstring, fromiter, fromfile; the
dtype aliases NumPy spells differently (single, double, csingle, cdouble, ...) and the narrow
ml_dtypes formats JAX exports."""
from __future__ import annotations

import operator
from typing import Any, Callable, Sequence

import ml_dtypes
import numpy as np

from .. import lax
from ..tracer import dtypes
from ..tracer.array import Array
from ..tracer.core import Tracer
from ..transforms.vmap import vmap
from ._creation import arange, asarray
from ._dtype_info import _scalar
from ._padding import pad
from ._promotion import aval_of, convert
from ._reductions import sum as sum_
from ._shape import expand_dims, ravel, reshape, swapaxes
from ._ufuncs import imag

ArrayLike = Any


def _is_array(x: Any) -> bool:
    return isinstance(x, (Array, Tracer, np.ndarray, np.generic))


def ndim(a: ArrayLike) -> int:
    """The number of dimensions of ``a`` (an array, scalar or nested sequence)."""
    return len(shape(a))


def shape(a: ArrayLike) -> tuple[int, ...]:
    """The shape of ``a`` (an array, scalar or nested sequence)."""
    if isinstance(a, (Array, Tracer)):
        return tuple(aval_of(a).shape)
    return tuple(np.shape(a))


def size(a: ArrayLike, axis: int | Sequence[int] | None = None) -> int:
    """The number of elements of ``a`` (along ``axis``, an int or tuple, if given)."""
    s = shape(a)
    if axis is None:
        out = 1
        for d in s:
            out *= d
        return out
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = 1
    for ax in axes:
        out *= s[ax]
    return out


def isscalar(element: Any) -> bool:
    """True for Python/NumPy scalars and 0-d arrays (as JAX, whose scalars are 0-d arrays)."""
    if _is_array(element) or hasattr(element, "__jax_array__") or np.isscalar(element):
        return ndim(element) == 0
    return False


def iterable(y: Any) -> bool:
    """Whether ``iter(y)`` works."""
    try:
        iter(y)
    except TypeError:
        return False
    return True


def iscomplexobj(x: Any) -> bool:
    """Whether ``x``'s dtype is complex (not its values)."""
    if x is None:
        return False
    try:
        dt = aval_of(x).dtype if isinstance(x, (Array, Tracer)) else np.asarray(x).dtype
    except (TypeError, ValueError):
        dt = np.result_type(x)
    return dtypes.is_complex(np.dtype(dt))


def isrealobj(x: Any) -> bool:
    """Whether ``x``'s dtype is not complex."""
    return not iscomplexobj(x)


def iscomplex(x: ArrayLike) -> Any:
    """Element-wise: the imaginary part is non-zero."""
    i = imag(asarray(x))
    return lax.ne(i, lax.full_like(i, 0))


def isreal(x: ArrayLike) -> Any:
    """Element-wise: the imaginary part is zero."""
    i = imag(asarray(x))
    return lax.eq(i, lax.full_like(i, 0))


# printing: NumPy's options (pullback's repr prints through NumPy)
printoptions = np.printoptions
get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions


def array_str(a: ArrayLike, max_line_width: int | None = None, precision: int | None = None,
              suppress_small: bool | None = None) -> str:
    """NumPy's ``array_str`` of ``a``'s values."""
    return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)


def array_repr(arr: ArrayLike, max_line_width: int | None = None,
               precision: int | None = None, suppress_small: bool | None = None) -> str:
    """``repr`` of an array with the given print options (``Array(...)`` for pullback ones)."""
    if not isinstance(arr, Array):
        arr = asarray(arr)
    with np.printoptions(**{k: v for k, v in (("linewidth", max_line_width),
                                               ("precision", precision),
                                               ("suppress", suppress_small)) if v is not None}):
        return repr(arr)


def _bit_order(name: str, bitorder: str) -> None:
    if bitorder not in ("little", "big"):
        raise ValueError(f"{name}: argument 'bitorder' must be 'little' or 'big', got "
                         f"{bitorder!r}")


def packbits(a: ArrayLike, axis: int | None = None, bitorder: str = "big") -> Any:
    """The elements of an integer or boolean array (non-zero = 1) packed into uint8 bytes
    along ``axis`` (flattened when None), the last byte padded with zeros."""
    arr = asarray(a)
    dt = aval_of(arr).dtype
    if not (dtypes.is_integer(dt) or dt == dtypes.bool_):
        raise TypeError(f"packbits: argument 'a' must be of integer or boolean dtype, got {dt}")
    _bit_order("packbits", bitorder)
    arr = convert(lax.ne(arr, lax.full_like(arr, 0, dt)), dtypes.uint8)
    bits = arange(8, dtype=np.uint8)
    if bitorder == "big":
        bits = bits[::-1]
    if axis is None:
        arr, axis = ravel(arr), 0
    arr = swapaxes(arr, axis, -1)
    shp = aval_of(arr).shape
    rem = shp[-1] % 8
    if rem:
        arr = pad(arr, [(0, 0)] * (len(shp) - 1) + [(0, 8 - rem)])
        shp = aval_of(arr).shape
    arr = reshape(arr, shp[:-1] + (shp[-1] // 8, 8))
    bits = expand_dims(bits, tuple(range(aval_of(arr).ndim - 1)))
    packed = convert(sum_(lax.shift_left(arr, lax.broadcast_in_dim(
        bits, aval_of(arr).shape, tuple(range(aval_of(arr).ndim)))), axis=-1,
        dtype=np.uint8), dtypes.uint8)
    return swapaxes(packed, axis, -1)


def unpackbits(a: ArrayLike, axis: int | None = None, count: int | None = None,
               bitorder: str = "big") -> Any:
    """The bits of a uint8 array as a uint8 array of 0s and 1s along ``axis`` (flattened when
    None), cut or zero-padded to ``count`` bits."""
    arr = asarray(a)
    if aval_of(arr).dtype != dtypes.uint8:
        raise TypeError(f"unpackbits: argument 'a' must be of dtype uint8, got "
                        f"{aval_of(arr).dtype}")
    _bit_order("unpackbits", bitorder)
    bits = lax.shift_left(lax.full((8,), 1, dtypes.uint8), arange(8, dtype=np.uint8))
    if bitorder == "big":
        bits = bits[::-1]
    if axis is None:
        arr, axis = ravel(arr), 0
    arr = swapaxes(arr, axis, -1)
    shp = aval_of(arr).shape
    full_shape = shp[:-1] + (8, shp[-1])
    x = lax.broadcast_in_dim(arr, full_shape, tuple(range(len(shp) - 1)) + (len(shp),))
    b = lax.broadcast_in_dim(bits, full_shape, (len(shp) - 1,))
    unpacked = convert(lax.gt(lax.bitwise_and(x, b), lax.full_like(x, 0)), dtypes.uint8)
    # (..., 8, n) -> (..., n, 8) -> (..., 8n): bit k of byte j lands at 8j + k
    unpacked = reshape(swapaxes(unpacked, -1, -2), shp[:-1] + (8 * shp[-1],))
    if count is not None:
        count = operator.index(count)
        n = aval_of(unpacked).shape[-1]
        if count > n:
            unpacked = pad(unpacked, [(0, 0)] * (len(shp) - 1) + [(0, count - n)])
        else:
            unpacked = unpacked[..., :count]
    return swapaxes(unpacked, axis, -1)


def fromfunction(function: Callable, shape: Sequence[int], *, dtype: Any = float,
                 **kwargs: Any) -> Any:
    """``function`` called (vectorized by vmap) with each coordinate's index arrays."""
    shp = tuple(operator.index(d) for d in shape)
    for i in range(len(shp)):
        in_axes = [0 if i == j else None for j in range(len(shp))]
        function = vmap(function, in_axes=tuple(in_axes[::-1]))
    return function(*(arange(s, dtype=dtype) for s in shp), **kwargs)


def frombuffer(buffer: bytes | Any, dtype: Any = float, count: int = -1,
               offset: int = 0) -> Any:
    """A 1-D array from the bytes of ``buffer`` (NumPy's interpretation)."""
    return asarray(np.frombuffer(buffer, dtype=dtypes.canonicalize(dtype), count=count,
                                 offset=offset))


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> Any:
    """A 1-D array of the numbers in the text ``string`` separated by ``sep``."""
    return asarray(np.fromstring(string, dtype=dtypes.canonicalize(dtype), count=count,
                                 sep=sep))


def fromiter(*args: Any, **kwargs: Any) -> Any:
    """Not available, as in JAX: an iterator may have side effects; use
    ``jnp.asarray(np.fromiter(...))``."""
    raise NotImplementedError("jnp.fromiter() is not implemented because it may be non-pure "
                              "and thus unsafe for use with JIT and other JAX "
                              "transformations. Consider using jnp.asarray(np.fromiter(...)) "
                              "instead, and if needed use jnp.array to make a copy.")


def fromfile(*args: Any, **kwargs: Any) -> Any:
    """Not available, as in JAX: reading a file is a side effect; use
    ``jnp.asarray(np.fromfile(...))``."""
    raise NotImplementedError("jnp.fromfile() is not implemented because it may be non-pure "
                              "and thus unsafe for use with JIT and other JAX "
                              "transformations. Consider using jnp.asarray(np.fromfile(...)) "
                              "instead, and if needed use jnp.array to make a copy.")


ComplexWarning = np.exceptions.ComplexWarning
character, flexible, object_ = np.character, np.flexible, np.object_
single, double = _scalar("single", dtypes.float32), _scalar("double", dtypes.float64)
csingle, cdouble = _scalar("csingle", dtypes.complex64), _scalar("cdouble", dtypes.complex128)
float8_e4m3fnuz = _scalar("float8_e4m3fnuz", dtypes.float8_e4m3fnuz)
float8_e5m2fnuz = _scalar("float8_e5m2fnuz", dtypes.float8_e5m2fnuz)
# the narrow formats JAX names (ml_dtypes'); usable as dtype objects (finfo, iinfo,
# issubdtype); arrays of them are not supported by pullback's kernels yet
int1, int2, int4 = (_scalar(n, np.dtype(getattr(ml_dtypes, n))) for n in ("int1", "int2", "int4"))
uint1, uint2, uint4 = (_scalar(n, np.dtype(getattr(ml_dtypes, n)))
                       for n in ("uint1", "uint2", "uint4"))
float4_e2m1fn = _scalar("float4_e2m1fn", np.dtype(ml_dtypes.float4_e2m1fn))
float6_e2m3fn = _scalar("float6_e2m3fn", np.dtype(ml_dtypes.float6_e2m3fn))
float6_e3m2fn = _scalar("float6_e3m2fn", np.dtype(ml_dtypes.float6_e3m2fn))
float8_e3m4 = _scalar("float8_e3m4", np.dtype(ml_dtypes.float8_e3m4))
float8_e4m3 = _scalar("float8_e4m3", np.dtype(ml_dtypes.float8_e4m3))
float8_e4m3b11fnuz = _scalar("float8_e4m3b11fnuz", np.dtype(ml_dtypes.float8_e4m3b11fnuz))
float8_e8m0fnu = _scalar("float8_e8m0fnu", np.dtype(ml_dtypes.float8_e8m0fnu))
