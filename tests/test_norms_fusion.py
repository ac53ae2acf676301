"""A residual add feeding a norm, fused into it in compiled programs (transforms/passes/
norm_fusion.py -> primitives/norms.py's add_normalize, csrc/norms.c's add_normalize kernel):
jit equals eager bit for bit, and the compiled program has the fused step and no add step."""
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback import lax, nn
from pullback.primitives import norms as N
from pullback.test_util import layout
from pullback.tracer import dtypes

BF16 = dtypes.bfloat16
DTYPES = [np.float32, np.float64, BF16, np.float16]


@pytest.fixture(autouse=True)
def keep_subnormals():
    # compiled programs flush subnormals by default (as XLA does) and eager runs do not;
    # float16 outputs here reach the subnormal range
    old = pb.config.jit_flush_denormals
    pb.config.update("jit_flush_denormals", False)
    yield
    pb.config.update("jit_flush_denormals", old)


def normal(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def steps(f, *args):
    return pb.jit(f).lower(*args).compile().as_text()


def assert_same(got, want):
    for g, w in zip(pb.tree_util.tree_leaves(got), pb.tree_util.tree_leaves(want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g.astype(np.float64), w.astype(np.float64))


def assert_fused(text, n=1, other_adds=0):
    """n fused steps, no norm step, and no add step but ``other_adds`` (of a bias after it)"""
    assert text.count("kernel add_normalize") == n, text
    assert "kernel normalize " not in text and text.count("fused: add") == other_adds, text


def norm(kind, has_scale, has_bias):
    def f(h, s, c):
        if kind == "rms":
            y = nn.rms_norm(h, s if has_scale else None)
            return y + c if has_bias else y
        return nn.layer_norm(h, s if has_scale else None, c if has_bias else None)
    return f


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["layer", "rms"])
@pytest.mark.parametrize("has_scale,has_bias", [(False, False), (True, False), (True, True)])
def test_layer_norm_of_a_sum_equals_eager(dtype, kind, has_scale, has_bias):
    # 3 rows of 2500 columns: more than one block of the kernel's row pass (NB = 2048)
    for shape in [(5, 7), (3, 2500), (2, 3, 1), (0, 4)]:
        a, b = normal(shape, 1, dtype), normal(shape, 2, dtype)
        s, c = normal(shape[-1:], 3, dtype), normal(shape[-1:], 4, dtype)
        g = norm(kind, has_scale, has_bias)
        f = lambda a, b, s, c: g(a + b, s, c)  # noqa: E731
        assert_same(pb.jit(f)(a, b, s, c), f(a, b, s, c))
        if shape[0]:
            assert_fused(steps(f, a, b, s, c), other_adds=kind == "rms" and has_bias)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pre_ln_residual_keeps_the_sum(dtype):
    # h = x + attn feeds the norm and the next residual; a use of h before the norm too
    x, r, u = normal((16, 40), 5, dtype), normal((16, 40), 6, dtype), normal((16, 40), 7, dtype)
    s, c = normal(40, 8, dtype), normal(40, 9, dtype)

    def block(x, r, u, s, c):
        h = x + r
        early = jnp.sum(h, axis=0)
        y = nn.layer_norm(h, s, c)
        h2 = h + jnp.tanh(y) * u
        return nn.rms_norm(h2, s), h2, early

    assert_same(pb.jit(block)(x, r, u, s, c), block(x, r, u, s, c))
    text = steps(block, x, r, u, s, c)
    # the second norm's add reads a region's value used only there: it stays in that region
    assert text.count("kernel add_normalize") == 1 and "kernel normalize " in text, text


@pytest.mark.parametrize("kind", ["strided", "flipped", "transposed", "broadcast"])
@pytest.mark.parametrize("dtype", [np.float32, BF16])
def test_non_contiguous_operands(kind, dtype):
    a, b = layout(normal((6, 33), 10, dtype), kind), layout(normal((6, 33), 11, dtype), "flipped")
    s, c = normal(33, 12, dtype)[::-1], normal(33, 13, dtype)
    f = lambda a, b, s, c: nn.layer_norm(a + b, s, c)  # noqa: E731
    assert_same(pb.jit(f)(a, b, s, c), f(a, b, s, c))
    # transposed inside the program: the kernel reads strided rows of both operands
    g = lambda a, b: nn.layer_norm(a.T + b.T, axis=0) * 2  # noqa: E731
    at, bt = normal((33, 6), 14, dtype), normal((33, 6), 15, dtype)
    assert_same(pb.jit(g)(at, bt), g(at, bt))
    assert_fused(steps(g, at, bt))


@pytest.mark.parametrize("dtype", [np.float32, BF16])
def test_channels_first_and_tuple_axes(dtype):
    x, r = normal((2, 5, 4, 3), 16, dtype), normal((2, 5, 4, 3), 17, dtype)
    s, c = normal(5, 18, dtype), normal(5, 19, dtype)
    for f in [lambda x, r: nn.layer_norm(x + r, s, c, axis=1),          # LayerNorm2d
              lambda x, r: nn.layer_norm(x + r, axis=(1, 3)),
              lambda x, r: nn.group_norm(x + r, 5, s, c, channel_axis=1),
              lambda x, r: nn.batch_norm(x + r, s, c, channel_axis=1)]:
        assert_same(pb.jit(f)(x, r), f(x, r))
    assert_fused(steps(lambda x, r: nn.layer_norm(x + r, s, c, axis=1), x, r))


def test_broadcast_and_epilogue_adds_are_not_fused():
    x, r, w = normal((8, 16), 20), normal(16, 21), normal((16, 16), 22)
    cases = [(lambda x, r, w: nn.layer_norm(x + r), "fused: add"),         # a broadcast add
             (lambda x, r, w: nn.layer_norm(x + x @ w), "epilogue: add"),   # a matmul's epilogue
             (lambda x, r, w: nn.layer_norm(x + jnp.exp(x) + 1.0), "fused: "),  # in a region
             (lambda x, r, w: nn.layer_norm(x + 1.0), "fused: add")]         # a scalar operand
    for f, step in cases:
        np.testing.assert_allclose(np.asarray(pb.jit(f)(x, r, w)), np.asarray(f(x, r, w)),
                                   rtol=1e-6, atol=1e-6)
        text = steps(f, x, r, w)
        assert "add_normalize" not in text and step in text, text
    # a matmul whose product is also read elsewhere has no epilogue: the norm takes the add
    f = lambda x, w: (nn.layer_norm(x + x @ w), x @ w)  # noqa: E731
    assert_same(pb.jit(f)(x, w), f(x, w))
    assert_fused(steps(f, x, w))


def test_under_grad_vmap_and_scan():
    x, r, s, c = normal((4, 6, 24), 23), normal((4, 6, 24), 24), normal(24, 25), normal(24, 26)

    def loss(x, r, s, c):
        h = x + r
        return jnp.sum(h * nn.layer_norm(h, s, c))

    f = pb.value_and_grad(loss, argnums=(0, 1, 2, 3))
    assert_same(pb.jit(f)(x, r, s, c), f(x, r, s, c))
    assert "kernel add_normalize" in steps(f, x, r, s, c)
    v = pb.vmap(lambda x, r: nn.rms_norm(x + r, s), in_axes=(1, 1))
    assert_same(pb.jit(v)(x, r), v(x, r))
    assert_fused(steps(v, x, r))

    def body(carry, xr):
        h = carry + xr
        return h, nn.layer_norm(h, s, c)

    sc = lambda x: lax.scan(body, x[0], x)  # noqa: E731
    assert_same(pb.jit(sc)(x), sc(x))
    assert "add_normalize" in pb.jit(sc).lower(x).as_text()


@pytest.mark.parametrize("dtype", DTYPES)
def test_kernel_matches_its_reference(dtype):
    a, b = normal((7, 9), 27, dtype), normal((7, 9), 28, dtype)
    s, c = normal(9, 29, dtype), normal(9, 30, dtype)
    params = dict(axes=(1,), param_axes=(1,), rms=False, epsilon=1e-5, has_scale=True,
                  has_bias=True)
    h, y = N.add_normalize_p.bind(a, b, s, c, **params)
    rh, ry = N.add_normalize_p.reference(a, b, s, c, **params)
    np.testing.assert_array_equal(np.asarray(h).astype(np.float64), rh.astype(np.float64))
    tol = {np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-12}.get(np.dtype(dtype), 3e-2)
    np.testing.assert_allclose(np.asarray(y).astype(np.float64), ry.astype(np.float64),
                               rtol=tol, atol=tol)


def test_bad_operands_and_missing_rules_say_why():
    a = normal((3, 4), 31)
    params = dict(axes=(1,), param_axes=(1,), rms=False, epsilon=1e-5, has_scale=False,
                  has_bias=False)
    with pytest.raises(TypeError, match="add_normalize.*'a' and 'b'"):
        N.add_normalize_p.bind(a, normal((3, 5), 32), **params)
    with pytest.raises(Exception, match="after differentiation"):
        pb.grad(lambda a: jnp.sum(N.add_normalize_p.bind(a, a, **params)[1]))(a)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_sums_streamed_out(dtype):
    # h of 4 MiB or more on rows of one block goes to memory with streaming stores from the
    # kernel's scratch (csrc/norms.c: nt_h); rows of 1000 leave h's rows unaligned to 16 bytes
    # in float32 half of the time
    for shape in [(1024, 1024), (1100, 1000), (600, 1000)]:
        a, b = normal(shape, 33, dtype), normal(shape, 34, dtype)
        s, c = normal(shape[-1:], 35, dtype), normal(shape[-1:], 36, dtype)
        f = lambda a, b, s, c: (a + b, nn.layer_norm(a + b, s, c))  # noqa: E731
        assert_same(pb.jit(f)(a, b, s, c), f(a, b, s, c))
        g = lambda a, b: nn.rms_norm(a + b.T)  # noqa: E731
        assert_same(pb.jit(g)(a, b.T.copy()), g(a, b.T.copy()))
        assert_fused(steps(g, a, b.T.copy()))


def test_sum_used_as_the_scale_is_not_fused():
    # found by tests/programs.py: the fused equation would read its own output
    x = normal((3, 4), 37)
    f = lambda x: nn.layer_norm(x + x, x[0] + x[0])  # noqa: E731
    g = lambda x: nn.layer_norm(x[0] + x[1], x[0] + x[1])  # noqa: E731
    assert_same(pb.jit(f)(x), f(x))
    assert_same(pb.jit(g)(x), g(x))
    assert "add_normalize" not in steps(g, x)
