"""Lowering control flow to nested schedules: scan, while and cond run as blocks of steps inside
one thunk, so a loop never returns to Python (unless its body holds a callback step).

- ``scan``: the carry lives in loop buffers ``C`` (the initial carry is copied in before the
  loop); the body reads ``C``, the constants and ``xs[i]`` -- a "slice" buffer whose address
  moves by ``stride`` bytes per iteration of the loop's level -- and ends by copying its new
  carry into ``C`` and its ``y`` into ``ys[i]`` (another slice). After the loop ``C`` holds the
  final carry.
- ``while``: the same loop buffers; a ``cond`` block computes the predicate (a bool scalar the
  thunk reads), then the body block runs and copies the new carry into ``C``.
- ``cond``: the index (int32 scalar, clamped) picks one block; every branch ends by copying
  its outputs into the same result buffers.

Call-like primitives (``checkpoint``, ``custom_jvp_call``, ``custom_vjp_call``, nested ``jit``)
are inlined: their program runs in place of the equation.

A block's steps are lowered here unfused; ``program.finish_steps`` later fuses each block on
its own (``Block.kept`` are the values its tail copies read) and appends the tail.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ....tracer.array import Array
from .blocks import LOOPS, Block, blocks_of, walk  # noqa: F401  (program.py reads them here)
from .copies import const_array, copy_step
from .memory import _inplace_ok
from .values import Buffer, Step, View

MAX_LEVELS = 4  # nested loops (schedule.c's PB_MAXLOOP)
CALLS = {"jit": "jaxpr", "checkpoint": "jaxpr", "custom_jvp_call": "call_jaxpr",
         "custom_vjp_call": "call_jaxpr", "linear_solve": "solve"}


class Unlowerable(Exception):
    """The construct cannot be a nested schedule here (too deep): it runs as a callback."""


def const_view(value: Any, aval: Any) -> View:
    v = value._value if isinstance(value, Array) else value
    return View.of_const(np.asarray(v, dtype=aval.dtype))


def closed_call(low: Any, closed: Any, ins: Sequence[View]) -> list[View]:
    """Lower ``closed`` (a ClosedJaxpr) on ``ins`` into the current block."""
    j = closed.jaxpr
    consts = [const_view(c, v.aval) for c, v in zip(closed.consts, j.constvars)]
    return low.jaxpr(j, consts + list(ins), with_consts=True)


def _block(low: Any, fn: Any) -> tuple[list[Step], Any]:
    saved, low.steps = low.steps, []
    try:
        res = fn()
    finally:
        steps, low.steps = low.steps, saved
    return steps, res


def _carry_buffers(low: Any, init: Sequence[View]) -> list[View]:
    """Loop buffers for the carry, holding the initial values."""
    cs = []
    for v in init:
        c = View.fresh(v.shape, v.dtype)
        low.emit(copy_step(v, c))
        cs.append(c)
    return cs


def _publish(outs: Sequence[View], dsts: Sequence[View], loop_bufs: Sequence[View]
             ) -> tuple[list[View], list[Step]]:
    """Copies of ``outs`` into ``dsts``. A value that is a view of a loop buffer (a carry
    passed on, swapped or reversed) goes through a temporary first: the copies run in order
    and must not read a buffer an earlier copy already overwrote."""
    loop_ids = {c.buf.id for c in loop_bufs}
    kept, first, then = [], [], []
    for v, d in zip(outs, dsts):
        if v.same_layout(d) and v.strides == d.strides:
            continue  # passed on unchanged
        if v.buf.root()[0].id in loop_ids:
            t = View.fresh(v.shape, v.dtype)
            first.append(copy_step(v, t))
            v = t
        else:
            kept.append(v)
        then.append(copy_step(v, d))
    return kept, first + then


def _row_major(v: View) -> bool:
    """A matmul operand (batch, rows, cols) the kernels read as plain row-major panels."""
    _, r, c = v.shape
    return (c < 2 or v.strides[2] == v.itemsize) and (r < 2 or v.strides[1] == c * v.itemsize)


def _partial_broadcast(v: View) -> bool:
    """Some dimensions broadcast (zero stride), others not: the element-wise loops then run
    row by row instead of over the whole operand at once."""
    return any(s == 0 for s, d in zip(v.strides, v.shape) if d > 1) and \
        any(s != 0 for s, d in zip(v.strides, v.shape) if d > 1)


_INVARIANT_COPY_MAX = 1 << 16  # elements: a bias broadcast over a batch, not a big expansion


def _relayout_invariant_operands(low: Any, steps: list[Step], carry: Sequence[View]
                                 ) -> list[View]:
    """Loop-invariant operands read in a layout that costs every iteration get a copy made once
    before the loop: a matmul operand in a strided layout (``h @ W.T`` in a transposed scan)
    becomes row-major; a small partial broadcast read element-wise (a bias added to a batch)
    becomes contiguous, so the step's loop covers it in one run. The carry is not invariant
    (the loop writes it after these steps: ``h[::-1] @ W`` reads a new one every iteration).
    Returns the copies (operands of the loop step)."""
    local = {o.buf.root()[0].id for s in steps for o in s.outs}
    local |= {c.buf.root()[0].id for c in carry}
    copies: dict[tuple, View] = {}
    for s in steps:
        if s.kind == "dot":
            which = [k for k in (0, 1) if not _row_major(s.ins[k]) and s.ins[k].size >= 64]
        elif s.kind == "ewise":
            which = [k for k, v in enumerate(s.ins)
                     if _partial_broadcast(v) and v.size <= _INVARIANT_COPY_MAX]
        else:
            continue
        for k in which:
            v = s.ins[k]
            if v.buf.kind == "slice" or v.buf.id in local:
                continue
            key = (v.buf.id, v.offset, v.shape, v.strides)
            t = copies.get(key)
            if t is None:
                t = copies[key] = View.fresh(v.shape, v.dtype)
                low.emit(copy_step(v, t))
            s.ins[k] = t
    return list(copies.values())


def elide_tail_copies(steps: list[Step]) -> list[Step]:
    """Drop a block's closing copies where the copied value can be computed in its destination
    (the loop's carry buffer, or ``ys[i]``): the value's buffer then becomes an alias of the
    destination. Safe when one step writes the value, as a whole C-contiguous buffer of the
    destination's size, and no later step reads the destination -- nor that step, unless it
    is a region that could write the value over the destination in place anyway (it reads the
    destination element for element, before writing)."""
    writers: dict[int, list[int]] = {}
    for i, s in enumerate(steps):
        for o in s.outs:
            writers.setdefault(o.buf.id, []).append(i)
    dropped: set[int] = set()
    for i, s in enumerate(steps):
        if not (s.kind == "ewise" and s.label == "copy" and len(s.ins) == 1):
            continue
        v, d = s.ins[0], s.outs[0]
        b = v.buf
        if b.kind != "arena" or b.offset is not None or not v.is_whole() or \
                not (d.size <= 1 or d.strides == v.strides) or d.nbytes != v.nbytes or \
                len(writers.get(b.id, ())) != 1 or v.dtype != d.dtype:
            continue
        p = writers[b.id][0]
        droot = d.buf.root()[0].id
        if p >= i or any(x.buf.root()[0].id == droot for st in steps[p + 1:]
                         if id(st) not in dropped for x in _reads(st) if st is not s):
            continue
        own = [x for x in _reads(steps[p]) if x.buf.root()[0].id == droot]
        if own and not (d.buf.kind != "slice" and all(x.buf is d.buf for x in own) and
                        all(_inplace_ok(steps[p], x, v) for x in own) and d.is_whole()):
            continue
        b.kind, b.parent, b.base, b.loops = "slice", d.buf, d.offset, ()
        dropped.add(id(s))
    return [s for s in steps if id(s) not in dropped]


def _reads(s: Step):
    yield from s.ins
    for b in blocks_of(s):
        for x in walk(b.steps):
            yield from x.ins


def _check_depth(low: Any) -> int:
    if low.depth >= MAX_LEVELS:
        raise Unlowerable(f"loops nested deeper than {MAX_LEVELS}")
    return low.depth


def lower_scan(low: Any, ins: list[View], *, jaxpr, num_consts, num_carry, length, reverse,
               unroll) -> list[View]:
    level = _check_depth(low)
    consts, init, xs = ins[:num_consts], ins[num_consts:num_consts + num_carry], \
        ins[num_consts + num_carry:]
    carry = _carry_buffers(low, init)
    x_slices = [View(Buffer.slice_of(x.buf, x.offset, max(1, x.size // max(length, 1)) *
                                     x.itemsize, level, x.strides[0]),
                     0, x.shape[1:], x.strides[1:], x.dtype) for x in xs]
    y_avals = jaxpr.out_avals[num_carry:]
    ys = [View.fresh((length,) + tuple(a.shape), a.dtype) for a in y_avals]
    y_slices = [View(Buffer.slice_of(y.buf, 0, max(1, y.size // max(length, 1)) * y.itemsize,
                                     level, y.strides[0] if length else 0),
                     0, y.shape[1:], y.strides[1:], y.dtype) for y in ys]

    def body() -> list[View]:
        low.depth += 1
        try:
            return closed_call(low, jaxpr, list(consts) + carry + x_slices)
        finally:
            low.depth -= 1
    steps, outs = _block(low, body)
    relaid = _relayout_invariant_operands(low, steps, carry)
    kept, tail = _publish(outs, carry + y_slices, carry)
    low.emit(Step("scan", list(consts) + carry + list(xs) + relaid, carry + ys, {
        "blocks": [Block(steps, kept, tail)], "length": int(length), "reverse": bool(reverse),
        "level": level, "nys": len(ys)}, f"scan[length={length}{', reverse' if reverse else ''}]"))
    return carry + ys


def lower_while(low: Any, ins: list[View], *, cond_jaxpr, body_jaxpr, cond_nconsts,
                body_nconsts) -> list[View]:
    cc, bc = ins[:cond_nconsts], ins[cond_nconsts:cond_nconsts + body_nconsts]
    init = ins[cond_nconsts + body_nconsts:]
    carry = _carry_buffers(low, init)
    pred = View.fresh((), np.dtype(np.bool_))

    def cond() -> list[View]:
        return closed_call(low, cond_jaxpr, list(cc) + carry)
    csteps, (p,) = _block(low, cond)
    ctail = [] if p.buf is pred.buf else [copy_step(p, pred)]
    bsteps, outs = _block(low, lambda: closed_call(low, body_jaxpr, list(bc) + carry))
    relaid = _relayout_invariant_operands(low, csteps, carry) + \
        _relayout_invariant_operands(low, bsteps, carry)
    kept, tail = _publish(outs, carry, carry)
    low.emit(Step("while", list(cc) + list(bc) + carry + relaid, carry + [pred], {
        "blocks": [Block(csteps, [p], ctail), Block(bsteps, kept, tail)], "pred": pred},
        "while"))
    return carry


def lower_cond(low: Any, ins: list[View], *, branches) -> list[View]:
    index, ops = ins[0], ins[1:]
    if index.buf.kind == "const":  # a known branch: only it is compiled
        i = int(const_array(index))
        return closed_call(low, branches[min(max(i, 0), len(branches) - 1)], ops)
    results = [View.fresh(a.shape, a.dtype) for a in branches[0].out_avals]
    blocks = []
    for br in branches:
        steps, outs = _block(low, lambda br=br: closed_call(low, br, ops))
        kept, tail = _publish(outs, results, ())
        blocks.append(Block(steps, kept, tail))
    low.emit(Step("cond", [index] + list(ops), results, {"blocks": blocks, "index": index},
                  f"cond[{len(branches)} branches]"))
    return results


LOWER = {"scan": lower_scan, "while": lower_while, "cond": lower_cond}


