"""jax.image's resampling weights: per spatial dimension an (input size, output size) matrix
whose column j holds the taps of output j (JAX's ``compute_weight_mat``).

Written once over an array module ``xp``: NumPy for static scales (``resize``: the weights are
constants of the shapes, computed once and cached) and ``pullback.numpy`` for traced ones
(``scale_and_translate``: gradients w.r.t. scale and translation flow through these formulas).
Every step keeps JAX's dtypes: the weights are computed in the dtype of the scale and the
translation (float32 for Python scalars, float64 under x64) and cast to the image's dtype.
"""
from __future__ import annotations

import enum
import math
from typing import Any

import numpy as np


class ResizeMethod(enum.Enum):
    """Image resize method (``jax.image.ResizeMethod``).

    NEAREST: nearest neighbour. LINEAR: linear interpolation (a triangle filter when
    downsampling with antialias). LANCZOS3, LANCZOS5: Lanczos resampling, radius 3 or 5.
    CUBIC: Keys cubic (A = -0.5). CUBIC_PYTORCH: PyTorch's bicubic (A = -0.75 with repeated
    edges without antialias; CUBIC with it). AREA: the average over each output pixel's area.
    """

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> "ResizeMethod":
        """The method a string names (JAX's names and aliases); ValueError for another."""
        if s == "nearest":
            return ResizeMethod.NEAREST
        if s in ("linear", "bilinear", "trilinear", "triangle"):
            return ResizeMethod.LINEAR
        if s == "lanczos3":
            return ResizeMethod.LANCZOS3
        if s == "lanczos5":
            return ResizeMethod.LANCZOS5
        if s in ("cubic", "bicubic", "tricubic"):
            return ResizeMethod.CUBIC
        if s in ("cubic-pytorch", "bicubic-pytorch"):
            return ResizeMethod.CUBIC_PYTORCH
        if s == "area":
            return ResizeMethod.AREA
        raise ValueError(f'Unknown resize method "{s}"')


# ---- the kernels, as functions of the distance x >= 0 (in input pixels, scaled) ----

def _triangle(xp: Any, x: Any) -> Any:
    return xp.maximum(0, 1 - xp.abs(x))


def _keys_cubic(xp: Any, x: Any) -> Any:
    # Keys (1981) with A = -0.5: Pillow's, TensorFlow's and PyTorch's with antialias
    out = ((1.5 * x - 2.5) * x) * x + 1.
    out = xp.where(x >= 1., ((-0.5 * x + 2.5) * x - 4.) * x + 2., out)
    return xp.where(x >= 2., 0., out)


def _opencv_cubic(xp: Any, x: Any) -> Any:
    # A = -0.75: OpenCV's, and PyTorch's without antialias
    a = -0.75
    out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    out = xp.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
    return xp.where(x >= 2.0, 0.0, out)


def _lanczos(radius: float):
    def fill(xp: Any, x: Any) -> Any:
        y = radius * xp.sin(np.pi * x) * xp.sin(np.pi * x / radius)
        # y / (pi^2 x^2) away from 0, 1 near it
        out = xp.where(x > 1e-3, xp.divide(y, xp.where(x != 0, np.pi ** 2 * x ** 2, 1)), 1)
        return xp.where(x > radius, 0., out)
    return fill


_AREA = object()

# method -> (radius, kernel)
KERNELS = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
    ResizeMethod.AREA: (1, _AREA),
}

_MIN_SUM = 1000. * float(np.finfo(np.float32).eps)


def weight_matrix(xp: Any, m: int, n: int, scale: Any, translation: Any, inv_scale: Any,
                  dtype: Any, method: ResizeMethod, antialias: bool, edge_padding: bool,
                  scatter_add: Any = None) -> Any:
    """The (m, n) weights of resampling a dimension of size m to n (JAX's
    ``compute_weight_mat``).

    Args:
      xp: the array module (``numpy`` or ``pullback.numpy``).
      m, n: input and output sizes.
      scale, translation: the dimension's scale and translation (scalars of ``dtype``, or
        Python floats).
      inv_scale: ``1 / scale`` as JAX computes it (a Python float for a Python scale).
      dtype: the dtype the weights are computed in.
      method, antialias: the kernel; antialias widens it by 1/scale when downsampling.
      edge_padding: repeat the edge pixels instead of dropping out-of-range taps
        (CUBIC_PYTORCH without antialias).
      scatter_add: ``(matrix, rows, values) -> matrix`` adding ``values`` (k, n) into the
        rows ``rows`` (k,) of ``matrix`` (m, n) (the edge padding's fold).
    """
    radius, kernel = KERNELS[method]
    kernel_scale = xp.maximum(inv_scale, 1.) if antialias else 1.
    if xp is np:  # JAX makes this a weak array of the weights' dtype
        kernel_scale = np.asarray(kernel_scale, dtype)
    sample_f = ((xp.arange(n, dtype=dtype) + 0.5) * inv_scale - translation * inv_scale - 0.5)
    if edge_padding:
        if antialias:  # unreachable from the public functions, as in JAX
            k = math.ceil(radius * max(1.0 / float(scale), 1.0))
        else:
            k = radius
    else:
        k = 0
    expanded = xp.arange(-k, m + k, dtype=dtype)
    if kernel is _AREA:
        # overlap of each output pixel's extent [L_i, R_i) (in input pixels) with each input
        # pixel's [L_j, L_j + 1)
        left = xp.arange(n, dtype=dtype) * inv_scale - translation * inv_scale
        right = left + inv_scale
        lj = xp.arange(m, dtype=dtype)
        rj = lj + 1.0
        weights = xp.maximum(0.0, xp.minimum(right[None, :], rj[:, None])
                             - xp.maximum(left[None, :], lj[:, None]))
    else:
        x = xp.abs(sample_f[None, :] - expanded[:, None]) / kernel_scale
        weights = kernel(xp, x)
    if edge_padding:
        rows = np.clip(np.arange(-k, m + k).astype(np.int32), 0, m - 1)
        weights = scatter_add(xp.zeros((m, n), dtype=dtype), rows, weights)
        total = xp.sum(weights, axis=0, keepdims=True)
        return xp.where(xp.abs(total) > _MIN_SUM,
                        xp.divide(weights, xp.where(total != 0, total, 1)), 0)
    # normalized over the taps inside the image; outputs sampled outside it get none
    total = xp.sum(weights, axis=0, keepdims=True)
    weights = xp.where(xp.abs(total) > _MIN_SUM,
                       xp.divide(weights, xp.where(total != 0, total, 1)), 0)
    inside = xp.logical_and(sample_f >= -0.5, sample_f <= m - 0.5)
    return xp.where(inside[None, :], weights, 0)


def numpy_scatter_add(matrix: np.ndarray, rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    np.add.at(matrix, rows, values)
    return matrix
