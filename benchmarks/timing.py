"""The shared timing helper: interleaved repetitions of several implementations of one case.

Each implementation is a statement compiled into its own timing loop (as ``timeit`` does, so a
sample costs no function call per iteration), followed by a synchronization on the last result
(JAX dispatches asynchronously). Every implementation first gets an iteration count that makes
one sample last about ``min_sample_s``; then the repetitions run round-robin, each round in a
fresh random order (seeded), so that slow drifts of the machine (frequency, other load) hit
every implementation alike (a fixed rotation would keep each one right after the same
neighbour).

Before each timed sample the same implementation runs untimed for ``warm_s`` (0.15 s by
default). The thread pools of NumPy's OpenBLAS, PyTorch's OpenMP and XLA keep spinning after
their work (OpenBLAS ~0.1 s), so a sample taken right after another framework's measured those
leftovers too, by chance of the order: with four frameworks, two samples in three followed
NumPy or PyTorch. Measured on the MLP training step, in eight runs each: pullback 2810-3760 µs
and JAX 3910-5070 back to back, 1930-2470 and 2530-3520 warmed (each framework's own steady
state, its threads and caches hot, as in a training loop); the ratio spread 0.63-0.86 back to
back, 0.68-0.77 warmed. A single-threaded NumPy copy shares a CPU with such a leftover thread:
2590-3190 µs warmed, 4970-6280 back to back. Idling instead would start every sample cold.
``warm_s=0`` measures back to back. Results are seconds per iteration; reports use medians.
"""
from __future__ import annotations

import gc
import random
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable

_TEMPLATE = """
def loop(_n, _sync, _clock):
{setup}
    _t0 = _clock()
    for _i in range(_n):
        _r = {stmt}
    _sync(_r)
    return _clock() - _t0
"""


@dataclass
class Impl:
    """One framework's way of running a case.

    Args:
      stmt: a Python expression evaluated once per iteration (e.g. ``"x + y"``).
      env: the names ``stmt`` uses (its inputs, built outside the timed loop).
      sync: called on the last result of a sample to wait for the work to finish.
      result: turns a result into a NumPy array, to check implementations agree.
    """
    stmt: str
    env: dict[str, Any]
    sync: Callable[[Any], Any] = lambda r: None
    result: Callable[[Any], Any] = lambda r: r

    def compile(self) -> Callable[[int], float]:
        names = [n for n in self.env if n.isidentifier()]
        setup = "\n".join(f"    {n} = _env[{n!r}]" for n in names) or "    pass"
        ns: dict[str, Any] = {"_env": self.env}
        exec(_TEMPLATE.format(setup=setup, stmt=self.stmt), ns)
        loop, sync = ns["loop"], self.sync
        return lambda n: loop(n, sync, time.perf_counter)

    def run_once(self) -> Any:
        return eval(self.stmt, dict(self.env))


@dataclass
class Samples:
    """Seconds per iteration of each sample, and the iterations per sample."""
    seconds: list[float] = field(default_factory=list)
    inner: int = 1

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def calibrate(timer: Callable[[int], float], min_sample_s: float) -> int:
    """Iterations per sample so that a sample lasts at least ``min_sample_s``."""
    n = 1
    while True:
        t = timer(n)
        if t >= min_sample_s or n >= 1 << 24:
            return n
        n = max(2 * n, int(n * min_sample_s / max(t, 1e-9) * 1.2))


def measure(impls: dict[str, Impl], *, reps: int = 15, min_sample_s: float = 0.02,
            warmup: int = 2, warm_s: float = 0.15) -> dict[str, Samples]:
    """Interleaved repetitions of every implementation; returns their samples by name.
    ``warm_s``: seconds each implementation runs untimed before each of its samples (when
    there are others to interleave with)."""
    timers = {name: impl.compile() for name, impl in impls.items()}
    for timer in timers.values():
        for _ in range(warmup):
            timer(1)
    out = {name: Samples(inner=calibrate(t, min_sample_s)) for name, t in timers.items()}
    order = list(timers)
    rng = random.Random(0)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(reps):
            rng.shuffle(order)
            for name in order:
                s = out[name]
                if warm_s > 0 and len(order) > 1:
                    t_end = time.perf_counter() + warm_s
                    while time.perf_counter() < t_end:
                        timers[name](s.inner)
                s.seconds.append(timers[name](s.inner) / s.inner)
    finally:
        if gc_was_enabled:
            gc.enable()
    return out
