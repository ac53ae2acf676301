"""``pullback.scipy.signal``: n-dimensional convolutions and correlations (``jax.scipy.signal``'s
convolve, convolve2d, correlate, correlate2d) as lax.conv_general_dilated, fftconvolve by
pullback's FFT, and the spectral functions (stft, istft, csd, welch, detrend, in _spectral)."""
from __future__ import annotations

import importlib
import sys
from typing import Any

from .. import lax
from .. import numpy as jnp
from ..numpy._promotion import aval_of, promote_dtypes_inexact
from ..tracer.public import hide_helpers
from ..tracer.shapes import canonicalize_axes

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend", "fftconvolve",
           "istft", "stft", "welch"]

# the spectral functions (and SciPy's window tables) load on first use, as pullback.scipy's
# submodules do: ``import pullback`` imports this module, and most programs never use them
_SPECTRAL = ("csd", "detrend", "istft", "stft", "welch")


def __getattr__(name: str) -> Any:
    if name in _SPECTRAL:
        spectral = importlib.import_module(f"{__package__}._spectral")
        for n in _SPECTRAL:
            globals()[n] = getattr(spectral, n)
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _convolve_nd(in1: Any, in2: Any, mode: str, precision: Any) -> Any:
    if mode not in ("full", "same", "valid"):
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    in1, in2 = jnp.asarray(in1), jnp.asarray(in2)
    s1, s2 = aval_of(in1).shape, aval_of(in2).shape
    if len(s1) != len(s2):
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if 0 in s1 or 0 in s2:
        raise ValueError("zero-size arrays not supported in convolutions, got shapes "
                         f"{s1} and {s2}.")
    in1, in2 = promote_dtypes_inexact("convolve", in1, in2)
    no_swap = all(a >= b for a, b in zip(s1, s2))
    swap = all(a <= b for a, b in zip(s1, s2))
    if not (no_swap or swap):
        raise ValueError("One input must be smaller than the other in every dimension.")
    shape_o = s2
    if swap:
        in1, in2 = in2, in1
    shape = aval_of(in2).shape
    in2 = jnp.flip(in2)
    if mode == "valid":
        padding = [(0, 0)] * len(shape)
    elif mode == "same":
        padding = [(s - 1 - (so - 1) // 2, s - so + (so - 1) // 2) for s, so in zip(shape, shape_o)]
    else:
        padding = [(s - 1, s - 1) for s in shape]
    nd = len(shape)
    out = lax.conv_general_dilated(lax.expand_dims(in1, (0, 1)), lax.expand_dims(in2, (0, 1)),
                                   (1,) * nd, padding, precision=precision)
    return lax.squeeze(out, (0, 1))


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto",
             precision: Any = None) -> Any:
    """N-dimensional convolution (``jax.scipy.signal.convolve``).

    Args:
      in1, in2: arrays of one rank, one no larger than the other in every dimension.
      mode: "full", "same" (the shape of ``in1``) or "valid".
      method: "auto" or "direct" (the direct convolution kernel) or "fft"
        (:func:`fftconvolve`), as JAX.
      precision: as ``lax.conv_general_dilated``.

    Returns:
      The convolution.
    """
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method not in ("auto", "direct"):
        raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")
    return _convolve_nd(in1, in2, mode, precision)


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto",
              precision: Any = None) -> Any:
    """N-dimensional cross-correlation (``jax.scipy.signal.correlate``): the convolution with
    ``in2`` flipped and conjugated."""
    return convolve(in1, jnp.flip(jnp.conj(jnp.asarray(in2))), mode, precision=precision,
                    method=method)


def _check_2d(op: str, in1: Any, in2: Any, boundary: str, fillvalue: Any) -> None:
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{op}() only supports boundary='fill', fillvalue=0")
    if aval_of(jnp.asarray(in1)).ndim != 2 or aval_of(jnp.asarray(in2)).ndim != 2:
        raise ValueError(f"{op}() only supports 2-dimensional inputs.")


def convolve2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
               fillvalue: Any = 0, precision: Any = None) -> Any:
    """Two-dimensional convolution (``jax.scipy.signal.convolve2d``; boundary "fill" with 0
    only, as JAX)."""
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_nd(in1, in2, mode, precision)


def correlate2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
                fillvalue: Any = 0, precision: Any = None) -> Any:
    """Two-dimensional cross-correlation (``jax.scipy.signal.correlate2d``), with JAX's
    orientation of the result when ``in2`` is the larger input."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    in1, in2 = jnp.asarray(in1), jnp.asarray(in2)
    s1, s2 = aval_of(in1).shape, aval_of(in2).shape
    swap = all(a <= b for a, b in zip(s1, s2))
    same_shape = s1 == s2
    if mode == "same" or (mode == "valid" and not (swap and not same_shape)) or \
            (mode not in ("same", "valid") and not swap):
        return jnp.flip(_convolve_nd(jnp.flip(in1), jnp.conj(in2), mode, precision))
    if mode == "valid":
        return _convolve_nd(jnp.flip(in2), jnp.conj(in1), mode, precision)
    return jnp.conj(_convolve_nd(jnp.flip(in2), jnp.conj(in1), mode, precision))


def fftconvolve(in1: Any, in2: Any, mode: str = "full", axes: Any = None) -> Any:
    """N-dimensional convolution by FFT (``jax.scipy.signal.fftconvolve``).

    Real inputs go through ``rfftn``/``irfftn``, complex ones through ``fftn``/``ifftn``, at the
    full linear-convolution length (no circular wrap-around).

    Args:
      in1, in2: arrays of one rank.
      mode: "full", "same" (the shape of ``in1``) or "valid" (where they overlap fully; one
        input must be at least as large as the other along every convolved axis).
      axes: the axes to convolve over (default all); along the others the inputs must have
        equal sizes and are paired element by element.

    Returns:
      The convolution, in the inputs' promoted inexact dtype.
    """
    in1, in2 = promote_dtypes_inexact("fftconvolve", jnp.asarray(in1), jnp.asarray(in2))
    s1, s2 = aval_of(in1).shape, aval_of(in2).shape
    if len(s1) != len(s2):
        raise ValueError("fftconvolve: in1 and in2 should have the same dimensionality, got "
                         f"shapes {s1} and {s2}")
    if mode not in ("same", "full", "valid"):
        raise ValueError(f"fftconvolve: argument 'mode' must be one of ['same', 'full', "
                         f"'valid'], got {mode!r}")
    if axes is None:
        ax = tuple(range(len(s1)))
    else:
        ax = canonicalize_axes(axes, len(s1), "fftconvolve", "axes")
        if any(s1[i] != s2[i] for i in range(len(s1)) if i not in ax):
            raise ValueError(f"fftconvolve: mapped axes must have same shape; got "
                             f"in1.shape={s1} in2.shape={s2} axes={ax}")
    if not ax:
        return in1 * in2
    if mode == "valid":
        bigger = all(s1[i] >= s2[i] for i in ax)
        smaller = all(s1[i] <= s2[i] for i in ax)
        if not (bigger or smaller):
            raise ValueError("fftconvolve: for 'valid' mode, one input must be at least as "
                             f"large as the other in every dimension; got shapes {s1} and {s2}")
        if smaller:
            in1, in2, s1, s2 = in2, in1, s2, s1
    full = tuple(s1[i] + s2[i] - 1 for i in ax)
    if jnp.iscomplexobj(in1):
        conv = jnp.fft.ifftn(jnp.fft.fftn(in1, full, ax) * jnp.fft.fftn(in2, full, ax), full, ax)
    else:
        conv = jnp.fft.irfftn(jnp.fft.rfftn(in1, full, ax) * jnp.fft.rfftn(in2, full, ax),
                              full, ax)
    if mode == "full":
        out = full
    elif mode == "same":
        out = tuple(s1[i] for i in ax)
    else:
        out = tuple(s1[i] - s2[i] + 1 for i in ax)
    for i, f, o in zip(ax, full, out):
        start = (f - o) // 2
        conv = lax.slice_in_dim(conv, start, start + o, axis=i)
    return conv


# dir() and star imports list the API only, not the helpers imported here (this module
# loads on first access, so pullback/__init__ cannot do it)
hide_helpers(sys.modules[__name__], keep=(
    "convolve convolve2d correlate correlate2d csd detrend fftconvolve istft stft welch").split())
