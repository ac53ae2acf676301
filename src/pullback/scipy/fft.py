"""``pullback.scipy.fft``: the discrete cosine transforms of ``jax.scipy.fft`` (dct, dctn, idct,
idctn; type 2 and its inverse, norm None or "ortho", as JAX), built on the FFT as JAX builds
them (J. Makhoul, "A fast cosine transform in one and two dimensions", 1980): the even samples
followed by the odd ones reversed, one complex FFT of the same length, and a quarter-wave
twiddle."""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..numpy._promotion import aval_of, promote_dtypes_inexact
from ..tracer.shapes import canonicalize_axis

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(fn: str, type: int, norm: str | None) -> None:
    if type != 2:
        raise NotImplementedError(f"{fn}: only DCT type 2 is implemented (got type={type!r})")
    if norm is not None and norm not in ("ortho", "backward"):
        raise ValueError(f"jax.scipy.fft.{fn}: norm={norm!r} is not implemented (argument "
                         "'norm' must be None, 'backward' or 'ortho')")


def _along(v: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    return v.reshape([-1 if a == axis else 1 for a in range(ndim)])


def _resize(x: Any, n: int | None, axis: int, fn: str) -> Any:
    """``x`` cropped or zero-padded to ``n`` along ``axis``."""
    if n is None:
        return x
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"{fn}: argument 'n' must be a positive length, got {n}")
    shape = aval_of(x).shape
    if n < shape[axis]:
        return lax.slice_in_dim(x, 0, n, axis=axis)
    return jnp.pad(x, [(0, n - shape[axis] if a == axis else 0) for a in range(len(shape))])


def _ortho_scale(N: int, inverse: bool) -> np.ndarray:
    f = np.full(N, math.sqrt(2 * N))
    f[0] = math.sqrt(4 * N)
    return f if inverse else 1 / f


def dct(x: Any, type: int = 2, n: int | None = None, axis: int = -1,
        norm: str | None = None) -> Any:
    """The discrete cosine transform of type 2 along ``axis`` (``scipy.fft.dct``).

    Args:
      x: the input array.
      type: the DCT type (2 only, as JAX).
      n: the length (cropping or zero-padding ``x``).
      axis: the axis to transform.
      norm: None (y_k = 2 sum_n x_n cos(pi k (2n + 1) / 2N)) or "ortho" (orthonormal).
    """
    _check("dct", type, norm)
    (x,) = promote_dtypes_inexact("dct", jnp.asarray(x))
    if aval_of(x).dtype.kind == "c":  # the real and imaginary parts apart, as JAX
        return lax.complex(dct(jnp.real(x), type, n, axis, norm),
                           dct(jnp.imag(x), type, n, axis, norm))
    ndim = aval_of(x).ndim
    axis = canonicalize_axis(axis, ndim, "dct", "axis")
    x = _resize(x, n, axis, "dct")
    N = aval_of(x).shape[axis]
    # even samples, then odd samples reversed
    v = jnp.concatenate([lax.slice_in_dim(x, 0, None, 2, axis),
                         lax.rev(lax.slice_in_dim(x, 1, None, 2, axis), (axis,))], axis)
    V = jnp.fft.fft(v, axis=axis)
    k = np.arange(N)
    w = _along(np.exp(-0.5j * np.pi * k / N), axis, ndim).astype(aval_of(V).dtype)
    out = 2 * jnp.real(V * w)
    if norm == "ortho":
        out = out * _along(_ortho_scale(N, False), axis, ndim).astype(aval_of(out).dtype)
    return out


def idct(x: Any, type: int = 2, n: int | None = None, axis: int = -1,
         norm: str | None = None) -> Any:
    """The inverse of :func:`dct` of type 2 (a DCT of type 3, ``scipy.fft.idct``)."""
    _check("idct", type, norm)
    (x,) = promote_dtypes_inexact("idct", jnp.asarray(x))
    if aval_of(x).dtype.kind == "c":
        return lax.complex(idct(jnp.real(x), type, n, axis, norm),
                           idct(jnp.imag(x), type, n, axis, norm))
    ndim = aval_of(x).ndim
    axis = canonicalize_axis(axis, ndim, "idct", "axis")
    x = _resize(x, n, axis, "idct")
    N = aval_of(x).shape[axis]
    dt = aval_of(x).dtype
    if norm == "ortho":
        x = x * _along(_ortho_scale(N, True), axis, ndim).astype(dt)
    # V_k = (X_k - i X_{N-k}) exp(i pi k / 2N) / 2, X_N = 0
    shifted = jnp.concatenate([lax.slice_in_dim(x, 0, 1, axis=axis) * 0,
                               lax.rev(lax.slice_in_dim(x, 1, None, axis=axis), (axis,))], axis)
    k = np.arange(N)
    w = _along(0.5 * np.exp(0.5j * np.pi * k / N), axis, ndim)
    cdt = jnp.result_type(dt, np.complex64)
    V = lax.complex(x, -shifted) * w.astype(cdt)
    v = jnp.real(jnp.fft.ifft(V, axis=axis))
    # de-interleave: v holds the even samples, then the odd ones reversed
    h = (N + 1) // 2
    even = lax.slice_in_dim(v, 0, h, axis=axis)
    odd = lax.rev(lax.slice_in_dim(v, h, N, axis=axis), (axis,))
    if N % 2:  # pad the odd samples to interleave
        odd = jnp.pad(odd, [(0, 1 if a == axis else 0) for a in range(ndim)])
    both = jnp.stack([even, odd], axis=axis + 1)
    shape = list(aval_of(v).shape)
    shape[axis] = 2 * h
    out = jnp.reshape(both, shape)
    return lax.slice_in_dim(out, 0, N, axis=axis)


def _nd(fn: Any, name: str, x: Any, type: int, s: Sequence[int] | None,
        axes: Sequence[int] | None, norm: str | None) -> Any:
    _check(name, type, norm)
    x = jnp.asarray(x)
    ndim = aval_of(x).ndim
    if axes is None:
        axes = tuple(range(ndim)) if s is None else tuple(range(ndim - len(s), ndim))
    axes = tuple(canonicalize_axis(a, ndim, name, "axes") for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: argument 'axes' holds repeated axes {axes}")
    if s is not None and len(s) != len(axes):
        raise ValueError(f"{name}: arguments 's' and 'axes' must have one length, got {s} and "
                         f"{axes}")
    ns = dict(zip(axes, s)) if s is not None else {}
    for a in axes:
        x = fn(x, type=type, n=ns.get(a), axis=a, norm=norm)
    return x


def dctn(x: Any, type: int = 2, s: Sequence[int] | None = None,
         axes: Sequence[int] | None = None, norm: str | None = None) -> Any:
    """The multidimensional :func:`dct` over ``axes`` (``scipy.fft.dctn``)."""
    return _nd(dct, "dctn", x, type, s, axes, norm)


def idctn(x: Any, type: int = 2, s: Sequence[int] | None = None,
          axes: Sequence[int] | None = None, norm: str | None = None) -> Any:
    """The multidimensional :func:`idct` over ``axes`` (``scipy.fft.idctn``)."""
    return _nd(idct, "idctn", x, type, s, axes, norm)
