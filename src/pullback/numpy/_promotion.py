"""Dtype promotion and shape broadcasting of operands: the one place jnp functions prepare
their arguments before binding a primitive."""
from __future__ import annotations

import functools
import math
import warnings
from typing import Any

import numpy as np

from ..config import config
from ..primitives.movement import broadcast_in_dim_p
from ..tracer import core, dtypes
from ..tracer.array import Array
from ..tracer.avals import ShapedArray
from ..tracer.dtypes import promoted
from ..tracer.shapes import broadcast_shapes
from ..primitives.conversion import convert_element_type_p



def aval_of(x: Any) -> ShapedArray:
    return x._aval if type(x) is Array else core.get_aval(x)


@functools.lru_cache(maxsize=4096)
def _scalar_array(value: Any, kind: type, dtype: np.dtype, weak: bool, negative_zero: bool
                  ) -> Array:
    # Python scalars recur (1.0, 0.5, 2): one immutable Array each, made once. -0.0 == 0.0
    # (same hash), so the sign of a float zero is part of the key.
    return Array(dtypes.weak_scalar(value, dtype), weak)


def scalar_array(value: Any, dtype: np.dtype, weak: bool) -> Array:
    try:
        kind = type(value)
        return _scalar_array(value, kind, dtype, weak,
                             kind is float and value == 0.0 and math.copysign(1.0, value) < 0)
    except TypeError:  # unhashable (never for Python scalars, but NumPy scalars may be odd)
        return Array(dtypes.weak_scalar(value, dtype), weak)


def convert(x: Any, dtype: np.dtype, weak: bool = False) -> Any:
    """``x`` (an Array, tracer, NumPy value or Python scalar) as ``dtype``."""
    if dtypes.is_python_scalar(x):
        return scalar_array(x, dtype, weak)
    if isinstance(x, (np.ndarray, np.generic)):  # a copy: the caller may write theirs later
        return Array(np.array(x, dtype), weak)
    av = aval_of(x)
    if av.dtype == dtype and av.weak_type == weak:
        return x
    return convert_element_type_p.bind(x, new_dtype=dtype, weak_type=weak)


def promote_dtypes(op: str, *args: Any) -> list[Any]:
    """Operands converted to their common dtype (JAX's lattice); Python scalars become weakly
    typed arrays of that dtype."""
    avals = [aval_of(a) for a in args]
    dt, weak = promoted(tuple((a.dtype, a.weak_type) for a in avals))
    return [a if av.dtype == dt and (av.weak_type == weak or not dtypes.is_python_scalar(a))
            and not dtypes.is_python_scalar(a) and not isinstance(a, (np.ndarray, np.generic))
            else convert(a, dt, weak and av.weak_type) for a, av in zip(args, avals)]


def promote_dtypes_inexact(op: str, *args: Any) -> list[Any]:
    """As promote_dtypes, then integers and bools become the default float (float32), as
    jnp.sin or jnp.true_divide do."""
    out = promote_dtypes(op, *args)
    av = aval_of(out[0]) if out else None
    if av is not None and not dtypes.is_inexact(av.dtype):
        out = [convert(a, dtypes.DEFAULT_FLOAT, av.weak_type) for a in out]
    return out


def promote_dtypes_numeric(op: str, *args: Any) -> list[Any]:
    """As promote_dtypes, then bool becomes int32 (for arithmetic that bool lacks)."""
    out = promote_dtypes(op, *args)
    if out and aval_of(out[0]).dtype == dtypes.bool_:
        out = [convert(a, dtypes.DEFAULT_INT, False) for a in out]
    return out


_RANK_DOC = "https://docs.jax.dev/en/latest/rank_promotion_warning.html"


def check_rank_promotion(op: str, shapes: list[tuple[int, ...]]) -> None:
    """``jax_numpy_rank_promotion``: warn or raise (JAX's messages) when operands of ``op``
    with these shapes differ in rank, 0-d ones aside."""
    mode = config.jax_numpy_rank_promotion
    if mode == "allow" or len({len(s) for s in shapes if s}) < 2:
        return
    listed = " ".join(map(str, shapes))
    if mode == "warn":
        warnings.warn(f"Following NumPy automatic rank promotion for {op} on shapes {listed}. "
                      "Set the jax_numpy_rank_promotion config option to 'allow' to disable "
                      f"this warning; for more information, see {_RANK_DOC}.", stacklevel=4)
    else:
        raise ValueError(f"Operands could not be broadcast together for {op} on shapes "
                         f"{listed} and with the config option jax_numpy_rank_promotion="
                         f"'raise'. For more information, see {_RANK_DOC}.")


def broadcast_args(op: str, *args: Any, rank_check: bool = True) -> list[Any]:
    """Operands broadcast to their common shape, except 0-d ones (element-wise primitives
    broadcast those themselves); ``jax_numpy_rank_promotion`` applies unless ``rank_check``
    is False (functions JAX broadcasts without that check, e.g. ``where``)."""
    avals = [aval_of(a) for a in args]
    shapes = [av.shape for av in avals if av.ndim]
    if not shapes or all(s == shapes[0] for s in shapes):
        return list(args)
    if rank_check:
        check_rank_promotion(op, [av.shape for av in avals])
    target = broadcast_shapes(*shapes, op=op)
    return [broadcast_to_shape(a, av.shape, target) if av.ndim else a
            for a, av in zip(args, avals)]


def _same_avals(args: tuple) -> bool:
    """All operands are arrays or tracers of one aval (nothing to promote or broadcast)."""
    first = None
    for a in args:
        if dtypes.is_python_scalar(a) or not hasattr(a, "aval"):
            return False
        av = a._aval if type(a) is Array else a.aval
        if first is None:
            first = av
        elif av is not first and av != first:
            return False
    return True


def broadcast_all(op: str, *args: Any) -> list[Any]:
    """Operands broadcast to their common shape, 0-d ones included."""
    avals = [aval_of(a) for a in args]
    target = broadcast_shapes(*(av.shape for av in avals), op=op)
    return [broadcast_to_shape(a, av.shape, target) for a, av in zip(args, avals)]


def promote_args(op: str, *args: Any) -> list[Any]:
    """promote_dtypes, then broadcast_args."""
    if _same_avals(args):
        return list(args)
    return broadcast_args(op, *promote_dtypes(op, *args))


def promote_args_inexact(op: str, *args: Any) -> list[Any]:
    return broadcast_args(op, *promote_dtypes_inexact(op, *args))


def promote_args_numeric(op: str, *args: Any) -> list[Any]:
    return broadcast_args(op, *promote_dtypes_numeric(op, *args))


def broadcast_to_shape(x: Any, shape: tuple[int, ...], target: tuple[int, ...]) -> Any:
    if shape == target:
        return x
    dims = tuple(range(len(target) - len(shape), len(target)))
    return broadcast_in_dim_p.bind(x, shape=target, broadcast_dimensions=dims)
