"""jax.scipy.signal's spectral functions (issue 30): welch and stft of a 2^16 float32 signal
(nperseg 256), istft back, and fftconvolve of 2^16 by 1025 float64 (rfft path), against SciPy
and jax.jit. pullback runs jitted.

No target: these are compositions of pullback's ops (a gather of segments, the C FFT, an
overlap-add of padded chunks); the ratios show what the composition costs.
"""
from __future__ import annotations

import importlib

import numpy as np
import scipy.signal as ss

from case import Case
from timing import Impl


def _fw(fws, name):
    return next((f for f in fws if f.name == name), None)


def _ri(r):
    r = np.asarray(r)
    return np.stack([r.real, r.imag]) if np.iscomplexobj(r) else r


def cases(fws) -> list[Case]:
    import pullback as pb
    import pullback.numpy as pnp
    import pullback.scipy.signal as ps
    pb.config.update("jax_enable_x64", True)
    jax = importlib.import_module("jax") if _fw(fws, "jax") else None
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
        js = importlib.import_module("jax.scipy.signal")
    rng = np.random.default_rng(0)
    out = []

    def case(name, args, pf, sf, jf, rtol):
        impls = {"pullback": Impl("f(*a)", {"f": pb.jit(pf), "a": [pnp.asarray(a) for a in args]},
                                  result=_ri),
                 "scipy": Impl("f(*a)", {"f": sf, "a": args}, result=_ri)}
        if jax is not None:
            impls["jax"] = Impl("f(*a)", {"f": jax.jit(jf),
                                          "a": [jax.numpy.asarray(a) for a in args]},
                                sync=lambda r: r.block_until_ready(), result=_ri)
        out.append(Case("signal", name, impls, "us", rtol=rtol, reference="scipy"))

    x = rng.standard_normal(2 ** 16).astype(np.float32)
    case("welch 2^16 float32 nperseg=256", [x], lambda x: ps.welch(x, nperseg=256)[1],
         lambda x: ss.welch(x, nperseg=256)[1],
         (lambda x: js.welch(x, nperseg=256)[1]) if jax is not None else None, 1e-3)
    case("stft 2^16 float32 nperseg=256", [x], lambda x: ps.stft(x, nperseg=256)[2],
         lambda x: ss.stft(x, nperseg=256)[2],
         (lambda x: js.stft(x, nperseg=256)[2]) if jax is not None else None, 1e-3)
    z = ss.stft(x, nperseg=256)[2].astype(np.complex64)
    case("istft of 2^16 float32 nperseg=256", [z], lambda z: ps.istft(z)[1],
         lambda z: ss.istft(z)[1], (lambda z: js.istft(z)[1]) if jax is not None else None, 1e-3)
    a, b = rng.standard_normal(2 ** 16), rng.standard_normal(1025)
    case("fftconvolve 2^16 * 1025 float64", [a, b], ps.fftconvolve, ss.fftconvolve,
         js.fftconvolve if jax is not None else None, 1e-9)
    return out
