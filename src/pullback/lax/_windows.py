"""Sliding windows: unfold (im2col) and fold (col2im).

JAX has no equivalent; these follow the Nx backend interface's unfold/fold, described in
``pullback.primitives.windows``. Convolution is ``unfold`` + reshape + ``dot_general``;
pooling is ``unfold`` + a reduction; ``fold`` is unfold's transpose (its gradient).
"""
from __future__ import annotations

from typing import Sequence

from ..primitives.windows import fold_p, unfold_p
from ..tracer.array import Array
from ..tracer.shapes import index_arg
from ._operands import ArrayLike, scalars_to

__all__ = ["unfold", "fold"]


def _geometry(kernel_size: Sequence[int], stride, dilation, padding):
    k = tuple(index_arg(i, "unfold", "kernel_size") for i in kernel_size)
    ones = (1,) * len(k)
    s = ones if stride is None else tuple(index_arg(i, "unfold", "stride") for i in stride)
    d = ones if dilation is None else tuple(index_arg(i, "unfold", "dilation") for i in dilation)
    p = (((0, 0),) * len(k) if padding is None
         else tuple((index_arg(lo, "unfold", "padding"), index_arg(hi, "unfold", "padding"))
                    for lo, hi in padding))
    return dict(kernel_size=k, stride=s, dilation=d, padding=p)


def unfold(operand: ArrayLike, kernel_size: Sequence[int], stride: Sequence[int] | None = None,
           dilation: Sequence[int] | None = None,
           padding: Sequence[tuple[int, int]] | None = None) -> Array:
    """Extracts the sliding windows of the last ``K = len(kernel_size)`` dimensions (im2col).

    Args:
      operand: an array of shape ``(lead..., spatial...)`` with K spatial dimensions; any dtype.
      kernel_size: the window size per spatial dimension (positive).
      stride: the step between windows per spatial dimension (positive; default 1).
      dilation: the step between window elements per spatial dimension (positive; default 1).
      padding: ``(low, high)`` zeros added around each spatial dimension (default none).

    Returns:
      An array of shape ``(lead..., prod(kernel_size), L)``: element ``[..., k, l]`` is the
      (zero-padded) operand at window position ``l`` (row-major over the window grid, with
      ``L_i = (size_i + low_i + high_i - dilation_i * (kernel_i - 1) - 1) // stride_i + 1``
      positions per dimension) plus kernel offset ``k`` (row-major over ``kernel_size``),
      i.e. spatial coordinate ``pos * stride + offset * dilation - low``.
    """
    (operand,) = scalars_to((operand,))
    return unfold_p.bind(operand, **_geometry(kernel_size, stride, dilation, padding))


def fold(operand: ArrayLike, output_size: Sequence[int], kernel_size: Sequence[int],
         stride: Sequence[int] | None = None, dilation: Sequence[int] | None = None,
         padding: Sequence[tuple[int, int]] | None = None) -> Array:
    """Sums sliding-window columns back into an image (col2im): the transpose of :func:`unfold`.

    Args:
      operand: an array of shape ``(lead..., prod(kernel_size), L)`` as :func:`unfold`
        produces for an image of spatial size ``output_size``; numeric or bool (bool sums are
        logical or; float8 is not supported).
      output_size: the spatial size of the result.
      kernel_size, stride, dilation, padding: the window geometry, as for :func:`unfold`.

    Returns:
      An array of shape ``(lead..., output_size...)``: every column element added at the
      position it was unfolded from (overlapping windows sum; padding positions are dropped).
    """
    (operand,) = scalars_to((operand,))
    return fold_p.bind(operand, output_size=tuple(
        index_arg(i, "fold", "output_size") for i in output_size),
                       **_geometry(kernel_size, stride, dilation, padding))
