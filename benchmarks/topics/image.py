"""pullback.image.resize (separable banded kernels, csrc/resize.c) under jit, next to
jax.image.resize under jax.jit and torch.nn.functional.interpolate.

Cases (float32, NCHW (32, 64, 56, 56)):
  * linear 2x upsample to 112x112 (torch: bilinear, align_corners=False: the same samples);
  * nearest 2x upsample to 112x112 (torch: nearest; for an integer factor the same pixels);
  * linear 2x downsample to 28x28 with antialias (torch: bilinear, antialias=True: the same
    triangle filter widened by the scale).
No target in issue 27; pullback should be faster than jax.jit.
"""
from __future__ import annotations

import importlib

import numpy as np

from case import Case, Target
from timing import Impl

SHAPE = (32, 64, 56, 56)


def _fw(fws, name):
    return next((f for f in fws if f.name == name), None)


def _case(fws, x, out_hw, method, antialias, torch_mode, label):
    import pullback as pb
    import pullback.numpy as pnp
    out = x.shape[:2] + out_hw
    f = pb.jit(lambda x: pb.image.resize(x, out, method, antialias=antialias))
    impls = {"pullback": Impl("f(x)", {"f": f, "x": pnp.asarray(x)}, result=np.asarray)}
    if _fw(fws, "jax"):
        jax = importlib.import_module("jax")
        jf = jax.jit(lambda x: jax.image.resize(x, out, method, antialias=antialias))
        impls["jax"] = Impl("f(x)", {"f": jf, "x": jax.numpy.asarray(x)},
                            sync=lambda r: r.block_until_ready(), result=np.asarray)
    if _fw(fws, "torch"):
        torch = importlib.import_module("torch")
        tx = torch.from_numpy(x)
        # antialias only acts when downsampling; torch's upsampling fast path has it off
        down = out_hw[0] < x.shape[2]
        kw = {} if torch_mode == "nearest" else {"align_corners": False,
                                                  "antialias": antialias and down}

        def tf(tx=tx):
            with torch.no_grad():
                return torch.nn.functional.interpolate(tx, size=out_hw, mode=torch_mode, **kw)
        impls["torch"] = Impl("f()", {"f": tf}, result=lambda r: r.numpy())
    ref = "jax" if "jax" in impls else "pullback"
    return Case("image", f"resize {label} {SHAPE} -> {out}", impls, "us",
                targets=(Target("jax", 1.0),) if "jax" in impls else (), rtol=1e-4,
                reference=ref)


def cases(fws) -> list[Case]:
    x = np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)
    return [_case(fws, x, (112, 112), "linear", True, "bilinear", "linear 2x up"),
            _case(fws, x, (112, 112), "nearest", True, "nearest", "nearest 2x up"),
            _case(fws, x, (28, 28), "linear", True, "bilinear", "linear antialias 2x down")]
