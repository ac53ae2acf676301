"""``ragged_dot_general`` (dot_general with one lhs dimension split into consecutive groups)
and ``scaled_dot`` (a dot of block-scaled operands), as compositions of dot_general.

ragged_dot_general builds a one-hot group mask over the lhs ragged dimension (from the
cumulative group sizes, per batch/outer index when ``group_sizes`` has them), multiplies it
into lhs as an extra group axis and contracts that axis as JAX's three modes need: against
rhs's group dimension (ragged non-contracting), kept as the leading output axis (ragged
contracting), or summed away (ragged batch). scaled_dot follows XLA's decomposition, which
JAX's CPU path runs: each scale repeated over its subchannel, operand and scale rounded to
bfloat16 and multiplied there, then one dot_general into ``preferred_element_type``.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from ..tracer import core, dtypes
from ._conversion import convert_element_type
from ._dot import dot_general
from ._elementwise import bitwise_and, ge, lt
from ._movement import broadcast_in_dim, broadcasted_iota, reshape, transpose
from ._operands import scalars_to
from ._reductions import cumsum

__all__ = ["RaggedDotDimensionNumbers", "ragged_dot_general", "scaled_dot"]


@dataclasses.dataclass(frozen=True, init=False)
class RaggedDotDimensionNumbers:
    """The dimension numbers of ``ragged_dot_general``.

    Args:
      dot_dimension_numbers: ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``.
      lhs_ragged_dimensions: the one lhs dimension split into groups.
      rhs_group_dimensions: rhs's group dimension (only when the ragged dimension is a
        non-contracting one), else empty.
    """
    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: tuple
    rhs_group_dimensions: tuple

    def __init__(self, dot_dimension_numbers: Any, lhs_ragged_dimensions: Sequence[int],
                 rhs_group_dimensions: Sequence[int]) -> None:
        object.__setattr__(self, "dot_dimension_numbers",
                           tuple(tuple(map(tuple, t)) for t in dot_dimension_numbers))
        object.__setattr__(self, "lhs_ragged_dimensions", tuple(lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions", tuple(rhs_group_dimensions))


def _group_mask(group_sizes: Any, lhs_shape: tuple, ragged: int, gs_axes: list[int],
                dtype: Any) -> Any:
    """(lhs_shape + (g,)) one-hot: position i of the ragged dimension is in group j."""
    ga = core.get_aval(group_sizes)
    g = ga.shape[-1]
    shape = tuple(lhs_shape) + (g,)
    ends = cumsum(group_sizes, ga.ndim - 1)
    starts = ends - group_sizes
    dims = tuple(gs_axes) + (len(lhs_shape),)
    pos = broadcasted_iota(ga.dtype, shape, ragged)
    inside = bitwise_and(ge(pos, broadcast_in_dim(starts, shape, dims)),
                         lt(pos, broadcast_in_dim(ends, shape, dims)))
    return convert_element_type(inside, dtype)


def ragged_dot_general(lhs: Any, rhs: Any, group_sizes: Any,
                       ragged_dot_dimension_numbers: RaggedDotDimensionNumbers,
                       precision: Any = None, preferred_element_type: Any = None,
                       group_offset: Any = None, out_sharding: Any = None) -> Any:
    """Ragged matrix multiplication with general dimension numbers, as JAX's.

    Modes (by the kind of the lhs ragged dimension; ``b`` batch, ``m`` lhs free, ``k``
    contracting, ``n`` rhs free, ``x`` the same-kind lhs dims outer to the ragged one):
    non-contracting ``[b,m,k],[g,b,k,n],[b,x,g] -> [b,m,n]``; contracting
    ``[b,m,k],[b,k,n],[b,x,g] -> [g,b,m,n]``; batch ``[b,m,k],[b,k,n],[x,g] -> [b,m,n]``.
    ``group_sizes`` may also be ``[g]``. In the first two modes elements past the groups'
    total contribute zero; in the batch mode the result is the plain batched product (as
    JAX's).

    Args:
      lhs, rhs: the operands.
      group_sizes: integer group sizes.
      ragged_dot_dimension_numbers: a ``RaggedDotDimensionNumbers``.
      precision, preferred_element_type: as ``dot_general``.
      group_offset: must be None (JAX's CPU path has no group offset either).
      out_sharding: ignored (one device).

    Returns:
      The product.
    """
    fn = "ragged_dot_general"
    if group_offset is not None:
        raise ValueError(f"{fn}: argument 'group_offset' must be None (not supported on CPU, "
                         f"as JAX)")
    dn = ragged_dot_dimension_numbers
    if not isinstance(dn, RaggedDotDimensionNumbers):
        raise TypeError(f"{fn}: argument 'ragged_dot_dimension_numbers' must be a "
                        f"RaggedDotDimensionNumbers, got {type(dn).__name__}")
    lhs, rhs, group_sizes = scalars_to((lhs, rhs, group_sizes))
    la, ra, ga = (core.get_aval(x) for x in (lhs, rhs, group_sizes))
    if not dtypes.is_integer(ga.dtype):
        raise TypeError(f"{fn}: argument 'group_sizes' must be integer, got {ga.dtype}")
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    lc, rc, lb, rb = (tuple(d % n for d in ds) for ds, n in
                      ((lc, la.ndim), (rc, ra.ndim), (lb, la.ndim), (rb, ra.ndim)))
    if len(dn.lhs_ragged_dimensions) != 1:
        raise ValueError(f"{fn}: exactly one lhs ragged dimension is needed, got "
                         f"{dn.lhs_ragged_dimensions}")
    ragged = dn.lhs_ragged_dimensions[0] % la.ndim
    groups = tuple(d % ra.ndim for d in dn.rhs_group_dimensions)
    if ragged in lc:
        kind, same = "contracting", lc
    elif ragged in lb:
        kind, same = "batch", lb
    else:
        kind = "noncontracting"
        same = tuple(d for d in range(la.ndim) if d not in lc and d not in lb)
    if (kind == "noncontracting") != (len(groups) == 1) or len(groups) > 1:
        raise ValueError(f"{fn}: rhs needs exactly one group dimension when the lhs ragged "
                         f"dimension is non-contracting, and none otherwise; got "
                         f"rhs_group_dimensions={dn.rhs_group_dimensions} with a {kind} "
                         f"ragged dimension")
    outer = [d for d in sorted(same) if d < ragged]
    # the lhs axes group_sizes' leading axes line up with
    full = ([] if kind == "batch" else list(lb)) + outer
    if ga.ndim == 1:
        gs_axes: list[int] = []
    elif ga.ndim == len(full) + 1 and all(ga.shape[i] == la.shape[d]
                                          for i, d in enumerate(full)):
        gs_axes = full
    else:
        raise ValueError(f"{fn}: argument 'group_sizes' of shape {ga.shape} must be (g,) or "
                         f"{tuple(la.shape[d] for d in full) + ('g',)}")
    g = ga.shape[-1]
    if groups and ra.shape[groups[0]] != g:
        raise ValueError(f"{fn}: rhs group dimension has size {ra.shape[groups[0]]} but "
                         f"'group_sizes' has {g} groups")
    if kind == "batch":
        # JAX's result for a ragged batch dimension is the plain batched product: the group
        # sizes do not mask anything (checked against JAX 0.10.2)
        return dot_general(lhs, rhs, ((lc, rc), (lb, rb)), precision=precision,
                           preferred_element_type=preferred_element_type)
    mask = _group_mask(group_sizes, la.shape, ragged, gs_axes, la.dtype)
    lhs_g = broadcast_in_dim(lhs, tuple(la.shape) + (g,), tuple(range(la.ndim))) * mask
    gax = la.ndim
    if kind == "noncontracting":
        return dot_general(lhs_g, rhs, ((lc + (gax,), rc + groups), (lb, rb)),
                           precision=precision, preferred_element_type=preferred_element_type)
    out = dot_general(lhs_g, rhs, ((lc, rc), (lb, rb)), precision=precision,
                      preferred_element_type=preferred_element_type)
    # lhs's free axes end with the group axis: move it to the front
    n_lfree = la.ndim - len(lc) - len(lb)
    pos = len(lb) + n_lfree
    nd = core.get_aval(out).ndim
    return transpose(out, (pos,) + tuple(i for i in range(nd) if i != pos))


def _expand_scale(scale: Any, shape: tuple, contracting: Sequence[int], fn: str,
                  name: str) -> Any:
    sa = core.get_aval(scale)
    if sa.ndim != len(shape):
        raise ValueError(f"{fn}: argument {name!r} must have the operand's rank {len(shape)}, "
                         f"got shape {sa.shape}")
    for d in range(len(shape)):
        if d in contracting:
            if sa.shape[d] == 0 or shape[d] % sa.shape[d]:
                raise ValueError(f"{fn}: argument {name!r} of shape {sa.shape}: contracting "
                                 f"dimension {d} of the operand ({shape[d]}) must be a "
                                 f"multiple of the scale's")
        elif sa.shape[d] != shape[d]:
            raise ValueError(f"{fn}: argument {name!r} of shape {sa.shape} must match the "
                             f"operand's shape {shape} outside the contracting dimensions")
    # each scale entry covers shape[d] // scale.shape[d] consecutive operand entries
    inter, dims, sizes = [], [], []
    for d in range(len(shape)):
        if d in contracting:
            dims.append(len(inter))
            inter += [sa.shape[d], shape[d] // sa.shape[d]]
        else:
            dims.append(len(inter))
            inter.append(shape[d])
    return reshape(broadcast_in_dim(scale, tuple(inter), tuple(dims)), tuple(shape))


def scaled_dot(lhs: Any, rhs: Any, *, lhs_scale: Any = None, rhs_scale: Any = None,
               dimension_numbers: Any = None, preferred_element_type: Any = None) -> Any:
    """``(lhs * lhs_scale) @ (rhs * rhs_scale)`` with block scales, as JAX's.

    Args:
      lhs, rhs: the operands (e.g. float8).
      lhs_scale, rhs_scale: scales shaped as their operand except along the contracting
        dimensions, whose size divides the operand's (the subchannel); None is a scale of 1.
      dimension_numbers: as ``dot_general``; default: contract lhs's last with rhs's
        second-to-last dimension, leading dimensions batched.
      preferred_element_type: the result dtype (default bfloat16).

    Returns:
      The product, in ``preferred_element_type``.
    """
    fn = "scaled_dot"
    lhs, rhs = scalars_to((lhs, rhs))
    la, ra = core.get_aval(lhs), core.get_aval(rhs)
    if dimension_numbers is None:
        if la.ndim < 2:
            raise TypeError(f"{fn}: argument 'lhs' must have rank 2 or more, got shape "
                            f"{la.shape}")
        n = la.ndim
        dimension_numbers = (((n - 1,), (n - 2,)), (tuple(range(n - 2)), tuple(range(n - 2))))
    (lc, rc), _ = dimension_numbers
    lc = tuple(d % la.ndim for d in lc)
    rc = tuple(d % ra.ndim for d in rc)
    out_dtype = dtypes.bfloat16 if preferred_element_type is None else \
        dtypes.requested(preferred_element_type, fn)

    def scaled(x: Any, scale: Any, contracting: tuple, name: str) -> Any:
        xa = core.get_aval(x)
        xb = convert_element_type(x, dtypes.bfloat16)
        if scale is None:
            return xb
        (scale,) = scalars_to((scale,))
        s = _expand_scale(scale, tuple(xa.shape), contracting, fn, name)
        return xb * convert_element_type(s, dtypes.bfloat16)

    return dot_general(scaled(lhs, lhs_scale, lc, "lhs_scale"),
                       scaled(rhs, rhs_scale, rc, "rhs_scale"), dimension_numbers,
                       preferred_element_type=out_dtype)
