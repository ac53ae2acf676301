"""``pullback.scipy.linalg``: SciPy's linear algebra as ``jax.scipy.linalg`` has it.

Built on ``pullback.lax.linalg`` and ``pullback.numpy.linalg`` as JAX builds it. The
``overwrite_*`` and ``check_finite`` arguments are accepted and ignored (as JAX).
"""
from __future__ import annotations

import sys
from typing import Any

from ..lax import linalg as lax_linalg
from ..numpy import linalg as np_linalg
from ..numpy._creation import asarray
from ..numpy._promotion import promote_dtypes_inexact
from ..numpy._shape import expand_dims, matrix_transpose, squeeze
from ..numpy._ufuncs import conj
from ..tracer import core
from ..tracer.public import hide_helpers

__all__ = ["cho_factor", "cho_solve", "cholesky", "det", "inv", "lu_factor", "lu_solve",
           "solve", "solve_triangular"]


def _inexact(fn: str, *xs: Any) -> list[Any]:
    return list(promote_dtypes_inexact(fn, *[asarray(x) for x in xs]))


def _check_solve_shapes(fn: str, a: Any, b: Any) -> None:
    aa, ba = core.get_aval(a), core.get_aval(b)
    if aa.ndim < 2 or aa.shape[-1] != aa.shape[-2]:
        raise ValueError(f"{fn}: argument 'a' must be a (batch of) square matrix (..., n, n), "
                         f"got shape {aa.shape}")
    if ba.ndim < 1 or (ba.shape[-1] if ba.ndim == aa.ndim - 1 else
                       ba.shape[-2] if ba.ndim >= 2 else -1) != aa.shape[-1]:
        raise ValueError(f"{fn}: argument 'b' of shape {ba.shape} does not fit argument 'a' of "
                         f"shape {aa.shape}: b must be (..., {aa.shape[-1]}) or "
                         f"(..., {aa.shape[-1]}, k) with a's batch dimensions")


def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Any:
    """The Cholesky factor of Hermitian positive-definite ``a``: upper ``U`` (``a = Uᴴ U``) or,
    with ``lower``, lower ``L`` (``a = L Lᴴ``). Not positive definite: NaNs (as JAX)."""
    del overwrite_a, check_finite
    (a,) = _inexact("cholesky", a)
    L = lax_linalg.cholesky(a if lower else conj(matrix_transpose(a)), symmetrize_input=False)
    return L if lower else conj(matrix_transpose(L))


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Any, bool]:
    """``(c, lower)`` for ``cho_solve``: ``c`` is ``cholesky(a, lower)``."""
    del overwrite_a, check_finite
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False,
              check_finite: bool = True) -> Any:
    """Solves ``a x = b`` from ``cho_factor(a)``'s ``(c, lower)``."""
    del overwrite_b, check_finite
    c, lower = c_and_lower
    c, b = _inexact("cho_solve", c, b)
    _check_solve_shapes("cho_solve", c, b)
    b = lax_linalg.triangular_solve(c, b, left_side=True, lower=lower,
                                    transpose_a=not lower, conjugate_a=not lower)
    return lax_linalg.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=lower,
                                       conjugate_a=lower)


def solve_triangular(a: Any, b: Any, trans: int | str = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False, debug: Any = None,
                     check_finite: bool = True) -> Any:
    """Solves ``op(a) x = b`` for triangular ``a``: ``op`` is the identity (``trans`` 0 or
    'N'), the transpose (1, 'T') or the conjugate transpose (2, 'C')."""
    del overwrite_b, debug, check_finite
    if trans in (0, "N"):
        transpose_a, conjugate_a = False, False
    elif trans in (1, "T"):
        transpose_a, conjugate_a = True, False
    elif trans in (2, "C"):
        transpose_a, conjugate_a = True, True
    else:
        raise ValueError(f"solve_triangular: argument 'trans' must be 0, 1, 2, 'N', 'T' or 'C', "
                         f"got {trans!r}")
    a, b = _inexact("solve_triangular", a, b)
    _check_solve_shapes("solve_triangular", a, b)
    vector = core.get_aval(a).ndim == core.get_aval(b).ndim + 1
    if vector:
        b = expand_dims(b, -1)
    out = lax_linalg.triangular_solve(a, b, left_side=True, lower=lower,
                                      transpose_a=transpose_a, conjugate_a=conjugate_a,
                                      unit_diagonal=unit_diagonal)
    return squeeze(out, -1) if vector else out


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple[Any, Any]:
    """``(lu, piv)`` of partial-pivoting LU, for ``lu_solve`` (int32 0-based pivots)."""
    del overwrite_a, check_finite
    (a,) = _inexact("lu_factor", a)
    lu, pivots, _ = lax_linalg.lu(a)
    return lu, pivots


def lu_solve(lu_and_piv: tuple[Any, Any], b: Any, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Any:
    """Solves ``a x = b`` (``trans`` 0), ``aᵀ x = b`` (1) or ``aᴴ x = b`` (2) from
    ``lu_factor(a)``."""
    del overwrite_b, check_finite
    lu, pivots = lu_and_piv
    if trans not in (0, 1, 2):
        raise ValueError(f"lu_solve: argument 'trans' must be 0, 1 or 2, got {trans!r}")
    lu, b = _inexact("lu_solve", lu, b)
    _check_solve_shapes("lu_solve", lu, b)
    m = core.get_aval(lu).shape[-1]
    perm = lax_linalg.lu_pivots_to_permutation(pivots, m)
    vector = core.get_aval(lu).ndim == core.get_aval(b).ndim + 1
    if vector:
        b = expand_dims(b, -1)
    x = lax_linalg._lu_solve(lu, perm, b, trans)
    return squeeze(x, -1) if vector else x


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The determinant of each (..., n, n) matrix."""
    del overwrite_a, check_finite
    return np_linalg.det(a)


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The inverse of each (..., n, n) matrix."""
    del overwrite_a, check_finite
    return np_linalg.inv(a)


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False,
          overwrite_b: bool = False, debug: bool = False, check_finite: bool = True,
          assume_a: str = "gen") -> Any:
    """Solves ``a x = b``; ``assume_a='pos'`` (Hermitian positive definite) uses Cholesky,
    anything else LU (``'gen'``, ``'sym'``, ``'her'``)."""
    del overwrite_a, overwrite_b, debug, check_finite
    valid = ("gen", "sym", "her", "pos")
    if assume_a not in valid:
        raise ValueError(f"solve: argument 'assume_a' must be one of {valid}, got {assume_a!r}")
    a, b = _inexact("solve", a, b)
    _check_solve_shapes("solve", a, b)
    if assume_a != "pos":
        return np_linalg.solve(a, b)
    c, lower = cho_factor(a, lower=lower)
    vector = core.get_aval(a).ndim == core.get_aval(b).ndim + 1
    if vector:
        b = expand_dims(b, -1)
    x = cho_solve((c, lower), b)
    return squeeze(x, -1) if vector else x


# ---- issue 28: non-symmetric decompositions, matrix functions, special matrices (h28-eig) ----

from ._linalg_eig import (eigh_tridiagonal, expm, expm_frechet, funm, hessenberg,  # noqa: E402
                          lu, rsf2csf, schur, solve_sylvester, sqrtm)

__all__ += ["eigh_tridiagonal", "expm", "expm_frechet", "funm", "hessenberg", "lu", "rsf2csf",
            "schur", "solve_sylvester", "sqrtm"]
from ._special_matrices import (block_diag, circulant, companion,  # noqa: E402
                                convolution_matrix, dft, fiedler, fiedler_companion, hadamard,
                                hankel, helmert, hilbert, invhilbert, invpascal, leslie, pascal,
                                toeplitz)

__all__ += ["block_diag", "circulant", "companion", "convolution_matrix", "dft", "fiedler",
            "fiedler_companion", "hadamard", "hankel", "helmert", "hilbert", "invhilbert",
            "invpascal", "leslie", "pascal", "toeplitz"]


# ---- issue 28, orthogonal and spectral decompositions (lax.linalg qr, eigh, svd) ----

__all__ += ["eigh", "polar", "qr", "svd"]


def qr(a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True) -> tuple[Any, ...]:
    """QR decomposition as SciPy's: ``mode`` ``"full"`` (Q (..., m, m)), ``"economic"`` (Q
    (..., m, k)) or ``"r"`` (``(R,)`` only); with ``pivoting`` also the column permutation
    ``P`` (``a[:, P] = Q R``)."""
    del overwrite_a, lwork, check_finite
    if mode in ("full", "r"):
        full_matrices = True
    elif mode == "economic":
        full_matrices = False
    else:
        raise ValueError(f"qr: argument 'mode' must be 'full', 'economic' or 'r', got {mode!r}")
    (a,) = _inexact("qr", a)
    q, r, *p = lax_linalg.qr(a, pivoting=pivoting, full_matrices=full_matrices)
    if mode == "r":
        return (r, p[0]) if pivoting else (r,)
    return (q, r, p[0]) if pivoting else (q, r)


def eigh(a: Any, b: Any = None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True,
         eigvals: Any = None, type: int = 1, check_finite: bool = True, *,
         subset_by_index: Any = None) -> Any:
    """Eigenvalues (ascending) and eigenvectors of a Hermitian matrix, as SciPy's.

    Args:
      a: (..., n, n) matrices; only the ``lower`` (else upper) triangle is read.
      b: must be None (the generalized problem is not implemented, as JAX).
      eigvals_only: return the eigenvalues only.
      subset_by_index: SciPy's inclusive ``(lo, hi)``: eigenvalues ``lo..hi`` (ascending
        order); ``eigvals`` is its old name.
      type: must be 1.

    Returns:
      ``w``, or ``(w, v)``.
    """
    del overwrite_a, overwrite_b, turbo, check_finite
    if b is not None:
        raise NotImplementedError("eigh: only the b=None case is implemented (as JAX)")
    if type != 1:
        raise NotImplementedError("eigh: only the type=1 case is implemented (as JAX)")
    if eigvals is not None:
        if subset_by_index is not None:
            raise ValueError("eigh: only one of eigvals and subset_by_index may be given")
        subset_by_index = eigvals
    sub = None
    if subset_by_index is not None:
        lo, hi = subset_by_index
        sub = (int(lo), int(hi) + 1)  # SciPy's bounds are inclusive, lax's half-open
    (a,) = _inexact("eigh", a)
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=False, subset_by_index=sub)
    return w if eigvals_only else (w, v)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd") -> Any:
    """Singular value decomposition, as SciPy's: ``(U, s, Vh)`` or ``s``; ``lapack_driver``
    ``"gesdd"`` (default) or ``"gesvd"``."""
    del overwrite_a, check_finite
    if lapack_driver not in ("gesdd", "gesvd"):
        raise ValueError(f"svd: argument 'lapack_driver' must be 'gesdd' or 'gesvd', got "
                         f"{lapack_driver!r}")
    (a,) = _inexact("svd", a)
    alg = lax_linalg.SvdAlgorithm.QR if lapack_driver == "gesvd" else None
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv,
                          algorithm=alg)


def polar(a: Any, side: str = "right", *, method: str = "qdwh", eps: float | None = None,
          max_iterations: int | None = None) -> tuple[Any, Any]:
    """Polar decomposition ``a = u p`` (``side="right"``, ``p`` (..., n, n)) or ``a = p u``
    (``"left"``, ``p`` (..., m, m)) with ``p`` Hermitian positive semi-definite.

    Both methods compute the factors from the SVD here (``u = U Vh``); ``method="qdwh"``
    keeps JAX's shape restrictions (m >= n for ``"right"``, m < n for ``"left"``), and ``eps``
    and ``max_iterations`` (QDWH's) are ignored.
    """
    del eps, max_iterations
    (a,) = _inexact("polar", a)
    shape = core.get_aval(a).shape
    if len(shape) < 2:
        raise ValueError(f"polar: argument 'a' must have at least 2 dimensions, got shape {shape}")
    if side not in ("right", "left"):
        raise ValueError(f"polar: argument 'side' must be 'right' or 'left', got {side!r}")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"polar: unknown method {method!r} (expected 'qdwh' or 'svd')")
    m, n = shape[-2:]
    if method == "qdwh" and not ((m >= n and side == "right") or (m < n and side == "left")):
        raise NotImplementedError("polar: method='qdwh' only supports m >= n with side='right' "
                                  f"and m < n with side='left', got {shape} with side={side!r}")
    u, s, vh = lax_linalg.svd(a, full_matrices=False)
    s = s.astype(u.dtype)
    unitary = u @ vh
    if side == "right":
        posdef = (conj(matrix_transpose(vh)) * s[..., None, :]) @ vh
    else:
        posdef = (u * s[..., None, :]) @ conj(matrix_transpose(u))
    return unitary, posdef


# ---- qr_multiply ----

from ..numpy._shape import (broadcast_shapes as _broadcast_shapes,  # noqa: E402
                            broadcast_to as _broadcast_to, ravel as _ravel)

__all__ += ["qr_multiply"]


def qr_multiply(a: Any, c: Any, mode: str = "right", pivoting: bool = False,
                conjugate: bool = False, overwrite_a: bool = False,
                overwrite_c: bool = False) -> tuple[Any, ...]:
    """The QR decomposition of ``a`` and its ``Q`` multiplied with ``c``, as SciPy's.

    Args:
      a: (..., m, n) matrices to decompose; ``k = min(m, n)``.
      c: for ``mode="left"`` (..., k, p) (a 1-d ``c``: one column of k), for ``mode="right"``
        (..., p, m) (a 1-d ``c``: one row of m); batch dimensions broadcast with ``a``'s.
      mode: ``"left"``: ``Q @ c`` (..., m, p); ``"right"``: ``c @ Q`` (..., p, k), with the
        economic ``Q`` (..., m, k).
      pivoting: column-pivoted QR (geqp3); the permutation is returned third.
      conjugate: use ``conj(Q)`` in the product.
      overwrite_a, overwrite_c: ignored (as JAX).

    Returns:
      ``(product, R)`` with ``R`` (..., k, n), or ``(product, R, P)`` with ``pivoting``
      (``a[..., P] = Q R``). A 1-d ``c`` gives a 1-d product. Differentiable without pivoting
      (``qr``'s derivative; JAX's, built on geqrf/ormqr, has none).
    """
    del overwrite_a, overwrite_c
    a, c = _inexact("qr_multiply", a, c)
    if mode not in ("right", "left"):
        raise ValueError(f"qr_multiply: argument 'mode' must be 'right' or 'left', got {mode!r}")
    aa = core.get_aval(a)
    if aa.ndim < 2:
        raise ValueError("qr_multiply: argument 'a' must have at least 2 dimensions (..., m, n), "
                         f"got shape {aa.shape}")
    left = mode == "left"
    shape_c = core.get_aval(c).shape
    onedim = len(shape_c) == 1
    if onedim:
        c = expand_dims(c, -1 if left else 0)
    ca = core.get_aval(c)
    if ca.ndim < 2:
        raise ValueError("qr_multiply: argument 'c' must have 1 or more dimensions, got a scalar")
    m, n = aa.shape[-2:]
    k = min(m, n)
    if left and ca.shape[-2] != k:
        raise ValueError(f"qr_multiply: argument 'c' of shape {shape_c} does not fit Q @ c: a "
                         f"of shape {aa.shape} has a Q of {k} columns, c has {ca.shape[-2]} rows")
    if not left and ca.shape[-1] != m:
        raise ValueError(f"qr_multiply: argument 'c' of shape {shape_c} does not fit c @ Q: a "
                         f"of shape {aa.shape} has a Q of {m} rows, c has {ca.shape[-1]} columns")
    try:
        batch = _broadcast_shapes(aa.shape[:-2], ca.shape[:-2])
    except ValueError:
        raise ValueError(f"qr_multiply: the batch dimensions of 'a' {aa.shape} and 'c' "
                         f"{ca.shape} do not broadcast") from None
    a = _broadcast_to(a, batch + aa.shape[-2:])
    c = _broadcast_to(c, batch + ca.shape[-2:])
    q, r, *p = lax_linalg.qr(a, pivoting=pivoting, full_matrices=False)
    if conjugate:
        q = conj(q)
    out = np_linalg.matmul(q, c) if left else np_linalg.matmul(c, q)
    if onedim:
        out = _ravel(out)
    return (out, r, p[0]) if pivoting else (out, r)


# dir() and star imports list the API only, not the helpers imported here (this module
# loads on first access, so pullback/__init__ cannot do it)
hide_helpers(sys.modules[__name__], keep=(
    "block_diag cho_factor cho_solve cholesky circulant companion convolution_matrix det dft "
    "eigh eigh_tridiagonal expm expm_frechet fiedler fiedler_companion funm hadamard hankel "
    "helmert hessenberg hilbert inv invhilbert invpascal leslie lu lu_factor lu_solve pascal "
    "polar qr qr_multiply rsf2csf schur solve solve_sylvester solve_triangular sqrtm svd "
    "toeplitz").split())
