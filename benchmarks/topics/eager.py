"""Eager dispatch: the fixed cost of one operation on a tiny array, a chain of 1000 small mixed
operations, and eager loops (``lax.scan`` / ``fori_loop`` / ``while_loop`` called outside
``jit``) against the same loop under ``jit``.

Issue 24's targets: ``x + y`` on one float32 <= 2x NumPy's time; the 1000-op chain <= 1.0x
PyTorch eager's time; an eager 10^5-step scan with a small body <= 2x the jitted scan's time.
"""
from __future__ import annotations

import importlib

import numpy as np

from case import Case, Target
from timing import Impl

N_STEPS = 100_000


def _fw(fws, name):
    return next((f for f in fws if f.name == name), None)


# ---- x + y on one element ----

def _add_case(fws) -> Case:
    x = np.ones(1, np.float32)
    impls = {f.name: f.impl("x + y", x=f.array(x), y=f.array(x)) for f in fws}
    return Case("eager", "x + y, 1-element float32", impls, "us",
                targets=(Target("numpy", 2.0), Target("torch", 1.0)))


# ---- a chain of 1000 small ops on (16, 16) ----

def chain(ns, x, y):
    """50 rounds of 20 operations: element-wise (with Python scalars, broadcasting and a
    comparison), where, maximum, sum and mean over an axis, reshape, transpose and a 16x16
    product. The same code runs on NumPy, PyTorch, JAX and pullback."""
    for _ in range(50):
        a = ns.sin(x)
        b = ns.exp(a * 0.5)
        c = ns.tanh(b + y)
        m = c > 0.5
        d = ns.where(m, c, a)
        e = ns.maximum(d, y)
        s = ns.sum(e, 0)
        mu = ns.mean(e, 1)
        h = e.reshape(4, 64).reshape(16, 16).T
        k = h @ y
        u = k * 0.05 + s - mu
        x = ns.tanh(u) * 0.9 + a * 0.1
    return x


def _chain_case(fws) -> Case:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 16)).astype(np.float32)
    y = rng.normal(size=(16, 16)).astype(np.float32)
    impls = {f.name: f.impl("chain(ns, x, y)", chain=chain, x=f.array(x), y=f.array(y))
             for f in fws}
    return Case("eager", "1000-op chain on (16,16) float32 (element-wise, where, sum/mean, "
                "reshape/T, 16x16 dot)", impls, "us", targets=(Target("torch", 1.0),), rtol=1e-4)


# ---- eager loops against jit ----

def _scan_fn(lax):
    def f(c, xs):
        def body(c, x):
            return c * 0.9 + x, None
        return lax.scan(body, c, xs)[0]
    return f


def _fori_fn(lax):
    def f(c):
        return lax.fori_loop(0, N_STEPS, lambda i, c: c * 0.9 + 1.0, c)
    return f


def _while_fn(lax):
    def f(c):
        def cond(s):
            return s[0] < N_STEPS

        def body(s):
            return s[0] + 1, s[1] * 0.9 + 1.0
        return lax.while_loop(cond, body, (0, c))[1]
    return f


def _loop_cases(fws) -> list[Case]:
    import pullback as pb
    import pullback.numpy as pnp
    rng = np.random.default_rng(1)
    c = rng.normal(size=16).astype(np.float32)
    xs = rng.normal(size=(N_STEPS, 16)).astype(np.float32)
    jax = importlib.import_module("jax") if _fw(fws, "jax") else None
    out = []
    for label, make, args in (("scan", _scan_fn, (c, xs)), ("fori_loop", _fori_fn, (c,)),
                              ("while_loop", _while_fn, (c,))):
        names = ", ".join("abc"[:len(args)])
        env = {k: pnp.asarray(v) for k, v in zip("abc", args)}
        f = make(pb.lax)
        impls = {"pullback": Impl(f"f({names})", {"f": f, **env}, result=np.asarray),
                 "pullback jit": Impl(f"f({names})", {"f": pb.jit(f), **env},
                                      result=np.asarray)}
        if jax is not None:
            jenv = {k: jax.numpy.asarray(v) for k, v in zip("abc", args)}
            jf = make(jax.lax)
            sync = lambda r: r.block_until_ready()  # noqa: E731
            impls["jax"] = Impl(f"f({names})", {"f": jf, **jenv}, sync=sync, result=np.asarray)
            impls["jax jit"] = Impl(f"f({names})", {"f": jax.jit(jf), **jenv}, sync=sync,
                                    result=np.asarray)
        out.append(Case("eager", f"eager lax.{label}, 10^5 steps, (16,) carry (vs its jit)",
                        impls, "us", targets=(Target("pullback jit", 2.0),), rtol=1e-4))
    return out


def cases(fws) -> list[Case]:
    return [_add_case(fws), _chain_case(fws)] + _loop_cases(fws)
