"""pullback.nn.dot_product_attention (one fused flash-style kernel forward and backward) under
jit, next to PyTorch's scaled_dot_product_attention and, for the masked case, the manual
formulation (einsum, soft cap, jnp.where mask, softmax) under jax.jit.

Issue 26's targets (float32):
  * causal attention B4 H8 T512 D64: forward <= 1.0x torch SDPA; forward + backward <= 1.0x;
  * causal sliding window 128 + logit softcap 30, B4 H8 T2048 D64, forward + backward: <= 0.5x
    the manual masked formulation under jax.jit;
  * T 8192 D64 one head, forward + backward: O(T D) memory. The compiled program's
    memory_analysis (arena temporaries) and the kernels' own scratch (computed from
    csrc/attention.c's allocations: packed keys/values, chunk accumulators, dQ shares, tiles of
    64 queries x 128 keys) are in the case's name; a T x T float32 score matrix would be T*T*4
    bytes.
"""
from __future__ import annotations

import importlib
import os

import numpy as np

from case import Case, Target
from timing import Impl

NEG = -0.7 * float(np.finfo(np.float32).max)


def _fw(fws, name):
    return next((f for f in fws if f.name == name), None)


def _data(B, T, H, D, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((B, T, H, D)).astype(np.float32) for _ in range(4)]


def _env(g, array, q, k, v, ct):
    return {"g": g, "q": array(q), "k": array(k), "v": array(v), "ct": array(ct)}


def _flat(rs):
    return np.concatenate([np.asarray(r, np.float64).ravel() for r in rs])


def _pb_fns(kw):
    import pullback as pb

    def f(q, k, v):
        return pb.nn.dot_product_attention(q, k, v, **kw)

    def grads(q, k, v, ct):
        return pb.grad(lambda q, k, v: (f(q, k, v) * ct).sum(), argnums=(0, 1, 2))(q, k, v)
    return pb.jit(f), pb.jit(grads)


def _torch_impls(torch, q, k, v, ct):
    """SDPA on (B, H, T, D) tensors (its layout); the backward from out.backward(ct)."""
    sdpa = torch.nn.functional.scaled_dot_product_attention
    tq, tk, tv, tct = (torch.from_numpy(np.ascontiguousarray(x.transpose(0, 2, 1, 3)))
                       for x in (q, k, v, ct))
    rq, rk, rv = (x.clone().requires_grad_() for x in (tq, tk, tv))

    def fwd():
        with torch.no_grad():
            return sdpa(tq, tk, tv, is_causal=True)

    def both():
        for x in (rq, rk, rv):
            x.grad = None
        sdpa(rq, rk, rv, is_causal=True).backward(tct)
        return rq.grad, rk.grad, rv.grad
    back = lambda r: r.numpy().transpose(0, 2, 1, 3)  # noqa: E731
    return (Impl("fwd()", {"fwd": fwd}, result=back),
            Impl("both()", {"both": both}, result=lambda r: _flat(back(x) for x in r)))


def _causal_cases(fws):
    import pullback.numpy as pnp
    q, k, v, ct = _data(4, 512, 8, 64)
    f, g = _pb_fns(dict(is_causal=True))
    pq, pk, pv, pct = (pnp.asarray(x) for x in (q, k, v, ct))
    fwd = {"pullback": Impl("f(q, k, v)", {"f": f, "q": pq, "k": pk, "v": pv},
                            result=np.asarray)}
    both = {"pullback": Impl("g(q, k, v, ct)", {"g": g, "q": pq, "k": pk, "v": pv, "ct": pct},
                             result=_flat)}
    torch = importlib.import_module("torch") if _fw(fws, "torch") else None
    if torch is not None:
        fwd["torch"], both["torch"] = _torch_impls(torch, q, k, v, ct)
    ref = "torch" if torch is not None else "pullback"
    return [Case("attention", "causal B4 H8 T512 D64 forward", fwd, "us",
                 targets=(Target("torch", 1.0),), rtol=1e-4, reference=ref),
            Case("attention", "causal B4 H8 T512 D64 forward+backward", both, "us",
                 targets=(Target("torch", 1.0),), rtol=1e-3, reference=ref)]


def _manual_jax(jax, T, window, cap):
    jnp = jax.numpy

    def f(q, k, v):
        s = jnp.einsum("btnh,bsnh->bnts", q, k) / np.float32(np.sqrt(q.shape[-1]))
        s = cap * jnp.tanh(s / cap)
        i, j = jnp.arange(T)[:, None], jnp.arange(T)[None, :]
        keep = (j <= i) & (j >= i - window)
        p = jax.nn.softmax(jnp.where(keep, s, NEG), axis=-1)
        return jnp.einsum("bnts,bsnh->btnh", p, v)

    def grads(q, k, v, ct):
        return jax.grad(lambda q, k, v: (f(q, k, v) * ct).sum(), argnums=(0, 1, 2))(q, k, v)
    return jax.jit(grads)


def _window_case(fws):
    import pullback.numpy as pnp
    B, T, H, D, W, CAP = 4, 2048, 8, 64, 128, 30.0
    q, k, v, ct = _data(B, T, H, D, 1)
    _, g = _pb_fns(dict(is_causal=True, local_window_size=(W, 0), logit_softcap=CAP))
    impls = {"pullback": Impl("g(q, k, v, ct)", _env(g, pnp.asarray, q, k, v, ct),
                              result=_flat)}
    if _fw(fws, "jax"):
        jax = importlib.import_module("jax")
        jg = _manual_jax(jax, T, W, CAP)
        env = _env(jg, jax.numpy.asarray, q, k, v, ct)
        impls["jax manual masked"] = Impl("g(q, k, v, ct)", env,
                                          sync=lambda r: r[0].block_until_ready(), result=_flat)
    return Case("attention", f"causal window {W} softcap {CAP:g} B{B} H{H} T{T} D{D} "
                "forward+backward", impls, "us",
                targets=(Target("jax manual masked", 0.5),), rtol=1e-3,
                reference="jax manual masked" if len(impls) > 1 else "pullback")


def _memory_case(fws):
    import pullback.numpy as pnp
    T, D = 8192, 64
    q, k, v, ct = _data(1, T, 1, D, 2)
    _, g = _pb_fns(dict(is_causal=True))
    args = [pnp.asarray(x) for x in (q, k, v, ct)]
    mem = g.lower(*args).compile().memory_analysis()
    threads = os.cpu_count() or 1
    # csrc/attention.c's per-call scratch: the forward's per-thread packed keys/values and
    # tiles; the backward's per-thread chunk accumulators and tiles, and its dQ shares (8
    # chunks of keys for one head)
    tiles = -(-T // 128)
    chunks = min(tiles, 8)
    kc = -(-tiles // chunks) * 128
    fwd = threads * 4 * (2 * T * D + 7 * 64 * D + 4 * 128 * D + 3 * 64 * 128)
    bwd = threads * 4 * (4 * 64 * D + 5 * kc * D + 3 * 64 * 128) + chunks * T * D * 4
    scratch = max(fwd, bwd)
    name = (f"causal T{T} D{D} 1 head forward+backward (memory_analysis temp "
            f"{mem.temp_size_in_bytes / 2**20:.1f} MiB, args "
            f"{mem.argument_size_in_bytes / 2**20:.1f} MiB, kernel scratch <= "
            f"{scratch / 2**20:.1f} MiB; T*T*4 = {T * T * 4 / 2**20:.0f} MiB)")
    impls = {"pullback": Impl("g(q, k, v, ct)", _env(g, lambda x: x, *args), result=_flat)}
    torch = importlib.import_module("torch") if _fw(fws, "torch") else None
    if torch is not None:
        impls["torch"] = _torch_impls(torch, q, k, v, ct)[1]
    return Case("attention", name, impls, "us", rtol=1e-3,
                reference="torch" if torch is not None else "pullback")


def cases(fws) -> list[Case]:
    return _causal_cases(fws) + [_window_case(fws), _memory_case(fws)]
