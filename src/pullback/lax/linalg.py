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
import enum
from ..primitives import linalg_spectral as _ps

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


# ---- issue 28: the non-symmetric and tridiagonal decompositions (primitives/linalg_eig.py) ----

from ..primitives import linalg_eig as _pe  # noqa: E402
import warnings  # noqa: E402

eig_p = _pe.eig_p
schur_p = _pe.schur_p
hessenberg_p = _pe.hessenberg_p
tridiagonal_p = _pe.tridiagonal_p
tridiagonal_solve_p = _pe.tridiagonal_solve_p
__all__ += ["EigImplementation", "eig", "eig_p", "schur", "schur_p", "hessenberg",
            "hessenberg_p", "tridiagonal", "tridiagonal_p", "tridiagonal_solve",
            "tridiagonal_solve_p"]


class EigImplementation(enum.Enum):
    """Enum for eigendecomposition algorithm (only ``LAPACK`` runs on the CPU)."""
    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


def eig(x: ArrayLike, *, compute_left_eigenvectors: bool = True,
        compute_right_eigenvectors: bool = True, enable_eigvec_derivs: bool = False,
        implementation: EigImplementation | None = None,
        use_magma: bool | None = None) -> list[Array]:
    """Eigendecomposition of a general matrix (LAPACK's geev).

    Args:
      x: A batch of square matrices with shape ``[..., n, n]``.
      compute_left_eigenvectors: If true, the left eigenvectors will be computed.
      compute_right_eigenvectors: If true, the right eigenvectors will be computed.
      enable_eigvec_derivs: If true, enable autodiff of the returned eigenvectors, taken under
        geev's normalisation (unit 2-norm, largest-magnitude component real). Only valid when
        all eigenvalues are distinct and no eigenvector has two components tied for largest
        magnitude (jax-ml/jax#2748). Eigenvalue derivatives need no opt-in.
      implementation: ``None`` or ``EigImplementation.LAPACK`` on the CPU.
      use_magma: Deprecated (as JAX): ``True`` asks for MAGMA, which the CPU lacks.

    Returns:
      ``[w, vl, vr]`` (complex): eigenvalues ``(..., n)``, then the left eigenvectors (columns,
      ``vl[..., :, j]ᴴ x = w[j] vl[..., :, j]ᴴ``) and the right ones (``x vr = vr diag(w)``)
      when asked for. A matrix whose iteration fails gives NaNs.
    """
    if use_magma is not None:
        warnings.warn("use_magma is deprecated, please use "
                      "implementation=EigImplementation.MAGMA instead.", DeprecationWarning,
                      stacklevel=2)
        implementation = EigImplementation.MAGMA if use_magma else EigImplementation.LAPACK
    return list(eig_p.bind(_arr(x), compute_left_eigenvectors=bool(compute_left_eigenvectors),
                           compute_right_eigenvectors=bool(compute_right_eigenvectors),
                           enable_eigvec_derivs=bool(enable_eigvec_derivs),
                           implementation=implementation))


def schur(x: ArrayLike, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable: Any = None) -> list[Array]:
    """Schur decomposition ``x = Q T Qᴴ`` (LAPACK's gees): ``T`` upper triangular (complex
    input) or quasi upper triangular with 2x2 blocks for complex eigenvalue pairs (real).

    Args:
      x: A batch of square matrices with shape ``[..., m, m]``.
      compute_schur_vectors: If ``True``, compute the Schur vectors ``Q``, otherwise only
        ``T`` is returned.
      sort_eig_vals: Not supported on the CPU (as JAX's: ``NotImplementedError``).
      select_callable: Unused (as JAX).

    Returns:
      ``[T, Q]``, or ``[T]`` when ``compute_schur_vectors`` is false (a list, as JAX's).
    """
    return list(schur_p.bind(_arr(x), compute_schur_vectors=bool(compute_schur_vectors),
                             sort_eig_vals=bool(sort_eig_vals), select_callable=select_callable))


def hessenberg(a: ArrayLike) -> list[Array]:
    """Reduces a square matrix to upper Hessenberg form (LAPACK's gehrd).

    Args:
      a: A floating point or complex square matrix or batch of matrices.

    Returns:
      ``[a, taus]`` (a list, as JAX's): the upper triangle and first subdiagonal of ``a`` hold the Hessenberg
      matrix, the elements below the first subdiagonal the Householder reflectors, whose
      scalar factors are ``taus`` (..., n - 1).
    """
    return list(hessenberg_p.bind(_arr(a)))


def tridiagonal(a: ArrayLike, *, lower: bool = True) -> list[Array]:
    """Reduces a symmetric/Hermitian matrix to tridiagonal form (LAPACK's sytrd/hetrd).

    Args:
      a: A floating point or complex matrix or batch of matrices.
      lower: Which triangle of the input matrices to use (the other is not read).

    Returns:
      ``[a, d, e, taus]`` (a list, as JAX's): the diagonal and first sub- (``lower``) or superdiagonal of ``a``
      hold the tridiagonal matrix, the elements beyond it the Householder reflectors; ``d``
      is the (real) diagonal, ``e`` the (real) off-diagonal, ``taus`` the reflectors' scalar
      factors.
    """
    return list(tridiagonal_p.bind(_arr(a), lower=bool(lower)))


def tridiagonal_solve(dl: ArrayLike, d: ArrayLike, du: ArrayLike, b: ArrayLike, *,
                      perturb_singular: bool = False) -> Array:
    r"""Solves the tridiagonal system ``A X = B`` (LAPACK's gtsv, partial pivoting).

    Args:
      dl: ``[..., m]``, the lower diagonal: ``dl[i] = A[i, i-1]`` (``dl[0]`` is not read).
      d: ``[..., m]``, the diagonal: ``d[i] = A[i, i]``.
      du: ``[..., m]``, the upper diagonal: ``du[i] = A[i, i+1]`` (``du[m-1]`` is not read).
      b: ``[..., m, k]`` right-hand sides.
      perturb_singular: perturb tiny pivots of the LU factorization by about
        ``eps * max|U|`` so that a (numerically) singular system gives a finite result
        (inverse iteration); otherwise a singular system gives NaNs.

    Returns:
      ``X``, shaped as ``b``.
    """
    return tridiagonal_solve_p.bind(_arr(dl), _arr(d), _arr(du), _arr(b),
                                    perturb_singular=bool(perturb_singular))


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
