"""mgrid, ogrid, r_, c_, s_, index_exp, ix_, triangle/diagonal/mask indices,
ravel_multi_index and unravel_index against NumPy."""
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp

# the NumPy references warn (2-vector cross products, r_'s matrix directives)
pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")

@pytest.mark.parametrize("key", [np.s_[0:4], np.s_[1:7:2], np.s_[0:1:5j], np.s_[:2, :3],
                                 np.s_[-1:1:3j, 0:2], np.s_[0:0]])
def test_mgrid_ogrid(key):
    np.testing.assert_allclose(np.asarray(jnp.mgrid[key]), np.mgrid[key])
    got, ref = jnp.ogrid[key], np.ogrid[key]
    if isinstance(ref, (list, tuple)):
        assert len(got) == len(ref)
        for g, r in zip(got, ref):
            np.testing.assert_allclose(np.asarray(g), r)
    else:
        np.testing.assert_allclose(np.asarray(got), ref)


@pytest.mark.parametrize("build", [
    lambda m: m.r_[-1:3, 0, 0, np.array([1, 2])],
    lambda m: m.r_[-1:1:5j, np.array([7.0])],
    lambda m: m.r_["0,2", [1, 2, 3], [4, 5, 6]],
    lambda m: m.r_["0,2,0", [1, 2, 3], [4, 5, 6]],
    lambda m: m.r_["1,2,0", [1, 2, 3], [4, 5, 6]],
    lambda m: m.r_["r", [1, 2, 3], [4, 5, 6]],
    lambda m: m.r_["c", [1, 2, 3], [4, 5, 6]],
    lambda m: m.c_[np.array([1, 2, 3]), np.array([4, 5, 6])],
    lambda m: m.c_[np.array([[1, 2, 3]]), 0, 0, np.array([[4, 5, 6]])],
])
def test_r_c_match_numpy(build):
    got, ref = build(jnp), build(np)
    assert got.shape == ref.shape
    np.testing.assert_allclose(np.asarray(got), np.asarray(ref))


def test_r_errors_name_the_directive():
    with pytest.raises(ValueError, match="could not understand directive"):
        jnp.r_["a,b", [1], [2]]
    with pytest.raises(ValueError, match="string directive must be placed at the beginning"):
        jnp.r_[[1], "0", [2]]


def test_s_index_exp_ix():
    assert jnp.s_[1:2, ::3] == np.s_[1:2, ::3]
    assert jnp.index_exp[2] == np.index_exp[2] == (2,)
    a = np.arange(20).reshape(4, 5)
    rows, cols = np.array([0, 3]), np.array([1, 2, 4])
    got = jnp.asarray(a)[jnp.ix_(rows, cols)]
    np.testing.assert_array_equal(np.asarray(got), a[np.ix_(rows, cols)])
    with pytest.raises(ValueError, match="ix_: arguments must be 1-D"):
        jnp.ix_(np.ones((2, 2), np.int32))


@pytest.mark.parametrize("n, k, m", [(4, 0, None), (4, -1, None), (3, 1, 5), (0, 0, None),
                                     (5, 2, 2)])
def test_triangle_indices(n, k, m):
    for jf, nf in [(jnp.tril_indices, np.tril_indices), (jnp.triu_indices, np.triu_indices)]:
        for g, r in zip(jf(n, k, m), nf(n, k, m)):
            assert g.dtype == np.int64  # the default int (x64), as JAX
            np.testing.assert_array_equal(np.asarray(g), r)
    a = np.zeros((n, n if m is None else m))
    for jf, nf in [(jnp.tril_indices_from, np.tril_indices_from),
                   (jnp.triu_indices_from, np.triu_indices_from)]:
        for g, r in zip(jf(a, k), nf(a, k)):
            np.testing.assert_array_equal(np.asarray(g), r)
    with pytest.raises(TypeError, match="tril_indices: argument 'n' must be a static integer"):
        jnp.tril_indices(2.5)
    with pytest.raises(ValueError, match="argument 'arr' must be 2-D"):
        jnp.triu_indices_from(np.zeros(3))


def test_diag_and_mask_indices():
    for g, r in zip(jnp.diag_indices(3, 4), np.diag_indices(3, 4)):
        np.testing.assert_array_equal(np.asarray(g), r)
    for g, r in zip(jnp.diag_indices_from(np.zeros((2, 2, 2))),
                    np.diag_indices_from(np.zeros((2, 2, 2)))):
        np.testing.assert_array_equal(np.asarray(g), r)
    with pytest.raises(ValueError, match="all dimensions of 'arr' must be equal"):
        jnp.diag_indices_from(np.zeros((2, 3)))
    for g, r in zip(jnp.mask_indices(4, jnp.triu, 1), np.mask_indices(4, np.triu, 1)):
        np.testing.assert_array_equal(np.asarray(g), r)
    i, j = pb.jit(lambda: jnp.mask_indices(3, jnp.tril, size=7))()
    assert i.shape == (7,)


@pytest.mark.parametrize("order", ["C", "F"])
def test_ravel_multi_index(order):
    dims = (3, 4, 5)
    rng = np.random.default_rng(0)
    idx = tuple(rng.integers(0, d, 10) for d in dims)
    np.testing.assert_array_equal(np.asarray(jnp.ravel_multi_index(idx, dims, order=order)),
                                  np.ravel_multi_index(idx, dims, order=order))
    bad = tuple(rng.integers(-7, d + 7, 10) for d in dims)
    for mode in ["wrap", "clip"]:
        np.testing.assert_array_equal(
            np.asarray(jnp.ravel_multi_index(bad, dims, mode=mode, order=order)),
            np.ravel_multi_index(bad, dims, mode=mode, order=order))
        got = pb.jit(lambda *b: jnp.ravel_multi_index(b, dims, mode=mode, order=order))(*bad)
        np.testing.assert_array_equal(np.asarray(got),
                                      np.ravel_multi_index(bad, dims, mode=mode, order=order))


def test_ravel_multi_index_errors():
    with pytest.raises(ValueError, match="invalid entry in coordinates array"):
        jnp.ravel_multi_index((np.array([3]), np.array([0])), (3, 4))
    with pytest.raises(pb.ConcretizationTypeError, match="mode='raise'"):
        pb.jit(lambda i: jnp.ravel_multi_index((i, i), (3, 4)))(np.array([1]))
    with pytest.raises(ValueError, match="argument 'mode'"):
        jnp.ravel_multi_index((np.array([1]),), (3,), mode="fill")
    with pytest.raises(TypeError, match="only integer indices"):
        jnp.ravel_multi_index((np.array([1.0]),), (3,))


def test_unravel_index_matches_numpy_and_clips_like_jax():
    shape = (3, 4, 2)
    flat = np.arange(24)
    for g, r in zip(jnp.unravel_index(flat, shape), np.unravel_index(flat, shape)):
        np.testing.assert_array_equal(np.asarray(g), r)
    # negative indices count from the end, out-of-range ones clip (JAX never raises)
    got = jnp.unravel_index(np.array([-1, 24, -25, 100]), shape)
    assert [g.tolist() for g in got] == [[2, 2, 0, 2], [3, 3, 0, 3], [1, 1, 0, 1]]
    jax = pytest.importorskip("jax")
    ref = jax.numpy.unravel_index(np.array([-1, 24, -25, 100]), shape)
    assert [g.tolist() for g in got] == [np.asarray(r).tolist() for r in ref]
    with pytest.raises(TypeError, match="unravel_index: argument 'indices' must be integer"):
        jnp.unravel_index(np.array([1.0]), shape)
