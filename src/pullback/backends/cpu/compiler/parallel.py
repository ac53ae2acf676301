"""Independent products side by side: consecutive dot steps that touch disjoint memory become
one "par" step, which runs each product whole on its own thread of the pool.

Two products at once, each single-threaded, beat the same two in turn, each cut in halves over
both threads: the halves repack the shared operand and run at a smaller, less efficient shape
(measured on the MLP benchmark's second layer, 512x128 @ 128x512 and 128x512 @ 512x512:
753 us at once against 426 + 424 us in halves). A training step's backward pass has such
pairs: the weight gradient and the input gradient of a layer read the same incoming gradient
and nothing of each other.

Runs before the memory plan, which then sees a par step as one step: everything its members
read stays live until all of them are done, and their results get memory of their own (a
result placed where the other member's operand dies would race with it).
"""
from __future__ import annotations

from ..kernels import SPLIT_K_RATIO
from .values import Step, View

# a product worth a thread of its own (smaller ones cost less than the pool's hand-off)
PAR_MIN_MACS = 1 << 20
# side by side, the pair takes as long as its larger member on one thread: against the two in
# turn on both threads (~1.3x the ideal), that pays while the larger is under ~1.7x the smaller
PAR_MAX_RATIO = 1.6


def _span(v: View) -> tuple | None:
    """(buffer key, first byte, end byte) of what v touches; None when it moves with a loop.
    Distinct arena buffers never share memory while both are live, and within one step they
    all are."""
    b, off, loops = v.buf.root()
    if loops:
        return None
    lo = hi = off + v.offset
    if any(d == 0 for d in v.shape):
        return ("empty",), 0, 0
    for n, st in zip(v.shape, v.strides):
        if st < 0:
            lo += (n - 1) * st
        else:
            hi += (n - 1) * st
    hi += v.itemsize
    if b.kind == "arena":
        return ("arena", b.id), lo, hi
    return (b.kind, b.index), lo, hi


def _touches(s: Step) -> tuple[list, list] | None:
    """The spans a dot step reads and writes (its operands include its epilogue's: see
    fusion.fuse_epilogues)."""
    r = [_span(v) for v in s.ins]
    w = [_span(v) for v in s.outs]
    return None if any(x is None for x in r + w) else (r, w)


def _overlap(a: list, b: list) -> bool:
    return any(x[0] == y[0] and x[1] < y[2] and y[1] < x[2] for x in a for y in b)


def _macs(s: Step) -> int:
    bt, m, n, k = s.info["dims"]
    return bt * m * n * k


def _candidate(s: Step) -> bool:
    """A large product, not one that runs cut along K on all threads (dot.c): those stay
    alone."""
    if s.kind != "dot":
        return False
    bt, m, n, k = s.info["dims"]
    return _macs(s) >= PAR_MIN_MACS and not (bt == 1 and k >= SPLIT_K_RATIO * max(m, n))


def group_products(steps: list[Step]) -> list[Step]:
    """``steps`` with each run of consecutive, mutually independent large dot steps as one
    "par" step (``info["members"]``: the dots, in their order)."""
    out: list[Step] = []
    group: list[tuple[Step, tuple]] = []

    def flush() -> None:
        if len(group) > 1:
            members = [g for g, _ in group]
            out.append(Step("par", [v for g in members for v in g.ins],
                            [v for g in members for v in g.outs], {"members": members},
                            "par"))
        else:
            out.extend(g for g, _ in group)
        group.clear()

    for s in steps:
        t = _touches(s) if _candidate(s) else None
        if t is None:
            flush()
            out.append(s)
            continue
        r, w = t
        sizes = [_macs(g) for g, _ in group] + [_macs(s)]
        if (any(_overlap(w, gr + gw) or _overlap(gw, r) for _, (gr, gw) in group)
                or max(sizes) > PAR_MAX_RATIO * min(sizes)):
            flush()
        group.append((s, t))
    flush()
    return out
