"""Matrices from other arrays: the triangles (tril, triu) and diagonals (diag, diagflat)."""
from __future__ import annotations

from typing import Any

from .. import lax
from ..tracer import core, dtypes
from ..tracer.shapes import index_arg
from ._creation import _tri_mask, asarray
from ._indexing import take
from ._linalg import diagonal
from ._shape import ravel
from ._sorting import where

ArrayLike = Any


def tril(m: ArrayLike, k: int = 0) -> Any:
    """``m`` with the elements above the ``k``-th diagonal zeroed (last two axes)."""
    m = asarray(m)
    av = core.get_aval(m)
    if av.ndim < 2:
        raise ValueError("tril: argument 'm' must be at least 2-D")
    k = index_arg(k, "tril", "k")
    return where(_tri_mask(av.shape[-2], av.shape[-1], k), m, lax.full_like(m, 0))


def triu(m: ArrayLike, k: int = 0) -> Any:
    """``m`` with the elements below the ``k``-th diagonal zeroed (last two axes)."""
    m = asarray(m)
    av = core.get_aval(m)
    if av.ndim < 2:
        raise ValueError("triu: argument 'm' must be at least 2-D")
    k = index_arg(k, "triu", "k")
    return where(_tri_mask(av.shape[-2], av.shape[-1], k - 1), lax.full_like(m, 0), m)


def diag(v: ArrayLike, k: int = 0) -> Any:
    """The ``k``-th diagonal of a 2-D ``v``, or a 2-D array with 1-D ``v`` on it."""
    v = asarray(v)
    av = core.get_aval(v)
    k = index_arg(k, "diag", "k")
    if av.ndim == 2:
        return diagonal(v, k)
    if av.ndim != 1:
        raise ValueError("diag: argument 'v' must be 1-D or 2-D")
    n = av.shape[0] + abs(k)
    rows = lax.broadcasted_iota(dtypes.int32, (n, n), 0)
    cols = lax.broadcasted_iota(dtypes.int32, (n, n), 1)
    on = lax.eq(lax.add(rows, lax.full_like(rows, k)), cols)
    idx = rows if k >= 0 else cols
    vals = take(v, idx, mode="clip") if av.shape[0] else lax.full_like(rows, 0, av.dtype)
    return where(on, vals, lax.full_like(vals, 0))


def diagflat(v: ArrayLike, k: int = 0) -> Any:
    """A 2-D array with the flattened ``v`` on its ``k``-th diagonal."""
    return diag(ravel(v), k)
