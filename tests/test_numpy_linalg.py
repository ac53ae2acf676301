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
