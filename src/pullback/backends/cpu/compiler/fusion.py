"""Element-wise fusion: grouping ``ewise`` steps into regions.

A region runs a DAG of element-wise steps of one iteration shape tile by tile (see schedule.c):
operands from outside are read with their strides (zero strides for broadcasts), values used
only inside the region live in per-thread scratch, and only the values needed elsewhere (or
returned) are written to memory. So ``exp(x) * y + sin(z)`` makes one pass over memory.

Grouping is greedy in schedule order. A region runs where its first member was; a step may join
the open region of its shape when every operand it reads is either produced by a member (read
with the producer's own layout) or already available before the region starts. A region has at
most 12 memory operands (pb_iterate's limit). The steps a region is moved past are those after
its place that run after it: a step that joined a region placed earlier runs before it.

Reduction prologues: a reduction of a value computed in a region joins that region as its last
use of the value (``sum(x * x)``: the products never reach memory), unless it sums along the
outer axes of many short rows (SHORT_ROWS). Its accumulator is an output
of the region with zero strides along the reduced axes, reset to the reduction's identity
before the region runs; its chunks cut only a dimension along which every accumulator moves
(rows for a row statistic, columns for a bias gradient: csrc/step_region.c), so each chunk
owns its accumulator elements and the sums are the one-thread sums; nothing in it may read the
accumulator.

Pairs: inside a region, a float32 transcendental (exp, sin, cos, log, tanh, logistic) whose
value is read once, by an add, subtract or multiply of the region, and nowhere else, runs as one
step with that reader (``exp>mul``: vecmath.h's pair loops), so the value goes from registers
into the arithmetic instead of through scratch. It runs at the reader's place: its operand is
available there, as it already was at its own.

Epilogue fusion: a region that immediately follows a matmul and is the first to read its
result runs inside the matmul's thunk, on the product while it is still in cache (bias add +
activation); when later steps read the product too, the kernel writes it whole as well.
A region over (B, T, N) on a (B*T, N) product (``x @ w + b`` with x (B, T, D)) runs as the same
region over (B*T, N) when every operand's leading dims merge (steps._as_rows), so it too
follows the kernel's rows.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from .. import kernels
from .lower import EWISE_NAMES, SCHEDULE, slots
from .order import Barrier, may_move, root_id
from .planner import PAIRS
from .values import Step, View

MAX_OPERANDS = 12
# A reduction whose accumulator moves along the innermost axis joins a region unless that axis
# has fewer than SHORT_ROWS elements and there are MANY_SHORT_ROWS rows or more: the region's
# rows cannot merge past the accumulator's zero strides, and each short row costs a loop call
# per op (measured: an NHWC bias gradient over (64, 28, 28, 32) took 21 ms in a region, 1.2 ms
# as a region and a reduction step).
SHORT_ROWS = 256
MANY_SHORT_ROWS = 1024
# Values a step would strand in memory by joining an earlier region count from this size.
STRAND_MIN_BYTES = 1 << 16
# An epilogue's sums leave it for values from this size (fuse_epilogues).
SUMS_APART_MIN_BYTES = 1 << 20
MAX_MEMBERS = 64
_PAIR_UNARY = frozenset(kernels.schedule_pair_ops())
_F32 = slots(np.dtype(np.float32))[0]
# (reader, which of its operands is the unary's value) -> pb_pair_loop's variant
_PAIR_VARIANT = {("add", 0): 0, ("add", 1): 0, ("sub", 0): 1, ("sub", 1): 2,
                 ("mul", 0): 3, ("mul", 1): 3}


class _Group:
    """A region being formed: its members, where it runs, what it produces and reads."""

    __slots__ = ("members", "first", "produced", "shape", "ins", "ids", "accumulators",
                 "passed")

    def __init__(self, step: Step, first: int):
        self.members: list[Step] = []
        self.first = first
        self.produced: dict[int, View] = {}
        self.shape = step.info["shape"]
        self.ids: set[int] = set()
        self.ins: dict[tuple, View] = {}  # external inputs by layout
        self.accumulators: set[int] = set()  # buffers of reductions in the region
        self.passed = Barrier()  # the steps after its place that are not members
        self.add(step)

    def add(self, step: Step) -> None:
        self.members.append(step)
        self.ids.add(id(step))
        for v in step.ins:
            if v.buf.id not in self.produced:
                self.ins.setdefault((v.buf.id, v.offset, v.strides), v)
        self.produced.update({o.buf.id: o for o in step.outs})
        if "init" in step.info:
            self.accumulators.add(step.outs[0].buf.id)


def _readers(steps: list[Step]) -> dict[int, list[tuple[Step, View]]]:
    out: dict[int, list] = defaultdict(list)
    for s in steps:
        for v in s.ins:
            out[v.buf.id].append((s, v))
    return out


def _outputs(members: list[Step], ids: set[int], readers: dict, kept: set[int]) -> list[View]:
    """The members' results that must be written to memory: read outside the region, kept
    (program outputs) or not arena buffers."""
    return [o for m in members for o in m.outs
            if o.buf.id in kept or o.buf.kind != "arena" or "init" in m.info or
            any(id(r) not in ids for r, _ in readers.get(o.buf.id, ()))]


def _can_join(g: _Group, s: Step, readers: dict, kept: set[int]) -> bool:
    if len(g.members) >= MAX_MEMBERS or not g.passed.allows(s):
        return False  # joining moves s back to the region's place (order.py's rule)
    for o in s.outs:
        if o.buf.id in g.produced:
            return False  # writes more of a buffer the region writes (pad's copy over its fill)
    new_ins = set()
    for v in s.ins:
        if v.buf.id in g.accumulators:
            return False      # complete only once the region has run
        prod = g.produced.get(v.buf.id)
        if prod is not None:
            if not (v.same_layout(prod) and v.strides == prod.strides):
                return False  # reads a member's result in another order: needs all of it
        elif (v.buf.id, v.offset, v.strides) not in g.ins:
            new_ins.add((v.buf.id, v.offset, v.strides))
    if not any(v.buf.id in g.produced for v in s.ins) and _stranded(g, s, readers, kept):
        return False
    n_in = len(g.ins) + len(new_ins)
    if n_in + len(g.produced) + len(s.outs) <= MAX_OPERANDS:  # a cheap bound first
        return True
    outs = _outputs(g.members + [s], g.ids | {id(s)}, readers, kept)
    return n_in + len(outs) <= MAX_OPERANDS


def _stranded(g: _Group, s: Step, readers: dict, kept: set[int]) -> bool:
    """Whether ``s`` (reading nothing ``g`` computes) joining ``g`` would strand values in
    memory: the element-wise steps downstream of ``s`` read nothing ``g`` computes either, and
    some read what a step ``g`` was moved past writes, so they cannot all follow ``s`` into
    ``g``; the values crossing from ``g`` to them would be written to memory, where a region
    of their own keeps them in scratch (remat.py's recomputed residuals: joining the forward
    region would store them again)."""
    if not g.passed.writes or all(o.size * o.itemsize < STRAND_MIN_BYTES for o in s.outs):
        return False  # (small values: joining costs a cheap write, not joining may cost more)
    seen: set[int] = set()
    todo = [s]
    blocked = False
    while todo:
        t = todo.pop()
        for o in t.outs:
            for r, _ in readers.get(o.buf.id, ()):
                if id(r) in seen or r.kind not in ("ewise", "reduce"):
                    continue
                if any(v.buf.id in g.produced for v in r.ins):
                    return False  # joining links s to g's values
                if any(root_id(v) in g.passed.writes for v in r.ins):
                    blocked = True
                seen.add(id(r))
                if len(seen) > MAX_MEMBERS:
                    return False
                todo.append(r)
    return blocked


def fuse(steps: list[Step], kept: set[int]) -> list[Step]:
    """Steps with element-wise runs grouped into ``region`` steps. ``kept``: ids of buffers that
    must be materialized (program outputs)."""
    readers = _readers(steps)
    order: list = []
    open_by_shape: dict[tuple, _Group] = {}
    for i, s in enumerate(steps):
        into = None  # the group s joins or opens
        if s.kind == "reduce":
            g = open_by_shape.get(s.ins[0].shape)
            m = _reduce_member(s, g)
            if m is not None:
                g.ids.add(id(s))  # the original step reads as a member (see _outputs)
                if _can_join(g, m, readers, kept):
                    g.add(m)
                    into = g
                else:
                    g.ids.discard(id(s))
        if into is None and s.kind != "ewise":
            order.append(s)
        elif into is None:
            g = open_by_shape.get(s.info["shape"])
            if g is not None and _can_join(g, s, readers, kept):
                g.add(s)
            else:
                g = _Group(s, i)
                open_by_shape[g.shape] = g
                order.append(g)
            into = g
        for g in open_by_shape.values():
            # s now lies between each other region and its place, unless it joined a region
            # that runs before that one (it moved there past everything in between)
            if g is not into and (into is None or into.first > g.first):
                g.passed.add(s)
    return [x if isinstance(x, Step) else _region(x, readers, kept) for x in order]


def _reduce_member(s: Step, g: _Group | None) -> Step | None:
    """``s`` (a reduction) as a region member of ``g`` when it reduces a value ``g`` computes
    (read in the producer's layout) in its own accumulation dtype."""
    if g is None or s.info["acc"] is not s.outs[0]:
        return None  # no prologue to fuse, or float16/bfloat16 (float32 accumulator)
    v, out = s.ins[0], s.outs[0]
    prod = g.produced.get(v.buf.id)
    if prod is None or not (v.same_layout(prod) and v.strides == prod.strides):
        return None
    axes = set(s.info["axes"])
    if v.ndim > 1 and v.ndim - 1 not in axes and axes and v.shape[-1] < SHORT_ROWS and \
            v.size >= MANY_SHORT_ROWS * v.shape[-1]:
        return None  # sums along outer axes of many short rows (an NHWC bias gradient)
    kept_strides = iter(out.strides)
    strides = tuple(0 if d in axes else next(kept_strides) for d in range(v.ndim))
    acc = View(out.buf, out.offset, v.shape, strides, out.dtype)
    return Step("ewise", [v], [acc], {
        "loop": (SCHEDULE["reduce"], s.info["op"], s.info["slot"]), "params": (),
        "shape": v.shape, "grain": 1 << 30, "init": (s.info["op"], s.info["slot"], out.size),
        "origin": s}, s.label)


def _region(g: _Group, readers: dict, kept: set[int]) -> Step:
    ins, outs = list(g.ins.values()), _outputs(g.members, g.ids, readers, kept)
    members = _pair(g.members, {o.buf.id for o in outs}) if PAIRS.enabled else g.members
    grain = min(m.info["grain"] for m in members)
    label = "+".join(m.label for m in members)
    return Step("region", ins, outs, {"members": members, "shape": g.shape, "grain": grain},
                label)


def _ewise_op(m: Step) -> tuple[str | None, int]:
    """(name, dtype slot) of an element-wise member, (None, -1) for other loop kinds."""
    kind, code, slot = m.info["loop"]
    return (EWISE_NAMES[code], slot) if kind == SCHEDULE["ewise"] else (None, -1)


def _pair(members: list[Step], out_ids: set[int]) -> list[Step]:
    """The members with each pairable transcendental merged into its one reader (see above)."""
    reads: dict[int, list[Step]] = defaultdict(list)
    for m in members:
        for v in m.ins:
            reads[v.buf.id].append(m)
    pair_of: dict[int, Step] = {}  # id(reader) -> the pair step replacing it
    gone: set[int] = set()         # ids of the transcendentals merged
    for m in members:
        _, slot = _ewise_op(m)
        o = m.outs[0]
        if slot != _F32 or m.info["loop"][1] not in _PAIR_UNARY or o.buf.id in out_ids or \
                len(reads[o.buf.id]) != 1:
            continue
        r = reads[o.buf.id][0]
        rname, rslot = _ewise_op(r)
        at = [i for i, v in enumerate(r.ins) if v.buf.id == o.buf.id]  # one: r reads o once
        if id(r) in pair_of or rslot != _F32 or (rname, at[0]) not in _PAIR_VARIANT:
            continue
        pair_of[id(r)] = Step("ewise", [m.ins[0], r.ins[1 - at[0]]], list(r.outs), {
            "loop": (SCHEDULE["pair"], m.info["loop"][1], _PAIR_VARIANT[rname, at[0]]),
            "params": (), "shape": r.info["shape"], "ops": 2,
            "grain": min(m.info["grain"], r.info["grain"])}, f"{m.label}>{r.label}")
        gone.add(id(m))
    return [pair_of.get(id(m), m) for m in members if id(m) not in gone]


def _takes_epilogue(d: Step) -> bool:
    """A matmul, or a kernel that reports its output's finished rows (a convolution: its bias
    add and activation then run on each block of pixels the kernel stores, csrc/kernel_step.c),
    without an epilogue yet."""
    if "epilogue" in d.info:
        return False
    return d.kind == "dot" or (d.kind == "kernel" and d.nout == 1 and
                               getattr(d.kernel, "follows_rows", False))


def fuse_epilogues(steps: list[Step]) -> list[Step]:
    """A region that first consumes a matmul's (or a row-reporting kernel's) result moves into
    that step's thunk, as its epilogue, when it is independent of every step between them
    (order.py's rule: so running it right after the product, while the product is in cache,
    changes no data dependence)."""
    readers = _readers(steps)
    pos = {id(s): i for i, s in enumerate(steps)}
    moved: set[int] = set()
    after: dict[int, list[Step]] = {}  # id(moved region) -> the sums it leaves behind
    for i, d in enumerate(steps):
        if not _takes_epilogue(d):
            continue
        prod = d.outs[0].buf
        rs = [r for r, _ in readers.get(prod.id, ())]
        if prod.kind != "arena" or not rs:
            continue
        r = min(rs, key=lambda x: pos[id(x)])  # later readers read the product from memory
        if r.kind != "region" or id(r) in moved or pos[id(r)] < i or \
                not may_move(r, [x for x in steps[i + 1:pos[id(r)]] if id(x) not in moved]):
            continue
        moved.add(id(r))
        region, after[id(r)] = _sums_apart(r)
        r = region
        d.info["epilogue"] = r
        d.info["keep_product"] = any(x is not r for x in rs)
        d.outs = d.outs + r.outs
        d.ins = d.ins + [v for v in r.ins if v.buf is not prod]
        d.label = f"{d.label} -> epilogue({r.label})"
    return [x for s in steps for x in (after.get(id(s), ()) if id(s) in moved else (s,))]


def _sums_apart(r: Step) -> tuple[Step, list[Step]]:
    """``r`` without its reductions, and those as steps of their own, when each sums a value
    ``r`` writes to memory anyway (a bias gradient over the rows of an input gradient the next
    products read): an epilogue with an accumulator runs after the whole product (its row
    strips finish on either thread, in no fixed order), one without follows the kernel's rows
    while they are in cache; the sum then reads the value back once, in the one-thread order.
    Only for values past a core's L2, which the epilogue after the product would read from
    memory (a smaller product is still in cache then). Else (r, [])."""
    members = r.info["members"]
    sums = [m for m in members if "init" in m.info]
    written = {o.buf.id for o in r.outs}
    if not sums or len(sums) == len(members) or \
            any(m.ins[0].buf.id not in written or
                m.ins[0].size * m.ins[0].itemsize < SUMS_APART_MIN_BYTES for m in sums):
        return r, []
    accs = {m.outs[0].buf.id for m in sums}
    rest = [m for m in members if "init" not in m.info]
    kept = Step("region", r.ins, [o for o in r.outs if o.buf.id not in accs],
                {**r.info, "members": rest}, "+".join(m.label for m in rest))
    return kept, [m.info["origin"] for m in sums]
