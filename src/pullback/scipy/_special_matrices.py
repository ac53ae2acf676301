"""``pullback.scipy.linalg``'s special matrices, as ``jax.scipy.linalg`` has them: block_diag,
toeplitz, hankel, circulant, leslie, companion, fiedler, fiedler_companion,
convolution_matrix, hilbert, invhilbert, pascal, invpascal, helmert, hadamard, dft.

Index arithmetic and gathers over ``pullback.numpy``; the vector arguments take leading batch
dimensions where JAX's do (``toeplitz``, ``hankel``, ``circulant``, ``leslie``, ``companion``,
``fiedler``, ``fiedler_companion``, ``convolution_matrix``).
"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..numpy._promotion import promote_dtypes, promote_dtypes_inexact
from ..tracer import core

__all__ = ["block_diag", "toeplitz", "hankel", "circulant", "leslie", "companion", "fiedler",
           "fiedler_companion", "convolution_matrix", "hilbert", "invhilbert", "pascal",
           "invpascal", "helmert", "hadamard", "dft"]


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _take_last(v: Any, idx: np.ndarray) -> Any:
    """v[..., idx] for a static integer index array idx (any shape)."""
    return jnp.take(v, jnp.asarray(idx.astype(np.int32)), axis=-1)


def block_diag(*arrs: Any) -> Any:
    """The block diagonal matrix of the (at most 2-d) arguments."""
    if len(arrs) == 0:
        arrs = (jnp.zeros((1, 0)),)
    arrs = tuple(promote_dtypes("block_diag", *[jnp.asarray(a) for a in arrs]))
    for i, a in enumerate(arrs):
        if a.ndim > 2:
            raise ValueError("block_diag: arguments must have at most 2 dimensions, got "
                             f"shape {a.shape} at argument {i}.")
    mats = [jnp.atleast_2d(a) for a in arrs]
    total = sum(_shape(a)[1] for a in mats)
    rows, col = [], 0
    for a in mats:
        c = _shape(a)[1]
        rows.append(jnp.pad(a, ((0, 0), (col, total - c - col))))
        col += c
    return jnp.concatenate(rows, axis=0)


def _batched_vectors(c: Any, r: Any) -> tuple[Any, Any]:
    batch = np.broadcast_shapes(_shape(c)[:-1], _shape(r)[:-1])
    return (jnp.broadcast_to(c, batch + _shape(c)[-1:]),
            jnp.broadcast_to(r, batch + _shape(r)[-1:]))


def toeplitz(c: Any, r: Any | None = None) -> Any:
    """The Toeplitz matrix with first column ``c`` and first row ``r`` (``r[0]`` ignored;
    default ``conj(c)``); leading dimensions batch."""
    c = jnp.atleast_1d(jnp.asarray(c))
    r = jnp.conj(c) if r is None else jnp.atleast_1d(jnp.asarray(r))
    c, r = promote_dtypes("toeplitz", c, r)
    c, r = _batched_vectors(c, r)
    m, n = _shape(c)[-1], _shape(r)[-1]
    if m == 0 or n == 0:
        return jnp.zeros(_shape(c)[:-1] + (m, n), c.dtype)
    # element (i, j) is c[i - j] (i >= j) or r[j - i]: index (m - 1 - i) + j of [c[::-1], r[1:]]
    elems = jnp.concatenate([jnp.flip(c, -1), r[..., 1:]], axis=-1)
    i, j = np.arange(m)[:, None], np.arange(n)[None, :]
    return _take_last(elems, m - 1 - i + j)


def hankel(c: Any, r: Any | None = None) -> Any:
    """The Hankel matrix with first column ``c`` and last row ``r`` (``r[0]`` ignored;
    default zeros); leading dimensions batch."""
    c = jnp.asarray(c)
    r = jnp.zeros_like(c) if r is None else jnp.asarray(r)
    if c.ndim == 0:
        raise ValueError("hankel: c must be at least 1-dimensional, got a scalar.")
    if r.ndim == 0:
        raise ValueError("hankel: r must be at least 1-dimensional, got a scalar.")
    c, r = promote_dtypes("hankel", c, r)
    c, r = _batched_vectors(c, r)
    m, n = _shape(c)[-1], _shape(r)[-1]
    if m == 0 or n == 0:
        return jnp.zeros(_shape(c)[:-1] + (m, n), c.dtype)
    v = jnp.concatenate([c, r[..., 1:]], axis=-1)
    i, j = np.arange(m)[:, None], np.arange(n)[None, :]
    return _take_last(v, i + j)


def circulant(c: Any) -> Any:
    """The circulant matrix with first column ``c``; leading dimensions batch."""
    c = jnp.atleast_1d(jnp.asarray(c))
    n = _shape(c)[-1]
    return _take_last(c, (np.arange(n)[:, None] - np.arange(n)[None, :]) % max(n, 1))


def leslie(f: Any, s: Any) -> Any:
    """The Leslie matrix of fecundities ``f`` (n,) and survival rates ``s`` (n - 1,)."""
    f, s = jnp.atleast_1d(jnp.asarray(f)), jnp.atleast_1d(jnp.asarray(s))
    if _shape(f)[-1] < 2:
        raise ValueError("leslie: the length of f along the last axis must be at least 2; got "
                         f"shape {_shape(f)}.")
    if _shape(s)[-1] != _shape(f)[-1] - 1:
        raise ValueError("leslie: incorrect lengths for f and s. The length of s along the last "
                         "axis must be one less than the length of f; got f shape "
                         f"{_shape(f)} and s shape {_shape(s)}.")
    f, s = promote_dtypes("leslie", f, s)
    f, s = _batched_vectors(f, s)
    n = _shape(f)[-1]
    sub = jnp.eye(n, k=-1, dtype=bool)
    body = jnp.where(sub, jnp.pad(s, [(0, 0)] * (s.ndim - 1) + [(0, 1)])[..., None, :], 0)
    first = (np.arange(n) == 0)[:, None]
    return jnp.where(first, f[..., None, :], body).astype(f.dtype)


def companion(a: Any) -> Any:
    """The companion matrix of the polynomial coefficients ``a`` (highest degree first)."""
    (a,) = promote_dtypes_inexact("companion", jnp.asarray(a))
    a = jnp.atleast_1d(a)
    if _shape(a)[-1] < 2:
        raise ValueError("companion: the length of `a` along the last axis must be at least 2; "
                         f"got shape {_shape(a)}.")
    first = -a[..., 1:] / a[..., :1]
    m = _shape(a)[-1] - 1
    eye = jnp.eye(m, m, k=-1, dtype=first.dtype)
    return jnp.where((np.arange(m) == 0)[:, None], first[..., None, :], eye)


def fiedler(a: Any) -> Any:
    """The Fiedler matrix ``|a[i] - a[j]|``."""
    arr = jnp.atleast_1d(jnp.asarray(a))
    return jnp.abs(arr[..., None] - arr[..., None, :])


def fiedler_companion(a: Any) -> Any:
    """The Fiedler companion matrix of the polynomial coefficients ``a``."""
    (a,) = promote_dtypes_inexact("fiedler_companion", jnp.asarray(a))
    a = jnp.atleast_1d(a)
    if _shape(a)[-1] == 0:
        raise ValueError("fiedler_companion requires the last axis of 'a' to have nonzero "
                         f"length, but got an array of shape {_shape(a)}.")
    n = _shape(a)[-1] - 1
    batch = _shape(a)[:-1]
    if n == 0:
        return jnp.zeros(batch + (0, 0), a.dtype)
    a = a / a[..., :1]
    if n == 1:
        return jnp.reshape(-a[..., 1:], batch + (1, 1))
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    even, odd = i % 2 == 0, i % 2 == 1
    super_val = -_take_last(a, np.broadcast_to(np.minimum(i + 2, n), (n, n)))
    sub_val = -_take_last(a, np.broadcast_to(np.minimum(i + 1, n), (n, n)))
    out = jnp.zeros(batch + (n, n), a.dtype)
    out = jnp.where((j == i - 2) & odd & (i >= 3), 1, out)
    out = jnp.where((j == i - 1) & even & (i >= 2), sub_val, out)
    out = jnp.where((j == i + 2) & even, 1, out)
    out = jnp.where((j == i + 1) & even, super_val, out)
    out = jnp.where((i == 1) & (j == 0), 1, out)
    out = jnp.where((i == 0) & (j == 0), -a[..., 1:2, None], out)
    return out.astype(a.dtype)


def convolution_matrix(a: Any, n: int, mode: str = "full") -> Any:
    """The matrix of convolving with ``a`` (``mode`` 'full', 'valid' or 'same')."""
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"convolution_matrix: n must be a positive integer; got {n}.")
    a = jnp.asarray(a)
    if a.ndim == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a scalar.")
    m = _shape(a)[-1]
    if m < 1:
        raise ValueError(f"convolution_matrix: len(a) must be at least 1; got shape {_shape(a)}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"convolution_matrix: mode must be one of 'full', 'valid', 'same'; "
                         f"got {mode!r}.")
    pad = [(0, 0)] * (a.ndim - 1) + [(0, n - 1)]
    az = jnp.pad(a, pad)
    raz = jnp.pad(jnp.flip(a, -1), pad)
    L = m + n - 1
    if mode == "same":
        trim = min(n, m) - 1
        tb, te = trim // 2, trim - trim // 2
    elif mode == "valid":
        tb = te = min(n, m) - 1
    else:
        tb = te = 0
    return toeplitz(az[..., tb:L - te], raz[..., L - n - tb:L - tb])


def _default_float() -> Any:
    return jnp.zeros(()).dtype


def hilbert(n: int) -> Any:
    """The Hilbert matrix ``1 / (i + j + 1)``."""
    a = jnp.arange(n, dtype=_default_float())[:, None]
    return 1 / (a + a.T + 1)


def _binom(n: Any, k: Any) -> Any:
    return jnp.exp(lax.lgamma(n + 1.0) - lax.lgamma(n - k + 1.0) - lax.lgamma(k + 1.0))


def _comb(n: Any, k: Any) -> Any:
    """scipy.special.comb(n, k) (exact=False, 0 outside 0 <= k <= n) on float arrays."""
    ok = (k >= 0) & (k <= n)
    return jnp.where(ok, jnp.round(_binom(jnp.where(ok, n, 0.0), jnp.where(ok, k, 0.0))), 0.0)


def invhilbert(n: int) -> Any:
    """The inverse of the order-``n`` Hilbert matrix."""
    a = jnp.arange(n, dtype=_default_float())
    i, j = a[:, None], a[None, :]
    s = i + j
    return ((-1.0) ** s * (s + 1.0) * _comb(n + i, n - j - 1) * _comb(n + j, n - i - 1)
            * _comb(s, i) ** 2)


def pascal(n: int, kind: str | None = None) -> Any:
    """The Pascal matrix (``kind`` 'symmetric', 'lower' or 'upper'), float32 as JAX's."""
    kind = "symmetric" if kind is None else kind
    valid = ["symmetric", "lower", "upper"]
    if kind not in valid:
        raise ValueError(f"pascal: expected kind to be on of: {valid}; got {kind}")
    a = jnp.arange(n, dtype=jnp.float32)
    L = _binom(a[:, None], a[None, :])
    if kind == "lower":
        return L
    if kind == "upper":
        return L.T
    return jnp.dot(L, L.T)


def invpascal(n: int, kind: str | None = None) -> Any:
    """The inverse of the Pascal matrix."""
    kind = "symmetric" if kind is None else kind
    valid = ["symmetric", "lower", "upper"]
    if kind not in valid:
        raise ValueError(f"invpascal: expected kind to be one of: {valid}; got {kind}")
    a = jnp.arange(n, dtype=_default_float())
    i, j = a[:, None], a[None, :]
    L = ((-1.0) ** (i - j)) * _binom(i, j)
    if kind == "lower":
        return L
    if kind == "upper":
        return L.T
    return jnp.dot(L.T, L)


def helmert(n: int, full: bool = False) -> Any:
    """The Helmert matrix of order ``n`` (without its first row unless ``full``)."""
    if n < 1:
        raise ValueError(f"helmert: n must be a positive integer; got {n}.")
    i = jnp.arange(n - 1)[:, None]
    j = jnp.arange(n)[None, :]
    k = (i + 1).astype(_default_float())
    denom = jnp.sqrt(k * (k + 1))
    H = jnp.where(j <= i, 1.0 / denom, jnp.where(j == i + 1, -k / denom, jnp.zeros_like(denom)))
    if full:
        H = jnp.concatenate([jnp.full((1, n), 1.0 / math.sqrt(n), dtype=H.dtype), H], axis=0)
    return H


def hadamard(n: int, dtype: Any = int) -> Any:
    """The Hadamard matrix of order ``n`` (a power of 2)."""
    if n < 1 or not math.log2(n).is_integer():
        raise ValueError(f"hadamard: n must be a positive power of 2; got {n}.")
    H = jnp.ones((1, 1), dtype=dtype)
    for _ in range(int(math.log2(n))):
        H = jnp.concatenate([jnp.concatenate([H, H], axis=1), jnp.concatenate([H, -H], axis=1)],
                            axis=0)
    return H


def dft(n: int, scale: str | None = None, *, dtype: Any = None) -> Any:
    """The discrete Fourier transform matrix ``exp(-2 pi i j k / n)`` (scaled by 1/sqrt(n) or
    1/n with ``scale`` 'sqrtn' or 'n')."""
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"dft: scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    if dtype is None:
        dtype = jnp.result_type(_default_float(), jnp.complex64)
    elif not jnp.issubdtype(dtype, jnp.complexfloating):
        raise ValueError(f"dft: dtype must be a complex floating-point type; got {dtype}.")
    a = jnp.arange(n, dtype=dtype)
    omegas = jnp.exp(-2j * np.pi * a[:, None] * a[None, :] / n)
    if scale == "sqrtn":
        omegas = omegas / math.sqrt(n)
    elif scale == "n":
        omegas = omegas / n
    return omegas.astype(dtype)
