"""Nested schedules as every pass sees them: the loop step kinds, the ``Block`` a loop step
holds its bodies in, and walking steps with their blocks. Below control.py (which builds loop
steps) and the passes that plan, lay out or split them (memory, layout, rows, parallel).
"""
from __future__ import annotations

from typing import Sequence

from .values import Step, View

LOOPS = ("scan", "while", "cond")


class Block:
    """A nested schedule: ``steps`` (fused later), ``kept`` (values the ``tail`` reads) and the
    ``tail`` of copies that publish the block's results."""

    __slots__ = ("steps", "kept", "tail")

    def __init__(self, steps: list[Step], kept: list[View], tail: list[Step]):
        self.steps, self.kept, self.tail = steps, kept, tail


def blocks_of(step: Step) -> list[Block]:
    if step.kind == "pipe":  # a scan and its consumers (compiler/parallel.py)
        return blocks_of(step.info["scan"])
    return step.info.get("blocks", []) if step.kind in LOOPS else []


def walk(steps: Sequence[Step]):
    """Every step, nested blocks included (a block's steps after its loop step)."""
    for s in steps:
        yield s
        for b in blocks_of(s):
            yield from walk(b.steps)
