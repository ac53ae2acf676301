"""More collectives over named vmap axes: ppermute, pshuffle, all_to_all, psum_scatter,
axis_size. Built from all_gather / reduce_scatter and the lane index, so each has the
derivatives and batching those have."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..primitives.collectives import reduce_scatter_p
from ..tracer import core, pytree
from ..tracer.array import Array
from ..transforms.vmap import find_axis
from ._collectives import _each, all_gather, axis_index
from ._elementwise import select_n, ge
from ._full import full_like
from ._indexing import dynamic_index_in_dim
from ._movement import reshape, transpose
from ._operands import scalars_to

__all__ = ["ppermute", "pshuffle", "all_to_all", "pswapaxes", "psum_scatter", "axis_size"]


def axis_size(axis_name: Any) -> int:
    """The number of lanes of the named vmap axis (a tuple of names: the product)."""
    names = axis_name if isinstance(axis_name, (tuple, list)) else (axis_name,)
    size = 1
    for n in names:
        size *= find_axis(n).payload.size
    return size


def ppermute(x: Any, axis_name: Any, perm: Sequence[tuple[int, int]]) -> Any:
    """Each lane ``dst`` receives ``x`` from lane ``src`` for the pairs ``(src, dst)`` of
    ``perm``; lanes that are no destination receive zeros (a pytree of arrays)."""
    n = axis_size(axis_name)
    pairs = [(int(s), int(d)) for s, d in perm]
    srcs, dsts = [s for s, _ in pairs], [d for _, d in pairs]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"ppermute: argument 'perm' sources and destinations must be unique, "
                         f"got {perm!r}")
    if any(not 0 <= i < n for i in srcs + dsts):
        raise ValueError(f"ppermute: argument 'perm' entries must be lanes in [0, {n}), got "
                         f"{perm!r}")
    table = np.full((n,), -1, np.int32)
    for s, d in pairs:
        table[d] = s
    return _from_table(x, axis_name, table, "ppermute")


def pshuffle(x: Any, axis_name: Any, perm: Sequence[int]) -> Any:
    """Lane ``i`` receives ``x`` from lane ``perm[i]`` (a permutation of the lanes)."""
    n = axis_size(axis_name)
    p = [int(i) for i in perm]
    if sorted(p) != list(range(n)):
        raise ValueError(f"pshuffle: argument 'perm' must be a permutation of range({n}), got "
                         f"{perm!r}")
    return _from_table(x, axis_name, np.asarray(p, np.int32), "pshuffle")


def _from_table(x: Any, axis_name: Any, table: np.ndarray, name: str) -> Any:
    src_tab = Array(table)

    def one(leaf: Any) -> Any:
        (leaf,) = scalars_to((leaf,))
        g = all_gather(leaf, axis_name)                          # (n, ...) every lane's x
        src = dynamic_index_in_dim(src_tab, axis_index(axis_name), 0, keepdims=False)
        got = dynamic_index_in_dim(g, select_n(ge(src, full_like(src, 0)), full_like(src, 0),
                                               src), 0, keepdims=False)
        zero = full_like(got, 0)
        keep = ge(src, full_like(src, 0))
        return select_n(keep, zero, got)
    return pytree.tree_map(one, x)


def psum_scatter(x: Any, axis_name: Any, *, scatter_dimension: int = 0,
                 axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """The sum of ``x`` over the lanes, of which lane i keeps slice i along
    ``scatter_dimension`` (whose size must be the lane count; with ``tiled``, a multiple of
    it, and lane i keeps the i-th block)."""
    if axis_index_groups is not None:
        raise NotImplementedError("psum_scatter: axis_index_groups is not supported")
    n = axis_size(axis_name)

    def check(leaf: Any) -> Any:
        (leaf,) = scalars_to((leaf,))
        shape = core.get_aval(leaf).shape
        if not -len(shape) <= scatter_dimension < len(shape):
            raise ValueError(f"psum_scatter: argument 'scatter_dimension' = "
                             f"{scatter_dimension} is out of range for shape {shape}")
        d = scatter_dimension % len(shape)
        if (shape[d] % n if tiled else shape[d] != n):
            raise ValueError(f"psum_scatter: dimension {d} of size {shape[d]} must "
                             f"{'be divisible by' if tiled else 'equal'} the axis size {n}")
        return _each(reduce_scatter_p, leaf, axis_name, axis=d, tiled=tiled, axis_size=n)
    return pytree.tree_map(check, x)


def all_to_all(x: Any, axis_name: Any, split_axis: int, concat_axis: int, *,
               axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """Lane i receives chunk i of ``split_axis`` from every lane, the chunks joined along
    ``concat_axis``: without ``tiled``, ``split_axis`` (of the lane count's size) is removed
    and a new axis of that size inserted at ``concat_axis``; with ``tiled``, ``split_axis`` is
    divided by and ``concat_axis`` multiplied by the lane count."""
    if axis_index_groups is not None:
        raise NotImplementedError("all_to_all: axis_index_groups is not supported")
    n = axis_size(axis_name)

    def one(leaf: Any) -> Any:
        (leaf,) = scalars_to((leaf,))
        shape = core.get_aval(leaf).shape
        nd = len(shape)
        if not -nd <= split_axis < nd:
            raise ValueError(f"all_to_all: argument 'split_axis' = {split_axis} is out of "
                             f"range for shape {shape}")
        s = split_axis % nd
        if (shape[s] % n if tiled else shape[s] != n):
            raise ValueError(f"all_to_all: the split axis {s} of size {shape[s]} must "
                             f"{'be divisible by' if tiled else 'equal'} the axis size {n}")
        # (n, ..., n_chunks, chunk, ...): every lane's x, the split axis cut into n chunks
        chunk = shape[s] // n
        cut = reshape(leaf, shape[:s] + (n, chunk) + shape[s + 1:])
        g = all_gather(cut, axis_name)                           # lane j's chunks at axis 0
        mine = dynamic_index_in_dim(g, axis_index(axis_name), s + 1, keepdims=False)
        # mine: (n source lanes, *x's shape with the split axis now one chunk)
        if tiled:
            c = concat_axis % nd
            return _merge_adjacent(_move(mine, 0, c), c)
        sh = core.get_aval(mine).shape
        squeezed = reshape(mine, sh[:s + 1] + sh[s + 2:])
        return _move(squeezed, 0, concat_axis % nd)
    return pytree.tree_map(one, x)


def _move(x: Any, src: int, dst: int) -> Any:
    nd = len(core.get_aval(x).shape)
    perm = [i for i in range(nd) if i != src]
    perm.insert(dst, src)
    return transpose(x, perm) if perm != list(range(nd)) else x


def _merge_adjacent(x: Any, c: int) -> Any:
    sh = core.get_aval(x).shape
    return reshape(x, sh[:c] + (sh[c] * sh[c + 1],) + sh[c + 2:])



def pswapaxes(x: Any, axis_name: Any, axis: int, *, axis_index_groups: Any = None) -> Any:
    """The named axis swapped with the unmapped ``axis`` (whose size must be the lane count):
    ``all_to_all`` with ``split_axis = concat_axis = axis``."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)
