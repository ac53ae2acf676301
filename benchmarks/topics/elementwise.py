"""Throughput: element-wise ops (memory-bound add/exp, the transcendentals sin/tanh) and a
reduction on 1M float32."""
from __future__ import annotations

import numpy as np

from case import Case, Target

N = 1 << 20


def cases(fws) -> list[Case]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=N).astype(np.float32)
    y = rng.normal(size=N).astype(np.float32)
    arrays = {f.name: (f.array(x), f.array(y)) for f in fws}
    nbytes = x.nbytes
    spec = [("add", "x + y", 3 * nbytes, 1e-6), ("exp", "ns.exp(x)", 2 * nbytes, 1e-6),
            # the vectorized transcendentals (csrc/vecmath.h): compute- rather than memory-bound
            ("sin", "ns.sin(x)", 2 * nbytes, 1e-6), ("tanh", "ns.tanh(x)", 2 * nbytes, 1e-6),
            ("sum", "ns.sum(x)", nbytes, 1e-3)]
    return [Case("elementwise", f"{name}, 1M float32", {
                f.name: f.impl(stmt, x=arrays[f.name][0], y=arrays[f.name][1]) for f in fws},
                 "GB/s", work=work, targets=(Target("numpy", 1.0),), rtol=rtol)
            for name, stmt, work, rtol in spec]
