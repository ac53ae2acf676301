"""Fusing a residual add into the norm it feeds: ``h = add(a, b); y = normalize(h, s, c)``
becomes one ``add_normalize(a, b, s, c) -> (h, y)`` (primitives/norms.py), whose kernel writes
h and y in the norm's row pass instead of a separate element-wise pass over memory (a pre-LN
transformer's ``h = x + attn; y = layer_norm(h)``, h read again by the next residual).

The fused equation takes the add's place and defines both of the old variables, so every other
use of h (before or after the norm) is untouched. Fused only when a and b have h's shape and
dtype and neither is a ``broadcast_in_dim`` (a broadcast add stays an element-wise step of its
own), and when the scale and bias are defined before the add. Runs last in jit's pipeline, on
programs no transformation sees again.

Not fused either when an operand is a value the add alone reads that an element-wise op or a
matmul computes: the compiler then puts the add in that op's region or the matmul's epilogue,
which writes h as it computes it (no pass of its own), and fusing would instead write the
operand to memory to read it back (``x + t @ w`` then ``layer_norm``: 5 passes over memory
instead of 3).
"""
from __future__ import annotations

from ...primitives.dot import dot_general_p
from ...primitives.elementwise import KERNEL_ROWS, add_p
from ...primitives.movement import broadcast_in_dim_p
from ...primitives.norms import add_normalize_p, normalize_p
from ...tracer.ir import ClosedJaxpr, Eqn, Jaxpr, Var


# False: programs compiled from now on keep the add and the norm apart (benchmarks compare).
enabled = True


def fuse_residual_norms(closed: ClosedJaxpr) -> ClosedJaxpr:
    """``closed`` with each add feeding a normalize fused into it; ``closed`` itself when none
    is."""
    if not enabled:
        return closed
    jaxpr = closed.jaxpr
    eqns = jaxpr.eqns
    where: dict[Var, int] = {}        # var -> index of the equation defining it
    uses: dict[Var, int] = {}
    for i, e in enumerate(eqns):
        for v in e.outvars:
            where[v] = i
        for v in e.invars:
            if type(v) is Var:
                uses[v] = uses.get(v, 0) + 1
    for v in jaxpr.outvars:
        if type(v) is Var:
            uses[v] = uses.get(v, 0) + 1

    def fusable(o, h: Var) -> bool:
        """an add operand the fused kernel should read (see the module's docstring)"""
        if type(o) is not Var or o.aval.shape != h.aval.shape or o.aval.dtype != h.aval.dtype:
            return False
        k = where.get(o)
        if k is None:
            return True
        prim = eqns[k].primitive
        if prim is broadcast_in_dim_p:
            return False
        return uses[o] > 1 or not (prim is dot_general_p or prim.name in KERNEL_ROWS)
    fused: dict[int, Eqn] = {}        # add's index -> the fused equation
    dropped: set[int] = set()         # the fused normalizes
    for i, e in enumerate(eqns):
        if e.primitive is not normalize_p or type(e.invars[0]) is not Var:
            continue
        j = where.get(e.invars[0])
        if j is None or j in fused or eqns[j].primitive is not add_p:
            continue
        add = eqns[j]
        h = add.outvars[0]
        if not all(fusable(o, h) for o in add.invars):
            continue
        if any(type(p) is Var and where.get(p, -1) >= j for p in e.invars[1:]):
            continue  # the scale or bias is the sum or computed after it
        fused[j] = Eqn(add_normalize_p, [*add.invars, *e.invars[1:]], dict(e.params),
                       [h, e.outvars[0]], e.source_info)
        dropped.add(i)
    if not fused:
        return closed
    new = [fused.get(i, e) for i, e in enumerate(eqns) if i not in dropped]
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars, new, jaxpr.outvars), closed.consts)
