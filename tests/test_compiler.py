"""The jit compiler and executor: every thunk kind against eager, fusion, the memory plan,
donation, the callback step, re-entrancy, introspection and errors."""
import threading

import ml_dtypes
import numpy as np
import pytest

import pullback as pb
import pullback.lax as lax
import pullback.numpy as jnp
from pullback.backends.cpu.compiler.steps import Operand, Py, Region, RegionOp
from pullback.backends.cpu.kernels import Program
from pullback.test_util import LAYOUTS, layout, reference_backend

RNG = np.random.default_rng(0)


def rand(shape, dtype=np.float32, lo=-2.0, hi=2.0):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return RNG.random(shape) < 0.5
    if dtype.kind in "iu":
        return RNG.integers(0 if dtype.kind == "u" else -5, 6, size=shape).astype(dtype)
    x = RNG.uniform(lo, hi, size=shape)
    if dtype.kind == "c":
        x = x + 1j * RNG.uniform(lo, hi, size=shape)
    return x.astype(dtype)


def compiled(f, *args, **kw):
    return pb.jit(f, **kw).lower(*args).compile()


def check_vs_eager(f, *args, rtol=1e-6, atol=0.0):
    """jit(f) equals f run eagerly (primitive by primitive) and an independent NumPy value."""
    got = pb.jit(f)(*args)
    want = f(*args)
    for g, w in zip(pb.tree_util.tree_leaves(got), pb.tree_util.tree_leaves(want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        if g.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g.astype(np.complex128 if g.dtype.kind == "c" else
                                                np.float64),
                                       w.astype(np.complex128 if w.dtype.kind == "c" else
                                                np.float64), rtol=rtol, atol=atol)
    return got


# ---- element-wise regions ----

def _chain(x, y, z):
    return jnp.exp(x) * y + jnp.sin(z)


def test_fused_region_values_and_text():
    x, y, z = (rand((4, 5)) for _ in range(3))
    got = check_vs_eager(_chain, x, y, z)
    np.testing.assert_allclose(np.asarray(got), np.exp(x) * y + np.sin(z), rtol=1e-5)
    text = compiled(_chain, x, y, z).as_text()
    # exp and sin each run paired with the one op reading them (test_compiler_pairs.py)
    assert "region[2 ops] (input0:f32[4,5], input1:f32[4,5], input2:f32[4,5]) -> " \
           "(output0:f32[4,5])" in text
    assert "fused: exp>mul ; sin>add" in text


def test_region_writes_values_needed_elsewhere():
    def f(x):
        a = jnp.exp(x)
        return a * 2.0, jnp.sum(a)  # a leaves the region (read by the reduction)

    x = rand((16,))
    a, s = check_vs_eager(f, x, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(s), np.exp(x).sum(), rtol=1e-5)
    text = compiled(f, x).as_text()
    # the reduction joins the region as its prologue's consumer; a is written once
    assert "region[3 ops] (input0:f32[16], const:f32[16] strides=(0,)) -> (output0:f32[16], " \
           "output1:f32[16] strides=(0,))" in text
    assert "fused: exp ; mul ; reduce_sum" in text


def test_reduction_prologues_never_reach_memory():
    def f(x):
        return jnp.sum(x * x), jnp.max(jnp.exp(x) * 2.0, axis=0), jnp.sum(jnp.abs(x), axis=1)

    x = rand((300, 70))
    ss, mx, ab = check_vs_eager(f, x, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(ss), (x.astype(np.float64) ** 2).sum(), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(mx), (np.exp(x) * 2).max(0), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ab), np.abs(x).sum(1), rtol=1e-5)
    c = compiled(f, x)
    text = c.as_text()
    assert "fused: mul ; reduce_sum ; exp>mul ; reduce_max ; abs ; reduce_sum" in text
    assert c.memory_analysis().temp_size_in_bytes == 0  # no intermediate array at all
    # a zero-size reduced axis gives the identity
    z = rand((0, 3))
    np.testing.assert_array_equal(np.asarray(pb.jit(lambda a: jnp.sum(a * 2.0, axis=0))(z)),
                                  np.zeros(3, np.float32))


def test_a_step_joining_an_earlier_region_does_not_block_a_later_one():
    """Optimizer-shaped programs: per-leaf chains interleaved leaf by leaf (tree_map after
    tree_map), with a scalar computed in between. ``c2``'s ops join the scalar region, which
    runs before the regions of ``m / c1``; so they do not stand between those regions and the
    later ``v / c2``, which must join them (one region per leaf, no lone division)."""
    def f(ma, mb, va, vb, s):
        c1 = 1.0 - s * 0.9
        ha, hb = ma / c1, mb / c1          # first tree_map
        c2 = 1.0 - s * 0.99                # a scalar after it
        na, nb = va / c2, vb / c2          # second tree_map
        return ha / (jnp.sqrt(na) + 1e-8), hb / (jnp.sqrt(nb) + 1e-8)

    rng = np.random.default_rng(7)  # its own draws: the module's RNG stays as other tests expect
    ma, va = rng.normal(size=(2, 6, 7)).astype(np.float32)
    mb, vb = rng.normal(size=(2, 5)).astype(np.float32)
    va, vb, s = np.abs(va) + 0.1, np.abs(vb) + 0.1, np.float32(0.5)
    check_vs_eager(f, ma, mb, va, vb, s, rtol=1e-6)
    text = compiled(f, ma, mb, va, vb, s).as_text()
    assert text.count("fused: div ; div ; sqrt ; add ; div") == 2, text
    assert "region[1 ops]" not in text, text


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, ml_dtypes.bfloat16,
                                   np.int32, np.int8, np.uint16, np.complex64, np.bool_])
def test_region_dtypes(dtype):
    x, y = rand((3, 7), dtype), rand((3, 7), dtype)
    if np.dtype(dtype) == np.bool_:
        f = lambda a, b: jnp.logical_xor(a, b) | (a & ~b)  # noqa: E731
    else:
        f = lambda a, b: (a * b + a) - b  # noqa: E731
    got = check_vs_eager(f, x, y, rtol=1e-2 if np.dtype(dtype).itemsize == 2 else 1e-6)
    want = np.asarray(f(pb.Array(x), pb.Array(y)))
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (1,), (2, 1, 3, 4)])
def test_shapes_scalar_and_zero_size(shape):
    x, y = rand(shape), rand(shape)
    got = check_vs_eager(lambda a, b: jnp.maximum(a, b) * 3.0 - jnp.tanh(b), x, y, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(got), np.maximum(x, y) * 3 - np.tanh(y), rtol=1e-5)


@pytest.mark.parametrize("kind", LAYOUTS)
def test_input_layouts(kind):
    base = rand((4, 6))
    x = layout(base, kind)
    y = rand((4, 6))
    f = pb.jit(lambda a, b: jnp.cos(a) * b + a)
    got = np.asarray(f(pb.Array(x), pb.Array(y)))
    np.testing.assert_allclose(got, np.cos(x) * y + x, rtol=1e-6)


def test_broadcast_inside_region_reads_zero_strides():
    def f(x, b):
        return jnp.maximum(x + b[None, :], 0.0) * 2.0

    x, b = rand((5, 3)), rand((3,))
    got = check_vs_eager(f, x, b)
    np.testing.assert_allclose(np.asarray(got), np.maximum(x + b, 0) * 2, rtol=1e-6)
    assert "input1:f32[5,3] strides=(0, 4)" in compiled(f, x, b).as_text()


def test_select_clamp_convert_integer_pow_round():
    def f(x, y):
        w = jnp.where(x > y, x, y)
        c = lax.clamp(-0.5, w, 0.5)
        i = lax.convert_element_type(c * 10, np.int32)
        return lax.integer_pow(c, 3) + lax.round(w), i

    x, y = rand((6, 2)), rand((6, 2))
    (a, i) = check_vs_eager(f, x, y)
    w = np.where(x > y, x, y)
    c = np.clip(w, -0.5, 0.5)
    np.testing.assert_array_equal(np.asarray(i), (c * 10).astype(np.int32))
    np.testing.assert_allclose(np.asarray(a), c ** 3 + np.round(w), rtol=1e-6, atol=1e-6)
    text = compiled(f, x, y).as_text()
    assert "select_n" in text and "convert->int32" in text and "callback" not in text


def test_regions_hold_up_to_twelve_operands():
    """A chain over 15 inputs: regions take at most 12 memory operands (pb_iterate's limit),
    so it runs as two; each input read with its own layout."""
    xs = [rand((5, 7)) for _ in range(14)] + [rand((7,))]

    def f(*xs):
        acc = xs[0]
        for k, x in enumerate(xs[1:]):
            acc = acc * 0.5 + x if k % 2 else jnp.maximum(acc, x) - 0.25
        return acc
    text = compiled(f, *xs).as_text()
    heads = [s for s in text.splitlines() if ": region[" in s]
    assert len(heads) == 2 and all(s.count("input") + s.count("arena@") + s.count("output") +
                                   s.count("const") <= 12 for s in heads)
    want = xs[0].astype(np.float64)
    for k, x in enumerate(xs[1:]):
        want = want * 0.5 + x if k % 2 else np.maximum(want, x) - 0.25
    np.testing.assert_allclose(np.asarray(pb.jit(f)(*xs)), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int8, np.float16])
@pytest.mark.parametrize("cases", ["tile, scalar", "scalar, tile", "scalar, scalar"])
def test_select_between_a_tile_and_a_broadcast_scalar(dtype, cases):
    """select_n inside a region with one or both cases a broadcast scalar (a relu's mask and
    derivative), over tiles of several lengths: the contiguous loops take stride-0 cases."""
    x = (RNG.standard_normal((3, 1100)) * 4).astype(dtype)
    y = (RNG.standard_normal((3, 1100)) * 4).astype(dtype)
    one, zero = dtype(1), dtype(2)
    pick = {"tile, scalar": lambda x, y: (x, zero), "scalar, tile": lambda x, y: (one, y),
            "scalar, scalar": lambda x, y: (one, zero)}[cases]

    def f(x, y):
        a, b = pick(x + x, y)
        return jnp.where(x > y, a, b), jnp.where(x == y, b, a)

    assert "select_n" in compiled(f, x, y).as_text()
    got = pb.jit(f)(x, y)
    a, b = pick(x + x, y)
    for g, w in zip(got, (np.where(x > y, a, b), np.where(x == y, b, a))):
        np.testing.assert_array_equal(np.asarray(g), np.broadcast_to(w, x.shape))


# ---- views and movement ----

def test_views_cost_no_steps():
    def f(x):
        return jnp.transpose(x)[::-1, 1:3] * 2.0

    x = rand((4, 5))
    got = check_vs_eager(f, x)
    np.testing.assert_array_equal(np.asarray(got), x.T[::-1, 1:3] * 2)
    c = compiled(f, x)
    assert c._compiled.program.num_steps == 1  # the transpose/rev/slice are strides of the read


def test_reshape_that_needs_a_copy_and_concatenate():
    def f(x, y):
        t = jnp.reshape(jnp.transpose(x), (-1,))
        return jnp.concatenate([t, y, t[:2]])

    x, y = rand((3, 4)), rand((5,))
    got = check_vs_eager(f, x, y)
    t = x.T.reshape(-1)
    np.testing.assert_array_equal(np.asarray(got), np.concatenate([t, y, t[:2]]))
    assert "callback" not in compiled(f, x, y).as_text()


def test_outputs_that_are_views_share_memory_and_computed_views_are_copied():
    f = pb.jit(lambda x: (x, x.T, x[1], jnp.exp(x), jnp.exp(x).T))
    x = rand((2, 3))
    a, b, c, e, et = f(pb.Array(x))
    for got, want in ((a, x), (b, x.T), (c, x[1]), (e, np.exp(x)), (et, np.exp(x).T)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    # views of an input are views (Arrays are immutable: no copy), views of arena data copies
    assert all(np.shares_memory(np.asarray(v), x) for v in (a, b, c))
    # CSE merges the two exps: the transposed output is a view of the other output
    assert np.shares_memory(np.asarray(e), np.asarray(et))
    h = pb.jit(lambda x: (lambda y: (y, y.T))(jnp.exp(x)))
    y, yt = h(pb.Array(x))
    assert np.shares_memory(np.asarray(y), np.asarray(yt))  # a view of output 0
    assert "output 1 is a view of output0" in h.lower(pb.Array(x)).compile().as_text()


@pytest.mark.parametrize("kind", ["strided", "flipped", "transposed", "broadcast"])
def test_non_contiguous_arguments_compile_a_program_reading_their_strides(kind):
    x = layout(rand((4, 6)), kind)
    f = pb.jit(lambda a: jnp.sum(a * a, axis=0) + a[0])
    got = f(pb.Array(x))
    want = (lambda a: jnp.sum(a * a, axis=0) + a[0])(pb.Array(x))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))  # bit for bit
    text = f.lower(pb.Array(x)).compile().as_text()
    assert "input0:f32[4,6]" in text and ("strides=" in text or kind == "broadcast")
    f(pb.Array(np.ascontiguousarray(x)))  # contiguous: the default program, then the fast path
    np.testing.assert_array_equal(np.asarray(f(pb.Array(x))), np.asarray(want))


def test_constants_and_constant_folding():
    w = rand((3,))

    def f(x):
        return x * jnp.asarray(w) + jnp.arange(3.0) * 2.0

    x = rand((3,))
    got = check_vs_eager(f, x)
    np.testing.assert_allclose(np.asarray(got), x * w + np.arange(3.0) * 2, rtol=1e-6)
    text = compiled(f, x).as_text()
    assert "iota" not in text and text.count("\n  ") == 2  # one region step (folded arange)


# ---- dot_general, epilogue; reductions ----

def test_matmul_with_bias_relu_epilogue():
    def f(x, w, b):
        return jnp.maximum(x @ w + b, 0.0)

    x, w, b = rand((8, 5)), rand((5, 6)), rand((6,))
    got = check_vs_eager(f, x, w, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(got), np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-6)
    text = compiled(f, x, w, b).as_text()
    assert "dot_general (input0:f32[1,8,5], input1:f32[1,5,6], input2:f32[8,6] strides=(0, 4)" \
        in text and text.count("\n  ") == 2  # one step: the product and its epilogue
    assert "epilogue: add ; max" in text


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16, np.complex64])
def test_dot_general_dtypes_and_batches(dtype):
    def f(a, b):
        return lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))))

    a, b = rand((2, 3, 4), dtype), rand((2, 4, 5), dtype)
    check_vs_eager(f, a, b, rtol=1e-2 if np.dtype(dtype).itemsize == 2 else 1e-5, atol=1e-5)
    check_vs_eager(lambda a, b: jnp.einsum("bij,bkj->bik", a, b), a, b.transpose(0, 2, 1),
                   rtol=1e-2 if np.dtype(dtype).itemsize == 2 else 1e-5, atol=1e-5)


def test_dot_with_zero_contraction():
    got = check_vs_eager(lambda a, b: a @ b, rand((3, 0)), rand((0, 2)))
    np.testing.assert_array_equal(np.asarray(got), np.zeros((3, 2), np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.bool_])
def test_reductions(dtype):
    x = rand((3, 4, 5), dtype)
    if np.dtype(dtype) == np.bool_:
        check_vs_eager(lambda a: (jnp.any(a, axis=1), jnp.all(a, axis=(0, 2))), x)
        return
    tol = 1e-2 if np.dtype(dtype).itemsize == 2 else 1e-6
    s, m, p = check_vs_eager(lambda a: (jnp.sum(a, axis=(0, 2)), jnp.max(a, axis=1),
                                        jnp.min(a.T, axis=0)), x, rtol=tol)
    np.testing.assert_allclose(np.asarray(m).astype(float), x.max(axis=1).astype(float))
    assert "reduce reduce_sum" in compiled(lambda a: jnp.sum(a, axis=0), x).as_text()


# ---- memory plan, in place, donation ----

def test_buffers_are_reused_and_smaller_than_the_sum():
    def f(x, w):
        for _ in range(4):  # matmuls break regions: their results need buffers
            x = jnp.tanh(x @ w)
        return x

    x, w = rand((32, 32)), rand((32, 32)) / 8
    check_vs_eager(f, x, w, rtol=1e-5, atol=1e-6)
    c = compiled(f, x, w)
    mem = c._compiled.mem
    assert mem["arena_bytes"] < mem["naive_bytes"]
    assert c.memory_analysis().temp_size_in_bytes == mem["arena_bytes"]


def test_in_place_region_over_a_dead_intermediate():
    def f(x, w):
        y = x @ w                  # an arena intermediate ...
        s = jnp.sum(y)             # ... read elsewhere too, so it is materialized
        z = jnp.exp(y) * 2.0 + s   # y dies here: z takes its block
        return z @ w.T

    x, w = rand((16, 8)), rand((8, 16))
    check_vs_eager(f, x, w, rtol=1e-5)
    text = compiled(f, x, w).as_text()
    line = next(ln for ln in text.splitlines() if "in place" in ln)
    dst, src = line.split(" writes ")[1].split(" over ")
    assert dst == src and dst.startswith("arena[")


def test_donated_input_buffer_becomes_the_output():
    def step(w, g):
        return w - 0.1 * g

    w, g = rand((64,)), rand((64,))
    want = w - np.float32(0.1) * g
    f = pb.jit(step, donate_argnums=0)
    wa = pb.Array(w.copy())
    assert "donated: output 0 reuses input 0" in f.lower(wa, pb.Array(g)).compile().as_text()
    before = wa._value.ctypes.data
    out = f(wa, pb.Array(g))
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)
    assert out._value.ctypes.data == before  # written in place
    assert wa.is_deleted()  # as JAX: the donated Array cannot be used any more
    # a read-only (non-writeable) donated buffer is left alone: a fresh output instead
    ro = w.copy()
    ro.flags.writeable = False
    out2 = f(pb.Array(ro), pb.Array(g))
    np.testing.assert_allclose(np.asarray(out2), want, rtol=1e-6)
    assert not np.shares_memory(np.asarray(out2), ro)


def test_donation_is_refused_when_the_input_is_read_later():
    def f(w, g):
        new = w * 2.0
        return new, jnp.sum(w @ g)  # w is read by the matmul after `new` is produced

    w, g = rand((4, 4)), rand((4, 4))
    jf = pb.jit(f, donate_argnums=0)
    a, s = jf(pb.Array(w.copy()), pb.Array(g))
    np.testing.assert_allclose(np.asarray(a), w * 2)
    np.testing.assert_allclose(np.asarray(s), np.sum(w @ g), rtol=1e-5)


# ---- callback steps ----

def test_registered_kernels_run_as_kernel_steps():
    def f(x):
        return jnp.cumsum(jnp.sort(x) * 2.0) + 1.0

    x = rand((9,))
    got = check_vs_eager(f, x, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(got), np.cumsum(np.sort(x) * 2) + 1, rtol=1e-5)
    c = compiled(f, x)
    # registered kernels run natively on the arena (the "kernel" step): no Python callback
    assert c._compiled.fallbacks == []
    assert "kernel sort" in c.as_text() and "kernel cumsum" in c.as_text()
    assert "call " not in c.as_text() and "callback" not in c.as_text()


def test_nested_jit_is_inlined_and_jit_equation_runs_compiled():
    inner = pb.jit(lambda a: jnp.sin(a) + 1.0)

    def outer(x):
        return inner(x) * 2.0

    x = rand((5,))
    got = check_vs_eager(outer, x)
    np.testing.assert_allclose(np.asarray(got), (np.sin(x) + 1) * 2, rtol=1e-6)
    assert "fused: sin>add ; mul" in compiled(outer, x).as_text()
    # a jit equation evaluated at level 0 (here by eval_jaxpr) runs its compiled program
    from pullback.tracer.staging import eval_jaxpr
    from pullback.transforms import jit as jitmod
    closed = pb.make_jaxpr(outer)(x)
    before = len(jitmod._compiled_eqns)
    out = eval_jaxpr(closed.jaxpr, closed.consts, pb.Array(x))[0]
    np.testing.assert_allclose(np.asarray(out), (np.sin(x) + 1) * 2, rtol=1e-6)
    assert len(jitmod._compiled_eqns) == before + 1


# ---- transformations around jit, reference backend ----

def test_grad_and_vmap_of_jit_and_jit_of_grad():
    def loss(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)

    w, x = rand((4, 3)), rand((5, 4))
    g_eager = pb.grad(loss)(w, x)
    np.testing.assert_allclose(np.asarray(pb.grad(pb.jit(loss))(w, x)), np.asarray(g_eager),
                               rtol=1e-5)
    np.testing.assert_allclose(np.asarray(pb.jit(pb.grad(loss))(w, x)), np.asarray(g_eager),
                               rtol=1e-5, atol=1e-6)
    vm = pb.vmap(pb.jit(lambda a: jnp.sum(a * a)))(x)
    np.testing.assert_allclose(np.asarray(vm), (x * x).sum(1), rtol=1e-6)


def test_reference_backend_matches_cpu():
    f = pb.jit(lambda x, w: jnp.sum(jnp.exp(x @ w), axis=0))
    x, w = rand((3, 4)), rand((4, 2))
    cpu = np.asarray(f(x, w))
    with reference_backend():
        ref = np.asarray(f(x, w))
    np.testing.assert_allclose(cpu, ref, rtol=1e-5)


def test_python_scalars_and_numpy_arguments():
    f = pb.jit(lambda x, s: x * s + 1)
    out = f(np.arange(3.0), 2.0)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(np.asarray(out), np.arange(3.0) * 2 + 1)
    assert f(1.0, 2.0).weak_type


# ---- re-entrancy, introspection, errors ----

def test_concurrent_calls_from_threads():
    # large enough for the thread pool (chunked product, chunked regions): calls that find the
    # pool busy run on their own thread, calls that find the program busy use a private arena
    f = pb.jit(lambda x, w: jnp.tanh(x @ w) * 2.0 + 1.0)
    x, w = rand((256, 512)), rand((512, 256)) / 16
    want = np.asarray(f(x, w))
    results, errors = [], []

    def worker(k):
        try:
            for _ in range(20 if k else 10):
                results.append(np.array_equal(np.asarray(f(x * np.float32(k == k), w)), want))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors and all(results) and len(results) == 70


def _region(shape, refs, ops, item=4, grain=1):
    """A region of float32-sized operands, contiguous over ``shape``."""
    strides = tuple(item * int(np.prod(shape[d + 1:])) for d in range(len(shape)))
    return Region(shape=shape, refs=refs, strides=(strides,) * len(refs),
                  items=(item,) * len(refs), ops=ops, grain=grain, inits=(), stream=())


def test_reentrant_call_from_a_callback_uses_a_private_arena():
    from pullback.backends.cpu.kernels import EWISE_OPS, SCHEDULE, schedule_slots
    f32, n = np.dtype(np.float32), 300
    arena, cbuf = (SCHEDULE["arena"], 0, 0), (SCHEDULE["arena"], 0, 1216)
    inp, out = (SCHEDULE["input"], 0, 0), (SCHEDULE["output"], 0, 0)
    holder, depth = {}, []

    def cb(a):
        if depth:  # the inner call: zeros
            return (np.zeros_like(a),)
        depth.append(1)
        return (holder["p"].run(a * 3)[0] + 1,)  # re-enters the program while it runs

    copy = RegionOp(loop=SCHEDULE["copy"], a=4, b=0, params=(), operands=(0, 1), items=(4, 4))
    add = RegionOp(loop=SCHEDULE["ewise"], a=EWISE_OPS["add"], b=schedule_slots(f32)[0],
                   params=(), operands=(0, 1, 2), items=(4, 4, 4))
    ops = (Operand(ref=arena, dtype=f32, shape=(n,), strides=(4,)),
           Operand(ref=cbuf, dtype=f32, shape=(n,), strides=(4,)))
    steps = (_region((n,), (inp, arena), (copy,)), Py(callable=cb, operands=ops, nin=1),
             _region((n,), (arena, cbuf, out), (add,)))
    p = holder["p"] = Program("re", 2432, ((f32, (n,), None),), ((f32, (n,), -1, None),), (),
                              steps, False)
    x = rand((n,))
    # outer: x + (inner(3x) + 1) with inner(3x) = 3x + 0; a shared arena would give 6x + 1
    # (absolute tolerance: x + (3x + 1) and 4x + 1 round apart where they cancel near 0)
    np.testing.assert_allclose(p.run(x)[0], 4 * x + 1, rtol=1e-6, atol=1e-6)


def test_cost_and_memory_analysis():
    c = compiled(lambda a, b: a @ b, rand((8, 4)), rand((4, 3)))
    assert c.cost_analysis()["flops"] == 2 * 8 * 4 * 3
    assert c.cost_analysis()["bytes accessed"] == 4 * (32 + 12 + 24)
    m = c.memory_analysis()
    assert (m.argument_size_in_bytes, m.output_size_in_bytes) == (4 * 44, 4 * 24)
    lowered = pb.jit(lambda a: a * 1.0 + 0.0).lower(rand((2,)))
    assert lowered.as_text().startswith("{ lambda ; a:f32[2]. let")


def test_errors_name_the_op_and_argument():
    f = pb.jit(lambda x, y: x + y)
    with pytest.raises(ValueError, match="add: shapes"):
        f(rand((3,)), rand((4,)))
    g = pb.jit(lambda x, y: lax.add(x, y))
    with pytest.raises(TypeError, match="add: argument 'y' has shape"):
        g(rand((3, 2)), rand((4, 2)))
    c = compiled(lambda x: x * 2.0, rand((3,)))
    with pytest.raises(TypeError, match=r"jit\(<lambda>\): argument 0 has dtype float64"):
        c._compiled.run(np.zeros(3))
    with pytest.raises(TypeError, match="argument 0 has 2 dimensions"):
        c._compiled.run(np.zeros((3, 1), np.float32))
    with pytest.raises(TypeError, match="takes 1 arrays, got 2"):
        c._compiled.run(np.zeros(3, np.float32), np.zeros(3, np.float32))


def test_malformed_schedules_are_rejected():
    copy = RegionOp(loop=2, a=4, b=0, params=(), operands=(0, 1), items=(4, 4))
    spec = (_region((4,), ((0, 0, 0), (2, 0, 0)), (copy,)),)
    out = ((np.dtype(np.float32), (4,), -1, None),)
    with pytest.raises(ValueError, match="malformed"):  # reads past an arena of 0 bytes
        Program("bad", 0, (), out, (), spec, False)
    Program("good", 64, (), out, (), spec, False)
    with pytest.raises(ValueError, match="malformed"):  # an unknown loop kind
        Program("bad", 64, (), out, (),
                (_region((4,), ((0, 0, 0), (2, 0, 0)),
                         (RegionOp(loop=9, a=0, b=0, params=(), operands=(0, 1), items=(4, 4)),)),),
                False)
    # steps are typed specs read by field name: no positional tuple, no missing field
    with pytest.raises(TypeError, match="a step must be a spec with a kind"):
        Program("bad", 64, (), out, (), (("region", (4,), ((0, 0, 0), (2, 0, 0))),), False)
    short = _region((4,), ((0, 0, 0), (2, 0, 0)), (copy,))
    del short.grain
    with pytest.raises(ValueError, match="no field 'grain'"):
        Program("bad", 64, (), out, (), (short,), False)


def test_large_products_run_in_chunks_with_their_epilogues():
    # large enough for the pool to split the product (and a per-chunk epilogue when the
    # epilogue reads the product element for element; after the whole product otherwise)
    x, w, b = rand((256, 256)), rand((256, 256)) / 16, rand((256,))
    sliced = check_vs_eager(lambda x, w, b: jnp.maximum(x @ w + b, 0.0), x, w, b, rtol=1e-5,
                            atol=1e-5)
    np.testing.assert_allclose(np.asarray(sliced), np.maximum(x @ w + b, 0), rtol=1e-4, atol=1e-4)
    whole = check_vs_eager(lambda x, w: (lambda y: y.T * 2.0 + y)(x @ w), x, w, rtol=1e-5,
                           atol=1e-5)
    y = x @ w
    np.testing.assert_allclose(np.asarray(whole), y.T * 2 + y, rtol=1e-4, atol=1e-4)
    assert "epilogue" in compiled(lambda x, w: (lambda y: y.T * 2.0 + y)(x @ w), x, w).as_text()


def _dot_specs(f, *args):
    """The Dot specs of f's compiled schedule (par members included)."""
    from pullback.backends.cpu.compiler.steps import Dot

    class Emit:
        ref = staticmethod(lambda v: (0, 0, 0))

    out = []
    for s in compiled(f, *args)._compiled.steps:
        for d in s.info["members"] if s.kind == "par" else [s]:
            if d.kind == "dot":
                out.append(Dot.emit(d, Emit()))
    return out


def test_batched_epilogue_follows_the_flattened_product_rows():
    """x (B, T, D) @ w is one (B*T, N) product; its bias-add + activation region over (B, T, N)
    runs as the same region over (B*T, N), on each strip of rows as the kernel finishes it
    (while in cache), not after the whole product."""
    x, w, b = rand((4, 64, 256)), rand((256, 256)) / 16, rand((256,))
    f = lambda x, w, b: jnp.tanh(x @ w + b) * 0.5  # noqa: E731
    (spec,) = _dot_specs(f, x, w, b)
    assert spec.dims[:3] == (1, 256, 256) and spec.epilogue.shape == (256, 256)
    assert spec.reads and spec.epilogue.strides[spec.reads[0]] == (1024, 4)
    got = check_vs_eager(f, x, w, b, rtol=1e-5, atol=1e-5)
    want = np.tanh(x.astype(np.float64) @ w + b) * 0.5
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)
    # an operand whose leading dims do not merge (a transposed read): the region stays as it
    # was (3-D, after the whole product), with the same values
    g = lambda x, w, c: x @ w + c.transpose(1, 0, 2)  # noqa: E731
    c = rand((64, 4, 256))
    (spec,) = _dot_specs(g, x, w, c)
    assert spec.epilogue.shape == (4, 64, 256) and not spec.reads
    got = check_vs_eager(g, x, w, c, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(got), x.astype(np.float64) @ w + c.transpose(1, 0, 2),
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("axes, dims", [((0, 1), (2,)), (2, (0, 1)), (1, (0, 2)),
                                        (None, ()), ("both", ())])
def test_regions_with_reductions_cut_only_where_accumulators_move(axes, dims):
    """A region with reduction accumulators runs in chunks along a dimension whose every index
    moves every accumulator (a layer norm's row statistics: rows; a bias gradient: columns):
    each chunk owns its accumulator elements and adds into each in the one-thread order, so
    the bits do not depend on the threads. A full sum, or a row and a column sum together,
    never cut."""
    x, y = rand((8, 64, 96)), rand((8, 64, 96))
    if axes == "both":
        f = lambda x, y: (lambda p: (jnp.sum(p, axis=(0, 1)), jnp.sum(p, axis=2)))(  # noqa: E731
            jnp.tanh(x) * y + x)
    else:
        f = lambda x, y: jnp.sum(jnp.tanh(x) * y + x, axis=axes)  # noqa: E731
    c = compiled(f, x, y)._compiled
    regions = [d for s, d in zip(c.steps, c.program.split_dims()) if s.kind == "region"]
    assert regions == [dims]
    got = check_vs_eager(f, x, y, rtol=2e-6, atol=2e-5)
    p = np.tanh(x.astype(np.float64)) * y + x
    want = (p.sum((0, 1)), p.sum(2)) if axes == "both" else p.sum(axis=axes)
    for g, w in zip(pb.tree_util.tree_leaves(got), pb.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-4, atol=1e-3)
    jf = pb.jit(f)
    first = [np.asarray(v) for v in pb.tree_util.tree_leaves(jf(x, y))]
    for _ in range(5):  # chunks claimed by whichever thread is free: the same bits every time
        for a, b in zip(first, pb.tree_util.tree_leaves(jf(x, y))):
            np.testing.assert_array_equal(a, np.asarray(b))


def test_product_epilogue_with_a_reduction_runs_after_the_whole_product():
    # the bias gradient of a layer: sum over rows of (x @ w) * mask, fused after the product
    x, w = rand((256, 256)), rand((256, 256)) / 16
    m = rand((256, 256)) > 0

    def f(x, w, m):
        y = (x @ w) * m
        return jnp.sum(y, axis=0), y

    s, y = check_vs_eager(f, x, w, m, rtol=1e-4, atol=1e-4)
    want = (x.astype(np.float64) @ w) * m
    np.testing.assert_allclose(np.asarray(s), want.sum(0), rtol=1e-4, atol=1e-3)
    assert "epilogue: convert->float32 ; mul ; reduce_sum" in compiled(f, x, w, m).as_text()


@pytest.mark.parametrize("config", [((1, 2, 0), (0, 0, 0)), ((-1, 2, 1), (2, -3, 2)),
                                    ((0, 0, 3), (-2, -2, 0)), ((1, -1, 0), (0, 0, 0))])
def test_pad_is_a_fill_and_a_strided_copy(config):
    x = rand((3, 5))
    f = lambda a: lax.pad(a * 2.0, jnp.float32(-7.0), config) + 1.0  # noqa: E731
    got = check_vs_eager(f, x)
    with reference_backend():
        want = np.asarray(f(pb.Array(x)))
    np.testing.assert_array_equal(np.asarray(got), want)
    assert "callback" not in compiled(f, x).as_text()



@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_programs_run_in_a_forked_child():
    import os
    f = pb.jit(lambda x, w: jnp.tanh(x @ w) + 1.0)
    x, w = rand((256, 512)), rand((512, 256)) / 16
    want = np.asarray(f(x, w))  # the pool's threads exist now; a child has none
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        ok = np.array_equal(np.asarray(f(x, w)), want)
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


@pytest.mark.parametrize("m,k,n", [(16, 128, 128), (5, 300, 70), (32, 64, 2047), (1, 513, 33),
                                   (31, 17, 96)])
def test_small_row_products_match_eager_bit_for_bit(m, k, n):
    # few-row float32 products take the direct loops (a loop step's product), eager and in
    # programs alike
    a, b = rand((m, k)), rand((k, n))
    f = pb.jit(lambda a, b: a @ b)
    got = np.asarray(f(pb.Array(a), pb.Array(b)))
    want = np.asarray(pb.Array(a) @ pb.Array(b))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    bt = pb.Array(np.asfortranarray(b))  # a strided B: single-threaded BLAS, eager and jit
    np.testing.assert_array_equal(np.asarray(f(pb.Array(a), bt)), np.asarray(pb.Array(a) @ bt))


def test_sums_over_outer_axes_of_short_rows_leave_the_region():
    # an NHWC bias gradient (C = 32): inside the region its rows could not merge past the
    # accumulator's zero strides, 32 elements per loop call (21 ms against 1.2 ms); the
    # reduction runs as a step of its own, long row-statistics sums still fuse
    x = rand((8, 12, 12, 32))  # 1152 rows of 32
    m = rand((8, 12, 12, 32)) > 0

    def f(x, m):
        g = jnp.where(m, x, 0.0)
        return g, jnp.sum(g, axis=(0, 1, 2))
    g, s = check_vs_eager(f, x, m, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(s), np.where(m, x, 0).sum((0, 1, 2)), rtol=1e-5,
                               atol=1e-5)
    text = compiled(f, x, m).as_text()
    assert "fused: select_n\n" in text and "reduce reduce_sum" in text, text
    y = rand((1100, 300))
    text = compiled(lambda y: jnp.sum(jnp.exp(y), axis=0), y).as_text()
    assert "exp ; reduce_sum" in text, text  # 300-element rows: fused
    text = compiled(lambda y: jnp.sum(jnp.exp(y), axis=1), y).as_text()
    assert "exp ; reduce_sum" in text, text  # the rows reduced: fused whatever their length
    text = compiled(lambda y: jnp.sum(jnp.exp(y), axis=0), y[:1000, :32]).as_text()
    assert "exp ; reduce_sum" in text, text  # 1000 short rows: still fused
