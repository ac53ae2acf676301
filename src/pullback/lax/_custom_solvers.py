"""Implicitly differentiated solvers: custom_root and custom_linear_solve (JAX's API).

Their derivatives come from the implicit function theorem, not from differentiating the
user's solver: ``custom_root`` is a custom_jvp whose tangent is
``-tangent_solve(df/dx, df/dtheta . dtheta)`` at the solution; ``custom_linear_solve`` is a
custom_vjp whose cotangent is ``transpose_solve(A^T, ct)`` (and ``-lambda^T dA x`` for the
values ``matvec`` closes over), so an iterative ``solve`` (a while_loop) is never
differentiated in reverse mode.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..tracer import core, dtypes, pytree
from ..transforms.custom_derivatives import closure_convert, custom_jvp, custom_vjp
from ..transforms.jvp import jvp
from ..transforms.reverse import linearize, vjp
from ._elementwise import neg
from ._full import full_like
from ._operands import scalars_to

__all__ = ["custom_root", "custom_linear_solve"]


def _inexact(x: Any) -> bool:
    return dtypes.is_inexact(core.get_aval(x).dtype)


def _split_consts(consts: list) -> tuple[list[int], list[Any], list[Any]]:
    """The positions and values of the differentiable (inexact) closed-over values, and the
    others (kept as they are)."""
    idx = [i for i, c in enumerate(consts) if _inexact(c)]
    return idx, [consts[i] for i in idx], list(consts)


def _merge(all_consts: list, idx: list[int], diff: tuple) -> list:
    out = list(all_consts)
    for i, v in zip(idx, diff):
        out[i] = v
    return out


def _zero_tangents(tree: Any) -> Any:
    # integer and boolean values have float0 tangents (as JAX)
    def one(x: Any) -> Any:
        (x,) = scalars_to((x,))
        if _inexact(x):
            return full_like(x, 0)
        return np.zeros(core.get_aval(x).shape, dtypes.float0)
    return pytree.tree_map(one, tree)


def custom_root(f: Callable, initial_guess: Any, solve: Callable, tangent_solve: Callable,
                has_aux: bool = False) -> Any:
    """A root of ``f`` found by ``solve``, differentiated implicitly.

    Args:
      f: the function whose root is sought (a pytree to a pytree of the same structure); the
        values it closes over are the parameters derivatives flow to.
      initial_guess: the starting point (receives no derivative).
      solve: ``solve(f, initial_guess)`` returns the root (and aux data with ``has_aux``).
      tangent_solve: ``tangent_solve(g, y)`` solves the linear system ``g(x) = y`` for ``x``
        (``g`` is f's linearization at the root).
      has_aux: ``solve`` returns ``(root, aux)``; aux gets no derivative.

    Returns:
      The root (and aux).
    """
    f_conv, consts = closure_convert(f, initial_guess)
    idx, diff_consts, all_consts = _split_consts(consts)

    def f_at(x: Any, cs: tuple) -> Any:
        return f_conv(x, *_merge(all_consts, idx, cs))

    @custom_jvp
    def _root(guess: Any, *cs: Any) -> Any:
        return solve(lambda x: f_at(x, cs), guess)

    @_root.defjvp
    def _root_jvp(primals: tuple, tangents: tuple) -> tuple:
        guess, *cs = primals
        _, *tcs = tangents
        out = _root(guess, *cs)
        sol = out[0] if has_aux else out
        # f(x*(theta), theta) = 0  =>  dx* = -(df/dx)^-1 (df/dtheta . dtheta)
        _, rhs = jvp(lambda *c: f_at(sol, c), tuple(cs), tuple(tcs))
        _, f_lin = linearize(lambda x: f_at(x, tuple(cs)), sol)
        dsol = pytree.tree_map(neg, tangent_solve(f_lin, rhs))
        if has_aux:
            return out, (dsol, _zero_tangents(out[1]))
        return out, dsol

    guess = pytree.tree_map(lambda x: x, initial_guess)
    return _root(guess, *diff_consts)


def custom_linear_solve(matvec: Callable, b: Any, solve: Callable,
                        transpose_solve: Callable | None = None, symmetric: bool = False,
                        has_aux: bool = False) -> Any:
    """The solution ``x`` of ``matvec(x) = b`` computed by ``solve``, with derivatives by
    implicit differentiation.

    Args:
      matvec: the linear operator (a pytree to a pytree like ``b``); the values it closes over
        receive derivatives.
      b: the right-hand side.
      solve: ``solve(matvec, b)`` returns ``x`` (and aux data with ``has_aux``).
      transpose_solve: ``transpose_solve(vecmat, b)`` solves the transposed system (needed for
        reverse-mode derivatives unless ``symmetric``).
      symmetric: the operator is symmetric: ``solve`` serves as ``transpose_solve``.
      has_aux: ``solve`` returns ``(x, aux)``; aux gets no derivative.

    Returns:
      ``x`` (and aux).
    """
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    mv_conv, consts = closure_convert(matvec, b)
    idx, diff_consts, all_consts = _split_consts(consts)
    n_diff = len(diff_consts)

    def mv_at(x: Any, cs: tuple) -> Any:
        return mv_conv(x, *_merge(all_consts, idx, cs))

    @custom_vjp
    def _solve(rhs: Any, *cs: Any) -> Any:
        return solve(lambda x: mv_at(x, cs), rhs)

    def _fwd(rhs: Any, *cs: Any) -> tuple:
        out = _solve(rhs, *cs)
        return out, (out[0] if has_aux else out, cs)

    def _bwd(res: tuple, ct: Any) -> tuple:
        x, cs = res
        ct_x = ct[0] if has_aux else ct
        if transpose_solve is None:
            raise TypeError("custom_linear_solve: reverse-mode differentiation needs "
                            "'transpose_solve' (or symmetric=True)")
        # the transpose of matvec at these parameters, as a function (vjp of a linear map)
        _, mv_vjp = vjp(lambda v: mv_at(v, cs), x)

        def vecmat(y: Any) -> Any:
            return mv_vjp(y)[0]
        if has_aux:
            lam = transpose_solve(vecmat, ct_x)
            lam = lam[0] if isinstance(lam, tuple) else lam
        else:
            # itself a custom linear solve (solve is the transpose of transpose_solve), so an
            # iterative solver is not reverse-differentiated when this rule is (order 2)
            lam = custom_linear_solve(vecmat, ct_x, transpose_solve, solve)
        if n_diff:
            # d<lam, A(theta) x>/dtheta, negated: the parameters' cotangents
            _, c_vjp = vjp(lambda *c: mv_at(x, c), *cs)
            ct_cs = tuple(pytree.tree_map(neg, g) for g in c_vjp(lam))
        else:
            ct_cs = ()
        return (lam,) + ct_cs

    _solve.defvjp(_fwd, _bwd)
    return _solve(b, *diff_consts)
