"""transformer: a pre-LN transformer block written by hand (mean/var layer norms, causal
attention as softmax(q k^T * scale) with a ``jnp.where`` mask, MLP 4x with tanh gelu), its
value_and_grad with respect to every parameter in one jit, pullback.jit next to jax.jit (the
same function, written once against a ``jnp``/``nn``/``lax`` namespace) and PyTorch eager.

Issue 26's targets (B8 T128 D256 H4, float32): the hand-written block under pullback.jit
<= 1.0x jax.jit's (its speed comes from the compiler's general fusion); the block on
pullback's fused ops (nn.layer_norm, nn.dot_product_attention) <= 0.8x PyTorch eager on its
fused ops (F.layer_norm, F.scaled_dot_product_attention).
"""
from __future__ import annotations

import importlib

import numpy as np

from case import Case, Target
from timing import Impl

B, T, D, H = 8, 128, 256, 4


def _fw(fws, name):
    return next((f for f in fws if f.name == name), None)


def _data():
    rng = np.random.default_rng(0)
    f = lambda *s, scale=1.0: (rng.standard_normal(s) * scale).astype(np.float32)  # noqa: E731
    p = {"ln1_g": 1 + f(D, scale=.1), "ln1_b": f(D, scale=.1),
         "w_qkv": f(D, 3 * D, scale=D ** -.5), "b_qkv": f(3 * D, scale=.1),
         "w_o": f(D, D, scale=D ** -.5), "b_o": f(D, scale=.1),
         "ln2_g": 1 + f(D, scale=.1), "ln2_b": f(D, scale=.1),
         "w_1": f(D, 4 * D, scale=D ** -.5), "b_1": f(4 * D, scale=.1),
         "w_2": f(4 * D, D, scale=(4 * D) ** -.5), "b_2": f(D, scale=.1)}
    return p, f(B, T, D)


def _block_loss(jnp, nn, lax):
    def layer_norm(x, g, b):
        m = jnp.mean(x, axis=-1, keepdims=True)
        v = jnp.mean((x - m) ** 2, axis=-1, keepdims=True)
        return (x - m) * lax.rsqrt(v + 1e-5) * g + b

    def loss(p, x):
        b, t, d = x.shape
        dh = d // H
        h = layer_norm(x, p["ln1_g"], p["ln1_b"])
        q, k, v = jnp.split(h @ p["w_qkv"] + p["b_qkv"], 3, axis=-1)
        q, k, v = (u.reshape(b, t, H, dh).transpose(0, 2, 1, 3) for u in (q, k, v))
        s = q @ k.transpose(0, 1, 3, 2) * np.float32(dh ** -0.5)
        s = jnp.where(jnp.tril(jnp.ones((t, t), dtype=bool)), s, -1e9)
        o = (nn.softmax(s, axis=-1) @ v).transpose(0, 2, 1, 3).reshape(b, t, d)
        x = x + o @ p["w_o"] + p["b_o"]
        h = layer_norm(x, p["ln2_g"], p["ln2_b"])
        m = nn.gelu(h @ p["w_1"] + p["b_1"], approximate=True) @ p["w_2"] + p["b_2"]
        return jnp.mean((x + m) ** 2)
    return loss


def _torch_impl(torch, p, x) -> Impl:
    """The same block in PyTorch eager (autograd), written out the same way."""
    pt = {k: torch.tensor(v, requires_grad=True) for k, v in p.items()}
    xt = torch.from_numpy(x)
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
    F = torch.nn.functional

    def layer_norm(x, g, b):
        m = x.mean(-1, keepdim=True)
        v = ((x - m) ** 2).mean(-1, keepdim=True)
        return (x - m) * torch.rsqrt(v + 1e-5) * g + b

    def step():
        dh = D // H
        h = layer_norm(xt, pt["ln1_g"], pt["ln1_b"])
        q, k, v = (h @ pt["w_qkv"] + pt["b_qkv"]).split(D, dim=-1)
        q, k, v = (u.reshape(B, T, H, dh).transpose(1, 2) for u in (q, k, v))
        s = (q @ k.transpose(-1, -2)) * dh ** -0.5
        s = torch.where(mask, s, torch.tensor(-1e9))
        o = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(B, T, D)
        y = xt + o @ pt["w_o"] + pt["b_o"]
        h = layer_norm(y, pt["ln2_g"], pt["ln2_b"])
        m = F.gelu(h @ pt["w_1"] + pt["b_1"], approximate="tanh") @ pt["w_2"] + pt["b_2"]
        loss = ((y + m) ** 2).mean()
        grads = torch.autograd.grad(loss, list(pt.values()))
        return loss.detach(), grads
    return Impl("step()", {"step": step}, result=lambda r: r[0].numpy())


def _block_case(fws) -> Case:
    import pullback as pb
    p, x = _data()
    f = pb.jit(pb.value_and_grad(_block_loss(pb.numpy, pb.nn, pb.lax)))
    impls = {"pullback": Impl("f(p, x)", {"f": f, "p": {k: pb.numpy.asarray(v) for k, v in
                                                          p.items()}, "x": pb.numpy.asarray(x)},
                              result=lambda r: np.asarray(r[0]))}
    if _fw(fws, "jax"):
        jax = importlib.import_module("jax")
        jf = jax.jit(jax.value_and_grad(_block_loss(jax.numpy, jax.nn, jax.lax)))
        impls["jax"] = Impl("f(p, x)", {
            "f": jf, "p": {k: jax.numpy.asarray(v) for k, v in p.items()},
            "x": jax.numpy.asarray(x)}, sync=lambda r: r[0].block_until_ready(),
            result=lambda r: np.asarray(r[0]))
    if _fw(fws, "torch"):
        impls["torch"] = _torch_impl(importlib.import_module("torch"), p, x)
    return Case("transformer", f"pre-LN block B{B} T{T} D{D} H{H} causal, hand-written "
                "attention and layer norms, value_and_grad in one jit", impls, "us",
                targets=(Target("jax", 1.0),), rtol=1e-4,
                reference="jax" if "jax" in impls else "pullback")


def _fused_block_loss(pb):
    """The same block on pullback's fused ops: nn.layer_norm and nn.dot_product_attention."""
    jnp, nn = pb.numpy, pb.nn

    def loss(p, x):
        b, t, d = x.shape
        h = nn.layer_norm(x, p["ln1_g"], p["ln1_b"])
        q, k, v = jnp.split(h @ p["w_qkv"] + p["b_qkv"], 3, axis=-1)
        q, k, v = (u.reshape(b, t, H, d // H) for u in (q, k, v))  # BTNH, no transposes
        o = nn.dot_product_attention(q, k, v, is_causal=True).reshape(b, t, d)
        x = x + o @ p["w_o"] + p["b_o"]
        h = nn.layer_norm(x, p["ln2_g"], p["ln2_b"])
        m = nn.gelu(h @ p["w_1"] + p["b_1"], approximate=True) @ p["w_2"] + p["b_2"]
        return jnp.mean((x + m) ** 2)
    return loss


def _torch_fused_impl(torch, p, x) -> Impl:
    """PyTorch eager with its fused ops: F.layer_norm and F.scaled_dot_product_attention."""
    pt = {k: torch.tensor(v, requires_grad=True) for k, v in p.items()}
    xt = torch.from_numpy(x)
    F = torch.nn.functional

    def step():
        h = F.layer_norm(xt, (D,), pt["ln1_g"], pt["ln1_b"])
        q, k, v = (h @ pt["w_qkv"] + pt["b_qkv"]).split(D, dim=-1)
        q, k, v = (u.reshape(B, T, H, D // H).transpose(1, 2) for u in (q, k, v))
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = xt + o.transpose(1, 2).reshape(B, T, D) @ pt["w_o"] + pt["b_o"]
        h = F.layer_norm(y, (D,), pt["ln2_g"], pt["ln2_b"])
        m = F.gelu(h @ pt["w_1"] + pt["b_1"], approximate="tanh") @ pt["w_2"] + pt["b_2"]
        loss = ((y + m) ** 2).mean()
        grads = torch.autograd.grad(loss, list(pt.values()))
        return loss.detach(), grads
    return Impl("step()", {"step": step}, result=lambda r: r[0].numpy())


def _fused_block_case(fws) -> Case:
    import pullback as pb
    p, x = _data()
    f = pb.jit(pb.value_and_grad(_fused_block_loss(pb)))
    impls = {"pullback": Impl("f(p, x)", {"f": f, "p": {k: pb.numpy.asarray(v) for k, v in
                                                          p.items()}, "x": pb.numpy.asarray(x)},
                              result=lambda r: np.asarray(r[0]))}
    if _fw(fws, "torch"):
        impls["torch"] = _torch_fused_impl(importlib.import_module("torch"), p, x)
    return Case("transformer", f"pre-LN block B{B} T{T} D{D} H{H} causal, nn.layer_norm and "
                "nn.dot_product_attention (torch: F.layer_norm, SDPA), value_and_grad",
                impls, "us", targets=(Target("torch", 0.8),), rtol=1e-4,
                reference="torch" if "torch" in impls else "pullback")


def cases(fws) -> list[Case]:
    return [_block_case(fws), _fused_block_case(fws)]
