"""Element-wise fusion: grouping ``ewise`` steps into regions (seed 003's ElementwiseRegion).

A region runs a DAG of element-wise steps of one iteration shape tile by tile (see schedule.c):
operands from outside are read with their strides (zero strides for broadcasts), values used
only inside the region live in per-thread scratch, and only the values needed elsewhere (or
returned) are written to memory. So ``exp(x) * y + sin(z)`` makes one pass over memory.

Grouping is greedy in schedule order. A region runs where its first member was; a step may join
the open region of its shape when every operand it reads is either produced by a member (read
with the producer's own layout) or already available before the region starts. A region has at
most 8 memory operands (pb_iterate's limit).

Epilogue fusion: a region that immediately follows a matmul whose result it alone consumes runs
inside the matmul's thunk, on the product while it is still in cache (bias add + activation).
"""
from __future__ import annotations

from collections import defaultdict

from .values import Step, View

MAX_OPERANDS = 8
MAX_MEMBERS = 64


class _Group:
    __slots__ = ("members", "first", "produced", "shape")

    def __init__(self, step: Step, first: int):
        self.members = [step]
        self.first = first
        self.produced = {o.buf.id: o for o in step.outs}
        self.shape = step.info["shape"]


def _readers(steps: list[Step]) -> dict[int, list[tuple[Step, View]]]:
    out: dict[int, list] = defaultdict(list)
    for s in steps:
        for v in s.ins:
            out[v.buf.id].append((s, v))
    return out


def _operands(members: list[Step], readers: dict, kept: set[int]) -> tuple[list[View], list[View]]:
    """(external inputs, materialized outputs) of a region of ``members``."""
    mine = {id(m) for m in members}
    produced = {o.buf.id for m in members for o in m.outs}
    ins: list[View] = []
    for m in members:
        for v in m.ins:
            if v.buf.id not in produced and not any(v.same_layout(w) and v.strides == w.strides
                                                    for w in ins):
                ins.append(v)
    outs = [o for m in members for o in m.outs
            if o.buf.id in kept or o.buf.kind != "arena" or
            any(id(r) not in mine for r, _ in readers.get(o.buf.id, ()))]
    return ins, outs


def _can_join(g: _Group, s: Step, def_pos: dict[int, int], readers: dict, kept: set[int]) -> bool:
    if len(g.members) >= MAX_MEMBERS:
        return False
    for v in s.ins:
        prod = g.produced.get(v.buf.id)
        if prod is not None:
            if not (v.same_layout(prod) and v.strides == prod.strides):
                return False  # reads a member's result in another order: needs all of it
        elif def_pos.get(v.buf.id, -1) >= g.first:
            return False      # produced after the region starts, outside it
    ins, outs = _operands(g.members + [s], readers, kept)
    return len(ins) + len(outs) <= MAX_OPERANDS


def fuse(steps: list[Step], kept: set[int]) -> list[Step]:
    """Steps with element-wise runs grouped into ``region`` steps. ``kept``: ids of buffers that
    must be materialized (program outputs)."""
    readers = _readers(steps)
    def_pos: dict[int, int] = {}
    for i, s in enumerate(steps):
        for o in s.outs:
            def_pos.setdefault(o.buf.id, i)
    order: list = []
    open_by_shape: dict[tuple, _Group] = {}
    for i, s in enumerate(steps):
        if s.kind != "ewise":
            order.append(s)
            continue
        g = open_by_shape.get(s.info["shape"])
        if g is not None and _can_join(g, s, def_pos, readers, kept):
            g.members.append(s)
            g.produced.update({o.buf.id: o for o in s.outs})
            continue
        g = _Group(s, i)
        open_by_shape[g.shape] = g
        order.append(g)
    return [x if isinstance(x, Step) else _region(x, readers, kept) for x in order]


def _region(g: _Group, readers: dict, kept: set[int]) -> Step:
    ins, outs = _operands(g.members, readers, kept)
    grain = min(m.info["grain"] for m in g.members)
    label = "+".join(m.label for m in g.members)
    return Step("region", ins, outs, {"members": g.members, "shape": g.shape, "grain": grain},
                label)


def fuse_epilogues(steps: list[Step]) -> list[Step]:
    """Regions that only post-process the matmul right before them move into its thunk."""
    readers = _readers(steps)
    out: list[Step] = []
    for s in steps:
        prev = out[-1] if out else None
        if (s.kind == "region" and prev is not None and prev.kind == "dot" and
                "epilogue" not in prev.info):
            prod = prev.outs[0].buf
            if (prod.kind == "arena" and any(v.buf is prod for v in s.ins) and
                    all(r is s for r, _ in readers.get(prod.id, ()))):
                prev.info["epilogue"] = s
                prev.outs = prev.outs + s.outs
                prev.ins = prev.ins + [v for v in s.ins if v.buf is not prod]
                prev.label = f"{prev.label} -> epilogue({s.label})"
                continue
        out.append(s)
    return out
