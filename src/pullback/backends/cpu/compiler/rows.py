"""A scan whose batch rows never mix runs as two scans over row halves, one per thread.

A recurrent layer's step, ``h = tanh(h @ Wh + x_t @ Wx + b)`` over a batch, computes each row of
the carry from the same row of itself and of ``x_t``: rows only meet loop-invariant operands
(``Wh``, ``b``). Its steps are too small to cut each in two (handing half a 16x128 @ 128x128
product to the other core and taking its rows back costs more than the half), but the whole
loop splits: two copies of the scan, each on its own rows of every buffer, run side by side
with no contact until both end (a "par" step of two scans). Planner policy "row-halves";
measurements in docs/compiler.md.

The body qualifies when each of its steps is an element-wise region or a product whose rows
are rows: every operand is either a row view (its first axis, the product's M, runs over the
B rows of the carry, at one row stride per buffer) or loop-invariant (a broadcast over the rows,
or the product's B operand) and nothing invariant is written. The copies then narrow every row
view to their rows and leave the rest; the memory plan keeps the body's buffers apart for the
whole loop (memory.py: a par step's blocks never share bytes), so neither copy ever touches a
byte the other writes.
"""
from __future__ import annotations

from .blocks import Block
from .planner import ROW_HALVES
from .values import Step, View


def _views(s: Step) -> list[tuple[View, int, bool]]:
    """(view, its row axis, written) for every operand of a body step; row axis -1: a 0-d
    operand. Raises KeyError for a step kind that does not qualify."""
    if s.kind in ("region", "ewise"):
        out = [(v, 0 if v.ndim else -1, False) for v in s.ins]
        out += [(v, 0 if v.ndim else -1, True) for v in s.outs]
        for m in s.info.get("members", []):
            if "init" in m.info:
                raise KeyError("a reduction")
            out += [(v, 0 if v.ndim else -1, False) for v in m.ins]
            out += [(v, 0 if v.ndim else -1, True) for v in m.outs]
        return out
    if s.kind == "dot":
        out = [(s.ins[0], 1, False), (s.outs[0], 1, True)]
        epi = s.info.get("epilogue")
        if epi is not None:
            out += _views(epi)
        return out
    raise KeyError(s.kind)


def _shape_ok(s: Step, rows: int) -> bool:
    if s.kind in ("region", "ewise"):
        shape = tuple(s.info["shape"])
        return len(shape) >= 1 and shape[0] == rows and all(
            v.ndim == 0 or v.shape == shape for v, _, _ in _views(s))
    bt, m, _, _ = s.info["dims"]
    epi = s.info.get("epilogue")
    return bt == 1 and m == rows and (epi is None or _shape_ok(epi, rows))


def row_split(scan: Step) -> int | None:
    """The number of rows when ``scan`` can run as two scans over row halves, else None."""
    if not ROW_HALVES.enabled or scan.kind != "scan" or scan.info["length"] < 2:
        return None
    body = scan.info["blocks"][0].steps
    dots = [s for s in body if s.kind == "dot"]
    if not dots or scan.info["length"] * sum(
            d.info["dims"][1] * d.info["dims"][2] * d.info["dims"][3] for d in dots) < \
            ROW_HALVES["min_macs"]:
        return None
    rows = dots[0].info["dims"][1]
    if rows < 16:
        return None
    try:
        views = [(s, x) for s in body for x in _views(s)]
    except KeyError:
        return None
    if not all(_shape_ok(s, rows) for s in body):
        return None
    layout: dict[int, tuple[int, int]] = {}  # row buffer -> (byte offset, row stride)
    invariant: set[int] = set()
    written: set[int] = set()
    for s, (v, axis, w) in views:
        root, off, _ = v.buf.root()
        if w:
            written.add(root.id)
        if axis < 0 or v.strides[axis] == 0:
            invariant.add(root.id)
            continue
        if v.shape[axis] != rows or layout.setdefault(root.id, (off + v.offset, v.strides[axis])) \
                != (off + v.offset, v.strides[axis]):
            return None
    for d in dots:  # a product's B operand is read whole by every row
        invariant.add(d.ins[1].buf.root()[0].id)
    if invariant & (written | set(layout)):
        return None
    return rows


def _narrow(v: View, axis: int, lo: int, hi: int) -> View:
    shape = list(v.shape)
    shape[axis] = hi - lo
    return View(v.buf, v.offset + lo * v.strides[axis], tuple(shape), v.strides, v.dtype)


def _narrow_step(s: Step, rows: int, lo: int, hi: int, memo: dict) -> Step:
    def nv(v: View, axis: int) -> View:
        if axis < 0 or v.shape[axis] != rows:
            return v
        key = (id(v), axis)
        if key not in memo:
            memo[key] = _narrow(v, axis, lo, hi)
        return memo[key]

    info = dict(s.info)
    if s.kind == "dot":
        bt, m, n, k = s.info["dims"]
        info["dims"] = (bt, hi - lo, n, k)
        ins = [nv(s.ins[0], 1), s.ins[1]]
        outs = [nv(s.outs[0], 1)]
        epi = s.info.get("epilogue")
        if epi is not None:
            info["epilogue"] = _narrow_step(epi, rows, lo, hi, memo)
            ins += [nv(v, 0 if v.ndim else -1) for v in s.ins[2:]]
            outs += [nv(v, 0 if v.ndim else -1) for v in s.outs[1:]]
        return Step("dot", ins, outs, info, s.label)
    shape = list(s.info["shape"])
    shape[0] = hi - lo
    info["shape"] = tuple(shape)
    if "members" in info:
        info["members"] = [_narrow_step(m, rows, lo, hi, memo) for m in s.info["members"]]
    return Step(s.kind, [nv(v, 0 if v.ndim else -1) for v in s.ins],
                [nv(v, 0 if v.ndim else -1) for v in s.outs], info, s.label)


def split_rows(steps: list[Step]) -> list[Step]:
    """``steps`` with each top-level scan that ``row_split`` accepts as a "par" step of two
    scans, one per half of the rows (``info["members"]``)."""
    out = []
    for s in steps:
        rows = row_split(s)
        if rows is None:
            out.append(s)
            continue
        half = rows // 2 // 8 * 8 or rows // 2  # whole blocks of the product's 8-row tiles
        members = []
        for lo, hi in ((0, half), (half, rows)):
            memo: dict = {}
            body = [_narrow_step(x, rows, lo, hi, memo) for x in s.info["blocks"][0].steps]
            members.append(Step("scan", s.ins, s.outs, {**s.info, "blocks": [Block(body, [], [])],
                                                        "rows": (lo, hi)}, s.label))
        out.append(Step("par", s.ins, s.outs, {"members": members}, "par"))
    return out
