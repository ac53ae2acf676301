"""``pullback.lax.linalg``: the decompositions as ``jax.lax.linalg`` has them.

Every function takes leading batch dimensions and float32, float64, complex64 or complex128
matrices (see ``primitives/linalg.py`` for the kernels and derivative rules).
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..primitives import linalg as _pl
from ..primitives import movement as _mv
from ..tracer import core, dtypes
from ..tracer.array import Array
from ._operands import ArrayLike
from ._elementwise import add, conj, div
from ._sort import argsort

__all__ = ["cholesky", "triangular_solve", "lu", "lu_pivots_to_permutation"]


def _arr(x: Any) -> Any:
    return x if isinstance(x, Array) or not isinstance(x, (np.ndarray, list, tuple, int, float,
                                                            complex, np.generic)) \
        else Array(np.asarray(x))


def _mT(x: Any) -> Any:
    nd = core.get_aval(x).ndim
    return _mv.transpose_p.bind(x, permutation=tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _H(x: Any) -> Any:
    x = _mT(x)
    return conj(x) if np.issubdtype(core.get_aval(x).dtype, np.complexfloating) else x


def symmetrize(x: ArrayLike) -> Any:
    """``(x + xᴴ) / 2``."""
    x = _arr(x)
    return div(add(x, _H(x)), Array(np.array(2, core.get_aval(x).dtype), weak_type=True))


def cholesky(x: ArrayLike, *, symmetrize_input: bool = True) -> Array:
    """The lower Cholesky factor ``L`` of ``x = L Lᴴ`` (batched).

    A matrix that is not positive definite gives a matrix of NaNs (as JAX), not an error:
    check with ``jnp.isnan``.

    Args:
      x: (..., n, n) Hermitian positive-definite matrices.
      symmetrize_input: use ``(x + xᴴ) / 2`` (else only ``x``'s lower triangle is read).

    Returns:
      The (..., n, n) lower-triangular factors.
    """
    x = _arr(x)
    _pl.check_matrix("cholesky", core.get_aval(x), "x")
    if symmetrize_input:
        x = symmetrize(x)
    return _pl.cholesky_p.bind(x)


def triangular_solve(a: ArrayLike, b: ArrayLike, *, left_side: bool = False,
                     lower: bool = False, transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False) -> Array:
    """Solves ``op(a) @ x = b`` (``left_side``) or ``x @ op(a) = b`` for triangular ``a``.

    Args:
      a: (..., k, k) triangular matrices (only the triangle ``lower`` names is read).
      b: (..., m, n) right-hand sides, with ``a``'s batch dimensions; a vector (..., k) when
        ``b`` has one dimension less than ``a``.
      left_side: solve ``op(a) x = b`` (``k == m``), else ``x op(a) = b`` (``k == n``).
      lower: whether ``a`` is lower (else upper) triangular.
      transpose_a: ``op`` transposes ``a``.
      conjugate_a: ``op`` conjugates ``a`` (complex only).
      unit_diagonal: assume ``a``'s diagonal is all ones (it is not read).

    Returns:
      ``x``, shaped as ``b``.
    """
    a, b = _arr(a), _arr(b)
    aa, ba = core.get_aval(a), core.get_aval(b)
    conjugate_a = bool(conjugate_a) and np.issubdtype(aa.dtype, np.complexfloating)
    singleton = ba.ndim == aa.ndim - 1
    if singleton:
        b = _mv.broadcast_in_dim_p.bind(
            b, shape=ba.shape + (1,) if left_side else ba.shape[:-1] + (1, ba.shape[-1]),
            broadcast_dimensions=tuple(range(ba.ndim)) if left_side
            else tuple(range(ba.ndim - 1)) + (ba.ndim,))
    out = _pl.triangular_solve(a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
                               conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    if singleton:
        out = _mv.squeeze_p.bind(out, dimensions=(ba.ndim if left_side else ba.ndim - 1,))
    return out


def lu(x: ArrayLike) -> tuple[Array, Array, Array]:
    """LU decomposition with partial pivoting: ``x[..., permutation, :] = L @ U``.

    Args:
      x: (..., m, n) matrices.

    Returns:
      ``(lu, pivots, permutation)``: ``L`` (unit diagonal, below) and ``U`` packed in one
      (..., m, n) array; the int32 (..., min(m, n)) pivots (row ``i`` was swapped with row
      ``pivots[i]``); the int32 (..., m) permutation they make.
    """
    return tuple(_pl.lu_p.bind(_arr(x)))


def lu_pivots_to_permutation(pivots: ArrayLike, permutation_size: int) -> Array:
    """The permutation of ``range(permutation_size)`` that the row swaps ``pivots`` make.

    Args:
      pivots: int32 (..., k) pivots, as ``lu`` returns them.
      permutation_size: the permutation's length, at least ``k``.
    """
    try:
        size = operator.index(permutation_size)
    except TypeError:
        raise TypeError("lu_pivots_to_permutation: argument 'permutation_size' must be an int, "
                        f"got {permutation_size!r}") from None
    return _pl.lu_pivots_to_permutation_p.bind(_arr(pivots), permutation_size=size)


def _take_rows(x: Any, perm: Any) -> Any:
    """``x[..., perm, :]`` for batched int32 ``perm`` (..., m)."""
    return _pl._take_rows(x, perm)


def _lu_solve(lu: Any, permutation: Any, b: Any, trans: int = 0) -> Any:
    """Solves ``a x = b`` (trans 0), ``aᵀ x = b`` (1) or ``aᴴ x = b`` (2) from ``lu(a)``; ``b``
    is (..., m, n) with ``lu``'s batch dimensions."""
    if trans == 0:
        x = _take_rows(b, permutation)
        x = triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
        return triangular_solve(lu, x, left_side=True, lower=False)
    conj_a = trans == 2
    x = triangular_solve(lu, b, left_side=True, lower=False, transpose_a=True,
                         conjugate_a=conj_a)
    x = triangular_solve(lu, x, left_side=True, lower=True, transpose_a=True,
                         conjugate_a=conj_a, unit_diagonal=True)
    # undo the row permutation: x[permutation] = y
    inverse = _inverse_permutation(permutation)
    return _take_rows(x, inverse)


def _inverse_permutation(perm: Any) -> Any:
    return argsort(perm, index_dtype=dtypes.int32)
