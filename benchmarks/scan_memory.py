"""Residual memory of the tanh RNN's reverse mode (benchmarks/topics/scan.py), per variant, at
T=1000 and T=10000: the bytes reverse mode keeps between the forward and the backward pass
(``saved_residuals``, excluding the arguments and views of them), pullback next to JAX's
``jax.ad_checkpoint.saved_residuals`` (JAX: plain scan, and jax.checkpoint on the body).

    python benchmarks/scan_memory.py
"""
from __future__ import annotations

import importlib
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from topics.scan import B, H, data, jax_loss, pullback_loss  # noqa: E402


def _bytes(res, skip) -> int:
    return sum(int(np.prod(a.shape)) * np.dtype(a.dtype).itemsize for a, d in res if not skip(d))


_ITEMSIZE = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i32": 4, "i64": 8, "bool": 1, "u32": 4}


def _jax_bytes(jax, f, args) -> int:
    """JAX 0.10 only prints its residuals: parse ``f32[16,128] description`` lines."""
    import contextlib
    import io
    import re
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        jax.ad_checkpoint.print_saved_residuals(f, *args)
    total = 0
    for line in buf.getvalue().splitlines():
        m = re.match(r"(\w+)\[([\d,]*)\]\s+(.*)", line.strip())
        if not m or "argument" in m.group(3):
            continue
        dims = [int(d) for d in m.group(2).split(",") if d]
        total += int(np.prod(dims)) * _ITEMSIZE.get(m.group(1), 4)
    return total


def main() -> None:
    import pullback.numpy as pnp
    from pullback.ad_checkpoint import saved_residuals
    try:
        jax = importlib.import_module("jax")
        importlib.import_module("jax.ad_checkpoint")
    except ImportError:
        jax = None
    carry = B * H * 4
    print(f"carry: {carry} bytes (batch {B} x hidden {H} float32)")
    print("| T | variant | pullback residual bytes | / carry | JAX residual bytes | / carry |")
    print("|---|---|---|---|---|---|")
    for t in (1000, 10000):
        params, h0, xs = data(t)
        for label, ck in (("plain scan", None), ("checkpoints=ceil(sqrt(T))", math.isqrt(t - 1) + 1),
                          ("binomial, 10 slots", ("binomial", 10))):
            pargs = (tuple(map(pnp.asarray, params)), pnp.asarray(h0), pnp.asarray(xs))
            res = saved_residuals(pullback_loss(ck), *pargs)
            pb_bytes = _bytes(res, lambda d: d != "computed in the forward pass")
            jx = ""
            if jax is not None:
                jargs = (tuple(map(jax.numpy.asarray, params)), jax.numpy.asarray(h0),
                         jax.numpy.asarray(xs))
                jb = _jax_bytes(jax, jax_loss(jax, ck is not None), jargs)
                jx = f"{jb} | {jb / carry:.1f}"
            print(f"| {t} | {label} | {pb_bytes} | {pb_bytes / carry:.1f} | {jx} |", flush=True)


if __name__ == "__main__":
    main()
