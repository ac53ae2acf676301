"""Collectives over a named vmap axis: psum, pmax, pmin, all_gather, reduce_scatter.

They only have meaning inside ``vmap(..., axis_name=...)``: their batching rule, applied by
the vmap level that owns the name, reduces or gathers across the lanes; evaluated anywhere else
they raise an unbound-axis error. The lax functions (lax/_collectives.py) route operands to
the right level.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tracer.array import Array
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive, get_aval
from .elementwise import mul_p
from .movement import reshape_p
from .reductions import reduce_max_p, reduce_min_p, reduce_sum_p
from .rules import NONLINEAR, Zero, linear_jvp, move_bdim, not_applicable


def _unbound(*args: Any, axis_name: Any, **params: Any) -> Any:
    raise NameError(f"unbound axis name: {axis_name!r}. Collectives need an enclosing "
                    f"vmap(..., axis_name={axis_name!r})")


_unbound.interpreted = True  # raises before any kernel would run


def _same_aval(x: ShapedArray, **params: Any) -> ShapedArray:
    return x


def _reduce_lanes(reducer_name: str):
    def rule(vals, dims, *, axis_info, axis_name):
        (x,), (d,) = vals, dims
        if d is None:  # the same value in every lane
            if reducer_name != "sum":
                return x, None
            return _times_lanes(x, axis_info.size), None
        prim = {"sum": reduce_sum_p, "max": reduce_max_p, "min": reduce_min_p}[reducer_name]
        return prim.bind(x, axes=(d,)), None
    rule.needs_axis = True
    return rule


def _times_lanes(x: Any, size: int) -> Any:
    """The sum over ``size`` lanes of the same value ``x``."""
    return mul_p.bind(x, Array(np.asarray(size, get_aval(x).dtype)))


def _declare(name: str, reducer: str) -> Primitive:
    p = Primitive(name)
    p.collective = True
    p.abstract_eval = _same_aval
    p.cpu = _unbound
    p.reference = _unbound
    p.batch = _reduce_lanes(reducer)
    return p


psum_p = _declare("psum", "sum")
psum_p.jvp = linear_jvp(psum_p)
# every lane's output is the sum of all lanes, so each input lane receives the sum of all the
# output cotangents: psum is its own transpose
psum_p.transpose = lambda ct, x, *, axis_name: [
    ct if type(ct) is Zero else psum_p.bind(ct, axis_name=axis_name)]

pmax_p = _declare("pmax", "max")
pmin_p = _declare("pmin", "min")
for _p in (pmax_p, pmin_p):
    _p.jvp = not_applicable("not differentiated across lanes (JAX defines no derivative either)")
    _p.transpose = NONLINEAR


def _all_gather_aval(x: ShapedArray, *, axis_name: Any, axis: int, tiled: bool,
                     axis_size: int) -> ShapedArray:
    if tiled:
        shape = list(x.shape)
        shape[axis] *= axis_size
        return x.update(shape=tuple(shape))
    return x.update(shape=x.shape[:axis] + (axis_size,) + x.shape[axis:])


def _all_gather_batch(vals, dims, *, axis_info, axis_name, **params):
    (x,), (d,) = vals, dims
    g = move_bdim(x, d, params["axis"], axis_info.size)
    if params["tiled"]:
        shape = list(get_aval(g).shape)
        a = params["axis"]
        new = shape[:a] + [shape[a] * shape[a + 1]] + shape[a + 2:]
        g = reshape_p.bind(g, new_sizes=tuple(new), dimensions=None)
    return g, None


_all_gather_batch.needs_axis = True

all_gather_p = Primitive("all_gather")
all_gather_p.collective = True
all_gather_p.abstract_eval = _all_gather_aval
all_gather_p.cpu = _unbound
all_gather_p.reference = _unbound
all_gather_p.batch = _all_gather_batch
def _all_gather_transpose(ct, x, *, axis_name, axis, tiled, axis_size):
    # lane i contributed slice i of every lane's output: sum the cotangents across lanes, and
    # give lane i slice i of the sum (JAX's transpose, reduce_scatter)
    if type(ct) is Zero:
        return [Zero(x.aval)]
    return [reduce_scatter_p.bind(ct, axis_name=axis_name, axis=axis, tiled=tiled,
                                  axis_size=axis_size)]


all_gather_p.jvp = linear_jvp(all_gather_p)
all_gather_p.transpose = _all_gather_transpose


# reduce_scatter: the sum over the lanes, of which lane i keeps slice i along ``axis`` (the
# whole dimension of size axis_size, or its i-th block of rows with ``tiled``)

def _reduce_scatter_aval(x: ShapedArray, *, axis_name: Any, axis: int, tiled: bool,
                         axis_size: int) -> ShapedArray:
    if tiled:
        shape = list(x.shape)
        shape[axis] //= axis_size
        return x.update(shape=tuple(shape))
    return x.update(shape=x.shape[:axis] + x.shape[axis + 1:])


def _reduce_scatter_batch(vals, dims, *, axis_info, axis_name, axis, tiled, axis_size):
    (x,), (d,) = vals, dims
    total = (_times_lanes(x, axis_info.size) if d is None
             else reduce_sum_p.bind(x, axes=(d,)))
    if tiled:  # the dimension is axis_size blocks of rows: the blocks become the lanes
        shape = get_aval(total).shape
        new = shape[:axis] + (axis_size, shape[axis] // axis_size) + shape[axis + 1:]
        total = reshape_p.bind(total, new_sizes=new, dimensions=None)
    return total, axis


_reduce_scatter_batch.needs_axis = True

reduce_scatter_p = Primitive("reduce_scatter")
reduce_scatter_p.collective = True
reduce_scatter_p.abstract_eval = _reduce_scatter_aval
reduce_scatter_p.cpu = _unbound
reduce_scatter_p.reference = _unbound
reduce_scatter_p.batch = _reduce_scatter_batch
reduce_scatter_p.jvp = linear_jvp(reduce_scatter_p)
# lane i's slice i of the sum took every lane's slice i: each lane's cotangent gathers them
reduce_scatter_p.transpose = lambda ct, x, *, axis_name, axis, tiled, axis_size: [
    Zero(x.aval) if type(ct) is Zero else
    all_gather_p.bind(ct, axis_name=axis_name, axis=axis, tiled=tiled, axis_size=axis_size)]
