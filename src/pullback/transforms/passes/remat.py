"""Recomputing cheap element-wise residuals where they are used late, instead of storing them.

A gradient program keeps forward values for the backward pass. When several such values are
element-wise functions of fewer large arrays (a tanh gelu's ``0.5 * u``, ``1 + t``,
``(1 + t)(1 - t)`` and ``3 * u**2`` are all functions of ``u``), storing them costs a write and
a read of each, while the backward region could recompute them from ``u`` in registers and
scratch. This pass clones the element-wise equations computing such values right before their
late readers, so the compiler's fusion puts the recomputation in the reader's region (or a
matmul's epilogue) and the forward region no longer writes them (XLA's fusion duplicates cheap
producers into their consumers the same way).

A use is *late* when a non-element-wise equation (a matmul, a kernel, a reduction: something a
fused region cannot span) lies between the value's definition and the use, so the value has to
be in memory there. A value is a candidate when it is computed by element-wise equations from
a few large *leaves* (values that are not element-wise results: inputs, matmul or kernel
outputs; broadcasts are views and cost only their operand) and every late reader is itself
element-wise. Candidates are grouped by their set of large leaves; a group is recomputed when
its leaves not already kept for late use take fewer bytes than the group's values. The clones
compute the same operations on the same operands in the same order, so results are bit-identical.

Runs last in jit's pipeline, after CSE (which would merge the clones back), on programs no
transformation sees again.
"""
from __future__ import annotations

from collections import defaultdict

from ...primitives.elementwise import KERNEL_ROWS
from ...primitives.movement import broadcast_in_dim_p, reshape_p
from ...tracer.ir import ClosedJaxpr, Eqn, Jaxpr, Var
from .dce import dce_jaxpr

# False: programs compiled from now on store their residuals (benchmarks compare).
enabled = True
# Values smaller than this are left alone: they stay in cache, and recomputing costs more.
min_bytes = 1 << 18
# A recomputation clones at most this many equations per value.
MAX_CONE = 24
# A leaf counts as large when it has at least this fraction of the value's bytes.
_LARGE = 4


def _nbytes(v) -> int:
    return v.aval.size * v.aval.dtype.itemsize


def _is_ewise(e: Eqn) -> bool:
    return e.primitive.name in KERNEL_ROWS and len(e.outvars) == 1


def remat_residuals(closed: ClosedJaxpr) -> ClosedJaxpr:
    """``closed`` with late-used element-wise residuals recomputed where they are read;
    ``closed`` itself when none is worth it."""
    if not enabled:
        return closed
    eqns = closed.jaxpr.eqns
    where: dict[Var, int] = {v: i for i, e in enumerate(eqns) for v in e.outvars}
    heavy_before = [0]  # heavy_before[k]: non-element-wise equations in eqns[:k]
    for e in eqns:
        heavy_before.append(heavy_before[-1] + (not _is_ewise(e) and e.primitive not in
                                                (broadcast_in_dim_p, reshape_p)))
    late: dict[Var, list[int]] = defaultdict(list)  # value -> indices of its late readers
    blocked: set[Var] = set()                        # values with a late non-element-wise use
    for j, e in enumerate(eqns):
        for v in e.invars:
            i = where.get(v) if type(v) is Var else None
            if i is None or heavy_before[j] == heavy_before[i + 1]:
                continue
            if _is_ewise(e):
                late[v].append(j)
            else:
                blocked.add(v)
    groups: dict[frozenset, list[Var]] = defaultdict(list)
    cones: dict[Var, set[int]] = {}
    for v in late:
        if v in blocked or _nbytes(v) < min_bytes or not _is_ewise(eqns[where[v]]):
            continue
        cone, leaves = _cone(v, eqns, where)
        if cone is None:
            continue
        large = frozenset(x for x, b in leaves.items() if b * _LARGE >= _nbytes(v))
        cones[v] = cone
        groups[large].append(v)
    chosen: set[Var] = set()
    for leaves, vs in groups.items():
        kept_anyway = {x for x in leaves if x in late or x in blocked}
        if sum(_nbytes(x) for x in leaves - kept_anyway) < sum(_nbytes(v) for v in vs):
            chosen.update(vs)
    if not chosen:
        return closed
    return dce_jaxpr(_rewrite(closed, chosen, cones, late, where))


def _cone(v: Var, eqns: list[Eqn], where: dict) -> tuple[set[int] | None, dict]:
    """The element-wise equations computing ``v`` back to its leaves, and the leaves with
    their cost in bytes (a broadcast's is its operand's); (None, {}) past MAX_CONE."""
    cone: set[int] = set()
    leaves: dict[Var, int] = {}
    todo = [v]
    while todo:
        x = todo.pop()
        i = where.get(x)
        e = eqns[i] if i is not None else None
        if e is not None and _is_ewise(e):
            if i in cone:
                continue
            cone.add(i)
            if len(cone) > MAX_CONE:
                return None, {}
            todo.extend(a for a in e.invars if type(a) is Var)
        elif e is not None and e.primitive is broadcast_in_dim_p:
            src = e.invars[0]
            leaves[x] = _nbytes(src) if type(src) is Var else 0
        else:
            leaves[x] = _nbytes(x)
    return cone, leaves


def _rewrite(closed: ClosedJaxpr, chosen: set[Var], cones: dict, late: dict,
             where: dict) -> ClosedJaxpr:
    """Clone each chosen value's cone right before its first late reader; late readers read
    the clones."""
    eqns = closed.jaxpr.eqns
    readers: dict[int, list[Var]] = defaultdict(list)  # eqn index -> chosen values it reads late
    for v in chosen:
        for j in late[v]:
            readers[j].append(v)
    clone: dict[Var, Var] = {}  # original -> recomputed copy

    def sub(a):
        return clone.get(a, a) if type(a) is Var else a

    out: list[Eqn] = []
    for j, e in enumerate(eqns):
        if j in readers:
            need = sorted({i for v in readers[j] for i in cones[v]
                           if eqns[i].outvars[0] not in clone})
            for i in need:
                c = eqns[i]
                new = Var(c.outvars[0].aval)
                out.append(Eqn(c.primitive, [sub(a) for a in c.invars], c.params, [new],
                               c.source_info))
                clone[c.outvars[0]] = new
            late_here = set(readers[j])
            e = Eqn(e.primitive, [clone[a] if a in late_here else a for a in e.invars],
                    e.params, e.outvars, e.source_info)
        out.append(e)
    jaxpr = closed.jaxpr
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars, out, jaxpr.outvars), closed.consts)
