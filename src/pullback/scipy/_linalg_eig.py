"""``pullback.scipy.linalg``'s non-symmetric decompositions and matrix functions, as
``jax.scipy.linalg`` has them: schur, rsf2csf, hessenberg, lu, expm, expm_frechet, sqrtm,
funm, solve_sylvester, eigh_tridiagonal.

Built on ``lax.linalg`` (eig, schur, hessenberg, tridiagonal_solve on LAPACK) and
``pullback.numpy``. The triangular recurrences of sqrtm, funm and solve_sylvester run one
superdiagonal (or column) at a time as whole-matrix products and triangular solves, not one
element at a time: they take leading batch dimensions directly and differentiate through
their primitives.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .. import lax
from .. import numpy as jnp
from .. import random
from ..lax import linalg as lax_linalg
from ..numpy._promotion import promote_dtypes_inexact
from ..transforms.jvp import jvp as _jvp
from ..transforms.vmap import vmap as _vmap
from ..tracer import core

__all__ = ["schur", "rsf2csf", "hessenberg", "lu", "expm", "expm_frechet", "sqrtm", "funm",
           "solve_sylvester", "eigh_tridiagonal"]


def _inexact(fn: str, *xs: Any) -> list[Any]:
    return list(promote_dtypes_inexact(fn, *[jnp.asarray(x) for x in xs]))


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _check_square(fn: str, x: Any, arg: str) -> None:
    s = _shape(x)
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(f"{fn}: argument '{arg}' must be a (batch of) square matrix "
                         f"(..., n, n), got shape {s}")


def _complex_dtype(dt: Any) -> Any:
    return jnp.complex64 if np.dtype(dt) in (np.float32, np.complex64) else jnp.complex128


def _H(x: Any) -> Any:
    return jnp.conj(jnp.matrix_transpose(x))


def _batched_2d(fn: Callable, *xs: Any) -> Any:
    """fn (of 2-d operands) over the leading dimensions of xs (equal batch shapes)."""
    batch = _shape(xs[0])[:-2]
    if not batch:
        return fn(*xs)
    size = math.prod(batch)
    flat = [jnp.reshape(x, (size,) + _shape(x)[-2:]) for x in xs]
    out = _vmap(fn)(*flat)
    if isinstance(out, tuple):
        return tuple(jnp.reshape(o, batch + _shape(o)[1:]) for o in out)
    return jnp.reshape(out, batch + _shape(out)[1:])


# ---- schur, rsf2csf, hessenberg, lu ----

def schur(a: Any, output: str = "real") -> tuple[Any, Any]:
    """Schur decomposition ``a = Z T Zᴴ``.

    Args:
      a: (..., n, n) matrices.
      output: ``'real'`` (real input: quasi-triangular ``T`` with 2x2 blocks for complex
        eigenvalue pairs) or ``'complex'`` (upper triangular complex ``T``).

    Returns:
      ``(T, Z)``.
    """
    if output not in ("real", "complex"):
        raise ValueError(f"schur: expected 'output' to be either 'real' or 'complex', got "
                         f"output={output!r}.")
    (a,) = _inexact("schur", a)
    _check_square("schur", a, "a")
    if output == "complex":
        a = a.astype(_complex_dtype(a.dtype))
    return lax_linalg.schur(a)


def _rsf2csf_2d(T: Any, Z: Any) -> tuple[Any, Any]:
    # JAX's rsf2csf: a Givens rotation per 2x2 block of the real Schur form, from the bottom
    dt = jnp.result_type(T.dtype, Z.dtype, jnp.complex64)
    T, Z = T.astype(dt), Z.astype(dt)
    eps = float(jnp.finfo(dt).eps)
    N = _shape(T)[0]
    rows = jnp.arange(N)
    for m in range(N - 1, 0, -1):
        mu = jnp.linalg.eigvals(T[m - 1:m + 1, m - 1:m + 1]) - T[m, m]
        r = jnp.sqrt(jnp.abs(mu[0]) ** 2 + jnp.abs(T[m, m - 1]) ** 2).astype(dt)
        c = mu[0] / r
        s = T[m, m - 1] / r
        G = jnp.stack([jnp.stack([jnp.conj(c), s]), jnp.stack([-s, c])])
        T_rows = T[m - 1:m + 1, :]
        col_mask = rows >= m - 1
        T_rows_new = jnp.where(col_mask, G @ jnp.where(col_mask, T_rows, 0), T_rows)
        T_new = jnp.concatenate([T[:m - 1], T_rows_new, T[m + 1:]], axis=0)
        T_cols = T_new[:, m - 1:m + 1]
        row_mask = (rows < m + 1)[:, None]
        T_cols_new = jnp.where(row_mask, jnp.where(row_mask, T_cols, 0) @ _H(G), T_cols)
        T_new = jnp.concatenate([T_new[:, :m - 1], T_cols_new, T_new[:, m + 1:]], axis=1)
        Z_new = jnp.concatenate([Z[:, :m - 1], Z[:, m - 1:m + 1] @ _H(G), Z[:, m + 1:]], axis=1)
        pred = jnp.abs(T[m, m - 1]) > eps * (jnp.abs(T[m - 1, m - 1]) + jnp.abs(T[m, m]))
        T = jnp.where(pred, T_new, T)
        Z = jnp.where(pred, Z_new, Z)
        T = T.at[m, m - 1].set(0)
    return T, Z


def rsf2csf(T: Any, Z: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """Converts a real Schur form ``(T, Z)`` to the complex one (upper triangular ``T``)."""
    del check_finite
    T, Z = jnp.asarray(T), jnp.asarray(Z)
    st, sz = _shape(T), _shape(Z)
    if len(st) < 2 or st[-1] != st[-2]:
        raise ValueError(f"rsf2csf: input 'T' must be square, got shape {st}")
    if len(sz) < 2 or sz[-1] != sz[-2]:
        raise ValueError(f"rsf2csf: input 'Z' must be square, got shape {sz}")
    if st[-1] != sz[-1] or st[:-2] != sz[:-2]:
        raise ValueError(f"rsf2csf: input array shapes must match: Z: {sz} vs. T: {st}")
    if st[-1] == 0:
        dt = jnp.result_type(T.dtype, Z.dtype, jnp.complex64)
        return T.astype(dt), Z.astype(dt)
    return _batched_2d(_rsf2csf_2d, T, Z)


def hessenberg(a: Any, *, calc_q: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> Any:
    """The upper Hessenberg form ``h`` of square ``a`` (``a = q h qᴴ``).

    Args:
      a: (..., n, n) matrices.
      calc_q: also return the unitary ``q``.

    Returns:
      ``h``, or ``(h, q)`` when ``calc_q``.
    """
    del overwrite_a, check_finite
    (a,) = _inexact("hessenberg", a)
    _check_square("hessenberg", a, "a")
    n = _shape(a)[-1]
    if n == 0:
        return (jnp.zeros_like(a), jnp.zeros_like(a)) if calc_q else jnp.zeros_like(a)
    a_out, taus = lax_linalg.hessenberg(a)
    h = jnp.triu(a_out, -1)
    if not calc_q:
        return h
    # q = H(0) H(1) ... H(n-2), H(i) = I - tau_i v_i v_iᴴ with v_i = (0, .., 0, 1, a[i+2:, i])
    # (gehrd's reflectors; lax.linalg.householder_product does the same in one LAPACK call)
    batch = _shape(a)[:-2]
    q = jnp.broadcast_to(jnp.eye(n, dtype=a.dtype), batch + (n, n))
    idx = jnp.arange(n)
    for i in range(n - 1):
        v = jnp.where(idx > i + 1, a_out[..., :, i], 0)
        v = jnp.where(idx == i + 1, 1, v).astype(a.dtype)
        qv = jnp.einsum("...ij,...j->...i", q, v)
        q = q - taus[..., i, None, None] * qv[..., :, None] * jnp.conj(v)[..., None, :]
    return h, q


def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False,
       check_finite: bool = True) -> tuple[Any, ...]:
    """LU decomposition with partial pivoting: ``a = p @ l @ u``.

    Args:
      a: (..., m, n) matrices.
      permute_l: return ``(p @ l, u)`` instead of ``(p, l, u)``.

    Returns:
      ``(p, l, u)`` (``p`` a permutation matrix in ``a``'s dtype, ``l`` (m, k) unit lower,
      ``u`` (k, n) upper, ``k = min(m, n)``), or ``(p @ l, u)``.
    """
    del overwrite_a, check_finite
    (a,) = _inexact("lu", a)
    s = _shape(a)
    if len(s) < 2:
        raise ValueError(f"lu: argument 'a' must have at least 2 dimensions, got shape {s}")
    lu_, _, permutation = lax_linalg.lu(a)
    m, n = s[-2:]
    k = min(m, n)
    p = jnp.real(jnp.asarray(permutation[..., None, :] == jnp.arange(m, dtype=jnp.int32)[:, None],
                             dtype=a.dtype)).astype(a.dtype)
    l = jnp.tril(lu_, -1)[..., :, :k] + jnp.eye(m, k, dtype=a.dtype)
    u = jnp.triu(lu_)[..., :k, :]
    if permute_l:
        return jnp.matmul(p, l), u
    return p, l, u


# ---- expm, expm_frechet (JAX's Pade approximants with scaling and squaring) ----

def _pade(A: Any, b: tuple, ident: Any) -> tuple[Any, Any]:
    A2 = A @ A
    if len(b) == 4:
        return A @ (b[3] * A2 + b[1] * ident), b[2] * A2 + b[0] * ident
    A4 = A2 @ A2
    if len(b) == 6:
        return (A @ (b[5] * A4 + b[3] * A2 + b[1] * ident), b[4] * A4 + b[2] * A2 + b[0] * ident)
    A6 = A4 @ A2
    if len(b) == 8:
        return (A @ (b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * ident),
                b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * ident)
    if len(b) == 10:
        A8 = A6 @ A2
        return (A @ (b[9] * A8 + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * ident),
                b[8] * A8 + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * ident)
    U = A @ (A6 @ (b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2
             + b[1] * ident)
    V = A6 @ (b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 \
        + b[0] * ident
    return U, V


_PADE = {3: (120., 60., 12., 1.), 5: (30240., 15120., 3360., 420., 30., 1.),
         7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
         9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
             3960., 90., 1.),
         13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
              129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
              40840800., 960960., 16380., 182., 1.)}


def _expm_2d(A: Any, upper_triangular: bool, max_squarings: int) -> Any:
    n = _shape(A)[-1]
    A_L1 = jnp.max(jnp.sum(jnp.abs(A), axis=0))
    if A.dtype in (jnp.float64, jnp.complex128):
        maxnorm, orders = 5.371920351148152, (3, 5, 7, 9, 13)
        conds = (1.495585217958292e-002, 2.539398330063230e-001, 9.504178996162932e-001,
                 2.097847961257068e+000)
    else:
        maxnorm, orders = 3.925724783138660, (3, 5, 7)
        conds = (4.258730016922831e-001, 1.880152677804762e+000)
    n_squarings = jnp.maximum(0, jnp.floor(jnp.log2(A_L1 / maxnorm)))
    A = A / (2 ** n_squarings).astype(A.dtype)
    idx = jnp.sum(jnp.asarray(conds, dtype=A_L1.dtype) <= A_L1).astype(jnp.int32)
    ident = jnp.eye(n, dtype=A.dtype)
    U, V = lax.switch(idx, [lambda x, o=o: _pade(x, _PADE[o], ident) for o in orders], A)
    P, Q = U + V, -U + V
    R = _solve_upper(Q, P) if upper_triangular else jnp.linalg.solve(Q, P)

    def step(c, i):
        return lax.cond(i < n_squarings, lambda x: x @ x, lambda x: x, c), None
    R, _ = lax.scan(step, R, jnp.arange(max_squarings, dtype=n_squarings.dtype))
    return jnp.where(n_squarings > max_squarings, jnp.full_like(R, np.nan), R)


def _solve_upper(a: Any, b: Any) -> Any:
    return lax_linalg.triangular_solve(a, b, left_side=True, lower=False)


def expm(A: Any, *, upper_triangular: bool = False, max_squarings: int = 16) -> Any:
    """The matrix exponential (Pade approximation with scaling and squaring, as JAX's).

    Args:
      A: (..., n, n) matrices.
      upper_triangular: ``A`` is upper triangular (a triangular solve instead of LU).
      max_squarings: the most squarings; a matrix needing more gives NaNs.

    Returns:
      ``exp(A)``, differentiable.
    """
    (A,) = _inexact("expm", A)
    s = _shape(A)
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(f"expm: expected A to be a (batched) square matrix, got A.shape={s}.")
    if s[-1] == 0:
        return A
    return _batched_2d(lambda a: _expm_2d(a, upper_triangular, int(max_squarings)), A)


def expm_frechet(A: Any, E: Any, *, method: str | None = None,
                 compute_expm: bool = True) -> Any:
    """The Frechet derivative of ``expm`` at ``A`` in direction ``E`` (its jvp, as JAX).

    Returns:
      ``(expm(A), L(A, E))``, or ``L(A, E)`` alone when ``compute_expm`` is false.
    """
    del method
    A, E = jnp.asarray(A), jnp.asarray(E)
    sa, se = _shape(A), _shape(E)
    if len(sa) < 2 or sa[-2] != sa[-1]:
        raise ValueError(f"expm_frechet: expected A to be a (batched) square matrix, got "
                         f"A.shape={sa}")
    if len(se) < 2 or se[-2] != se[-1]:
        raise ValueError(f"expm_frechet: expected E to be a (batched) square matrix, got "
                         f"E.shape={se}")
    if sa != se:
        raise ValueError(f"expm_frechet: expected A and E to be the same shape, got "
                         f"A.shape={sa} E.shape={se}")
    A, E = _inexact("expm_frechet", A, E)
    expm_A, frechet = _jvp(lambda x: expm(x), (A,), (E,))
    return (expm_A, frechet) if compute_expm else frechet


# ---- sqrtm, funm: recurrences on the complex Schur form, one superdiagonal at a time ----

def _superdiag_mask(n: int, d: int) -> Any:
    idx = jnp.arange(n)
    return (idx[None, :] - idx[:, None]) == d


def _sqrtm_triu(T: Any) -> Any:
    # U² = T: U[i,j] = (T[i,j] - s) / (U[i,i] + U[j,j]) with s = sum_{i<k<j} U[i,k] U[k,j]
    # (JAX's recurrence, 0 where T[i,j] == s); s of superdiagonal d is (U U)[i, i+d] while U
    # holds the diagonals below d
    n = _shape(T)[-1]
    diag = jnp.sqrt(jnp.diagonal(T, axis1=-2, axis2=-1))
    U = diag[..., :, None] * jnp.eye(n, dtype=T.dtype)
    den = diag[..., :, None] + diag[..., None, :]
    for d in range(1, n):
        s = U @ U
        val = jnp.where(T == s, 0, (T - s) / den)
        U = U + jnp.where(_superdiag_mask(n, d), val, 0)
    return U


def sqrtm(A: Any, blocksize: int = 1) -> Any:
    """The principal matrix square root (via the complex Schur form, as JAX's).

    Args:
      A: (..., n, n) matrices.
      blocksize: 1 (the blocked algorithm is not implemented, as JAX).

    Returns:
      complex ``X`` with ``X @ X = A``.
    """
    if blocksize > 1:
        raise NotImplementedError("sqrtm: blocked version is not implemented yet.")
    (A,) = _inexact("sqrtm", A)
    _check_square("sqrtm", A, "A")
    T, Z = schur(A, output="complex")
    return Z @ _sqrtm_triu(T) @ _H(Z)


def funm(A: Any, func: Callable[[Any], Any], disp: bool = True) -> Any:
    """A matrix function ``func(A)`` by Parlett's recurrence on the complex Schur form (Golub
    and Van Loan's Algorithm 11.1.1, as JAX's).

    Args:
      A: (n, n) matrix.
      func: a scalar function applied (element-wise) to the eigenvalues.
      disp: return only ``F``; else ``(F, err)`` with JAX's error estimate.

    Returns:
      the complex ``F``, or ``(F, err)``.
    """
    A = jnp.asarray(A)
    s = _shape(A)
    if len(s) != 2 or s[0] != s[1]:
        raise ValueError(f"funm: expected square array_like input, got shape {s}")
    T, Z = schur(A)
    T, Z = rsf2csf(T, Z)
    n = s[0]
    F = jnp.diag(func(jnp.diagonal(T))).astype(T.dtype)
    minden = jnp.abs(T[0, 0]) if n else jnp.zeros((), jnp.real(T).dtype)
    dT = jnp.diagonal(T)
    den = dT[None, :] - dT[:, None]
    for p in range(1, n):
        # s = T[i,j] (F[j,j] - F[i,i]) + sum_{i<k<j} T[i,k] F[k,j] - F[i,k] T[k,j]: with F
        # holding the diagonals below p that is (T F - F T)[i, j]
        sv = T @ F - F @ T
        val = jnp.where(den != 0, sv / jnp.where(den != 0, den, 1), sv)
        mask = _superdiag_mask(n, p)
        F = F + jnp.where(mask, val, 0)
        minden = jnp.minimum(minden, jnp.min(jnp.where(mask, jnp.abs(den), jnp.inf)))
    F = Z @ F @ _H(Z)
    if disp:
        return F
    tol = float(jnp.finfo(F.dtype).eps)
    minden = jnp.where(minden == 0.0, tol, minden)
    norm1 = jnp.max(jnp.sum(jnp.abs(jnp.triu(T, 1)), axis=0)) if n else 0.0
    err = jnp.where(jnp.any(jnp.isinf(F)), np.inf,
                    jnp.minimum(1, jnp.maximum(tol, (tol / minden) * norm1)))
    return F, err


# ---- solve_sylvester: Bartels-Stewart on the complex Schur forms ----

def _solve_sylvester_2d(A: Any, B: Any, C: Any, method: str, tol: float) -> Any:
    m, n = _shape(C)[-2:]
    if method == "schur":
        R, U = schur(A, output="complex")
        S, V = schur(_H(B), output="complex")
        F = _H(U) @ C.astype(R.dtype) @ V
        Sl = _H(S)  # lower triangular: R Y + Y Sl = F, solved by columns from the right
        cols = [None] * n
        for j in range(n - 1, -1, -1):
            rhs = F[:, j]
            for k in range(j + 1, n):
                rhs = rhs - cols[k] * Sl[k, j]
            shifted = R + Sl[j, j] * jnp.eye(m, dtype=R.dtype)
            cols[j] = lax_linalg.triangular_solve(shifted, rhs[:, None], left_side=True,
                                                  lower=False)[:, 0]
        Y = jnp.stack(cols, axis=1) if n else jnp.zeros((m, 0), R.dtype)
        X = U @ Y @ _H(V)
    elif method == "eigen":
        RA, UA = jnp.linalg.eig(A)
        RB, UB = jnp.linalg.eig(B)
        F = jnp.linalg.solve(UA, C.astype(RA.dtype) @ UB)
        Y = F / (RA[:, None] + RB[None, :])
        X = UA[:m, :m] @ Y[:m, :n] @ jnp.linalg.inv(UB)[:n, :n]
    else:
        raise ValueError(f"solve_sylvester: unrecognized method {method}. The two valid methods "
                         "are either \"schur\" or \"eigen\".")
    if not jnp.issubdtype(C.dtype, jnp.complexfloating):
        X = jnp.real(X)
    bad = jnp.any(jnp.abs(jnp.linalg.eigvals(A)[:, None] + jnp.linalg.eigvals(B)[None, :])
                  < tol)
    return jnp.where(bad, jnp.full_like(X, np.nan), X)


def solve_sylvester(A: Any, B: Any, C: Any, *, method: str = "schur",
                    tol: float = 1e-8) -> Any:
    """Solves the Sylvester equation ``A X + X B = C``.

    Args:
      A: (..., m, m); B: (..., n, n); C: (..., m, n).
      method: ``'schur'`` (Bartels-Stewart) or ``'eigen'`` (eigendecompositions).
      tol: if some ``|eig(A)_i + eig(B)_j| < tol`` the equation has no unique solution and
        the result is NaN.
    """
    A, B, C = _inexact("solve_sylvester", A, B, C)
    m, n = _shape(C)[-2:]
    if _shape(A)[-2:] != (m, m) or _shape(B)[-2:] != (n, n):
        raise ValueError(f"solve_sylvester: incompatible shapes for Sylvester equation:\n"
                         f"A: {_shape(A)}\nB: {_shape(B)}\nC: {_shape(C)}")
    batch = np.broadcast_shapes(_shape(A)[:-2], _shape(B)[:-2], _shape(C)[:-2])
    A = jnp.broadcast_to(A, batch + (m, m))
    B = jnp.broadcast_to(B, batch + (n, n))
    C = jnp.broadcast_to(C, batch + (m, n))
    return _batched_2d(lambda a, b, c: _solve_sylvester_2d(a, b, c, method, tol), A, B, C)


# ---- eigh_tridiagonal: bisection on Sturm counts (JAX's) ----

def eigh_tridiagonal(d: Any, e: Any, *, eigvals_only: bool = False, select: str = "a",
                     select_range: tuple[float, float] | None = None, tol: float | None = None,
                     key: Any = None) -> Any:
    """Eigenvalues (ascending) of the real symmetric tridiagonal matrix with diagonal ``d`` and
    off-diagonal ``e``, by bisection on Sturm sequence counts (JAX's algorithm).

    Args:
      d: (n,) diagonal.
      e: (n - 1,) off-diagonal.
      eigvals_only: only eigenvalues; else also the eigenvectors (columns), by inverse
        iteration from random vectors (``key``, default ``random.key(42)``) as JAX's.
      select: ``'a'`` (all) or ``'i'`` (the indices ``select_range``, inclusive).
      select_range: for ``select='i'``, ``(lo, hi)``.
      tol: absolute tolerance of the bisection (at least eps * ||T||).
      key: the PRNG key of inverse iteration's starting vectors.
    """
    alpha, beta = jnp.asarray(d), jnp.asarray(e)
    if alpha.dtype != beta.dtype:
        raise TypeError("eigh_tridiagonal: diagonal and off-diagonal values must have same "
                        f"dtype, got {alpha.dtype} and {beta.dtype}")
    if alpha.dtype not in (jnp.float32, jnp.float64, jnp.complex64, jnp.complex128):
        raise TypeError("eigh_tridiagonal: only float32 and float64 inputs are supported, got "
                        f"{alpha.dtype} and {beta.dtype}")
    n = _shape(alpha)[0]
    if n <= 1:
        return jnp.real(alpha) if eigvals_only else (jnp.real(alpha),
                                                     jnp.eye(n, dtype=alpha.dtype))
    d_in, e_in = alpha, beta
    if jnp.issubdtype(alpha.dtype, jnp.complexfloating):
        alpha = jnp.real(alpha)
        beta_sq = jnp.real(beta * jnp.conj(beta))
        beta_abs = jnp.sqrt(beta_sq)
    else:
        beta_abs = jnp.abs(beta)
        beta_sq = jnp.square(beta)
    off = jnp.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]])
    lmax = jnp.max(alpha + off)
    lmin = jnp.min(alpha - off)
    t_norm = jnp.maximum(jnp.abs(lmin), jnp.abs(lmax))
    finfo = np.finfo(np.dtype(alpha.dtype))
    one = np.ones([], dtype=np.dtype(alpha.dtype))
    safemin = np.maximum(one / finfo.max, (one + finfo.eps) * finfo.tiny)
    pivmin = safemin * jnp.maximum(1, jnp.max(beta_sq))
    alpha0_pert = jnp.square(finfo.eps * beta_abs[0])
    abs_tol = finfo.eps * t_norm
    if tol is not None:
        abs_tol = jnp.maximum(tol, abs_tol)
    max_it = finfo.nmant + 1
    if select == "a":
        targets = jnp.arange(n, dtype=jnp.int32)
    elif select == "i":
        if select_range is None:
            raise ValueError("eigh_tridiagonal: for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("eigh_tridiagonal: got empty index range in select_range.")
        targets = jnp.arange(select_range[0], select_range[1] + 1, dtype=jnp.int32)
    elif select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented (as "
                                  "JAX: the result's size would depend on the values)")
    else:
        raise ValueError("eigh_tridiagonal: 'select' must have a value in {'a', 'i', 'v'}.")
    fudge = 2.1
    slack = n * fudge * finfo.eps * t_norm
    shape = _shape(targets)
    lower = jnp.broadcast_to(lmin - slack - 2 * fudge * pivmin, shape)
    upper = jnp.broadcast_to(lmax + slack + fudge * pivmin, shape)
    mid = 0.5 * (upper + lower)

    def sturm(x):
        q = alpha[0] - x
        count = jnp.where(q < 0, 1, 0).astype(jnp.int32)
        q = jnp.where(alpha[0] == x, alpha0_pert, q)
        for i in range(1, n):
            q = alpha[i] - beta_sq[i - 1] / q - x
            count = jnp.where(q <= pivmin, count + 1, count)
            q = jnp.where(q <= pivmin, jnp.minimum(q, -pivmin), q)
        return count

    def cond(args):
        i, lo, _, hi = args
        return jnp.logical_and(i < max_it, abs_tol < jnp.max(hi - lo))

    def body(args):
        i, lo, mid, hi = args
        counts = sturm(mid)
        lo = jnp.where(counts <= targets, mid, lo)
        hi = jnp.where(counts > targets, mid, hi)
        return i + 1, lo, 0.5 * (lo + hi), hi

    _, _, mid, _ = lax.while_loop(cond, body, (jnp.asarray(0, jnp.int32), lower, mid, upper))
    if eigvals_only:
        return mid
    return mid, _tridiagonal_eigenvectors(d_in, e_in, mid, random.key(42) if key is None
                                          else key).T


def _tridiagonal_eigenvectors(alpha: Any, beta: Any, eigvals: Any, key: Any) -> Any:
    """JAX's inverse iteration (at most 5 perturbed tridiagonal solves, LAPACK stein's count),
    from random vectors, all eigenvalues at once; vectors of eigenvalues closer than
    sqrt(eps) ||T|| are orthogonalized against each other after every step (Gram-Schmidt
    within each cluster, twice, where JAX runs a QR per cluster)."""
    n, k = _shape(alpha)[0], _shape(eigvals)[0]
    dt = alpha.dtype
    dl = jnp.pad(jnp.conj(beta), (1, 0))
    du = jnp.pad(beta, (0, 1))
    eps = float(jnp.finfo(eigvals.dtype).eps)
    t_norm = jnp.maximum(jnp.abs(eigvals[0]), jnp.abs(eigvals[-1]))
    close = (eigvals[1:] - eigvals[:-1]) < np.sqrt(eps) * t_norm
    cluster = jnp.cumsum(jnp.concatenate([jnp.zeros(1, jnp.int32),
                                          (~close).astype(jnp.int32)]))
    same = (cluster[:, None] == cluster[None, :]) & (jnp.arange(k)[:, None]
                                                      > jnp.arange(k)[None, :])
    base = jnp.real(jnp.zeros((), dt)).dtype
    v = random.normal(key, (k, n), dtype=base).astype(dt)
    v = v / jnp.sqrt(jnp.sum(jnp.abs(v) ** 2, axis=-1, keepdims=True)).astype(dt)
    shifted = (jnp.real(alpha)[None, :] - eigvals[:, None]).astype(dt)
    dl_b = jnp.broadcast_to(dl[None, :], (k, n)).astype(dt)
    du_b = jnp.broadcast_to(du[None, :], (k, n)).astype(dt)

    def orthogonalize(ev):
        for _ in range(2):
            for i in range(1, k):
                coef = jnp.where(same[i], jnp.conj(ev) @ ev[i], 0)
                vi = ev[i] - coef @ ev
                vi = vi / jnp.sqrt(jnp.sum(jnp.abs(vi) ** 2)).astype(dt)
                ev = ev.at[i].set(vi)
        return ev

    def step(state):
        i, v, nrm, _ = state
        v_new = lax_linalg.tridiagonal_solve(dl_b, shifted, du_b, v[:, :, None],
                                             perturb_singular=True)[:, :, 0]
        nrm_new = jnp.sqrt(jnp.sum(jnp.abs(v_new) ** 2, axis=-1))
        v_new = orthogonalize(v_new / nrm_new[:, None].astype(dt))
        return i + 1, v_new, nrm_new, nrm

    def more(state):
        i, _, nrm, nrm_old = state
        return jnp.logical_and(i < 5, jnp.any(nrm >= 1.1 * nrm_old))

    _, v, _, _ = lax.while_loop(more, step, (jnp.asarray(0, jnp.int32), v,
                                             jnp.ones(k, eigvals.dtype),
                                             jnp.zeros(k, eigvals.dtype)))
    return v
