"""``resize`` and ``scale_and_translate`` with jax.image's semantics (JAX 0.10).

A resize is separable: per resized dimension an (m, n) weight matrix (``_weights.py``),
applied one dimension at a time by the ``resize_contract`` primitive, whose kernel runs only
each output's band of nonzero taps. Nearest neighbour is a gather with JAX's float32 rounding
of the sample positions; an upsample by integer factors is one ``resize_repeat`` copy.
"""
from __future__ import annotations

import functools
import itertools
import math
from typing import Any, Sequence

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..config import config
from ..primitives.resize import MAX_REPEAT_DIMS, resize_contract_p, resize_repeat_p
from ..tracer import dtypes
from ..tracer.shapes import canonicalize_axis, check_shape
from ..numpy._promotion import promote_dtypes_inexact
from ._weights import KERNELS, ResizeMethod, numpy_scatter_add, weight_matrix

ArrayLike = Any


def _method(method: Any, fn: str) -> ResizeMethod:
    if isinstance(method, str):
        try:
            return ResizeMethod.from_string(method)
        except ValueError as e:  # JAX's words, after the function and argument
            raise ValueError(f"{fn}: argument 'method': {e}") from None
    if not isinstance(method, ResizeMethod):
        raise TypeError(f"{fn}: argument 'method' must be a string or a ResizeMethod, got "
                        f"{method!r}")
    return method


def _check_shape(image: Any, shape: Any, fn: str) -> tuple[int, ...]:
    shape = check_shape(shape, fn, "shape")
    if len(shape) != image.ndim:
        raise ValueError(f"{fn}: argument 'shape' must have length equal to the number of "
                         f"dimensions of x; {shape} vs {image.shape}")
    return shape


# ---- applying the weights ----

@functools.lru_cache(maxsize=512)
def _pass_order(image_shape: tuple[int, ...], dims: tuple[int, ...], out_shape: tuple[int, ...],
                taps: tuple[int, ...]) -> tuple[int, ...]:
    """The order of the one-dimension passes (indices into ``dims``) with the least work: a
    pass costs its output's size times its taps, four times more along the last axis (short
    dot products instead of vectorized rows)."""
    def cost(order):
        shape, total = list(image_shape), 0
        for i in order:
            d = dims[i]
            shape[d] = out_shape[d]
            total += math.prod(shape) * taps[i] * (4 if d == len(shape) - 1 else 1)
        return total
    if len(dims) > 4:
        return tuple(range(len(dims)))
    return min(itertools.permutations(range(len(dims))), key=cost)


def _contract_all(x: Any, dims: list[int], weights: list[Any], taps: list[int],
                  out_shape: tuple[int, ...]) -> Any:
    if dtypes.is_complex(x.dtype):  # real weights: the real and imaginary parts apart
        re = _contract_all(jnp.real(x), dims, weights, taps, out_shape)
        im = _contract_all(jnp.imag(x), dims, weights, taps, out_shape)
        return lax.complex(re, im)
    weights = [w if w.dtype == x.dtype else w.astype(x.dtype) for w in weights]
    for i in _pass_order(tuple(x.shape), tuple(dims), tuple(out_shape), tuple(taps)):
        x = resize_contract_p.bind(x, weights[i], axis=dims[i])
    return x


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype == np.complex64 else (
        np.dtype(np.float64) if dtype == np.complex128 else dtype)


@functools.lru_cache(maxsize=512)
def _static_weights(m: int, n: int, scale: float, method: ResizeMethod, antialias: bool,
                    wdtype: np.dtype, xdtype: np.dtype) -> tuple[Any, int]:
    """The weights of a static scale (translation 0), computed once per signature, and their
    widest band (the taps per output)."""
    edge = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    with np.errstate(all="ignore"):
        w = weight_matrix(np, m, n, scale, 0.0, 1. / scale, wdtype, method, antialias, edge,
                          numpy_scatter_add)
    w = np.asarray(w).astype(_real_dtype(xdtype))
    nz = w != 0
    band = 0
    if nz.size:
        first = np.where(nz.any(0), nz.argmax(0), 0)
        last = np.where(nz.any(0), m - 1 - nz[::-1].argmax(0), -1)
        band = int(np.max(last - first + 1, initial=0))
    return jnp.asarray(w), max(band, 1)


# ---- nearest ----

def _nearest_offsets(m: int, n: int) -> np.ndarray:
    # JAX: floor((arange(n, float32) + 0.5) * m / n) in float32, as int32
    f = (np.arange(n, dtype=np.float32) + np.float32(0.5)) * np.float32(m) / np.float32(n)
    return np.floor(f.astype(np.float32)).astype(np.int32)


def _resize_nearest(x: Any, shape: tuple[int, ...]) -> Any:
    dims = [d for d in range(x.ndim) if x.shape[d] != shape[d]]
    factors = [1] * x.ndim
    gathers = []
    for d in dims:
        m, n = x.shape[d], shape[d]
        if m == 0:
            raise ValueError(f"resize: cannot resize dimension {d} of argument 'image' of shape "
                             f"{x.shape} from size 0 to {n}")
        offsets = _nearest_offsets(m, n)
        if n > 0 and n % m == 0 and np.array_equal(offsets, np.arange(n) // (n // m)):
            factors[d] = n // m  # an integer upsample: a repeat
        else:
            gathers.append((d, offsets))
    if any(f != 1 for f in factors) and x.ndim <= MAX_REPEAT_DIMS:
        x = resize_repeat_p.bind(x, factors=tuple(factors))
    else:
        gathers += [(d, np.arange(x.shape[d] * f) // f) for d, f in enumerate(factors) if f != 1]
    for d, offsets in gathers:
        x = jnp.take(x, offsets.astype(np.int32), axis=d, mode="clip", unique_indices=False,
                     indices_are_sorted=True)
    return x


# ---- the public functions ----

def resize(image: ArrayLike, shape: Sequence[int], method: str | ResizeMethod,
           antialias: bool = True, precision: Any = lax.Precision.HIGHEST) -> Any:
    """Image resize (``jax.image.resize``).

    ``method`` is a ``ResizeMethod`` or its name: ``"nearest"``; ``"linear"`` (also
    ``"bilinear"``, ``"trilinear"``, ``"triangle"``); ``"cubic"`` (``"bicubic"``,
    ``"tricubic"``: Keys cubic); ``"cubic-pytorch"`` (``"bicubic-pytorch"``); ``"lanczos3"``,
    ``"lanczos5"``; ``"area"``. Every dimension whose size changes is resampled (batch and
    channel dimensions keep their sizes).

    Args:
      image: an array.
      shape: the output shape, one non-negative size per dimension of ``image``.
      method: the resampling method.
      antialias: widen the kernel when downsampling (a low-pass filter); no effect when
        upsampling and for nearest.
      precision: accepted for JAX's signature; products are computed in float32 (float64 for
        float64 images) whatever it is.

    Returns:
      The resized image: ``image``'s dtype for nearest, else the image promoted to a floating
      dtype (integers become float32).
    """
    image = jnp.asarray(image)
    shape = _check_shape(image, shape, "resize")
    method = _method(method, "resize")
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    (image,) = promote_dtypes_inexact("resize", image)
    dims = [d for d in range(image.ndim) if image.shape[d] != shape[d]]
    if not dims:
        return image
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    wdtype = np.dtype(np.float64 if config.jax_enable_x64 else np.float32)
    weights, taps = [], []
    for d in dims:
        m, n = image.shape[d], shape[d]
        if m == 0:
            raise ValueError(f"resize: cannot resize dimension {d} of argument 'image' of shape "
                             f"{image.shape} from size 0 to {n}")
        scale = 1.0 if n == 0 else n / m
        w, band = _static_weights(m, n, scale, method, bool(antialias), wdtype,
                                  np.dtype(image.dtype))
        weights.append(w)
        taps.append(band)
    return _contract_all(image, dims, weights, taps, shape)


def scale_and_translate(image: ArrayLike, shape: Sequence[int], spatial_dims: Sequence[int],
                        scale: ArrayLike, translation: ArrayLike, method: str | ResizeMethod,
                        antialias: bool = True, precision: Any = lax.Precision.HIGHEST) -> Any:
    """Apply a scale and translation to an image (``jax.image.scale_and_translate``).

    An input location ``x`` of spatial dimension ``spatial_dims[i]`` maps to
    ``x * scale[i] + translation[i]`` in the output (the inverse warp generates the samples;
    pixels are half-centered). Output pixels whose sample falls outside the input are zero.
    Differentiable w.r.t. the image, the scale and the translation.

    Args:
      image: an array.
      shape: the output shape, one size per dimension of ``image``.
      spatial_dims: the K dimensions the scale and translation apply to.
      scale: K scales (an array).
      translation: K translations (an array).
      method: ``"linear"``, ``"cubic"``, ``"cubic-pytorch"``, ``"lanczos3"``, ``"lanczos5"``,
        ``"area"`` or a ``ResizeMethod`` (nearest is not supported, as in JAX).
      antialias: widen the kernel when downsampling.
      precision: accepted for JAX's signature (products in float32, float64 for float64).

    Returns:
      The scaled and translated image, promoted to a floating dtype.
    """
    image = jnp.asarray(image)
    shape = _check_shape(image, shape, "scale_and_translate")
    method = _method(method, "scale_and_translate")
    if method == ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for "
                         "scale_and_translate.")
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    edge = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    (image,) = promote_dtypes_inexact("scale_and_translate", image)
    scale, translation = promote_dtypes_inexact("scale_and_translate", jnp.asarray(scale),
                                                jnp.asarray(translation))
    dims = [canonicalize_axis(d, image.ndim, "scale_and_translate", "spatial_dims")
            for d in spatial_dims]
    for arg, v in (("scale", scale), ("translation", translation)):
        if v.shape != (len(dims),):
            raise ValueError(f"scale_and_translate: argument '{arg}' must have shape "
                             f"({len(dims)},), one entry per spatial dimension, got {v.shape}")
    if len(set(dims)) != len(dims):
        raise ValueError(f"scale_and_translate: argument 'spatial_dims' repeats a dimension: "
                         f"{tuple(spatial_dims)}")
    if not dims:
        return image
    wdtype = jnp.result_type(scale, translation)
    weights = []
    for i, d in enumerate(dims):
        m, n = image.shape[d], shape[d]
        s, t = scale[i], translation[i]
        weights.append(weight_matrix(jnp, m, n, s, t, 1. / s, wdtype, method, bool(antialias),
                                     edge, lambda mat, rows, v: mat.at[rows].add(v)))
    # a traced scale has no static band: the widest band of its method at scale 1
    taps = [2 * KERNELS[method][0] for _ in dims]
    out = image
    for d in range(image.ndim):  # dims not in spatial_dims must keep their size (an einsum)
        if d not in dims and shape[d] != image.shape[d]:
            raise ValueError(f"scale_and_translate: argument 'shape' changes dimension {d} "
                             f"({image.shape[d]} -> {shape[d]}), which is not in spatial_dims "
                             f"{tuple(spatial_dims)}")
    return _contract_all(out, dims, [w.astype(_real_dtype(image.dtype)) for w in weights],
                         taps, shape)
