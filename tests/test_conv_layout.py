"""The compiler's choice of convolution layouts (transforms/passes/conv_layout.py): a
channels-first float32 program runs with channels-last activations, the layout-agnostic
readers follow the physical arrays, every other reader sees the program's own layout, and the
values are those of the program as written (sums may reassociate: close, not bitwise)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pullback as pb
import pullback.numpy as jnp
from pullback import lax
from pullback.tracer.staging import eval_jaxpr
from pullback.transforms.passes import optimize
from pullback.transforms.passes import conv_layout
from pullback.transforms.passes.conv_layout import choose_conv_layouts

NCHW = ("NCHW", "OIHW", "NCHW")


def _eqns(closed, name):
    return [e for e in closed.jaxpr.eqns if e.primitive.name == name]


def _evaluate(closed, *args):
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def _assert_close(got, want, rtol=2e-5):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype
        scale = max(1.0, float(np.max(np.abs(w)))) if w.size else 1.0
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * scale)


def _cnn(rng, batch=4, size=12):
    p = {"w1": rng.standard_normal((8, 1, 3, 3)).astype(np.float32) / 3,
         "b1": rng.standard_normal(8).astype(np.float32) * .1,
         "w2": rng.standard_normal((16, 8, 3, 3)).astype(np.float32) / 8,
         "b2": rng.standard_normal(16).astype(np.float32) * .1,
         "w3": rng.standard_normal((16 * (size // 4) ** 2, 10)).astype(np.float32) / 8}
    x = rng.standard_normal((batch, 1, size, size)).astype(np.float32)

    def pool(h):
        return lax.reduce_window(h, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    def loss(p, x):
        h = lax.conv_general_dilated(x, p["w1"], (1, 1), "SAME", dimension_numbers=NCHW)
        h = pool(pb.nn.relu(h + p["b1"][:, None, None]))
        h = lax.conv_general_dilated(h, p["w2"], (1, 1), "SAME", dimension_numbers=NCHW)
        h = pool(pb.nn.relu(h + p["b2"][:, None, None]))
        return jnp.mean(pb.nn.log_softmax(h.reshape(h.shape[0], -1) @ p["w3"]))

    def step(p, x):
        value, g = pb.value_and_grad(loss)(p, x)
        return value, {k: p[k] - 0.1 * g[k] for k in p}
    return step, p, x


def test_a_channels_first_cnn_step_runs_channels_last():
    step, p, x = _cnn(np.random.default_rng(0))
    closed = pb.make_jaxpr(step)(p, x)
    out = choose_conv_layouts(closed)
    assert out is not closed
    convs = _eqns(out, "conv_general_dilated")
    assert len(convs) == 5  # two forward, two kernel gradients, one input gradient (not x's)
    for e in convs:
        os_ = e.params["dimension_numbers"][2]
        activation = e.outvars[0].aval.ndim == 4 and e.outvars[0].aval.shape[0] == x.shape[0]
        # activations (forward outputs, input gradients) store features innermost; kernel
        # gradients keep the layout the program gives them
        assert (os_[1] == 3) == activation, (os_, e.outvars[0].aval)
    # the only transposes: the pooled activation before the dense layer's reshape, and its
    # cotangent coming back (the 2-D one is the program's own); biases are broadcast straight
    # to the physical shape
    transposes = [e for e in _eqns(out, "transpose") if e.outvars[0].aval.ndim == 4]
    assert len(transposes) == 2, [str(e.outvars[0].aval) for e in transposes]
    for e in _eqns(out, "broadcast_in_dim"):
        if e.outvars[0].aval.ndim == 4 and e.invars[0].aval.ndim == 1:
            assert e.params["broadcast_dimensions"] == (3,)
    args = (p, x)
    leaves = pb.tree_util.tree_leaves(args)
    _assert_close(_evaluate(out, *leaves), _evaluate(closed, *leaves))


def test_jit_with_and_without_the_choice_agree_with_eager():
    step, p, x = _cnn(np.random.default_rng(1), batch=3, size=8)
    saved = conv_layout.enabled
    try:
        conv_layout.enabled = False
        off = pb.jit(step)(p, x)
        conv_layout.enabled = True
        on = pb.jit(step)(p, x)
    finally:
        conv_layout.enabled = saved
    eager = step(p, x)
    flat = pb.tree_util.tree_leaves
    _assert_close(flat(on), flat(off))
    _assert_close(flat(on), flat(eager))


def test_programs_without_a_channels_first_float32_activation_are_unchanged():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 4, 6, 6))
    cases = {
        "float64": (lambda a, w: lax.conv_general_dilated(a, w, (1, 1), "SAME",
                                                          dimension_numbers=NCHW),
                    x, rng.standard_normal((4, 4, 3, 3))),
        "channels last already": (
            lambda a, w: lax.conv_general_dilated(a, w, (1, 1), "SAME",
                                                  dimension_numbers=("NHWC", "HWIO", "NHWC")),
            x.transpose(0, 2, 3, 1).astype(np.float32),
            rng.standard_normal((3, 3, 4, 4)).astype(np.float32)),
        "feature groups": (
            lambda a, w: lax.conv_general_dilated(a, w, (1, 1), "SAME", dimension_numbers=NCHW,
                                                  feature_group_count=2),
            x.astype(np.float32), rng.standard_normal((4, 2, 3, 3)).astype(np.float32)),
        # a kernel gradient's shape: the output has no more pixels than the kernel has taps
        "kernel-sized output": (
            lambda a, w: lax.conv_general_dilated(a, w, (1, 1), "VALID",
                                                  dimension_numbers=NCHW),
            x.astype(np.float32), rng.standard_normal((4, 4, 5, 5)).astype(np.float32)),
        "3-D": (lambda a, w: lax.conv_general_dilated(a, w, (1, 1, 1), "SAME"),
                rng.standard_normal((1, 2, 4, 4, 4)).astype(np.float32),
                rng.standard_normal((2, 2, 3, 3, 3)).astype(np.float32)),
    }
    for name, (f, a, w) in cases.items():
        closed = pb.make_jaxpr(f)(a, w)
        assert choose_conv_layouts(closed) is closed, name


def test_a_convolution_whose_layout_nothing_gains_from_keeps_it():
    # a lone convolution, and one followed by element-wise ops into the program's outputs:
    # stored channels-last they would need a transpose back that costs what they save
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    conv = lambda x, w: lax.conv_general_dilated(  # noqa: E731
        x, w, (1, 1), "SAME", dimension_numbers=NCHW)
    for f in (conv, lambda x, w: pb.nn.relu(conv(x, w) + b[:, None, None])):
        closed = pb.make_jaxpr(f)(x, w)
        assert choose_conv_layouts(closed) is closed
    # in a gradient, the forward output's layout reaches the two gradient convolutions (it
    # stays channels-last, and nothing is transposed), while the input gradient, an output of
    # the program, keeps the program's layout
    g = pb.grad(lambda x, w: jnp.sum(jnp.tanh(conv(x, w))), argnums=(0, 1))
    closed = pb.make_jaxpr(g)(x, w)
    out = choose_conv_layouts(closed)
    outs = [e.params["dimension_numbers"].out_spec for e in _eqns(out, "conv_general_dilated")]
    was = [e.params["dimension_numbers"].out_spec for e in _eqns(closed, "conv_general_dilated")]
    assert outs[0] == (0, 3, 1, 2) and outs[1:] == was[1:], (outs, was)
    assert not _eqns(out, "transpose")
    _assert_close(_evaluate(out, x, w), _evaluate(closed, x, w))
    # a second convolution reading the first makes both worth it
    two = lambda x, w: conv(pb.nn.relu(conv(x, w))[:, :3], w)  # noqa: E731
    closed = pb.make_jaxpr(two)(x, w)
    assert choose_conv_layouts(closed) is closed  # a slice reads it: the layout stops there
    two = lambda x, w: conv(pb.nn.relu(conv(x, w)), jnp.ones((4, 4, 3, 3), np.float32))  # noqa: E731
    closed = pb.make_jaxpr(two)(x, w)
    out = choose_conv_layouts(closed)
    specs = [e.params["dimension_numbers"] for e in _eqns(out, "conv_general_dilated")]
    assert specs[0].out_spec[1] == 3 and specs[1].lhs_spec[1] == 3
    _assert_close(_evaluate(out, x, w), _evaluate(closed, x, w))


# ---- random chains of readers ----

_READERS = ("bias", "relu", "max_pool", "avg_pool", "sum", "transpose", "conv", "reshape",
            "scale_by_input", "output")


@st.composite
def chains(draw):
    spec = draw(st.sampled_from([NCHW, ("NCHW", "HWIO", "NCHW"), ("CNHW", "OIHW", "CNHW"),
                                 ("NCW", "OIW", "NCW")]))
    readers = draw(st.lists(st.sampled_from(_READERS), min_size=1, max_size=5))
    stride = draw(st.sampled_from([1, 2]))
    return spec, readers, stride


def _chain_program(spec, readers, stride, rng):
    lhs_spec, rhs_spec, out_spec = spec
    nsp = len(lhs_spec) - 2
    sizes = {"N": 2, "C": 3, "H": 7, "W": 6}
    x = rng.standard_normal(tuple(sizes[c] for c in lhs_spec)).astype(np.float32)
    kdims = {"O": 4, "I": 3, "H": 3, "W": 2}
    w = rng.standard_normal(tuple(kdims[c] for c in rhs_spec)).astype(np.float32)
    w2 = rng.standard_normal(tuple({"O": 5, "I": 4, "H": 2, "W": 2}[c] for c in rhs_spec)
                             ).astype(np.float32)
    feat = out_spec.index("C")
    window = tuple(2 if c in "HW" else 1 for c in out_spec)

    def f(x, w, w2):
        h = lax.conv_general_dilated(x, w, (stride,) * nsp, "SAME", dimension_numbers=spec)
        outs = []
        for r in readers:
            if r == "bias":
                shape = [1] * h.ndim
                shape[feat] = h.shape[feat]
                h = h + jnp.arange(h.shape[feat], dtype=h.dtype).reshape(shape) * .1
            elif r == "relu":
                h = pb.nn.relu(h)
            elif r == "max_pool" and min(h.shape) >= 2:
                h = lax.reduce_window(h, -jnp.inf, lax.max, window, window, "SAME")
            elif r == "avg_pool" and min(h.shape) >= 2:
                h = lax.reduce_window(h, 0.0, lax.add, window, (1,) * h.ndim, "VALID") / 4
            elif r == "sum":
                outs.append(jnp.sum(h, axis=tuple(i for i, c in enumerate(out_spec)
                                                  if c != "C")))
                outs.append(jnp.sum(h, axis=out_spec.index("N")))
            elif r == "transpose":
                outs.append(jnp.transpose(h, tuple(reversed(range(h.ndim)))) * 2)
            elif r == "conv" and h.shape[feat] == 4:
                h = lax.conv_general_dilated(h, w2, (1,) * nsp, "SAME", dimension_numbers=spec)
            elif r == "reshape":
                outs.append(jnp.tanh(h.reshape(-1)))
            elif r == "scale_by_input" and h.shape == x.shape:
                h = h * x
            elif r == "output":
                outs.append(h)
        outs.append(h)
        return sum(jnp.sum(o * o) for o in outs), outs
    return f, (x, w, w2)


@settings(max_examples=25, deadline=None)
@given(chains(), st.integers(0, 2 ** 31 - 1))
def test_random_chains_of_readers_compute_what_the_program_says(chain, seed):
    spec, readers, stride = chain
    f, args = _chain_program(spec, readers, stride, np.random.default_rng(seed))
    for fun in (f, pb.grad(lambda *a: f(*a)[0], argnums=(0, 1, 2))):
        closed = optimize(pb.make_jaxpr(fun)(*args))
        saved = conv_layout.enabled
        try:
            conv_layout.enabled = False
            plain = optimize(pb.make_jaxpr(fun)(*args))
        finally:
            conv_layout.enabled = saved
        got = _evaluate(closed, *args)
        assert [np.shape(g) for g in got] == [v.aval.shape for v in plain.jaxpr.outvars]
        _assert_close(got, _evaluate(plain, *args))
        # no transpose is made twice of the same value to the same layout
        seen = [(id(e.invars[0]), e.params["permutation"]) for e in _eqns(closed, "transpose")]
        assert len(seen) == len(set(seen))


def test_a_value_read_in_both_layouts_is_transposed_once():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)

    def f(x, w):
        h = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=NCHW)
        r = pb.nn.relu(h)
        pooled = lax.reduce_window(r, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
        return (r.reshape(2, -1) @ jnp.ones((144, 2), np.float32), jnp.sum(jnp.exp(r)), r,
                jnp.sum(pooled, axis=(0, 2, 3)))

    closed = pb.make_jaxpr(f)(x, w)
    out = choose_conv_layouts(closed)
    assert len(_eqns(out, "transpose")) == 1
    assert _eqns(out, "exp")[0].outvars[0].aval.shape == (2, 6, 6, 4)
    _assert_close(_evaluate(out, x, w), _evaluate(closed, x, w))


@pytest.mark.parametrize("stride", [1, 2])
def test_conv_transpose_and_strided_gradients_keep_their_values(stride):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 4, 9, 9)).astype(np.float32)
    w = rng.standard_normal((3, 3, 4, 4)).astype(np.float32)

    def f(x, w):
        y = lax.conv_transpose(x, w, (stride, stride), "SAME",
                               dimension_numbers=("NCHW", "HWIO", "NCHW"))
        y = lax.reduce_window(jnp.sin(y), 0.0, lax.add, (1, 1, 2, 2), (1, 1, 1, 1), "VALID")
        return jnp.sum(y * y)

    g = pb.grad(f, argnums=(0, 1))
    closed = pb.make_jaxpr(g)(x, w)
    out = choose_conv_layouts(closed)
    assert out is not closed
    _assert_close(_evaluate(out, x, w), _evaluate(closed, x, w))
