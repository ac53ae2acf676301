"""Forward-mode differentiation: the JVP trace, symbolic zero tangents, ``jvp``.

Each primitive's ``jvp`` rule takes ``(primals, tangents, **params)`` and returns
``(primal_out, tangent_out)``; tangents may be ``Zero`` (known to be zero, never materialized),
and a rule returns ``Zero`` when its output tangent is known to vanish. The tangent of an
integer or boolean value has dtype float0, as in JAX.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..tracer import core, dtypes, pytree
from ..tracer.avals import ShapedArray
from .array_ops import asarray
from ..primitives.rules import Zero, instantiate, tangent_aval  # noqa: F401 (used by reverse)


class JVPTracer(core.Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace: "JVPTrace", primal: Any, tangent: Any):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self) -> ShapedArray:
        return core.get_aval(self.primal)

    def full_lower(self) -> Any:
        # a value whose tangent is known to be zero needs no JVP level any more
        if type(self.tangent) is Zero:
            return core.full_lower(self.primal)
        return self

    def to_concrete_value(self) -> Any:
        p = self.primal
        return p.to_concrete_value() if hasattr(p, "to_concrete_value") else None

    def _source_description(self) -> str:
        p = self.primal
        return p._source_description() if isinstance(p, core.Tracer) else ""


class JVPTrace(core.Trace):
    __slots__ = ()

    def pure(self, val: Any) -> JVPTracer:
        return JVPTracer(self, val, Zero.from_primal(val))

    lift = pure

    def process_primitive(self, prim: core.Primitive, tracers: list, params: dict) -> Any:
        primals = [t.primal for t in tracers]
        tangents = [t.tangent for t in tracers]
        if all(type(t) is Zero for t in tangents):
            out = prim.bind(*primals, **params)
            if prim.multiple_results:
                return [JVPTracer(self, o, Zero.from_primal(o)) for o in out]
            return JVPTracer(self, out, Zero.from_primal(out))
        if isinstance(prim.jvp, core.NoRule):
            # integer- and bool-valued results carry no derivative: a float0 zero tangent
            # (comparisons, argmax, ... under grad); anything else without a rule raises
            out = prim.bind(*primals, **params)
            outs = out if prim.multiple_results else [out]
            if any(dtypes.is_inexact(core.get_aval(o).dtype) for o in outs):
                prim.rule("jvp")  # raises, naming the op and why it has no derivative
            tracers_out = [JVPTracer(self, o, Zero.from_primal(o)) for o in outs]
            return tracers_out if prim.multiple_results else tracers_out[0]
        primal_out, tangent_out = prim.rule("jvp")(primals, tangents, **params)
        if prim.multiple_results:
            return [JVPTracer(self, p, t) for p, t in zip(primal_out, tangent_out)]
        return JVPTracer(self, primal_out, tangent_out)


def split_aux(name: str, out: Any) -> tuple[Any, Any]:
    """``(output, aux)`` from the result of a ``has_aux`` function, or a TypeError."""
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"{name}: with has_aux=True the function must return a pair "
                        f"(output, aux), got {type(out).__name__}")
    return out[0], out[1]


def jvp_flat(fun: Callable, primals: Sequence[Any], tangents: Sequence[Any],
             name: str = "jvp", has_aux: bool = False) -> tuple:
    """Run ``fun`` (flat inputs → pytree) on JVP tracers: flat primal and tangent outputs,
    and the output tree. With ``has_aux``, ``fun`` returns ``(output, aux)`` and the aux
    pytree comes fourth, each leaf as its primal value: aux carries no derivative, so it
    must not leave as a tracer of this (finished) level, while tracers of the
    transformations around this one (jit, vmap, an outer jvp) stay as they are."""
    with core.new_main(JVPTrace, debug_name=name) as main:
        trace = JVPTrace(main)
        tracers = [JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
        out = fun(*tracers)
        if has_aux:
            out, aux = split_aux(name, out)
        leaves, tree = pytree.tree_flatten(out)
        outs = [trace.full_raise(x) for x in leaves]
        res = [o.primal for o in outs], [o.tangent for o in outs], tree
        if not has_aux:
            return res
        aux = pytree.tree_map(
            lambda x: core.full_lower(trace.full_raise(x).primal)
            if isinstance(x, core.Tracer) else x, aux)
        return res + (aux,)


def _check_tangent(p: Any, t: Any, i: int) -> Any:
    pa, ta = core.get_aval(p), core.get_aval(t)
    want = tangent_aval(pa)
    if ta.shape != want.shape or ta.dtype != want.dtype:
        # JAX's types: ValueError for a shape mismatch, TypeError for a dtype mismatch
        raise (ValueError if ta.shape != want.shape else TypeError)(f"jvp: the tangent of primal {i} must have shape {want.shape} and dtype "
                        f"{want.dtype} (the primal is {pa.str_short()}), got {ta.str_short()}")
    return t


def jvp(fun: Callable, primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> Any:
    """Forward-mode derivative: ``fun(*primals)`` and its directional derivative along
    ``tangents``.

    Args:
      fun: the function to differentiate; its arguments and outputs are pytrees of arrays.
      primals: a tuple or list of the arguments.
      tangents: the tangent of each argument, same structure, shapes and (tangent) dtypes;
        integer arguments take float0 tangents.
      has_aux: ``fun`` returns ``(output, aux)``; aux is returned as computed (not
        differentiated).

    Returns:
      ``(primals_out, tangents_out)`` (and ``aux`` when ``has_aux``).
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: 'primals' and 'tangents' must be tuples or lists of arguments")
    p_leaves, p_tree = pytree.tree_flatten(tuple(primals))
    t_leaves, t_tree = pytree.tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError(f"jvp: 'primals' and 'tangents' must have the same structure, got "
                        f"{p_tree} and {t_tree}")
    p_leaves = [asarray(p) if not isinstance(p, core.Tracer) else p for p in p_leaves]
    t_leaves = [_check_tangent(p, asarray(t) if not isinstance(t, core.Tracer) else t, i)
                for i, (p, t) in enumerate(zip(p_leaves, t_leaves))]
    t_leaves = [Zero(core.get_aval(t)) if core.get_aval(t).dtype == dtypes.float0 else t
                for t in t_leaves]
    res = jvp_flat(lambda *args: fun(*pytree.tree_unflatten(p_tree, args)), p_leaves, t_leaves,
                   has_aux=has_aux)
    outs, tans, tree = res[:3]
    tans = [instantiate(t) for t in tans]
    result = (pytree.tree_unflatten(tree, outs), pytree.tree_unflatten(tree, tans))
    return result + res[3:]
