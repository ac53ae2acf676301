"""``pullback.dtypes``, as ``jax.dtypes``: dtype queries under JAX's rules (promotion lattice,
``jax_enable_x64`` canonicalization) and the special dtypes."""
from __future__ import annotations

from typing import Any as _Any

import numpy as _np

from .numpy import finfo, iinfo, issubdtype, result_type  # noqa: F401
from .tracer import dtypes as _dtypes
from .tracer.dtypes import TypePromotionError, bfloat16, float0  # noqa: F401

__all__ = ["TypePromotionError", "bfloat16", "canonicalize_dtype", "extended", "finfo",
           "float0", "iinfo", "issubdtype", "itemsize_bits", "prng_key", "result_type",
           "scalar_type_of"]


class extended(_np.generic):
    """The abstract scalar type of JAX's extended dtypes (``issubdtype(dt, dtypes.extended)``);
    pullback's PRNG keys are arrays of uint32, so no pullback dtype is one."""


class prng_key(extended):
    """The abstract scalar type of typed PRNG key dtypes (none in pullback: see ``extended``)."""


def canonicalize_dtype(dtype: _Any, allow_extended_dtype: bool = False) -> _np.dtype:
    """The dtype arrays of ``dtype`` get: 64-bit types narrowed unless ``jax_enable_x64``."""
    return _dtypes.canonical(_np.dtype(dtype))


def scalar_type_of(x: _Any) -> type:
    """The Python scalar type (bool, int, float, complex) of a value's dtype."""
    dt = getattr(x, "dtype", None)
    dt = _np.dtype(dt) if dt is not None else _dtypes.dtype_of_python(x)[0]
    if dt == _np.bool_:
        return bool
    if _np.issubdtype(dt, _np.integer):
        return int
    if _np.issubdtype(dt, _np.complexfloating):
        return complex
    if _dtypes.is_float(dt):
        return float
    raise TypeError(f"Invalid scalar value {x!r}")


def itemsize_bits(dtype: _Any) -> int:
    """Bits per element of ``dtype`` (4 for int4, 8 for float8, ...)."""
    dt = _np.dtype(dtype)
    if dt == float0:
        return 0
    name = dt.name
    if name in ("int4", "uint4", "float4_e2m1fn"):
        return 4
    if name in ("int2", "uint2"):
        return 2
    if name in ("int1", "uint1"):
        return 1
    if name.startswith("float6_"):
        return 6
    return dt.itemsize * 8


def __dir__() -> list[str]:
    return sorted(__all__)
