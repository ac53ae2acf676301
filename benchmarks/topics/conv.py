"""Convolutions (issue 27): pullback's lax.conv_general_dilated under jit next to PyTorch's
torch.nn.functional (its backward for each operand through aten's convolution_backward) and
jax.jit, float32.

Issue 27's targets:
  * conv 3x3, 64 -> 64, (32, 64, 56, 56), stride 1, pad 1: <= 0.8x torch, NCHW and NHWC;
  * its input and kernel gradients: each <= 1.0x torch's backward for that operand;
  * depthwise 3x3 on (32, 128, 56, 56): <= 0.8x torch;
  * conv_transpose 3x3 stride 2, (32, 64, 28, 28) -> 56 x 56: <= 1.0x torch's conv_transpose2d.
"""
from __future__ import annotations

import importlib

import numpy as np

from case import Case, Target
from timing import Impl

N, C, H, W = 32, 64, 56, 56


def _fw(fws, name):
    return next((f for f in fws if f.name == name), None)


def _rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _lax_fns(jax_like, dn, groups=1, strides=(1, 1), pads=((1, 1), (1, 1)), lhs_dil=(1, 1)):
    lax = jax_like.lax

    def f(x, w):
        return lax.conv_general_dilated(x, w, strides, pads, lhs_dil, None, dn,
                                        feature_group_count=groups)

    def dx(x, w, ct):
        return jax_like.vjp(lambda a: f(a, w), x)[1](ct)[0]

    def dw(x, w, ct):
        return jax_like.vjp(lambda b: f(x, b), w)[1](ct)[0]
    return jax_like.jit(f), jax_like.jit(dx), jax_like.jit(dw)


def _impls(fws, fn_index, dn, arrays, stmt, groups=1, **kw):
    """pullback and jax.jit implementations of one of (forward, input grad, kernel grad)."""
    import pullback as pb
    import pullback.numpy as pnp
    out = {}
    names = ("x", "w", "ct")[:len(arrays)]
    fn = _lax_fns(pb, dn, groups, **kw)[fn_index]
    out["pullback"] = Impl(stmt, dict(g=fn, **{n: pnp.asarray(a) for n, a in zip(names, arrays)}),
                           result=np.asarray)
    if _fw(fws, "jax"):
        jax = importlib.import_module("jax")
        jfn = _lax_fns(jax, dn, groups, **kw)[fn_index]
        out["jax"] = Impl(stmt, dict(g=jfn, **{n: jax.numpy.asarray(a)
                                               for n, a in zip(names, arrays)}),
                          sync=lambda r: r.block_until_ready(), result=np.asarray)
    return out


def _torch_conv(torch, x, w, nhwc, groups=1):
    F = torch.nn.functional
    tx, tw = torch.from_numpy(x), torch.from_numpy(w)
    if nhwc:  # the same NCHW tensors in channels-last memory
        tx = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 2, 3, 1))).permute(0, 3, 1, 2)
        tw = tw.contiguous(memory_format=torch.channels_last)

    def f():
        with torch.no_grad():
            return F.conv2d(tx, tw, padding=1, groups=groups)
    back = (lambda r: r.numpy().transpose(0, 2, 3, 1)) if nhwc else (lambda r: r.numpy())
    return Impl("f()", {"f": f}, result=back)


def _torch_backward(torch, x, w, ct, which):
    tx, tw, tct = (torch.from_numpy(a) for a in (x, w, ct))
    mask = [which == "input", which == "weight", False]
    bwd = torch.ops.aten.convolution_backward

    def f():
        with torch.no_grad():
            r = bwd(tct, tx, tw, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1, mask)
        return r[0] if which == "input" else r[1]
    return Impl("f()", {"f": f}, result=lambda r: r.numpy())


def cases(fws) -> list[Case]:
    torch = importlib.import_module("torch") if _fw(fws, "torch") else None
    if torch is not None:
        torch.set_num_threads(max(1, torch.get_num_threads()))
    x, w = _rand((N, C, H, W), 0), _rand((C, C, 3, 3), 1) * 0.1
    ct = _rand((N, C, H, W), 2) * 0.01  # kernel-gradient sums of 100k terms stay ~10
    nchw = ("NCHW", "OIHW", "NCHW")
    nhwc = ("NHWC", "HWIO", "NHWC")
    xl, wl = np.ascontiguousarray(x.transpose(0, 2, 3, 1)), np.ascontiguousarray(
        w.transpose(2, 3, 1, 0))
    flops = 2.0 * N * C * C * 9 * H * W
    ref = "torch" if torch is not None else "pullback"
    out = []

    fwd = _impls(fws, 0, nchw, (x, w), "g(x, w)")
    fwd_l = _impls(fws, 0, nhwc, (xl, wl), "g(x, w)")
    dx = _impls(fws, 1, nchw, (x, w, ct), "g(x, w, ct)")
    dw = _impls(fws, 2, nchw, (x, w, ct), "g(x, w, ct)")
    if torch is not None:
        fwd["torch"] = _torch_conv(torch, x, w, False)
        fwd_l["torch"] = _torch_conv(torch, x, w, True)
        dx["torch"] = _torch_backward(torch, x, w, ct, "input")
        dw["torch"] = _torch_backward(torch, x, w, ct, "weight")
    for name, impls, target in (("NCHW", fwd, 0.8), ("NHWC", fwd_l, 0.8),
                                ("NCHW input gradient", dx, 1.0),
                                ("NCHW kernel gradient", dw, 1.0)):
        out.append(Case("conv", f"conv 3x3 64->64 (32,64,56,56) s1 p1 {name}", impls,
                        "us", targets=(Target("torch", target),), rtol=2e-3,
                        reference=ref))

    xd, wd = _rand((N, 128, H, W), 3), _rand((128, 1, 3, 3), 4)
    dep = _impls(fws, 0, nchw, (xd, wd), "g(x, w)", groups=128)
    if torch is not None:
        dep["torch"] = _torch_conv(torch, xd, wd, False, groups=128)
    out.append(Case("conv", "depthwise 3x3 (32,128,56,56) NCHW", dep, "us",
                    targets=(Target("torch", 0.8),), rtol=1e-4, reference=ref))

    # conv_transpose2d(x, w, stride 2, padding 1, output_padding 1): a convolution of the
    # 2-dilated input with the flipped kernel, pads (1, 2); torch's weight is (in, out, kh, kw)
    xt, wt = _rand((N, C, 28, 28), 5), _rand((C, C, 3, 3), 6) * 0.1
    wflip = np.ascontiguousarray(wt[:, :, ::-1, ::-1])
    tr = _impls(fws, 0, ("NCHW", "IOHW", "NCHW"), (xt, wflip), "g(x, w)",
                pads=((1, 2), (1, 2)), lhs_dil=(2, 2))
    if torch is not None:
        F = torch.nn.functional
        txt, twt = torch.from_numpy(xt), torch.from_numpy(wt)

        def f():
            with torch.no_grad():
                return F.conv_transpose2d(txt, twt, stride=2, padding=1, output_padding=1)
        tr["torch"] = Impl("f()", {"f": f}, result=lambda r: r.numpy())
    out.append(Case("conv", "conv_transpose 3x3 s2 (32,64,28,28)->56x56 NCHW", tr, "us",
                    targets=(Target("torch", 1.0),), rtol=2e-3, reference=ref))
    return out
