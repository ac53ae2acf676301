"""Dtype objects and queries: scalar types (``jnp.float32(1.0)`` makes an array), finfo,
iinfo, result_type, promote_types, issubdtype."""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from ..tracer import dtypes
from ..tracer.dtypes import promoted, result_type  # noqa: F401  (result_type: jnp's)
from ._creation import asarray


class _ScalarType:
    """A dtype that is also a constructor, as ``jnp.float32``: ``float32(x)`` is an array of
    that dtype, and ``np.dtype(float32)`` the dtype."""

    def __init__(self, dtype: np.dtype, name: str):
        self.dtype = dtype
        self.__name__ = self.__qualname__ = name

    def __call__(self, x: Any) -> Any:
        return asarray(x, dtype=self.dtype)

    def __repr__(self) -> str:
        return f"pullback.numpy.{self.__name__}"

    def __eq__(self, other: Any) -> bool:
        try:
            return np.dtype(other) == self.dtype
        except TypeError:
            return False

    def __hash__(self) -> int:
        return hash(self.dtype)


def _scalar(name: str, dt: np.dtype) -> _ScalarType:
    return _ScalarType(dt, name)


bool_ = _scalar("bool_", dtypes.bool_)
int8, int16 = _scalar("int8", dtypes.int8), _scalar("int16", dtypes.int16)
int32, int64 = _scalar("int32", dtypes.int32), _scalar("int64", dtypes.int64)
uint8, uint16 = _scalar("uint8", dtypes.uint8), _scalar("uint16", dtypes.uint16)
uint32, uint64 = _scalar("uint32", dtypes.uint32), _scalar("uint64", dtypes.uint64)
float16, bfloat16 = _scalar("float16", dtypes.float16), _scalar("bfloat16", dtypes.bfloat16)
float32, float64 = _scalar("float32", dtypes.float32), _scalar("float64", dtypes.float64)
complex64, complex128 = _scalar("complex64", dtypes.complex64), _scalar("complex128", dtypes.complex128)
float8_e4m3fn = _scalar("float8_e4m3fn", dtypes.float8_e4m3fn)
float8_e5m2 = _scalar("float8_e5m2", dtypes.float8_e5m2)
float_, int_, uint, complex_ = float32, int32, uint32, complex64

# abstract kinds, for issubdtype
generic, number, inexact, floating = np.generic, np.number, np.inexact, np.floating
complexfloating, integer = np.complexfloating, np.integer
signedinteger, unsignedinteger = np.signedinteger, np.unsignedinteger


def dtype(obj: Any, align: bool = False, copy: bool = False) -> np.dtype:
    """The dtype described by ``obj`` (Python float → float32, int → int32, as JAX)."""
    return dtypes.canonicalize(obj)


def finfo(dt: Any) -> Any:
    """Machine limits of a floating dtype (bfloat16, float8, float6 and float4 included)."""
    return ml_dtypes.finfo(_info_dtype(dt))


def iinfo(int_type: Any) -> Any:
    """Machine limits of an integer dtype (int4/uint4, int2, ... included)."""
    return ml_dtypes.iinfo(_info_dtype(int_type))


def _info_dtype(dt: Any) -> np.dtype:
    # the narrow ml_dtypes formats JAX names have limits even where pullback has no arrays
    d = _to_dtype(dt.dtype if isinstance(dt, _ScalarType) else dt)
    try:
        return dtypes.canonicalize(d)
    except TypeError:
        return np.dtype(d)


def _to_dtype(x: Any) -> Any:
    aval = getattr(x, "aval", None)
    return aval.dtype if aval is not None else x


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """Whether ``arg1`` is ``arg2`` or a kind below it (knows bfloat16 and float8 are
    floating)."""
    abstract = (np.generic, np.number, np.inexact, np.floating, np.complexfloating,
                np.integer, np.signedinteger, np.unsignedinteger)
    d1 = arg1 if arg1 in abstract else np.dtype(_to_dtype(
        arg1.dtype if isinstance(arg1, _ScalarType) else arg1))
    kinds = None
    if isinstance(d1, np.dtype) and d1.kind == "V" and d1 != dtypes.float0:
        # ml_dtypes' formats (bfloat16, float8/6/4, int4, uint2, ...) are not NumPy subtypes
        if d1 in dtypes.INEXACT_FLOATS or d1.name.startswith("float"):
            kinds = (np.floating, np.inexact, np.number, np.generic)
        elif d1.name.startswith("uint"):
            kinds = (np.unsignedinteger, np.integer, np.number, np.generic)
        elif d1.name.startswith("int"):
            kinds = (np.signedinteger, np.integer, np.number, np.generic)
    if kinds is not None:
        if isinstance(arg2, type) and arg2 in kinds:
            return True
        try:
            return np.dtype(arg2) == d1
        except TypeError:
            return False
    if isinstance(arg2, _ScalarType):
        arg2 = arg2.dtype
    return bool(np.issubdtype(d1, arg2))


def promote_types(a: Any, b: Any) -> np.dtype:
    """The dtype JAX's promotion lattice gives two dtypes."""
    return promoted(((dtypes.canonicalize(_to_dtype(a)), False),
                     (dtypes.canonicalize(_to_dtype(b)), False)))[0]


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    """Whether a cast is allowed under NumPy's casting rule ``casting``."""
    return bool(np.can_cast(np.dtype(_to_dtype(from_)), np.dtype(_to_dtype(to)), casting))


def isdtype(dtype_: Any, kind: Any) -> bool:
    """Array-API dtype kind test ('bool', 'signed integer', 'real floating', ...)."""
    d = dtypes.canonicalize(_to_dtype(dtype_))
    table = {"bool": d == dtypes.bool_, "signed integer": d.kind == "i",
             "unsigned integer": d.kind == "u", "integral": d.kind in "iu",
             "real floating": dtypes.is_float(d), "complex floating": d.kind == "c",
             "numeric": d != dtypes.bool_}
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return any(table[k] if isinstance(k, str) else d == dtypes.canonicalize(_to_dtype(k))
               for k in kinds)
