"""Stride arithmetic of zero-copy views (seed 001, Nx View).

Each function maps a source layout (shape, byte strides) to the layout of a view, or None when
the view cannot share memory (reshape of a non-mergeable layout), in which case the caller
copies first. Offsets are in bytes from the source's first element.
"""
from __future__ import annotations

import functools
from typing import Callable, Sequence


def _memoized(fn: Callable) -> Callable:
    """``fn`` with its results cached by argument (layouts recur: every eager call of a view
    and every lowering computes them); unhashable arguments (lists) are computed each time."""
    cached = functools.lru_cache(maxsize=4096)(fn)

    @functools.wraps(fn)
    def f(*args: object) -> object:
        try:
            return cached(*args)
        except TypeError:  # an unhashable argument
            return fn(*args)
    return f


@_memoized
def broadcast_in_dim(shape: Sequence[int], strides: Sequence[int], out_shape: Sequence[int],
                     dims: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    out = [0] * len(out_shape)
    for i, d in enumerate(dims):
        out[d] = strides[i] if shape[i] == out_shape[d] else 0
    return tuple(out_shape), tuple(out), 0


@_memoized
def transpose(shape: Sequence[int], strides: Sequence[int],
              perm: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    return tuple(shape[p] for p in perm), tuple(strides[p] for p in perm), 0


@_memoized
def reshape(shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int],
            itemsize: int) -> tuple[tuple[int, ...], tuple[int, ...], int] | None:
    """The view of a reshape, or None if the memory layout needs a copy."""
    new_shape = tuple(new_shape)
    size = 1
    for d in shape:
        size *= d
    if size <= 1:  # any strides address 0 or 1 elements
        return new_shape, tuple(itemsize for _ in new_shape), 0
    old = [(d, s) for d, s in zip(shape, strides) if d != 1]
    odims = [d for d, _ in old]
    ostr = [s for _, s in old]
    nd = len(new_shape)
    nstr = [0] * nd
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < nd and oi < len(odims):
        np_, op = new_shape[ni], odims[oi]
        while np_ != op:
            if np_ < op:
                np_ *= new_shape[nj]
                nj += 1
            else:
                op *= odims[oj]
                oj += 1
        for k in range(oi, oj - 1):  # the merged source dims must be contiguous
            if ostr[k] != odims[k + 1] * ostr[k + 1]:
                return None
        nstr[nj - 1] = ostr[oj - 1]
        for k in range(nj - 1, ni, -1):
            nstr[k - 1] = nstr[k] * new_shape[k]
        ni, nj = nj, nj + 1
        oi, oj = oj, oj + 1
    last = nstr[ni - 1] if ni > 0 else itemsize
    for k in range(ni, nd):  # trailing size-1 dimensions
        nstr[k] = last
    return new_shape, tuple(nstr), 0


def c_strides(shape: Sequence[int], itemsize: int) -> tuple[int, ...]:
    out, acc = [], itemsize
    for d in reversed(tuple(shape)):
        out.append(acc)
        acc *= max(d, 1)
    return tuple(reversed(out))


def squeeze(shape: Sequence[int], strides: Sequence[int],
            dims: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """Drops size-1 dimensions ``dims``: the remaining strides are unchanged."""
    keep = [i for i in range(len(shape)) if i not in set(dims)]
    return tuple(shape[i] for i in keep), tuple(strides[i] for i in keep), 0


def slice_(shape: Sequence[int], strides: Sequence[int], starts: Sequence[int],
           limits: Sequence[int], steps: Sequence[int]
           ) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """``x[start:limit:step, ...]`` (in-range bounds, steps >= 1): Nx's shrink plus a stride
    multiple. A view with no elements has offset 0 (seed 001)."""
    out = tuple(max(0, -(-(l - s) // st)) for s, l, st in zip(starts, limits, steps))
    offset = sum(s * b for s, b in zip(starts, strides))
    return out, tuple(b * st for b, st in zip(strides, steps)), 0 if 0 in out else offset


def rev(shape: Sequence[int], strides: Sequence[int],
        dims: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """Reverses ``dims`` (Nx's flip): negated strides, offset at the last element of each."""
    dims = set(dims)
    if 0 in shape:
        return tuple(shape), tuple(strides), 0
    offset = sum((shape[d] - 1) * strides[d] for d in dims)
    return tuple(shape), tuple(-s if d in dims else s for d, s in enumerate(strides)), offset
