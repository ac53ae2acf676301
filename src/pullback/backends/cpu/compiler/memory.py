"""The memory plan: liveness over the schedule, arena offsets, in-place steps and donation.

Every arena buffer lives from the step that writes it to the last step that reads any view of
it. Offsets are assigned in schedule order, best fit from a free list of 64-byte-aligned blocks
(freed blocks coalesce), so buffers whose lifetimes do not overlap share bytes. A region may
write a result over an input that dies at that step when both have the same size and the same
C-contiguous layout and, inside the region, every read of the input comes no later than the
write (tiles are read before they are written): the result takes the input's block (in place).
Donated inputs (``donate_argnums``) are reused the same way for outputs of their aval.

A buffer written in parts by several steps (a pad's fill and interior, a concatenate's parts)
lives from its first write to the last step that reads *or writes* it: a later write into a
block already handed to another buffer would corrupt that one. The order of those writes is
kept by the passes before the plan (order.py).
"""
from __future__ import annotations

import bisect
from typing import Sequence

from .blocks import blocks_of
from .values import Buffer, Step, View

ALIGN = 64


def _round(n: int) -> int:
    return (max(n, 1) + ALIGN - 1) // ALIGN * ALIGN


class _Arena:
    """Best-fit allocation over a growing block."""

    def __init__(self):
        self.free: list[tuple[int, int]] = []  # (offset, size), sorted by offset
        self.top = 0

    def alloc(self, size: int) -> int:
        size = _round(size)
        best = None
        for i, (off, sz) in enumerate(self.free):
            if sz >= size and (best is None or sz < self.free[best][1]):
                best = i
        if best is not None:
            off, sz = self.free.pop(best)
            if sz > size:
                bisect.insort(self.free, (off + size, sz - size))
            return off
        if self.free and self.free[-1][0] + self.free[-1][1] == self.top:
            off, _ = self.free.pop()  # extend the last free block
            self.top = off + size
            return off
        off = self.top
        self.top += size
        return off

    def release(self, off: int, size: int) -> None:
        size = _round(size)
        bisect.insort(self.free, (off, size))
        merged: list[tuple[int, int]] = []
        for o, s in self.free:
            if merged and merged[-1][0] + merged[-1][1] == o:
                merged[-1] = (merged[-1][0], merged[-1][1] + s)
            else:
                merged.append((o, s))
        self.free = merged


def _inplace_ok(step: Step, src: View, dst: View) -> bool:
    """``step`` (a region) may write ``dst`` over ``src``'s bytes."""
    if step.kind != "region" or not (src.is_whole() and dst.is_whole()):
        return False
    if src.buf.nbytes != dst.buf.nbytes or src.shape != dst.shape:
        return False
    if any(v.buf is src.buf and not (v.offset == 0 and v.strides == dst.strides)
           for v in step.ins):
        return False
    members = step.info["members"]
    writer = max(i for i, m in enumerate(members) if any(o.buf is dst.buf for o in m.outs))
    if any("init" in m.info for m in members):
        return False  # accumulators are reset before the region reads anything
    last_read = max((i for i, m in enumerate(members) if any(v.buf is src.buf for v in m.ins)),
                    default=-1)
    return last_read <= writer


def liveness(steps: Sequence[Step]) -> dict[int, int]:
    """buffer id -> index of the last step reading or writing it."""
    last: dict[int, int] = {}
    for i, s in enumerate(steps):
        for v in list(s.ins) + list(s.outs):  # a later write (pad's interior) keeps it too
            last[v.buf.id] = i
    return last


def plan(steps: Sequence[Step]) -> dict:
    """Assign arena offsets to every arena buffer; returns the plan's figures:
    ``arena_bytes`` (peak), ``naive_bytes`` (sum of all intermediates), ``inplace`` (the
    (step, input buffer, result buffer) triples computed in place)."""
    arena = _Arena()
    figures = {"naive_bytes": 0, "inplace": []}
    _plan_block(steps, arena, figures)
    return {"arena_bytes": arena.top, **figures}


def _plan_block(steps: Sequence[Step], arena: _Arena, figures: dict,
                held: list | None = None) -> None:
    """Plan one list of steps. A loop's blocks are planned at the loop step, after its results
    are placed and while everything it reads is still held: a block's own buffers come and go
    inside it, and only they may be overwritten in place (buffers from outside are read again
    by the next iteration). With ``held``, dead buffers go there instead of back to the arena
    (a par step's scans: neither may reuse bytes the other is still using)."""
    last = liveness(steps)
    live: dict[int, Buffer] = {}
    taken: set[int] = set()  # blocks handed to an in-place result: released at its death
    for i, s in enumerate(steps):
        for o in s.outs:
            b = o.buf
            if b.kind != "arena" or b.offset is not None:
                continue
            figures["naive_bytes"] += _round(b.nbytes)
            donor = next((v.buf for v in s.ins if v.buf.id in live and v.buf.id not in taken
                          and last[v.buf.id] == i and _inplace_ok(s, v, o)), None)
            if donor is not None:
                b.offset = donor.offset
                taken.add(donor.id)
                figures["inplace"].append((s, donor, b))
            else:
                b.offset = arena.alloc(b.nbytes)
            live[b.id] = b
        for blk in blocks_of(s):
            _plan_block(blk.steps, arena, figures, held)
        if s.kind == "par":  # scans run side by side: their blocks share no bytes until both end
            mine: list = []
            for m in s.info["members"]:
                for blk in blocks_of(m):
                    _plan_block(blk.steps, arena, figures, mine)
            for off, size in mine:
                arena.release(off, size)
        for bid in [bid for bid in live if last.get(bid, -1) <= i]:
            b = live.pop(bid)
            if bid in taken:
                continue
            if held is None:
                arena.release(b.offset, b.nbytes)
            else:
                held.append((b.offset, b.nbytes))


def donations(steps: Sequence[Step], outputs: Sequence[View], donated: dict[int, list[int]],
              views: Sequence[bool] = ()) -> list[int]:
    """For each program output, the program input whose buffer it may take (-1: none).

    ``donated`` maps (shape, dtype) to donated input numbers. An output qualifies when it is
    a region's whole C-contiguous result of an input's aval, and every read of that input
    happens at or before the region, in place-safe order. ``views[k]``: output k is a view of
    an input, a constant or another output (it has no buffer of its own to place)."""
    last = liveness(steps)
    pos = {id(s): i for i, s in enumerate(steps)}
    out = [-1] * len(outputs)
    used: set[int] = set()
    for k, v in enumerate(outputs):
        b = v.buf
        if k < len(views) and views[k] or b.kind != "output" or b.producer is None:
            continue
        prod = next((s for s in steps if any(o.buf is b for o in s.outs)), None)
        if prod is None or prod.kind != "region":
            continue
        for j in donated.get((v.shape, v.dtype), []):
            if j in used:
                continue
            src = _input_view(steps, j)
            if src is None:
                out[k] = j  # never read: free to take
                used.add(j)
                break
            if last[src.buf.id] <= pos[id(prod)] and (
                    last[src.buf.id] < pos[id(prod)] or _inplace_ok(prod, src, v)):
                out[k] = j
                used.add(j)
                break
    return out


def _input_view(steps: Sequence[Step], j: int) -> View | None:
    for s in steps:
        for v in s.ins:
            if v.buf.kind == "input" and v.buf.index == j:
                return v
    return None
