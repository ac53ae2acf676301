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
from ..tracer import core, dtypes, executor
from ..tracer.array import Array
from ..tracer.avals import ShapedArray
from ..tracer.dtypes import promoted
from ..tracer.shapes import broadcast_shapes
from ..primitives.conversion import convert_element_type_p

eager = executor.installed().eager  # the eager short paths (backends/eager.py)


def aval_of(x: Any) -> ShapedArray:
    return x._aval if type(x) is Array else core.get_aval(x)


@functools.lru_cache(maxsize=4096)
def _scalar_array(value: Any, kind: type, dtype: np.dtype, weak: bool, negative_zero: bool
                  ) -> Array:
    # Python scalars recur (1.0, 0.5, 2): one immutable Array each, made once. -0.0 == 0.0
    # (same hash), so the sign of a float zero is part of the key.
    return Array(dtypes.weak_scalar(value, dtype), weak)


_PY_SCALAR_TYPES = (bool, int, float, complex)
_FAST_SCALAR_TYPES = (bool, int, float)

# Python scalar operands of eager element-wise calls: (value, type, id(the Array's aval)) ->
# (that aval, the operand as promote_dtypes makes it, or None where promotion changes the
# Array's dtype). Float zeros (signed) and NaNs are not cached.
_scalar_operands: dict = {}


def scalar_operand(aval: ShapedArray, value: Any) -> Array | None:
    """The Python scalar ``value`` (of type exactly ``bool``/``int``/``float``) as promote_dtypes
    converts it next to an Array of ``aval``, or None when that promotion changes the Array's
    dtype (or raises: the general path raises it again)."""
    key = (value, type(value), id(aval))
    hit = _scalar_operands.get(key)
    if hit is not None:
        return hit[1]
    try:
        py_dt, py_weak = dtypes.dtype_of_python(value)
        dt, weak = promoted(((aval.dtype, aval.weak_type), (py_dt, py_weak)))
        out = scalar_array(value, dt, weak and py_weak) if dt == aval.dtype else None
    except Exception:  # noqa: BLE001 - the general path raises it again
        return None
    if type(value) is not float or (value == value and value != 0.0):
        if len(_scalar_operands) >= 4096:
            _scalar_operands.clear()
        _scalar_operands[key] = (aval, out)
    return out


config.watch(lambda name, value: _scalar_operands.clear())


def eager_binary(prim: Any, x: Any, y: Any, bool_ok: bool) -> Any:
    """``prim`` on ``x`` and ``y`` by the eager short path, where the general path of a
    NumPy-style binary function would bind exactly ``prim`` on its promoted operands: Arrays of
    one dtype and one shape (or a 0-d one), or an Array and a Python scalar that keeps its
    dtype; booleans only with ``bool_ok`` (``add`` of booleans is a logical or). None when it
    does not apply."""
    if type(x) is Array:
        xa = x._aval
        if type(y) is Array:
            ya = y._aval
            if xa is not ya:
                if xa.dtype != ya.dtype:
                    return None
                if xa.shape != ya.shape and xa.shape and ya.shape:
                    if not bool_ok and xa.dtype == dtypes.bool_:
                        return None
                    return _eager_broadcast_binary(prim, x, y)
        elif type(y) in _FAST_SCALAR_TYPES:
            y = scalar_operand(xa, y)
            if y is None:
                return None
        else:
            return None
    elif type(y) is Array and type(x) in _FAST_SCALAR_TYPES:
        xa = y._aval
        x = scalar_operand(xa, x)
        if x is None:
            return None
    else:
        return None
    if not bool_ok and xa.dtype == dtypes.bool_:
        return None
    return eager.binary(prim, x, y)


# Broadcasts of eager binary operations: (id(x aval), id(y aval)) -> (the avals, the target
# shape, and each operand's broadcast_dimensions, or None where it keeps its shape), or None
# where broadcast_args would warn or raise
_broadcasts: dict = {}


def _eager_broadcast_binary(prim: Any, x: Array, y: Array) -> Any:
    """``prim`` on Arrays of one dtype and different shapes (neither 0-d), broadcast as
    broadcast_args does, by the eager short paths; None where they do not apply."""
    xa, ya = x._aval, y._aval
    key = (id(xa), id(ya))
    hit = _broadcasts.get(key)
    if hit is None:
        plan = None
        if len(xa.shape) == len(ya.shape) or config.jax_numpy_rank_promotion == "allow":
            try:
                target = broadcast_shapes(xa.shape, ya.shape)
                plan = (target,) + tuple(
                    None if s == target else tuple(range(len(target) - len(s), len(target)))
                    for s in (xa.shape, ya.shape))
            except ValueError:
                pass
        if len(_broadcasts) >= 4096:
            _broadcasts.clear()
        hit = _broadcasts[key] = (xa, ya, plan)
    plan = hit[2]
    if plan is None:
        return None
    target, xd, yd = plan
    if xd is not None:
        x = eager.call1(broadcast_in_dim_p, x, {"shape": target, "broadcast_dimensions": xd})
    if yd is not None and x is not None:
        y = eager.call1(broadcast_in_dim_p, y, {"shape": target, "broadcast_dimensions": yd})
    if x is None or y is None:
        return None
    return eager.binary(prim, x, y)


config.watch(lambda name, value: _broadcasts.clear())  # (jax_numpy_rank_promotion)


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
    """Operands converted to their common dtype and weakness (JAX's lattice): Python scalars
    become arrays of that dtype, and every converted operand takes the result's weakness, so
    ``int32_array * 0.5`` is weakly typed float as in JAX. (An operand already of that dtype
    is kept: the primitive's result is weak only if all its operands are, the same answer.)"""
    avals = [aval_of(a) for a in args]
    dt, weak = promoted(tuple((a.dtype, a.weak_type) for a in avals))
    return [a if av.dtype == dt and not dtypes.is_python_scalar(a)
            and not isinstance(a, (np.ndarray, np.generic))
            else convert(a, dt, weak) for a, av in zip(args, avals)]


def promote_dtypes_inexact(op: str, *args: Any) -> list[Any]:
    """As promote_dtypes, then integers and bools become floating (float32, float64 for
    64-bit integers: ``dtypes.to_inexact``), as jnp.sin or jnp.true_divide do."""
    out = promote_dtypes(op, *args)
    av = aval_of(out[0]) if out else None
    if av is not None and not dtypes.is_inexact(av.dtype):
        out = [convert(a, dtypes.to_inexact(av.dtype), av.weak_type) for a in out]
    return out


def promote_dtypes_numeric(op: str, *args: Any) -> list[Any]:
    """As promote_dtypes, then bool becomes int32 (for arithmetic that bool lacks; int32
    under x64 too, as JAX's ``to_numeric_dtype``)."""
    out = promote_dtypes(op, *args)
    if out and aval_of(out[0]).dtype == dtypes.bool_:
        out = [convert(a, dtypes.to_numeric(dtypes.bool_), False) for a in out]
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


def _fast_promote(args: tuple) -> list[Any] | None:
    """``promote_dtypes`` for the common cases, or None: Arrays of one dtype (kept as they
    are), and one Array with a Python scalar (exactly ``bool``/``int``/``float``/``complex``)
    whose promotion keeps the Array's dtype (the scalar becomes the weakly typed array
    ``promote_dtypes`` makes of it). Each gives what the general path gives, without building
    its lists."""
    if len(args) == 2:
        x, y = args
        tx, ty = type(x), type(y)
        if tx is Array:
            xa = x._aval
            if ty is Array:
                ya = y._aval
                # one dtype: nothing converts (and no promotion mode rejects a dtype with itself)
                return [x, y] if xa.dtype == ya.dtype else None
            if ty in _PY_SCALAR_TYPES:
                py_dt, py_weak = dtypes.dtype_of_python(y)
                dt, weak = promoted(((xa.dtype, xa.weak_type), (py_dt, py_weak)))
                return [x, scalar_array(y, dt, weak and py_weak)] if dt == xa.dtype else None
        elif ty is Array and tx in _PY_SCALAR_TYPES:
            ya = y._aval
            py_dt, py_weak = dtypes.dtype_of_python(x)
            dt, weak = promoted(((py_dt, py_weak), (ya.dtype, ya.weak_type)))
            return [scalar_array(x, dt, weak and py_weak), y] if dt == ya.dtype else None
        return None
    if len(args) == 1 and type(args[0]) is Array:
        return [args[0]]
    return None


def _same_shape_or_0d(args: list) -> bool:
    """Nothing to broadcast: every operand has the first's shape, or is 0-d (broadcast_args
    leaves 0-d operands to the primitive)."""
    shape = None
    for a in args:
        s = a._aval.shape
        if s:
            if shape is None:
                shape = s
            elif s != shape:
                return False
    return True


def broadcast_all(op: str, *args: Any) -> list[Any]:
    """Operands broadcast to their common shape, 0-d ones included."""
    avals = [aval_of(a) for a in args]
    target = broadcast_shapes(*(av.shape for av in avals), op=op)
    return [broadcast_to_shape(a, av.shape, target) for a, av in zip(args, avals)]


def promote_args(op: str, *args: Any) -> list[Any]:
    """promote_dtypes, then broadcast_args."""
    out = _fast_promote(args)
    if out is None:
        return broadcast_args(op, *promote_dtypes(op, *args))
    return out if _same_shape_or_0d(out) else broadcast_args(op, *out)


def promote_args_inexact(op: str, *args: Any) -> list[Any]:
    out = _fast_promote(args)
    if out is None or not dtypes.is_inexact(out[0]._aval.dtype):
        return broadcast_args(op, *promote_dtypes_inexact(op, *args))
    return out if _same_shape_or_0d(out) else broadcast_args(op, *out)


def promote_args_numeric(op: str, *args: Any) -> list[Any]:
    out = _fast_promote(args)
    if out is None or out[0]._aval.dtype == dtypes.bool_:
        return broadcast_args(op, *promote_dtypes_numeric(op, *args))
    return out if _same_shape_or_0d(out) else broadcast_args(op, *out)


def broadcast_to_shape(x: Any, shape: tuple[int, ...], target: tuple[int, ...]) -> Any:
    if shape == target:
        return x
    dims = tuple(range(len(target) - len(shape), len(target)))
    return broadcast_in_dim_p.bind(x, shape=target, broadcast_dimensions=dims)
