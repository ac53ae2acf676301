"""Products against NumPy: matmul, dot, vdot, inner, outer, tensordot, einsum, kron, trace."""
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp

RNG = np.random.default_rng(3)


def r(*shape, dtype=np.float64):
    return RNG.normal(size=shape).astype(dtype)


@pytest.mark.parametrize("sa, sb", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                                    ((5, 2, 3), (3, 4)), ((1, 2, 3), (4, 3, 2)), ((2, 1, 2, 3), (3, 3, 2))])
def test_matmul_broadcasting(sa, sb):
    a, b = r(*sa), r(*sb)
    np.testing.assert_allclose(np.asarray(jnp.matmul(a, b)), np.matmul(a, b), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(pb.jit(jnp.matmul)(a, b)), np.matmul(a, b), rtol=1e-12)


MATMUL_LAYOUTS = [  # (a, b) -> JAX's dot_general dimension numbers and output transpose
    ((5, 2, 3), (3, 4), (((2,), (0,)), ((), ())), None),
    ((3,), (5, 3, 4), (((0,), (1,)), ((), ())), None),
    ((5, 2, 3), (5, 3, 4), (((2,), (1,)), ((0,), (0,))), None),
    ((6, 1, 2, 3), (5, 3, 4), (((2,), (1,)), ((), ())), (0, 2, 1, 3)),
    ((1, 2, 3), (1, 3, 4), (((1,), (0,)), ((), ())), None),
]


@pytest.mark.parametrize("sa, sb, dims, perm", MATMUL_LAYOUTS)
def test_matmul_batch_dims_follow_jax(sa, sb, dims, perm):
    """A batch dim only one operand has is a free dim of the dot_general, not a broadcast
    batch dim: `x @ w` with x (B, T, D) and w (D, F) is one product, and w's gradient one
    product over B*T instead of B products of w's size summed afterwards."""
    a, b = r(*sa), r(*sb)
    eqns = pb.make_jaxpr(jnp.matmul)(a, b).jaxpr.eqns
    dot = [e for e in eqns if e.primitive.name == "dot_general"]
    assert len(dot) == 1 and dot[0].params["dimension_numbers"] == dims
    assert [e.params["permutation"] for e in eqns if e.primitive.name == "transpose"] == \
        ([perm] if perm else [])
    assert not [e for e in eqns[:eqns.index(dot[0])] if e.primitive.name == "broadcast_in_dim"]
    np.testing.assert_allclose(np.asarray(jnp.matmul(a, b)), np.matmul(a, b), rtol=1e-12)
    ga, gb = pb.grad(lambda a, b: jnp.sum(jnp.sin(a @ b)), argnums=(0, 1))(a, b)
    a2, b2 = (a[None] if a.ndim == 1 else a), (b[:, None] if b.ndim == 1 else b)
    g = np.cos(np.matmul(a2, b2))  # NumPy reference: broadcast product, sums back per operand
    wa, wb = np.matmul(g, np.swapaxes(b2, -1, -2)), np.matmul(np.swapaxes(a2, -1, -2), g)
    np.testing.assert_allclose(np.asarray(ga), _unbroadcast(wa, a2.shape).reshape(sa), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(gb), _unbroadcast(wb, b2.shape).reshape(sb), rtol=1e-10)


def _unbroadcast(x, shape):
    x = x.sum(tuple(range(x.ndim - len(shape))))
    return x.sum(tuple(i for i, n in enumerate(shape) if n == 1 and x.shape[i] != 1), keepdims=True)


def test_matmul_weight_gradient_compiles_to_one_product():
    """The compiled gradient of a batched `x @ w` w.r.t. w has no reduction over the batch."""
    x, w = r(4, 8, 16, dtype=np.float32), r(16, 32, dtype=np.float32)
    f = pb.jit(pb.grad(lambda w, x: jnp.sum(jnp.sin(x @ w))))
    text = f.lower(w, x).compile().as_text()
    assert "reduce_sum" not in text
    g = np.cos(np.matmul(x.astype(np.float64), w))
    np.testing.assert_allclose(np.asarray(f(w, x)), np.einsum("btd,btf->df", x, g), rtol=1e-4,
                               atol=1e-4)


@pytest.mark.parametrize("sa, sb", [((), (3,)), ((3,), (3,)), ((2, 3), (3, 4)), ((2, 3, 4), (5, 4, 2))])
def test_dot(sa, sb):
    a, b = r(*sa), r(*sb)
    np.testing.assert_allclose(np.asarray(jnp.dot(a, b)), np.dot(a, b), rtol=1e-12)


def test_vdot_inner_outer_kron_trace_tensordot():
    a, b = r(2, 3), r(2, 3)
    np.testing.assert_allclose(np.asarray(jnp.vdot(a, b)), np.vdot(a, b), rtol=1e-12)
    z = r(3) + 1j * r(3)
    np.testing.assert_allclose(np.asarray(jnp.vdot(z, z)), np.vdot(z, z), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jnp.inner(a, b)), np.inner(a, b), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jnp.outer(a, b)), np.outer(a, b), rtol=1e-12)
    m = r(4, 4, 3)
    for off in (-1, 0, 2):
        np.testing.assert_allclose(np.asarray(jnp.trace(m, off)), np.trace(m, off), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(jnp.diagonal(m, off, 0, 2)),
                                   np.diagonal(m, off, 0, 2), rtol=1e-12)
    x, y = r(3, 4, 5), r(4, 3, 2)
    for axes in (([1, 0], [0, 1]), 0, ([0], [1])):
        np.testing.assert_allclose(np.asarray(jnp.tensordot(x, y, axes)), np.tensordot(x, y, axes),
                                   rtol=1e-12)


def test_kron_values():
    a, b = r(2, 3), r(3, 2)
    np.testing.assert_allclose(np.asarray(jnp.kron(a, b)), np.kron(a, b), rtol=1e-12)


EINSUMS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]),
    ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]), ("i,i->", [(3,), (3,)]), ("i,j->ij", [(2,), (3,)]),
    ("...ij,...jk->...ik", [(2, 2, 3), (2, 3, 4)]), ("ijk,ikl->jl", [(2, 3, 4), (2, 4, 5)]),
    ("abc,cd,bd->a", [(2, 3, 4), (4, 5), (3, 5)]), ("iij->ij", [(2, 2, 3)]),
    ("ij,ij->i", [(3, 4), (3, 4)]), ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
]


@pytest.mark.parametrize("subscripts, shapes", EINSUMS, ids=[e[0] for e in EINSUMS])
def test_einsum(subscripts, shapes):
    ops = [r(*s) for s in shapes]
    np.testing.assert_allclose(np.asarray(jnp.einsum(subscripts, *ops)),
                               np.einsum(subscripts, *ops), rtol=1e-11, atol=1e-12)
    got = pb.jit(lambda *xs: jnp.einsum(subscripts, *xs))(*ops)
    np.testing.assert_allclose(np.asarray(got), np.einsum(subscripts, *ops), rtol=1e-11, atol=1e-12)


def test_matmul_errors():
    with pytest.raises(ValueError, match="matmul"):
        jnp.matmul(jnp.ones((2, 3)), jnp.ones((2, 3)))
    with pytest.raises(ValueError, match="matmul"):
        jnp.matmul(jnp.ones(()), jnp.ones(3))
