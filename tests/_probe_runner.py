"""Runs bad-input probes in a child process (see test_probes.py): ``python _probe_runner.py``
reads a JSON list of probes on stdin and prints one JSON line per probe as soon as it is
done, so that the parent can name the probe that crashed or hung the child.

A probe is ``{"name", "src", "expect", "modes"}``. ``src`` defines either ``f`` and ``args``
(run eagerly, NumPy arguments as Arrays unless ``raw`` is set, and under ``jit`` with
``static`` argument positions) or ``run`` (called as is).
``expect`` is ``["eq", expr]`` (the result equals ``eval(expr)``: same dtype and shape, exact
for integers and booleans, within a few ulps for floats, with the same infinities, NaNs and
signed zeros), ``["raises", type_name, words]`` or ``["ok"]`` (anything but an exception).
Probes avoid subnormal inputs: XLA's CPU flushes them to zero, pullback (as NumPy) keeps them.
"""
from __future__ import annotations

import json
import os
import resource
import sys
import traceback

MEMORY_LIMIT = 4 << 30


def _limit_memory() -> None:
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        return  # AddressSanitizer reserves terabytes of address space for its shadow memory
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _namespace() -> dict:
    import threading

    import numpy as np

    import pullback as jax
    import pullback.numpy as jnp
    from pullback import lax, random, tree_util

    def dt(name: str):
        return np.dtype(getattr(jnp, name))  # bfloat16 and the float8s come from ml_dtypes

    def arr(values, dtype: str):
        d = dt(dtype)
        if d.kind in "biu":  # exact, even for uint64 beyond int64
            return np.array(values, dtype=d)
        return np.array(values, dtype=np.float64 if d.kind == "V" or d.itemsize < 4 else
                        None).astype(d)

    def carr(real, imag, dtype: str):
        return (np.asarray(real) + 1j * np.asarray(imag)).astype(dt(dtype))

    return dict(np=np, jax=jax, jnp=jnp, lax=lax, random=random, tree_util=tree_util,
                threading=threading, inf=float("inf"), nan=float("nan"), dt=dt, arr=arr,
                carr=carr)


def _close(got, want) -> str | None:
    import numpy as np
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"got {got.dtype}{list(got.shape)}, expected {want.dtype}{list(want.shape)}"
    if got.dtype.kind in "biu":
        return None if np.array_equal(got, want) else f"got {got!r}, expected {want!r}"
    g = got.astype(np.complex128 if got.dtype.kind == "c" else np.float64)
    w = want.astype(g.dtype)
    ulps = {2: 2.0 ** -7, 4: 2.0 ** -21, 8: 2.0 ** -50}.get(
        got.dtype.itemsize // (2 if got.dtype.kind == "c" else 1), 2.0 ** -7)
    parts = (g.real, g.imag) if g.dtype.kind == "c" else (g,)
    wparts = (w.real, w.imag) if w.dtype.kind == "c" else (w,)
    for a, b in zip(parts, wparts):
        same_special = np.array_equal(np.isnan(a), np.isnan(b)) and np.array_equal(
            np.where(np.isinf(a), a, 0), np.where(np.isinf(b), b, 0))
        zeros = (a == 0) & (b == 0)
        # the signs of zeros, except in complex numbers (XLA's are not IEEE's there)
        signs = g.dtype.kind == "c" or np.array_equal(np.signbit(a[zeros]), np.signbit(b[zeros]))
        fin = np.isfinite(a) & np.isfinite(b)
        near = np.allclose(a[fin], b[fin], rtol=8 * ulps, atol=0)
        if not (same_special and signs and near):
            return f"got {got!r}, expected {want!r}"
    return None


def _check(result, exc, expect, ns) -> str | None:
    kind = expect[0]
    if kind == "raises":
        if exc is None:
            return f"expected {expect[1]}, got the value {result!r}"[:600]
        names = {c.__name__ for c in type(exc).__mro__}
        msg = str(exc)
        if expect[1] not in names:
            return f"expected {expect[1]}, got {type(exc).__name__}: {msg}"[:600]
        missing = [w for w in expect[2] if w not in msg]
        return f"message lacks {missing}: {msg}"[:600] if missing else None
    if exc is not None:
        return "raised " + "".join(traceback.format_exception_only(type(exc), exc)).strip()[:600]
    if kind == "ok":
        return None
    try:
        want = eval(expect[1], ns)
    except Exception as e:
        return f"cannot evaluate the expectation {expect[1]!r}: {e!r}"[:600]
    got_leaves, got_tree = ns["tree_util"].tree_flatten(result)
    want_leaves, want_tree = ns["tree_util"].tree_flatten(want)
    if len(got_leaves) != len(want_leaves):
        return f"got {result!r}, expected {want!r}"[:600]
    for g, w in zip(got_leaves, want_leaves):
        if type(w) in (bool, int, float):  # a Python number (a shape, a count): its value
            g = ns["np"].asarray(g)
            if g.shape != () or not (g.item() == w or (w != w and g.item() != g.item())):
                return f"got {g!r}, expected {w!r}"
            continue
        bad = _close(g, w)
        if bad:
            return bad[:600]
    return None


def _run_one(probe: dict, base: dict) -> dict:
    ns = dict(base)
    failures = {}
    try:
        exec(probe["src"], ns)
    except BaseException as e:  # the probe's own set-up may be what raises
        for mode in probe["modes"]:
            failures[mode] = _check(None, e, probe["expect"], ns)
        return {"name": probe["name"], "failures": {k: v for k, v in failures.items() if v}}
    for mode in probe["modes"]:
        result = exc = None
        try:
            if "run" in ns:
                result = ns["run"]()
            elif mode == "eager":
                # NumPy arguments become Arrays (else ``x + y`` would be NumPy's), except for
                # ``raw`` probes, whose functions take NumPy layouts into jnp functions
                args = ns["args"] if ns.get("raw") else tuple(
                    ns["jnp"].asarray(a) if isinstance(a, (ns["np"].ndarray, ns["np"].generic))
                    else a
                    for a in ns["args"])
                result = ns["f"](*args)
            else:
                result = ns["jax"].jit(ns["f"], static_argnums=ns.get("static", ()))(*ns["args"])
        except BaseException as e:
            exc = e
        bad = _check(result, exc, probe["expect"], ns)
        if bad:
            failures[mode] = bad
    return {"name": probe["name"], "failures": failures}


def main() -> None:
    _limit_memory()
    probes = json.load(sys.stdin)
    base = _namespace()
    for p in probes:
        print(json.dumps(_run_one(p, base)), flush=True)


if __name__ == "__main__":
    main()
