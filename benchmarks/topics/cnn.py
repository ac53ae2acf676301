"""cnn: a small CNN's training step (issue 27): conv 3x3 (32) + relu + 2x2 max pool,
conv 3x3 (64) + relu + 2x2 max pool, dense to 10, on a (64, 1, 28, 28) batch; value_and_grad of
the softmax cross-entropy and an SGD update in one jit, next to jax.jit of the same function
and PyTorch eager (F.conv2d, F.max_pool2d, autograd, the same SGD update).

Each framework in its own idiom: pullback and JAX channels-last (NHWC / HWIO, as Flax; with one
input channel the batch's bytes are the same as NCHW's), PyTorch NCHW. Issue 27's target: the
step <= 0.8x PyTorch eager's. A second case writes the pullback and JAX programs channels-first
(NCHW / OIHW, JAX's default dimension numbers and PyTorch's layout), where the compiler
chooses the activations' layout (docs/conv.md).
"""
from __future__ import annotations

import importlib

import numpy as np

from case import Case, Target
from timing import Impl

B, LR = 64, 0.05
DN = ("NHWC", "HWIO", "NHWC")


def _fw(fws, name):
    return next((f for f in fws if f.name == name), None)


def _data():
    rng = np.random.default_rng(0)
    he = lambda shape, fan_in: (rng.standard_normal(shape) * np.sqrt(2 / fan_in)).astype(  # noqa: E731
        np.float32)
    p = {"w1": he((3, 3, 1, 32), 9), "b1": np.zeros(32, np.float32),
         "w2": he((3, 3, 32, 64), 9 * 32), "b2": np.zeros(64, np.float32),
         "w3": he((7 * 7 * 64, 10), 7 * 7 * 64), "b3": np.zeros(10, np.float32)}
    x = rng.standard_normal((B, 28, 28, 1)).astype(np.float32)
    y = rng.integers(0, 10, B).astype(np.int32)
    return p, x, y


def _step(jax_like, dn=DN):
    lax, jnp = jax_like.lax, jax_like.numpy
    window = (1, 1, 2, 2) if dn[0] == "NCHW" else (1, 2, 2, 1)
    bias = (lambda b: b[:, None, None]) if dn[0] == "NCHW" else (lambda b: b)

    def pool(h):
        return lax.reduce_window(h, -jnp.inf, lax.max, window, window, "VALID")

    def loss(p, x, y):
        h = lax.conv_general_dilated(x, p["w1"], (1, 1), "SAME", dimension_numbers=dn)
        h = pool(jax_like.nn.relu(h + bias(p["b1"])))
        h = lax.conv_general_dilated(h, p["w2"], (1, 1), "SAME", dimension_numbers=dn)
        h = pool(jax_like.nn.relu(h + bias(p["b2"])))
        logits = h.reshape(h.shape[0], -1) @ p["w3"] + p["b3"]
        logp = jax_like.nn.log_softmax(logits)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    def step(p, x, y):
        value, g = jax_like.value_and_grad(loss)(p, x, y)
        return value, {k: p[k] - LR * g[k] for k in p}
    return jax_like.jit(step)


def _channels_first(p, x):
    """The same parameters and batch in PyTorch's layouts: OIHW kernels, NCHW activations, and
    the dense layer's rows permuted from (h, w, c) to (c, h, w) flattening order."""
    q = {"w1": p["w1"].transpose(3, 2, 0, 1).copy(), "b1": p["b1"],
         "w2": p["w2"].transpose(3, 2, 0, 1).copy(), "b2": p["b2"],
         "w3": p["w3"].reshape(7, 7, 64, 10).transpose(2, 0, 1, 3).reshape(-1, 10).copy(),
         "b3": p["b3"]}
    return q, np.ascontiguousarray(x.transpose(0, 3, 1, 2))


def _torch_impl(torch, p, x, y) -> Impl:
    F = torch.nn.functional
    q, xq = _channels_first(p, x)
    pt = {k: torch.tensor(v, requires_grad=True) for k, v in q.items()}
    xt = torch.from_numpy(xq)
    yt = torch.from_numpy(y.astype(np.int64))

    def step():
        h = F.max_pool2d(F.relu(F.conv2d(xt, pt["w1"], pt["b1"], padding=1)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, pt["w2"], pt["b2"], padding=1)), 2)
        loss = F.cross_entropy(h.reshape(h.shape[0], -1) @ pt["w3"] + pt["b3"], yt)
        grads = torch.autograd.grad(loss, list(pt.values()))
        with torch.no_grad():
            new = {k: v - LR * g for (k, v), g in zip(pt.items(), grads)}
        return loss.detach(), new
    return Impl("step()", {"step": step}, result=lambda r: r[0].numpy())


def _impls(fws, p, x, y, dn) -> dict:
    import pullback as pb
    impls = {"pullback": Impl("f(p, x, y)", {
        "f": _step(pb, dn), "p": {k: pb.numpy.asarray(v) for k, v in p.items()},
        "x": pb.numpy.asarray(x), "y": pb.numpy.asarray(y)}, result=lambda r: np.asarray(r[0]))}
    if _fw(fws, "jax"):
        jax = importlib.import_module("jax")
        impls["jax"] = Impl("f(p, x, y)", {
            "f": _step(jax, dn), "p": {k: jax.numpy.asarray(v) for k, v in p.items()},
            "x": jax.numpy.asarray(x), "y": jax.numpy.asarray(y)},
            sync=lambda r: r[0].block_until_ready(), result=lambda r: np.asarray(r[0]))
    return impls


def cases(fws) -> list[Case]:
    p, x, y = _data()
    impls = _impls(fws, p, x, y, DN)
    q, xq = _channels_first(p, x)
    first = _impls(fws, q, xq, y, ("NCHW", "OIHW", "NCHW"))
    if _fw(fws, "torch"):
        impls["torch"] = first["torch"] = _torch_impl(importlib.import_module("torch"), p, x, y)
    net = f"CNN step conv3x3(32)+relu+pool2, conv3x3(64)+relu+pool2, dense10 on ({B},1,28,28)"
    return [Case("cnn", f"{net}: value_and_grad + SGD in one jit (torch: eager)", impls, "us",
                 targets=(Target("torch", 0.8),), rtol=1e-4,
                 reference="torch" if "torch" in impls else "pullback"),
            Case("cnn", f"{net} written NCHW/OIHW (pullback: the compiler picks the layout)",
                 first, "us", rtol=1e-4, reference="torch" if "torch" in first else "pullback")]
