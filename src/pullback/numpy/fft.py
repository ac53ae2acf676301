"""``pullback.numpy.fft`` (``jnp.fft``): discrete Fourier transforms, as JAX builds them on
``lax.fft`` (the transformed axes moved last, cropped or zero-padded to ``n``/``s``, then one
``lax.fft`` of up to 3 dimensions, then the ``norm`` factor).

``norm``: "backward" (the default, None: the inverse transforms scale by 1/n), "ortho"
(both by 1/sqrt(n)) or "forward" (the forward transforms scale by 1/n).
"""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

from .. import lax
from ..tracer import dtypes
from ..tracer.array import Array
from ._creation import arange, asarray
from ._padding import pad
from ._promotion import aval_of
from ._shape import moveaxis, roll
from ._ufuncs import conj, multiply

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_FFT, _IFFT, _RFFT, _IRFFT = (lax.FftType.FFT, lax.FftType.IFFT, lax.FftType.RFFT,
                              lax.FftType.IRFFT)


def _norm_factor(s: Sequence[int], func_name: str, norm: str | None) -> float | None:
    if norm is None or norm == "backward":
        return None
    n = float(math.prod(s))
    if norm == "ortho":
        return math.sqrt(n) if func_name.startswith("i") else 1 / math.sqrt(n)
    if norm == "forward":
        return n if func_name.startswith("i") else 1 / n
    raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')


def _fft_core(func_name: str, fft_type: lax.FftType, a: Any, s: Sequence[int] | None,
              axes: Sequence[int] | None, norm: str | None) -> Array:
    full_name = f"jax.numpy.fft.{func_name}"
    arr = asarray(a)
    ndim = aval_of(arr).ndim
    if s is not None:
        s = tuple(map(operator.index, s))
        if any(x <= 0 for x in s):
            arg = "n" if func_name in _ONE_D else "s"
            raise ValueError(f"Shape should be positive. ({full_name}: argument '{arg}' is "
                             f"{s[0] if arg == 'n' else s})")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    orig_axes = axes
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    axes = tuple(operator.index(ax) for ax in axes)
    if len(axes) != len(set(axes)):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {axes}.")
    for ax in axes:
        if not -ndim <= ax < ndim:
            raise ValueError(f"{full_name}: argument 'axes' holds {ax}, out of range for an "
                             f"array of {ndim} dimensions")
    # the axes moved last (and back after) unless they are there already: for the default
    # axis, two identity moveaxis calls were half of an eager call's Python time
    last = tuple(range(ndim - len(axes), ndim))
    moved = tuple(ax % ndim for ax in axes) != last
    if moved:
        arr = moveaxis(arr, axes, last)
    axes = last
    shape = aval_of(arr).shape
    if s is not None:
        in_s = list(shape)
        for axis, x in zip(axes, s):
            in_s[axis] = x
        if fft_type == _IRFFT:
            in_s[-1] = in_s[-1] // 2 + 1
        arr = arr[tuple(map(slice, in_s))]                                  # cropping
        arr = pad(arr, [(0, x - y) for x, y in zip(in_s, aval_of(arr).shape)])  # padding
    else:
        if fft_type == _IRFFT:
            s = [shape[axis] for axis in axes[:-1]]
            if axes:
                s += [max(0, 2 * (shape[axes[-1]] - 1))]
        else:
            s = [shape[axis] for axis in axes]
    transformed = _fft_core_nd(arr, fft_type, tuple(s))
    factor = _norm_factor(s, func_name, norm)
    if factor is not None:
        transformed = multiply(transformed, factor)
    if moved:
        transformed = moveaxis(transformed, last, orig_axes)
    return transformed


def _fft_core_nd(arr: Any, fft_type: lax.FftType, s: tuple[int, ...]) -> Array:
    """lax.fft over the last len(s) axes; more than 3 as JAX does: the last 2 (4 axes) or 3
    first, then the others (the inverse types in the reverse order)."""
    if len(s) <= 3:
        return lax.fft(arr, fft_type, s)
    nd = aval_of(arr).ndim
    n = 2 if len(s) == 4 else 3
    src = tuple(range(nd - len(s), nd - n))
    dst = tuple(range(nd - len(s) + n, nd))
    if fft_type in (_RFFT, _FFT):
        arr = lax.fft(arr, fft_type, s[-n:])
        arr = moveaxis(arr, src, dst)
        arr = _fft_core_nd(arr, _FFT, s[:-n])
        return moveaxis(arr, dst, src)
    arr = moveaxis(arr, src, dst)
    arr = _fft_core_nd(arr, _IFFT, s[:-n])
    arr = moveaxis(arr, dst, src)
    return lax.fft(arr, fft_type, s[-n:])


_ONE_D = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")


def _axis_check_1d(func_name: str, axis: Any) -> None:
    if isinstance(axis, (list, tuple)):
        raise ValueError(f"jax.numpy.fft.{func_name} does not support multiple axes. Please "
                         f"use jax.numpy.fft.{func_name}n. Got axis = {list(axis)}.")


def _fft_core_1d(func_name: str, fft_type: lax.FftType, a: Any, n: int | None, axis: int,
                 norm: str | None) -> Array:
    _axis_check_1d(func_name, axis)
    s = None if n is None else [n]
    return _fft_core(func_name, fft_type, a, s, [axis], norm)


def _fft_core_2d(func_name: str, fft_type: lax.FftType, a: Any, s: Sequence[int] | None,
                 axes: Sequence[int], norm: str | None) -> Array:
    if len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{func_name} only supports 2 axes. Got axes = {axes}.")
    return _fft_core(func_name, fft_type, a, s, axes, norm)


def fftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None) -> Array:
    """The n-dimensional discrete Fourier transform (``numpy.fft.fftn``).

    Args:
      a: the input array.
      s: the lengths of the transformed axes (cropping or zero-padding the input).
      axes: the axes to transform (default: the last ``len(s)``, or all).
      norm: "backward" (default), "ortho" or "forward".

    Returns:
      A complex array.
    """
    return _fft_core("fftn", _FFT, a, s, axes, norm)


def ifftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Array:
    """The n-dimensional inverse discrete Fourier transform (``numpy.fft.ifftn``)."""
    return _fft_core("ifftn", _IFFT, a, s, axes, norm)


def rfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Array:
    """The n-dimensional discrete Fourier transform of a real array (``numpy.fft.rfftn``): the
    last transformed axis keeps its n // 2 + 1 non-negative frequencies."""
    return _fft_core("rfftn", _RFFT, a, s, axes, norm)


def irfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None) -> Array:
    """The inverse of :func:`rfftn` (``numpy.fft.irfftn``): a real array, the last axis of
    length ``s[-1]`` (default 2 * (m - 1) for an input of m there)."""
    return _fft_core("irfftn", _IRFFT, a, s, axes, norm)


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The one-dimensional discrete Fourier transform (``numpy.fft.fft``).

    Args:
      a: the input array.
      n: the transform's length (cropping or zero-padding ``a`` along ``axis``).
      axis: the axis to transform.
      norm: "backward" (default), "ortho" or "forward".

    Returns:
      A complex array.
    """
    return _fft_core_1d("fft", _FFT, a, n, axis, norm)


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The one-dimensional inverse discrete Fourier transform (``numpy.fft.ifft``)."""
    return _fft_core_1d("ifft", _IFFT, a, n, axis, norm)


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The one-dimensional discrete Fourier transform of a real array (``numpy.fft.rfft``):
    the n // 2 + 1 non-negative frequencies."""
    return _fft_core_1d("rfft", _RFFT, a, n, axis, norm)


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The inverse of :func:`rfft` (``numpy.fft.irfft``): a real array of length ``n``
    (default 2 * (m - 1))."""
    return _fft_core_1d("irfft", _IRFFT, a, n, axis, norm)


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The FFT of a signal with Hermitian symmetry, given its first half
    (``numpy.fft.hfft``): a real array of length ``n``."""
    conj_a = conj(a)
    _axis_check_1d("hfft", axis)
    nn = (aval_of(conj_a).shape[axis] - 1) * 2 if n is None else n
    return multiply(_fft_core_1d("hfft", _IRFFT, conj_a, n=n, axis=axis, norm=norm), nn)


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The inverse of :func:`hfft` (``numpy.fft.ihfft``)."""
    _axis_check_1d("ihfft", axis)
    arr = asarray(a)
    nn = aval_of(arr).shape[axis] if n is None else n
    output = _fft_core_1d("ihfft", _RFFT, arr, n=n, axis=axis, norm=norm)
    return multiply(conj(output), 1 / nn)


def fft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None) -> Array:
    """The two-dimensional discrete Fourier transform (``numpy.fft.fft2``)."""
    return _fft_core_2d("fft2", _FFT, a, s, axes, norm)


def ifft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Array:
    """The two-dimensional inverse discrete Fourier transform (``numpy.fft.ifft2``)."""
    return _fft_core_2d("ifft2", _IFFT, a, s, axes, norm)


def rfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Array:
    """The two-dimensional discrete Fourier transform of a real array (``numpy.fft.rfft2``)."""
    return _fft_core_2d("rfft2", _RFFT, a, s, axes, norm)


def irfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None) -> Array:
    """The inverse of :func:`rfft2` (``numpy.fft.irfft2``)."""
    return _fft_core_2d("irfft2", _IRFFT, a, s, axes, norm)


def _freq_dtype(dtype: Any) -> np.dtype:
    return dtypes.canonical(dtypes.float64) if dtype is None else dtypes.requested(dtype)


def fftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Array:
    """The sample frequencies of an FFT of length ``n`` and sample spacing ``d``
    (``numpy.fft.fftfreq``): [0, 1, ..., n/2 - 1, -n/2, ..., -1] / (d n) for even n.

    Args:
      n: the window length.
      d: the sample spacing.
      dtype: the result's dtype (default: the default float).
      device: ignored (one CPU device).
    """
    if isinstance(n, (list, tuple)):
        raise ValueError("The n argument of jax.numpy.fft.fftfreq only takes an int. "
                         f"Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError("The d argument of jax.numpy.fft.fftfreq only takes a single value. "
                         f"Got d = {list(d)}.")
    dt = _freq_dtype(dtype)
    n = operator.index(n)
    i = np.arange(n)
    k = ((i + n // 2) % n - n // 2).astype(dt)
    return asarray(k, dtype=dt) / asarray(d * n, dtype=dt)


def rfftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Array:
    """The sample frequencies of :func:`rfft` of length ``n``: [0, 1, ..., n // 2] / (d n)
    (``numpy.fft.rfftfreq``)."""
    if isinstance(n, (list, tuple)):
        raise ValueError("The n argument of jax.numpy.fft.rfftfreq only takes an int. "
                         f"Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError("The d argument of jax.numpy.fft.rfftfreq only takes a single value. "
                         f"Got d = {list(d)}.")
    dt = _freq_dtype(dtype)
    n = operator.index(n)
    k = arange(0, n // 2 + 1, dtype=dt)
    return k / asarray(d * n, dtype=dt)


def _shift(x: Any, axes: Any, sign: int) -> Array:
    x = asarray(x)
    shape = aval_of(x).shape
    if axes is None:
        axes = tuple(range(len(shape)))
        shift: Any = [sign * (dim // 2) for dim in shape]
    elif isinstance(axes, int):
        shift = sign * (shape[axes] // 2)
    else:
        shift = [sign * (shape[ax] // 2) for ax in axes]
    return roll(x, shift, axes)


def fftshift(x: Any, axes: None | int | Sequence[int] = None) -> Array:
    """The zero frequency moved to the centre of the spectrum (``numpy.fft.fftshift``)."""
    return _shift(x, axes, 1)


def ifftshift(x: Any, axes: None | int | Sequence[int] = None) -> Array:
    """The inverse of :func:`fftshift` (``numpy.fft.ifftshift``)."""
    return _shift(x, axes, -1)
