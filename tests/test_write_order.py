"""Steps that write parts of one buffer keep their order through the compiler's moves.

A pad's fill and its interior, a concatenate's parts, a dynamic_update_slice's copy and its
update, write one buffer in turn; fusion, matmul epilogues and pipelined producers move steps
across others only when neither touches what the other writes (compiler/order.py). The
transformer block is the program in which this was first seen wrong: its gradients must match
eager execution and JAX."""
import sys
from pathlib import Path

import numpy as np
import pytest

import pullback as pb
import pullback.lax as lax
import pullback.numpy as jnp
from pullback.backends.cpu.compiler import memory, order
from pullback.backends.cpu.compiler.values import Step, View

sys.path.insert(0, str(Path(__file__).resolve().parent))
from models import block_data, block_loss  # noqa: E402

A = np.array([[1., 2.], [3., 4.]], np.float32)
X = np.ones(2, np.float32)


@pytest.mark.parametrize("fn, want", [
    (lambda x: jnp.pad(x @ A, 1), [0, 4, 6, 0]),
    (lambda x: lax.pad(x @ A, np.float32(0), [(0, 0, 1)]), [4, 0, 6]),
    (lambda x: lax.pad(x @ A, np.float32(-1), [(-1, 2, 0)]), [6, -1, -1]),
    (lambda x: lax.dynamic_update_slice(jnp.zeros(3), x @ A, (1,)), [0, 4, 6]),
    (lambda x: jnp.concatenate([x @ A, jnp.zeros(1), x @ A.T]), [4, 6, 0, 3, 7]),
    (lambda x: jnp.zeros(5).at[1:3].set(x @ A), [0, 4, 6, 0, 0]),
    (lambda x: jnp.pad(jnp.exp(x @ A) * 0 + x @ A, (2, 1), constant_values=7.), [7, 7, 4, 6, 7]),
])
@pytest.mark.x32
def test_part_written_after_a_product_keeps_its_place(fn, want):
    np.testing.assert_array_equal(fn(X), want)
    np.testing.assert_array_equal(pb.jit(fn)(X), want)


def test_transposed_product_into_a_pad_interior_under_grad():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 4)).astype(np.float32)
    y = rng.standard_normal((1, 4, 4)).astype(np.float32)
    f = lambda y: jnp.sum((a @ y[:, :, 2:]) ** 2)
    want = np.zeros_like(y)
    want[:, :, 2:] = 2 * a.T @ (a @ y[:, :, 2:])
    np.testing.assert_allclose(pb.grad(f)(y), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(pb.jit(pb.grad(f))(y), want, rtol=1e-5, atol=1e-5)
    text = pb.jit(pb.grad(f)).lower(y).compile().as_text()
    # the fill of the pad's zeros (a copy of a 0-d constant over the whole output) comes first
    lines = [ln for ln in text.splitlines() if "output0" in ln and "->" in ln]
    assert "strides=(0, 0, 0)" in lines[0], text


def _step(ins, outs, label="s"):
    return Step("ewise", ins, outs, {"shape": (4,)}, label)


def test_order_rule_independence():
    a, b, c = (View.fresh((4,), np.float32) for _ in range(3))
    part = View(c.buf, 4, (2,), (4,), np.float32)  # another view of c's memory
    fill = _step([a], [c])
    interior = _step([b], [part])
    reader = _step([c], [View.fresh((4,), np.float32)])
    other = _step([a], [View.fresh((4,), np.float32)])
    assert not order.independent(fill, interior)   # both write c
    assert not order.independent(interior, reader)  # one writes what the other reads
    assert not order.independent(reader, interior)
    assert order.independent(other, interior)       # both read a: free to swap
    assert order.may_move(other, [fill, interior, reader])
    assert not order.may_move(interior, [reader])


def test_liveness_counts_writes():
    # a buffer written again after its last read stays allocated until that write
    a, c = View.fresh((4,), np.float32), View.fresh((4,), np.float32)
    part = View(c.buf, 0, (2,), (4,), np.float32)
    steps = [_step([a], [c]), _step([c], [View.fresh((4,), np.float32)]), _step([a], [part])]
    assert memory.liveness(steps)[c.buf.id] == 2


# ---- the transformer block: jit(value_and_grad) equals eager and JAX ----

# jax.jit(jax.value_and_grad(loss)) on the same data (JAX 0.10.2, CPU): the loss, and each
# gradient's sum and Euclidean norm
JAX_LOSS = 1.919097900390625
JAX_GRADS = {
    "b_1": (0.9450150728225708, 0.15015530586242676),
    "b_2": (0.11647099256515503, 0.19491617381572723),
    "b_o": (0.11647103726863861, 0.21501564979553223),
    "b_qkv": (0.10896028578281403, 0.2481263279914856),
    "ln1_b": (-0.7004563808441162, 0.2909618020057678),
    "ln1_g": (0.934071958065033, 0.20907604694366455),
    "ln2_b": (-0.07904469221830368, 0.15051603317260742),
    "ln2_g": (1.1511443853378296, 0.23605453968048096),
    "w_1": (0.21824879944324493, 0.5011278986930847),
    "w_2": (4.710927963256836, 1.045024037361145),
    "w_o": (0.41686415672302246, 0.5189287066459656),
    "w_qkv": (0.06711723655462265, 0.5817165970802307),
}


def test_transformer_block_gradients_jit_equal_eager_and_jax():
    p, x = block_data()
    loss_e, g_e = pb.value_and_grad(block_loss)(p, x)
    loss_j, g_j = pb.jit(pb.value_and_grad(block_loss))(p, x)
    np.testing.assert_allclose(loss_j, loss_e, rtol=1e-6)
    np.testing.assert_allclose(loss_j, JAX_LOSS, rtol=1e-6)
    for k, (total, norm) in JAX_GRADS.items():
        np.testing.assert_allclose(g_j[k], g_e[k], rtol=1e-5, atol=1e-6, err_msg=k)
        g = np.asarray(g_j[k], np.float64)
        np.testing.assert_allclose(np.sqrt((g ** 2).sum()), norm, rtol=1e-5, err_msg=k)
        np.testing.assert_allclose(g.sum(), total, rtol=1e-4, atol=2e-6, err_msg=k)


# ---- found by the whole-program generator (tests/test_programs.py): a pad or
# dynamic_update_slice whose copy is not a product's result, with a product elsewhere ----

def test_pad_of_a_function_of_a_products_operand():
    x = np.arange(4, dtype=np.float32).reshape(2, 2)

    def f(x):
        v1 = jnp.sin(x)
        v2 = v1 @ v1
        return jnp.pad(jnp.sin(v1), ((0, 0), (0, 0))), jnp.sin(v2)
    for got, want in zip(pb.jit(f)(x), f(x)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_pad_beside_an_unrelated_integer_product():
    a = np.array([[0.5, -1.5]] * 3, np.float32)
    b = np.array([1, -2, 3, 0], np.int32)

    def h(a, b):
        e = lax.dot_general(jnp.argmax(b), b[::3], (((), ()), ((), ())))
        return jnp.broadcast_to(e, (3, 2)), lax.pad(a, np.float32(-2), ((0, 0, 0), (0, 1, 2)))
    got = pb.jit(h)(a, b)[1]
    np.testing.assert_array_equal(got, [[0.5, -2, -2, -1.5, -2]] * 3)


def test_dynamic_update_slice_beside_an_outer_product():
    rng = np.random.default_rng(40230)
    x0 = jnp.asarray(rng.uniform(-2, 2, (5, 3, 4)).astype(np.float32))[..., ::-1]
    x1 = jnp.asarray(rng.uniform(-2, 2, (1,)).astype(np.float32))
    x2 = jnp.asarray(np.int32(rng.integers(-3, 4)))

    def g(x0, x1, x2):
        v1 = x1.at[x2 % 1].get()
        v2 = pb.nn.logsumexp(x1, axis=0)
        v9 = lax.dot_general(v2, x0, (((), ()), ((), ())))
        return (lax.dynamic_update_slice(pb.nn.sigmoid(lax.rev(x0, (1,))), x0 + v1, (1, -1, 0)),
                jnp.flip(v9, -2))
    for got, want in zip(pb.jit(g)(x0, x1, x2), g(x0, x1, x2)):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
