"""Collectives over a named vmap axis: psum, pmax, pmin, all_gather.

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
from .rules import NONLINEAR, Zero, linear_jvp, not_applicable


def _unbound(*args: Any, axis_name: Any, **params: Any) -> Any:
    raise NameError(f"unbound axis name: {axis_name!r}. Collectives need an enclosing "
                    f"vmap(..., axis_name={axis_name!r})")


_unbound.interpreted = True  # raises before any kernel would run


def _same_aval(x: ShapedArray, **params: Any) -> ShapedArray:
    return x


def _reduce_lanes(reducer_name: str):
    def rule(vals, dims, *, axis_info, axis_name):
        from . import reductions
        (x,), (d,) = vals, dims
        if d is None:  # the same value in every lane
            if reducer_name != "sum":
                return x, None
            from .elementwise import mul_p
            dt = get_aval(x).dtype
            return mul_p.bind(x, Array(np.asarray(axis_info.size, dt))), None
        prim = {"sum": reductions.reduce_sum_p, "max": reductions.reduce_max_p,
                "min": reductions.reduce_min_p}[reducer_name]
        return prim.bind(x, axes=(d,)), None
    rule.needs_axis = True
    return rule


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
    from ..transforms.vmap import moveaxis_to
    from .movement import reshape_p
    (x,), (d,) = vals, dims
    g = moveaxis_to(x, d, params["axis"], axis_info.size)
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
    # lane i contributed slice i of every lane's output: sum the cotangents across lanes, then
    # take this lane's slice
    if type(ct) is Zero:
        return [Zero(x.aval)]
    from ..lax import axis_index, dynamic_index_in_dim, dynamic_slice_in_dim
    total = psum_p.bind(ct, axis_name=axis_name)
    i = axis_index(axis_name)
    if tiled:
        n = x.aval.shape[axis]
        return [dynamic_slice_in_dim(total, i * n, n, axis)]
    return [dynamic_index_in_dim(total, i, axis, keepdims=False)]


all_gather_p.jvp = linear_jvp(all_gather_p)
all_gather_p.transpose = _all_gather_transpose
