"""Compute-bound throughput: a square float32 matrix product."""
from __future__ import annotations

import numpy as np

from case import Case, Target

N = 1024


def cases(fws) -> list[Case]:
    rng = np.random.default_rng(0)
    a = rng.normal(size=(N, N)).astype(np.float32)
    b = rng.normal(size=(N, N)).astype(np.float32)
    impls = {f.name: f.impl("x @ y", x=f.array(a), y=f.array(b)) for f in fws}
    return [Case("matmul", f"x @ y, {N}x{N} float32", impls, "GFLOP/s", work=2.0 * N**3,
                 targets=(Target("numpy", 0.95),), rtol=1e-3)]
