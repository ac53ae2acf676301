"""``pullback.lax.linalg``: the decompositions as ``jax.lax.linalg`` has them.

Every function takes leading batch dimensions and float32, float64, complex64 or complex128
matrices (see ``primitives/linalg.py`` for the kernels and derivative rules).
"""
from __future__ import annotations

import enum
import operator
from typing import Any

import numpy as np

from ..primitives import linalg as _pl
from ..primitives import linalg_spectral as _ps
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


# ---- issue 28, orthogonal and spectral decompositions (primitives/linalg_spectral.py) ----

cholesky_p, lu_p, triangular_solve_p = _pl.cholesky_p, _pl.lu_p, _pl.triangular_solve_p
lu_pivots_to_permutation_p = _pl.lu_pivots_to_permutation_p
qr_p, eigh_p, svd_p = _ps.qr_p, _ps.eigh_p, _ps.svd_p
householder_product_p, geqrf_p = _ps.householder_product_p, _ps.geqrf_p

__all__ += ["qr", "householder_product", "geqrf", "eigh", "svd", "SvdAlgorithm",
            "EighImplementation", "cholesky_p", "lu_p", "triangular_solve_p",
            "lu_pivots_to_permutation_p", "qr_p", "eigh_p", "svd_p", "householder_product_p",
            "geqrf_p"]


class EighImplementation(enum.Enum):
    """Implementation for symmetric/Hermitian eigendecomposition (the CPU runs ``QR``:
    LAPACK's divide and conquer, as JAX's CPU does)."""
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """Enum for SVD algorithm: ``DEFAULT`` and ``DIVIDE_AND_CONQUER`` run gesdd, ``QR``
    gesvd; ``JACOBI`` and ``POLAR`` are not implemented on the CPU (as JAX's)."""
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


def qr(x: ArrayLike, *, pivoting: bool = False, full_matrices: bool = True,
       use_magma: bool | None = None) -> tuple[Array, ...]:
    """QR decomposition ``x = q @ r`` (batched); with ``pivoting``, ``x[..., p] = q @ r``.

    Args:
      x: (..., m, n) matrices.
      pivoting: column pivoting (LAPACK's geqp3); also returns the int32 permutation ``p``.
      full_matrices: ``q`` is (..., m, m) and ``r`` (..., m, n); else (..., m, k) and
        (..., k, n) with ``k = min(m, n)``.
      use_magma: ignored (a GPU option).

    Returns:
      ``(q, r)``, or ``(q, r, p)`` with ``pivoting``. The derivative is JAX's (undefined
      where ``r`` is singular).
    """
    del use_magma
    return tuple(qr_p.bind(_arr(x), pivoting=bool(pivoting), full_matrices=bool(full_matrices)))


def geqrf(a: ArrayLike) -> tuple[Array, Array]:
    """LAPACK's geqrf: ``(a, taus)`` with ``r`` in ``a``'s upper triangle and ``q`` as the
    Householder reflectors below it and their factors ``taus`` (not differentiable)."""
    return tuple(geqrf_p.bind(_arr(a)))


def householder_product(a: ArrayLike, taus: ArrayLike) -> Array:
    """Product of elementary Householder reflectors (LAPACK's orgqr/ungqr).

    Args:
      a: (..., m, n) matrices, m >= n, whose strictly lower triangles hold the reflectors.
      taus: (..., k) scalar factors, k <= n.

    Returns:
      The first n columns of ``H_1 ... H_k`` (..., m, n). Not differentiable (as JAX).
    """
    return householder_product_p.bind(_arr(a), _arr(taus))


def _subset(fn: str, subset_by_index: Any, size: int) -> tuple[int, int] | None:
    if subset_by_index is None:
        return None
    try:
        lo, hi = (operator.index(i) for i in subset_by_index)
    except (TypeError, ValueError):
        raise TypeError(f"{fn}: argument 'subset_by_index' must be a pair of ints (lo, hi), "
                        f"got {subset_by_index!r}") from None
    if not 0 <= lo <= hi <= size:
        raise ValueError(f"{fn}: argument 'subset_by_index' must satisfy 0 <= lo <= hi <= "
                         f"{size}, got {(lo, hi)}")
    return None if (lo, hi) == (0, size) else (lo, hi)


def eigh(x: ArrayLike, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index: tuple[int, int] | None = None,
         implementation: EighImplementation | None = None) -> tuple[Array, Array]:
    """Eigendecomposition of Hermitian (real symmetric) matrices (LAPACK's syevd/heevd).

    Args:
      x: (..., n, n) matrices.
      lower: read ``x``'s lower (else upper) triangle (when not symmetrized).
      symmetrize_input: use ``(x + xᴴ) / 2``.
      sort_eigenvalues: accepted; the CPU always sorts ascending (as JAX's).
      subset_by_index: ``(lo, hi)``: only eigenpairs ``lo <= i < hi`` (ascending order).
      implementation: ``None`` or ``EighImplementation.QR``.

    Returns:
      ``(v, w)``: eigenvectors as the columns of ``v`` (..., n, k) and real eigenvalues ``w``
      (..., k), so ``x @ v = v * w[..., None, :]``. The derivative is JAX's: it divides by
      eigenvalue gaps, so it is not finite at repeated eigenvalues.
    """
    del sort_eigenvalues
    if implementation not in (None, EighImplementation.QR):
        raise NotImplementedError(f"eigh: implementation {implementation} is not supported on "
                                  "the CPU (use None or EighImplementation.QR)")
    x = _arr(x)
    aval = core.get_aval(x)
    _pl.check_matrix("eigh", aval, "x")
    sub = _subset("eigh", subset_by_index, aval.shape[-1])
    if symmetrize_input:
        x = symmetrize(x)
    v, w = eigh_p.bind(x, lower=bool(lower))
    if sub is not None:
        v, w = _ps._cut(v, -1, *sub), _ps._cut(w, -1, *sub)
    return v, w


def svd(x: ArrayLike, *, full_matrices: bool = True, compute_uv: bool = True,
        subset_by_index: tuple[int, int] | None = None,
        algorithm: SvdAlgorithm | None = None) -> Any:
    """Singular value decomposition ``x = u @ diag(s) @ vh`` (LAPACK's gesdd; gesvd for
    ``SvdAlgorithm.QR``).

    Args:
      x: (..., m, n) matrices.
      full_matrices: ``u`` (..., m, m) and ``vh`` (..., n, n); else (..., m, k), (..., k, n).
      compute_uv: also return the singular vectors.
      subset_by_index: ``(lo, hi)``: only singular triplets ``lo <= i < hi`` (descending).
      algorithm: a ``SvdAlgorithm`` (``None`` is the default).

    Returns:
      ``(u, s, vh)``, or ``s`` without ``compute_uv``; ``s`` real, descending. The derivative
      is JAX's: it divides by singular value gaps (not finite at repeated singular values) and
      raises ``NotImplementedError`` with vectors and ``full_matrices`` on a non-square ``x``.
    """
    if algorithm in (None, SvdAlgorithm.DEFAULT, SvdAlgorithm.DIVIDE_AND_CONQUER):
        alg = 0
    elif algorithm == SvdAlgorithm.QR:
        alg = 1
    elif isinstance(algorithm, SvdAlgorithm):
        raise NotImplementedError("svd: the Jacobi and Polar algorithms are not implemented on "
                                  "the CPU (as JAX's)")
    else:
        raise TypeError(f"svd: argument 'algorithm' must be a SvdAlgorithm or None, got "
                        f"{algorithm!r}")
    x = _arr(x)
    aval = core.get_aval(x)
    _pl.check_matrix("svd", aval, "x", square=False)
    rank = min(aval.shape[-2:])
    if subset_by_index is not None and full_matrices and tuple(subset_by_index) != (0, rank):
        raise ValueError("svd: full_matrices and subset_by_index cannot both be set")
    sub = _subset("svd", subset_by_index, rank)
    outs = svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv),
                      algorithm=alg)
    s = outs[0] if sub is None else _ps._cut(outs[0], -1, *sub)
    if not compute_uv:
        return s
    u, vh = outs[1], outs[2]
    if sub is not None:
        u, vh = _ps._cut(u, -1, *sub), _ps._cut(vh, -2, *sub)
    return u, s, vh
