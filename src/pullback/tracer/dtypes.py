"""Dtypes, JAX's type-promotion lattice with weak types, and the dtype of Python values.

Python scalars are *weak*: they take the dtype of the array they meet (``x_f16 * 2.0`` stays
float16). The 64-bit policy is JAX's (``config.jax_enable_x64``): off (the default), Python
floats and ints default to float32 and int32, NumPy data of a 64-bit dtype becomes its 32-bit
counterpart (``canonical``) and an explicitly requested 64-bit dtype is truncated with JAX's
warning (``requested``); on, the defaults are float64 and int64 and 64-bit data is kept.
"""
from __future__ import annotations

import functools
import warnings
from typing import Any

import ml_dtypes
import numpy as np

from ..config import config

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
bfloat16 = np.dtype(ml_dtypes.bfloat16)
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)
float8_e4m3fn = np.dtype(ml_dtypes.float8_e4m3fn)
float8_e5m2 = np.dtype(ml_dtypes.float8_e5m2)
float8_e4m3fnuz = np.dtype(ml_dtypes.float8_e4m3fnuz)
float8_e5m2fnuz = np.dtype(ml_dtypes.float8_e5m2fnuz)
# The tangent dtype of integer and boolean values, as in JAX: a zero-size "no information" type.
float0 = np.dtype([("float0", np.void, 0)])

FLOAT8 = (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz)
INEXACT_FLOATS = (bfloat16, float16, float32, float64) + FLOAT8
SUPPORTED = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bfloat16, float16,
             float32, float64, complex64, complex128) + FLOAT8

# Defaults for weakly typed Python values (and dtype=float/int/complex): 32 or 64 bits, set by
# config.jax_enable_x64 (_follow_x64).
DEFAULT_INT, DEFAULT_FLOAT, DEFAULT_COMPLEX = int32, float32, complex64
DEFAULT_UINT = uint32  # (JAX's dtypes.uint: what sums of narrower unsigned integers take)
_NARROW = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}

_SHORT = {bool_: "bool", int8: "i8", int16: "i16", int32: "i32", int64: "i64", uint8: "u8",
          uint16: "u16", uint32: "u32", uint64: "u64", bfloat16: "bf16", float16: "f16",
          float32: "f32", float64: "f64", complex64: "c64", complex128: "c128", float0: "float0",
          float8_e4m3fn: "f8_e4m3fn", float8_e5m2: "f8_e5m2", float8_e4m3fnuz: "f8_e4m3fnuz",
          float8_e5m2fnuz: "f8_e5m2fnuz"}


def short_name(dtype: np.dtype) -> str:
    """The compact name used when printing Jaxprs (``f32``, ``i32``, ``bool``, ...)."""
    return _SHORT.get(dtype, str(dtype))


def is_float(dtype: np.dtype) -> bool:
    return dtype in INEXACT_FLOATS


def is_complex(dtype: np.dtype) -> bool:
    return dtype.kind == "c"


def is_inexact(dtype: np.dtype) -> bool:
    return is_float(dtype) or is_complex(dtype)


def is_integer(dtype: np.dtype) -> bool:
    return dtype.kind in "iu"


def canonicalize(dtype: Any) -> np.dtype:
    """A NumPy dtype from anything NumPy or ml_dtypes accepts as a dtype; raises on unsupported."""
    if dtype is float:
        return DEFAULT_FLOAT
    if dtype is int:
        return DEFAULT_INT
    if dtype is complex:
        return DEFAULT_COMPLEX
    d = np.dtype(dtype)
    if d not in SUPPORTED and d != float0:
        raise TypeError(f"dtype {d} is not supported by pullback; supported: "
                        f"{', '.join(str(s) for s in SUPPORTED)}")
    return d


def canonical(dtype: np.dtype) -> np.dtype:
    """The dtype data of ``dtype`` takes in pullback: its 32-bit counterpart for a 64-bit dtype
    while x64 is off (as JAX's ``dtypes.canonicalize_dtype``), else itself."""
    return dtype if config.jax_enable_x64 else _NARROW.get(dtype, dtype)


def requested(dtype: Any, where: str | None = None) -> np.dtype:
    """A dtype the user asked for (``dtype=`` of a creation function, ``astype``, ...),
    resolved as ``canonicalize`` does; while x64 is off a 64-bit request becomes 32-bit with
    JAX's UserWarning (``where`` names the function)."""
    d = canonicalize(dtype)
    if config.jax_enable_x64 or d not in _NARROW:
        return d
    n = _NARROW[d]
    if not any(dtype is t for t in (float, int, complex)):  # (a dtype == float is True)
        place = f" requested in {where}" if where else ""
        warnings.warn(f"Explicitly requested dtype {d.name}{place} is not available, and will be "
                      f"truncated to dtype {n.name}. To enable more dtypes, set the "
                      "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell "
                      "environment variable.", UserWarning, stacklevel=3)
    return n


def _follow_x64(name: str, value: Any) -> None:
    global DEFAULT_INT, DEFAULT_UINT, DEFAULT_FLOAT, DEFAULT_COMPLEX
    if name == "jax_enable_x64":
        DEFAULT_INT, DEFAULT_UINT, DEFAULT_FLOAT, DEFAULT_COMPLEX = \
            (int64, uint64, float64, complex128) if value else (int32, uint32, float32, complex64)
        _join.cache_clear()


# ---- promotion lattice (JAX's), with weak categories i*, f*, c* for Python scalars ----

_I, _F, _C = "i*", "f*", "c*"
_EDGES: dict[Any, tuple] = {
    bool_: (_I,), _I: (uint8, int8), uint8: (int16, uint16), uint16: (int32, uint32),
    uint32: (int64, uint64), uint64: (_F,), int8: (int16,), int16: (int32,), int32: (int64,),
    int64: (_F,), _F: (_C, bfloat16, float16) + FLOAT8, bfloat16: (float32,), float16: (float32,),
    float32: (float64, complex64), float64: (complex128,), _C: (complex64,),
    complex64: (complex128,), complex128: (),
    **{f8: () for f8 in FLOAT8},
}


@functools.lru_cache(maxsize=None)
def _upper_bounds(node: Any) -> frozenset:
    out = {node}
    for nxt in _EDGES[node]:
        out |= _upper_bounds(nxt)
    return frozenset(out)


def _node(dtype: np.dtype, weak: bool) -> Any:
    if weak and dtype != bool_:
        return _I if is_integer(dtype) else _F if is_float(dtype) else _C
    return dtype


@functools.lru_cache(maxsize=4096)
def _join(nodes: tuple) -> Any:
    common = frozenset.intersection(*(_upper_bounds(n) for n in nodes))
    # the least upper bound is the common bound that every other common bound lies above
    for c in common:
        if all(o in _upper_bounds(c) for o in common):
            return c
    raise TypeError(f"no implicit promotion between {', '.join(str(n) for n in nodes)}; "
                    "convert explicitly with .astype")


def promote(dtypes_and_weak: tuple[tuple[np.dtype, bool], ...]) -> tuple[np.dtype, bool]:
    """The result dtype and weakness of combining values of these (dtype, weak) kinds, as
    JAX's ``_lattice_result_type``: a join that lands on a weak category (``i32 * 0.5``,
    ``bool + 1``) is weak and takes that category's default dtype, whatever the inputs."""
    if len(dtypes_and_weak) == 1:
        d, w = dtypes_and_weak[0]
        return d, w and d != bool_
    if all(w for _, w in dtypes_and_weak):
        # weak only: the join of their dtypes, weak (so weak i8 + weak u8 is weak i16)
        j = _join(tuple(dict.fromkeys(d for d, _ in dtypes_and_weak)))
    else:
        j = _join(tuple(dict.fromkeys(_node(d, w) for d, w in dtypes_and_weak)))
    if isinstance(j, str):  # (also u64 with i64, whose join is f*: weak, as in JAX)
        return {_I: DEFAULT_INT, _F: DEFAULT_FLOAT, _C: DEFAULT_COMPLEX}[j], True
    return j, j != bool_ and all(w for _, w in dtypes_and_weak)


def to_inexact(dtype: np.dtype) -> np.dtype:
    """The floating dtype an integer or bool ``dtype`` becomes where an op needs an inexact
    one (``jnp.sin``, ``/``): float64 for 64-bit integers, float32 for narrower ones, as JAX's
    ``to_inexact_dtype``; canonical under the 64-bit policy."""
    if is_inexact(dtype):
        return dtype
    return canonical(float64 if dtype.itemsize == 8 else float32)


def to_numeric(dtype: np.dtype) -> np.dtype:
    """int32 for bool (arithmetic bool lacks), else ``dtype``, as JAX's ``to_numeric_dtype``."""
    return int32 if dtype == bool_ else dtype


class TypePromotionError(ValueError):
    """Raised when JAX type promotion fails (``jax.dtypes.TypePromotionError``)."""


def _strict_name(dtype: np.dtype, weak: bool) -> str:
    # JAX names a weak operand by its Python type
    if weak and dtype != bool_:
        return "<class 'int'>" if is_integer(dtype) else \
            "<class 'float'>" if is_float(dtype) else "<class 'complex'>"
    return str(dtype)


def promote_strict(dtypes_and_weak: tuple[tuple[np.dtype, bool], ...]) -> tuple[np.dtype, bool]:
    """``promote`` under ``jax_numpy_dtype_promotion='strict'`` (JAX's strict lattice): no
    implicit promotion between two different dtypes; a weak Python int adapts to any numeric
    dtype, a weak float to a floating or complex one, a weak complex to a complex one."""
    strong = {d for d, w in dtypes_and_weak if not w or d == bool_}
    if not strong:
        return promote(dtypes_and_weak)  # weak only: as in the standard lattice
    if len(strong) == 1:
        (d,) = strong
        reach = {_I: "iufcV", _F: "fcV", _C: "c"}  # (V: ml_dtypes' floats)
        if all(not w or dt == bool_ or (d.kind in reach[_node(dt, w)] and d != bool_)
               for dt, w in dtypes_and_weak):
            return d, False
    names = tuple(dict.fromkeys(_strict_name(d, w) for d, w in dtypes_and_weak))
    raise TypePromotionError(
        f"Input dtypes {names} have no available implicit dtype promotion path when "
        "jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired output "
        "type, or set jax_numpy_dtype_promotion=standard.")


@functools.lru_cache(maxsize=4096)
def _promoted_standard(kinds: tuple) -> tuple[np.dtype, bool]:
    return promote(kinds)


# (weak operands alone promote to the default dtypes, which jax_enable_x64 changes)
config.watch(lambda name, value: _promoted_standard.cache_clear())


def promoted(kinds: tuple) -> tuple[np.dtype, bool]:
    """The (dtype, weak) of combining values of these (dtype, weak) kinds under
    ``jax_numpy_dtype_promotion`` ("strict" raises TypePromotionError between different
    dtypes)."""
    if config.jax_numpy_dtype_promotion == "strict":
        return promote_strict(kinds)
    return _promoted_standard(kinds)


def result_type(*args: Any) -> np.dtype:
    """The dtype of combining ``args`` (arrays, dtypes, Python scalars, which are weak)."""
    kinds = []
    for a in args:
        if is_python_scalar(a):
            kinds.append(dtype_of_python(a))
        elif hasattr(a, "aval"):
            kinds.append((a.aval.dtype, a.aval.weak_type))
        elif isinstance(a, (np.ndarray, np.generic)):
            kinds.append((canonicalize(a.dtype), False))
        else:
            kinds.append((canonicalize(a), False))
    if not kinds:
        raise ValueError("result_type: at least one argument is required")
    return promoted(tuple(kinds))[0]


def promote_types(a: Any, b: Any) -> np.dtype:
    """The dtype JAX's lattice gives two (strong) dtypes, as ``jnp.promote_types``."""
    return promote(((canonicalize(a), False), (canonicalize(b), False)))[0]


def is_python_scalar(x: Any) -> bool:
    """A Python bool/int/float/complex (weakly typed), but not a NumPy scalar (np.float64
    subclasses float yet carries its own dtype)."""
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def weak_scalar(value: Any, dtype: np.dtype) -> np.ndarray:
    """A weakly typed Python scalar as a 0-d array of ``dtype`` (the dtype of the array it
    meets), as JAX converts it: an int out of ``dtype``'s range wraps if it fits the default
    int (int32, int64 with x64), and is an OverflowError beyond that, never NumPy's error for
    an in-range operation such as ``x_int8 + 300``."""
    if type(value) is int and dtype.kind in "iu":
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            default = np.iinfo(DEFAULT_INT)
            if not default.min <= value <= default.max:
                raise OverflowError(f"Python int {value} too large to convert to {dtype}")
            return np.asarray(value, np.int64).astype(dtype)
    return np.asarray(value, dtype)


def check_python_ints(values: np.ndarray, dtype: np.dtype) -> None:
    """NumPy's and JAX's OverflowError for Python numbers (``values``, the array NumPy made of
    them) out of the range of the integer ``dtype`` they are converted to: never a silent
    wrap of ``asarray([256], dtype=int8)``."""
    if dtype.kind not in "iu" or values.dtype.kind not in "iuf" or not values.size:
        return
    info = np.iinfo(dtype)
    flat = values.ravel()
    if values.dtype.kind == "f":
        flat = flat[np.isfinite(flat)]
    bad = flat[(flat < info.min) | (flat > info.max)]
    if bad.size:  # the first, in order, as NumPy names it
        raise OverflowError(f"Python integer {int(bad[0])} out of bounds for {dtype}")


def dtype_of_python(x: Any) -> tuple[np.dtype, bool]:
    """(dtype, weak) of a Python scalar."""
    if isinstance(x, (bool, np.bool_)):
        return bool_, False
    if isinstance(x, int):
        return DEFAULT_INT, True
    if isinstance(x, float):
        return DEFAULT_FLOAT, True
    if isinstance(x, complex):
        return DEFAULT_COMPLEX, True
    raise TypeError(f"{type(x).__name__} is not a valid pullback value")


config.watch(_follow_x64)
_follow_x64("jax_enable_x64", config.jax_enable_x64)
