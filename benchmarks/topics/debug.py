"""debug_nans / debug_infs cost: the compiled MLP training step of topic ``jit`` with the
switches off (the default: pullback's row) and on (each call's results checked; a hit would
re-run the function op by op), next to jax.jit.

Off must be free: the same compiled program, called through the same fast path as before the
switches existed (issue 30 compares this row's pullback/jax ratio against the same case on the
commit before; docs/debugging.md has the numbers).
"""
from __future__ import annotations

import importlib

import numpy as np

from case import Case, Target
from timing import Impl
from topics.jit import _mlp_data, _step_fn


def _with_debug_nans(step):
    import pullback as pb

    def run(params, x, y):
        with pb.debug_nans(True):
            return step(params, x, y)
    return run


def cases(fws) -> list[Case]:
    import pullback as pb
    import pullback.numpy as pnp
    from pullback import nn
    ws, bs, x, y = _mlp_data()
    step = pb.jit(_step_fn(pb, nn, pnp))
    params = [(pnp.asarray(w), pnp.asarray(b)) for w, b in zip(ws, bs)]
    env = {"params": params, "x": pnp.asarray(x), "y": pnp.asarray(y)}
    impls = {"pullback": Impl("step(params, x, y)", {"step": step, **env},
                              result=lambda r: np.asarray(r[0])),
             "pullback debug_nans on": Impl("step(params, x, y)",
                                            {"step": _with_debug_nans(step), **env},
                                            result=lambda r: np.asarray(r[0]))}
    if any(f.name == "jax" for f in fws):
        jax = importlib.import_module("jax")
        jstep = jax.jit(_step_fn(jax, jax.nn, jax.numpy))
        jparams = [(jax.numpy.asarray(w), jax.numpy.asarray(b)) for w, b in zip(ws, bs)]
        impls["jax"] = Impl("step(params, x, y)", {
            "step": jstep, "params": jparams, "x": jax.numpy.asarray(x),
            "y": jax.numpy.asarray(y)}, sync=lambda r: r[0].block_until_ready(),
            result=lambda r: np.asarray(r[0]))
    return [Case("debug", "MLP 784-512-512-10 train step, debug_nans off (pullback) / on",
                 impls, "us", targets=(Target("jax", 0.8),), rtol=1e-4,
                 reference="jax")]  # (NumPy's hand-written step: topic jit checks it)
