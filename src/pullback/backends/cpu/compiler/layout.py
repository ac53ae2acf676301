"""Layout choices made after lowering: a matmul whose result is only ever read transposed
computes the transposed product instead (C^T = B^T A^T: BLAS reads the swapped operands through
their strides for free), so its consumers read it contiguously. Gradients of weights (x^T @ g
laid out as [in, out] but consumed as [out, in], or the reverse) are the common case: without
this, the SGD update reads a 1 MB matrix column by column."""
from __future__ import annotations

from typing import Sequence

from ....tracer.strides import c_strides
from .blocks import LOOPS
from .values import Step, View


def _views_by_buffer(steps: Sequence[Step], outs: Sequence[View]) -> dict[int, list[View]]:
    """buffer id -> the distinct View objects over it."""
    out: dict[int, dict[int, View]] = {}
    for v in [v for s in steps for v in list(s.ins) + list(s.outs)] + list(outs):
        out.setdefault(v.buf.id, {})[id(v)] = v
    return {b: list(vs.values()) for b, vs in out.items()}


def orient_products(steps: Sequence[Step], outs: Sequence[View]) -> int:
    """Swap the operands of matmuls read only transposed; returns how many were swapped."""
    swapped = 0
    views = _views_by_buffer(steps, outs)
    # a loop's blocks read its operands through views made while lowering them: keep those
    # buffers' layouts as they are
    opaque = {v.buf.id for s in steps if s.kind in LOOPS for v in s.ins}
    for s in steps:
        if s.kind != "dot" or s.info["dims"][0] != 1:
            continue
        _, m, n, k = s.info["dims"]
        out = s.outs[0]
        if m < 2 or n < 2 or out.buf.kind != "arena" or out.buf.id in opaque:
            continue
        es = out.itemsize
        readers = [v for v in views.get(out.buf.id, ()) if v is not out]
        transposed = (es, n * es)
        if not readers or any(v.offset != 0 or v.shape[-2:] != (n, m) or
                              v.strides[-2:] != transposed or
                              any(d != 1 for d in v.shape[:-2]) for v in readers):
            continue
        a, b = s.ins[0], s.ins[1]
        s.ins[0] = View(b.buf, b.offset, (1, n, k), (b.strides[0], b.strides[2], b.strides[1]),
                        b.dtype)
        s.ins[1] = View(a.buf, a.offset, (1, k, m), (a.strides[0], a.strides[2], a.strides[1]),
                        a.dtype)
        sa, sb, so = s.info["slots"]
        s.info["slots"] = (sb, sa, so)
        s.info["dims"] = (1, n, m, k)
        s.outs[0] = View(out.buf, 0, (1, n, m), (n * m * es, m * es, es), out.dtype)
        for v in readers:  # now the whole buffer, read contiguously
            v.strides = c_strides(v.shape, es)
        s.label += " (transposed)"
        swapped += 1
    return swapped
