"""The scheduling policies (compiler/planner.py): every threshold has its reason, and each policy
fires on the program it is for, is absent when switched off, and changes no result.

Each policy's mechanism has its own detailed tests: test_compiler_par.py (parallel products,
split-K), test_compiler_pipe.py (pipelined scans), test_compiler_rows.py (row halves),
test_compiler_pairs.py (pairs)."""
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback import lax
from pullback.backends.cpu import kernels
from pullback.backends.cpu.compiler import planner

pytestmark = pytest.mark.x32
RNG = np.random.default_rng(0)


def _arr(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def _two_products(a, b, c):
    return a @ b, a @ c


def _rnn_loss(w, h0, xs):
    def step(h, x):
        h = jnp.tanh(h @ w + x)
        return h, h
    h, hs = lax.scan(step, h0, xs)
    return jnp.sum(hs ** 2)


def _rnn_grad(w, h0, xs):
    return pb.grad(_rnn_loss)(w, h0, xs)


def _pair(x, y):
    return jnp.exp(x) * y


CASES = {
    "parallel-products": (_two_products, lambda: (_arr(256, 256), _arr(256, 256),
                                                  _arr(256, 256)), ": par "),
    "pipelined-scan": (_rnn_grad, lambda: (_arr(128, 128, scale=128 ** -.5), _arr(16, 128),
                                           _arr(200, 16, 128)), "pipe"),
    "row-halves": (lambda w, h0, xs: lax.scan(lambda h, x: (jnp.tanh(h @ w + x), None), h0,
                                              xs)[0],
                   lambda: (_arr(128, 128, scale=128 ** -.5), _arr(16, 128),
                            _arr(1000, 16, 128)), ": par "),
    "pairs": (_pair, lambda: (_arr(4096), _arr(4096)), "exp>mul"),
}


def test_every_threshold_says_why():
    for p in planner.POLICIES.values():
        assert p.does and p.where, p.name
        for name, t in p.thresholds.items():
            assert t.value > 0 and t.unit and len(t.why) > 30, (p.name, name)
    assert planner.SPLIT_K["ratio"] == kernels.SPLIT_K_RATIO  # decided in dot.c, listed here
    assert set(CASES) | {"split-K"} == set(planner.POLICIES)
    assert "chunk_k = 512" in planner.table()


@pytest.mark.parametrize("name", sorted(CASES))
def test_policy_fires_and_switches_off(name):
    fn, make, mark = CASES[name]
    args = make()
    on = pb.jit(fn)
    assert mark in on.lower(*args).compile().as_text()
    want = on(*args)
    with planner.disabled(name):
        off = pb.jit(fn)
        assert mark not in off.lower(*args).compile().as_text()
        got = off(*args)
    assert planner.POLICIES[name].enabled
    for w, g in zip(pb.tree_util.tree_leaves(want), pb.tree_util.tree_leaves(got)):
        w = np.asarray(w)  # (sums in another order: float32 rounding at the values' scale)
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-5, atol=2e-6 * np.abs(w).max())


def test_disabling_an_unknown_or_run_time_policy_raises():
    with pytest.raises(ValueError, match="split-K"):
        with planner.disabled("split-K"):
            pass
    with pytest.raises(ValueError, match="nope"):
        with planner.disabled("nope"):
            pass
