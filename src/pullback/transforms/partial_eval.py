"""Online partial evaluation: run a function on partly known inputs, computing what depends on
known values right away and staging the rest into a Jaxpr.

Reverse mode is jvp followed by this: the primal computation is known (it runs, eagerly or at
the level below), the tangent computation is unknown and becomes the linear Jaxpr that
``transpose`` runs backwards. Because known values are real values, Python control flow on
them works inside ``grad``, as in JAX.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence

from ..tracer import core, pytree
from ..tracer.avals import ShapedArray
from ..tracer.ir import ClosedJaxpr, Eqn, Jaxpr, Var, user_source_info


class PartialVal(NamedTuple):
    """A value that is either known (``const``) or only abstractly known (``aval``)."""

    aval: ShapedArray
    const: Any

    @classmethod
    def known(cls, val: Any) -> "PartialVal":
        return cls(core.get_aval(val), val)

    @classmethod
    def unknown(cls, aval: ShapedArray) -> "PartialVal":
        return cls(aval, None)

    @property
    def is_known(self) -> bool:
        return self.const is not None


class _Input(NamedTuple):
    pass


class _Const(NamedTuple):
    val: Any


class _EqnRecipe(NamedTuple):
    prim: core.Primitive
    inputs: list
    params: dict
    out_tracers: list  # filled after creation
    source_info: Any


class PETracer(core.Tracer):
    __slots__ = ("pval", "recipe")

    def __init__(self, trace: "PETrace", pval: PartialVal, recipe: Any):
        self._trace = trace
        self.pval = pval
        self.recipe = recipe

    @property
    def aval(self) -> ShapedArray:
        return self.pval.aval

    def full_lower(self) -> Any:
        return core.full_lower(self.pval.const) if self.pval.is_known else self

    def to_concrete_value(self) -> Any:
        c = self.pval.const
        if c is None:
            return None
        return c.to_concrete_value() if hasattr(c, "to_concrete_value") else None


class PETrace(core.Trace):
    __slots__ = ()

    def new_arg(self, pval: PartialVal) -> PETracer:
        return PETracer(self, pval, _Input() if not pval.is_known else None)

    def pure(self, val: Any) -> PETracer:
        return PETracer(self, PartialVal.known(val), None)

    lift = pure

    def instantiate_const(self, t: PETracer) -> PETracer:
        if t.pval.is_known:
            return PETracer(self, PartialVal.unknown(t.aval), _Const(t.pval.const))
        return t

    def process_primitive(self, prim: core.Primitive, tracers: list, params: dict) -> Any:
        if all(t.pval.is_known for t in tracers):
            return prim.bind(*[core.full_lower(t) for t in tracers], **params)
        if prim.partial_eval is not None:
            return prim.partial_eval(self, tracers, **params)
        return self.stage(prim, tracers, params)

    def stage(self, prim: core.Primitive, tracers: Sequence[PETracer], params: dict,
              out_avals: Any = None) -> Any:
        """Record ``prim`` applied to ``tracers`` as unknown (known operands become
        residuals)."""
        ins = [self.instantiate_const(t) for t in tracers]
        if out_avals is None:
            out_avals = prim.rule("abstract_eval")(*[t.aval for t in ins], **params)
        avals = out_avals if prim.multiple_results else [out_avals]
        recipe = _EqnRecipe(prim, ins, params, [], user_source_info())
        outs = [PETracer(self, PartialVal.unknown(a), recipe) for a in avals]
        recipe.out_tracers.extend(outs)
        return outs if prim.multiple_results else outs[0]


def _tracers_to_jaxpr(in_tracers: Sequence[PETracer],
                      out_tracers: Sequence[PETracer]) -> ClosedJaxpr:
    """The Jaxpr computing the unknown ``out_tracers`` from ``in_tracers`` (and constants)."""
    var_of: dict[int, Var] = {}
    constvars: list[Var] = []
    consts: list[Any] = []
    eqns: list[Eqn] = []
    done: set[int] = set()
    const_var: dict[int, Var] = {}

    def var(t: PETracer) -> Var:
        v = var_of.get(id(t))
        if v is None:
            v = var_of[id(t)] = Var(t.aval)
        return v

    invars = [var(t) for t in in_tracers]
    in_ids = {id(t) for t in in_tracers}
    # iterative post-order walk over recipes (deep programs would overflow recursion)
    order: list[PETracer] = []
    seen: set[int] = set()
    stack: list[tuple[PETracer, bool]] = [(t, False) for t in reversed(out_tracers)]
    while stack:
        t, expanded = stack.pop()
        if id(t) in seen and not expanded:
            continue
        if expanded:
            order.append(t)
            continue
        seen.add(id(t))
        stack.append((t, True))
        if isinstance(t.recipe, _EqnRecipe):
            for i in reversed(t.recipe.inputs):
                if id(i) not in seen:
                    stack.append((i, False))
    for t in order:
        r = t.recipe
        if id(t) in in_ids:
            continue
        if isinstance(r, _Const):
            prev = const_var.get(id(r.val))
            if prev is not None:  # one residual per value, however often it was instantiated
                var_of[id(t)] = prev
                continue
            constvars.append(var(t))
            consts.append(r.val)
            const_var[id(r.val)] = var(t)
        elif isinstance(r, _EqnRecipe):
            if id(r) in done:
                continue
            done.add(id(r))
            eqns.append(Eqn(r.prim, [var(i) for i in r.inputs], r.params,
                            [var(o) for o in r.out_tracers], r.source_info))
        elif isinstance(r, _Input):
            raise ValueError("partial_eval: an input tracer outside the given inputs")
    return ClosedJaxpr(Jaxpr(constvars, invars, eqns, [var(t) for t in out_tracers]), consts)


def partial_eval_flat(fun: Callable, pvals_in: Sequence[PartialVal], name: str = "linearize"
                      ) -> tuple[ClosedJaxpr, list[PartialVal], Any]:
    """Run ``fun`` (flat inputs → pytree) on partial values.

    Returns the Jaxpr of the unknown outputs (inputs: the unknown inputs; constvars: the known
    values it needs, i.e. the residuals), every output's PartialVal, and the output tree.
    """
    with core.new_main(PETrace, debug_name=name) as main:
        trace = PETrace(main)
        tracers = [trace.new_arg(pv) for pv in pvals_in]
        out = fun(*tracers)
        leaves, tree = pytree.tree_flatten(out)
        outs = [trace.full_raise(x) for x in leaves]
        pvals_out = [t.pval for t in outs]
        unknown_in = [t for t, pv in zip(tracers, pvals_in) if not pv.is_known]
        unknown_out = [trace.instantiate_const(t) for t in outs if not t.pval.is_known]
        closed = _tracers_to_jaxpr(unknown_in, unknown_out)
    return closed, pvals_out, tree
