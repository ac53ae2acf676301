"""Collectives over named vmap axes: psum, pmean, pmax, pmin, all_gather, axis_index."""
from __future__ import annotations

from typing import Any

from ..primitives.collectives import all_gather_p, pmax_p, pmin_p, psum_p
from ..primitives.conversion import convert_element_type_p
from ..tracer import core, dtypes, pytree
from ..transforms.vmap import BatchTrace, BatchTracer, bind_collective, find_axis
from ._elementwise import div
from ._movement import iota
from ._operands import scalars_to

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index"]


def _each(prim: Any, x: Any, axis_name: Any, **params: Any) -> Any:
    names = axis_name if isinstance(axis_name, (tuple, list)) else (axis_name,)

    def one(leaf: Any) -> Any:
        (leaf,) = scalars_to((leaf,))
        for n in names:
            leaf = bind_collective(prim, leaf, axis_name=n, **params)
        return leaf
    return pytree.tree_map(one, x)


def psum(x: Any, axis_name: Any) -> Any:
    """Sum of ``x`` over the lanes of the named vmap axis (a pytree of arrays; every lane gets
    the total)."""
    return _each(psum_p, x, axis_name)


def pmean(x: Any, axis_name: Any) -> Any:
    """Mean of ``x`` over the lanes of the named axis."""
    names = axis_name if isinstance(axis_name, (tuple, list)) else (axis_name,)
    size = 1
    for n in names:
        size *= find_axis(n).payload.size
    return pytree.tree_map(lambda s: _mean(s, size), psum(x, axis_name))


def _mean(total: Any, size: int) -> Any:
    # ``total / size`` as jnp.true_divide computes it: integers and bools become the default
    # float type (keeping their weak type), the size a weak scalar of that type
    av = core.get_aval(total)
    if not dtypes.is_inexact(av.dtype):
        total = convert_element_type_p.bind(total, new_dtype=dtypes.DEFAULT_FLOAT,
                                            weak_type=av.weak_type)
    return div(total, size)


def pmax(x: Any, axis_name: Any) -> Any:
    """Maximum of ``x`` over the lanes of the named axis."""
    return _each(pmax_p, x, axis_name)


def pmin(x: Any, axis_name: Any) -> Any:
    """Minimum of ``x`` over the lanes of the named axis."""
    return _each(pmin_p, x, axis_name)


def all_gather(x: Any, axis_name: Any, *, axis: int = 0, tiled: bool = False) -> Any:
    """Every lane's ``x`` stacked (or concatenated, with ``tiled``) along ``axis``."""
    size = find_axis(axis_name).payload.size
    return _each(all_gather_p, x, axis_name, axis=axis, tiled=tiled, axis_size=size)


def axis_index(axis_name: Any) -> Any:
    """The index of the current lane along the named axis (int32)."""
    main = find_axis(axis_name)
    return BatchTracer(BatchTrace(main), iota(dtypes.int32, main.payload.size), 0)
