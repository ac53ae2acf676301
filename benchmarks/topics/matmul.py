"""Compute-bound throughput: a square float32 matrix product, eager and under jit (jax.jit for
JAX). Issue 24's target: the jitted 1024^3 product >= 0.95x NumPy's GFLOP/s."""
from __future__ import annotations

import importlib

import numpy as np

from case import Case, Target
from timing import Impl

N = 1024


def cases(fws) -> list[Case]:
    rng = np.random.default_rng(0)
    a = rng.normal(size=(N, N)).astype(np.float32)
    b = rng.normal(size=(N, N)).astype(np.float32)
    impls = {f.name: f.impl("x @ y", x=f.array(a), y=f.array(b)) for f in fws}
    eager = Case("matmul", f"x @ y, {N}x{N} float32", impls, "GFLOP/s", work=2.0 * N**3,
                 targets=(Target("numpy", 0.95),), rtol=1e-3)
    import pullback as pb
    import pullback.numpy as pnp
    jitted = {"pullback": Impl("f(x, y)", {"f": pb.jit(lambda x, y: x @ y), "x": pnp.asarray(a),
                                           "y": pnp.asarray(b)}, result=np.asarray),
              "numpy": Impl("x @ y", {"x": a, "y": b})}
    if any(f.name == "jax" for f in fws):
        jax = importlib.import_module("jax")
        jitted["jax"] = Impl("f(x, y)", {"f": jax.jit(lambda x, y: x @ y),
                                         "x": jax.numpy.asarray(a), "y": jax.numpy.asarray(b)},
                             sync=lambda r: r.block_until_ready(), result=np.asarray)
    return [eager, Case("matmul", f"jit(x @ y), {N}x{N} float32", jitted, "GFLOP/s",
                        work=2.0 * N**3, targets=(Target("numpy", 0.95),), rtol=1e-3)]
