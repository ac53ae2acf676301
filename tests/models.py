"""Small models the tests compile whole: a pre-norm transformer block (attention with a causal
mask, layer norms, a GELU MLP) and its data."""
import numpy as np

import pullback as pb
import pullback.lax as lax
import pullback.numpy as jnp


def block_loss(p, x, heads=4):
    def layer_norm(x, g, b):
        m = jnp.mean(x, axis=-1, keepdims=True)
        v = jnp.mean((x - m) ** 2, axis=-1, keepdims=True)
        return (x - m) * lax.rsqrt(v + 1e-5) * g + b

    B, T, D = x.shape
    dh = D // heads
    h = layer_norm(x, p["ln1_g"], p["ln1_b"])
    q, k, v = jnp.split(h @ p["w_qkv"] + p["b_qkv"], 3, axis=-1)
    q, k, v = (t.reshape(B, T, heads, dh).transpose(0, 2, 1, 3) for t in (q, k, v))
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh).astype(np.float32)
    s = jnp.where(jnp.tril(jnp.ones((T, T), dtype=bool)), s, -1e9)
    o = (pb.nn.softmax(s, axis=-1) @ v).transpose(0, 2, 1, 3).reshape(B, T, D)
    x = x + o @ p["w_o"] + p["b_o"]
    h = layer_norm(x, p["ln2_g"], p["ln2_b"])
    m = pb.nn.gelu(h @ p["w_1"] + p["b_1"], approximate=True) @ p["w_2"] + p["b_2"]
    return jnp.mean((x + m) ** 2)


def block_data(B=2, T=16, D=32):
    rng = np.random.default_rng(0)
    f = lambda *s, scale=1.0: (rng.standard_normal(s) * scale).astype(np.float32)
    p = {"ln1_g": 1 + f(D, scale=.1), "ln1_b": f(D, scale=.1),
         "w_qkv": f(D, 3 * D, scale=D ** -.5), "b_qkv": f(3 * D, scale=.1),
         "w_o": f(D, D, scale=D ** -.5), "b_o": f(D, scale=.1),
         "ln2_g": 1 + f(D, scale=.1), "ln2_b": f(D, scale=.1),
         "w_1": f(D, 4 * D, scale=D ** -.5), "b_1": f(4 * D, scale=.1),
         "w_2": f(4 * D, D, scale=(4 * D) ** -.5), "b_2": f(D, scale=.1)}
    return p, f(B, T, D)
