"""``mode``, ``rankdata`` and ``sem`` of ``jax.scipy.stats``.

mode and rankdata compare every pair of elements along the reduced axis (n^2 comparisons, no
data-dependent shapes, so they trace under jit as JAX's ``size=``-bounded versions do)."""
from __future__ import annotations

import math
from typing import Any, NamedTuple

from ...numpy._promotion import promote_args_inexact
from ...tracer import dtypes
from ...tracer.shapes import canonicalize_axis
from ._common import np, pnp


class ModeResult(NamedTuple):
    mode: Any
    count: Any


def _check_nan_policy(name: str, nan_policy: str) -> None:
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                         "{'propagate', 'omit', 'raise'}")
    if nan_policy != "propagate":
        raise NotImplementedError(f"{name}: nan_policy={nan_policy!r} is not implemented (as "
                                  "in JAX)")


def mode(a: Any, axis: int | None = 0, nan_policy: str = "propagate",
         keepdims: bool = False) -> ModeResult:
    """The most common value along ``axis`` (the smallest on ties) and its count."""
    x = pnp.atleast_1d(pnp.asarray(a))
    _check_nan_policy("mode", nan_policy)
    if axis is None:
        x = pnp.ravel(x)
        ax = 0
    else:
        ax = canonicalize_axis(axis, x.ndim, "mode")
    x = pnp.moveaxis(x, ax, -1)
    n = x.shape[-1]
    if n == 0:
        shape = x.shape[:-1]
        return ModeResult(pnp.full(shape, np.nan, dtypes.float32),
                          pnp.zeros(shape, dtypes.float32))
    eq = x[..., :, None] == x[..., None, :]
    counts = pnp.sum(eq, axis=-1)
    best = pnp.max(counts, axis=-1, keepdims=True)
    # the smallest value among those with the largest count
    cand = pnp.where(counts == best, x, pnp.max(x, axis=-1, keepdims=True))
    m = pnp.min(cand, axis=-1)
    c = best[..., 0]
    if keepdims:
        if axis is None:
            shape = (1,) * pnp.ndim(a) if pnp.ndim(a) else (1,)
            m, c = pnp.reshape(m, shape), pnp.reshape(c, shape)
        else:
            m, c = pnp.expand_dims(m, ax), pnp.expand_dims(c, ax)
    return ModeResult(m, c)


def _ranks_1d_last(x: Any, method: str) -> Any:
    n = x.shape[-1]
    lt = pnp.sum(x[..., None, :] < x[..., :, None], axis=-1)
    eq = pnp.sum(x[..., None, :] == x[..., :, None], axis=-1)
    if method == "average":
        r = lt + 0.5 * (eq + 1)
    elif method == "min":
        r = lt + 1
    elif method == "max":
        r = lt + eq
    elif method == "ordinal":
        earlier = pnp.tril(pnp.ones((n, n), bool), -1)
        r = lt + pnp.sum((x[..., None, :] == x[..., :, None]) & earlier, axis=-1) + 1
    else:  # dense: the distinct values below, each counted once
        eqc = pnp.sum(x[..., None, :] == x[..., :, None], axis=-1)
        share = pnp.where(x[..., None, :] < x[..., :, None], 1.0 / eqc[..., None, :], 0.0)
        r = pnp.round(pnp.sum(share, axis=-1)) + 1
    r = pnp.asarray(r).astype(dtypes.float64 if pnp.zeros(()).dtype == np.float64
                              else dtypes.float32)
    return pnp.where(pnp.any(pnp.isnan(x), axis=-1, keepdims=True), np.nan, r) \
        if dtypes.is_float(x.dtype) else r


def rankdata(a: Any, method: str = "average", *, axis: int | None = None,
             nan_policy: str = "propagate") -> Any:
    """Ranks of the data (1 for the smallest), ties by ``method``: "average", "min", "max",
    "dense" or "ordinal"; NaN everywhere if the data holds a NaN (as JAX)."""
    _check_nan_policy("rankdata", nan_policy)
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"unknown method '{method}'")
    x = pnp.asarray(a)
    if axis is None:
        return _ranks_1d_last(pnp.ravel(x), method)
    ax = canonicalize_axis(axis, x.ndim, "rankdata")
    return pnp.moveaxis(_ranks_1d_last(pnp.moveaxis(x, ax, -1), method), -1, ax)


def sem(a: Any, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False) -> Any:
    """The standard error of the mean along ``axis``."""
    (b,) = promote_args_inexact("sem", a)
    if nan_policy == "propagate":
        size = math.prod(b.shape) if axis is None else b.shape[axis]
        return b.std(axis, ddof=ddof, keepdims=keepdims) / pnp.sqrt(size).astype(b.dtype)
    if nan_policy == "omit":
        count = (~pnp.isnan(b)).sum(axis, keepdims=keepdims)
        return pnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims) / pnp.sqrt(count).astype(
            b.dtype)
    raise ValueError(f"{nan_policy} is not supported")
