"""Inlining: nested ``jit`` call equations are replaced by the equations of their Jaxprs.

A ``jit`` equation's ``jaxpr`` param is a ClosedJaxpr whose constants are normally already
leading inputs (``closure_convert``); any remaining constants become constvars of the
enclosing program. Inlined equations get fresh output variables, so the same callee inlined
twice defines no variable twice. Nested calls inside a callee are inlined too.
"""
from __future__ import annotations

from typing import Any

from ...tracer.ir import Atom, ClosedJaxpr, Eqn, Jaxpr, Var


def _inlinable(eqn: Eqn, ins: list[Atom]) -> bool:
    # jit's abstract evaluation accepts arguments differing from the callee's inputs in weak
    # type only; inlining then would leave equations whose avals disagree with their inputs,
    # so such (rare) calls keep their boundary
    callee = eqn.params["jaxpr"].jaxpr
    return all(a.aval == v.aval for a, v in zip(ins, callee.invars))


def _inline_eqns(eqns: list[Eqn], env: dict[Var, Atom], out: list[Eqn],
                 constvars: list[Var], consts: list[Any], rename: bool) -> bool:
    """Append ``eqns`` to ``out``, inlining calls; whether any call was inlined."""
    inlined = False
    for eqn in eqns:
        ins = [env.get(a, a) for a in eqn.invars]
        if eqn.primitive.name == "jit" and _inlinable(eqn, ins):
            callee: ClosedJaxpr = eqn.params["jaxpr"]
            inlined = True
            inner: dict[Var, Atom] = {}
            for v, c in zip(callee.jaxpr.constvars, callee.consts):
                nv = Var(v.aval)
                constvars.append(nv)
                consts.append(c)
                inner[v] = nv
            inner.update(zip(callee.jaxpr.invars, ins))
            _inline_eqns(callee.jaxpr.eqns, inner, out, constvars, consts, rename=True)
            for v, a in zip(eqn.outvars, callee.jaxpr.outvars):
                env[v] = inner.get(a, a)
        elif rename:
            outs = [Var(v.aval) for v in eqn.outvars]
            env.update(zip(eqn.outvars, outs))
            out.append(Eqn(eqn.primitive, ins, eqn.params, outs, eqn.source_info))
        elif ins != eqn.invars:
            out.append(Eqn(eqn.primitive, ins, eqn.params, eqn.outvars, eqn.source_info))
        else:
            out.append(eqn)
    return inlined


def inline_jit_calls(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Inline every ``jit`` call equation of ``closed`` (recursively).

    Args:
      closed: the program; it is not modified.

    Returns:
      An equivalent ClosedJaxpr without ``jit`` equations (``closed`` itself if it had none).
    """
    jaxpr = closed.jaxpr
    if not any(e.primitive.name == "jit" for e in jaxpr.eqns):
        return closed
    env: dict[Var, Atom] = {}
    eqns: list[Eqn] = []
    constvars, consts = list(jaxpr.constvars), list(closed.consts)
    if not _inline_eqns(jaxpr.eqns, env, eqns, constvars, consts, rename=False):
        return closed
    outvars = [env.get(a, a) for a in jaxpr.outvars]
    return ClosedJaxpr(Jaxpr(constvars, jaxpr.invars, eqns, outvars), consts)
