"""``pullback.scipy.linalg``: SciPy's linear algebra as ``jax.scipy.linalg`` has it.

Built on ``pullback.lax.linalg`` and ``pullback.numpy.linalg`` as JAX builds it. The
``overwrite_*`` and ``check_finite`` arguments are accepted and ignored (as JAX).
"""
from __future__ import annotations

from typing import Any

from ..lax import linalg as lax_linalg
from ..numpy import linalg as np_linalg
from ..numpy._creation import asarray
from ..numpy._promotion import promote_dtypes_inexact
from ..numpy._shape import expand_dims, matrix_transpose, squeeze
from ..numpy._ufuncs import conj
from ..tracer import core

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
