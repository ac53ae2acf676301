"""Products: matmul, dot, vdot, inner, outer, tensordot, einsum, kron; trace and diagonal.

Every contraction lowers to one dot_general (batched BLAS on the CPU). einsum takes its
pairwise contraction order from opt_einsum.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import opt_einsum

from .. import lax
from ..lax._dot import canonicalize_precision
from ..primitives.dot import dot_general_p
from ..tracer import dtypes, executor
from ..tracer.array import Array
from ..tracer.shapes import broadcast_shapes, canonicalize_axis, index_arg
from ._promotion import aval_of, convert, promote_args, promote_dtypes
from ._shape import moveaxis, ravel, reshape, transpose
from ._ufuncs import conj, multiply
from ._reductions import sum as sum_
from ._indexing import rewriting_take

eager = executor.installed().eager  # the eager short paths (backends/eager.py)

ArrayLike = Any


def _dot(a: Any, b: Any, contract: tuple, batch: tuple, preferred: Any = None) -> Any:
    if aval_of(a).dtype == dtypes.bool_:  # logical or of ands, via an integer count
        r = _dot(convert(a, dtypes.int32), convert(b, dtypes.int32), contract, batch)
        return lax.ne(r, lax.full_like(r, 0))
    return dot_general_p.bind(a, b, dimension_numbers=(contract, batch), precision=None,
                              preferred_element_type=preferred)


_MATMUL_2D = {"dimension_numbers": (((1,), (0,)), ((), ())), "precision": None,
              "preferred_element_type": None}


def matmul(a: ArrayLike, b: ArrayLike, /, *, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """Matrix product with NumPy's ``@`` semantics (1-D operands promoted, batch dims
    broadcast)."""
    if type(a) is Array and type(b) is Array and precision is None and \
            preferred_element_type is None:
        av, bv = a._aval, b._aval
        if av.ndim == 2 and bv.ndim == 2 and av.dtype == bv.dtype and av.dtype != dtypes.bool_:
            # the general path's one dot_general, bound as it is (its reshape keeps the shape)
            out = eager.call(dot_general_p, (a, b), _MATMUL_2D)
            if out is not None:
                return out
    canonicalize_precision(precision, "matmul")
    a, b = promote_dtypes("matmul", a, b)
    av, bv = aval_of(a), aval_of(b)
    if av.ndim == 0 or bv.ndim == 0:
        raise ValueError("matmul: operands must be at least 1-D (use multiply for scalars)")
    # JAX's layout of the product: a batch dim is a dot_general batch dim only where both
    # operands have it at the same size; one that only one operand has (or has at size 1
    # while the other does not) stays a free dim of that operand. So `x @ w` with x (B, T, D)
    # and w (D, F) contracts D with no batch dims: its transpose for w's gradient is one
    # product over B*T, not B products of w's size summed afterwards.
    a_mat, b_mat = av.ndim > 1, bv.ndim > 1
    if av.shape[-1] != bv.shape[-2 if b_mat else 0]:
        raise ValueError(f"matmul: the contracting dimensions differ: shapes {av.shape} and "
                         f"{bv.shape} (last of a, second-to-last of b)")
    a_bd = av.shape[:-2] if a_mat else ()
    b_bd = bv.shape[:-2] if b_mat else ()
    nb = max(len(a_bd), len(b_bd))
    a_bd = (None,) * (nb - len(a_bd)) + tuple(a_bd)
    b_bd = (None,) * (nb - len(b_bd)) + tuple(b_bd)
    a_sq, b_sq, both_sq, a_batch, b_batch = [], [], [], [], []
    idx_batch, idx_a, idx_b = [], [], []
    for i, (ba, bb) in enumerate(zip(a_bd, b_bd)):
        if ba is None:
            idx_b.append(i)
        elif bb is None:
            idx_a.append(i)
        elif ba == 1 and bb == 1:
            a_sq.append(len(idx_batch) + len(idx_a) + len(a_sq))
            b_sq.append(len(idx_batch) + len(idx_b) + len(b_sq))
            both_sq.append(i)
        elif ba == 1:
            idx_b.append(i)
            a_sq.append(len(idx_batch) + len(idx_a) + len(a_sq))
        elif bb == 1:
            idx_a.append(i)
            b_sq.append(len(idx_batch) + len(idx_b) + len(b_sq))
        elif ba == bb:
            a_batch.append(len(idx_batch) + len(idx_a))
            b_batch.append(len(idx_batch) + len(idx_b))
            idx_batch.append(i)
        else:
            broadcast_shapes(av.shape[:-2], bv.shape[:-2], op="matmul")  # raises, naming both
    if a_mat:
        idx_a.append(nb)
    if b_mat:
        idx_b.append(nb + a_mat)
    where = idx_batch + idx_a + idx_b  # output dim i of the dot_general goes to where[i]
    perm = tuple(sorted(range(len(where)), key=where.__getitem__))
    a2 = lax.squeeze(a, tuple(a_sq)) if a_sq else a
    b2 = lax.squeeze(b, tuple(b_sq)) if b_sq else b
    na, nbb = aval_of(a2).ndim, aval_of(b2).ndim
    pref = None if preferred_element_type is None else dtypes.requested(preferred_element_type)
    out = _dot(a2, b2, ((na - 1,), (nbb - 1 - b_mat,)), (tuple(a_batch), tuple(b_batch)), pref)
    if perm != tuple(range(len(perm))):
        out = transpose(out, perm)
    if both_sq:
        out = lax.expand_dims(out, tuple(both_sq))
    return out


def dot(a: ArrayLike, b: ArrayLike, *, precision: Any = None,
        preferred_element_type: Any = None) -> Any:
    """NumPy's ``dot``: scalars multiply, 1-D·1-D is an inner product, otherwise a's last axis
    contracts with b's second-to-last (or only) axis."""
    canonicalize_precision(precision, "dot")
    a, b = promote_dtypes("dot", a, b)
    av, bv = aval_of(a), aval_of(b)
    if av.ndim == 0 or bv.ndim == 0:
        return multiply(a, b)
    bc = max(bv.ndim - 2, 0)
    if av.shape[-1] != bv.shape[bc]:
        raise ValueError(f"dot: shapes {av.shape} and {bv.shape} are not aligned: "
                         f"{av.shape[-1]} (dim {av.ndim - 1}) != {bv.shape[bc]} (dim {bc})")
    return _dot(a, b, ((av.ndim - 1,), (bc,)), ((), ()), preferred_element_type)


def vdot(a: ArrayLike, b: ArrayLike, /, *, precision: Any = None,
         preferred_element_type: Any = None) -> Any:
    """Inner product of the flattened inputs, conjugating the first."""
    canonicalize_precision(precision, "vdot")
    a, b = promote_dtypes("vdot", a, b)
    return dot(ravel(conj(a)), ravel(b))


def vecdot(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Any:
    """Vector dot product along ``axis`` (conjugating x1), broadcasting the rest."""
    x1, x2 = promote_args("vecdot", x1, x2)
    return sum_(multiply(conj(x1), x2), axis=axis)


def inner(a: ArrayLike, b: ArrayLike, /, *, precision: Any = None,
          preferred_element_type: Any = None) -> Any:
    """Sum product over the last axes."""
    canonicalize_precision(precision, "inner")
    a, b = promote_dtypes("inner", a, b)
    av, bv = aval_of(a), aval_of(b)
    if av.ndim == 0 or bv.ndim == 0:
        return multiply(a, b)
    if av.shape[-1] != bv.shape[-1]:
        raise ValueError(f"inner: the last dimensions differ: {av.shape} and {bv.shape}")
    return _dot(a, b, ((av.ndim - 1,), (bv.ndim - 1,)), ((), ()), preferred_element_type)


def outer(a: ArrayLike, b: ArrayLike, out: None = None) -> Any:
    """Outer product of the flattened inputs."""
    a, b = promote_dtypes("outer", a, b)
    a, b = ravel(a), ravel(b)
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))


def tensordot(a: ArrayLike, b: ArrayLike, axes: int | Sequence = 2, *, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """Contract ``a`` and ``b`` over ``axes`` (the last n of a with the first n of b, or two
    explicit axis lists)."""
    canonicalize_precision(precision, "tensordot")
    a, b = promote_dtypes("tensordot", a, b)
    av, bv = aval_of(a), aval_of(b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > min(av.ndim, bv.ndim):
            raise ValueError(f"tensordot: argument 'axes' must be in [0, {min(av.ndim, bv.ndim)}]")
        ax_a, ax_b = tuple(range(av.ndim - n, av.ndim)), tuple(range(n))
    else:
        ax_a, ax_b = axes
        ax_a = (ax_a,) if isinstance(ax_a, int) else tuple(ax_a)
        ax_b = (ax_b,) if isinstance(ax_b, int) else tuple(ax_b)
        if len(ax_a) != len(ax_b):
            raise ValueError("tensordot: the two axis lists must have the same length")
        ax_a = tuple(canonicalize_axis(x, av.ndim, "tensordot", "axes") for x in ax_a)
        ax_b = tuple(canonicalize_axis(x, bv.ndim, "tensordot", "axes") for x in ax_b)
    for i, j in zip(ax_a, ax_b):
        if av.shape[i] != bv.shape[j]:
            raise ValueError(f"tensordot: shape mismatch on axes {i} of a {av.shape} and {j} of "
                             f"b {bv.shape}")
    return _dot(a, b, (ax_a, ax_b), ((), ()), preferred_element_type)


def kron(a: ArrayLike, b: ArrayLike) -> Any:
    """Kronecker product."""
    a, b = promote_dtypes("kron", a, b)
    av, bv = aval_of(a), aval_of(b)
    nd = max(av.ndim, bv.ndim)
    a = reshape(a, (1,) * (nd - av.ndim) + av.shape)
    b = reshape(b, (1,) * (nd - bv.ndim) + bv.shape)
    sa, sb = aval_of(a).shape, aval_of(b).shape
    a = reshape(a, tuple(d for s in sa for d in (s, 1)))
    b = reshape(b, tuple(d for s in sb for d in (1, s)))
    return reshape(multiply(a, b), tuple(x * y for x, y in zip(sa, sb)))


def diagonal(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The ``offset`` diagonal over ``axis1``/``axis2``, as a new last axis."""
    (a,) = promote_args("diagonal", a)
    av = aval_of(a)
    if av.ndim < 2:
        raise ValueError("diagonal: argument 'a' must be at least 2-D")
    offset = index_arg(offset, "diagonal", "offset")
    i1 = canonicalize_axis(axis1, av.ndim, "diagonal", "axis1")
    i2 = canonicalize_axis(axis2, av.ndim, "diagonal", "axis2")
    if i1 == i2:
        raise ValueError("diagonal: 'axis1' and 'axis2' cannot be the same")
    x = moveaxis(a, (i1, i2), (-2, -1))
    n, m = aval_of(x).shape[-2:]
    rows0, cols0 = max(-offset, 0), max(offset, 0)
    length = max(min(n - rows0, m - cols0), 0)
    rows = lax.add(lax.iota(dtypes.int32, length), lax.full_like(lax.iota(dtypes.int32, length), rows0))
    cols = lax.add(lax.iota(dtypes.int32, length), lax.full_like(lax.iota(dtypes.int32, length), cols0))
    return rewriting_take(x, (Ellipsis, rows, cols))


def trace(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: None = None) -> Any:
    """Sum along a diagonal."""
    return sum_(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


# ---- einsum ----

def einsum(subscripts: str, /, *operands: ArrayLike, out: None = None,
           optimize: str | bool = "auto", precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """Einstein summation, contracted pairwise in the order opt_einsum finds.

    Args:
      subscripts: e.g. ``"bij,bjk->bik"`` (``...`` broadcasting is supported).
      *operands: the arrays.
      optimize: opt_einsum's path strategy ("auto", "greedy", "optimal", ... or True/False).
      preferred_element_type: the accumulation/output dtype of the contractions.

    Returns:
      The contraction.
    """
    canonicalize_precision(precision, "einsum")
    ops = promote_dtypes("einsum", *operands)
    shapes = [aval_of(o).shape for o in ops]
    strategy = "auto" if optimize is True else ("left_to_right" if optimize is False else optimize)
    _, contractions = opt_einsum.contract_path(subscripts, *shapes, shapes=True,
                                               optimize=strategy, einsum_call=True)
    ops = list(ops)
    for inds, _, einsum_str, _, _ in contractions:
        # opt_einsum lists the operands of each step in the order it pops them
        args = [ops.pop(i) for i in inds]
        ins, res = einsum_str.split("->")
        names = ins.split(",")
        if len(args) == 1:
            ops.append(_einsum_single(args[0], names[0], res))
        else:
            ops.append(_einsum_pair(args[0], args[1], names[0], names[1], res,
                                    preferred_element_type))
    (result,) = ops
    return result


def _einsum_single(x: Any, names: str, out: str) -> Any:
    """Diagonals of repeated names, sums over dropped names, then the output order."""
    while True:
        dup = next((c for c in names if names.count(c) > 1), None)
        if dup is None:
            break
        i = names.index(dup)
        j = names.index(dup, i + 1)
        x = diagonal(x, 0, i, j)  # the diagonal axis goes last
        names = "".join(c for k, c in enumerate(names) if k not in (i, j)) + dup
    drop = tuple(i for i, c in enumerate(names) if c not in out)
    if drop:
        x = sum_(x, axis=drop)
        names = "".join(c for i, c in enumerate(names) if i not in drop)
    if names != out:
        x = transpose(x, tuple(names.index(c) for c in out))
    return x


def _einsum_pair(a: Any, b: Any, an: str, bn: str, out: str, preferred: Any) -> Any:
    # names only in one operand and absent from the output are summed first
    a_keep = "".join(c for c in dict.fromkeys(an) if c in out or c in bn)
    b_keep = "".join(c for c in dict.fromkeys(bn) if c in out or c in an)
    a = _einsum_single(a, an, a_keep)
    b = _einsum_single(b, bn, b_keep)
    an, bn = a_keep, b_keep
    batch = [c for c in an if c in bn and c in out]
    contract = [c for c in an if c in bn and c not in out]
    a_sizes, b_sizes = dict(zip(an, aval_of(a).shape)), dict(zip(bn, aval_of(b).shape))
    for c in batch + contract:  # size-1 broadcasting between operands
        if a_sizes[c] != b_sizes[c]:
            if a_sizes[c] == 1:
                a = _bcast_named(a, an, c, b_sizes[c])
            elif b_sizes[c] == 1:
                b = _bcast_named(b, bn, c, a_sizes[c])
            else:
                raise ValueError(f"einsum: size of label '{c}' differs between operands: "
                                 f"{a_sizes[c]} and {b_sizes[c]}")
    dn = ((tuple(an.index(c) for c in contract), tuple(bn.index(c) for c in contract)),
          (tuple(an.index(c) for c in batch), tuple(bn.index(c) for c in batch)))
    r = dot_general_p.bind(a, b, dimension_numbers=dn, precision=None,
                           preferred_element_type=None if preferred is None
                           else dtypes.requested(preferred))
    rn = "".join(batch) + "".join(c for c in an if c not in bn) + \
        "".join(c for c in bn if c not in an)
    return transpose(r, tuple(rn.index(c) for c in out)) if rn != out else r


def _bcast_named(x: Any, names: str, c: str, size: int) -> Any:
    shape = list(aval_of(x).shape)
    shape[names.index(c)] = size
    return lax.broadcast_in_dim(x, tuple(shape), tuple(range(len(shape))))
