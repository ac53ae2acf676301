"""What a benchmark case is: one operation, its implementation per framework, the metric it
reports and the targets pullback should meet."""
from __future__ import annotations

from dataclasses import dataclass, field

from timing import Impl

# metric -> (unit label, higher is better)
METRICS = {"us": ("µs/call", False), "GB/s": ("GB/s", True), "GFLOP/s": ("GFLOP/s", True),
           "ns/iter": ("ns/iteration", False)}


@dataclass(frozen=True)
class Target:
    """pullback's metric over ``other``'s must reach ``ratio`` (at least, for throughputs; at
    most, for times)."""
    other: str
    ratio: float

    def describe(self, higher: bool) -> str:
        return f"pullback/{self.other} {'>=' if higher else '<='} {self.ratio:g}"

    def met(self, ratio: float, higher: bool) -> bool:
        return ratio >= self.ratio if higher else ratio <= self.ratio


@dataclass
class Case:
    """One measured operation.

    Args:
      topic: the module that defines it.
      name: a short description (the table row).
      impls: framework name -> Impl.
      metric: a key of METRICS.
      work: bytes (GB/s) or flops (GFLOP/s) per iteration, or loop iterations per call
        (ns/iter); unused for times.
      targets: what pullback should reach against which framework.
      limit: what pullback's own metric should reach (at least for throughputs, at most for
        times), whatever the others measure.
      rtol: tolerance when checking that every implementation agrees with the reference's.
      reference: the implementation every other one is checked against (skipped if absent).
    """
    topic: str
    name: str
    impls: dict[str, Impl]
    metric: str
    work: float = 0.0
    targets: tuple[Target, ...] = ()
    rtol: float = 1e-5
    limit: float | None = None
    reference: str = "numpy"
    medians: dict[str, float] = field(default_factory=dict)

    @property
    def higher_is_better(self) -> bool:
        return METRICS[self.metric][1]

    def value(self, seconds: float) -> float:
        """The metric for a time per iteration."""
        if self.metric == "us":
            return seconds * 1e6
        if self.metric == "ns/iter":
            return seconds / self.work * 1e9
        return self.work / seconds / 1e9
