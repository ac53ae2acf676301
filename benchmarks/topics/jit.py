"""jit: call overhead, a compiled MLP training step, a fused element-wise expression against the
memory bandwidth, and the first (trace + compile) and steady-state calls of a 1000-op function.

pullback.jit next to jax.jit (and PyTorch eager / NumPy where they make sense). Issue 6's
targets: call <= 0.25x jax.jit; MLP step <= 0.8x jax.jit; exp(x)*y + sin(z) on 4M float32 <=
1.3x a copy of the same bytes; 1000-op first call <= 0.25x jax.jit, steady state <= 1.0x.
"""
from __future__ import annotations

import importlib
import itertools

import numpy as np

from case import Case, Target
from timing import Impl

SIZES = [784, 512, 512, 10]
BATCH = 128
LR = 0.01
N_FUSED = 4 << 20


def _fw(fws, name):
    return next((f for f in fws if f.name == name), None)


# ---- call overhead: f(x) = x * 2 + 1 on 8 float32 ----

def _call_case(fws) -> Case:
    import pullback as pb
    import pullback.numpy as pnp
    x = np.arange(8, dtype=np.float32)
    impls = {"pullback": Impl("f(x)", {"f": pb.jit(lambda x: x * 2 + 1), "x": pnp.asarray(x)},
                              result=np.asarray),
             "numpy": Impl("x * 2 + 1", {"x": x})}
    if _fw(fws, "jax"):
        jax = importlib.import_module("jax")
        impls["jax"] = Impl("f(x)", {"f": jax.jit(lambda x: x * 2 + 1), "x": jax.numpy.asarray(x)},
                            sync=lambda r: r.block_until_ready(), result=np.asarray)
    if _fw(fws, "torch"):
        torch = importlib.import_module("torch")
        impls["torch"] = Impl("x * 2 + 1", {"x": torch.from_numpy(x.copy())},
                              result=lambda r: r.numpy())
    return Case("jit", "call of jitted x*2+1, 8 float32", impls, "us",
                targets=(Target("jax", 0.25),), rtol=1e-6)


# ---- MLP training step: value_and_grad + SGD in one jit ----

def _mlp_data():
    rng = np.random.default_rng(0)
    ws = [(rng.normal(size=(a, b)) * np.sqrt(2 / a)).astype(np.float32)
          for a, b in zip(SIZES[:-1], SIZES[1:])]
    bs = [np.zeros(b, np.float32) for b in SIZES[1:]]
    x = rng.random((BATCH, SIZES[0]), dtype=np.float32)
    y = rng.integers(0, SIZES[-1], BATCH).astype(np.int32)
    return ws, bs, x, y


def _step_fn(jax_like, nn, jnp):
    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = nn.relu(h @ w + b)
        w, b = params[-1]
        logp = nn.log_softmax(h @ w + b)
        return -jnp.mean(jnp.sum(logp * nn.one_hot(y, SIZES[-1]), axis=-1))

    def step(params, x, y):
        value, grads = jax_like.value_and_grad(loss)(params, x, y)
        new = [(w - LR * gw, b - LR * gb) for (w, b), (gw, gb) in zip(params, grads)]
        return value, new
    return step


def _numpy_step(ws, bs, x, y):
    """Hand-written forward and backward (NumPy has no autodiff)."""
    onehot = np.eye(SIZES[-1], dtype=np.float32)[y]

    def step(ws, bs):
        hs, h = [x], x
        for w, b in zip(ws[:-1], bs[:-1]):
            h = np.maximum(h @ w + b, 0)
            hs.append(h)
        z = h @ ws[-1] + bs[-1]
        z = z - z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        value = -np.mean((logp * onehot).sum(axis=1))
        g = (np.exp(logp) - onehot) / np.float32(BATCH)
        new_w, new_b = [], []
        for i in range(len(ws) - 1, -1, -1):
            gw, gb = hs[i].T @ g, g.sum(axis=0)
            if i:
                g = (g @ ws[i].T) * (hs[i] > 0)
            new_w.append(ws[i] - np.float32(LR) * gw)
            new_b.append(bs[i] - np.float32(LR) * gb)
        return value, new_w[::-1], new_b[::-1]
    return step


def _mlp_case(fws) -> Case:
    import pullback as pb
    import pullback.numpy as pnp
    from pullback import nn
    ws, bs, x, y = _mlp_data()
    step = pb.jit(_step_fn(pb, nn, pnp))
    params = [(pnp.asarray(w), pnp.asarray(b)) for w, b in zip(ws, bs)]
    impls = {"pullback": Impl("step(params, x, y)", {"step": step, "params": params,
                                                      "x": pnp.asarray(x), "y": pnp.asarray(y)},
                              result=lambda r: np.asarray(r[0])),
             "numpy": Impl("step(ws, bs)", {"step": _numpy_step(ws, bs, x, y), "ws": ws,
                                            "bs": bs}, result=lambda r: r[0])}
    if _fw(fws, "jax"):
        jax = importlib.import_module("jax")
        jstep = jax.jit(_step_fn(jax, jax.nn, jax.numpy))
        jparams = [(jax.numpy.asarray(w), jax.numpy.asarray(b)) for w, b in zip(ws, bs)]
        impls["jax"] = Impl("step(params, x, y)", {
            "step": jstep, "params": jparams, "x": jax.numpy.asarray(x),
            "y": jax.numpy.asarray(y)}, sync=lambda r: r[0].block_until_ready(),
            result=lambda r: np.asarray(r[0]))
    if _fw(fws, "torch"):
        impls["torch"] = _torch_step(importlib.import_module("torch"), ws, bs, x, y)
    return Case("jit", "MLP 784-512-512-10 train step (value_and_grad + SGD), batch 128", impls,
                "us", targets=(Target("jax", 0.8),), rtol=1e-4)


def _torch_step(torch, ws, bs, x, y) -> Impl:
    params = [torch.tensor(p, requires_grad=True) for wb in zip(ws, bs) for p in wb]
    xt, yt = torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))

    def step():
        h = xt
        for i in range(0, len(params) - 2, 2):
            h = torch.relu(h @ params[i] + params[i + 1])
        loss = torch.nn.functional.cross_entropy(h @ params[-2] + params[-1], yt)
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            new = [p - LR * g for p, g in zip(params, grads)]
        return loss.detach(), new
    return Impl("step()", {"step": step}, result=lambda r: r[0].numpy())


# ---- exp(x) * y + sin(z) on 4M float32, against a copy of the same bytes ----

def _fused_case(fws) -> Case:
    import pullback as pb
    import pullback.numpy as pnp
    rng = np.random.default_rng(1)
    x, y, z = (rng.uniform(-2, 2, N_FUSED).astype(np.float32) for _ in range(3))
    f = pb.jit(lambda x, y, z: pnp.exp(x) * y + pnp.sin(z))
    # the bandwidth bound: moving the same bytes (read 3 arrays, write 1) as a copy of 2
    # arrays' worth (read 2N, write 2N floats: the same 4N floats of traffic)
    src, dst = np.concatenate([x, y]), np.empty(2 * N_FUSED, np.float32)
    impls = {"pullback": Impl("f(x, y, z)", {"f": f, "x": pnp.asarray(x), "y": pnp.asarray(y),
                                             "z": pnp.asarray(z)}, result=np.asarray),
             "numpy": Impl("np.exp(x) * y + np.sin(z)", {"np": np, "x": x, "y": y, "z": z}),
             "copy": Impl("np.copyto(dst, src)", {"np": np, "dst": dst, "src": src},
                          result=lambda r: np.exp(x) * y + np.sin(z))}
    if _fw(fws, "jax"):
        jax = importlib.import_module("jax")
        jf = jax.jit(lambda x, y, z: jax.numpy.exp(x) * y + jax.numpy.sin(z))
        impls["jax"] = Impl("f(x, y, z)", {"f": jf, **{k: jax.numpy.asarray(v) for k, v in
                                                      (("x", x), ("y", y), ("z", z))}},
                            sync=lambda r: r.block_until_ready(), result=np.asarray)
    if _fw(fws, "torch"):
        torch = importlib.import_module("torch")
        impls["torch"] = Impl("torch.exp(x) * y + torch.sin(z)", {
            "torch": torch, **{k: torch.from_numpy(v.copy()) for k, v in
                               (("x", x), ("y", y), ("z", z))}}, result=lambda r: r.numpy())
    return Case("jit", "exp(x)*y + sin(z), 4M float32 (copy = bandwidth bound)", impls, "us",
                targets=(Target("copy", 1.3),), rtol=1e-4)


# ---- a 1000-op function on (16, 16): first call (trace + compile) and steady state ----

def _big_fn(ns, tanh, maximum, absolute):
    def f(x, w):
        h = x
        for _ in range(100):  # 10 primitives per iteration
            a = tanh(h @ w + x) * 0.5
            h = a - h * 0.25
            h = maximum(h, -1.0)
            h = h / (absolute(h) + 1.0)
        return ns.sum(h)
    return f


def _big_cases(fws) -> list[Case]:
    import pullback as pb
    import pullback.numpy as pnp
    rng = np.random.default_rng(2)
    x = rng.normal(size=(16, 16)).astype(np.float32)
    w = (rng.normal(size=(16, 16)) / 4).astype(np.float32)
    counter = itertools.count()

    def fresh_pb():  # a new function object each time: nothing cached
        next(counter)
        return pb.jit(_big_fn(pnp, pnp.tanh, pnp.maximum, pnp.abs))

    first = {"pullback": Impl("fresh()(x, w)", {"fresh": fresh_pb, "x": pnp.asarray(x),
                                                "w": pnp.asarray(w)}, result=np.asarray)}
    steady = {"pullback": Impl("f(x, w)", {"f": fresh_pb(), "x": pnp.asarray(x),
                                           "w": pnp.asarray(w)}, result=np.asarray),
              "numpy": Impl("f(x, w)", {"f": _big_fn(np, np.tanh, np.maximum, np.abs), "x": x,
                                        "w": w})}
    if _fw(fws, "jax"):
        jax = importlib.import_module("jax")
        jnp = jax.numpy

        def fresh_jax():
            return jax.jit(_big_fn(jnp, jnp.tanh, jnp.maximum, jnp.abs))

        env = {"x": jnp.asarray(x), "w": jnp.asarray(w)}
        sync = lambda r: r.block_until_ready()  # noqa: E731
        first["jax"] = Impl("fresh()(x, w)", {"fresh": fresh_jax, **env}, sync=sync,
                            result=np.asarray)
        steady["jax"] = Impl("f(x, w)", {"f": fresh_jax(), **env}, sync=sync, result=np.asarray)
    return [Case("jit", "1000-op function (16x16): first call, trace + compile", first, "us",
                 targets=(Target("jax", 0.25),), rtol=1e-3),
            Case("jit", "1000-op function (16x16): steady-state call", steady, "us",
                 targets=(Target("jax", 1.0),), rtol=1e-3)]


def cases(fws) -> list[Case]:
    return [_call_case(fws), _mlp_case(fws), _fused_case(fws)] + _big_cases(fws)
