"""Convolutions: ``jax.lax``'s conv_general_dilated and its wrappers."""
from __future__ import annotations

import enum
import math
import operator
from typing import Any, Sequence

import numpy as np

from ..primitives.conv import ConvDimensionNumbers, conv_general_dilated_p, dilate_dim
from ..primitives.movement import rev_p, transpose_p
from ..tracer import core, dtypes
from ..tracer.array import Array
from ._dot import Precision, canonicalize_precision
from ._operands import ArrayLike, scalars_to

__all__ = ["ConvDimensionNumbers", "conv_general_dilated", "conv", "conv_with_general_padding",
           "conv_transpose", "conv_dimension_numbers", "conv_general_permutations",
           "conv_general_dilated_patches", "padtype_to_pads", "PaddingType",
           "conv_shape_tuple", "conv_general_shape_tuple", "conv_transpose_shape_tuple"]


class PaddingType(enum.Enum):
    """The padding strings of ``padtype_to_pads``."""

    VALID = 1
    SAME = 2
    SAME_LOWER = 3


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int],
                    window_strides: Sequence[int], padding: str | PaddingType
                    ) -> list[tuple[int, int]]:
    """Converts a padding string to explicit ``(low, high)`` pairs, one per spatial dim.

    Args:
      in_shape: the input's spatial shape.
      window_shape: the (dilated) window's spatial shape.
      window_strides: the strides.
      padding: "VALID" (no padding), "SAME" (output size ``ceil(in / stride)``, the odd pad
        element at the end) or "SAME_LOWER" (the same, the odd element at the start), or a
        ``PaddingType``.

    Returns:
      A list of ``(low, high)`` pairs.
    """
    if isinstance(padding, str):
        try:
            padding = PaddingType[padding.upper()]
        except KeyError:
            raise RuntimeError("Unrecognized padding type: expected 'VALID', 'SAME' or "
                               f"'SAME_LOWER', got {padding}.") from None
    if padding in (PaddingType.SAME, PaddingType.SAME_LOWER):
        pads = []
        for i, w, s in zip(in_shape, window_shape, window_strides):
            out = -(-int(i) // int(s))
            p = max((out - 1) * int(s) + int(w) - int(i), 0)
            pads.append((p // 2, p - p // 2) if padding is PaddingType.SAME
                        else (p - p // 2, p // 2))
        return pads
    if padding is PaddingType.VALID:
        return [(0, 0)] * len(in_shape)
    raise TypeError(f"Unknown padding type: {padding}.")


def conv_general_permutations(dimension_numbers: Sequence[str]
                              ) -> tuple[tuple[int, ...], ...]:
    """The (lhs, rhs, out) specs of three layout strings such as ("NCHW", "OIHW", "NCHW")."""
    lhs_s, rhs_s, out_s = dimension_numbers
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(pairs):
        s = dimension_numbers[i]
        if not s.count(a) == s.count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{a}' and '{b}' exactly once, got {s}.")
        if len(s) != len(set(s)):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {s}.")
    if not set(lhs_s) - {"N", "C"} == set(rhs_s) - {"O", "I"} == set(out_s) - {"N", "C"}:
        raise TypeError("convolution dimension_numbers elements must each have the same set of "
                        f"spatial characters, got {tuple(dimension_numbers)}.")

    def perm(spec: str, pair: tuple[str, str]) -> tuple[int, ...]:
        spatial = [i for i, c in enumerate(spec) if c not in pair]
        if spec is not rhs_s:  # spatial dims in the kernel's order
            spatial.sort(key=lambda i: rhs_s.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)

    return tuple(perm(s, p) for s, p in zip(dimension_numbers, pairs))


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers: Any) -> ConvDimensionNumbers:
    """Converts ``dimension_numbers`` to a ``ConvDimensionNumbers``.

    Args:
      lhs_shape, rhs_shape: the operands' shapes (equal ranks).
      dimension_numbers: None (``("NC...", "OI...", "NC...")``), a ``ConvDimensionNumbers``, or
        three layout strings such as ``("NHWC", "HWIO", "NHWC")``.

    Returns:
      The ``ConvDimensionNumbers`` (lhs, rhs and out specs).
    """
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError("convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, (list, tuple)):
        if len(dimension_numbers) != 3:
            raise TypeError("convolution dimension_numbers list/tuple must be length 3, got "
                            f"{len(dimension_numbers)}.")
        if not all(isinstance(e, str) for e in dimension_numbers):
            raise TypeError("convolution dimension_numbers elements must be strings, got "
                            f"{tuple(map(type, dimension_numbers))}.")
        for i, e in enumerate(dimension_numbers):
            if len(e) != len(lhs_shape):
                raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to the "
                                f"ndim of lhs and rhs, got {len(e)} for lhs and rhs shapes "
                                f"{tuple(lhs_shape)} and {tuple(rhs_shape)}.")
        return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))
    raise TypeError("convolution dimension_numbers must be tuple/list or None, got "
                    f"{type(dimension_numbers)}.")


def _ints(v: Any, fn: str, arg: str) -> tuple[int, ...]:
    try:
        return tuple(operator.index(i) for i in v)
    except TypeError:
        raise TypeError(f"{fn}: argument '{arg}' must be a sequence of integers, got "
                        f"{v!r}") from None


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(core.get_aval(x).shape) if isinstance(x, Array) or hasattr(x, "aval") \
        else tuple(np.shape(x))


def conv_general_dilated(lhs: ArrayLike, rhs: ArrayLike, window_strides: Sequence[int],
                         padding: str | Sequence[tuple[int, int]],
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision: Any = None,
                         preferred_element_type: Any = None) -> Array:
    """General n-dimensional convolution with dilation, padding and groups (XLA's Conv).

    Args:
      lhs: the input, rank n+2 (batch, feature and n spatial dims in the layout
        ``dimension_numbers`` gives).
      rhs: the kernel, rank n+2 (out feature, in feature and n spatial dims).
      window_strides: n positive strides.
      padding: "SAME", "SAME_LOWER", "VALID", or n ``(low, high)`` pairs (negative crops).
      lhs_dilation: n input dilation factors (transposed convolution); default 1.
      rhs_dilation: n kernel dilation factors (atrous convolution); default 1.
      dimension_numbers: None (NCHW/OIHW/NCHW order), a ``ConvDimensionNumbers``, or layout
        strings such as ``("NHWC", "HWIO", "NHWC")``.
      feature_group_count: split the input features into this many groups (grouped and
        depthwise convolutions).
      batch_group_count: split the input batch into this many groups (kernel gradients of
        grouped convolutions).
      precision: accepted as JAX accepts it; the CPU computes in the accumulation precision.
      preferred_element_type: the result dtype, which also sets the accumulation.

    Returns:
      The convolution, laid out as ``dimension_numbers``' output spec.
    """
    fn = "conv_general_dilated"
    lhs, rhs = scalars_to((lhs, rhs))
    lshape, rshape = _shape(lhs), _shape(rhs)
    dnums = conv_dimension_numbers(lshape, rshape, dimension_numbers)
    nsp = len(lshape) - 2
    window_strides = _ints(window_strides, fn, "window_strides")
    if lhs_dilation is None:
        lhs_dilation = (1,) * nsp
    else:
        lhs_dilation = _ints(lhs_dilation, fn, "lhs_dilation")
        if isinstance(padding, str) and any(d != 1 for d in lhs_dilation):
            raise ValueError("String padding is not implemented for transposed convolution "
                             "using this op. Please either exactly specify the required "
                             "padding or use conv_transpose.")
    rhs_dilation = (1,) * nsp if rhs_dilation is None else _ints(rhs_dilation, fn,
                                                                 "rhs_dilation")
    if isinstance(padding, str):
        ls, rs, _ = dnums
        window = [dilate_dim(rshape[d], r) for d, r in zip(rs[2:], rhs_dilation)]
        padding = padtype_to_pads([lshape[d] for d in ls[2:]], window, window_strides, padding)
    else:
        try:
            padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
        except (ValueError, TypeError) as e:
            raise ValueError("padding argument to conv_general_dilated should be a string or a "
                             f"sequence of (low, high) pairs, got {padding}") from e
    if preferred_element_type is not None:
        preferred_element_type = (
            dtypes.requested(preferred_element_type)
            if any(preferred_element_type is t for t in (int, float, complex))
            else dtypes.canonical(np.dtype(preferred_element_type)))
    for name, g in (("feature_group_count", feature_group_count),
                    ("batch_group_count", batch_group_count)):
        try:
            operator.index(g)
        except TypeError:
            raise TypeError(f"{fn}: argument '{name}' must be an integer, got {g!r}") from None
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=window_strides, padding=tuple(padding),
        lhs_dilation=tuple(lhs_dilation), rhs_dilation=tuple(rhs_dilation),
        dimension_numbers=dnums, feature_group_count=operator.index(feature_group_count),
        batch_group_count=operator.index(batch_group_count),
        precision=canonicalize_precision(precision, fn),
        preferred_element_type=preferred_element_type)


def conv(lhs: ArrayLike, rhs: ArrayLike, window_strides: Sequence[int], padding: str,
         precision: Any = None, preferred_element_type: Any = None) -> Array:
    """``conv_general_dilated`` in NCHW/OIHW layout without dilation (``jax.lax.conv``)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs: ArrayLike, rhs: ArrayLike, window_strides: Sequence[int],
                              padding: str | Sequence[tuple[int, int]],
                              lhs_dilation: Sequence[int] | None,
                              rhs_dilation: Sequence[int] | None, precision: Any = None,
                              preferred_element_type: Any = None) -> Array:
    """``conv_general_dilated`` in NCHW/OIHW layout (``jax.lax.conv_with_general_padding``)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k: int, s: int, padding: Any) -> tuple[int, int]:
    """Before/after padding of one spatial dim of a transposed convolution (JAX's)."""
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else int(math.ceil(pad_len / 2))
    elif padding == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        pad_a, pad_len = pads[0], sum(pads)
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return pad_a, pad_len - pad_a


_TRANSPOSE_DEFAULTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                       4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs: ArrayLike, rhs: ArrayLike, strides: Sequence[int],
                   padding: str | Sequence[tuple[int, int]],
                   rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                   transpose_kernel: bool = False, precision: Any = None,
                   preferred_element_type: Any = None,
                   use_consistent_padding: bool = False) -> Array:
    """The n-d convolution "transpose" (fractionally strided convolution), as JAX's.

    Args:
      lhs: the input, rank n+2.
      rhs: the kernel, rank n+2.
      strides: n fractional strides (the input dilation of the convolution).
      padding: "SAME", "VALID" (the forward convolution's padding) or n ``(low, high)`` pairs
        (the transposed convolution's own padding, or with ``use_consistent_padding`` the
        forward convolution's, as PyTorch).
      rhs_dilation: n kernel dilation factors.
      dimension_numbers: as ``conv_general_dilated``; default TensorFlow's
        ("NHWC", "HWIO", "NHWC").
      transpose_kernel: flip the kernel's spatial dims and swap its feature dims, which makes
        this the gradient of the forward convolution with the same kernel.
      precision, preferred_element_type: as ``conv_general_dilated``.
      use_consistent_padding: read explicit pads as the forward convolution's.

    Returns:
      The transposed convolution.
    """
    lhs, rhs = scalars_to((lhs, rhs))
    lshape, rshape = _shape(lhs), _shape(rhs)
    if len(lshape) != len(rshape) or len(lshape) < 2:
        raise ValueError(f"conv_transpose: arguments 'lhs' and 'rhs' must have the same rank "
                         f"(at least 2), got shapes {lshape} and {rshape}")
    nd = len(lshape)
    if dimension_numbers is None:
        if nd not in _TRANSPOSE_DEFAULTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_DEFAULTS[nd]
    dn = conv_dimension_numbers(lshape, rshape, dimension_numbers)
    strides = _ints(strides, "conv_transpose", "strides")
    k_sdims = [rshape[d] for d in dn.rhs_spec[2:]]
    rhs_dilation = ((1,) * (nd - 2) if rhs_dilation is None
                    else _ints(rhs_dilation, "conv_transpose", "rhs_dilation"))
    if use_consistent_padding or (isinstance(padding, str) and padding in {"SAME", "VALID"}):
        eff = [dilate_dim(k, r) for k, r in zip(k_sdims, rhs_dilation)]
        rep = [padding] * len(strides) if isinstance(padding, str) else \
            [tuple(p) for p in padding]
        pads: Any = tuple(_conv_transpose_padding(k, s, p) for k, s, p in zip(eff, strides, rep))
    else:
        pads = padding
    if transpose_kernel:
        rhs = rev_p.bind(rhs, dimensions=tuple(dn.rhs_spec[2:]))
        perm = list(range(nd))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = dn.rhs_spec[1], dn.rhs_spec[0]
        rhs = transpose_p.bind(rhs, permutation=tuple(perm))
    return conv_general_dilated(lhs, rhs, (1,) * (nd - 2), pads, strides, rhs_dilation, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def _patches_precision(precision: Any) -> Any:
    """JAX's ``(precision, DEFAULT)``: the one-hot kernel needs no precision of its own."""
    p = canonicalize_precision(precision, "conv_general_dilated_patches")
    return p if p is None or not isinstance(p, tuple) else (p[0], Precision.DEFAULT)


def conv_general_dilated_patches(lhs: ArrayLike, filter_shape: Sequence[int],
                                 window_strides: Sequence[int],
                                 padding: str | Sequence[tuple[int, int]],
                                 lhs_dilation: Sequence[int] | None = None,
                                 rhs_dilation: Sequence[int] | None = None,
                                 dimension_numbers: Any = None, precision: Any = None,
                                 preferred_element_type: Any = None) -> Array:
    """The patches a convolution of kernel size ``filter_shape`` reads, as output features
    (``C * prod(filter_shape)`` of them, channel-major), as ``jax.lax``'s: a depthwise
    convolution with one-hot kernels.

    Args:
      lhs: the input, rank n+2.
      filter_shape: the n spatial kernel sizes.
      window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers, precision,
        preferred_element_type: as ``conv_general_dilated``.

    Returns:
      The patches, laid out as the output spec of ``dimension_numbers``.
    """
    (lhs,) = scalars_to((lhs,))
    lshape = _shape(lhs)
    filter_shape = _ints(filter_shape, "conv_general_dilated_patches", "filter_shape")
    dn = conv_dimension_numbers(lshape, (1, 1) + filter_shape, dimension_numbers)
    _, rs, _ = dn
    size = math.prod(filter_shape)
    c = lshape[dn.lhs_spec[1]]
    dt = core.get_aval(lhs).dtype  # (a tracer too: under jit, grad, vmap)
    eye = np.broadcast_to(np.eye(size, dtype=dt), (c, size, size))
    w = eye.reshape((c * size, 1) + filter_shape)
    w = np.moveaxis(w, (0, 1), (rs[0], rs[1]))
    return conv_general_dilated(
        lhs, Array(np.ascontiguousarray(w)), window_strides, padding, lhs_dilation,
        rhs_dilation, dn, feature_group_count=c,
        precision=_patches_precision(precision),
        preferred_element_type=preferred_element_type)


def conv_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                     strides: Sequence[int], pads: Any, batch_group_count: int = 1
                     ) -> tuple[int, ...]:
    """The output shape of an NC.../OI... convolution (``jax.lax.conv_shape_tuple``)."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"Wrong number of explicit pads for convolution: expected "
                        f"{len(lhs_shape) - 2}, got {len(pads)}.")
    padded = [s + lo + hi for s, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(p < 0 for p in padded):
        raise ValueError("Negative padding is larger than the size of the corresponding "
                         f"dimension: got padding={pads} for lhs_shape[2:]={lhs_shape[2:]}")
    space = [max(0, (p - k) // s + 1) if p >= k else 0
             for p, k, s in zip(padded, rhs_shape[2:], strides)]
    return (lhs_shape[0] // batch_group_count, rhs_shape[0]) + tuple(space)


def conv_general_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                             window_strides: Sequence[int], padding: Any,
                             dimension_numbers: Any) -> tuple[int, ...]:
    """The output shape of a convolution in any layout (``jax.lax``'s)."""
    ls, rs, os_ = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    out = conv_shape_tuple([lhs_shape[d] for d in ls], [rhs_shape[d] for d in rs],
                           window_strides, padding)
    return tuple(out[i] for i in np.argsort(os_))


def conv_transpose_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                               window_strides: Sequence[int], padding: Any,
                               dimension_numbers: Any) -> tuple[int, ...]:
    """The output shape of ``conv_transpose`` (``jax.lax``'s)."""
    ls, rs, os_ = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lt, rt = [lhs_shape[d] for d in ls], [rhs_shape[d] for d in rs]
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding) for k, s in zip(rt[2:], window_strides)]
    space = [dilate_dim(i, s) + lo + hi - k + 1 for i, k, s, (lo, hi) in zip(lt[2:], rt[2:], window_strides, padding)]
    out = (lt[0], rt[0]) + tuple(max(0, v) for v in space)
    return tuple(out[i] for i in np.argsort(os_))
