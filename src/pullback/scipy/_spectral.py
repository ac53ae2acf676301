"""Spectral analysis for ``pullback.scipy.signal``: detrend, stft, istft, csd, welch (JAX 0.10's
``jax.scipy.signal`` functions, which follow SciPy's).

Everything is a composition of pullback's own ops: segments are a gather of static indices,
the windowed transforms are ``jnp.fft.rfft``/``fft`` (pullback's C FFT), the overlap-add of
``istft`` is a sum of padded chunks. Window coefficients are static NumPy constants
(``_windows.get_window``), as JAX's come from SciPy.
"""
from __future__ import annotations

import operator
import warnings
from typing import Any, Callable

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..numpy._promotion import aval_of, promote_dtypes_inexact
from ..tracer import dtypes
from ..tracer.errors import ConcretizationTypeError
from ..tracer.shapes import canonicalize_axis
from ._windows import get_window, hann_jax

__all__ = ["csd", "detrend", "istft", "stft", "welch"]

ArrayLike = Any
Array = Any


def _static_int(op: str, arg: str, value: Any) -> int:
    try:
        return operator.index(value)
    except ConcretizationTypeError:
        raise  # a traced value: the error already says where it came from
    except TypeError:
        raise TypeError(f"{op}: argument '{arg}' must be a static integer, got {value!r}") \
            from None


def _complex_dtype(dt: np.dtype) -> np.dtype:
    if dtypes.is_complex(dt):
        return dt
    if dt == np.float64:
        return np.dtype(np.complex128)
    if dtypes.is_float(dt):
        return np.dtype(np.complex64)
    return dtypes.canonical(np.dtype(np.complex128))


def _real_dtype(dt: np.dtype) -> np.dtype:
    return np.dtype(np.float64) if dt == np.complex128 else np.dtype(np.float32)


# ---------------------------------------------------------------------------------- detrend

def _detrend_linear(piece: Array, axis: int) -> Array:
    """``piece`` minus its least-squares line along ``axis`` (closed form of the 2-column
    least-squares fit JAX solves with lstsq: the same residual, to rounding)."""
    n = aval_of(piece).shape[axis]
    if n == 1:  # one point lies on its line
        return piece - piece
    t = np.arange(1, n + 1, dtype=np.float64) / n
    tc = t - t.mean()
    shape = [1] * aval_of(piece).ndim
    shape[axis] = n
    dt = aval_of(piece).dtype
    tcol = jnp.asarray(tc.reshape(shape), dtype=_real_dtype(dt) if dtypes.is_complex(dt) else dt)
    slope = jnp.sum(tcol * piece, axis=axis, keepdims=True) / float(np.sum(tc * tc))
    return piece - jnp.mean(piece, axis=axis, keepdims=True) - slope * tcol


def detrend(data: ArrayLike, axis: int = -1, type: str = "linear", bp: Any = 0,
            overwrite_data: None = None) -> Array:
    """Removes a linear (or piecewise linear) or constant trend along an axis
    (``jax.scipy.signal.detrend``).

    Args:
      data: the array.
      axis: the axis to detrend along.
      type: "linear" (a least-squares line, per piece between breakpoints) or "constant"
        (the mean).
      bp: static breakpoints (ints) for "linear": a line is fit to each piece
        ``data[bp[i]:bp[i+1]]``.
      overwrite_data: not supported (must be None), as in JAX.

    Returns:
      ``data`` minus its trend, in an inexact dtype.
    """
    if overwrite_data is not None:
        raise NotImplementedError("detrend: argument 'overwrite_data' is not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("detrend: argument 'type': Trend type must be 'linear' or "
                         f"'constant', got {type!r}.")
    (x,) = promote_dtypes_inexact("detrend", jnp.asarray(data))
    ndim = aval_of(x).ndim
    ax = canonicalize_axis(axis, max(ndim, 1), "detrend")
    if type == "constant":
        return x - jnp.mean(x, axis=ax, keepdims=True)
    n = aval_of(x).shape[ax]
    edges = np.sort(np.unique(np.r_[0, np.asarray(bp, dtype=np.int64).ravel(), n]))
    if edges[0] < 0 or edges[-1] > n:
        raise ValueError("detrend: argument 'bp': Breakpoints must be non-negative and less "
                         "than length of data along given axis.")
    pieces = [_detrend_linear(lax.slice_in_dim(x, int(a), int(b), axis=ax), ax)
              for a, b in zip(edges[:-1], edges[1:])]
    if not pieces:
        return x
    return pieces[0] if len(pieces) == 1 else jnp.concatenate(pieces, axis=ax)


# ----------------------------------------------------------------- the spectral helper

def _odd_ext(x: Array, n: int) -> Array:
    if n < 1:
        return x
    size = aval_of(x).shape[-1]
    if n > size - 1:
        raise ValueError(f"The extension length n ({n}) is too big. It must not exceed "
                         f"x.shape[axis]-1, which is {size - 1}.")
    first = lax.slice_in_dim(x, 0, 1, axis=-1)
    last = lax.slice_in_dim(x, size - 1, size, axis=-1)
    left = jnp.flip(lax.slice_in_dim(x, 1, n + 1, axis=-1), axis=-1)
    right = jnp.flip(lax.slice_in_dim(x, size - n - 1, size - 1, axis=-1), axis=-1)
    return jnp.concatenate((2 * first - left, x, 2 * last - right), axis=-1)


def _extend(x: Array, n: int, boundary: str) -> Array:
    if boundary == "odd":
        return _odd_ext(x, n)
    width = [(0, 0)] * (aval_of(x).ndim - 1) + [(n, n)]
    mode = {"even": "reflect", "constant": "edge", "zeros": "constant"}[boundary]
    return jnp.pad(x, width, mode)


_BOUNDARIES = ("even", "odd", "constant", "zeros", None)


def _window(op: str, window: Any, nperseg: int | None, length: int, dt: np.dtype
            ) -> tuple[Array, int]:
    """The window array and the segment length (SciPy's ``_triage_segments``)."""
    if isinstance(window, (str, tuple)):
        n = 256 if nperseg is None else nperseg
        if n > length:
            warnings.warn(f"nperseg={n} is greater than input_length={length}, using "
                          f"nperseg={length}", stacklevel=4)
            n = length
        coeffs = hann_jax(n) if isinstance(window, str) and window == "hann" else \
            get_window(op, window, n)
        return jnp.asarray(coeffs, dtype=dt), n
    win = jnp.asarray(window, dtype=dt)
    shape = aval_of(win).shape
    size = int(np.prod(shape))
    n = size if nperseg is None else nperseg
    if len(shape) != 1:
        raise ValueError(f"{op}: argument 'window' must be 1-D, got shape {shape}")
    if length < size:
        raise ValueError(f"{op}: argument 'window' is longer than the input signal "
                         f"({size} > {length})")
    if n != size:
        raise ValueError(f"{op}: the value specified for nperseg ({n}) is different from the "
                         f"length of window ({size})")
    return win, n


def _segments_fft(x: Array, win: Array, detrend_func: Callable, nperseg: int, noverlap: int,
                  nfft: int, sides: str) -> Array:
    """The windowed FFTs of the segments along the last axis: (..., nseg, nfreq)."""
    length = aval_of(x).shape[-1]
    step = nperseg - noverlap
    starts = np.arange(0, length - nperseg + 1, step)
    idx = starts[:, None] + np.arange(nperseg)[None, :]
    seg = x[..., idx]  # a gather of static indices
    seg = detrend_func(seg)
    if jnp.iscomplexobj(win) and not jnp.iscomplexobj(seg):
        seg = seg.astype(aval_of(win).dtype)
    seg = win * seg
    if sides == "twosided":
        return jnp.fft.fft(seg, n=nfft)
    return jnp.fft.rfft(jnp.real(seg), n=nfft)


def _spectral_helper(op: str, x: ArrayLike, y: ArrayLike | None, fs: ArrayLike, window: Any,
                     nperseg: Any, noverlap: Any, nfft: Any, detrend_type: Any,
                     return_onesided: bool, scaling: str, axis: int, mode: str,
                     boundary: str | None = None, padded: bool = False
                     ) -> tuple[Array, Array, Array]:
    """SciPy's ``_spectral_helper`` as JAX has it (``y=None``: auto-spectrum)."""
    if boundary not in _BOUNDARIES:
        raise ValueError(f"{op}: argument 'boundary': Unknown boundary option {boundary!r}, "
                         f"must be one of: {list(_BOUNDARIES)}")
    x = jnp.asarray(x)
    ax = canonicalize_axis(_static_int(op, "axis", axis), aval_of(x).ndim, op)
    if y is None:
        (x,) = promote_dtypes_inexact(op, x)
        outer = tuple(s for i, s in enumerate(aval_of(x).shape) if i != ax)
        ya = None
    else:
        x, ya = promote_dtypes_inexact(op, x, jnp.asarray(y))
        if aval_of(x).ndim != aval_of(ya).ndim:
            raise ValueError(f"{op}: x and y must have the same rank ({aval_of(x).ndim} vs "
                             f"{aval_of(ya).ndim}).")
        try:
            outer = np.broadcast_shapes(
                tuple(s for i, s in enumerate(aval_of(x).shape) if i != ax),
                tuple(s for i, s in enumerate(aval_of(ya).shape) if i != ax))
        except ValueError as err:
            raise ValueError(f"{op}: x and y cannot be broadcast together.") from err
    result_dtype = _complex_dtype(aval_of(x).dtype)
    freq_dtype = _real_dtype(result_dtype)

    nperseg_i = None
    if nperseg is not None:
        nperseg_i = _static_int(op, "nperseg", nperseg)
        if nperseg_i < 1:
            raise ValueError(f"{op}: argument 'nperseg' must be a positive integer, got "
                             f"{nperseg_i}")
    win, nperseg_i = _window(op, window, nperseg_i, aval_of(x).shape[ax], aval_of(x).dtype)
    noverlap_i = nperseg_i // 2 if noverlap is None else _static_int(op, "noverlap", noverlap)
    nfft_i = nperseg_i if nfft is None else _static_int(op, "nfft", nfft)

    if ya is None and aval_of(x).size == 0:
        shape = aval_of(x).shape
        return (jnp.zeros(shape, freq_dtype), jnp.zeros(shape, freq_dtype),
                jnp.zeros(shape, result_dtype))
    if ya is not None and (aval_of(x).size == 0 or aval_of(ya).size == 0):
        shape = tuple(outer[:ax]) + (min(aval_of(x).shape[ax], aval_of(ya).shape[ax]),) + \
            tuple(outer[ax:])
        return (jnp.zeros(shape, freq_dtype), jnp.zeros(shape, freq_dtype),
                jnp.zeros(shape, result_dtype))

    x = jnp.moveaxis(x, ax, -1)
    if ya is not None:
        ya = jnp.moveaxis(ya, ax, -1)
        nx, ny = aval_of(x).shape[-1], aval_of(ya).shape[-1]
        if nx < ny:  # the shorter one is zero-padded
            x = jnp.pad(x, [(0, 0)] * (aval_of(x).ndim - 1) + [(0, ny - nx)])
        elif ny < nx:
            ya = jnp.pad(ya, [(0, 0)] * (aval_of(ya).ndim - 1) + [(0, nx - ny)])

    if nfft_i < nperseg_i:
        raise ValueError(f"{op}: argument 'nfft' ({nfft_i}) must be greater than or equal to "
                         f"nperseg ({nperseg_i}).")
    if noverlap_i >= nperseg_i:
        raise ValueError(f"{op}: argument 'noverlap' ({noverlap_i}) must be less than "
                         f"nperseg ({nperseg_i}).")
    nstep = nperseg_i - noverlap_i

    if boundary is not None:
        x = _extend(x, nperseg_i // 2, boundary)
        if ya is not None:
            ya = _extend(ya, nperseg_i // 2, boundary)
    if padded:  # zero-pad to a whole number of segments
        nadd = (-(aval_of(x).shape[-1] - nperseg_i) % nstep) % nperseg_i
        x = jnp.pad(x, [(0, 0)] * (aval_of(x).ndim - 1) + [(0, nadd)])
        if ya is not None:
            ya = jnp.pad(ya, [(0, 0)] * (aval_of(ya).ndim - 1) + [(0, nadd)])

    if isinstance(detrend_type, str):
        def detrend_func(d: Array) -> Array:
            return detrend(d, type=detrend_type, axis=-1)
    elif callable(detrend_type):
        # JAX hands the callable the segments with the (canonical) data axis moved last
        def detrend_func(d: Array) -> Array:
            return jnp.moveaxis(detrend_type(jnp.moveaxis(d, ax, -1)), -1, ax)
    elif not detrend_type:
        def detrend_func(d: Array) -> Array:
            return d
    else:
        raise ValueError(f"{op}: argument 'detrend': Unsupported detrend type: "
                         f"{detrend_type!r}")

    if scaling == "density":
        scale = 1.0 / (fs * jnp.sum(win * win))
    elif scaling == "spectrum":
        scale = 1.0 / jnp.sum(win) ** 2
    else:
        raise ValueError(f"{op}: argument 'scaling': Unknown scaling: {scaling!r} (expected "
                         "'density' or 'spectrum')")
    if mode == "stft":
        scale = jnp.sqrt(scale)

    sides = "onesided" if return_onesided else "twosided"
    if return_onesided and (jnp.iscomplexobj(x) or (ya is not None and jnp.iscomplexobj(ya))):
        sides = "twosided"
        warnings.warn("Input data is complex, switching to return_onesided=False",
                      stacklevel=4)
    if sides == "twosided":
        freqs = jnp.fft.fftfreq(nfft_i, 1 / fs, dtype=freq_dtype)
    else:
        freqs = jnp.fft.rfftfreq(nfft_i, 1 / fs, dtype=freq_dtype)

    result = _segments_fft(x, win, detrend_func, nperseg_i, noverlap_i, nfft_i, sides)
    if ya is not None:
        result_y = _segments_fft(ya, win, detrend_func, nperseg_i, noverlap_i, nfft_i, sides)
        result = jnp.conj(result) * result_y
    elif mode == "psd":
        # |X|^2 in real arithmetic (JAX multiplies by the conjugate, then keeps the real part)
        result = jnp.square(jnp.real(result)) + jnp.square(jnp.imag(result))
    if jnp.iscomplexobj(result):
        result = result * scale.astype(_complex_dtype(aval_of(scale).dtype))
    else:
        result = result * scale

    if sides == "onesided" and mode == "psd":
        # every bin but DC (and Nyquist, for an even nfft) stands for two
        nfreq = aval_of(result).shape[-1]
        end = nfreq if nfft_i % 2 else nfreq - 1
        factor = np.ones(nfreq)
        factor[1:end] = 2.0
        rdt = aval_of(result).dtype
        result = result * jnp.asarray(factor, dtype=_real_dtype(rdt) if jnp.iscomplexobj(result)
                                      else rdt)

    length = aval_of(x).shape[-1]
    t = np.arange(nperseg_i / 2, length - nperseg_i / 2 + 1, nstep)
    if boundary is not None:
        t = t - nperseg_i / 2
    time = jnp.asarray(t, dtype=freq_dtype) / fs

    result = result.astype(result_dtype)
    if ya is None and mode != "stft":
        result = jnp.real(result)
    return freqs, time, jnp.moveaxis(result, -1, ax)


# ---------------------------------------------------------------------- public functions

def stft(x: ArrayLike, fs: ArrayLike = 1.0, window: Any = "hann", nperseg: int = 256,
         noverlap: int | None = None, nfft: int | None = None, detrend: Any = False,
         return_onesided: bool = True, boundary: str | None = "zeros", padded: bool = True,
         axis: int = -1) -> tuple[Array, Array, Array]:
    """The short-time Fourier transform (``jax.scipy.signal.stft``).

    Args:
      x: the signal.
      fs: the sampling frequency.
      window: a window name, a ``(name, *params)`` tuple (SciPy's ``get_window``) or a 1-D
        array of ``nperseg`` coefficients.
      nperseg: the segment length (at most the signal length).
      noverlap: the overlap of consecutive segments (default ``nperseg // 2``).
      nfft: the FFT length (default ``nperseg``; larger zero-pads each segment).
      detrend: False, "constant", "linear" or a callable applied to the segments.
      return_onesided: a one-sided spectrum for real input (complex input is two-sided).
      boundary: how the signal is extended by ``nperseg // 2`` at both ends: "zeros", "even",
        "odd", "constant" or None.
      padded: zero-pad the end to a whole number of segments.
      axis: the time axis.

    Returns:
      ``(f, t, Zxx)``: frequencies, segment times and the STFT (frequencies at ``axis``,
      segments last).
    """
    return _spectral_helper("stft", x, None, fs, window, nperseg, noverlap, nfft, detrend,
                            return_onesided, "spectrum", axis, "stft", boundary, padded)


def _median_bias(n: int) -> float:
    ii = np.arange(2.0, n, 2)
    return float(1 + np.sum(1.0 / (ii + 1) - 1.0 / ii))


def _averaged(op: str, x: ArrayLike, y: ArrayLike | None, fs: ArrayLike, window: Any,
              nperseg: Any, noverlap: Any, nfft: Any, detrend: Any, return_onesided: bool,
              scaling: str, axis: int, average: str) -> tuple[Array, Array]:
    """csd/welch: the periodograms averaged over the segments (the last axis)."""
    freqs, _, pxy = _spectral_helper(op, x, y, fs, window, nperseg, noverlap, nfft,
                                     detrend, return_onesided, scaling, axis, "psd")
    if y is not None:
        pxy = pxy + 0j
    shape = aval_of(pxy).shape
    if len(shape) >= 2 and aval_of(pxy).size > 0:
        if shape[-1] > 1:
            if average == "median":
                bias = _median_bias(shape[-1])
                if jnp.iscomplexobj(pxy):
                    pxy = lax.complex(jnp.median(jnp.real(pxy), axis=-1),
                                      jnp.median(jnp.imag(pxy), axis=-1))
                else:
                    pxy = jnp.median(pxy, axis=-1)
                pxy = pxy / bias
            elif average == "mean":
                pxy = jnp.mean(pxy, axis=-1)
            else:
                raise ValueError(f"{op}: argument 'average' must be \"median\" or "
                                 f"\"mean\", got {average!r}")
        else:
            pxy = jnp.reshape(pxy, shape[:-1])
    return freqs, pxy


def csd(x: ArrayLike, y: ArrayLike | None, fs: ArrayLike = 1.0, window: Any = "hann",
        nperseg: int | None = None, noverlap: int | None = None, nfft: int | None = None,
        detrend: Any = "constant", return_onesided: bool = True, scaling: str = "density",
        axis: int = -1, average: str = "mean") -> tuple[Array, Array]:
    """The cross power spectral density by Welch's method (``jax.scipy.signal.csd``).

    Arguments as :func:`welch`; ``y`` is the second signal (None: the PSD of ``x``, as
    :func:`welch`, but complex). ``scaling`` is "density" (V**2/Hz) or "spectrum" (V**2);
    ``average`` is "mean" or "median" (bias-corrected, of the real and imaginary parts).

    Returns:
      ``(f, Pxy)``.
    """
    return _averaged("csd", x, y, fs, window, nperseg, noverlap, nfft, detrend,
                     return_onesided, scaling, axis, average)


def welch(x: ArrayLike, fs: ArrayLike = 1.0, window: Any = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, detrend: Any = "constant",
          return_onesided: bool = True, scaling: str = "density", axis: int = -1,
          average: str = "mean") -> tuple[Array, Array]:
    """The power spectral density by Welch's method (``jax.scipy.signal.welch``): the mean
    (or median) of the periodograms of overlapping windowed segments.

    Args:
      x: the signal.
      fs: the sampling frequency.
      window: a window name, a ``(name, *params)`` tuple or a 1-D array of coefficients.
      nperseg: the segment length (default 256 for a named window, capped at the signal
        length; the window's length for an array).
      noverlap: the overlap (default ``nperseg // 2``).
      nfft: the FFT length (default ``nperseg``).
      detrend: "constant" (default), "linear", False or a callable.
      return_onesided: a one-sided spectrum for real input.
      scaling: "density" or "spectrum".
      axis: the time axis.
      average: "mean" or "median".

    Returns:
      ``(f, Pxx)``: the frequencies and the (real) PSD, frequencies at ``axis``.
    """
    freqs, pxx = _averaged("welch", x, None, fs, window, nperseg, noverlap, nfft, detrend,
                           return_onesided, scaling, axis, average)
    return freqs, jnp.real(pxx)


def _overlap_add(frames: Array, step: int) -> Array:
    """Sums frames (..., nframes, seglen) placed ``step`` apart: (..., step*(nframes-1)+seglen).

    Each frame is cut into ``k = ceil(seglen/step)`` chunks of ``step``; chunk ``s`` of frame
    ``j`` lands in output block ``j + s``, so the output is the sum over ``s`` of the chunk-s
    column shifted by ``s`` blocks (k terms, usually 2).
    """
    *batch, nframes, seglen = aval_of(frames).shape
    k = -(-seglen // step)
    lead = [(0, 0)] * len(batch)
    frames = jnp.pad(frames, lead + [(0, 0), (0, k * step - seglen)])
    chunks = jnp.reshape(frames, (*batch, nframes, k, step))
    total = None
    for s in range(k):
        col = jnp.pad(chunks[..., s, :], lead + [(s, k - 1 - s), (0, 0)])
        total = col if total is None else total + col
    flat = jnp.reshape(total, (*batch, (nframes + k - 1) * step))
    return flat[..., :step * (nframes - 1) + seglen]


def istft(Zxx: ArrayLike, fs: ArrayLike = 1.0, window: Any = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, input_onesided: bool = True,
          boundary: bool = True, time_axis: int = -1, freq_axis: int = -2
          ) -> tuple[Array, Array]:
    """The inverse short-time Fourier transform (``jax.scipy.signal.istft``): the inverse of
    :func:`stft` by windowed overlap-add.

    As JAX's, ``nperseg`` and ``noverlap`` are read with ``or``: ``noverlap=0`` means the
    default ``nperseg // 2`` (and ``nperseg=0`` the default length).

    Args:
      Zxx: the STFT (at least 2-D).
      fs: the sampling frequency.
      window: as in :func:`stft`.
      nperseg: the segment length (default from the frequency axis).
      noverlap: the overlap (default ``nperseg // 2``).
      nfft: the FFT length (default from the frequency axis).
      input_onesided: ``Zxx`` is a one-sided (rfft) spectrum.
      boundary: the STFT extended the signal at both ends (those points are removed).
      time_axis, freq_axis: the segment and frequency axes of ``Zxx``.

    Returns:
      ``(t, x)``: times and the signal.
    """
    op = "istft"
    z = jnp.asarray(Zxx)
    ndim = aval_of(z).ndim
    if ndim < 2:
        raise ValueError(f"{op}: argument 'Zxx': Input stft must be at least 2d! Got shape "
                         f"{aval_of(z).shape}")
    fa = canonicalize_axis(freq_axis, ndim, op, "freq_axis")
    ta = canonicalize_axis(time_axis, ndim, op, "time_axis")
    if fa == ta:
        raise ValueError(f"{op}: Must specify differing time and frequency axes! (time_axis="
                         f"{time_axis}, freq_axis={freq_axis})")
    z = z.astype(_complex_dtype(aval_of(z).dtype))
    nfreq = aval_of(z).shape[fa]
    n_default = 2 * (nfreq - 1) if input_onesided else nfreq
    nperseg_i = _static_int(op, "nperseg", nperseg or n_default)
    if nperseg_i < 1:
        raise ValueError(f"{op}: argument 'nperseg' must be a positive integer, got "
                         f"{nperseg_i}")
    if nfft is None:
        nfft_i = n_default + 1 if input_onesided and nperseg_i == n_default + 1 else n_default
    else:
        nfft_i = _static_int(op, "nfft", nfft)
    if nfft_i < nperseg_i:
        raise ValueError(f"{op}: argument 'nfft': FFT length ({nfft_i}) must be longer than "
                         f"nperseg ({nperseg_i}).")
    noverlap_i = _static_int(op, "noverlap", noverlap or nperseg_i // 2)
    if noverlap_i >= nperseg_i:
        raise ValueError(f"{op}: argument 'noverlap' ({noverlap_i}) must be less than "
                         f"nperseg ({nperseg_i}).")
    nstep = nperseg_i - noverlap_i

    if ta != ndim - 1 or fa != ndim - 2:
        rest = tuple(i for i in range(ndim) if i not in (ta, fa))
        z = jnp.transpose(z, rest + (fa, ta))
    if input_onesided:
        xsubs = jnp.fft.irfft(z, n=nfft_i, axis=-2)
    else:
        xsubs = jnp.fft.ifft(z, n=nfft_i, axis=-2)
    xsubs = xsubs[..., :nperseg_i, :]
    xdt = aval_of(xsubs).dtype

    if isinstance(window, str) and window == "hann":
        win = jnp.asarray(hann_jax(nperseg_i), dtype=xdt)
    elif isinstance(window, (str, tuple)):
        win = jnp.asarray(get_window(op, window, nperseg_i), dtype=xdt)
    else:
        win = jnp.asarray(window)
        wshape = aval_of(win).shape
        if len(wshape) != 1:
            raise ValueError(f"{op}: argument 'window' must be 1-D, got shape {wshape}")
        if wshape[0] != nperseg_i:
            raise ValueError(f"{op}: argument 'window' must have length of {nperseg_i}, got "
                             f"{wshape[0]}")
    xsubs = xsubs * jnp.sum(win)  # undoes stft's 'spectrum' scaling
    nframes = aval_of(xsubs).shape[-1]
    wcol = jnp.reshape(win, (nperseg_i, 1))
    x = _overlap_add(jnp.swapaxes(xsubs * wcol, -2, -1), nstep)
    norm = _overlap_add(jnp.broadcast_to(win * win, (nframes, nperseg_i)), nstep)
    if boundary:
        half = nperseg_i // 2
        x = x[..., half:-half]  # empty for nperseg == 1, as JAX's
        norm = norm[..., half:-half]
    # a two-sided input makes the window complex; its squares' sums are real (JAX compares
    # complex numbers by their real part first)
    x = x / jnp.where(jnp.real(norm) > 1e-10, norm, 1.0)

    if aval_of(x).ndim > 1 and ta != ndim - 1:
        x = jnp.moveaxis(x, -1, ta - 1 if fa < ta else ta)
    xdt = aval_of(x).dtype
    time = jnp.arange(aval_of(x).shape[0], dtype=_real_dtype(_complex_dtype(xdt))) / fs
    return time, x
