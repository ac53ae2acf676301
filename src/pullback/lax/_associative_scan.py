"""``associative_scan``: an inclusive prefix scan with an associative combine function, in
O(log n) vectorized steps (the Blelloch-style odd/even recursion JAX uses).

It is a composition of slicing, concatenation and the user's combine function, so it
differentiates, batches and compiles like any other composition.
"""
from __future__ import annotations

from typing import Any, Callable

from ..tracer import core, pytree
from ..transforms.array_ops import as_operands
from ._movement import concatenate, expand_dims, reshape, rev, slice_in_dim

__all__ = ["associative_scan"]


def associative_scan(fn: Callable, elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """Inclusive scan of ``elems`` along ``axis`` with the associative ``fn``.

    ``fn(a, b)`` combines two pytrees shaped like ``elems`` (sliced along ``axis``) element-wise
    and must be associative: ``fn(fn(a, b), c) == fn(a, fn(b, c))``.

    Args:
      fn: the combine function.
      elems: a pytree of arrays sharing the length of ``axis``.
      reverse: scan from the end.
      axis: the scanned axis.

    Returns:
      A pytree like ``elems`` whose entry i combines entries 0..i (or i..n-1 with reverse).
    """
    leaves, tree = pytree.tree_flatten(elems)
    leaves = as_operands(leaves)
    if not leaves:
        return elems
    ndims = {core.get_aval(x).ndim for x in leaves}
    for x in leaves:
        nd = core.get_aval(x).ndim
        if not -nd <= axis < nd:
            raise ValueError(f"associative_scan: axis {axis} is out of bounds for an array of "
                             f"rank {nd}")
    axes = [axis % core.get_aval(x).ndim for x in leaves]
    sizes = {core.get_aval(x).shape[a] for x, a in zip(leaves, axes)}
    if len(sizes) > 1:
        raise ValueError(f"associative_scan: array inputs must have the same length along "
                         f"axis {axis}, got lengths {sorted(sizes)}")
    del ndims
    if reverse:
        leaves = [_rev(x, a) for x, a in zip(leaves, axes)]

    def combine(a: list, b: list) -> list:
        out = fn(pytree.tree_unflatten(tree, a), pytree.tree_unflatten(tree, b))
        out_leaves, out_tree = pytree.tree_flatten(out)
        if out_tree != tree:
            raise TypeError(f"associative_scan: fn must return a pytree of the input's "
                            f"structure {tree}, got {out_tree}")
        return out_leaves

    out = _scan(combine, leaves, axes)
    if reverse:
        out = [_rev(x, a) for x, a in zip(out, axes)]
    return pytree.tree_unflatten(tree, out)


def _rev(x: Any, axis: int) -> Any:
    return rev(x, (axis,))


def _sl(x: Any, axis: int, start: int, stop: int | None, step: int = 1) -> Any:
    return slice_in_dim(x, start, stop, step, axis)


def _interleave(a: Any, b: Any, axis: int) -> Any:
    """Elements of ``a`` at even positions and of ``b`` at odd ones (len(a) - len(b) in
    {0, 1})."""
    na, nb = a.shape[axis], b.shape[axis]
    pairs = concatenate([expand_dims(_sl(a, axis, 0, nb), (axis + 1,)),
                         expand_dims(b, (axis + 1,))], axis + 1)
    shape = list(a.shape)
    shape[axis] = 2 * nb
    out = reshape(pairs, tuple(shape))
    if na > nb:
        out = concatenate([out, _sl(a, axis, nb, na)], axis)
    return out


def _scan(combine: Callable, elems: list, axes: list) -> list:
    n = elems[0].shape[axes[0]]
    if n < 2:
        return elems
    # combine adjacent pairs, scan those (half as many), then fill in the even positions
    reduced = combine([_sl(x, a, 0, n - 1, 2) for x, a in zip(elems, axes)],
                      [_sl(x, a, 1, n, 2) for x, a in zip(elems, axes)])
    odd = _scan(combine, reduced, axes)
    if n % 2 == 0:
        even = combine([_sl(x, a, 0, x.shape[a] - 1) for x, a in zip(odd, axes)],
                       [_sl(x, a, 2, n, 2) for x, a in zip(elems, axes)])
    else:
        even = combine(odd, [_sl(x, a, 2, n, 2) for x, a in zip(elems, axes)])
    even = [concatenate([_sl(x, a, 0, 1), e], a) for x, e, a in zip(elems, even, axes)]
    return [_interleave(e, o, a) for e, o, a in zip(even, odd, axes)]
