"""BFGS (Nocedal & Wright, algorithm 6.1) and L-BFGS (algorithm 7.4/7.5, with the complex
generalisation of Sorber et al. 2012), as ``jax.scipy.optimize.minimize`` runs them: one
``lax.while_loop`` over iterations, the strong-Wolfe line search inside.

Status codes are JAX's. BFGS: 0 converged, 1 maxiter, 2 + the line-search status when the
search failed (3 zoom failed, 5 line-search maxiter), -1 otherwise. L-BFGS: 0 converged,
1 maxiter, 2 maxfun, 3 maxgrad, 4 insufficient decrease (ftol), 5 line search failed.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from ... import lax
from ... import numpy as jnp
from ...numpy import linalg as np_linalg
from ...transforms.reverse import value_and_grad
from ._line_search import line_search

_HIGHEST = lax.Precision.HIGHEST


def _dot(a: Any, b: Any) -> Any:
    return jnp.dot(a, b, precision=_HIGHEST)


class BFGSState(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    nhev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    H_k: Any
    old_old_fval: Any
    status: Any
    line_search_status: Any


def minimize_bfgs(fun: Callable, x0: Any, maxiter: int | None = None, norm: Any = np.inf,
                  gtol: float = 1e-5, line_search_maxiter: int = 10) -> BFGSState:
    """BFGS from ``x0`` (1-D) until ``norm(grad, ord=norm) < gtol`` or ``maxiter``
    iterations (default 200 per variable)."""
    if maxiter is None:
        maxiter = int(np.prod(jnp.shape(x0))) * 200
    d = jnp.shape(x0)[0]
    f_0, g_0 = value_and_grad(fun)(x0)
    i0 = jnp.asarray(0, jnp.int32)
    st = BFGSState(converged=np_linalg.norm(g_0, ord=norm) < gtol, failed=jnp.asarray(False),
                   k=i0, nfev=jnp.asarray(1, jnp.int32), ngev=jnp.asarray(1, jnp.int32),
                   nhev=i0, x_k=x0, f_k=f_0, g_k=g_0, H_k=jnp.eye(d, dtype=x0.dtype),
                   old_old_fval=f_0 + np_linalg.norm(g_0) / 2, status=i0,
                   line_search_status=i0)

    def body(st: BFGSState) -> BFGSState:
        p_k = -_dot(st.H_k, st.g_k)
        ls = line_search(fun, st.x_k, p_k, old_fval=st.f_k, old_old_fval=st.old_old_fval,
                         gfk=st.g_k, maxiter=line_search_maxiter)
        s_k = ls.a_k * p_k
        y_k = ls.g_k - st.g_k
        rho = jnp.reciprocal(_dot(y_k, s_k))
        # H+ = (I - rho s y^T) H (I - rho y s^T) + rho s s^T; kept when y.s vanishes
        w = jnp.eye(d, dtype=rho.dtype) - rho * jnp.outer(s_k, y_k)
        h_new = (jnp.einsum("ij,jk,lk", w, st.H_k, w, precision=_HIGHEST)
                 + rho * jnp.outer(s_k, s_k))
        h_new = jnp.where(jnp.isfinite(rho), h_new, st.H_k)
        return st._replace(converged=np_linalg.norm(ls.g_k, ord=norm) < gtol,
                           failed=ls.failed, k=st.k + 1, nfev=st.nfev + ls.nfev,
                           ngev=st.ngev + ls.ngev, x_k=st.x_k + s_k, f_k=ls.f_k, g_k=ls.g_k,
                           H_k=h_new, old_old_fval=st.f_k,
                           line_search_status=ls.status)

    st = lax.while_loop(lambda s: ~s.converged & ~s.failed & (s.k < maxiter), body, st)
    status = jnp.where(st.converged, 0,
                       jnp.where(st.k == maxiter, 1,
                                 jnp.where(st.failed, 2 + st.line_search_status, -1)))
    status = status.astype(jnp.int32)
    return st._replace(status=status)


class LBFGSState(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    s_history: Any
    y_history: Any
    rho_history: Any
    gamma: Any
    status: Any
    ls_status: Any


def _direction(st: LBFGSState) -> Any:
    """-H g by the two-loop recursion over the stored pairs (newest last)."""
    m = st.rho_history.shape[0]
    used = jnp.minimum(st.k, m)
    dt = st.rho_history.dtype

    def newest_first(j: Any, carry: tuple) -> tuple:
        q, alphas = carry
        i = m - 1 - j
        a = st.rho_history[i] * jnp.real(_dot(jnp.conj(st.s_history[i]), q)).astype(dt)
        return q - a * jnp.conj(st.y_history[i]), alphas.at[i].set(a)

    q, alphas = lax.fori_loop(0, used, newest_first,
                              (-jnp.conj(st.g_k), jnp.zeros_like(st.rho_history)))
    q = st.gamma * q

    def oldest_first(j: Any, q: Any) -> Any:
        i = m - used + j
        b = st.rho_history[i] * jnp.real(_dot(st.y_history[i], q)).astype(dt)
        return q + (alphas[i] - b) * st.s_history[i]

    return lax.fori_loop(0, used, oldest_first, q)


def _push(history: Any, new: Any) -> Any:
    return jnp.roll(history, -1, axis=0).at[-1].set(new)


def minimize_lbfgs(fun: Callable, x0: Any, maxiter: float | None = None, norm: Any = np.inf,
                   maxcor: int = 10, ftol: float = 2.220446049250313e-09,
                   gtol: float = 1e-05, maxfun: float | None = None,
                   maxgrad: float | None = None, maxls: int = 20) -> LBFGSState:
    """L-BFGS from ``x0`` (1-D, real or complex) keeping ``maxcor`` correction pairs."""
    d = jnp.shape(x0)[0]
    dt = x0.dtype
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = d * 200
    maxiter = np.inf if maxiter is None else maxiter
    maxfun = np.inf if maxfun is None else maxfun
    maxgrad = np.inf if maxgrad is None else maxgrad
    f_0, g_0 = value_and_grad(fun)(x0)
    i0 = jnp.asarray(0, jnp.int32)
    rdt = jnp.real(jnp.zeros((), dt)).dtype
    st = LBFGSState(converged=jnp.asarray(False), failed=jnp.asarray(False), k=i0,
                    nfev=jnp.asarray(1, jnp.int32), ngev=jnp.asarray(1, jnp.int32), x_k=x0,
                    f_k=f_0, g_k=g_0, s_history=jnp.zeros((maxcor, d), dt),
                    y_history=jnp.zeros((maxcor, d), dt), rho_history=jnp.zeros((maxcor,), dt),
                    gamma=jnp.asarray(1.0, rdt), status=i0, ls_status=i0)

    def body(st: LBFGSState) -> LBFGSState:
        p_k = _direction(st)
        ls = line_search(fun, st.x_k, p_k, old_fval=st.f_k, gfk=st.g_k, maxiter=maxls)
        s_k = ls.a_k.astype(p_k.dtype) * p_k
        y_k = ls.g_k - st.g_k
        ys = jnp.real(_dot(y_k, s_k))
        rho = jnp.reciprocal(ys).astype(y_k.dtype)
        gamma = ys / jnp.real(_dot(jnp.conj(y_k), y_k))
        # the last matching test wins: line-search failure, then maxiter, maxfun, maxgrad
        status = jnp.asarray(0, jnp.int32)
        status = jnp.where(st.f_k - ls.f_k < ftol, 4, status)
        status = jnp.where(st.ngev >= maxgrad, 3, status)
        status = jnp.where(st.nfev >= maxfun, 2, status)
        status = jnp.where(st.k >= maxiter, 1, status)
        status = jnp.where(ls.failed, 5, status)
        converged = np_linalg.norm(ls.g_k, ord=norm) < gtol
        return st._replace(converged=converged, failed=(status > 0) & ~converged,
                           k=st.k + 1, nfev=st.nfev + ls.nfev, ngev=st.ngev + ls.ngev,
                           x_k=(st.x_k + s_k).astype(st.x_k.dtype),
                           f_k=ls.f_k.astype(st.f_k.dtype), g_k=ls.g_k.astype(st.g_k.dtype),
                           s_history=_push(st.s_history, s_k),
                           y_history=_push(st.y_history, y_k),
                           rho_history=_push(st.rho_history, rho),
                           gamma=gamma.astype(rdt),
                           status=jnp.where(converged, 0, status).astype(jnp.int32),
                           ls_status=ls.status.astype(jnp.int32))

    return lax.while_loop(lambda s: ~s.converged & ~s.failed, body, st)
