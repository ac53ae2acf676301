"""FFT (issue 29): complex FFTs of 2^20 and of the prime 1000003 (complex64, complex128), rfft2
of 1024x1024 float32 and its inverse, a batch of 4096 length-256 complex64 FFTs, against SciPy
(2 workers) and PyTorch (torch.fft); the gradient of sum(|rfft(x)|^2) for 2^20 float32 against
jax.jit.

Targets (issue 29): <= 1.0x the best of SciPy and PyTorch in each case; the gradient <= 0.5x
jax.jit. pullback runs jitted.
"""
from __future__ import annotations

import importlib

import numpy as np
import scipy.fft as sf

from case import Case, Target
from timing import Impl

BEST = (Target("scipy", 1.0), Target("torch", 1.0))


def _fw(fws, name):
    return next((f for f in fws if f.name == name), None)


def _complex(rng, shape, dt):
    """Unit-variance transforms (values scaled by 1/sqrt(n)), so rtol is also an atol."""
    x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) / np.sqrt(shape[-1])
    return x.astype(dt)


def _ri(r):
    """Real and imaginary parts (the agreement check compares real arrays)."""
    r = np.asarray(r)
    return np.stack([r.real, r.imag]) if np.iscomplexobj(r) else r


def cases(fws) -> list[Case]:
    import pullback as pb
    import pullback.numpy as pnp
    pb.config.update("jax_enable_x64", True)
    torch = importlib.import_module("torch") if _fw(fws, "torch") else None
    jax = importlib.import_module("jax") if _fw(fws, "jax") else None
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(0)
    out = []

    def case(name, x, pf, sfn, tfn, rtol):
        impls = {"pullback": Impl("f(x)", {"f": pb.jit(pf), "x": pnp.asarray(x)}, result=_ri),
                 "scipy": Impl("f(x)", {"f": sfn, "x": x}, result=_ri)}
        if torch is not None:
            impls["torch"] = Impl("f(x)", {"f": tfn, "x": torch.from_numpy(x)},
                                  result=lambda r: _ri(r.numpy()))
        out.append(Case("fft", name, impls, "us", targets=BEST, rtol=rtol, reference="scipy"))

    tfft = (lambda x: torch.fft.fft(x)) if torch is not None else None
    for n in (2 ** 20, 1000003):
        for dt, rtol in ((np.complex64, 1e-3), (np.complex128, 1e-9)):
            case(f"fft {n} {np.dtype(dt).name}", _complex(rng, (n,), dt), pnp.fft.fft,
                 lambda x: sf.fft(x, workers=2), tfft, rtol)
    x = (rng.standard_normal((1024, 1024)) / 1024).astype(np.float32)
    case("rfft2 1024x1024 float32", x, pnp.fft.rfft2, lambda x: sf.rfft2(x, workers=2),
         (lambda x: torch.fft.rfft2(x)) if torch is not None else None, 1e-3)
    y = (sf.rfft2(x) * 1024).astype(np.complex64)
    case("irfft2 1024x1024 float32", y, lambda v: pnp.fft.irfft2(v, s=(1024, 1024)),
         lambda v: sf.irfft2(v, s=(1024, 1024), workers=2),
         (lambda v: torch.fft.irfft2(v, s=(1024, 1024))) if torch is not None else None, 1e-3)
    case("fft 4096 x 256 complex64", _complex(rng, (4096, 256), np.complex64), pnp.fft.fft,
         lambda x: sf.fft(x, workers=2), tfft, 1e-3)

    g = (rng.standard_normal(2 ** 20) / 1024).astype(np.float32)

    def loss(jnp):
        return lambda x: jnp.sum(jnp.abs(jnp.fft.rfft(x)) ** 2)
    impls = {"pullback": Impl("f(x)", {"f": pb.jit(pb.grad(loss(pnp))), "x": pnp.asarray(g)},
                              result=np.asarray)}
    if jax is not None:
        impls["jax"] = Impl("f(x)", {"f": jax.jit(jax.grad(loss(jax.numpy))),
                                     "x": jax.numpy.asarray(g)},
                            sync=lambda r: r.block_until_ready(), result=np.asarray)
    out.append(Case("fft", "grad sum(|rfft(x)|^2) 2^20 float32", impls, "us",
                    targets=(Target("jax", 0.5),), rtol=1e-3,
                    reference="jax" if jax is not None else "pullback"))
    return out
