"""``linear_solve``: the solution of a linear system by a user's solver, as JAX's
``linear_solve_p`` (the primitive behind ``lax.custom_linear_solve``).

Operands are ``(*consts, *b)``. Four sub-programs each take all of them, ``(*consts, *v)``,
and use their own part of the consts: ``matvec`` (the operator ``A``), ``vecmat`` (its
transpose, or None), ``solve`` (``A^-1 v``, then ``num_aux`` auxiliary outputs) and
``transpose_solve`` (``A^-T v``, or None). Evaluation runs ``solve``. The solver itself is
never differentiated (it is usually an iterative ``while_loop``):

- jvp: ``x' = solve(b' - A'(x))``, where ``A'`` is the tangent of ``matvec`` in its consts
  (the solver's own consts, a preconditioner or a starting point, get no derivative, as JAX);
- transpose (linear in ``b``): ``ct_b = transpose_solve(ct_x)``, itself a ``linear_solve``
  with the roles of the operator and its transpose swapped, so it differentiates again;
- batching: every program vmapped, the vector operands batched.

Because the traced values the programs close over are operands, a solve inside ``jit`` of
``grad`` stays one equation whose transpose is known (a custom_vjp closing over the jit
trace's values is inlined instead, and its loop differentiated).
"""
from __future__ import annotations

from typing import Any, Sequence

from ...primitives.elementwise import sub_p
from ...primitives.rules import Zero, instantiate, is_undefined, move_bdim, tangent_aval
from ...tracer.avals import ShapedArray
from ...tracer.core import Primitive
from ...tracer.ir import ClosedJaxpr, Jaxpr, Var
from ...tracer.staging import eval_jaxpr
from ..jvp import jvp_flat
from . import jaxprs as J

linear_solve_p = Primitive("linear_solve", multiple_results=True)

_PROGRAMS = ("matvec", "vecmat", "solve", "transpose_solve")


def widen(body: ClosedJaxpr, n_own: int, before: Sequence[ShapedArray],
          after: Sequence[ShapedArray]) -> ClosedJaxpr:
    """``body`` (its ``n_own`` consts as leading inputs, then the vector) taking ignored inputs
    of avals ``before`` and ``after`` around its consts: a program over all the consts."""
    j = body.jaxpr
    invars = ([Var(a) for a in before] + j.invars[:n_own] + [Var(a) for a in after] +
              j.invars[n_own:])
    return ClosedJaxpr(Jaxpr(j.constvars, invars, j.eqns, j.outvars), body.consts)


def _abstract_eval(*avals, num_consts, num_aux, matvec, vecmat, solve, transpose_solve):
    b = avals[num_consts:]
    want = matvec.out_avals
    if not J.same_types(b, want):
        raise TypeError(f"linear_solve: argument 'b' has types "
                        f"{[a.str_short() for a in b]}, but the operator maps to "
                        f"{[w.str_short() for w in want]}")
    return list(solve.out_avals)


def _impl(*args, num_consts, num_aux, matvec, vecmat, solve, transpose_solve):
    return eval_jaxpr(solve.jaxpr, solve.consts, *args)


_impl.interpreted = True  # runs on Arrays; the compiler inlines the solve program


def _params(num_consts, num_aux, matvec, vecmat, solve, transpose_solve) -> dict:
    return dict(num_consts=num_consts, num_aux=num_aux, matvec=matvec, vecmat=vecmat,
                solve=solve, transpose_solve=transpose_solve)


def _jvp(primals, tangents, **params):
    nc, n_aux = params["num_consts"], params["num_aux"]
    consts = list(primals[:nc])
    outs = linear_solve_p.bind(*primals, **params)
    nx = len(outs) - n_aux
    x = outs[:nx]
    c_tans, b_tans = tangents[:nc], tangents[nc:]
    matvec = params["matvec"]
    if all(type(t) is Zero for t in c_tans):
        mv_tans = [Zero(tangent_aval(a)) for a in matvec.out_avals]
    else:  # A'(x): the operator's tangent in its consts, at the solution
        _, mv_tans, _ = jvp_flat(
            lambda *cs: eval_jaxpr(matvec.jaxpr, matvec.consts, *cs, *x), consts,
            list(c_tans), name="jvp of linear_solve's matvec")
    rhs = []
    for bt, mt in zip(b_tans, mv_tans):
        if type(mt) is Zero:
            rhs.append(bt)
        else:
            rhs.append(sub_p.bind(instantiate(bt), mt))
    aux_tans = [Zero(tangent_aval(a)) for a in params["solve"].out_avals[nx:]]
    if all(type(r) is Zero for r in rhs):
        return outs, [Zero(tangent_aval(a)) for a in params["solve"].out_avals]
    x_dot = linear_solve_p.bind(*consts, *[instantiate(r) for r in rhs], **params)[:nx]
    return outs, list(x_dot) + aux_tans


def _transpose(cts, *args, **params):
    nc, n_aux = params["num_consts"], params["num_aux"]
    consts, b = args[:nc], args[nc:]
    if any(is_undefined(c) for c in consts):
        raise TypeError("linear_solve: the operator's values are not linear inputs; only the "
                        "right-hand side 'b' is")
    if params["transpose_solve"] is None:
        raise TypeError("custom_linear_solve: reverse-mode differentiation needs "
                        "'transpose_solve' (or symmetric=True)")
    nx = len(b)
    ct_x = [instantiate(c) for c in cts[:nx]]
    solve = params["solve"]
    t_params = _params(nc, 0, params["vecmat"], params["matvec"], params["transpose_solve"],
                       J.take_outputs(solve, range(nx)) if n_aux else solve)
    ct_b = linear_solve_p.bind(*consts, *ct_x, **t_params)
    return [None] * nc + [c if is_undefined(v) else None for c, v in zip(ct_b, b)]


def _batch(vals, dims, *, axis_info, **params):
    size, nc = axis_info.size, params["num_consts"]
    c_b = [d is not None for d in dims[:nc]]
    consts = [move_bdim(v, d, 0, size) if d is not None else v
              for v, d in zip(vals[:nc], dims[:nc])]
    b = [move_bdim(v, d, 0, size) for v, d in zip(vals[nc:], dims[nc:])]  # all batched
    flags = c_b + [True] * len(b)
    new = {k: (None if params[k] is None else J.batch_jaxpr(params[k], axis_info, flags,
                                                            True)[0])
           for k in _PROGRAMS}
    outs = linear_solve_p.bind(*consts, *b, **_params(nc, params["num_aux"], **new))
    return outs, [0] * len(outs)


_batch.needs_axis = True

linear_solve_p.abstract_eval = _abstract_eval
linear_solve_p.cpu = _impl
linear_solve_p.reference = _impl
linear_solve_p.jvp = _jvp
linear_solve_p.transpose = _transpose
linear_solve_p.batch = _batch
