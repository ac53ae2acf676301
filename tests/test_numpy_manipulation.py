"""append, insert, delete, resize, rollaxis, unstack, block, cross, matvec, vecmat,
einsum_path against NumPy, with grads, vmap and jit."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pullback as pb
import pullback.numpy as jnp
from pullback.test_util import check_grads

# the NumPy references warn (2-vector cross products, r_'s matrix directives)
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
RNG = np.random.default_rng(33)
A = np.arange(12.0).reshape(3, 4)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_append(axis):
    v = np.ones((3, 4)) if axis is not None else np.array([7.0, 8.0])
    np.testing.assert_array_equal(np.asarray(jnp.append(A, v, axis=axis)),
                                  np.append(A, v, axis=axis))


@pytest.mark.parametrize("obj, axis", [(1, 0), (-1, 1), ([0, 2], 1), (slice(0, 3, 2), 1),
                                       (np.array([True, False, True, False]), 1),
                                       ([-1, 0, 0], None), ([], 0)])
def test_delete_matches_numpy(obj, axis):
    np.testing.assert_array_equal(np.asarray(jnp.delete(A, obj, axis)),
                                  np.delete(A, obj, axis))


def test_delete_unique_indices_under_jit_and_errors():
    f = pb.jit(lambda i: jnp.delete(A, i, 1, assume_unique_indices=True))
    np.testing.assert_array_equal(np.asarray(f(np.array([3, 0]))), np.delete(A, [3, 0], 1))
    with pytest.raises(pb.ConcretizationTypeError, match="assume_unique_indices"):
        pb.jit(lambda i: jnp.delete(A, i, 1))(np.array([0]))
    with pytest.raises(IndexError, match="delete: index 4 is out of bounds"):
        jnp.delete(A, 4, 1)
    with pytest.raises(ValueError, match="delete: a boolean 'obj' must have shape"):
        jnp.delete(A, np.array([True]), 1)


@pytest.mark.parametrize("obj, values, axis", [
    (1, 9.0, None), ([1, 3], [7.0, 8.0], 1), ([4, 0, 4], [7.0, 8.0, 9.0], 1),
    (2, [1.0, 2.0, 3.0, 4.0], 0), (slice(1, 3), 5.0, 1), ([1], [[5.0], [6.0], [7.0]], 1),
    (1, [5.0, 6.0, 7.0], 1), (-1, 0.5, 0), (0, np.zeros((2, 4)), 0)])
def test_insert_matches_numpy(obj, values, axis):
    got = jnp.insert(A, obj, values, axis)
    ref = np.insert(A, obj, values, axis)
    assert got.shape == ref.shape
    np.testing.assert_array_equal(np.asarray(got), ref)


def test_insert_traced_indices_grad_and_errors():
    f = pb.jit(lambda i, v: jnp.insert(A, i, v, 1))
    np.testing.assert_array_equal(np.asarray(f(np.array([3, 1]), np.array([7.0, 8.0]))),
                                  np.insert(A, [3, 1], [7.0, 8.0], 1))
    check_grads(lambda a, v: jnp.insert(a, np.array([0, 2]), v, 1),
                (A, RNG.normal(size=(3, 2))), order=2)
    with pytest.raises(ValueError, match="insert: argument 'obj' must be integer"):
        jnp.insert(A, np.array([1.5]), 0.0)
    with pytest.raises(ValueError, match="insert: argument 'obj' must be a slice, a 1-D"):
        jnp.insert(A, np.zeros((1, 1), np.int32), 0.0)


@given(st.integers(0, 5), st.lists(st.integers(0, 4), min_size=0, max_size=3))
def test_resize_matches_numpy(n, shape):
    a = np.arange(float(n))
    np.testing.assert_array_equal(np.asarray(jnp.resize(a, tuple(shape))),
                                  np.resize(a, tuple(shape)))


def test_rollaxis_unstack():
    x = np.zeros((2, 3, 4, 5))
    for axis, start in [(3, 1), (0, 4), (2, 0), (-1, -2), (1, 3)]:
        assert jnp.rollaxis(x, axis, start).shape == np.rollaxis(x, axis, start).shape
    with pytest.raises(ValueError, match="rollaxis: argument 'start'"):
        jnp.rollaxis(x, 0, 6)
    parts = jnp.unstack(A, axis=1)
    assert len(parts) == 4
    np.testing.assert_array_equal(np.asarray(parts[2]), A[:, 2])
    with pytest.raises(ValueError, match="unstack: argument 'x' must be at least 1-D"):
        jnp.unstack(np.float32(1))


def test_block_matches_numpy():
    a, b = np.eye(2), np.zeros((2, 1))
    c, d = np.ones((1, 2)), np.full((1, 1), 5.0)
    for arrs in ([[a, b], [c, d]], [a, a], [[1.0, 2.0], [3.0, 4.0]], [[[a]]], np.float32(3)):
        got, ref = jnp.block(arrs), np.block(arrs)
        assert got.shape == ref.shape
        np.testing.assert_array_equal(np.asarray(got), ref)
    with pytest.raises(ValueError, match="list depths are mismatched"):
        jnp.block([[a], a])
    with pytest.raises(TypeError, match="is a tuple"):
        jnp.block((a, a))


@pytest.mark.parametrize("na, nb", [(3, 3), (2, 3), (3, 2), (2, 2)])
def test_cross_matches_numpy_and_differentiates(na, nb):
    a = RNG.normal(size=(4, na))
    b = RNG.normal(size=(4, nb))
    np.testing.assert_allclose(np.asarray(jnp.cross(a, b)), np.cross(a, b), rtol=1e-12)
    check_grads(jnp.cross, (a, b), order=2)
    at, bt = a.T.copy(), b.T.copy()
    np.testing.assert_allclose(np.asarray(jnp.cross(at, bt, axisa=0, axisb=0)),
                               np.cross(at, bt, axisa=0, axisb=0), rtol=1e-12)
    if na == nb == 3:
        np.testing.assert_allclose(np.asarray(jnp.cross(at, bt, axis=0)),
                                   np.cross(at, bt, axis=0), rtol=1e-12)
    with pytest.raises(ValueError, match="cross: incompatible dimensions"):
        jnp.cross(np.ones(4), np.ones(3))


def test_matvec_vecmat():
    m = RNG.normal(size=(2, 3, 4)) + 1j * RNG.normal(size=(2, 3, 4))
    v = RNG.normal(size=(4,)) + 1j * RNG.normal(size=(4,))
    np.testing.assert_allclose(np.asarray(jnp.matvec(m, v)), np.einsum("...ij,...j->...i", m, v))
    w = RNG.normal(size=(2, 3)) + 1j * RNG.normal(size=(2, 3))
    np.testing.assert_allclose(np.asarray(jnp.vecmat(w, m)),
                               np.einsum("...i,...ij->...j", np.conj(w), m))
    check_grads(jnp.matvec, (m.real, v.real), order=2)
    out = pb.vmap(jnp.matvec, in_axes=(None, 0))(m.real[0], RNG.normal(size=(5, 4)))
    assert out.shape == (5, 3)
    with pytest.raises(ValueError, match="matvec: argument 'x1' must be at least 2-D"):
        jnp.matvec(np.ones(3), np.ones(3))


def test_einsum_path_matches_numpy():
    ops = [np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5))]
    got = jnp.einsum_path("ij,jk,kl->il", *[jnp.asarray(o) for o in ops])
    ref = np.einsum_path("ij,jk,kl->il", *ops, optimize="greedy")
    assert got[0] == ref[0]


@pytest.mark.parametrize("shift", [-7, -1, 0, 3, 12])
def test_roll_by_a_traced_shift(shift):
    # as JAX's: a shift known only at run time rolls through a dynamic slice
    x = np.arange(10.0).reshape(2, 5)
    for axis in (1, None):
        got = pb.jit(lambda a, s: jnp.roll(a, s, axis))(x, np.int32(shift))
        np.testing.assert_array_equal(np.asarray(got), np.roll(x, shift, axis))
