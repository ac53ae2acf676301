"""Scheduling policies: when the compiler spends the second thread (or a fused loop) on a part of
a program, with every threshold in one table and the reason for its value.

Each policy is a named decision; the mechanism that carries it out lives with the pass that
rewrites the schedule (``parallel.py``: parallel products and pipelined scans; ``rows.py``: row
halves; ``fusion.py``: pairs; ``csrc/dot.c``: split-K, decided per call because it depends on
the threads free at run time). A policy can be switched off (``disabled``), which tests use to
compare a program with and without it. The measurements behind the values are in
docs/compiler.md ("Scheduling policies").
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Iterator

from .. import kernels


@dataclass(frozen=True)
class Threshold:
    """One tuned value: what it counts and why it is this value."""

    value: float
    unit: str
    why: str


@dataclass
class Policy:
    """A named scheduling decision and its thresholds (read as ``policy["name"]``)."""

    name: str
    does: str
    where: str
    thresholds: dict[str, Threshold] = field(default_factory=dict)
    enabled: bool = True

    def __getitem__(self, key: str) -> float:
        return self.thresholds[key].value


PARALLEL_PRODUCTS = Policy(
    "parallel-products",
    "consecutive independent products run at once, each whole on its own pool thread",
    "parallel.group_products",
    {"min_macs": Threshold(
        1 << 20, "multiply-adds",
        "below it, a product costs less than handing it to another thread"),
     "max_ratio": Threshold(
        1.6, "larger / smaller product",
        "side by side the pair takes as long as its larger member on one thread; the two in "
        "turn on both threads take ~1.3x the ideal, so the pair pays while the larger is "
        "under ~1.7x the smaller")})

PIPELINED_SCAN = Policy(
    "pipelined-scan",
    "products and sums over a scan's stacked outputs (weight and bias gradients) run chunk by "
    "chunk on the other thread while the scan writes the next chunk; a product whose rows are "
    "the scan's xs (the input projection) is made chunk by chunk ahead of the scan",
    "parallel.pipeline_scans",
    {"min_macs": Threshold(
        1 << 22, "multiply-adds",
        "a smaller product finishes sooner than the synchronisation with the scan costs"),
     "chunk_k": Threshold(
        512, "K per chunk",
        "iterations are grouped so that each chunk's product has about this K: an efficient "
        "BLAS shape, and steps small enough to stay right behind the scan"),
     "min_sum": Threshold(
        1 << 17, "elements read",
        "a float sum over the iterations worth overlapping (a bias gradient)"),
     "lookback": Threshold(
        4, "steps",
        "how far before a scan its input projection is looked for (it is normally adjacent; "
        "a few steps cover casts and reshapes)")})

ROW_HALVES = Policy(
    "row-halves",
    "a scan whose batch rows never mix runs as two scans over row halves, one per thread",
    "rows.split_rows",
    {"min_macs": Threshold(
        1 << 24, "multiply-adds over all iterations",
        "below it the second thread's start and join cost more than half the loop")})

SPLIT_K = Policy(
    "split-K",
    "a product whose shared dimension dwarfs its output (a gradient summed over a batch or "
    "a sequence) is cut along K into partial products that are added at the end",
    "csrc/dot.c pb_matmul_chunks (at run time)",
    {"ratio": Threshold(
        kernels.SPLIT_K_RATIO, "K / max(M, N)",
        "cutting rows or columns of such a product leaves each thread a sliver that re-reads "
        "all of K; cutting K gives each thread a full-size product of a part of K")})

PAIRS = Policy(
    "pairs",
    "a float32 transcendental whose only reader adds, subtracts or multiplies it runs as one "
    "vectorised loop with that reader (vecmath pair loops), inside a fused region",
    "fusion._pair",
    {})

POLICIES: dict[str, Policy] = {p.name: p for p in (
    PARALLEL_PRODUCTS, PIPELINED_SCAN, ROW_HALVES, SPLIT_K, PAIRS)}


@contextlib.contextmanager
def disabled(*names: str) -> Iterator[None]:
    """Compile without the named policies inside the block (split-K is decided by the kernel
    and cannot be switched off here)."""
    unknown = [n for n in names if n not in POLICIES or n == SPLIT_K.name]
    if unknown:
        raise ValueError(f"planner.disabled: unknown or run-time policies {unknown}; "
                         f"choose from {[n for n in POLICIES if n != SPLIT_K.name]}")
    saved = {n: POLICIES[n].enabled for n in names}
    for n in names:
        POLICIES[n].enabled = False
    try:
        yield
    finally:
        for n, e in saved.items():
            POLICIES[n].enabled = e


def table() -> str:
    """The policies and their thresholds, as text (for docs and for a reader at a prompt)."""
    lines = []
    for p in POLICIES.values():
        lines.append(f"{p.name} ({p.where}): {p.does}")
        for k, t in p.thresholds.items():
            lines.append(f"  {k} = {t.value:g} {t.unit}: {t.why}")
    return "\n".join(lines)
