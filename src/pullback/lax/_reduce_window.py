"""Windowed reductions with ``jax.lax``'s signatures: ``reduce_window`` and its shape helper.

As in JAX, a single operand whose ``computation`` is ``lax.add``, ``lax.max`` or ``lax.min``
(and here also ``lax.mul``) with that monoid's identity as a concrete ``init_value`` binds the
matching primitive (``reduce_window_sum``/``max``/``min``/``mul``: one C kernel each, with their
own derivative rules, see ``pullback.primitives.reduce_window``). Any other computation, and
pytrees of operands, run the generic path: the computation, vectorised with ``vmap``, folds the
windows' operand elements into accumulators started at the init values, one window offset at a
time (row-major); padding and the holes of base dilation are skipped, as XLA's CPU backend
does (so a non-identity init enters each window once). That is a
composition of primitives (pad, strided slices, the computation), so it runs under ``jit``,
``vmap`` and ``grad`` (reverse mode included, which JAX's generic ``reduce_window`` lacks).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from ..primitives import reduce_window as _rw
from ..primitives.conversion import convert_element_type_p
from ..primitives.movement import broadcast_in_dim_p, pad_p, reshape_p, slice_p
from ..tracer import core, pytree
from ..tracer.array import Array
from ..transforms.array_ops import as_operands
from ..transforms.vmap import vmap
from . import _elementwise as _ew
from ._conv import padtype_to_pads
from ._operands import ArrayLike, scalars_to

__all__ = ["reduce_window", "reduce_window_shape_tuple"]

_MONOIDS = {id(_ew.add): "sum", id(_ew.max): "max", id(_ew.min): "min", id(_ew.mul): "mul"}


def reduce_window_shape_tuple(operand_shape: Sequence[int], window_dimensions: Sequence[int],
                              window_strides: Sequence[int],
                              padding: Sequence[tuple[int, int]],
                              base_dilation: Sequence[int] | None = None,
                              window_dilation: Sequence[int] | None = None) -> tuple[int, ...]:
    """The shape :func:`reduce_window` gives for an operand of ``operand_shape``.

    Args:
      operand_shape: the operand's shape.
      window_dimensions, window_strides: the window and its step, per dimension.
      padding: ``(low, high)`` pairs per dimension (explicit: see :func:`padtype_to_pads`
        for strings).
      base_dilation, window_dilation: dilations per dimension (default 1).

    Returns:
      Per dimension, the number of windows: ``(padded - dilated_window) // stride + 1``, or 0
      when the window does not fit.
    """
    return _rw.reduce_window_shape_tuple(
        tuple(operand_shape), tuple(window_dimensions), tuple(window_strides),
        tuple(tuple(p) for p in padding),
        None if base_dilation is None else tuple(base_dilation),
        None if window_dilation is None else tuple(window_dilation))


def _pads(op: str, in_shape, window, strides, padding) -> tuple[tuple[int, int], ...]:
    """``padding`` as (low, high) pairs; strings as ``padtype_to_pads``."""
    if isinstance(padding, str):
        try:
            return tuple(padtype_to_pads(in_shape, window, strides, padding))
        except RuntimeError as e:
            raise RuntimeError(f"{op}: argument 'padding': {str(e)[0].lower()}{str(e)[1:]}") \
                from None
    try:
        return tuple((core.operator_index(lo), core.operator_index(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise TypeError(f"{op}: argument 'padding' must be 'VALID', 'SAME', 'SAME_LOWER' or a "
                        f"sequence of (low, high) int pairs, got {padding!r}") from None


def _ints(v, op: str, arg: str):
    if v is None:
        return None
    try:
        return tuple(core.operator_index(i) for i in v)
    except TypeError:
        raise TypeError(f"{op}: argument '{arg}' must be a sequence of ints, got {v!r}") from None


def concrete_scalar(x: Any):
    """The value of ``x`` if it is a concrete scalar (else None)."""
    if isinstance(x, core.Tracer):
        v = x.to_concrete_value()
        return None if v is None else np.asarray(v)
    try:
        return np.asarray(x)
    except Exception:  # noqa: BLE001  (anything that is not array data is not a monoid init)
        return None


def _monoid(computation: Callable, inits: list, dtype) -> str | None:
    op = _MONOIDS.get(id(computation))
    if op is None or len(inits) != 1:
        return None
    v = concrete_scalar(inits[0])
    if v is None or v.shape != ():
        return None
    return op if np.equal(v, _rw.identity(op, dtype)) else None


def reduce_window(operand: Any, init_value: Any, computation: Callable,
                  window_dimensions: Sequence[int],
                  window_strides: Sequence[int] | None = None,
                  padding: str | Sequence[tuple[int, int]] = "VALID",
                  base_dilation: Sequence[int] | None = None,
                  window_dilation: Sequence[int] | None = None) -> Any:
    """Reduction over padded, possibly dilated windows (XLA's ReduceWindow).

    Args:
      operand: an array or a pytree of arrays of one shape.
      init_value: a scalar, or a pytree of scalars with ``operand``'s structure (each of its
        operand's dtype): the start of every window's reduction and the value of padding and
        of the holes base dilation makes.
      computation: a binary function of two pytrees like ``init_value`` (accumulator, element)
        returning one; ``lax.add``/``lax.max``/``lax.min``/``lax.mul`` with their identity
        run their own kernels.
      window_dimensions: the window's size per dimension (positive).
      window_strides: the step between windows per dimension (default 1).
      padding: "VALID", "SAME", "SAME_LOWER" (from the operand's shape and the dilated window,
        as ``jax.lax.padtype_to_pads``) or ``(low, high)`` pairs per dimension (negative
        crops).
      base_dilation: operand dilation per dimension (default 1).
      window_dilation: window dilation per dimension (default 1).

    Returns:
      A pytree like ``operand`` of arrays of :func:`reduce_window_shape_tuple`'s shape.
    """
    op = "reduce_window"
    flat_x, tree = pytree.tree_flatten(operand)
    flat_init, init_tree = pytree.tree_flatten(init_value)
    if tree != init_tree:
        raise ValueError(f"{op}: argument 'init_value' must have the same tree structure as "
                         f"'operand': {tree} vs. {init_tree}")
    if not flat_x:
        raise ValueError(f"{op}: argument 'operand' must hold at least one array")
    flat_x = as_operands(flat_x)
    flat_init = [as_operands(scalars_to((i, x)))[0] for i, x in zip(flat_init, flat_x)]
    avals = [core.get_aval(x) for x in flat_x]
    for i, a in enumerate(avals):
        if a.shape != avals[0].shape:
            raise ValueError(f"{op}: the operands must share one shape, got "
                             f"{[b.shape for b in avals]}")
        ia = core.get_aval(flat_init[i])
        if ia.shape != ():
            raise TypeError(f"{op}: argument 'init_value' must hold scalars, got shape "
                            f"{ia.shape}")
    # as JAX: a concrete init equal to the monoid's identity in the operand's dtype selects the
    # monoid whatever the init's own dtype (a float32 -inf for a float16 max)
    monoid = _monoid(computation, flat_init, avals[0].dtype)
    if monoid is None:
        for i, a in enumerate(avals):
            ia = core.get_aval(flat_init[i])
            if ia.dtype != a.dtype:
                raise TypeError(f"{op}: argument 'init_value' has dtype {ia.dtype} but its "
                                f"operand has dtype {a.dtype}")
    shape = avals[0].shape
    window = _ints(window_dimensions, op, "window_dimensions")
    nd = len(window)
    strides = _ints(window_strides, op, "window_strides") or (1,) * nd
    bdil = _ints(base_dilation, op, "base_dilation") or (1,) * nd
    wdil = _ints(window_dilation, op, "window_dilation") or (1,) * nd
    if len(shape) != nd:
        raise TypeError(f"{op}: argument 'window_dimensions' must have one entry per operand "
                        f"dimension: got operand shape {shape} with window_dimensions {window}")
    dilated = tuple((w - 1) * d + 1 for w, d in zip(window, wdil))
    pads = _pads(op, shape, dilated, strides, padding)
    geo = dict(window_dimensions=window, window_strides=strides, padding=pads,
               base_dilation=bdil, window_dilation=wdil)
    out_shape = _rw.check_geometry(op, shape, **geo)
    if monoid is not None:
        return pytree.tree_unflatten(tree, [_rw.MONOIDS[monoid].bind(flat_x[0], **geo)])
    outs = _generic(flat_x, flat_init, computation, tree, geo, out_shape)
    return pytree.tree_unflatten(tree, [like_operand(o, a) for o, a in zip(outs, avals)])


def like_operand(out: Any, aval) -> Any:
    """``out`` with its operand's weak type: the generic paths start from the (often weakly
    typed, Python scalar) init values, which an empty window grid returns as they are."""
    if core.get_aval(out).weak_type == aval.weak_type:
        return out
    return convert_element_type_p.bind(out, new_dtype=aval.dtype, weak_type=aval.weak_type)


def _generic(xs: list, inits: list, computation: Callable, tree, geo: dict,
             out_shape: tuple[int, ...]) -> list:
    """Folds every window offset's elements into accumulators started at the init values."""
    acc = [broadcast_in_dim_p.bind(i, shape=out_shape, broadcast_dimensions=()) for i in inits]
    size = math.prod(out_shape)
    if size == 0:
        return acc
    n = len(xs)
    fold = lanes(computation, tree, "reduce_window")
    padded = [pad_p.bind(x, i, padding_config=tuple(
        (lo, hi, b - 1) for (lo, hi), b in zip(geo["padding"], geo["base_dilation"])))
        for x, i in zip(xs, inits)]
    pshape = core.get_aval(padded[0]).shape
    # which window elements are operand elements (as XLA, padding and holes are skipped, not
    # folded in as init values: that matters for a computation whose init is no identity)
    real = _rw._dilate_pad(np.arange(math.prod(core.get_aval(xs[0]).shape), dtype=np.int64)
                           .reshape(core.get_aval(xs[0]).shape), -1, geo["base_dilation"],
                           geo["padding"]) >= 0
    flat = [reshape_p.bind(a, new_sizes=(size,), dimensions=None) for a in acc]
    for sl in _rw.window_slices(pshape, out_shape, geo["window_dimensions"],
                                geo["window_strides"], geo["window_dilation"]):
        mask = real[sl].reshape(-1)
        if not mask.any():
            continue
        elems = [reshape_p.bind(slice_p.bind(p, start_indices=tuple(s.start for s in sl),
                                             limit_indices=tuple(s.stop for s in sl),
                                             strides=tuple(s.step for s in sl)),
                                new_sizes=(size,), dimensions=None) for p in padded]
        new = list(fold(flat, elems))
        if mask.all():
            flat = new
        else:
            keep = Array(mask)
            flat = [_ew.select(keep, b, a) for a, b in zip(flat, new)]
    assert len(flat) == n
    return [reshape_p.bind(a, new_sizes=out_shape, dimensions=None) for a in flat]


def lanes(computation: Callable, tree, op: str) -> Callable:
    """``computation`` over lists of 1-D arrays (flattened pytrees of ``tree``), lane by lane:
    each lane sees scalars, as JAX's reduction computations do."""
    def step(a, e):
        out, out_tree = pytree.tree_flatten(computation(pytree.tree_unflatten(tree, a),
                                                        pytree.tree_unflatten(tree, e)))
        if out_tree != tree:
            raise ValueError(f"{op}: argument 'computation' must return the operands' tree "
                             f"structure {tree}, got {out_tree}")
        out = as_operands(out)
        for o, x in zip(out, a):
            oa, xa = core.get_aval(o), core.get_aval(x)
            if oa.shape != () or oa.dtype != xa.dtype:
                raise TypeError(f"{op}: argument 'computation' must return scalars of the "
                                f"operands' dtypes {xa.dtype}, got {oa.str_short()}")
        return out
    return vmap(step)
