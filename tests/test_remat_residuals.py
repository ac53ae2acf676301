"""Element-wise residuals recomputed where they are read late (transforms/passes/remat.py), and
the compiler changes that let the recomputation pay: a recomputed chain does not join the
forward region (fusion._stranded), a product read again after its epilogue keeps the epilogue
(steps.Dot.keep) and an epilogue's sums of values it writes anyway run as steps of their own
(fusion._sums_apart)."""
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback import nn
from pullback.transforms import passes
from pullback.transforms.passes import remat


def normal(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.fixture
def remat_small():
    """remat considered for small arrays too, so the tests' programs stay small"""
    old = remat.min_bytes
    remat.min_bytes = 0
    yield
    remat.min_bytes = old


@pytest.fixture
def remat_off():
    def off():
        remat.enabled = False
    yield off
    remat.enabled = True


def mlp_loss(p, x):
    h = nn.gelu(x @ p["w1"] + p["b1"], approximate=True)
    return jnp.mean((h @ p["w2"]) ** 2)


def mlp_args(n=256, d=64, f=256, dtype=np.float32):
    p = {"w1": normal((d, f), 1, dtype) * d ** -0.5, "b1": normal((f,), 2, dtype) * 0.1,
         "w2": normal((f, d), 3, dtype) * f ** -0.5}
    return p, normal((n, d), 4, dtype)


def ops_of(closed):
    return [e.primitive.name for e in closed.jaxpr.eqns]


def test_gelu_residuals_are_recomputed_from_the_product(remat_small):
    p, x = mlp_args()
    closed = pb.make_jaxpr(pb.grad(mlp_loss))(p, x)
    after = passes.optimize(closed)
    remat.enabled = False
    try:
        stored = passes.optimize(closed)
    finally:
        remat.enabled = True
    # the recomputed program has a second tanh (in the backward), the stored one has one
    assert ops_of(stored).count("tanh") == 1
    assert ops_of(after).count("tanh") == 2
    # and the backward's element-wise ops read no forward element-wise value, only the product
    # (the activation itself is still read, by the w2 gradient's product)
    eqns = after.jaxpr.eqns
    dots = [i for i, e in enumerate(eqns) if e.primitive.name == "dot_general"]
    first_bwd = dots[2]  # x@w1, h@w2, then the backward's products
    defined_fwd = {v: i for i, e in enumerate(eqns[:dots[1]]) for v in e.outvars}
    late_reads = {v for e in eqns[first_bwd:] if e.primitive.name != "dot_general"
                  for v in e.invars if v in defined_fwd}
    assert {eqns[defined_fwd[v]].primitive.name for v in late_reads} <= {
        "dot_general", "broadcast_in_dim"}, late_reads


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_recomputed_program_is_bit_identical(remat_small, remat_off, dtype):
    p, x = mlp_args(dtype=dtype)
    p, x = {k: jnp.asarray(v) for k, v in p.items()}, jnp.asarray(x)
    f = pb.jit(pb.value_and_grad(mlp_loss))
    text = f.lower(p, x).compile().as_text()
    got = f(p, x)
    remat_off()
    g = pb.jit(pb.value_and_grad(lambda p, x: mlp_loss(p, x)))
    want = g(p, x)
    assert text.count("tanh") == 2, text
    for a, b in zip(pb.tree_util.tree_leaves(got), pb.tree_util.tree_leaves(want)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    eager = pb.value_and_grad(mlp_loss)(p, x)
    for a, b in zip(pb.tree_util.tree_leaves(got), pb.tree_util.tree_leaves(eager)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5, atol=1e-6)


def test_forward_epilogue_writes_only_what_the_backward_cannot_recompute(remat_small):
    p, x = mlp_args()
    c = pb.jit(pb.grad(mlp_loss)).lower(p, x).compile()
    text = c.as_text()
    fwd = next(l for l in text.splitlines() if "epilogue: add" in l and "tanh" in l)
    i = text.splitlines().index(fwd)
    head = text.splitlines()[i - 1]
    # the product (read again by the backward) and the activation (the next product's
    # operand): 2 outputs, not the 5 the tanh gelu's derivative would store
    assert head.split("-> (")[1].count("arena@") == 2, head


def test_no_recompute_when_it_stores_no_fewer_bytes(remat_small):
    # one residual (cos y) from one large leaf (y): recomputing would store y instead
    def f(x, w):
        return jnp.sum(jnp.sin(x @ w) @ w.T)
    x, w = normal((16, 16), 1), normal((16, 16), 2)
    closed = pb.make_jaxpr(pb.grad(f))(x, w)
    remat.enabled = False
    try:
        stored = passes.optimize(closed)
    finally:
        remat.enabled = True
    assert ops_of(passes.optimize(closed)) == ops_of(stored)
    assert ops_of(stored).count("cos") == 1


def test_small_values_are_left_alone():
    p, x = mlp_args(n=64, d=32, f=128)
    closed = pb.make_jaxpr(pb.grad(mlp_loss))(p, x)
    assert ops_of(passes.optimize(closed)).count("tanh") == 1  # 32 KB residuals: in cache


def test_product_read_after_its_epilogue_is_written_whole():
    # the epilogue (bias add + exp) runs on the product's rows in cache; a later step reads the
    # product itself: the kernel must write it whole (Dot.keep), not only into its scratch strips
    a, b, c = normal((512, 256), 1), normal((256, 384), 2), normal((384,), 3)  # own kernel

    def f(a, b, c):
        y = a @ b
        z = jnp.exp(y * 0.01 + c)
        return z @ b.T, y @ b.T  # the second product reads the first one's product
    c_ = pb.jit(f).lower(a, b, c).compile()
    got = pb.jit(f)(a, b, c)
    want = f(a, b, c)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=1e-5)
    step = next(s for s in c_._compiled.steps if s.kind == "dot" and "epilogue" in s.info)
    assert step.info.get("keep_product") is True


def test_bias_gradient_sum_leaves_the_epilogue():
    # d(x @ w + b): the bias gradient sums the rows of a value the next products read anyway,
    # so the epilogue follows the kernel's rows and the sum is a step of its own
    p, x = mlp_args(n=1024, d=64, f=256)  # a 1 MB gradient: past a core's L2
    c = pb.jit(pb.grad(mlp_loss)).lower(p, x).compile()
    text = c.as_text()
    epilogues = [l for l in text.splitlines() if "epilogue:" in l]
    assert epilogues and not any("reduce_sum" in l for l in epilogues if "tanh" in l), text
    assert "reduce reduce_sum" in text, text
    got = c(p, x)
    want = pb.grad(mlp_loss)(p, x)
    for k in p:
        np.testing.assert_allclose(np.asarray(got[k]), np.asarray(want[k]), rtol=1e-4,
                                   atol=1e-6)
