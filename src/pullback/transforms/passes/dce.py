"""Dead-code elimination: equations none of whose outputs is used are dropped.

Every primitive is pure (random ones are functions of their key operands), so an unused
result can go -- except an effectful one (a debug callback: ``ir.has_effects``), which stays. A multi-result equation with at least one used output stays whole. Constvars
nobody reads are dropped with their constants; input variables never are (they are the
program's signature).
"""
from __future__ import annotations

from ...tracer.ir import ClosedJaxpr, Jaxpr, Var, has_effects


def dce_jaxpr(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Drop the dead equations and unused constvars of ``closed``.

    Args:
      closed: the program; it is not modified.

    Returns:
      An equivalent ClosedJaxpr (``closed`` itself when nothing is dead).
    """
    jaxpr = closed.jaxpr
    # Literals are hashable by identity too: adding them to the set is harmless and saves a
    # type test per operand
    live = set(jaxpr.outvars)
    kept = []
    for eqn in reversed(jaxpr.eqns):
        for v in eqn.outvars:
            if v in live:
                break
        else:
            if not has_effects(eqn):  # (a debug callback stays: its effect is its use)
                continue
        kept.append(eqn)
        live.update(eqn.invars)
    used = [i for i, v in enumerate(jaxpr.constvars) if v in live]
    if len(kept) == len(jaxpr.eqns) and len(used) == len(jaxpr.constvars):
        return closed
    kept.reverse()
    constvars: list[Var] = [jaxpr.constvars[i] for i in used]
    consts = [closed.consts[i] for i in used]
    return ClosedJaxpr(Jaxpr(constvars, jaxpr.invars, kept, jaxpr.outvars), consts)
