"""Max pooling (``lax.reduce_window`` with ``lax.max``: csrc/reduce_window.c) under jit, next to
PyTorch's ``F.max_pool2d`` and ``jax.lax.reduce_window`` under jax.jit.

Issue 27's targets (float32, 2x2 windows, stride 2, (64, 64, 56, 56) NCHW):
  * forward <= 1.0x PyTorch's ``F.max_pool2d``;
  * forward + backward (the operand's gradient for a given output cotangent) <= 1.0x PyTorch's
    (``max_pool2d`` then ``backward``).
The NHWC forward (``nn.max_pool``, Flax's layout; PyTorch on a channels_last tensor) and a
ResNet stem's overlapping 3x3/2 pooling with padding 1 on (16, 64, 112, 112), forward +
backward (the general window loops, not the 2x2 path), are reported without a target.
"""
from __future__ import annotations

import importlib

import numpy as np

from case import Case, Target
from timing import Impl

SHAPE = (64, 64, 56, 56)
WINDOW, STRIDES = (1, 1, 2, 2), (1, 1, 2, 2)


def _fw(fws, name):
    return next((f for f in fws if f.name == name), None)


def _data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    ct = rng.standard_normal(SHAPE[:2] + (SHAPE[2] // 2, SHAPE[3] // 2)).astype(np.float32)
    return x, ct


def _lax_fns(jax_like):
    lax = jax_like.lax

    def f(x):
        return lax.reduce_window(x, -np.inf, lax.max, WINDOW, STRIDES, "VALID")

    def g(x, ct):
        return jax_like.grad(lambda x: (f(x) * ct).sum())(x)
    return jax_like.jit(f), jax_like.jit(g)


def _torch_impls(torch, x, ct):
    F = torch.nn.functional
    tx, tct = torch.from_numpy(x), torch.from_numpy(ct)
    rx = tx.clone().requires_grad_()

    def fwd():
        with torch.no_grad():
            return F.max_pool2d(tx, 2, 2)

    def both():
        rx.grad = None
        F.max_pool2d(rx, 2, 2).backward(tct)
        return rx.grad
    return (Impl("fwd()", {"fwd": fwd}, result=lambda r: r.numpy()),
            Impl("both()", {"both": both}, result=lambda r: r.numpy()))


def _nchw_cases(fws):
    import pullback as pb
    import pullback.numpy as pnp
    x, ct = _data()
    f, g = _lax_fns(pb)
    px, pct = pnp.asarray(x), pnp.asarray(ct)
    fwd = {"pullback": Impl("f(x)", {"f": f, "x": px}, result=np.asarray)}
    both = {"pullback": Impl("g(x, ct)", {"g": g, "x": px, "ct": pct}, result=np.asarray)}
    torch = importlib.import_module("torch") if _fw(fws, "torch") else None
    if torch is not None:
        fwd["torch"], both["torch"] = _torch_impls(torch, x, ct)
    if _fw(fws, "jax"):
        jax = importlib.import_module("jax")
        jf, jg = _lax_fns(jax)
        jx, jct = jax.numpy.asarray(x), jax.numpy.asarray(ct)
        fwd["jax"] = Impl("f(x)", {"f": jf, "x": jx}, sync=lambda r: r.block_until_ready(),
                          result=np.asarray)
        both["jax"] = Impl("g(x, ct)", {"g": jg, "x": jx, "ct": jct},
                           sync=lambda r: r.block_until_ready(), result=np.asarray)
    ref = "torch" if torch is not None else "pullback"
    name = "max_pool 2x2/2 (64,64,56,56) NCHW"
    return [Case("pooling", f"{name} forward", fwd, "us", targets=(Target("torch", 1.0),),
                 rtol=0, reference=ref),
            Case("pooling", f"{name} forward+backward", both, "us",
                 targets=(Target("torch", 1.0),), rtol=0, reference=ref)]


def _nhwc_case(fws):
    import pullback as pb
    import pullback.numpy as pnp
    x, _ = _data()
    xh = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    f = pb.jit(lambda x: pb.nn.max_pool(x, (2, 2), (2, 2)))
    impls = {"pullback": Impl("f(x)", {"f": f, "x": pnp.asarray(xh)}, result=np.asarray)}
    torch = importlib.import_module("torch") if _fw(fws, "torch") else None
    if torch is not None:
        tx = torch.from_numpy(x).contiguous(memory_format=torch.channels_last)

        def fwd():
            with torch.no_grad():
                return torch.nn.functional.max_pool2d(tx, 2, 2)
        impls["torch"] = Impl("fwd()", {"fwd": fwd},
                              result=lambda r: r.permute(0, 2, 3, 1).numpy())
    return Case("pooling", "max_pool 2x2/2 (64,56,56,64) NHWC forward", impls, "us", rtol=0,
                reference="torch" if torch is not None else "pullback")


def _stem_case(fws):
    import pullback as pb
    import pullback.numpy as pnp
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 64, 112, 112)).astype(np.float32)
    ct = rng.standard_normal((16, 64, 56, 56)).astype(np.float32)
    pads = ((0, 0), (0, 0), (1, 1), (1, 1))

    def g_of(jax_like):
        lax = jax_like.lax
        f = lambda x: lax.reduce_window(x, -np.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2), pads)
        return jax_like.jit(lambda x, ct: jax_like.grad(lambda x: (f(x) * ct).sum())(x))
    impls = {"pullback": Impl("g(x, ct)", {"g": g_of(pb), "x": pnp.asarray(x),
                                           "ct": pnp.asarray(ct)}, result=np.asarray)}
    torch = importlib.import_module("torch") if _fw(fws, "torch") else None
    if torch is not None:
        rx, tct = torch.from_numpy(x).requires_grad_(), torch.from_numpy(ct)

        def both():
            rx.grad = None
            torch.nn.functional.max_pool2d(rx, 3, 2, 1).backward(tct)
            return rx.grad
        impls["torch"] = Impl("both()", {"both": both}, result=lambda r: r.numpy())
    if _fw(fws, "jax"):
        jax = importlib.import_module("jax")
        impls["jax"] = Impl("g(x, ct)", {"g": g_of(jax), "x": jax.numpy.asarray(x),
                                         "ct": jax.numpy.asarray(ct)},
                            sync=lambda r: r.block_until_ready(), result=np.asarray)
    return Case("pooling", "max_pool 3x3/2 pad 1 (16,64,112,112) NCHW forward+backward", impls,
                "us", rtol=0, reference="torch" if torch is not None else "pullback")


def cases(fws) -> list[Case]:
    return _nchw_cases(fws) + [_nhwc_case(fws), _stem_case(fws)]
