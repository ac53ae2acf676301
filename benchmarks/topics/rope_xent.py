"""RoPE and softmax cross-entropy (issue 26), float32, each step under jit: pullback's fused
kernels next to the same mathematics written by hand in pullback, the hand-written form under
jax.jit (optax's loss for cross-entropy) and PyTorch eager. The issue sets no targets for these.
"""
from __future__ import annotations

import importlib

import numpy as np

from case import Case
from timing import Impl

B, T, H, D = 4, 512, 8, 64
N, C = 4096, 1000


def _fw(fws, name):
    return next((f for f in fws if f.name == name), None)


def _rope_by_hand(jnp, x, pos, theta=10000.0):
    """Rotate-half RoPE as JAX-style model code writes it."""
    d = x.shape[-1]
    f = 1.0 / theta ** (jnp.arange(0, d, 2, dtype=jnp.float32) / d)
    a = pos.astype(jnp.float32)[:, None] * f
    a = jnp.concatenate([a, a], -1)[:, None, :]
    rot = jnp.concatenate([-x[..., d // 2:], x[..., :d // 2]], -1)
    return x * jnp.cos(a) + rot * jnp.sin(a)


def _rope_case(fws) -> Case:
    import pullback as pb
    import pullback.numpy as pnp
    rng = np.random.default_rng(0)
    x = rng.standard_normal((B, T, H, D)).astype(np.float32)
    pos = np.arange(T, dtype=np.int32)
    px, ppos = pnp.asarray(x), pnp.asarray(pos)

    def vg(jax_like, f):
        return jax_like.jit(jax_like.grad(lambda x, p: jax_like.numpy.sum(f(x, p) ** 2)))
    impls = {"pullback": Impl("f(x, p)", {"f": vg(pb, pb.nn.rope), "x": px, "p": ppos},
                              result=np.asarray),
             "pullback by hand": Impl("f(x, p)", {
                 "f": vg(pb, lambda x, p: _rope_by_hand(pnp, x, p)), "x": px, "p": ppos},
                 result=np.asarray)}
    if _fw(fws, "jax"):
        jax = importlib.import_module("jax")
        impls["jax"] = Impl("f(x, p)", {
            "f": vg(jax, lambda x, p: _rope_by_hand(jax.numpy, x, p)),
            "x": jax.numpy.asarray(x), "p": jax.numpy.asarray(pos)},
            sync=lambda r: r.block_until_ready(), result=np.asarray)
    if _fw(fws, "torch"):
        torch = importlib.import_module("torch")
        xt, pt = torch.from_numpy(x), torch.from_numpy(pos)

        def step():
            xr = xt.clone().requires_grad_(True)
            f = 1.0 / 10000.0 ** (torch.arange(0, D, 2, dtype=torch.float32) / D)
            a = pt.float()[:, None] * f
            a = torch.cat([a, a], -1)[:, None, :]
            rot = torch.cat([-xr[..., D // 2:], xr[..., :D // 2]], -1)
            (xr * torch.cos(a) + rot * torch.sin(a)).square().sum().backward()
            return xr.grad
        impls["torch"] = Impl("step()", {"step": step}, result=lambda r: r.numpy())
    return Case("rope_xent", f"rope gradient of sum(rope(x)**2), B{B} T{T} H{H} D{D}", impls,
                "us", rtol=1e-4, reference="pullback by hand")


def _xent_case(fws) -> Case:
    import pullback as pb
    import pullback.numpy as pnp
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((N, C)).astype(np.float32)
    labels = rng.integers(0, C, N).astype(np.int32)
    pl, plab = pnp.asarray(logits), pnp.asarray(labels)
    fused = pb.jit(pb.value_and_grad(lambda l, y: pnp.mean(
        pb.nn.softmax_cross_entropy_with_integer_labels(l, y))))
    by_hand = pb.jit(pb.value_and_grad(lambda l, y: -pnp.mean(pnp.take_along_axis(
        pb.nn.log_softmax(l), y[:, None], axis=1))))
    impls = {"pullback": Impl("f(l, y)", {"f": fused, "l": pl, "y": plab},
                              result=lambda r: np.asarray(r[1])),
             "pullback by hand": Impl("f(l, y)", {"f": by_hand, "l": pl, "y": plab},
                                      result=lambda r: np.asarray(r[1]))}
    if _fw(fws, "jax"):
        jax, optax = importlib.import_module("jax"), importlib.import_module("optax")
        f = jax.jit(jax.value_and_grad(lambda l, y: jax.numpy.mean(
            optax.softmax_cross_entropy_with_integer_labels(l, y))))
        impls["jax"] = Impl("f(l, y)", {"f": f, "l": jax.numpy.asarray(logits),
                                        "y": jax.numpy.asarray(labels)},
                            sync=lambda r: r[1].block_until_ready(),
                            result=lambda r: np.asarray(r[1]))
    if _fw(fws, "torch"):
        torch = importlib.import_module("torch")
        lt, yt = torch.from_numpy(logits), torch.from_numpy(labels.astype(np.int64))

        def step():
            lr = lt.clone().requires_grad_(True)
            torch.nn.functional.cross_entropy(lr, yt).backward()
            return lr.grad
        impls["torch"] = Impl("step()", {"step": step}, result=lambda r: r.numpy())
    return Case("rope_xent", f"integer-label cross-entropy value_and_grad, ({N}, {C})", impls,
                "us", rtol=1e-4, reference="pullback by hand")


def cases(fws) -> list[Case]:
    return [_rope_case(fws), _xent_case(fws)]
