"""Lowering dynamic_slice and dynamic_update_slice to "dcopy" steps: strided copies whose source
(a slice) or destination (an update) moves by start indices read at run time, each clamped to
``[0, dim - size]`` as JAX does. A start known at compile time is folded into the offset."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .copies import const_array, copy_step
from .values import Step, View


def _dcopy(low: Any, src: View, dst: View, side: str, starts: Sequence[View],
           limits: Sequence[int], strides: Sequence[int]) -> None:
    """Copy ``src`` to ``dst``, the ``side`` view moved by ``starts`` (clamped to ``limits``)
    along dimensions whose byte strides are ``strides``."""
    moved = src if side == "src" else dst
    offset, dyn, ins = moved.offset, [], [src]
    for s, lim, st in zip(starts, limits, strides):
        if s.buf.kind == "const":  # known now
            offset += int(np.clip(int(const_array(s)), 0, max(lim, 0))) * st
        elif lim > 0:
            dyn.append((len(ins), lim, st))
            ins.append(s)
    moved = View(moved.buf, offset, moved.shape, moved.strides, moved.dtype)
    src, dst = (moved, dst) if side == "src" else (src, moved)
    if not dyn:
        low.emit(copy_step(src, dst))
        return
    ins[0] = src
    low.emit(Step("dcopy", ins, [dst], {"side": side, "dyn": tuple(dyn)},
                  "dynamic_slice" if side == "src" else "dynamic_update_slice"))


def lower_dynamic_slice(low: Any, ins: list[View], *, slice_sizes) -> list[View]:
    x, starts = ins[0], ins[1:]
    out = View.fresh(tuple(slice_sizes), x.dtype)
    window = View(x.buf, x.offset, tuple(slice_sizes), x.strides, x.dtype)
    _dcopy(low, window, out, "src", starts, [d - z for d, z in zip(x.shape, slice_sizes)],
           x.strides)
    return [out]


def lower_dynamic_update_slice(low: Any, ins: list[View]) -> list[View]:
    x, update, starts = ins[0], ins[1], ins[2:]
    out = View.fresh(x.shape, x.dtype)
    low.emit(copy_step(x, out))
    window = View(out.buf, 0, update.shape, out.strides, out.dtype)
    _dcopy(low, update, window, "dst", starts, [d - z for d, z in zip(x.shape, update.shape)],
           out.strides)
    return [out]


LOWER = {"dynamic_slice": lower_dynamic_slice,
         "dynamic_update_slice": lower_dynamic_update_slice}
