"""``checkpoint`` (``remat``): trade computation for memory in reverse mode, as
``jax.checkpoint``.

The primitive (JAX's name: ``checkpoint``) holds the traced function. Evaluated, it just runs
it. Under reverse mode its partial evaluation computes the primal outputs and keeps as
residuals only the function's inputs plus what the ``policy`` allows to save; the backward pass
recomputes the rest from those (the transpose rule partially evaluates the differentiated
program again, runs the recomputation, then transposes the linear part). Under a staging trace
the backward pass is bound as one nested ``checkpoint`` call, so common-subexpression
elimination cannot merge the recomputation with the forward pass (``prevent_cse``).

Policies follow ``jax.checkpoint_policies``: ``policy(prim, *avals, **params) -> bool`` says
whether an equation's outputs may be saved; they apply to the equations of the checkpointed
function itself (not inside nested loops or conditionals).
"""
from __future__ import annotations

import functools
import weakref
from typing import Any, Callable, Sequence

from ...primitives.rules import Zero, instantiate, is_undefined, move_bdim, tangent_aval
from ...tracer import core, pytree
from ...tracer.core import Primitive
from ...tracer.ir import ClosedJaxpr, Literal
from ...tracer.staging import eval_jaxpr, trace_to_jaxpr
from ..jit import closure_convert
from ..jvp import JVPTracer, jvp_flat
from ..passes.dce import dce_jaxpr
from ..transpose import backward_pass
from . import jaxprs as J
from ..array_ops import as_operands

remat_p = Primitive("checkpoint", multiple_results=True)

# jvp bodies made by the jvp rule -> (primal body, nonzero inputs, nonzero outputs)
_jvp_origin: "weakref.WeakKeyDictionary[ClosedJaxpr, tuple]" = weakref.WeakKeyDictionary()


def _abstract_eval(*avals, jaxpr, prevent_cse, differentiated, policy):
    want = jaxpr.in_avals
    if not J.same_types(avals, want):
        raise TypeError(f"checkpoint: the program takes {[w.str_short() for w in want]}, got "
                        f"{[a.str_short() for a in avals]}")
    return list(jaxpr.out_avals)


def _impl(*args, jaxpr, prevent_cse, differentiated, policy):
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


_impl.interpreted = True


def _jvp(primals, tangents, *, jaxpr, prevent_cse, differentiated, policy):
    nz = [type(t) is not Zero for t in tangents]
    n_out = len(jaxpr.out_avals)
    _, out_nz = J.jvp_jaxpr(jaxpr, nz, [False] * n_out)
    body, _ = J.jvp_jaxpr(jaxpr, nz, out_nz)
    _jvp_origin[body] = (jaxpr, tuple(nz), tuple(out_nz))
    ts = [t for t, f in zip(tangents, nz) if f]
    outs = remat_p.bind(*primals, *ts, jaxpr=body, prevent_cse=prevent_cse,
                        differentiated=True, policy=policy)
    it = iter(outs[n_out:])
    return outs[:n_out], [next(it) if f else Zero(tangent_aval(a))
                          for f, a in zip(out_nz, jaxpr.out_avals)]


def _saveable_eqns(primal: ClosedJaxpr, policy: Callable | None) -> list[int]:
    if policy is None:
        return []
    return [i for i, e in enumerate(primal.jaxpr.eqns)
            if policy(e.primitive, *[a.aval for a in e.invars], **e.params)]


def _eval_visiting(primal: ClosedJaxpr, args: Sequence[Any], saveable: list[int],
                   visit: Callable[[list], list]) -> list:
    """Evaluate ``primal``, passing the outputs of each equation in ``saveable`` through
    ``visit`` (which may replace them)."""
    env: dict[int, Any] = {}
    j = primal.jaxpr
    for v, x in zip(j.constvars, primal.consts):
        env[v.id] = x
    for v, x in zip(j.invars, args):
        env[v.id] = x
    read = lambda a: a.val if isinstance(a, Literal) else env[a.id]  # noqa: E731
    keep = set(saveable)
    for i, e in enumerate(j.eqns):
        out = e.primitive.bind(*map(read, e.invars), **e.params)
        outs = out if e.primitive.multiple_results else [out]
        if i in keep:
            outs = visit(outs)
        for v, x in zip(e.outvars, outs):
            env[v.id] = x
    return [read(a) for a in j.outvars]


def _unknown_program(primal: ClosedJaxpr, nz: tuple, out_nz: tuple, saveable: list[int]
                     ) -> ClosedJaxpr:
    """``(*primal inputs, *saved values, *nonzero tangents) -> nonzero output tangents``: the
    tangent computation, recomputing every primal value except the saved ones."""
    def build():
        j = primal.jaxpr
        in_avals = primal.in_avals
        saved_avals = [v.aval for i in saveable for v in j.eqns[i].outvars]
        t_avals = [tangent_aval(a) for a, f in zip(in_avals, nz) if f]
        n, n_s = len(in_avals), len(saved_avals)

        def f(*args):
            ps, saved, ts = args[:n], list(args[n:n + n_s]), args[n + n_s:]
            it = iter(ts)
            tans = [next(it) if f_ else Zero(tangent_aval(a)) for a, f_ in zip(in_avals, nz)]

            s_it = iter(saved)

            def use_saved(outs):  # the saved primal value, with the recomputed tangent
                return [JVPTracer(o._trace, next(s_it), o.tangent) if isinstance(o, JVPTracer)
                        else next(s_it) for o in outs]

            def walk(*xs):
                return _eval_visiting(primal, xs, saveable, use_saved)

            _, tans_out, _ = jvp_flat(walk, ps, tans, name="checkpoint (recomputation)")
            return [instantiate(t) for t, f_ in zip(tans_out, out_nz) if f_]

        jaxpr, _ = trace_to_jaxpr(f, list(in_avals) + saved_avals + t_avals,
                                  debug_name="checkpoint (backward)")
        return dce_jaxpr(jaxpr)  # primal values no tangent needs are not recomputed
    return J.cached(primal, ("remat-unknown", nz, out_nz, tuple(saveable)), build)


def _partial_eval(trace, tracers, *, jaxpr, prevent_cse, differentiated, policy):
    params = dict(jaxpr=jaxpr, prevent_cse=prevent_cse, differentiated=differentiated,
                  policy=policy)
    origin = _jvp_origin.get(jaxpr)
    uk = [not t.pval.is_known for t in tracers]
    if origin is None:
        return trace.stage(remat_p, tracers, params)
    primal, nz, out_nz = origin
    n = len(primal.in_avals)
    if any(uk[:n]):  # only tangents can be unknown in reverse mode; stage anything else
        return trace.stage(remat_p, tracers, params)
    # known: the primal outputs (and what the policy saves), computed once
    saveable = _saveable_eqns(primal, policy)
    p_vals = [t.pval.const for t in tracers[:n]]
    saved: list = []
    outs = _eval_visiting(primal, p_vals, saveable, lambda o: saved.extend(o) or o)
    unknown = _unknown_program(primal, nz, out_nz, saveable)
    ins = list(tracers[:n]) + [trace.pure(s) for s in saved] + list(tracers[n:])
    t_out = trace.stage(remat_p, ins, dict(params, jaxpr=unknown))
    return [trace.pure(o) for o in outs] + list(t_out)


def _transpose(cts, *args, jaxpr, prevent_cse, differentiated, policy):
    lin = [is_undefined(a) for a in args]
    nonlin = [a for a, l in zip(args, lin) if not l]
    cts = [instantiate(c) for c in cts]
    bwd = J.cached(jaxpr, ("remat-bwd", tuple(lin)), lambda: _backward_program(jaxpr, lin))
    if core.state.dynamic.level > 0 and prevent_cse:
        # staged: one nested call, opaque to CSE, so the recomputation stays in the backward
        outs = remat_p.bind(*nonlin, *cts, jaxpr=bwd, prevent_cse=True, differentiated=True,
                            policy=None)
    else:
        outs = eval_jaxpr(bwd.jaxpr, bwd.consts, *nonlin, *cts)
    it = iter(outs)
    return [next(it) if l else None for l in lin]


def _backward_program(jaxpr: ClosedJaxpr, lin: list[bool]) -> ClosedJaxpr:
    """``(*non-linear inputs, *output cotangents) -> cotangents of the linear inputs``:
    recompute the residuals, then transpose the linear part."""
    split = J.partial_eval_jaxpr(jaxpr, lin, True)
    n_res = len(split.res_avals)
    nonlin_avals = [a for a, l in zip(jaxpr.in_avals, lin) if not l]
    ct_avals = [tangent_aval(a) for a in jaxpr.out_avals]

    def f(*args):
        xs, cts = args[:len(nonlin_avals)], args[len(nonlin_avals):]
        res = eval_jaxpr(split.known.jaxpr, split.known.consts, *xs)
        u = split.unknown
        n_lin = len(u.in_avals) - n_res
        out = backward_pass(u.jaxpr, u.consts, [False] * n_res + [True] * n_lin,
                            list(res) + [None] * n_lin, list(cts))
        return [instantiate(c) for c in out[n_res:]]

    bwd, _ = trace_to_jaxpr(f, nonlin_avals + ct_avals, debug_name="checkpoint (transpose)")
    return dce_jaxpr(bwd)


def _batch(vals, dims, *, axis_info, jaxpr, prevent_cse, differentiated, policy):
    b = [d is not None for d in dims]
    body, out_b = J.batch_jaxpr(jaxpr, axis_info, b, False)
    vals = [move_bdim(v, d, 0, axis_info.size) if d is not None else v
            for v, d in zip(vals, dims)]
    outs = remat_p.bind(*vals, jaxpr=body, prevent_cse=prevent_cse,
                        differentiated=differentiated, policy=policy)
    return outs, [0 if f else None for f in out_b]


_batch.needs_axis = True

remat_p.abstract_eval = _abstract_eval
remat_p.cpu = _impl
remat_p.reference = _impl
remat_p.jvp = _jvp
remat_p.partial_eval = _partial_eval
remat_p.transpose = _transpose
remat_p.batch = _batch


# ---- the public function ----

def checkpoint(fun: Callable | None = None, *, prevent_cse: bool = True,
               policy: Callable | None = None, static_argnums: int | Sequence[int] = ()
               ) -> Callable:
    """Make ``fun`` recompute its intermediate values in the backward pass instead of saving
    them (``jax.checkpoint``).

    Args:
      fun: the function (arrays or pytrees in and out).
      prevent_cse: keep the recomputation separate from the forward pass in compiled
        programs (so the memory saving survives optimization).
      policy: which intermediate values may be saved, e.g.
        ``checkpoint_policies.dots_saveable``; default: only the inputs.
      static_argnums: positions of arguments that are Python values, not arrays.

    Returns:
      A function with ``fun``'s signature and values.
    """
    if fun is None:
        return functools.partial(checkpoint, prevent_cse=prevent_cse, policy=policy,
                                 static_argnums=static_argnums)
    statics = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    cache: dict = {}

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        n = len(args)
        st = {i % n for i in statics if -n <= i < n}
        static_vals = tuple((i, args[i]) for i in sorted(st))
        dyn = tuple(None if i in st else a for i, a in enumerate(args))
        leaves, tree = pytree.tree_flatten((dyn, kwargs))
        leaves = as_operands(leaves)
        avals = tuple(core.get_aval(x) for x in leaves)
        key = (tree, avals, static_vals)
        entry = cache.get(key)
        if entry is None:
            smap = dict(static_vals)

            def flat(*ls):
                d, kw = pytree.tree_unflatten(tree, ls)
                full = [smap[i] if i in smap else a for i, a in enumerate(d)]
                return fun(*full, **kw)

            closed, out_tree = trace_to_jaxpr(flat, avals, debug_name=getattr(
                fun, "__name__", "checkpoint"))
            entry = (closure_convert(closed), list(closed.consts), out_tree)
            if not any(isinstance(c, core.Tracer) for c in closed.consts):
                cache[key] = entry
        body, consts, out_tree = entry
        outs = remat_p.bind(*as_operands(consts), *leaves, jaxpr=body, prevent_cse=prevent_cse,
                            differentiated=False, policy=policy)
        return pytree.tree_unflatten(out_tree, outs)

    return wrapped


remat = checkpoint
