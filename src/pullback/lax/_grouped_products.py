"""Products whose weights vary across the output: ``conv_general_dilated_local`` (a
convolution with a separate filter at each output position: JAX's formulation, patches then a
batched dot_general) and ``ragged_dot`` (rows of ``lhs`` in consecutive groups, each group
multiplied by its own ``rhs`` matrix: a group mask then one contraction). Both differentiable
in their array operands."""
from __future__ import annotations

from typing import Any, Sequence

from ..tracer import core, dtypes
from ._conv import conv_dimension_numbers, conv_general_dilated_patches
from ._conversion import convert_element_type
from ._dot import canonicalize_precision, dot_general
from ._elementwise import bitwise_and, ge, lt
from ._full import full_like
from ._movement import broadcast_in_dim, broadcasted_iota, concatenate, slice_in_dim, transpose
from ._operands import scalars_to
from ._reductions import cumsum

__all__ = ["conv_general_dilated_local", "ragged_dot"]


def _moveaxis(x: Any, src: Sequence[int], dst: Sequence[int]) -> Any:
    nd = core.get_aval(x).ndim
    src = [s % nd for s in src]
    dst = [d % nd for d in dst]
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(x, order) if order != list(range(nd)) else x


def conv_general_dilated_local(lhs: Any, rhs: Any, window_strides: Sequence[int],
                               padding: str | Sequence[tuple[int, int]],
                               filter_shape: Sequence[int],
                               lhs_dilation: Sequence[int] | None = None,
                               rhs_dilation: Sequence[int] | None = None,
                               dimension_numbers: Any = None, precision: Any = None) -> Any:
    """A locally connected ("unshared") convolution: each output position has its own filter.

    Args:
      lhs: the input, laid out by ``dimension_numbers`` (default NC...).
      rhs: the filters, shaped as the output's spatial dimensions (by the rhs layout's
        spatial entries) with in-features times the filter size and out-features, as JAX's.
      window_strides, padding, lhs_dilation, rhs_dilation: as ``conv_general_dilated``.
      filter_shape: the spatial filter shape.
      dimension_numbers: as ``conv_general_dilated``.
      precision: as ``conv_general_dilated`` (one or two entries).

    Returns:
      The output, laid out as ``dimension_numbers``' output spec.
    """
    lhs, rhs = scalars_to((lhs, rhs))
    cp = canonicalize_precision(precision, "conv_general_dilated_local")
    if cp is None:
        lhs_precision = None
    elif isinstance(cp, tuple) and len(cp) == 2:
        lhs_precision = cp[0]
    else:
        raise ValueError(f"conv_general_dilated_local: unsupported argument 'precision' "
                         f"{precision!r}")
    patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                           lhs_dilation=lhs_dilation,
                                           rhs_dilation=rhs_dilation,
                                           dimension_numbers=dimension_numbers,
                                           precision=lhs_precision)
    lhs_shape = core.get_aval(lhs).shape
    lhs_spec, rhs_spec, out_spec = conv_dimension_numbers(
        lhs_shape, (1, 1) + tuple(filter_shape), dimension_numbers)
    lhs_c, rhs_c = [out_spec[1]], [rhs_spec[1]]
    lhs_b, rhs_b = list(out_spec[2:]), list(rhs_spec[2:])
    rhs_b = [rhs_b[i] for i in sorted(range(len(rhs_b)), key=lambda k: lhs_b[k])]
    lhs_b = sorted(lhs_b)
    out = dot_general(patches, rhs, ((lhs_c, rhs_c), (lhs_b, rhs_b)), precision=precision)
    return _moveaxis(out, (-2, -1), (out_spec[0], out_spec[1]))


def ragged_dot(lhs: Any, rhs: Any, group_sizes: Any, precision: Any = None,
               preferred_element_type: Any = None, group_offset: Any = None,
               out_sharding: Any = None) -> Any:
    """``out[i] = lhs[i] @ rhs[g(i)]`` where rows are assigned to groups consecutively by
    ``group_sizes`` (rows past their sum give zeros).

    Args:
      lhs: (m, k).
      rhs: (g, k, n).
      group_sizes: (g,) integers.
      precision, preferred_element_type: as ``dot_general``.
      group_offset: not supported (as JAX's CPU implementation).

    Returns:
      (m, n).
    """
    if group_offset is not None:
        raise NotImplementedError("ragged_dot: argument 'group_offset' is not supported")
    lhs, rhs, group_sizes = scalars_to((lhs, rhs, group_sizes))
    la, ra, ga = (core.get_aval(x) for x in (lhs, rhs, group_sizes))
    if la.ndim != 2 or ra.ndim != 3 or ga.ndim != 1:
        raise TypeError(f"ragged_dot: arguments must be lhs (m, k), rhs (g, k, n) and "
                        f"group_sizes (g,), got shapes {la.shape}, {ra.shape}, {ga.shape}")
    if la.shape[1] != ra.shape[1] or ra.shape[0] != ga.shape[0]:
        raise TypeError(f"ragged_dot: inconsistent shapes lhs {la.shape}, rhs {ra.shape}, "
                        f"group_sizes {ga.shape}")
    if not dtypes.is_integer(ga.dtype):
        raise TypeError(f"ragged_dot: argument 'group_sizes' must be integer, got {ga.dtype}")
    m, g = la.shape[0], ra.shape[0]
    ends = cumsum(group_sizes, 0)
    starts = concatenate([full_like(slice_in_dim(ends, 0, 1), 0),
                          slice_in_dim(ends, 0, max(g - 1, 0))], 0) if g else ends
    rows = broadcasted_iota(ga.dtype, (m, g), 0)
    inside = bitwise_and(ge(rows, broadcast_in_dim(starts, (m, g), (1,))),
                         lt(rows, broadcast_in_dim(ends, (m, g), (1,))))
    mask = convert_element_type(inside, la.dtype)                    # (m, g) one-hot rows
    # (m, g, k): each row's lhs in its group's slot, then one contraction over (g, k)
    lhs_g = broadcast_in_dim(lhs, (m, g, la.shape[1]), (0, 2))
    lhs_g = lhs_g * broadcast_in_dim(mask, (m, g, la.shape[1]), (0, 1))
    return dot_general(lhs_g, rhs, (((1, 2), (0, 1)), ((), ())), precision=precision,
                       preferred_element_type=preferred_element_type)

