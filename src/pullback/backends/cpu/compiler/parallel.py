"""Work side by side on the pool's threads: independent products (par) and a scan with the
products around it (pipe). When each applies is planner.py's decision (policies
"parallel-products" and "pipelined-scan"); why, with measurements: docs/compiler.md.

Consecutive dot steps that touch disjoint memory become one "par" step, which runs each product
whole on its own thread of the pool (a training step's weight and input gradients of a layer).

Runs before the memory plan, which then sees a par step as one step: everything its members
read stays live until all of them are done, and their results get memory of their own (a
result placed where the other member's operand dies would race with it).

A scan followed by products that contract over its stacked outputs' leading axis (``hs^T @ gs``
with K running over (t, batch)) becomes one "pipe" step: the products sum chunk after chunk of
iterations on the other thread while the scan is still writing the next (csrc/pipe.c); so does
a float sum over that axis. A product shortly before a scan whose rows are the scan's xs (the
input projection ``xs @ Wx``) joins the pipe too: it is made chunk by chunk in the scan's
order, and each iteration waits only for its own chunk.
"""
from __future__ import annotations

import numpy as np

from ..kernels import REDUCE_OPS
from .lower import slots
from .blocks import walk
from .order import may_move
from .planner import PARALLEL_PRODUCTS, PIPELINED_SCAN, SPLIT_K
from .rows import row_split
from .values import Step, View



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
    return _macs(s) >= PARALLEL_PRODUCTS["min_macs"] and \
        not (bt == 1 and k >= SPLIT_K["ratio"] * max(m, n))


def group_products(steps: list[Step]) -> list[Step]:
    """``steps`` with each run of consecutive, mutually independent large dot steps as one
    "par" step (``info["members"]``: the dots, in their order)."""
    if not PARALLEL_PRODUCTS.enabled:
        return steps
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
                or max(sizes) > PARALLEL_PRODUCTS["max_ratio"] * min(sizes)):
            flush()
        group.append((s, t))
    flush()
    return out


_F32_F64 = (slots(np.dtype(np.float32))[1], slots(np.dtype(np.float64))[1])
_F32_F64_DTYPE = (slots(np.dtype(np.float32))[0], slots(np.dtype(np.float64))[0])
_SUM = REDUCE_OPS["reduce_sum"]


def _sums_iterations(d: Step, scan: Step, ys: list[View], taken: set[int]) -> bool:
    """``d`` is a float sum over the first axis (and maybe others) of one of ``scan``'s
    stacked outputs ``ys`` (a bias gradient), which can run chunk by chunk of iterations."""
    if d.kind != "reduce" or d.info["op"] != _SUM or d.info["acc"] is not d.outs[0] or \
            d.info["slot"] not in _F32_F64_DTYPE or 0 not in d.info["axes"]:
        return False
    x = d.ins[0]
    root, off, loops = x.buf.root()
    y = next((y for y in ys if y.buf.root()[0] is root), None)
    return (y is not None and not loops and root.id not in taken and off + x.offset == 0 and
            y.is_whole() and x.shape[0] == scan.info["length"] and x.strides[0] == y.strides[0]
            and x.size >= PIPELINED_SCAN["min_sum"])


def _k_per_iteration(d: Step, scan: Step, ys: list[View], taken: set[int]) -> int | None:
    """K per scan iteration when ``d`` is a product that can sum over ``scan``'s iterations as
    they finish: it reads the scan's results only as its A or B operand, each a stacked output
    ``ys`` walked along K in iteration order (K = (t, rest), so iterations [t0, t1) are K
    [t0 * kper, t1 * kper)); it reads nothing of ``taken`` (earlier consumers' results)."""
    if d.kind != "dot" or _macs(d) < PIPELINED_SCAN["min_macs"]:
        return None
    bt, m, n, k = d.info["dims"]
    sa, sb, so = d.info["slots"]
    length = scan.info["length"]
    if bt != 1 or not (sa == sb == so and sa in _F32_F64) or k % length:
        return None
    kper = k // length
    made = {o.buf.root()[0].id for o in scan.outs}
    stacked = {y.buf.root()[0].id: y for y in ys}
    reads = False
    for pos, v in enumerate(d.ins):
        root, off, loops = v.buf.root()
        if root.id in taken or loops:
            return None
        if root.id not in made:
            continue
        y = stacked.get(root.id)
        if y is None or pos > 1 or y.shape[0] != length or not y.is_whole():
            return None  # a carry (final only at the end), or read by the epilogue
        # v is (1, M, K) for A, (1, K, N) for B: its K stride walks ys in order
        sk, other, size = (v.strides[2], v.strides[1], m) if pos == 0 else \
            (v.strides[1], v.strides[2], n)
        if off + v.offset != 0 or sk <= 0 or other < 0 or sk * kper != y.strides[0] or \
                (size - 1) * other + (kper - 1) * sk + v.itemsize > y.strides[0]:
            return None
        reads = True
    return kper if reads else None




def _rows_per_iteration(d: Step, scan: Step, between: list[Step]) -> int | None:
    """Rows per scan iteration when ``d`` (a step before ``scan``, ``between`` the steps
    separating them) is a product the scan reads only as a stacked input, its rows running
    over (t, rest): the scan can start once the first rows are made. ``d`` then moves to the
    scan, so nothing in between may read its result or write what it reads."""
    if d.kind != "dot" or "epilogue" in d.info or _macs(d) < PIPELINED_SCAN["min_macs"]:
        return None
    bt, m, n, k = d.info["dims"]
    sa, sb, so = d.info["slots"]
    length = scan.info["length"]
    c = d.outs[0]
    if bt != 1 or not (sa == sb == so and sa in _F32_F64) or m % length or not c.is_whole():
        return None
    rper = m // length
    root = c.buf.root()[0].id
    uses = [v for v in scan.ins if v.buf.root()[0].id == root]
    if not uses or any(v.buf.root()[1:] != (0, ()) or v.offset or v.shape[0] != length or
                       v.strides[0] != rper * c.strides[1] for v in uses):
        return None
    level = scan.info["level"]
    reads = {v.buf.root()[0].id for v in d.ins}
    if reads & {o.buf.root()[0].id for o in scan.outs}:
        return None  # it would read what the scan writes while the scan writes it
    for st in walk(scan.info["blocks"][0].steps):  # the body reads it only as xs[i]
        for v in list(st.ins) + list(st.outs):
            r, _, loops = v.buf.root()
            if r.id == root and not any(lvl == level for lvl, _ in loops) or \
                    v in st.outs and r.id in reads:
                return None
    return rper if may_move(d, between) else None


def pipeline_scans(steps: list[Step]) -> list[Step]:
    """``steps`` with each top-level scan, the run of products (and float sums) right after it
    that sum over its iterations and a product shortly before it that makes its stacked input
    as one "pipe" step. ``info``: ``scan``; ``members``, the summing steps; ``kper``, K per
    iteration of each product (1 for a sum); ``parts``, the column blocks each is cut into, so
    that both threads can share the work once the scan is done; ``producer`` (or None) and
    ``rper``, its rows per iteration; ``every``, iterations per chunk."""
    if not PIPELINED_SCAN.enabled:
        return steps
    out: list[Step] = []
    i = 0
    while i < len(steps):
        s = steps[i]
        out.append(s)
        i += 1
        if s.kind != "scan" or s.info["length"] < 2:
            continue
        ys = s.outs[len(s.outs) - s.info.get("nys", 0):]
        members, kper, taken = [], [], set()
        while i < len(steps):
            kp = 1 if _sums_iterations(steps[i], s, ys, taken) else \
                _k_per_iteration(steps[i], s, ys, taken)
            if kp is None:
                break
            members.append(steps[i])
            kper.append(kp)
            taken.update(o.buf.root()[0].id for o in steps[i].outs)
            i += 1
        producer, rper = None, 0
        for back in range(2, min(int(PIPELINED_SCAN["lookback"]) + 1, len(out)) + 1):
            rp = _rows_per_iteration(out[-back], s, out[len(out) - back + 1:-1])
            if rp is not None:
                producer, rper = out[-back], rp
                break
        if not members and (producer is None or row_split(s) is not None):
            continue  # nothing to overlap, or the scan splits its rows over the threads
        ks = [k for d, k in zip(members, kper) if d.kind == "dot"] + ([rper] if rper else [])
        if not ks:  # sums alone: not worth a pipe
            i -= len(members)
            continue
        every = max(1, -(-int(PIPELINED_SCAN["chunk_k"]) // min(ks)))
        if s.info["length"] < 4 * every:  # too few chunks to overlap anything
            i -= len(members)
            continue
        if producer is not None:
            out.remove(producer)
        parts = [2 if d.kind == "dot" and d.info["dims"][2] >= 64 else 1 for d in members]
        first = [producer] if producer is not None else []
        out[-1] = Step("pipe", [v for d in first + [s] + members for v in d.ins],
                       [v for d in first + [s] + members for v in d.outs],
                       {"scan": s, "members": members, "kper": kper, "parts": parts,
                        "producer": producer, "rper": rper, "every": every}, "pipe")
    return out
