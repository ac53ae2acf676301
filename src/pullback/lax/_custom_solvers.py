"""Implicitly differentiated solvers: custom_root and custom_linear_solve (JAX's API).

Their derivatives come from the implicit function theorem, not from differentiating the
user's solver: ``custom_root`` is a custom_jvp whose tangent is
``-tangent_solve(df/dx, df/dtheta . dtheta)`` at the solution; ``custom_linear_solve`` binds
the ``linear_solve`` primitive (transforms/control_flow/linear_solve.py), whose rules solve
again instead of differentiating the solver, so an iterative ``solve`` (a while_loop) is never
differentiated.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..tracer import core, dtypes, pytree
from ..transforms.array_ops import as_operands
from ..transforms.control_flow.linear_solve import linear_solve_p, widen
from ..transforms.control_flow.tracing import trace_callback
from ..transforms.custom_derivatives import closure_convert, custom_jvp
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
      has_aux: ``solve`` and ``transpose_solve`` return ``(x, aux)``; aux gets no derivative.

    Returns:
      ``x`` (and aux).
    """
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    b_leaves, b_tree = pytree.tree_flatten(b)
    b_leaves = as_operands(b_leaves)
    avals = [core.get_aval(x) for x in b_leaves]
    b = pytree.tree_unflatten(b_tree, b_leaves)
    mv, mv_consts, (mv_tree,) = trace_callback(matvec, [b_tree], avals,
                                               "custom_linear_solve matvec")
    if mv_tree != b_tree or list(mv.out_avals) != avals:
        raise ValueError(f"custom_linear_solve: 'matvec' must map 'b' to its own structure "
                         f"and types: got {mv_tree} with "
                         f"{[a.str_short() for a in mv.out_avals]} for {b_tree} with "
                         f"{[a.str_short() for a in avals]}")
    split = (lambda out: [out[0], out[1]]) if has_aux else None
    sv, sv_consts, trees = trace_callback(lambda y: solve(matvec, y), [b_tree], avals,
                                          "custom_linear_solve solve", split)
    parts: list = [(mv, mv_consts), (None, []), (sv, sv_consts), (None, [])]
    if transpose_solve is not None:
        def vecmat(y: Any) -> Any:  # A^T y: the vjp of the linear map (at b: any point)
            return vjp(matvec, b)[1](y)[0]
        vm, vm_consts, _ = trace_callback(vecmat, [b_tree], avals,
                                          "custom_linear_solve vecmat")
        first = (lambda out: out[0]) if has_aux else (lambda out: out)
        ts, ts_consts, _ = trace_callback(lambda y: first(transpose_solve(vecmat, y)),
                                          [b_tree], avals, "custom_linear_solve transpose_solve")
        parts[1], parts[3] = (vm, vm_consts), (ts, ts_consts)
    consts = [c for _, cs in parts for c in cs]
    c_avals = [core.get_aval(c) for c in consts]
    programs, at = [], 0
    for body, cs in parts:
        n = len(cs)
        programs.append(None if body is None else
                        widen(body, n, c_avals[:at], c_avals[at + n:]))
        at += n
    n_aux = trees[1].num_leaves if has_aux else 0
    outs = linear_solve_p.bind(*consts, *b_leaves, num_consts=len(consts), num_aux=n_aux,
                               matvec=programs[0], vecmat=programs[1], solve=programs[2],
                               transpose_solve=programs[3])
    x = pytree.tree_unflatten(b_tree, outs[:len(b_leaves)])
    if has_aux:
        return x, pytree.tree_unflatten(trees[1], outs[len(b_leaves):])
    return x
