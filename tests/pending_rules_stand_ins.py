"""Test-only stand-ins for rules that other op families own and that the movement family's
rules bind (add, sub, neg, mul, div, select_n, eq, lt, reduce_sum, convert_element_type).

Each family fills its rule slots on its own branch. Until those land, the movement family's
rule tests install these minimal rules, only into slots that are still *pending* and only
while a test module runs (``installed()``). Once the owners' rules are merged, ``installed()``
changes nothing and this file can go. They assume what the movement rules use: operands of
one shape (or 0-d), and one batched operand layout at a time.
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

import numpy as np

from pullback.primitives import conversion as cv
from pullback.primitives import elementwise as ew
from pullback.primitives import reductions as red
from pullback.primitives.movement import broadcast_in_dim_p
from pullback.primitives.rules import (Zero, broadcast_batcher, elementwise_jvp, instantiate,
                                       is_undefined, linear_jvp, move_bdim, zeros_like_aval)
from pullback.tracer import dtypes
from pullback.tracer.array import Array
from pullback.tracer.core import NoRule, get_aval


def _each_undefined(fn: Any) -> Any:
    """A transpose rule: ``fn(ct, operands, i)`` for each undefined operand i."""
    def rule(ct: Any, *xs: Any, **params: Any) -> list:
        return [fn(ct, xs, i, **params) if is_undefined(x) else None for i, x in enumerate(xs)]
    return rule


def _one(x: Any) -> Array:
    return Array(np.ones((), get_aval(x).dtype))


def _reduce_sum_batch(vals: Any, dims: Any, *, axes: tuple) -> Any:
    (x,), (d,) = vals, dims
    return red.reduce_sum_p.bind(move_bdim(x, d, 0, 0), axes=tuple(a + 1 for a in axes)), 0


def _reduce_sum_transpose(ct: Any, x: Any, *, axes: tuple) -> list:
    shape = x.aval.shape
    kept = tuple(d for d in range(len(shape)) if d not in axes)
    return [broadcast_in_dim_p.bind(ct, shape=shape, broadcast_dimensions=kept)]


def _select_n_jvp(primals: Any, tangents: Any) -> Any:
    which, *cases = primals
    out = ew.select_n_p.bind(which, *cases)
    if all(type(t) is Zero for t in tangents[1:]):
        return out, Zero.from_primal(out)
    return out, ew.select_n_p.bind(which, *[instantiate(t) for t in tangents[1:]])


def _select_n_transpose(ct: Any, which: Any, *cases: Any) -> list:
    zero = zeros_like_aval(get_aval(ct))
    return [None] + [ew.select_n_p.bind(which, *[ct if j == i else zero
                                                 for j in range(len(cases))])
                     if is_undefined(c) else None for i, c in enumerate(cases)]


def _convert_jvp(primals: Any, tangents: Any, *, new_dtype: Any, weak_type: bool) -> Any:
    out = cv.convert_element_type_p.bind(primals[0], new_dtype=new_dtype, weak_type=weak_type)
    if type(tangents[0]) is Zero or not dtypes.is_inexact(new_dtype):
        return out, Zero.from_primal(out)
    return out, cv.convert_element_type_p.bind(tangents[0], new_dtype=new_dtype,
                                               weak_type=weak_type)


def _convert_batch(vals: Any, dims: Any, **params: Any) -> Any:
    return cv.convert_element_type_p.bind(vals[0], **params), dims[0]


RULES = {
    (ew.add_p, "jvp"): linear_jvp(ew.add_p),
    (ew.add_p, "transpose"): _each_undefined(lambda ct, xs, i: ct),
    (ew.sub_p, "jvp"): linear_jvp(ew.sub_p),
    (ew.sub_p, "transpose"): _each_undefined(
        lambda ct, xs, i: ct if i == 0 else ew.neg_p.bind(ct)),
    (ew.neg_p, "jvp"): linear_jvp(ew.neg_p),
    (ew.neg_p, "transpose"): _each_undefined(lambda ct, xs, i: ew.neg_p.bind(ct)),
    (ew.mul_p, "jvp"): elementwise_jvp(ew.mul_p, lambda x, y, o: y, lambda x, y, o: x),
    (ew.mul_p, "transpose"): _each_undefined(lambda ct, xs, i: ew.mul_p.bind(ct, xs[1 - i])),
    (ew.div_p, "jvp"): elementwise_jvp(
        ew.div_p, lambda x, y, o: ew.div_p.bind(_one(y), y),
        lambda x, y, o: ew.neg_p.bind(ew.div_p.bind(o, y))),
    # linear in the numerator only
    (ew.div_p, "transpose"): _each_undefined(lambda ct, xs, i: ew.div_p.bind(ct, xs[1])),
    (ew.select_n_p, "jvp"): _select_n_jvp,
    (ew.select_n_p, "transpose"): _select_n_transpose,
    (red.reduce_sum_p, "jvp"): linear_jvp(red.reduce_sum_p),
    (red.reduce_sum_p, "transpose"): _reduce_sum_transpose,
    (red.reduce_sum_p, "batch"): _reduce_sum_batch,
    (cv.convert_element_type_p, "jvp"): _convert_jvp,
    (cv.convert_element_type_p, "transpose"): _each_undefined(
        lambda ct, xs, i, **p: cv.convert_element_type_p.bind(ct, new_dtype=xs[0].aval.dtype,
                                                              weak_type=xs[0].aval.weak_type)),
    (cv.convert_element_type_p, "batch"): _convert_batch,
}
for _p in (ew.add_p, ew.sub_p, ew.neg_p, ew.mul_p, ew.div_p, ew.select_n_p, ew.eq_p, ew.lt_p):
    RULES[(_p, "batch")] = broadcast_batcher(_p)


@contextlib.contextmanager
def installed() -> Iterator[None]:
    """The stand-ins in every slot that is still pending, restored on exit."""
    saved = []
    for (prim, slot), rule in RULES.items():
        current = getattr(prim, slot)
        if isinstance(current, NoRule) and current.kind == "pending":
            saved.append((prim, slot, current))
            setattr(prim, slot, rule)
    try:
        yield
    finally:
        for prim, slot, current in saved:
            setattr(prim, slot, current)

