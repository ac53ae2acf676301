"""Fused norms (issue 26): ``pullback.nn.layer_norm`` and ``rms_norm`` on a (4096, 1024)
float32 activation with a scale (and a bias), forward alone and forward + backward (the
gradients of x, scale and bias for a given output cotangent), next to PyTorch's
``torch.nn.functional.layer_norm`` / ``rms_norm`` (autograd) and the mean/var formula under
jax.jit.

Targets: pullback <= 1.0x PyTorch in all four cases. pullback's functions run jitted (one
kernel step each way); "pullback eager" calls them directly.
"""
from __future__ import annotations

import importlib

import numpy as np

from case import Case, Target
from timing import Impl

SHAPE = (4096, 1024)


def _fw(fws, name):
    return next((f for f in fws if f.name == name), None)


def _data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(SHAPE, dtype=np.float32)
    s = (1 + 0.1 * rng.standard_normal(SHAPE[-1])).astype(np.float32)
    b = (0.1 * rng.standard_normal(SHAPE[-1])).astype(np.float32)
    dy = rng.standard_normal(SHAPE, dtype=np.float32)
    return x, s, b, dy


def _pullback_fns(rms: bool):
    import pullback as pb
    nn = pb.nn
    fwd = (lambda x, s, b: nn.rms_norm(x, s)) if rms else (
        lambda x, s, b: nn.layer_norm(x, s, b))

    def fwd_bwd(x, s, b, dy):
        y, pull = pb.vjp(fwd, x, s, b)
        return pull(dy)
    return fwd, fwd_bwd, pb.jit(fwd), pb.jit(fwd_bwd)


def _jax_fns(jax, rms: bool):
    jnp = jax.numpy

    def fwd(x, s, b):
        if rms:
            return x * jax.lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6) * s
        m = jnp.mean(x, -1, keepdims=True)
        return (x - m) * jax.lax.rsqrt(jnp.var(x, -1, keepdims=True) + 1e-5) * s + b

    def fwd_bwd(x, s, b, dy):
        return jax.vjp(fwd, x, s, b)[1](dy)
    return jax.jit(fwd), jax.jit(fwd_bwd)


def _torch_fns(torch, rms: bool):
    F = torch.nn.functional

    def fwd(x, s, b):
        return F.rms_norm(x, (SHAPE[-1],), s, 1e-6) if rms else F.layer_norm(
            x, (SHAPE[-1],), s, b, 1e-5)

    def fwd_bwd(x, s, b, dy):
        y = fwd(x, s, b)
        return torch.autograd.grad(y, (x, s) if rms else (x, s, b), dy)
    return fwd, fwd_bwd


def _cases_for(fws, rms: bool) -> list[Case]:
    import pullback.numpy as pnp
    x, s, b, dy = _data()
    name = "rms_norm" if rms else "layer_norm"
    fwd, fwd_bwd, jfwd, jfwd_bwd = _pullback_fns(rms)
    px, ps, pb_, pdy = (pnp.asarray(a) for a in (x, s, b, dy))
    first = lambda r: np.asarray(r[0])  # noqa: E731  (the gradient of x)
    f_impls = {"pullback": Impl("f(x, s, b)", {"f": jfwd, "x": px, "s": ps, "b": pb_},
                                result=np.asarray),
               "pullback eager": Impl("f(x, s, b)", {"f": fwd, "x": px, "s": ps, "b": pb_},
                                      result=np.asarray)}
    g_impls = {"pullback": Impl("f(x, s, b, dy)", {"f": jfwd_bwd, "x": px, "s": ps, "b": pb_,
                                                   "dy": pdy}, result=first),
               "pullback eager": Impl("f(x, s, b, dy)", {"f": fwd_bwd, "x": px, "s": ps,
                                                         "b": pb_, "dy": pdy}, result=first)}
    if _fw(fws, "torch"):
        torch = importlib.import_module("torch")
        tf, tfb = _torch_fns(torch, rms)
        tx = torch.from_numpy(x.copy()).requires_grad_(True)
        ts = torch.from_numpy(s.copy()).requires_grad_(True)
        tb = torch.from_numpy(b.copy()).requires_grad_(True)
        tdy = torch.from_numpy(dy.copy())
        with torch.no_grad():
            f_impls["torch"] = Impl("f(x, s, b)", {"f": tf, "x": tx.detach(), "s": ts.detach(),
                                                   "b": tb.detach()},
                                    result=lambda r: r.numpy())
        g_impls["torch"] = Impl("f(x, s, b, dy)", {"f": tfb, "x": tx, "s": ts, "b": tb,
                                                   "dy": tdy},
                                result=lambda r: r[0].numpy())
    if _fw(fws, "jax"):
        jax = importlib.import_module("jax")
        jf, jfb = _jax_fns(jax, rms)
        jx, js, jb, jdy = (jax.numpy.asarray(a) for a in (x, s, b, dy))
        f_impls["jax"] = Impl("f(x, s, b)", {"f": jf, "x": jx, "s": js, "b": jb},
                              sync=lambda r: r.block_until_ready(), result=np.asarray)
        g_impls["jax"] = Impl("f(x, s, b, dy)", {"f": jfb, "x": jx, "s": js, "b": jb, "dy": jdy},
                              sync=lambda r: r[0].block_until_ready(), result=first)
    targets = (Target("torch", 1.0),)
    return [Case("norms", f"{name} (4096, 1024) f32 forward", f_impls, "us", targets=targets,
                 rtol=2e-4, reference="pullback eager"),
            Case("norms", f"{name} (4096, 1024) f32 forward + backward", g_impls, "us",
                 targets=targets, rtol=2e-3, reference="pullback eager")]


def _residual_case(fws) -> Case:
    """``layer_norm(x + r)`` under jit: the add fused into the norm's row pass (pullback),
    against the same program compiled with the fusion off (an add step, then the norm)."""
    import pullback as pb
    import pullback.numpy as pnp
    from pullback.transforms.passes import norm_fusion
    x, s, b, _ = _data()
    r = np.random.default_rng(1).standard_normal(SHAPE, dtype=np.float32)
    px, pr, ps, pb_ = (pnp.asarray(a) for a in (x, r, s, b))
    f = lambda x, r, s, b: pb.nn.layer_norm(x + r, s, b)  # noqa: E731
    fused, unfused = pb.jit(f), pb.jit(f)
    norm_fusion.enabled = False
    try:
        unfused(px, pr, ps, pb_)  # compiled now, without the fusion
    finally:
        norm_fusion.enabled = True
    env = {"x": px, "r": pr, "s": ps, "b": pb_}
    impls = {"pullback": Impl("f(x, r, s, b)", dict(env, f=fused), result=np.asarray),
             "pullback unfused": Impl("f(x, r, s, b)", dict(env, f=unfused), result=np.asarray)}
    if _fw(fws, "torch"):
        torch = importlib.import_module("torch")
        F = torch.nn.functional
        tf = lambda x, r, s, b: F.layer_norm(x + r, (SHAPE[-1],), s, b, 1e-5)  # noqa: E731
        t = {k: torch.from_numpy(v.copy()) for k, v in (("x", x), ("r", r), ("s", s), ("b", b))}
        impls["torch"] = Impl("f(x, r, s, b)", dict(t, f=tf), result=lambda y: y.numpy())
    if _fw(fws, "jax"):
        jax = importlib.import_module("jax")
        jf = _jax_fns(jax, False)[0]
        jx, jr, js, jb = (jax.numpy.asarray(a) for a in (x, r, s, b))
        g = jax.jit(lambda x, r, s, b: jf(x + r, s, b))
        impls["jax"] = Impl("f(x, r, s, b)", {"f": g, "x": jx, "r": jr, "s": js, "b": jb},
                            sync=lambda y: y.block_until_ready(), result=np.asarray)
    return Case("norms", "layer_norm(x + r) (4096, 1024) f32 forward, jit", impls, "us",
                targets=(Target("torch", 1.0),), rtol=2e-4, reference="pullback unfused")


def cases(fws) -> list[Case]:
    return _cases_for(fws, False) + _cases_for(fws, True) + [_residual_case(fws)]
