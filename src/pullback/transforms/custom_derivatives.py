"""custom_jvp and custom_vjp: user-defined derivative rules, as in JAX.

A call binds a call primitive carrying the traced primal program and the user's rules; each
transformation handles it: evaluation runs the primal, jvp runs the custom rule, vmap vectorizes
the primal and the rules together, staging records the call.

custom_vjp under jvp emits ``custom_lin``: a primitive linear in the tangents whose transpose is
the user's ``bwd`` (so reverse mode uses the custom rule) and whose direct evaluation
differentiates the primal in forward mode (so forward mode works where JAX raises).

Traced values a custom_jvp's or custom_vjp's function closes over: those of transformations below its
arguments' (an enclosing jit's or vmap's) are constants to the rule and become leading operands
of the call; a closure over a value as high as the arguments' (one being differentiated) makes
the function its own derivative (it is inlined).
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from ..primitives.rules import Zero, instantiate, not_applicable, tangent_aval
from ..tracer import core, pytree
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive
from ..tracer.ir import ClosedJaxpr, Jaxpr
from ..tracer.staging import eval_jaxpr, trace_to_jaxpr
from .array_ops import as_operands
from .jvp import jvp_flat as _jvp_of
from .vmap import moveaxis_to, vmap


def _interpret(*args: Any, call_jaxpr: Any, **params: Any) -> list:
    return eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args)


_interpret.interpreted = True


def _out_avals(*avals: Any, call_jaxpr: Any, **params: Any) -> list:
    return call_jaxpr.out_avals


def _split_static(nondiff_argnums: tuple, args: tuple) -> tuple[dict, list]:
    static = {i: args[i] for i in nondiff_argnums}
    dyn = [a for i, a in enumerate(args) if i not in static]
    return static, dyn


def _traced(leaves: Sequence) -> bool:
    # Concrete operands only: no transformation sees the call, so (as in JAX) it runs the
    # function eagerly, without tracing it to a call primitive first (twice the cost of a
    # small function such as nn.relu).
    return any(isinstance(x, core.Tracer) for x in leaves)


def _merge(static: dict, dyn: Sequence, n: int) -> list:
    it = iter(dyn)
    return [static[i] if i in static else next(it) for i in range(n)]


# ---- custom_jvp ----

custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)
custom_jvp_call_p.abstract_eval = _out_avals
custom_jvp_call_p.cpu = _interpret
custom_jvp_call_p.reference = _interpret
custom_jvp_call_p.transpose = not_applicable("a call primitive; its jvp rule emits what is "
                                             "transposed")


def _closure_differentiated(tangents, num_consts, closure_traces) -> bool:
    # a value the function closes over is differentiated too, or the rules close over values
    # of a transformation that has returned: the function itself is differentiated
    return any(type(t) is not Zero for t in tangents[:num_consts]) or \
        not all(m.alive for m in closure_traces)


def _differentiate_call(call_jaxpr, primals, tangents):
    def interpreted(*xs):
        return eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *xs)
    outs, tans, _ = _jvp_of(interpreted, primals, tangents,
                            name="custom rule closing over traced values")
    return outs, tans


def _vmap_call(call_jaxpr, vals, dims):
    # a batched value the function closes over: vmap the function (no rule to batch with it)
    f = vmap(lambda *xs: eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *xs),
             in_axes=tuple(dims), out_axes=0)
    return list(f(*vals)), [0] * len(call_jaxpr.out_avals)


def _custom_jvp_jvp(primals, tangents, *, call_jaxpr, jvp_flat, fun_flat, num_consts,
                    closure_traces):
    if _closure_differentiated(tangents, num_consts, closure_traces):
        return _differentiate_call(call_jaxpr, primals, tangents)
    tans = [instantiate(t) for t in tangents[num_consts:]]
    outs = jvp_flat(primals[num_consts:], tans)
    n = len(call_jaxpr.out_avals)
    return outs[:n], outs[n:]


def _custom_jvp_batch(vals, dims, *, call_jaxpr, jvp_flat, fun_flat, num_consts,
                      closure_traces):
    if any(d is not None for d in dims[:num_consts]):
        return _vmap_call(call_jaxpr, vals, dims)
    vals, dims = vals[num_consts:], dims[num_consts:]
    # every operand is mapped at axis 0 once _batched_vals has moved (or broadcast) it there
    n = len(call_jaxpr.out_avals)
    bfun = vmap(lambda *xs: fun_flat(*xs), in_axes=0, out_axes=0)
    bjvp = vmap(lambda ps, ts: jvp_flat(list(ps), list(ts)), in_axes=0, out_axes=0)
    outs = _bind_custom_jvp(lambda *xs: list(bfun(*xs)),
                            lambda ps, ts: list(bjvp(tuple(ps), tuple(ts))),
                            _batched_vals(vals, dims))
    return outs, [0] * n


def _batched_vals(vals: list, dims: list) -> list:
    # unmapped operands get a broadcast batch axis so every operand is mapped at 0
    size = next(core.get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    return [moveaxis_to(v, d, 0, size) for v, d in zip(vals, dims)]


custom_jvp_call_p.jvp = _custom_jvp_jvp
custom_jvp_call_p.batch = _custom_jvp_batch


def _level(x: Any) -> int:
    return x._trace.main.level if isinstance(x, core.Tracer) else -1


def _hoist_closure(closed: ClosedJaxpr, args: list) -> tuple[ClosedJaxpr | None, list]:
    """The traced values a custom rule's function closes over as leading operands of its
    program: (program, those values), or (None, []) when the function is to be inlined.

    Values of transformations below the arguments' (an enclosing jit's, under jit(grad)) are
    constants to the rule. Values as high as the arguments' (a value being differentiated)
    make the function itself the derivative: it is inlined."""
    consts = [c for c in closed.consts if isinstance(c, core.Tracer)]
    if not consts:
        return closed, []
    top = max(_level(a) for a in args)
    if any(_level(c) >= top for c in consts):
        return None, []
    j = closed.jaxpr
    cv = [v for v, c in zip(j.constvars, closed.consts) if isinstance(c, core.Tracer)]
    rest = [(v, c) for v, c in zip(j.constvars, closed.consts) if not isinstance(c, core.Tracer)]
    return ClosedJaxpr(Jaxpr([v for v, _ in rest], cv + j.invars, j.eqns, j.outvars),
                       [c for _, c in rest]), consts


def _bind_custom_jvp(fun_flat: Callable, jvp_flat: Callable, args: list) -> list:
    avals = [core.get_aval(a) for a in args]
    closed, _ = trace_to_jaxpr(lambda *xs: list(fun_flat(*xs)), avals, debug_name="custom_jvp")
    closed, consts = _hoist_closure(closed, args)
    if closed is None:
        return list(fun_flat(*args))
    return custom_jvp_call_p.bind(*consts, *args, call_jaxpr=closed, jvp_flat=jvp_flat,
                                  fun_flat=fun_flat, num_consts=len(consts),
                                  closure_traces=tuple({c._trace.main for c in consts}))


def _type_str(a: Any) -> str:
    return f"{a.dtype.name}[{','.join(map(str, a.shape))}]"


def _check_custom_tangent(primal: Any, tangent: Any) -> None:
    """JAX's TypeError for a custom JVP rule's tangent output whose shape or dtype is not the
    tangent type of its primal output (a 64-bit NumPy value stands for its 32-bit dtype, as
    JAX canonicalizes it)."""
    pa, ta = core.get_aval(primal), core.get_aval(tangent)
    want = tangent_aval(pa)
    same_dtype = ta.dtype == want.dtype or (
        isinstance(tangent, (np.ndarray, np.generic)) and ta.dtype.itemsize == 8 and
        ta.dtype.kind == want.dtype.kind and want.dtype.itemsize == 4)
    if ta.shape != want.shape or not same_dtype:
        raise TypeError("Custom JVP rule must produce primal and tangent outputs with "
                        "corresponding shapes and dtypes. Expected "
                        f"{_type_str(want)} (tangent type of {_type_str(pa)}) but got "
                        f"{_type_str(ta)}.")


class custom_jvp:
    """A function with a custom JVP (forward-mode) rule, as ``jax.custom_jvp``.

    Define the rule with ``@f.defjvp`` (``rule(primals, tangents) -> (primal_out,
    tangent_out)``) or ``f.defjvps(*per_argument_rules)``. Arguments in ``nondiff_argnums``
    are passed through as Python values (first, to the rule).
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp: Callable | None = None

    def defjvp(self, jvp: Callable, symbolic_zeros: bool = False) -> Callable:
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps: Callable | None) -> None:
        def rule(primals, tangents):
            out = self.fun(*primals)
            tan_out = None
            for f, t in zip(jvps, tangents):
                if f is None:
                    continue
                term = f(t, out, *primals)
                tan_out = term if tan_out is None else pytree.tree_map(lambda a, b: a + b, tan_out, term)
            if tan_out is None:
                tan_out = pytree.tree_map(lambda o: instantiate(Zero.from_primal(o)), out)
            return out, tan_out
        self.jvp = rule

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {self.__name__} "
                                 "using defjvp.")
        if kwargs:
            raise TypeError("custom_jvp functions take positional arguments only")
        static, dyn = _split_static(self.nondiff_argnums, args)
        leaves, in_tree = pytree.tree_flatten(dyn)
        if not _traced(leaves):  # nothing can differentiate it: the function itself
            return self.fun(*args)
        leaves = as_operands(leaves)
        n = len(args)
        out_tree_box: list = []
        nondiff = [static[i] for i in self.nondiff_argnums]

        def fun_flat(*xs):
            out = self.fun(*_merge(static, pytree.tree_unflatten(in_tree, list(xs)), n))
            leaves_out, tree = pytree.tree_flatten(out)
            out_tree_box[:] = [tree]
            return leaves_out

        def jvp_flat(ps, ts):
            p_args = pytree.tree_unflatten(in_tree, list(ps))
            t_args = pytree.tree_unflatten(in_tree, list(ts))
            res = self.jvp(*nondiff, tuple(p_args), tuple(t_args)) if nondiff else \
                self.jvp(tuple(p_args), tuple(t_args))
            rule = getattr(self.jvp, "__name__", "jvp")
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(f"Custom JVP rule {rule} for function {self.__name__} must "
                                f"produce a pair (list or tuple of length two) representing "
                                f"primal and tangent outputs, but got {res!r}.")
            out, tan = res
            o_leaves, o_tree = pytree.tree_flatten(out)
            t_leaves, t_tree = pytree.tree_flatten(tan)
            if o_tree != t_tree:
                raise TypeError(f"Custom JVP rule {rule} for function {self.__name__} must "
                                f"produce primal and tangent outputs with equal container "
                                f"(pytree) structures, but got {o_tree} and {t_tree} "
                                "respectively.")
            for o, t in zip(o_leaves, t_leaves):
                if type(t) is not Zero:
                    _check_custom_tangent(o, t)
            return list(o_leaves) + [instantiate(t) if type(t) is Zero else t for t in t_leaves]

        outs = _bind_custom_jvp(fun_flat, jvp_flat, leaves)
        return pytree.tree_unflatten(out_tree_box[0], outs)


# ---- custom_vjp ----

custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)
custom_vjp_call_p.abstract_eval = _out_avals
custom_vjp_call_p.cpu = _interpret
custom_vjp_call_p.reference = _interpret
custom_vjp_call_p.transpose = not_applicable("a call primitive; its jvp rule emits custom_lin, "
                                             "which is transposed")


def _custom_vjp_jvp(primals, tangents, *, call_jaxpr, fwd_flat, bwd_flat, fun_flat,
                    num_consts, closure_traces):
    def interpreted(*xs):
        return eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *xs)
    if _closure_differentiated(tangents, num_consts, closure_traces):
        return _differentiate_call(call_jaxpr, primals, tangents)
    consts = list(primals[:num_consts])
    primals, tangents = primals[num_consts:], tangents[num_consts:]
    outs_res = fwd_flat(*primals)
    n = len(call_jaxpr.out_avals)
    outs, res = outs_res[:n], outs_res[n:]
    tans = [instantiate(t) for t in tangents]
    out_avals = tuple(tangent_aval(core.get_aval(o)) for o in outs)
    # (forward mode runs the closure-free program, on the closed-over values as operands)
    tan_out = custom_lin_p.bind(*consts, *primals, *res, *tans,
                                num_primals=num_consts + len(primals), num_res=len(res),
                                bwd_flat=bwd_flat, fun_flat=interpreted if num_consts else fun_flat,
                                out_avals=out_avals, num_consts=num_consts)
    return outs, tan_out


def _custom_vjp_batch(vals, dims, *, call_jaxpr, fwd_flat, bwd_flat, fun_flat, num_consts,
                      closure_traces):
    n = len(call_jaxpr.out_avals)
    if any(d is not None for d in dims[:num_consts]):
        return _vmap_call(call_jaxpr, vals, dims)
    vals, dims = vals[num_consts:], dims[num_consts:]
    bvals = _batched_vals(vals, dims)
    bfun = vmap(lambda *xs: fun_flat(*xs))
    bfwd = vmap(lambda *xs: fwd_flat(*xs))
    bbwd = vmap(lambda res, cts: bwd_flat(list(res), list(cts)), in_axes=(0, 0))
    outs = _bind_custom_vjp(lambda *xs: list(bfun(*xs)), lambda *xs: list(bfwd(*xs)),
                            lambda res, cts: list(bbwd(tuple(res), tuple(cts))), bvals)
    return outs, [0] * n


custom_vjp_call_p.jvp = _custom_vjp_jvp
custom_vjp_call_p.batch = _custom_vjp_batch


def _bind_custom_vjp(fun_flat: Callable, fwd_flat: Callable, bwd_flat: Callable,
                     args: list) -> list:
    avals = [core.get_aval(a) for a in args]
    closed, _ = trace_to_jaxpr(lambda *xs: list(fun_flat(*xs)), avals, debug_name="custom_vjp")
    closed, consts = _hoist_closure(closed, args)
    if closed is None:
        return list(fun_flat(*args))
    return custom_vjp_call_p.bind(*consts, *args, call_jaxpr=closed, fwd_flat=fwd_flat,
                                  bwd_flat=bwd_flat, fun_flat=fun_flat, num_consts=len(consts),
                                  closure_traces=tuple({c._trace.main for c in consts}))


# custom_lin: linear in the trailing tangent operands
custom_lin_p = Primitive("custom_lin", multiple_results=True)


def _custom_lin_aval(*avals, num_primals, num_res, bwd_flat, fun_flat, out_avals, num_consts):
    return list(out_avals)


def _custom_lin_forward(*args, num_primals, num_res, bwd_flat, fun_flat, out_avals,
                        num_consts):
    # forward mode: differentiate the primal function itself (its first num_consts operands
    # are values it closes over: no tangent)
    primals = list(args[:num_primals])
    tans = [Zero.from_primal(c) for c in primals[:num_consts]] + list(args[num_primals + num_res:])
    _, tan_out, _ = _jvp_of(lambda *xs: list(fun_flat(*xs)), primals, tans)
    return [instantiate(t) for t in tan_out]


_custom_lin_forward.interpreted = True


def _custom_lin_transpose(cts, *args, num_primals, num_res, bwd_flat, fun_flat, out_avals,
                          num_consts):
    res = list(args[num_primals:num_primals + num_res])
    cts = [instantiate(c) for c in cts]
    in_cts = bwd_flat(res, cts)
    return [None] * (num_primals + num_res) + list(in_cts)


def _custom_lin_batch(vals, dims, *, num_primals, num_res, bwd_flat, fun_flat, out_avals,
                      num_consts):
    bvals = _batched_vals(vals, dims)
    bfun = vmap(lambda *xs: fun_flat(*xs))
    bbwd = vmap(lambda res, cts: bwd_flat(list(res), list(cts)), in_axes=(0, 0))
    size = core.get_aval(bvals[0]).shape[0]
    b_out = tuple(ShapedArray((size,) + a.shape, a.dtype, a.weak_type) for a in out_avals)
    outs = custom_lin_p.bind(*bvals, num_primals=num_primals, num_res=num_res,
                             bwd_flat=lambda res, cts: list(bbwd(tuple(res), tuple(cts))),
                             fun_flat=lambda *xs: list(bfun(*xs)), out_avals=b_out,
                             num_consts=num_consts)
    return outs, [0] * len(out_avals)


def _custom_lin_jvp(primals, tangents, **params):
    raise TypeError("custom_lin: differentiating a custom_vjp derivative a second time is not "
                    "supported; use custom_jvp for functions needing higher derivatives")


custom_lin_p.abstract_eval = _custom_lin_aval
custom_lin_p.cpu = _custom_lin_forward
custom_lin_p.reference = _custom_lin_forward
custom_lin_p.transpose = _custom_lin_transpose
custom_lin_p.batch = _custom_lin_batch
custom_lin_p.jvp = _custom_lin_jvp


class custom_vjp:
    """A function with a custom VJP (reverse-mode) rule, as ``jax.custom_vjp``.

    Define it with ``f.defvjp(fwd, bwd)``: ``fwd(*args) -> (out, residuals)`` (residuals any
    pytree), ``bwd(*nondiff_args, residuals, out_cotangent) -> tuple`` with one cotangent per
    differentiable argument. Forward-mode differentiation (jvp, jacfwd) differentiates the
    primal function itself.
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None

    def defvjp(self, fwd: Callable, bwd: Callable, symbolic_zeros: bool = False) -> None:
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {self.__name__} "
                                 "using defvjp.")
        if kwargs:
            raise TypeError("custom_vjp functions take positional arguments only")
        static, dyn = _split_static(self.nondiff_argnums, args)
        leaves, in_tree = pytree.tree_flatten(dyn)
        if not _traced(leaves):
            return self.fun(*args)
        leaves = as_operands(leaves)
        n = len(args)
        nondiff = [static[i] for i in self.nondiff_argnums]
        out_tree_box: list = []
        res_tree_box: list = []
        name = self.__name__

        def fun_flat(*xs):
            out = self.fun(*_merge(static, pytree.tree_unflatten(in_tree, list(xs)), n))
            o, tree = pytree.tree_flatten(out)
            out_tree_box[:] = [tree]
            return o

        def fwd_flat(*xs):
            res = self.fwd(*_merge(static, pytree.tree_unflatten(in_tree, list(xs)), n))
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(f"Custom VJP fwd rule of {name} must return a pair "
                                "(output, residuals)")
            out, r = res
            o, tree = pytree.tree_flatten(out)
            if out_tree_box and tree != out_tree_box[0]:
                raise TypeError(f"Custom VJP fwd rule of {name} must produce an output with "
                                f"the structure of the function's output {out_tree_box[0]}, "
                                f"got {tree}")
            r_leaves, r_tree = pytree.tree_flatten(r)
            res_tree_box[:] = [r_tree]
            return list(o) + as_operands(r_leaves)

        def bwd_flat(res, cts):
            r = pytree.tree_unflatten(res_tree_box[0], list(res))
            ct = pytree.tree_unflatten(out_tree_box[0], list(cts))
            out = self.bwd(*nondiff, r, ct)
            if not isinstance(out, (tuple, list)):
                raise TypeError(f"Custom VJP bwd rule of {name} must return a tuple with one "
                                f"cotangent per differentiable argument, got a "
                                f"{type(out).__name__}")
            out = tuple(out)
            n_dyn = len(dyn)
            if len(out) != n_dyn:
                raise TypeError(f"Custom VJP bwd rule of {name} must return a tuple of length "
                                f"{n_dyn} (one per differentiable argument), got length "
                                f"{len(out)}")
            flat = []
            for i, (o, d) in enumerate(zip(out, dyn)):
                want = pytree.tree_structure(d)
                if o is None:
                    flat.extend(instantiate(Zero.from_primal(x))
                                for x in pytree.tree_leaves(d))
                    continue
                got_leaves, got = pytree.tree_flatten(o)
                if got != want:
                    raise TypeError(f"Custom VJP bwd rule of {name} returned a cotangent for "
                                    f"argument {i} with structure {got}, but the argument "
                                    f"has structure {want}")
                for leaf, x in zip(got_leaves, pytree.tree_leaves(d)):
                    la, xa = core.get_aval(leaf), tangent_aval(core.get_aval(x))
                    if la.shape != xa.shape:
                        raise ValueError(f"Custom VJP bwd rule of {name} returned a cotangent "
                                         f"of shape {la.shape} for argument {i}, whose "
                                         f"primal has shape {xa.shape}")
                flat.extend(got_leaves)
            return flat

        outs = _bind_custom_vjp(fun_flat, fwd_flat, bwd_flat, leaves)
        return pytree.tree_unflatten(out_tree_box[0], outs)


def closure_convert(fun: Callable, *example_args: Any) -> tuple[Callable, list]:
    """``fun`` with the traced values it closes over made explicit arguments (as JAX)."""
    leaves, tree = pytree.tree_flatten(example_args)
    closed, out_tree = trace_to_jaxpr(lambda *xs: fun(*pytree.tree_unflatten(tree, xs)),
                                      [core.get_aval(x) for x in as_operands(leaves)])
    consts = list(closed.consts)

    def converted(*args: Any) -> Any:
        n = len(args) - len(consts)
        flat, _ = pytree.tree_flatten(args[:n])
        outs = eval_jaxpr(closed.jaxpr, args[n:], *flat)
        return pytree.tree_unflatten(out_tree, outs)

    return converted, consts
