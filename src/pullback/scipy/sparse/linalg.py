"""``pullback.scipy.sparse.linalg``: the Krylov solvers of ``jax.scipy.sparse.linalg``.

``cg``, ``gmres`` and ``bicgstab`` solve ``A x = b`` for an operator ``A`` given as a square
matrix or as a linear function of a pytree, iterating inside ``lax.while_loop`` (so they
compile and vmap), and are wrapped in ``lax.custom_linear_solve`` so derivatives come from
solving the adjoint system instead of differentiating the iterations. As JAX: the second
result ``info`` is None for ``cg`` and ``bicgstab`` and ``-1`` when gmres's solution holds a
NaN (else 0); the default ``maxiter`` is ten times the size of ``b`` (SciPy's); convergence is
``|r|^2 <= max(tol^2 |b|^2, atol^2)``.
"""
from __future__ import annotations

import functools
import operator
from typing import Any, Callable

import numpy as np

from ... import lax
from ... import numpy as jnp
from ...numpy._promotion import aval_of
from ...tracer import pytree
from .. import linalg as sp_linalg

__all__ = ["bicgstab", "cg", "gmres"]

_HIGHEST = lax.Precision.HIGHEST


# ---- pytree vector arithmetic ----

def _tmap(f: Callable, *trees: Any) -> Any:
    return pytree.tree_map(f, *trees)


def _add(x: Any, y: Any) -> Any:
    return _tmap(operator.add, x, y)


def _sub(x: Any, y: Any) -> Any:
    return _tmap(operator.sub, x, y)


def _scale(a: Any, x: Any) -> Any:
    return _tmap(lambda v: a * v, x)


def _vdot_tree(x: Any, y: Any) -> Any:
    # <x, y> with x conjugated, summed over the leaves
    return sum(pytree.tree_leaves(_tmap(
        lambda a, b: jnp.vdot(a, b, precision=_HIGHEST), x, y)))


def _vdot_real(a: Any, b: Any) -> Any:
    # Re<a, b> without forming the complex product
    if jnp.iscomplexobj(a) or jnp.iscomplexobj(b):
        return (jnp.vdot(jnp.real(a), jnp.real(b), precision=_HIGHEST)
                + jnp.vdot(jnp.imag(a), jnp.imag(b), precision=_HIGHEST))
    return jnp.vdot(a, b, precision=_HIGHEST)


def _vdot_real_tree(x: Any, y: Any) -> Any:
    return sum(pytree.tree_leaves(_tmap(_vdot_real, x, y)))


def _norm(x: Any) -> Any:
    return jnp.sqrt(_vdot_real_tree(x, x))


def _result_dtype(tree: Any) -> Any:
    return jnp.result_type(*pytree.tree_leaves(tree))


def _identity(x: Any) -> Any:
    return x


def _as_operator(f: Any, fn: str, name: str) -> Callable:
    """A matrix becomes its matvec (at full precision); a function is used as it is."""
    if callable(f):
        return f
    if hasattr(f, "shape") and hasattr(f, "dtype"):
        shape = tuple(f.shape)
        if len(shape) != 2 or shape[0] != shape[1]:
            raise ValueError(f"{fn}: argument {name!r}: linear operator must be a square "
                             f"matrix, but has shape: {shape}")
        return functools.partial(jnp.dot, f, precision=_HIGHEST)
    raise TypeError(f"{fn}: argument {name!r}: linear operator must be either a function or "
                    f"ndarray: {f!r}")


def _shapes(tree: Any) -> list:
    return [tuple(aval_of(x).shape) for x in pytree.tree_leaves(tree)]


def _prepare(fn: str, A: Any, b: Any, x0: Any, maxiter: Any, M: Any) -> tuple:
    b = _tmap(jnp.asarray, b)
    x0 = _tmap(jnp.zeros_like, b) if x0 is None else _tmap(jnp.asarray, x0)
    if pytree.tree_structure(x0) != pytree.tree_structure(b):
        raise ValueError(f"{fn}: arguments 'x0' and 'b' must have matching tree structure: "
                         f"{pytree.tree_structure(x0)} vs {pytree.tree_structure(b)}")
    if _shapes(x0) != _shapes(b):
        raise ValueError(f"{fn}: arrays in 'x0' and 'b' must have matching shapes: "
                         f"{_shapes(x0)} vs {_shapes(b)}")
    size = sum(int(np.prod(s)) for s in _shapes(b))
    if maxiter is None:
        maxiter = 10 * size  # SciPy's default
    A = _as_operator(A, fn, "A")
    M = _identity if M is None else _as_operator(M, fn, "M")
    return A, b, x0, maxiter, M, size


# ---- conjugate gradients ----

def _cg_solve(A: Callable, b: Any, x0: Any, *, maxiter: int, tol: float, atol: float,
              M: Callable) -> Any:
    bound2 = jnp.maximum(jnp.square(tol) * _vdot_real_tree(b, b), jnp.square(atol))
    r0 = _sub(b, A(x0))
    z0 = M(r0)
    dt = _result_dtype(z0)
    gamma0 = _vdot_real_tree(r0, z0).astype(dt)

    def cond(state: tuple) -> Any:
        _, r, gamma, _, k = state
        # unpreconditioned, gamma already is |r|^2
        rr = gamma.real if M is _identity else _vdot_real_tree(r, r)
        return (rr > bound2) & (k < maxiter)

    def body(state: tuple) -> tuple:
        x, r, gamma, p, k = state
        ap = A(p)
        alpha = gamma / _vdot_real_tree(p, ap).astype(dt)
        x = _add(x, _scale(alpha, p))
        r = _sub(r, _scale(alpha, ap))
        z = M(r)
        gamma_new = _vdot_real_tree(r, z).astype(dt)
        p = _add(z, _scale(gamma_new / gamma, p))
        return x, r, gamma_new, p, k + 1

    state = (x0, r0, gamma0, z0, jnp.asarray(0, jnp.int32))
    return lax.while_loop(cond, body, state)[0]


# ---- BiCGSTAB ----

def _bicgstab_solve(A: Callable, b: Any, x0: Any, *, maxiter: int, tol: float, atol: float,
                    M: Callable) -> Any:
    bound2 = jnp.maximum(jnp.square(tol) * _vdot_real_tree(b, b), jnp.square(atol))
    r0 = _sub(b, A(x0))
    one = jnp.asarray(1, _result_dtype(b))

    def cond(state: tuple) -> Any:
        r, k = state[1], state[-1]
        # k < 0 flags a breakdown (rho = 0: -10; omega or alpha = 0: -11)
        return (_vdot_real_tree(r, r) > bound2) & (k < maxiter) & (k >= 0)

    def body(state: tuple) -> tuple:
        x, r, rhat, alpha, omega, rho, p, q, k = state
        rho_new = _vdot_tree(rhat, r)
        beta = rho_new / rho * alpha / omega
        p = _add(r, _scale(beta, _sub(p, _scale(omega, q))))
        phat = M(p)
        q = A(phat)
        alpha = rho_new / _vdot_tree(rhat, q)
        s = _sub(r, _scale(alpha, q))
        # s already small enough: stop after the half step
        half = _vdot_real_tree(s, s) < bound2
        shat = M(s)
        t = A(shat)
        omega = _vdot_tree(t, s) / _vdot_tree(t, t)
        x_half = _add(x, _scale(alpha, phat))
        x = _tmap(lambda h, f: jnp.where(half, h, f), x_half, _add(x_half, _scale(omega, shat)))
        r = _tmap(lambda h, f: jnp.where(half, h, f), s, _sub(s, _scale(omega, t)))
        k = jnp.where((omega == 0) | (alpha == 0), -11, k + 1)
        k = jnp.where(rho_new == 0, -10, k).astype(jnp.int32)
        return x, r, rhat, alpha, omega, rho_new, p, q, k

    state = (x0, r0, r0, one, one, one, r0, r0, jnp.asarray(0, jnp.int32))
    return lax.while_loop(cond, body, state)[0]


def _isolve(solver: Callable, fn: str, A: Any, b: Any, x0: Any, *, tol: float, atol: float,
            maxiter: Any, M: Any, check_symmetric: bool) -> tuple:
    A, b, x0, maxiter, M, _ = _prepare(fn, A, b, x0, maxiter, M)
    # the starting point is a constant of the solve, not a differentiable input (as JAX)
    solve = functools.partial(solver, x0=lax.stop_gradient(x0), tol=tol, atol=atol,
                              maxiter=maxiter, M=M)
    # a real positive-definite operator (what cg assumes) is symmetric
    symmetric = check_symmetric and not any(
        jnp.iscomplexobj(leaf) for leaf in pytree.tree_leaves(b))
    x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve, symmetric=symmetric)
    return x, None


def cg(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
       maxiter: int | None = None, M: Any = None) -> tuple:
    """Solve ``A x = b`` by conjugate gradients (``A`` Hermitian positive definite).

    Args:
      A: a square matrix, or a function computing ``A @ x`` on pytrees shaped like ``b``.
      b: the right-hand side (an array or a pytree of arrays).
      x0: the starting guess (like ``b``; default zeros).
      tol, atol: stop when ``|b - A x| <= max(tol |b|, atol)``.
      maxiter: iteration cap (default ten times the size of ``b``).
      M: a preconditioner approximating ``A^-1`` (matrix or function).

    Returns:
      ``(x, None)``; ``x`` is differentiable in ``b`` and in what ``A`` closes over.
    """
    return _isolve(_cg_solve, "cg", A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M,
                   check_symmetric=True)


def bicgstab(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
             maxiter: int | None = None, M: Any = None) -> tuple:
    """Solve ``A x = b`` by BiCGSTAB (any nonsingular ``A``); arguments as ``cg``.

    Returns:
      ``(x, None)``.
    """
    return _isolve(_bicgstab_solve, "bicgstab", A, b, x0, tol=tol, atol=atol,
                   maxiter=maxiter, M=M, check_symmetric=False)


# ---- GMRES ----

def _safe_normalize(x: Any, thresh: Any = None) -> tuple:
    """``(x / |x|, |x|)``, or zeros and 0 when ``|x|`` is at most ``thresh`` (default eps)."""
    norm = _norm(x)
    dt = _result_dtype(x)
    if thresh is None:
        thresh = jnp.finfo(norm.dtype).eps
    thresh = jnp.real(jnp.asarray(thresh).astype(dt))
    big = norm > thresh
    return (_tmap(lambda y: jnp.where(big, y / norm.astype(y.dtype), jnp.zeros_like(y)), x),
            jnp.where(big, norm, jnp.zeros_like(norm)))


def _column(V: Any, k: Any) -> Any:
    return _tmap(lambda X: lax.dynamic_index_in_dim(X, k, X.ndim - 1, keepdims=False), V)


def _project(Q: Any, v: Any) -> Any:
    # Q^H v over the Krylov columns (the last axis of every leaf)
    return functools.reduce(operator.add, pytree.tree_leaves(_tmap(
        lambda X, y: jnp.tensordot(jnp.conj(X), y, axes=(tuple(range(y.ndim)),
                                                         tuple(range(y.ndim))),
                                   precision=_HIGHEST), Q, v)))


def _combine(Q: Any, h: Any) -> Any:
    return _tmap(lambda X: jnp.dot(X, h, precision=_HIGHEST), Q)


def _gram_schmidt(Q: Any, x: Any) -> tuple:
    """One classical Gram-Schmidt pass of ``x`` against the columns of ``Q``: JAX's
    "iterate twice" loop never takes its second pass (its guard needs k < 1 after the first),
    so one pass is what reproduces JAX's iterates."""
    h = _project(Q, x)
    return _sub(x, _combine(Q, h)), h


def _arnoldi(k: Any, A: Callable, M: Callable, V: Any, H: Any) -> tuple:
    """Extend the Krylov basis ``V`` by column k+1 and fill row k of the Hessenberg ``H``
    (stored transposed, (restart, restart+1)); breakdown when the new vector vanishes."""
    dt = _result_dtype(V)
    v = M(A(_column(V, k)))
    _, v_norm0 = _safe_normalize(v)
    v, h = _gram_schmidt(V, v)
    unit, v_norm1 = _safe_normalize(v, thresh=jnp.finfo(dt).eps * v_norm0)
    V = _tmap(lambda X, y: X.at[..., k + 1].set(y), V, unit)
    h = h.at[k + 1].set(v_norm1.astype(dt))
    H = H.at[k, :].set(h)
    return V, H, v_norm1 == 0


def _krylov_basis(unit_residual: Any, restart: int) -> Any:
    return _tmap(lambda x: jnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)),
                 unit_residual)


def _gmres_batched(A: Callable, b: Any, x0: Any, unit_residual: Any, residual_norm: Any,
                   ptol: Any, restart: int, M: Callable) -> tuple:
    """One restart cycle: ``restart`` Arnoldi steps, then the small least-squares problem by
    its normal equations (Cholesky), as JAX's "batched" method."""
    V = _krylov_basis(unit_residual, restart)
    dt = _result_dtype(b)
    H = jnp.eye(restart, restart + 1, dtype=dt)

    def more(carry: tuple) -> Any:
        _, _, broke, k = carry
        return (k < restart) & ~broke

    def step(carry: tuple) -> tuple:
        V, H, _, k = carry
        V, H, broke = _arnoldi(k, A, M, V, H)
        return V, H, broke, k + 1

    V, H, _, _ = lax.while_loop(more, step, (V, H, jnp.asarray(False),
                                             jnp.asarray(0, jnp.int32)))
    beta = jnp.zeros((restart + 1,), dt).at[0].set(residual_norm.astype(dt))
    Ht = H.T
    gram = jnp.dot(jnp.conj(H), Ht, precision=_HIGHEST)
    y = sp_linalg.solve(gram, jnp.dot(jnp.conj(H), beta, precision=_HIGHEST), assume_a="pos")
    x = _add(x0, _tmap(lambda X: jnp.dot(X[..., :-1], y, precision=_HIGHEST), V))
    unit, rnorm = _safe_normalize(M(_sub(b, A(x))))
    return x, unit, rnorm


def _rotate(v: Any, i: Any, cs: Any, sn: Any) -> Any:
    a, b = v[i], v[i + 1]
    return v.at[i].set(jnp.conj(cs) * a - jnp.conj(sn) * b).at[i + 1].set(sn * a + cs * b)


def _givens(a: Any, b: Any) -> tuple:
    """(cs, sn) zeroing ``b`` against ``a``, dividing by the larger of the two."""
    b_zero = jnp.abs(b) == 0
    a_small = jnp.abs(a) < jnp.abs(b)
    t = -jnp.where(a_small, a, b) / jnp.where(a_small, b, a)
    r = lax.rsqrt(1 + jnp.abs(t) ** 2).astype(t.dtype)
    cs = jnp.where(b_zero, 1, jnp.where(a_small, r * t, r))
    sn = jnp.where(b_zero, 0, jnp.where(a_small, r, r * t))
    return cs.astype(t.dtype), sn.astype(t.dtype)


def _gmres_incremental(A: Callable, b: Any, x0: Any, unit_residual: Any, residual_norm: Any,
                       ptol: Any, restart: int, M: Callable) -> tuple:
    """One restart cycle with the Hessenberg matrix QR-factored by Givens rotations as it
    grows, so the cycle stops once the implied residual is below ``ptol``."""
    V = _krylov_basis(unit_residual, restart)
    dt = _result_dtype(b)
    R = jnp.eye(restart, restart + 1, dtype=dt)  # identity keeps the early-exit solve regular
    givens = jnp.zeros((restart, 2), dt)
    beta = jnp.zeros((restart + 1,), dt).at[0].set(residual_norm.astype(dt))

    def more(carry: tuple) -> Any:
        k, err = carry[0], carry[1]
        return (k < restart) & (err > ptol)

    def step(carry: tuple) -> tuple:
        k, _, V, R, beta, givens = carry
        V, H, _ = _arnoldi(k, A, M, V, R)
        row = lax.fori_loop(0, k, lambda i, row: _rotate(row, i, givens[i, 0], givens[i, 1]),
                            H[k, :])
        cs, sn = _givens(row[k], row[k + 1])
        givens = givens.at[k, 0].set(cs).at[k, 1].set(sn)
        R = R.at[k, :].set(_rotate(row, k, cs, sn))
        beta = _rotate(beta, k, cs, sn)
        return k + 1, jnp.abs(beta[k + 1]).astype(jnp.real(beta).dtype), V, R, beta, givens

    carry = (jnp.asarray(0, jnp.int32), residual_norm, V, R, beta, givens)
    _, _, V, R, beta, _ = lax.while_loop(more, step, carry)
    y = sp_linalg.solve_triangular(R[:, :-1].T, beta[:-1])
    x = _add(x0, _tmap(lambda X: jnp.dot(X[..., :-1], y, precision=_HIGHEST), V))
    unit, rnorm = _safe_normalize(M(_sub(b, A(x))))
    return x, unit, rnorm


def _gmres_solve(A: Callable, b: Any, x0: Any, atol: Any, ptol: Any, restart: int,
                 maxiter: int, M: Callable, cycle: Callable) -> Any:
    unit, rnorm = _safe_normalize(_sub(b, A(x0)))

    def more(carry: tuple) -> Any:
        _, k, _, rnorm = carry
        return (k < maxiter) & (rnorm > atol)

    def body(carry: tuple) -> tuple:
        x, k, unit, rnorm = carry
        x, unit, rnorm = cycle(A, b, x, unit, rnorm, ptol, restart, M)
        return x, k + 1, unit, rnorm

    return lax.while_loop(more, body, (x0, jnp.asarray(0, jnp.int32), unit, rnorm))[0]


def gmres(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
          restart: int = 20, maxiter: int | None = None, M: Any = None,
          solve_method: str = "batched") -> tuple:
    """Solve ``A x = b`` by restarted GMRES (any nonsingular ``A``).

    Args:
      A, b, x0, M: as ``cg``.
      tol, atol: stop when the (preconditioned) residual norm is at most
        ``max(tol |b|, atol)``.
      restart: Krylov subspace size per cycle (capped at the size of ``b``).
      maxiter: the number of restart cycles (default ten times the size of ``b``).
      solve_method: ``"batched"`` (``restart`` Arnoldi steps, then one least-squares solve)
        or ``"incremental"`` (Givens QR as the basis grows; stops early within a cycle).

    Returns:
      ``(x, info)``: info is -1 when ``x`` holds a NaN, else 0.
    """
    if solve_method == "incremental":
        cycle = _gmres_incremental
    elif solve_method == "batched":
        cycle = _gmres_batched
    else:
        raise ValueError(f"gmres: invalid argument 'solve_method' {solve_method!r}, must be "
                         f"either 'incremental' or 'batched'")
    A, b, x0, maxiter, M, size = _prepare("gmres", A, b, x0, maxiter, M)
    restart = min(restart, size)
    b_norm = _norm(b)
    atol = jnp.maximum(jnp.multiply(tol, b_norm), atol)
    ptol = _norm(M(b)) * jnp.minimum(1.0, atol / b_norm)

    # stopping thresholds and the start are constants of the solve, not differentiable
    x0, atol, ptol = lax.stop_gradient((x0, atol, ptol))

    def solve(A: Callable, b: Any) -> Any:
        return _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, cycle)

    x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve)
    info = jnp.where(jnp.isnan(_norm(x)), -1, 0)
    return x, info
