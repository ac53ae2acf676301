"""Linear algebra (issue 28): cholesky, solve, inv of 512x512 float64 against SciPy; 4096
batched 8x8 float32 cholesky + cho_solve and inv against PyTorch and jax.jit; the gradient of
slogdet + solve of 256x256 float64 against jax.jit.

Targets (issue 28): 512x512 <= 1.05x SciPy; batched <= 0.5x PyTorch and <= 0.25x jax.jit;
the gradient <= 1.0x jax.jit. pullback runs jitted. svd, eigh and qr of 512x512 float64
against SciPy's defaults (gesdd; evr for eigh; geqrf + orgqr), <= 1.05x.
"""
from __future__ import annotations

import importlib

import numpy as np
import scipy.linalg as sl

from case import Case, Target
from timing import Impl

N, NB, NS, NG = 512, 4096, 8, 256


def _fw(fws, name):
    return next((f for f in fws if f.name == name), None)


def _spd(rng, shape, n, dt):
    a = rng.standard_normal(shape + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dt)


def _jax(fws):
    if not _fw(fws, "jax"):
        return None
    jax = importlib.import_module("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def cases(fws) -> list[Case]:
    import pullback as pb
    import pullback.numpy as pnp
    import pullback.scipy.linalg as psl
    pb.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(0)
    s = _spd(rng, (), N, np.float64)
    a = rng.standard_normal((N, N)) + 4 * np.eye(N)
    b = rng.standard_normal((N, 4))
    ps, pa, pbb = pnp.asarray(s), pnp.asarray(a), pnp.asarray(b)
    jchol = pb.jit(lambda x: psl.cholesky(x, lower=True))
    jsolve, jinv = pb.jit(pnp.linalg.solve), pb.jit(pnp.linalg.inv)
    out = [
        Case("linalg", f"cholesky {N}x{N} float64", {
            "pullback": Impl("f(x)", {"f": jchol, "x": ps}, result=np.asarray),
            "scipy": Impl("f(x)", {"f": lambda x: sl.cholesky(x, lower=True), "x": s})},
            "us", targets=(Target("scipy", 1.05),), rtol=1e-8, reference="scipy"),
        Case("linalg", f"solve {N}x{N} float64 (4 right-hand sides)", {
            "pullback": Impl("f(a, b)", {"f": jsolve, "a": pa, "b": pbb}, result=np.asarray),
            "scipy": Impl("f(a, b)", {"f": sl.solve, "a": a, "b": b})},
            "us", targets=(Target("scipy", 1.05),), rtol=1e-6, reference="scipy"),
        Case("linalg", f"inv {N}x{N} float64", {
            "pullback": Impl("f(a)", {"f": jinv, "a": pa}, result=np.asarray),
            "scipy": Impl("f(a)", {"f": sl.inv, "a": a})},
            "us", targets=(Target("scipy", 1.05),), rtol=1e-6, reference="scipy"),
    ]
    sb = _spd(rng, (NB,), NS, np.float32)
    bb = rng.standard_normal((NB, NS, 1)).astype(np.float32)
    cho = pb.jit(lambda s, b: psl.cho_solve(psl.cho_factor(s, lower=True), b))
    binv = pb.jit(pnp.linalg.inv)
    psb, pbb2 = pnp.asarray(sb), pnp.asarray(bb)
    c_impls = {"pullback": Impl("f(s, b)", {"f": cho, "s": psb, "b": pbb2}, result=np.asarray),
               "numpy": Impl("f(s, b)", {"f": np.linalg.solve, "s": sb, "b": bb})}
    i_impls = {"pullback": Impl("f(s)", {"f": binv, "s": psb}, result=np.asarray),
               "numpy": Impl("f(s)", {"f": np.linalg.inv, "s": sb})}
    if _fw(fws, "torch"):
        torch = importlib.import_module("torch")
        ts, tb = torch.from_numpy(sb), torch.from_numpy(bb)
        c_impls["torch"] = Impl("f(s, b)", {"f": lambda s, b: torch.cholesky_solve(
            b, torch.linalg.cholesky(s)), "s": ts, "b": tb}, result=lambda r: r.numpy())
        i_impls["torch"] = Impl("f(s)", {"f": torch.linalg.inv, "s": ts},
                                result=lambda r: r.numpy())
    jax = _jax(fws)
    g_impls = {}
    a2 = rng.standard_normal((NG, NG)) + 16 * np.eye(NG)
    b2 = rng.standard_normal((NG, 1))

    def loss(jnp):
        return lambda a, b: jnp.linalg.slogdet(a).logabsdet + jnp.sum(jnp.linalg.solve(a, b))
    g_impls["pullback"] = Impl("f(a, b)", {"f": pb.jit(pb.grad(loss(pnp))),
                                           "a": pnp.asarray(a2), "b": pnp.asarray(b2)},
                               result=np.asarray)
    if jax is not None:
        jnp = jax.numpy
        js, jb = jnp.asarray(sb), jnp.asarray(bb)
        jsl = importlib.import_module("jax.scipy.linalg")
        sync = lambda r: r.block_until_ready()  # noqa: E731
        c_impls["jax"] = Impl("f(s, b)", {"f": jax.jit(lambda s, b: jsl.cho_solve(
            jsl.cho_factor(s, lower=True), b)), "s": js, "b": jb}, sync=sync, result=np.asarray)
        i_impls["jax"] = Impl("f(s)", {"f": jax.jit(jnp.linalg.inv), "s": js}, sync=sync,
                              result=np.asarray)
        g_impls["jax"] = Impl("f(a, b)", {"f": jax.jit(jax.grad(loss(jnp))),
                                          "a": jnp.asarray(a2), "b": jnp.asarray(b2)},
                              sync=sync, result=np.asarray)
    batched = (Target("torch", 0.5), Target("jax", 0.25))
    out += [Case("linalg", f"cho_factor + cho_solve, {NB} x {NS}x{NS} float32", c_impls, "us",
                 targets=batched, rtol=1e-3, reference="numpy"),
            Case("linalg", f"inv, {NB} x {NS}x{NS} float32", i_impls, "us", targets=batched,
                 rtol=1e-3, reference="numpy"),
            Case("linalg", f"grad(slogdet + sum(solve)), {NG}x{NG} float64", g_impls, "us",
                 targets=(Target("jax", 1.0),), rtol=1e-6,
                 reference="jax" if jax is not None else "pullback")]
    out += _spectral_cases(pb, pnp, rng)
    return out


def _spectral_cases(pb, pnp, rng) -> list[Case]:
    """svd (gesdd, SciPy's default driver), eigh and qr of 512x512 float64 against SciPy
    (target <= 1.05x); results compared through invariants (singular values, eigenvalues,
    |R|), as the vectors' signs are free."""
    a = rng.standard_normal((N, N))
    h = (a + a.T) / 2
    pa, ph = pnp.asarray(a), pnp.asarray(h)
    jsvd = pb.jit(lambda x: pnp.linalg.svd(x))
    jeigh = pb.jit(lambda x: pnp.linalg.eigh(x))
    jqr = pb.jit(lambda x: pnp.linalg.qr(x, mode="complete"))
    s_of = lambda r: np.asarray(r[1])  # noqa: E731
    return [
        Case("linalg", f"svd {N}x{N} float64 (gesdd, full_matrices)", {
            "pullback": Impl("f(x)", {"f": jsvd, "x": pa}, result=s_of),
            "scipy": Impl("f(x)", {"f": sl.svd, "x": a}, result=s_of)},
            "us", targets=(Target("scipy", 1.05),), rtol=1e-8, reference="scipy"),
        Case("linalg", f"eigh {N}x{N} float64", {
            "pullback": Impl("f(x)", {"f": jeigh, "x": ph},
                             result=lambda r: np.asarray(r[0])),
            "scipy": Impl("f(x)", {"f": sl.eigh, "x": h}, result=lambda r: np.asarray(r[0]))},
            "us", targets=(Target("scipy", 1.05),), rtol=1e-8, reference="scipy"),
        Case("linalg", f"qr {N}x{N} float64 (complete)", {
            "pullback": Impl("f(x)", {"f": jqr, "x": pa},
                             result=lambda r: np.abs(np.asarray(r[1]))),
            "scipy": Impl("f(x)", {"f": sl.qr, "x": a},
                          result=lambda r: np.abs(np.asarray(r[1])))},
            "us", targets=(Target("scipy", 1.05),), rtol=1e-6, reference="scipy"),
    ]
