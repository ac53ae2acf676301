"""Staging: running a Python function on tracers that record every primitive into a Jaxpr."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from . import core, pytree
from .array import Array
from .avals import ShapedArray, check_result_size
from .depth import ensure_headroom
from .ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, locate_error, user_source_info
from .ir import current as ir_current


class JaxprBuilder:
    """What one staging level has recorded so far."""

    __slots__ = ("eqns", "tracer_vars", "const_vars", "const_vals", "keep", "fun_name")

    def __init__(self, fun_name: str):
        self.eqns: list[Eqn] = []
        self.tracer_vars: dict[int, Var] = {}     # id(tracer) -> its Var
        self.const_vars: dict[int, Var] = {}      # id(constant) -> constvar
        self.const_vals: list[tuple[Var, Any]] = []
        self.keep: list[Any] = []                 # keeps ids above stable
        self.fun_name = fun_name

    def new_var(self, tracer: "JaxprTracer") -> Var:
        v = Var(tracer.aval)
        self.tracer_vars[id(tracer)] = v
        self.keep.append(tracer)
        return v

    def atom(self, t: "JaxprTracer") -> Var | Literal:
        if t._literal is not None:
            return Literal(t._literal, t.aval)
        return self.tracer_vars[id(t)]

    def const_tracer(self, trace: "JaxprTrace", val: Any) -> "JaxprTracer":
        var = self.const_vars.get(id(val))
        if var is None:
            t = JaxprTracer(trace, core.get_aval(val), None, " (a constant captured by "
                            f"{self.fun_name})")
            var = self.new_var(t)
            self.const_vars[id(val)] = var
            self.const_vals.append((var, val))
            self.keep.append(val)
            return t
        t = JaxprTracer(trace, var.aval, None, "")
        self.tracer_vars[id(t)] = var
        self.keep.append(t)
        return t

    def to_closed_jaxpr(self, in_tracers: Sequence["JaxprTracer"],
                        out_tracers: Sequence["JaxprTracer"]) -> ClosedJaxpr:
        constvars = [v for v, _ in self.const_vals]
        consts = [c for _, c in self.const_vals]
        invars = [self.tracer_vars[id(t)] for t in in_tracers]
        outvars = [self.atom(t) for t in out_tracers]
        return ClosedJaxpr(Jaxpr(constvars, invars, list(self.eqns), outvars), consts)


class JaxprTracer(core.Tracer):
    __slots__ = ("_aval", "_literal", "_source")

    def __init__(self, trace: "JaxprTrace", aval: ShapedArray, literal: Any, source: str):
        self._trace = trace
        self._aval = aval
        self._literal = literal
        self._source = source

    @property
    def aval(self) -> ShapedArray:
        return self._aval

    def _source_description(self) -> str:
        return self._source


def _is_scalar_literal(val: Any) -> bool:
    if isinstance(val, (bool, int, float, complex, np.generic)):
        return True
    if isinstance(val, np.ndarray):
        return val.ndim == 0
    v = getattr(val, "_value", None)  # a concrete Array
    return isinstance(v, np.ndarray) and v.ndim == 0


class JaxprTrace(core.Trace):
    """A staging level: records primitives instead of running them."""

    __slots__ = ()

    @property
    def builder(self) -> JaxprBuilder:
        return self.main.payload

    def new_arg(self, aval: ShapedArray, source: str) -> JaxprTracer:
        t = JaxprTracer(self, aval, None, source)
        self.builder.new_var(t)
        return t

    def pure(self, val: Any) -> JaxprTracer:
        if _is_scalar_literal(val):
            # literals are kept as Arrays, so evaluating the Jaxpr keeps their weak type
            aval = core.get_aval(val)
            if not isinstance(val, Array):
                val = Array(np.asarray(val, aval.dtype), aval.weak_type)
            return JaxprTracer(self, aval, val, "")
        return self.builder.const_tracer(self, val)

    def lift(self, tracer: core.Tracer) -> JaxprTracer:
        # a value of an outer level, closed over: it becomes a constant of this Jaxpr
        return self.builder.const_tracer(self, tracer)

    def process_primitive(self, prim: core.Primitive, tracers: list, params: dict) -> Any:
        avals = [t.aval for t in tracers]
        out_avals = prim.rule("abstract_eval")(*avals, **params)
        check_result_size(prim.name, out_avals)
        src = user_source_info()
        where = f" (created by '{prim.name}' at {src})" if src else f" (created by '{prim.name}')"
        b = self.builder
        if prim.multiple_results:
            outs = [JaxprTracer(self, a, None, where) for a in out_avals]
        else:
            outs = [JaxprTracer(self, out_avals, None, where)]
        outvars = [b.new_var(t) for t in outs]
        b.eqns.append(Eqn(prim, [b.atom(t) for t in tracers], params, outvars, src))
        return outs if prim.multiple_results else outs[0]


def fun_name(fun: Callable) -> str:
    return getattr(fun, "__name__", None) or type(fun).__name__


# Beyond this many nested traces, each new one makes sure of room for as many again.
_DEEP_NESTING = 16
_FRAMES_PER_NESTING = 12


def trace_to_jaxpr(fun: Callable, in_avals: Sequence[ShapedArray], debug_name: str = "",
                   arg_names: Sequence[str] | None = None) -> tuple[ClosedJaxpr, Any]:
    """Trace ``fun`` (taking flat arrays, returning a pytree) at the given input avals.

    Returns the ClosedJaxpr over the flat outputs and the output tree structure.
    """
    name = debug_name or fun_name(fun)
    builder = JaxprBuilder(name)
    with core.new_base_main(JaxprTrace, builder, debug_name=name) as main:
        if main.level > _DEEP_NESTING:
            # nested traces (a jit of a jit of ...) recurse through several frames each
            ensure_headroom(_FRAMES_PER_NESTING * _DEEP_NESTING)
        trace = JaxprTrace(main)
        names = arg_names or [f"argument {i}" for i in range(len(in_avals))]
        in_tracers = [trace.new_arg(a, f" ({n} of {name})") for a, n in zip(in_avals, names)]
        out = fun(*in_tracers)
        out_leaves, out_tree = pytree.tree_flatten(out)
        for leaf in out_leaves:
            if not core.is_valid_value(leaf):
                raise TypeError(f"{name} returned a value of type {type(leaf).__name__}; "
                                "transformed functions must return arrays (or pytrees of them)")
        out_tracers = [trace.full_raise(x) for x in out_leaves]
        closed = builder.to_closed_jaxpr(in_tracers, out_tracers)
    return closed, out_tree


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any) -> list[Any]:
    """Evaluate ``jaxpr`` by binding each equation's primitive: under any active trace."""
    env: dict[int, Any] = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[v.id] = x
    for v, x in zip(jaxpr.invars, args):
        env[v.id] = x

    def read(a: Any) -> Any:
        return a.val if isinstance(a, Literal) else env[a.id]

    ctx = ir_current
    outer = ctx[0]
    for eqn in jaxpr.eqns:
        ctx[0] = eqn.source_info or outer
        try:
            out = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
        except Exception as e:
            locate_error(e, eqn)
            raise
        finally:
            ctx[0] = outer
        if eqn.primitive.multiple_results:
            for v, x in zip(eqn.outvars, out):
                env[v.id] = x
        else:
            env[eqn.outvars[0].id] = out
    return [read(a) for a in jaxpr.outvars]


def eval_closed_jaxpr(closed: ClosedJaxpr, *args: Any) -> list[Any]:
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)
