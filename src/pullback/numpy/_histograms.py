"""Binning: digitize, histogram_bin_edges, histogram, histogram2d, histogramdd (JAX's
formulations: bins located by ``searchsorted``, counts summed by ``bincount``/scatter-add, so
weighted histograms are differentiable in the weights)."""
from __future__ import annotations

import builtins
import math
import operator
from typing import Any, Sequence

import numpy as np

from .. import lax
from ..tracer import dtypes
from ..tracer.errors import ConcretizationTypeError
from ._creation import asarray, ones_like, zeros
from ._index_tricks import ix_, ravel_multi_index
from ._promotion import aval_of, convert, promote_args_inexact, promote_dtypes_inexact
from ._ranges import linspace
from ._reductions import bincount, max as max_, min as min_, sum as sum_
from ._shape import diff, reshape, stack, transpose
from ._sorting import searchsorted
from ._ufuncs import where

ArrayLike = Any


def digitize(x: ArrayLike, bins: ArrayLike, right: bool = False, *,
             method: str | None = None) -> Any:
    """The index of the bin of ``bins`` (1-D, monotonic either way) each ``x`` falls into.

    Args:
      x: the values.
      bins: increasing or decreasing bin edges.
      right: the bins include their right edge instead of their left.
      method: passed to :func:`searchsorted`.

    Returns:
      int32 indices of ``x``'s shape.
    """
    x, b = asarray(x), asarray(bins)
    if not isinstance(right, (bool, np.bool_)):
        raise TypeError(f"digitize: argument 'right' must be a static bool, got {right!r}")
    if aval_of(b).ndim != 1:
        raise ValueError(f"digitize: argument 'bins' must be 1-D, got shape {aval_of(b).shape}")
    n = aval_of(b).shape[0]
    if n == 0:
        return zeros(aval_of(x).shape, dtypes.int32)
    side = "left" if right else "right"
    kw = {} if method is None else {"method": method}
    inc = searchsorted(b, x, side=side, **kw)
    dec = lax.sub(lax.full_like(inc, n), searchsorted(lax.rev(b, (0,)), x, side=side, **kw))
    return where(lax.ge(b[n - 1], b[0]), inc, dec)


def _bins_count(name: str, bins: Any) -> int:
    try:
        return operator.index(bins)
    except TypeError:
        c = bins.to_concrete_value() if hasattr(bins, "to_concrete_value") else None
        if c is None:
            raise ConcretizationTypeError(f"{name}: argument 'bins' must be a static integer "
                                          "or a 1-D array of edges") from None
        return operator.index(np.asarray(c).item())


def histogram_bin_edges(a: ArrayLike, bins: ArrayLike = 10,
                        range: Sequence[ArrayLike] | None = None,  # noqa: A002
                        weights: ArrayLike | None = None) -> Any:
    """The bin edges :func:`histogram` uses: ``bins`` itself if it is 1-D, else ``bins + 1``
    evenly spaced edges over ``range`` (default: the data's min and max; an empty range
    widened by 0.5 on each side)."""
    del weights  # only string bins use them, which are not supported (as JAX)
    if isinstance(bins, str):
        raise NotImplementedError("histogram_bin_edges: string values of 'bins' are not "
                                  "supported")
    arr = asarray(a)
    dt = dtypes.to_inexact(aval_of(arr).dtype)
    if np.ndim(bins) == 1:
        return convert(asarray(bins), dt)
    nb = _bins_count("histogram_bin_edges", bins)
    if nb < 1:
        raise ValueError(f"histogram_bin_edges: argument 'bins' must be positive, got {nb}")
    if range is None:
        if aval_of(arr).size == 0:
            lo, hi = convert(0, dt), convert(1, dt)
        else:
            lo, hi = convert(min_(arr), dt), convert(max_(arr), dt)
    else:
        if np.shape(range) != (2,):
            raise ValueError(f"histogram_bin_edges: argument 'range' must be None or a pair "
                             f"of scalars, got {range!r}")
        lo, hi = convert(asarray(range[0]), dt), convert(asarray(range[1]), dt)
    same = lax.eq(lo, hi)
    lo, hi = where(same, lo - 0.5, lo), where(same, hi + 0.5, hi)
    return linspace(lo, hi, nb + 1, dtype=dt)


def histogram(a: ArrayLike, bins: ArrayLike = 10,
              range: Sequence[ArrayLike] | None = None,  # noqa: A002
              weights: ArrayLike | None = None, density: bool | None = None
              ) -> tuple[Any, Any]:
    """Counts (or summed ``weights``) of ``a``'s values (flattened) in each bin.

    Args:
      a: the data.
      bins: the number of equal-width bins, or the 1-D bin edges (monotonically increasing).
      range: the (lower, upper) range of the bins (default: the data's).
      weights: one weight per element of ``a``.
      density: normalize so that the integral over the range is 1.

    Returns:
      ``(hist, bin_edges)``; the last bin includes its right edge, values outside the range
      are not counted.
    """
    if weights is None:
        (a,) = promote_args_inexact("histogram", a)
        weights = ones_like(a)
    else:
        if np.shape(a) != np.shape(weights):
            raise ValueError("histogram: argument 'weights' must have the shape of 'a', got "
                             f"{np.shape(weights)} and {np.shape(a)}")
        a, weights = promote_dtypes_inexact("histogram", a, weights)
    edges = histogram_bin_edges(a, bins, range, weights)
    ne = aval_of(edges).shape[0]
    idx = searchsorted(edges, a, side="right")
    idx = where(lax.eq(a, edges[ne - 1]), ne - 1, idx)
    counts = zeros((ne,), aval_of(weights).dtype).at[idx].add(weights)[1:]
    if density:
        counts = counts / diff(edges) / sum_(counts)
    return counts, edges


def histogramdd(sample: ArrayLike, bins: ArrayLike | list[ArrayLike] = 10,
                range: Sequence[Any] | None = None,  # noqa: A002
                weights: ArrayLike | None = None, density: bool | None = None
                ) -> tuple[Any, list[Any]]:
    """A D-dimensional histogram of the (N, D) ``sample``.

    Args:
      sample: N points in D dimensions.
      bins: an int (bins per dimension), or one int or edge array per dimension.
      range: one (lower, upper) pair (or None) per dimension.
      weights: one weight per point.
      density: normalize to a probability density.

    Returns:
      ``(hist, edges)``: the D-dimensional counts and the list of edge arrays.
    """
    if weights is None:
        (sample,) = promote_dtypes_inexact("histogramdd", sample)
    else:
        if np.shape(weights) != np.shape(sample)[:1]:
            raise ValueError("histogramdd: argument 'weights' must have one weight per "
                             f"sample, got shape {np.shape(weights)} for sample shape "
                             f"{np.shape(sample)}")
        sample, weights = promote_dtypes_inexact("histogramdd", sample, weights)
    if aval_of(sample).ndim != 2:
        raise ValueError(f"histogramdd: argument 'sample' must be 2-D (N, D), got shape "
                         f"{aval_of(sample).shape}")
    n, d = aval_of(sample).shape
    if range is not None and (len(range) != d or builtins.any(
            r is not None and np.shape(r)[0] != 2 for r in range)):
        raise ValueError(f"histogramdd: for sample shape {(n, d)}, argument 'range' must be "
                         f"a sequence of {d} pairs or Nones, got {range!r}")
    try:
        per_dim = list(bins)  # type: ignore[arg-type]
    except TypeError:
        per_dim = d * [bins]
    else:
        if len(per_dim) != d:
            raise ValueError(f"histogramdd: argument 'bins' must have one entry per dimension "
                             f"({d}), got {len(per_dim)}")
    idx_by_dim, edges_by_dim = [], []
    for i in builtins.range(d):
        col = sample[:, i]
        edges = histogram_bin_edges(col, per_dim[i], None if range is None else range[i],
                                    weights)
        ne = aval_of(edges).shape[0]
        bi = searchsorted(edges, col, side="right")
        bi = where(lax.eq(col, edges[ne - 1]), bi - 1, bi)
        idx_by_dim.append(bi)
        edges_by_dim.append(edges)
    nbins = tuple(aval_of(e).shape[0] + 1 for e in edges_by_dim)
    xy = ravel_multi_index(tuple(idx_by_dim), nbins, mode="clip")
    hist = reshape(bincount(xy, weights, length=math.prod(nbins)), nbins)
    hist = hist[(slice(1, -1),) * d]
    if density:
        hist = convert(hist, aval_of(sample).dtype)
        hist = hist / sum_(hist)
        for norm in ix_(*[diff(e) for e in edges_by_dim]):
            hist = hist / norm
    return hist, edges_by_dim


def histogram2d(x: ArrayLike, y: ArrayLike, bins: ArrayLike | list[ArrayLike] = 10,
                range: Sequence[Any] | None = None,  # noqa: A002
                weights: ArrayLike | None = None, density: bool | None = None
                ) -> tuple[Any, Any, Any]:
    """A 2-D histogram of the points (x, y): ``(hist, x_edges, y_edges)`` (see
    :func:`histogramdd`)."""
    try:
        nb = len(bins)  # type: ignore[arg-type]
    except TypeError:
        nb = 1
    if nb not in (1, 2):
        e = asarray(bins)
        bins = [e, e]
    x, y = asarray(x), asarray(y)
    if aval_of(x).shape != aval_of(y).shape or aval_of(x).ndim != 1:
        raise ValueError("histogram2d: arguments 'x' and 'y' must be 1-D of equal length, got "
                         f"shapes {aval_of(x).shape} and {aval_of(y).shape}")
    x, y = promote_dtypes_inexact("histogram2d", x, y)
    hist, edges = histogramdd(transpose(stack([x, y])), bins, range, weights, density)
    return hist, edges[0], edges[1]
