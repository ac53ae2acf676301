"""Shared helpers for the pullback.optim tests: run a transformation in pullback and in optax
on the same inputs and compare updates and every state leaf (structure, NamedTuple class and
field names, dtypes, values)."""
from __future__ import annotations

import numpy as np

import pullback.numpy as pnp

RNG = np.random.default_rng(0)
_W = RNG.standard_normal((3, 4)).astype(np.float32)
_V = RNG.standard_normal(5).astype(np.float32)
GRADS = [
    {"w": RNG.standard_normal((3, 4)).astype(np.float32),
     "layers": [np.float32(RNG.standard_normal()), RNG.standard_normal(5).astype(np.float32)],
     "b": np.float32(RNG.standard_normal())}
    for _ in range(5)
]


def params(np_mod, pyfloat=True):
    """The small nested params tree: a (3,4) matrix, a list with a 0-d array and a vector,
    and a Python float scalar leaf (a float32 0-d array with ``pyfloat=False``)."""
    return {"w": np_mod.asarray(_W), "layers": [np_mod.asarray(np.float32(0.5)),
                                                np_mod.asarray(_V)],
            "b": 1.5 if pyfloat else np_mod.asarray(np.float32(1.5))}


def grads(np_mod, i):
    g = GRADS[i]
    return {"w": np_mod.asarray(g["w"]), "layers": [np_mod.asarray(g["layers"][0]),
                                                    np_mod.asarray(g["layers"][1])],
            "b": np_mod.asarray(g["b"])}


def describe(tree):
    """A library-neutral description of a pytree's structure: NamedTuple class and field
    names, dict keys, sequences, and each leaf's dtype and shape."""
    if tree is None:
        return None
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return (type(tree).__name__, tuple((f, describe(getattr(tree, f)))
                                           for f in tree._fields))
    if isinstance(tree, dict):
        return ("dict", tuple((k, describe(tree[k])) for k in sorted(tree)))
    if isinstance(tree, (list, tuple)):
        return (type(tree).__name__, tuple(describe(x) for x in tree))
    a = np.asarray(tree)
    if isinstance(tree, float):
        return ("pyfloat",)
    return (str(a.dtype), a.shape)


def leaves(tree):
    if tree is None:
        return []
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return [x for f in tree._fields for x in leaves(getattr(tree, f))]
    if isinstance(tree, dict):
        return [x for k in sorted(tree) for x in leaves(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [x for t in tree for x in leaves(t)]
    return [tree]


def assert_tree_close(mine, theirs, rtol=2e-6, atol=1e-7, what=""):
    """Same structure (incl. NamedTuple names, dtypes and shapes) and close values."""
    dm, dt = describe(mine), describe(theirs)
    assert dm == dt, f"{what}: structure differs\n pullback: {dm}\n optax:    {dt}"
    for i, (a, b) in enumerate(zip(leaves(mine), leaves(theirs))):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol,
                                   err_msg=f"{what}: leaf {i}")


def run(tx, np_mod, steps=5, with_params=True, extra=None, pyfloat=True):
    """[(updates, state)] after each of ``steps`` updates, starting from ``init``; the
    params move by the updates (so transforms reading params see them change)."""
    p = params(np_mod, pyfloat)
    state = tx.init(p)
    out = [(None, state)]
    for i in range(steps):
        u, state = tx.update(grads(np_mod, i), state, p if with_params else None,
                             **(extra or {}))
        out.append((u, state))
        p = {"w": p["w"] + u["w"], "layers": [p["layers"][0] + u["layers"][0],
                                               p["layers"][1] + u["layers"][1]],
             "b": p["b"] + u["b"]}
    return out


def compare(make, pb_optim, optax, steps=5, rtol=2e-6, atol=1e-7, with_params=True,
            extra=None, pyfloat=True):
    """Runs ``make(lib)`` in pullback and optax and compares every step."""
    import jax.numpy as jjnp
    mine = run(make(pb_optim), pnp, steps, with_params, extra, pyfloat)
    theirs = run(make(optax), jjnp, steps, with_params, extra, pyfloat)
    for i, ((um, sm), (ut, st)) in enumerate(zip(mine, theirs)):
        if um is not None:
            assert_tree_close(um, ut, rtol, atol, f"updates at step {i}")
        assert_tree_close(sm, st, rtol, atol, f"state at step {i}")
    return mine
