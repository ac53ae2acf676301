"""The ordering rule: when a pass may run a step at another place than lowering put it.

Lowering emits a correct order: every step after the steps it depends on. Several buffers are
written by more than one step -- pad (the fill, then the interior), concatenate (one copy per
part), dynamic_update_slice (the operand's copy, then the update), a block's tail copies into
its carry and ``ys[i]`` -- and any view of a buffer may be read. Fusion runs a region at its
first member's place, an epilogue runs right after its product, a pipe runs its producer at
the scan: each such move carries a step across others. It is allowed only across steps it is
independent of: neither writes memory the other reads or writes (no read-after-write,
write-after-read or write-after-write between them). Memory is compared by root buffer (a
loop's slice is its parent's memory) and whole: two views of one buffer count as touching,
whether or not their bytes overlap.
"""
from __future__ import annotations

from typing import Iterable

from .values import Step, View


def root_id(v: View) -> int:
    return v.buf.root()[0].id


def touches(step: Step) -> tuple[frozenset, frozenset]:
    """(root ids read, root ids written) by ``step``, its region members, epilogue, par and pipe
    members and nested blocks included."""
    reads = {root_id(v) for v in step.ins}
    writes = {root_id(v) for v in step.outs}
    for sub in _parts(step):
        r, w = touches(sub)
        reads |= r
        writes |= w
    return frozenset(reads), frozenset(writes)


def _parts(step: Step) -> list[Step]:
    info = step.info
    parts = list(info.get("members", ()))
    for key in ("epilogue", "scan", "producer"):
        if info.get(key) is not None:
            parts.append(info[key])
    for b in info.get("blocks", ()):
        parts.extend(b.steps)
        parts.extend(getattr(b, "tail", ()))
    return parts


def independent(a: Step, b: Step) -> bool:
    """Neither step writes memory the other reads or writes: they may run in either order."""
    ra, wa = touches(a)
    rb, wb = touches(b)
    return not (wa & (rb | wb) or wb & ra)


def may_move(step: Step, across: Iterable[Step]) -> bool:
    """``step`` may run before (or after) all of ``across``, which lie between its place and
    the place it moves to."""
    return all(independent(step, s) for s in across)


class Barrier:
    """What the steps passed over since some place read and wrote (root ids): a step may move
    back to that place when it is independent of all of them (see ``may_move``)."""

    __slots__ = ("reads", "writes")

    def __init__(self):
        self.reads: set[int] = set()
        self.writes: set[int] = set()

    def add(self, step: Step) -> None:
        r, w = touches(step)
        self.reads |= r
        self.writes |= w

    def allows(self, step: Step) -> bool:
        r, w = touches(step)
        return not (w & (self.reads | self.writes) or self.writes & r)
