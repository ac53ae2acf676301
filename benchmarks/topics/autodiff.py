"""Eager reverse mode: one value_and_grad of the demo's MLP (64-128-128-10, batch 64,
softmax cross-entropy), without jit, in each framework with autodiff (NumPy has none)."""
from __future__ import annotations

import importlib

import numpy as np

from case import Case
from timing import Impl

SIZES = [64, 128, 128, 10]
BATCH = 64


def _data():
    rng = np.random.default_rng(0)
    ws = [rng.normal(size=(a, b)).astype(np.float32) * np.float32(np.sqrt(2 / a))
          for a, b in zip(SIZES[:-1], SIZES[1:])]
    bs = [np.zeros(b, np.float32) for b in SIZES[1:]]
    x = rng.random((BATCH, SIZES[0]), dtype=np.float32)
    y = rng.integers(0, SIZES[-1], BATCH)
    return ws, bs, x, y


def _pullback(ws, bs, x, y) -> Impl:
    import pullback as pb
    import pullback.numpy as jnp
    from pullback import nn

    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = nn.relu(h @ w + b)
        w, b = params[-1]
        logp = nn.log_softmax(h @ w + b)
        return -jnp.mean(jnp.sum(logp * nn.one_hot(y, SIZES[-1]), axis=-1))

    params = [(jnp.asarray(w), jnp.asarray(b)) for w, b in zip(ws, bs)]
    vg = pb.value_and_grad(loss)
    return Impl("vg(params, x, y)", {"vg": vg, "params": params, "x": jnp.asarray(x),
                                      "y": jnp.asarray(y.astype(np.int32))},
                result=lambda r: np.asarray(r[0]))


def _jax(jax, ws, bs, x, y) -> Impl:
    jnp = jax.numpy

    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = jax.nn.relu(h @ w + b)
        w, b = params[-1]
        logp = jax.nn.log_softmax(h @ w + b)
        return -jnp.mean(jnp.sum(logp * jax.nn.one_hot(y, SIZES[-1]), axis=-1))

    params = [(jnp.asarray(w), jnp.asarray(b)) for w, b in zip(ws, bs)]
    vg = jax.value_and_grad(loss)  # eager: no jit
    return Impl("vg(params, x, y)", {"vg": vg, "params": params, "x": jnp.asarray(x),
                                      "y": jnp.asarray(y.astype(np.int32))},
                sync=lambda r: r[0].block_until_ready(), result=lambda r: np.asarray(r[0]))


def _torch(torch, ws, bs, x, y) -> Impl:
    params = [(torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True))
              for w, b in zip(ws, bs)]
    xt, yt = torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))

    def vg():
        h = xt
        for w, b in params[:-1]:
            h = torch.relu(h @ w + b)
        w, b = params[-1]
        loss = torch.nn.functional.cross_entropy(h @ w + b, yt)
        grads = torch.autograd.grad(loss, [p for wb in params for p in wb])
        return loss.detach(), grads

    return Impl("vg()", {"vg": vg}, result=lambda r: r[0].numpy())


def cases(fws) -> list[Case]:
    ws, bs, x, y = _data()
    names = {f.name for f in fws}
    impls = {"pullback": _pullback(ws, bs, x, y)}
    if "jax" in names:
        impls["jax"] = _jax(importlib.import_module("jax"), ws, bs, x, y)
    if "torch" in names:
        impls["torch"] = _torch(importlib.import_module("torch"), ws, bs, x, y)
    return [Case("autodiff", "value_and_grad, MLP 64-128-128-10, batch 64, eager", impls, "us",
                 rtol=1e-4)]
