"""Moving work out of scan bodies into whole-sequence operations.

A loop body runs its products one time step at a time: small matrices, one after the other.
Two kinds of product need no loop at all, and become one large product outside it:

- Carry-independent products: a ``dot_general`` whose operands depend only on the constants
  and ``xs`` (an RNN's input projection ``x_t @ W``). The computation leading to it is batched
  over time (``vmap`` of that part of the body) before the loop, and its result enters the
  body as a new ``xs``.
- Accumulated products: a carry that only accumulates, ``acc' = acc + term`` with ``acc`` read
  nowhere else, where every term is a ``dot_general`` or ``reduce_sum`` (optionally
  transposed) of values that change with time (a weight gradient in a transposed scan:
  ``acc + h_t^T g_t``). The carry is dropped; the body emits the terms' operands as new ``ys``
  (operands that are ``xs`` already are read from them), and after the loop one product
  contracting over time as well gives the sum: ``acc0 + H^T G``.

Both change only the order of floating-point sums (one blocked product instead of a running
sum), as XLA's own loop optimizations do.
"""
from __future__ import annotations

from typing import Any

from ...primitives.dot import dot_general_p
from ...primitives.elementwise import add_p
from ...primitives.movement import transpose_p
from ...primitives.reductions import reduce_sum_p
from ...tracer.avals import ShapedArray
from ...tracer.ir import ClosedJaxpr, Eqn, Jaxpr, Var
from ..control_flow.jaxprs import batch_jaxpr
from ..jit_primitive import jit_p
from ..vmap import AxisInfo
from .dce import dce_jaxpr
from .inline import inline_jit_calls

_ADDS = ("add", "add_any")


def hoist_scans(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Rewrite every ``scan`` of ``closed`` (not inside sub-jaxprs) as described above.

    Args:
      closed: the program; it is not modified.

    Returns:
      An equivalent ClosedJaxpr (``closed`` itself when no scan changed).
    """
    jaxpr = closed.jaxpr
    eqns, changed = [], False
    for eqn in jaxpr.eqns:
        new = _hoist(eqn) if eqn.primitive.name == "scan" and eqn.params["length"] > 1 else None
        if new is None:
            eqns.append(eqn)
        else:
            eqns.extend(new)
            changed = True
    if not changed:
        return closed
    out = ClosedJaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, jaxpr.outvars), closed.consts)
    return inline_jit_calls(out)  # the batched pre-computation is a jit call: inline it


class _Body:
    """A scan body's variables by role and by what they depend on."""

    def __init__(self, eqn: Eqn):
        p = eqn.params
        self.closed: ClosedJaxpr = p["jaxpr"]
        j = self.closed.jaxpr
        nc, nk = p["num_consts"], p["num_carry"]
        self.nc, self.nk, self.length = nc, nk, p["length"]
        self.consts, self.carry, self.xs = j.invars[:nc], j.invars[nc:nc + nk], j.invars[nc + nk:]
        self.producer: dict[Var, Eqn] = {}
        self.uses: dict[Var, int] = {}
        varying = set(self.carry) | set(self.xs)
        self.carry_dep: set[Var] = set(self.carry)
        for e in j.eqns:
            ins = [a for a in e.invars if isinstance(a, Var)]
            for a in ins:
                self.uses[a] = self.uses.get(a, 0) + 1
            if any(a in self.carry_dep for a in ins):
                self.carry_dep.update(e.outvars)
            if any(a in varying for a in ins):
                varying.update(e.outvars)
            for v in e.outvars:
                self.producer[v] = e
        for a in j.outvars:
            if isinstance(a, Var):
                self.uses[a] = self.uses.get(a, 0) + 1
        self.varying = varying


def _hoist(eqn: Eqn) -> list[Eqn] | None:
    b = _Body(eqn)
    j = b.closed.jaxpr
    # 1. carry-independent products that vary with time
    hoisted = [e for e in j.eqns if e.primitive.name == "dot_general" and
               e.outvars[0] in b.varying and e.outvars[0] not in b.carry_dep]
    # 2. carries that only accumulate products of time-varying values
    accums = {}
    for k in range(b.nk):
        terms = _accumulation(b, k)
        if terms is not None:
            accums[k] = terms
    if not hoisted and not accums:
        return None
    ins = list(eqn.invars)
    o_consts, o_init = ins[:b.nc], ins[b.nc:b.nc + b.nk]
    o_xs = ins[b.nc + b.nk:]
    xs_outer = dict(zip(b.xs, o_xs))
    pre: list[Eqn] = []
    new_x_vars = [e.outvars[0] for e in hoisted]
    new_x_outer: list[Var] = []
    if hoisted:
        pre_eqn, new_x_outer = _batched_precompute(b, new_x_vars, o_consts, o_xs)
        pre.append(pre_eqn)
    # the new ys: operands of accumulated terms that are not xs already (each once)
    new_ys: list[Var] = []
    for terms in accums.values():
        for _, _, opnds in terms:
            for u in opnds:
                if u not in xs_outer and u not in new_ys:
                    new_ys.append(u)
    keep = [k for k in range(b.nk) if k not in accums]
    skip = {id(e) for e in hoisted} | {id(b.producer[j.outvars[k]]) for k in accums}
    body = Jaxpr(j.constvars, b.consts + [b.carry[k] for k in keep] + b.xs + new_x_vars,
                 [e for e in j.eqns if id(e) not in skip],
                 [j.outvars[k] for k in keep] + list(j.outvars[b.nk:]) + new_ys)
    body = dce_jaxpr(ClosedJaxpr(body, b.closed.consts))
    ys_outer = [Var(ShapedArray((b.length,) + u.aval.shape, u.aval.dtype)) for u in new_ys]
    params = dict(eqn.params, jaxpr=body, num_carry=len(keep))
    scan = Eqn(eqn.primitive, o_consts + [o_init[k] for k in keep] + o_xs + new_x_outer,
               params, [eqn.outvars[k] for k in keep] + list(eqn.outvars[b.nk:]) + ys_outer,
               eqn.source_info)
    stacked = dict(xs_outer)
    stacked.update(zip(new_ys, ys_outer))
    post: list[Eqn] = []
    for k, terms in accums.items():
        total = None
        for kind, params_t, opnds in terms:
            v = _whole_term(kind, params_t, [stacked[u] for u in opnds], post, eqn.source_info)
            total = v if total is None else _emit(post, "add", [total, v], {}, eqn.source_info)
        post.append(Eqn(_prim("add"), [o_init[k], total], {}, [eqn.outvars[k]],
                        eqn.source_info))
    return pre + [scan] + post


def _accumulation(b: _Body, k: int) -> list[tuple] | None:
    """The terms of carry k's accumulation ``acc + sum(terms)`` as (kind, params, operands),
    kind "dot"/"dot^T"/"sum"; None when carry k is not such an accumulator."""
    j = b.closed.jaxpr
    acc, out = b.carry[k], j.outvars[k]
    if not isinstance(out, Var) or b.uses.get(out) != 1 or b.uses.get(acc) != 1:
        return None
    e = b.producer.get(out)
    if e is None or e.primitive.name not in _ADDS or list(e.invars).count(acc) != 1 or \
            e.outvars[0].aval != acc.aval:
        return None
    (t,) = [a for a in e.invars if a is not acc]
    terms: list[tuple] = []
    return terms if _terms(b, t, terms) else None


def _terms(b: _Body, t: Any, out: list) -> bool:
    if not isinstance(t, Var) or t not in b.varying:
        return False
    e = b.producer.get(t)
    if e is None:
        return False
    name = e.primitive.name
    if name in _ADDS and e.outvars[0].aval == e.invars[0].aval == e.invars[1].aval:
        return _terms(b, e.invars[0], out) and _terms(b, e.invars[1], out)
    transposed = None
    if name == "transpose" and len(e.invars[0].aval.shape) == 2:
        transposed, t = e, e.invars[0]
        e = b.producer.get(t) if isinstance(t, Var) else None
        if e is None:
            return False
        name = e.primitive.name
    opnds = list(e.invars)
    if not all(isinstance(u, Var) and u in b.varying for u in opnds):
        return False  # a loop-invariant operand: not a sum over time of products
    if name == "dot_general":
        out.append(("dot^T" if transposed else "dot", e.params, opnds))
        return True
    if name == "reduce_sum" and transposed is None:
        out.append(("sum", e.params, opnds))
        return True
    return False


def _batched_precompute(b: _Body, want: list[Var], o_consts: list, o_xs: list
                        ) -> tuple[Eqn, list[Var]]:
    """A call computing ``want`` for every time step at once (the body's carry-independent part
    batched over time), and its stacked results."""
    j = b.closed.jaxpr
    needed: set[Var] = set(want)
    part = []
    for e in reversed(j.eqns):
        if any(v in needed for v in e.outvars):
            part.append(e)
            needed.update(a for a in e.invars if isinstance(a, Var))
    part.reverse()
    pre = ClosedJaxpr(Jaxpr(j.constvars, b.consts + b.xs, part, want), b.closed.consts)
    batched, _ = batch_jaxpr(pre, AxisInfo(b.length, None), [False] * b.nc + [True] * len(b.xs),
                             True)
    outs = [Var(ShapedArray((b.length,) + v.aval.shape, v.aval.dtype)) for v in want]
    return Eqn(jit_p, list(o_consts) + list(o_xs), {"name": "scan_hoisted", "jaxpr": batched},
               outs), outs


def _whole_term(kind: str, params: dict, opnds: list, post: list, src: Any) -> Var:
    """The term summed over time: its operation on the stacked operands, contracting (or
    reducing) the leading time axis too."""
    if kind == "sum":
        axes = (0,) + tuple(a + 1 for a in params["axes"])
        return _emit(post, "reduce_sum", opnds, dict(params, axes=axes), src)
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    dims = (((0,) + tuple(d + 1 for d in lc), (0,) + tuple(d + 1 for d in rc)),
            (tuple(d + 1 for d in lb), tuple(d + 1 for d in rb)))
    v = _emit(post, "dot_general", opnds, dict(params, dimension_numbers=dims), src)
    if kind == "dot^T":
        v = _emit(post, "transpose", [v], {"permutation": (1, 0)}, src)
    return v


def _emit(eqns: list, name: str, ins: list, params: dict, src: Any) -> Var:
    prim = _prim(name)
    aval = prim.rule("abstract_eval")(*[a.aval for a in ins], **params)
    out = Var(aval)
    eqns.append(Eqn(prim, ins, params, [out], src))
    return out


def _prim(name: str) -> Any:
    return {"dot_general": dot_general_p, "add": add_p, "transpose": transpose_p,
            "reduce_sum": reduce_sum_p}[name]


__all__ = ["hoist_scans"]
