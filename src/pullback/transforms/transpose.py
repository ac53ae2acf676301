"""Transposition: run a linear Jaxpr backwards, from output cotangents to input cotangents.

Each linear primitive's ``transpose`` rule gets ``(cotangent, *operands, **params)`` where the
operands it is linear in are ``UndefPrimal`` (their values are what is being solved for) and
the others are known values; it returns one cotangent per operand (None for known operands,
``Zero`` when known to vanish). Cotangents reaching one variable from several uses are summed.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..tracer.ir import Jaxpr, Literal, Var, locate_error
from ..primitives.rules import UndefPrimal, Zero, add_tangents


def backward_pass(jaxpr: Jaxpr, consts: Sequence[Any], linear_in: Sequence[bool],
                  args: Sequence[Any], cotangents_out: Sequence[Any]) -> list[Any]:
    """Cotangents of the linear inputs of ``jaxpr`` (None for the non-linear ones).

    Args:
      jaxpr: a Jaxpr linear in the inputs flagged by ``linear_in``.
      consts: values of its constvars.
      linear_in: which inputs are linear.
      args: the values of the non-linear inputs (entries for linear ones are ignored).
      cotangents_out: one per output (``Zero`` allowed).
    """
    known: dict[int, Any] = {}
    for v, c in zip(jaxpr.constvars, consts):
        known[v.id] = c
    for v, lin, a in zip(jaxpr.invars, linear_in, args):
        if not lin:
            known[v.id] = a
    # equations that depend only on known values are evaluated forward first
    linear_vars = {v.id for v, lin in zip(jaxpr.invars, linear_in) if lin}
    lin_eqns = []
    for eqn in jaxpr.eqns:
        if any(isinstance(a, Var) and a.id in linear_vars for a in eqn.invars):
            linear_vars.update(o.id for o in eqn.outvars)
            lin_eqns.append(eqn)
        else:
            vals = [a.val if isinstance(a, Literal) else known[a.id] for a in eqn.invars]
            out = eqn.primitive.bind(*vals, **eqn.params)
            outs = out if eqn.primitive.multiple_results else [out]
            for o, val in zip(eqn.outvars, outs):
                known[o.id] = val

    ct_env: dict[int, Any] = {}

    def write_ct(v: Any, ct: Any) -> None:
        if isinstance(v, Var) and v.id in linear_vars and ct is not None:
            prev = ct_env.get(v.id)
            ct_env[v.id] = ct if prev is None else add_tangents(prev, ct)

    for v, ct in zip(jaxpr.outvars, cotangents_out):
        write_ct(v, ct)
    for eqn in reversed(lin_eqns):
        cts = [ct_env.pop(o.id, None) for o in eqn.outvars]
        cts = [Zero(o.aval) if c is None else c for o, c in zip(eqn.outvars, cts)]
        if all(type(c) is Zero for c in cts):
            continue  # nothing flows back through this equation
        invals = [UndefPrimal(a.aval) if isinstance(a, Var) and a.id in linear_vars else
                  (a.val if isinstance(a, Literal) else known[a.id]) for a in eqn.invars]
        ct_arg = cts if eqn.primitive.multiple_results else cts[0]
        try:
            cts_in = eqn.primitive.rule("transpose")(ct_arg, *invals, **eqn.params)
        except Exception as e:
            locate_error(e, eqn, "while transposing")
            raise
        for a, ct in zip(eqn.invars, cts_in):
            write_ct(a, ct)
    out = []
    for v, lin in zip(jaxpr.invars, linear_in):
        if not lin:
            out.append(None)
            continue
        ct = ct_env.get(v.id)
        out.append(Zero(v.aval) if ct is None else ct)
    return out
