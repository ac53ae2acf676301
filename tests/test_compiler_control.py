"""Control flow compiled to nested C schedules: scan, while and cond run inside the program (no
Python between iterations), with values equal to eager execution."""
import sys

import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback import lax
from pullback.backends.cpu import kernels
from pullback.backends.cpu.compiler.steps import Region, RegionOp, Scan

rng = np.random.default_rng(0)


def rand(*shape, dtype=np.float32):
    return rng.normal(size=shape).astype(dtype)


def compiled(f, *args):
    return pb.jit(f).lower(*args).compile()


def check(f, *args, rtol=1e-5, kinds=()):
    """jit(f) equals eager f, the schedule has no callback step and holds the given kinds."""
    c = compiled(f, *args)
    text = c.as_text()
    assert c._compiled.fallbacks == [], text
    for k in kinds:
        assert k in text, text
    want = f(*args)
    got = pb.jit(f)(*args)
    for g, w in zip(pb.tree_util.tree_leaves(got), pb.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=1e-6)
    return text


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_carry_xs_ys_consts(reverse):
    w = rand(3, 3) * 0.3

    def f(h, xs, w):
        def body(h, x):
            h = jnp.tanh(h @ w + x)
            return h, (h.sum(), x * 2)
        return lax.scan(body, h, xs, reverse=reverse)
    check(f, rand(2, 3), rand(7, 2, 3), w, kinds=["scan[length=7", "body:"])


def test_scan_swapped_reversed_and_passed_on_carries():
    # new carries that are views of old ones must not read a carry already overwritten
    def f(a, b, c, xs):
        def body(carry, x):
            a, b, c = carry
            return (b, a[::-1] + x, c), a  # swap, reversed view, passed on; y = old carry
        return lax.scan(body, (a, b, c), xs)
    check(f, rand(4), rand(4), rand(2, 2), rand(5, 4))


def test_scan_over_non_contiguous_xs_and_zero_length():
    xs = rand(6, 5).T  # (5, 6) transposed: xs[i] is a strided column
    f = lambda c, xs: lax.scan(lambda c, x: (c + x, c * x), c, xs)  # noqa: E731
    check(f, rand(6), pb.Array(xs))
    check(f, rand(6), rand(0, 6))


def test_nested_scans_read_slices_of_slices():
    def f(c, xss):
        def outer(c, xs):
            c2, ys = lax.scan(lambda d, x: (d * 0.5 + x, d.sum()), c, xs)
            return c2, ys
        return lax.scan(outer, c, xss)
    text = check(f, rand(3), rand(4, 5, 3))
    assert "i0*" in text and "i1*" in text  # the inner slice moves with both loops


def test_loops_deeper_than_the_executor_supports_run_as_a_callback():
    def nest(depth):
        if depth == 0:
            return lambda c, x: (c + x, None)
        inner = nest(depth - 1)
        return lambda c, xs: (lax.scan(inner, c, xs)[0], None)
    f = lambda c, xs: lax.scan(nest(5), c, xs)[0]  # noqa: E731  (6 nested scans)
    x = rand(2, 1, 1, 1, 1, 2, 3)
    c = compiled(f, rand(3), x)
    assert c._compiled.fallbacks == ["scan"]
    np.testing.assert_allclose(np.asarray(pb.jit(f)(rand(3) * 0, x)),
                               np.asarray(f(np.zeros(3, np.float32), x)), rtol=1e-6)


def test_fori_and_while_loops():
    def f(x, n):
        return lax.fori_loop(0, n, lambda i, c: c * 0.9 + i.astype(jnp.float32), x)
    check(f, rand(3), np.int32(7), kinds=["while"])
    check(f, rand(3), np.int32(0))  # no iteration: the initial carry
    g = lambda x: lax.while_loop(lambda c: c[0] < 100, lambda c: (c[0] * 2, c[1] + 1), (x, 0))  # noqa: E731
    check(g, np.float32(3.0), kinds=["while"])


@pytest.mark.parametrize("index", [-3, 0, 1, 2, 9])
def test_switch_picks_a_clamped_branch(index):
    branches = [lambda x, y: x + y, lambda x, y: x * y, lambda x, y: x]  # the last returns an operand
    f = lambda i, x, y: lax.switch(i, branches, x, y)  # noqa: E731
    check(f, np.int32(index), rand(4), rand(4), kinds=["cond[3 branches]"])


def test_cond_with_a_known_index_compiles_one_branch():
    f = lambda x: lax.cond(True, lambda x: x + 1, lambda x: x * 2, x)  # noqa: E731
    text = check(f, rand(3))
    assert "cond[" not in text


def test_checkpoint_and_custom_derivatives_are_inlined():
    @pb.custom_jvp
    def g(x):
        return jnp.sin(x)
    g.defjvp(lambda p, t: (g(p[0]), jnp.cos(p[0]) * t[0]))
    f = lambda x: pb.checkpoint(lambda x: g(x) * 2)(x)  # noqa: E731
    check(f, rand(5))
    check(pb.grad(lambda x: f(x).sum()), rand(5))


def test_rnn_gradient_runs_in_c_and_hoists_whole_sequence_products():
    wh, wx = rand(8, 8) * 0.3, rand(4, 8) * 0.3

    def loss(params, h0, xs):
        wh, wx = params

        def step(h, x):
            h = jnp.tanh(h @ wh + x @ wx)
            return h, None
        h, _ = lax.scan(step, h0, xs)
        return jnp.sum(h ** 2)
    vg = pb.value_and_grad(loss)
    args = ((wh, wx), rand(3, 8), rand(20, 3, 4))
    text = check(vg, *args, rtol=2e-4)
    # x @ wx batched over time before the loop; the weight gradients are one product each
    # after it (contracting time too), not running sums in the loop
    assert text.count("scan[") == 2
    jtext = pb.jit(vg).lower(*args).as_text()
    assert "dimension_numbers=(((0, 1), (0, 1))" in jtext


def test_a_long_scan_never_returns_to_python():
    f = pb.jit(lambda c, xs: lax.scan(lambda c, x: (jnp.tanh(c * 0.5 + x), None), c, xs)[0])
    c0, xs = pb.Array(rand(4)), pb.Array(rand(10_000, 4))
    f(c0, xs)
    calls = []

    def prof(frame, event, arg):
        if event == "call":
            calls.append(frame.f_code.co_name)
    sys.setprofile(prof)
    try:
        out = f(c0, xs)
    finally:
        sys.setprofile(None)
    assert calls == []  # the call path, the loop and its steps: all C
    want = np.asarray(c0)
    for x in np.asarray(xs):
        want = np.tanh(want * np.float32(0.5) + x)
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5)


def test_subnormals_are_flushed_under_jit_unless_configured_otherwise():
    tiny = pb.Array(np.array([1e-40, 1.0], np.float32))
    f = lambda x: x * 2.0  # noqa: E731
    np.testing.assert_array_equal(np.asarray(pb.jit(f)(tiny)), [0.0, 2.0])
    assert np.asarray(f(tiny))[0] == np.float32(1e-40) * 2  # eager keeps IEEE subnormals
    pb.config.update("jit_flush_denormals", False)
    try:
        assert np.asarray(pb.jit(lambda x: x * 2.0)(tiny))[0] == np.float32(1e-40) * 2
    finally:
        pb.config.update("jit_flush_denormals", True)


def test_malformed_loop_schedules_are_rejected():
    f32 = np.dtype(np.float32)
    spec = ((f32, (4,), None, 4),)
    out = ((f32, (4,), -1, None),)
    op = RegionOp(loop=kernels.SCHEDULE["copy"], a=4, b=0, params=(), operands=(0, 1),
                  items=(4, 4))

    def region(shape, refs):
        return Region(shape=shape, refs=refs, strides=((4,), (4,)), items=(4, 4), ops=(op,),
                      grain=1 << 20, inits=(), stream=())

    def scan(level, length, body):
        return (Scan(level=level, length=length, reverse=False, body=body),)

    copy = region((4,), ((1, 0, 0), (2, 0, 0, ((1, 4),))))
    with pytest.raises(ValueError, match="loop level 1"):  # level 1 outside a single loop
        kernels.Program("bad", 0, spec, out, (), scan(0, 3, (copy,)), False)
    ok = region((1,), ((1, 0, 0, ((0, 4),)), (2, 0, 0, ((0, 4),))))
    p = kernels.Program("ok", 0, spec, out, (), scan(0, 4, (ok,)), False)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(p.run(x)[0], x)
    with pytest.raises(ValueError, match="leaves"):  # 5 iterations step past the end
        kernels.Program("bad", 0, spec, out, (), scan(0, 5, (ok,)), False)
    with pytest.raises(ValueError, match="level"):  # a scan must sit at its nesting depth
        kernels.Program("bad", 0, spec, out, (), scan(1, 4, (ok,)), False)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.int8])
@pytest.mark.parametrize("start", [-5, 0, 2, 100])
def test_dynamic_slices_read_clamped_starts_at_run_time(dtype, start):
    if start < 0 and np.dtype(dtype).kind == "u":
        start = 0
    x = rand(6, 5)
    s = np.asarray(start, dtype)
    f = lambda x, i: lax.dynamic_slice(x, (i, 1), (3, 2))  # noqa: E731
    text = check(f, pb.Array(x), pb.Array(s), kinds=["dcopy"])
    assert "callback" not in text
    g = lambda x, i: lax.dynamic_update_slice(x, jnp.ones((2, 3), x.dtype), (1, i))  # noqa: E731
    check(g, pb.Array(x), pb.Array(s), kinds=["dcopy"])
    xt = pb.Array(x.T)  # a strided operand
    check(lambda x, i: lax.dynamic_slice(x, (i, i), (2, 2)), xt, pb.Array(s))


def test_fori_loop_updating_rows_runs_natively():
    def f(x):
        return lax.fori_loop(0, x.shape[0], lambda i, x: x.at[i].set(x[i] * 2.0 + i), x)
    text = check(f, rand(5, 3))
    assert "callback" not in text


def test_registered_kernels_inside_loops_run_as_kernel_steps():
    x = pb.Array(rand(4, 5))
    idx = pb.Array(np.array([2, 0, 1], np.int32))
    for f in (lambda x: jnp.sort(x, axis=1), lambda x: jnp.argmax(x, axis=1),
              lambda x: jnp.cumsum(x, axis=0), lambda x: x[idx], lambda x: x.at[idx].add(1.0),
              lambda x: lax.top_k(x, 2)[0]):
        text = check(f, x)
        assert ": kernel " in text and ": call " not in text and "callback" not in text, text


def test_carry_updated_element_wise_is_written_in_place_unless_read_in_another_order():
    f = lambda c: lax.scan(lambda c, _: (jnp.tanh(c) * 0.99, None), c, None, length=6)[0]  # noqa: E731
    text = check(f, rand(8))
    body = text.split("body:")[1].split("memory:")[0]
    assert "copy" not in body  # the region writes the new carry over the old, tile by tile
    # reading the carry reversed while writing it: every element needs the old values
    g = lambda c: lax.scan(lambda c, _: (c[::-1] * 0.5 + c, None), c, None, length=5)[0]  # noqa: E731
    text = check(g, rand(8))
    assert "copy" in text.split("body:")[1]


@pytest.mark.parametrize("loop", ["scan", "while"])
def test_a_strided_view_of_the_carry_is_read_anew_every_iteration(loop):
    """A product operand in a layout BLAS cannot take (rows flipped) gets a row-major copy; when
    it is a view of the carry, that copy belongs in the loop, not before it."""
    w = rand(32, 32) * 0.2
    if loop == "scan":
        f = lambda h, w: lax.scan(lambda h, _: (jnp.tanh(h[::-1] @ w), None), h, None,  # noqa: E731
                                  length=7)[0]
    else:
        f = lambda h, w: lax.fori_loop(0, jnp.int32(7), lambda i, h: jnp.tanh(h[::-1] @ w),  # noqa: E731
                                       h)
    h0 = rand(16, 32)  # big enough for the copy (a small operand is read in place)
    want = h0.astype(np.float64)
    for _ in range(7):
        want = np.tanh(want[::-1] @ w)
    np.testing.assert_allclose(np.asarray(pb.jit(f)(h0, w)), want, rtol=1e-5, atol=1e-5)
