"""pullback.optim inside a compiled training step: the demo's MLP (64-128-128-10 on
scikit-learn-sized digits batches of 64) trained by one jitted step (value_and_grad + Adam +
apply_updates), with ``pullback.optim.adam`` next to the same step with Adam written by hand,
optax's adam under jax.jit, and PyTorch's ``torch.optim.Adam``.

Issue 25's target: the step with pullback.optim.adam costs no more than the hand-written one.
"""
from __future__ import annotations

import importlib

import numpy as np

from case import Case, Target
from timing import Impl

SIZES = [64, 128, 128, 10]
BATCH = 64
LR, B1, B2, EPS = 1e-3, 0.9, 0.999, 1e-8


def _fw(fws, name):
    return next((f for f in fws if f.name == name), None)


def _data():
    rng = np.random.default_rng(0)
    ws = [(rng.normal(size=(a, b)) * np.sqrt(2 / a)).astype(np.float32)
          for a, b in zip(SIZES[:-1], SIZES[1:])]
    bs = [np.zeros(b, np.float32) for b in SIZES[1:]]
    x = rng.random((BATCH, SIZES[0]), dtype=np.float32)
    y = rng.integers(0, SIZES[-1], BATCH).astype(np.int32)
    return [{"w": w, "b": b} for w, b in zip(ws, bs)], x, y


def _loss_fn(nn, jnp):
    def loss(params, x, y):
        h = x
        for layer in params[:-1]:
            h = nn.relu(h @ layer["w"] + layer["b"])
        logp = nn.log_softmax(h @ params[-1]["w"] + params[-1]["b"])
        return -jnp.mean(jnp.sum(logp * nn.one_hot(y, SIZES[-1]), axis=-1))
    return loss


def _library_step(jax_like, optimizer):
    """The usual optax-style step: the optimizer is a library GradientTransformation."""
    loss = _loss_fn(jax_like.nn, jax_like.numpy)
    opt, apply_updates = optimizer

    def step(params, opt_state, x, y):
        value, grads = jax_like.value_and_grad(loss)(params, x, y)
        updates, opt_state = opt.update(grads, opt_state, params)
        return apply_updates(params, updates), opt_state, value
    return jax_like.jit(step)


def _hand_step(pb):
    """Adam written out by hand (the bias corrections as optax computes them)."""
    loss = _loss_fn(pb.nn, pb.numpy)
    tree_map = pb.tree_util.tree_map

    def step(params, state, x, y):
        value, grads = pb.value_and_grad(loss)(params, x, y)
        count, mu, nu = state
        count = count + 1
        mu = tree_map(lambda m, g: (1 - B1) * g + B1 * m, mu, grads)
        nu = tree_map(lambda v, g: (1 - B2) * g * g + B2 * v, nu, grads)
        c1 = 1 - B1 ** count.astype("float32")
        c2 = 1 - B2 ** count.astype("float32")
        params = tree_map(lambda p, m, v: p - LR * (m / c1) / (pb.numpy.sqrt(v / c2) + EPS),
                          params, mu, nu)
        return params, (count, mu, nu), value
    return pb.jit(step)


def _adam_case(fws) -> Case:
    import pullback as pb
    import pullback.numpy as pnp
    import pullback.optim as optim
    params, x, y = _data()
    pparams = pb.tree_util.tree_map(pnp.asarray, params)
    px, py = pnp.asarray(x), pnp.asarray(y)
    opt = optim.adam(LR, b1=B1, b2=B2, eps=EPS)
    lib = _library_step(pb, (opt, optim.apply_updates))
    hand = _hand_step(pb)
    zeros = pb.tree_util.tree_map(pnp.zeros_like, pparams)
    hand_state = (pnp.zeros((), pnp.int32), zeros, zeros)
    # each implementation repeats the step from the same state: the same work every call
    impls = {"pullback": Impl("step(params, state, x, y)", {
                 "step": lib, "params": pparams, "state": opt.init(pparams), "x": px, "y": py},
                 result=lambda r: np.asarray(r[0][0]["w"])),
             "pullback hand-written Adam": Impl("step(params, state, x, y)", {
                 "step": hand, "params": pparams, "state": hand_state, "x": px, "y": py},
                 result=lambda r: np.asarray(r[0][0]["w"]))}
    optax = importlib.import_module("optax") if _fw(fws, "jax") else None
    if optax is not None:
        jax = importlib.import_module("jax")
        jparams = jax.tree_util.tree_map(jax.numpy.asarray, params)
        jopt = optax.adam(LR, b1=B1, b2=B2, eps=EPS)
        jstep = _library_step(jax, (jopt, optax.apply_updates))
        impls["jax"] = Impl("step(params, state, x, y)", {
            "step": jstep, "params": jparams, "state": jopt.init(jparams),
            "x": jax.numpy.asarray(x), "y": jax.numpy.asarray(y)},
            sync=lambda r: r[2].block_until_ready(), result=lambda r: np.asarray(r[0][0]["w"]))
    if _fw(fws, "torch"):
        impls["torch"] = _torch_step(importlib.import_module("torch"), params, x, y)
    return Case("optim", "demo MLP 64-128-128-10 train step with Adam, batch 64", impls, "us",
                targets=(Target("pullback hand-written Adam", 1.0),), rtol=1e-4,
                reference="pullback hand-written Adam")


def _torch_step(torch, params, x, y) -> Impl:
    """PyTorch's usual loop body: forward, backward, an in-place ``torch.optim.Adam`` step."""
    ps = [torch.tensor(v, requires_grad=True) for layer in params for v in (layer["w"], layer["b"])]
    opt = torch.optim.Adam(ps, lr=LR, betas=(B1, B2), eps=EPS)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))

    def step():
        h = xt
        for i in range(0, len(ps) - 2, 2):
            h = torch.relu(h @ ps[i] + ps[i + 1])
        loss = torch.nn.functional.cross_entropy(h @ ps[-2] + ps[-1], yt)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return ps
    # checked once, on the first step (from the same start as the others); later calls go on
    # training, which costs the same
    return Impl("step()", {"step": step}, result=lambda r: r[0].detach().numpy())


def cases(fws) -> list[Case]:
    return [_adam_case(fws)]
