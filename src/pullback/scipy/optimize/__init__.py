"""``pullback.scipy.optimize``: ``minimize`` as ``jax.scipy.optimize`` has it (BFGS, and
JAX's experimental L-BFGS), compiled as one ``while_loop``, gradients by ``value_and_grad``.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple

from ... import numpy as jnp
from ...numpy._promotion import aval_of
from ._bfgs import minimize_bfgs, minimize_lbfgs

__all__ = ["OptimizeResults", "minimize"]

_LBFGS = "l-bfgs-experimental-do-not-rely-on-this"


class OptimizeResults(NamedTuple):
    """The result of ``minimize``.

    Attributes:
      x: the final iterate.
      success: whether the gradient norm reached the tolerance without a line-search failure.
      status: the solver's code (BFGS: 0 converged, 1 maxiter, 3 zoom failed, 5 line-search
        maxiter, -1 undefined; L-BFGS: see ``minimize``).
      fun: the objective at ``x``.
      jac: the gradient at ``x``.
      hess_inv: BFGS's inverse-Hessian estimate (None for L-BFGS).
      nfev, njev: objective and gradient evaluations.
      nit: iterations.
    """
    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


def minimize(fun: Callable, x0: Any, args: tuple = (), *, method: str, tol: float | None = None,
             options: Mapping[str, Any] | None = None) -> OptimizeResults:
    """Minimise a scalar function of one 1-D array, as ``jax.scipy.optimize.minimize``.

    Args:
      fun: ``fun(x, *args) -> scalar``, differentiable.
      x0: the initial guess, shape ``(n,)``.
      args: extra positional arguments of ``fun`` (a tuple).
      method: ``"BFGS"`` or ``"l-bfgs-experimental-do-not-rely-on-this"`` (any case).
      tol: accepted and unused, as JAX (use ``options={"gtol": ...}``).
      options: the solver's options. BFGS: ``maxiter``, ``norm``, ``gtol``,
        ``line_search_maxiter``; L-BFGS: ``maxiter``, ``norm``, ``maxcor``, ``ftol``,
        ``gtol``, ``maxfun``, ``maxgrad``, ``maxls``.

    Returns:
      An ``OptimizeResults``.
    """
    options = {} if options is None else dict(options)
    if not isinstance(args, tuple):
        raise TypeError(f"minimize: argument 'args' must be a tuple, got {args!r}")
    if not isinstance(method, str) or method.lower() not in ("bfgs", _LBFGS):
        raise ValueError(f"minimize: argument 'method' {method!r} not recognized; expected "
                         f"'BFGS' or '{_LBFGS}'")
    x0 = jnp.asarray(x0)
    if aval_of(x0).ndim != 1:
        raise ValueError(f"minimize: argument 'x0' must be a 1-D array, got shape "
                         f"{aval_of(x0).shape}")

    def f(x: Any) -> Any:
        return fun(x, *args)

    if method.lower() == "bfgs":
        r = minimize_bfgs(f, x0, **options)
        return OptimizeResults(x=r.x_k, success=r.converged & ~r.failed, status=r.status,
                               fun=r.f_k, jac=r.g_k, hess_inv=r.H_k, nfev=r.nfev, njev=r.ngev,
                               nit=r.k)
    r = minimize_lbfgs(f, x0, **options)
    return OptimizeResults(x=r.x_k, success=r.converged & ~r.failed, status=r.status,
                           fun=r.f_k, jac=r.g_k, hess_inv=None, nfev=r.nfev, njev=r.ngev,
                           nit=r.k)
