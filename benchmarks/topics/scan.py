"""A tanh RNN (hidden 128, input 32, T=1000, batch 16): loss + gradient through lax.scan, plain
and checkpointed, under jit, pullback next to JAX (its lax.scan, and with jax.checkpoint on the
body for the checkpointed rows: JAX has no K-checkpoint or binomial scan) and PyTorch eager
(a Python loop under autograd; plain scan only). Issue 6's target: plain scan <= 0.5x jax.jit. The residual memory
of each variant is measured by ``benchmarks/scan_memory.py``."""
from __future__ import annotations

import importlib
import math

import numpy as np

from case import Case, Target
from timing import Impl

H, D, T, B = 128, 32, 1000, 16
VARIANTS = [("plain scan", None), (f"checkpoints={math.isqrt(T - 1) + 1}", math.isqrt(T - 1) + 1),
            ("binomial, 10 slots", ("binomial", 10))]


def data(t: int = T):
    rng = np.random.default_rng(0)
    wh = (rng.normal(size=(H, H)) / np.sqrt(H)).astype(np.float32)
    wx = (rng.normal(size=(D, H)) / np.sqrt(D)).astype(np.float32)
    b = np.zeros(H, np.float32)
    xs = rng.normal(size=(t, B, D)).astype(np.float32)
    return (wh, wx, b), np.zeros((B, H), np.float32), xs


def pullback_loss(checkpoints):
    import pullback.numpy as jnp
    from pullback import lax

    def loss(params, h0, xs):
        wh, wx, b = params

        def step(h, x):
            h = jnp.tanh(h @ wh + x @ wx + b)
            return h, None
        h, _ = lax.scan(step, h0, xs, checkpoints=checkpoints)
        return jnp.mean(h ** 2)
    return loss


def jax_loss(jax, remat: bool):
    jnp = jax.numpy

    def loss(params, h0, xs):
        wh, wx, b = params

        def step(h, x):
            h = jnp.tanh(h @ wh + x @ wx + b)
            return h, None
        body = jax.checkpoint(step) if remat else step
        h, _ = jax.lax.scan(body, h0, xs)
        return jnp.mean(h ** 2)
    return loss


def _pullback(checkpoints) -> Impl:
    import pullback as pb
    import pullback.numpy as jnp
    params, h0, xs = data()
    vg = pb.jit(pb.value_and_grad(pullback_loss(checkpoints)))
    return Impl("vg(params, h0, xs)", {"vg": vg, "params": tuple(map(jnp.asarray, params)),
                                        "h0": jnp.asarray(h0), "xs": jnp.asarray(xs)},
                result=lambda r: np.asarray(r[1][0]))


def _jax(jax, remat: bool) -> Impl:
    jnp = jax.numpy
    params, h0, xs = data()
    vg = jax.jit(jax.value_and_grad(jax_loss(jax, remat)))
    return Impl("vg(params, h0, xs)", {"vg": vg, "params": tuple(map(jnp.asarray, params)),
                                        "h0": jnp.asarray(h0), "xs": jnp.asarray(xs)},
                sync=lambda r: r[0].block_until_ready(), result=lambda r: np.asarray(r[1][0]))


def _torch(torch) -> Impl:
    """PyTorch eager: the loop in Python, autograd through it (plain scan only)."""
    params, h0, xs = data()
    ps = [torch.tensor(p, requires_grad=True) for p in params]
    h0t, xst = torch.from_numpy(h0), torch.from_numpy(xs)

    def vg():
        wh, wx, b = ps
        h = h0t
        for x in xst:
            h = torch.tanh(h @ wh + x @ wx + b)
        loss = (h ** 2).mean()
        return loss.detach(), torch.autograd.grad(loss, ps)
    return Impl("vg()", {"vg": vg}, result=lambda r: r[1][0].numpy())


def cases(fws) -> list[Case]:
    names = {f.name for f in fws}
    out = []
    for label, ck in VARIANTS:
        impls = {"pullback": _pullback(ck)}
        if "jax" in names:
            impls["jax"] = _jax(importlib.import_module("jax"), ck is not None)
        if "torch" in names and ck is None:
            impls["torch"] = _torch(importlib.import_module("torch"))
        out.append(Case("scan", f"tanh RNN loss+grad, H=128 T=1000 B=16, jit: {label}"
                        + ("" if ck is None else " (JAX: jax.checkpoint on the body)"),
                        impls, "us", rtol=1e-3,
                        targets=(Target("jax", 0.5),) if ck is None else ()))
    return out
