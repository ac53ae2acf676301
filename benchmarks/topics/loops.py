"""Compiled loops with small bodies: the cost of one iteration (ns), pullback.jit next to
jax.jit. Issue 24's target: a scalar fori_loop iteration <= 15 ns. The (16,) cases show what a
few element-wise kernels per iteration cost on top (a scan over xs, and a while loop with a
vector carry)."""
from __future__ import annotations

import importlib

import numpy as np

from case import Case
from timing import Impl

N_SCALAR = 10**7
N_VECTOR = 10**5


def _bodies(lax, jit):
    """name -> (the jitted function, its argument names, iterations per call)."""
    return {
        "fori_loop(0, n, c + 1), scalar carry, n = 10^7 (a while loop)":
            (jit(lambda n: lax.fori_loop(0, n, lambda i, c: c + 1, 0)), ("n",), N_SCALAR),
        "scan over (10^5, 16) float32: c * 0.5 + x, ys = c":
            (jit(lambda c, xs: lax.scan(lambda c, x: (c * 0.5 + x, c), c, xs)[0]), ("c", "xs"),
             N_VECTOR),
        "fori_loop(0, m, c * 0.99 + 1), (16,) float32 carry, m = 10^5":
            (jit(lambda m, c: lax.fori_loop(0, m, lambda i, c: c * 0.99 + 1.0, c)), ("m", "c"),
             N_VECTOR),
    }


def cases(fws) -> list[Case]:
    import pullback as pb
    import pullback.numpy as pnp
    from pullback import lax
    jax = importlib.import_module("jax") if any(f.name == "jax" for f in fws) else None
    data = {"n": np.int32(N_SCALAR), "m": np.int32(N_VECTOR), "c": np.zeros(16, np.float32),
            "xs": np.random.default_rng(0).normal(size=(N_VECTOR, 16)).astype(np.float32)}
    ours = _bodies(lax, pb.jit)
    theirs = _bodies(jax.lax, jax.jit) if jax is not None else {}
    out = []
    for name, (f, args, iters) in ours.items():
        stmt = f"f({', '.join(args)})"
        impls = {"pullback": Impl(stmt, {"f": f, **{a: pnp.asarray(data[a]) for a in args}},
                                  result=np.asarray)}
        if name in theirs:
            jnp = jax.numpy
            impls["jax"] = Impl(stmt, {"f": theirs[name][0],
                                       **{a: jnp.asarray(data[a]) for a in args}},
                                sync=lambda r: r.block_until_ready(), result=np.asarray)
        out.append(Case("loops", name, impls, "ns/iter", work=iters, rtol=1e-4,
                        limit=15.0 if iters == N_SCALAR else None))
    return out
