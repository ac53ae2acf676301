"""Pairs: inside a fused region, a float32 transcendental read only by one add, subtract or
multiply runs as one step with it (compiler/fusion.py, csrc/vecmath.h's pair loops). The pinned
text shows what pairs and what does not; the values must be eager's bit for bit, over every
pair, the out-of-range arguments that take the unary's own fix-up, block edges, broadcast,
strided and reversed operands, and results written in place."""
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pullback as pb
import pullback.numpy as pnp

RNG = np.random.default_rng(23)

UNARY = {"exp": pnp.exp, "sin": pnp.sin, "cos": pnp.cos, "log": pnp.log, "tanh": pnp.tanh,
         "logistic": pb.nn.sigmoid}
# arguments off each fast path (exp's guard, sin/cos beyond 2^19, inf, NaN) and edge cases
SPECIAL = {
    "exp": [88.5, -87.0, -100.0, -110.0, 100.0, np.inf, -np.inf, np.nan, -0.0, 0.0, 87.9, -86.4],
    "sin": [1e30, -1e6, 6e5, np.inf, -np.inf, np.nan, -0.0, 0.0, 3.1415927],
    "cos": [1e30, -1e6, 6e5, np.inf, -np.inf, np.nan, -0.0, 0.0, 1.5707964],
    "log": [0.0, -0.0, -1.0, 1e-40, np.inf, np.nan, 1.0, 3e38],
    "tanh": [np.inf, -np.inf, np.nan, 1e-5, -0.0, 0.55, -20.0],
    "logistic": [100.0, -100.0, np.inf, -np.inf, np.nan, -0.0, 17.0],
}
READERS = {"add": lambda f, b: f + b, "radd": lambda f, b: b + f, "sub": lambda f, b: f - b,
           "rsub": lambda f, b: b - f, "mul": lambda f, b: f * b, "rmul": lambda f, b: b * f}


@pytest.fixture(autouse=True)
def keep_subnormals():
    """Compiled programs flush subnormals by default (as XLA); kept here, so that subnormal
    arguments and results compare bit for bit with eager's."""
    pb.config.update("jit_flush_denormals", False)
    yield
    pb.config.update("jit_flush_denormals", True)


def values(name, n, special_every=7):
    lo, hi = (0.01, 5.0) if name == "log" else (-6.0, 6.0)
    x = RNG.uniform(lo, hi, n).astype(np.float32)
    sp = np.array(SPECIAL[name], np.float32)
    if n:
        x[::special_every] = sp[np.arange(len(x[::special_every])) % len(sp)]
    return x


def assert_same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))


PAIRED = re.compile(r"\b(exp|sin|cos|log|tanh|logistic)>")


def eager(f, *args):
    return f(*(pb.Array(a) for a in args))


def fused_text(f, *args):
    """The "fused: ..." lines of f's compiled schedule."""
    text = pb.jit(f).lower(*args).compile().as_text()
    return "\n".join(ln for ln in text.splitlines() if ln.strip().startswith("fused:"))


def test_exp_mul_sin_add_pin():
    x, y, z = (RNG.standard_normal(40).astype(np.float32) for _ in range(3))
    c = pb.jit(lambda x, y, z: pnp.exp(x) * y + pnp.sin(z)).lower(x, y, z).compile()
    assert "region[2 ops]" in c.as_text() and "fused: exp>mul ; sin>add" in c.as_text()
    assert c.cost_analysis()["flops"] == 4 * 40  # a pair still counts as two operations
    # a reader that is itself a pair's operand still pairs with its own transcendental
    text = fused_text(lambda x, y: pnp.tanh(pnp.exp(x) * y) * 0.5, x, y)
    assert text.strip() == "fused: exp>mul ; tanh>mul"


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("reader", sorted(READERS))
def test_every_pair_equals_eager(name, reader):
    u, r = UNARY[name], READERS[reader]
    x, b = values(name, 1000), RNG.standard_normal(1000).astype(np.float32)
    b[5::11] = np.resize(np.array([np.inf, -np.inf, np.nan, 0.0], np.float32), len(b[5::11]))

    def f(x, b):
        return r(u(x), b)

    assert f"{name}>{reader.lstrip('r')}" in fused_text(f, x, b)  # radd, rsub, rmul: the op
    assert_same_bits(pb.jit(f)(x, b), eager(f, x, b))


@pytest.mark.parametrize("n", [0, 1, 255, 256, 257, 513, 3000])
def test_block_edges(n):
    """The guard works in blocks of 256: a slow element near each edge, or none."""
    x = RNG.uniform(-3, 3, n).astype(np.float32)
    z = RNG.uniform(-3, 3, n).astype(np.float32)
    if n > 300:
        x[255], z[256] = 90.0, 1e20
    y = RNG.standard_normal(n).astype(np.float32)

    def f(x, y, z):
        return pnp.exp(x) * y + pnp.sin(z)

    assert_same_bits(pb.jit(f)(x, y, z), eager(f, x, y, z))


def _layout(a, kind):
    """a (2-d) seen as `kind`: its own bytes, every other column, reversed, or transposed."""
    if kind == "contiguous":
        return a
    if kind == "strided":
        return np.repeat(a, 2, axis=1)[:, ::2]
    if kind == "reversed":
        return np.ascontiguousarray(a[::-1, ::-1])[::-1, ::-1]
    return np.ascontiguousarray(a.T).T


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(sorted(UNARY)), reader=st.sampled_from(sorted(READERS)),
       xl=st.sampled_from(["contiguous", "strided", "reversed", "transposed"]),
       bl=st.sampled_from(["contiguous", "strided", "reversed", "transposed", "row", "scalar"]),
       rows=st.integers(1, 6), cols=st.integers(1, 700))
def test_layouts_and_broadcasts(name, reader, xl, bl, rows, cols):
    u, r = UNARY[name], READERS[reader]
    x = _layout(values(name, rows * cols).reshape(rows, cols), xl)
    if bl == "scalar":
        def f(x):
            return r(u(x), 1.5)
        args = (x,)
    else:
        b = RNG.standard_normal((rows, cols)).astype(np.float32)
        b = b[0] if bl == "row" else _layout(b, bl)

        def f(x, b):
            return r(u(x), b)
        args = (x, b)
    assert PAIRED.search(fused_text(f, *args))
    assert_same_bits(pb.jit(f)(*args), eager(f, *args))


def test_in_place_over_a_donated_operand():
    """The pair's result written over its own input (donated): each block is read first."""
    x = values("exp", 5000)
    y = RNG.standard_normal(5000).astype(np.float32)
    want = eager(lambda x, y: y - pnp.exp(x), x, y)
    f = pb.jit(lambda x, y: y - pnp.exp(x), donate_argnums=0)
    assert "fused: exp>sub\n" in f.lower(x, y).compile().as_text()
    assert_same_bits(f(pb.Array(x.copy()), y), want)
    g = pb.jit(lambda x, y: y - pnp.exp(x), donate_argnums=1)
    assert_same_bits(g(x, pb.Array(y.copy())), want)


@pytest.mark.parametrize("case", ["read twice", "also returned", "read by another op",
                                  "float64", "bfloat16", "divided", "maximum", "sqrt"])
def test_what_does_not_pair(case):
    x = RNG.uniform(0.5, 2, 300).astype(np.float32)
    y = RNG.standard_normal(300).astype(np.float32)
    f = {
        "read twice": lambda x, y: pnp.exp(x) * pnp.exp(x) + y,
        "also returned": lambda x, y: (pnp.exp(x), pnp.exp(x) * y),
        "read by another op": lambda x, y: (pnp.sin(x) + y) * pnp.sin(x),
        "float64": lambda x, y: pnp.exp(x.astype(np.float64)) * y.astype(np.float64),
        "bfloat16": lambda x, y: pnp.exp(x.astype(pnp.bfloat16)) * y.astype(pnp.bfloat16),
        "divided": lambda x, y: pnp.exp(x) / y,
        "maximum": lambda x, y: pnp.maximum(pnp.exp(x), y),
        "sqrt": lambda x, y: pnp.sqrt(x) * y,
    }[case]
    assert not PAIRED.search(fused_text(f, x, y))
    for g, w in zip(pb.tree_util.tree_leaves(pb.jit(f)(x, y)),
                    pb.tree_util.tree_leaves(eager(f, x, y))):
        if np.asarray(w).dtype == np.float32:
            assert_same_bits(g, w)
        else:
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_pairs_under_grad_and_scan():
    """A scan body under grad: a pair where a value is read once, none where it is saved."""
    xs = RNG.standard_normal((50, 8, 16)).astype(np.float32)
    w = RNG.standard_normal(16).astype(np.float32)

    def loss(w, xs):
        def step(h, x):
            h = pb.nn.sigmoid(x * w) * h + pnp.tanh(x)
            return h, pnp.sum(pnp.exp(h * 0.1) - 1.0)
        h, ys = pb.lax.scan(step, pnp.zeros((8, 16), np.float32), xs)
        return pnp.sum(ys) + pnp.sum(h)

    got = pb.jit(pb.grad(loss))(w, xs)
    want = pb.grad(loss)(pb.Array(w), pb.Array(xs))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-5, atol=1e-5)
    # logistic's and exp's values are residuals for the backward pass: they stay unpaired
    text = fused_text(pb.grad(loss), w, xs)
    assert "mul ; logistic ; sub ; mul ; mul ; tanh>add ; mul ; exp ; sub ; reduce_sum" in text


@pytest.mark.parametrize("mkn", [(3, 5, 7), (512, 256, 512)])
def test_pairs_in_matmul_epilogues(mkn):
    """A pair in a matmul's epilogue runs on the product while it is cached (on each thread's
    slice of it when the product is cut), and equals eager's."""
    m, k, n = mkn
    x = RNG.standard_normal((m, k)).astype(np.float32)
    w = RNG.standard_normal((k, n)).astype(np.float32)
    c = RNG.standard_normal((m, n)).astype(np.float32)
    b = RNG.standard_normal(n).astype(np.float32)
    for f, pin in [(lambda x, w, c, b: pb.nn.sigmoid(x @ w) * c, "epilogue: logistic>mul"),
                   (lambda x, w, c, b: c - pnp.tanh(x @ w + b), "epilogue: add ; tanh>sub")]:
        assert pin in pb.jit(f).lower(x, w, c, b).compile().as_text()
        assert_same_bits(pb.jit(f)(x, w, c, b), eager(f, x, w, c, b))
