"""select, choose, piecewise, compress, extract, place, put, put_along_axis, fill_diagonal,
partition, argpartition, sort_complex against NumPy (grads and vmap where JAX has them)."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pullback as pb
import pullback.numpy as jnp
from pullback.test_util import check_grads

RNG = np.random.default_rng(31)


def test_select_first_true_wins_and_default():
    x = np.linspace(-2, 2, 9)
    conds = [x < -1, x < 1, x > 0]
    choices = [x * 10, x * 100, x * 1000]
    np.testing.assert_allclose(np.asarray(jnp.select(conds, choices, -5.0)),
                               np.select(conds, choices, -5.0))
    f = pb.jit(lambda x: jnp.select([x < -1, x < 1], [x * 10, x], 0.0))
    np.testing.assert_allclose(np.asarray(f(x)), np.select([x < -1, x < 1], [x * 10, x], 0.0))


def test_select_grads_and_vmap():
    x = RNG.normal(size=(5,))
    check_grads(lambda x: jnp.select([x < 0, x < 1], [jnp.sin(x), x ** 2], jnp.exp(x)), (x,),
                order=2)
    out = pb.vmap(lambda v: jnp.select([v > 0], [v], -v))(x.reshape(5, 1))
    np.testing.assert_allclose(np.asarray(out).ravel(), np.abs(x))


def test_select_errors_name_argument():
    with pytest.raises(ValueError, match="select: argument 'condlist'"):
        jnp.select([np.ones(2, bool)], [np.ones(2), np.ones(2)])
    with pytest.raises(TypeError, match="select: argument 'condlist'"):
        jnp.select([np.ones(2)], [np.ones(2)])


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_choose(mode):
    a = np.array([[0, 2, 1], [1, 0, 2]])
    if mode != "raise":
        a = a + np.array([[3, -1, 0], [0, 5, -4]])
    choices = [np.arange(3) * 1.0, np.arange(3) * 10.0, np.arange(3) * 100.0]
    np.testing.assert_array_equal(np.asarray(jnp.choose(a, choices, mode=mode)),
                                  np.choose(a, choices, mode=mode))
    with pytest.raises(ValueError, match="choose: argument 'mode'"):
        jnp.choose(a, choices, mode="bogus")


def test_choose_raise_rejects_out_of_range_and_traced():
    with pytest.raises(ValueError, match="'a' must be in"):
        jnp.choose(np.array([0, 3]), [np.zeros(2), np.ones(2)])
    with pytest.raises(ValueError, match="concrete"):
        pb.jit(lambda a: jnp.choose(a, [np.zeros(2), np.ones(2)]))(np.array([0, 1]))
    got = pb.jit(lambda a: jnp.choose(a, [np.zeros(2), np.ones(2)], mode="clip"))(
        np.array([0, 5]))
    assert got.tolist() == [0.0, 1.0]


def test_piecewise_matches_numpy_and_differentiates():
    x = np.linspace(-2.5, 2.5, 11)
    conds = [x < 0, x >= 0]
    funcs = [lambda v: -v, lambda v: v ** 2]
    np.testing.assert_allclose(np.asarray(jnp.piecewise(x, conds, funcs)),
                               np.piecewise(x, conds, funcs))
    # one more function than conditions: the default; constants allowed
    np.testing.assert_allclose(np.asarray(jnp.piecewise(x, [x < -1, x > 1], [0.5, 2.0, np.sin])),
                               np.piecewise(x, [x < -1, x > 1], [0.5, 2.0, np.sin]))
    check_grads(lambda v: jnp.piecewise(v, [v < 0.3], [jnp.sin, jnp.cos]),
                (RNG.normal(size=6),), order=2)
    with pytest.raises(ValueError, match="piecewise: argument 'funclist'"):
        jnp.piecewise(x, [x < 0], [1, 2, 3])


@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4),
                  elements=st.floats(-5, 5)), st.data())
def test_compress_matches_numpy(a, data):
    axis = data.draw(st.sampled_from([None] + list(range(a.ndim))))
    n = a.size if axis is None else a.shape[axis]
    cond = np.array(data.draw(st.lists(st.booleans(), min_size=0, max_size=n)), bool)
    np.testing.assert_array_equal(np.asarray(jnp.compress(cond, a, axis=axis)),
                                  np.compress(cond, a, axis=axis))


def test_compress_size_fill_jit_and_grad():
    a = np.arange(12.0).reshape(3, 4)
    cond = np.array([True, False, True, True])
    f = pb.jit(lambda c, a: jnp.compress(c, a, axis=1, size=4, fill_value=-1.0))
    got = np.asarray(f(cond, a))
    np.testing.assert_array_equal(got[:, :3], np.compress(cond, a, axis=1))
    assert (got[:, 3] == -1).all()
    with pytest.raises(pb.ConcretizationTypeError, match="size"):
        pb.jit(lambda c, a: jnp.compress(c, a, axis=1))(cond, a)
    g = pb.grad(lambda a: jnp.compress(cond, a, axis=1, size=4).sum())(a)
    np.testing.assert_array_equal(np.asarray(g), np.broadcast_to(cond, a.shape) * 1.0)
    with pytest.raises(ValueError, match="compress: argument 'condition' must be 1-D"):
        jnp.compress(np.ones((2, 2), bool), a)


def test_extract():
    a = np.arange(10.0).reshape(2, 5)
    c = a % 3 == 0
    np.testing.assert_array_equal(np.asarray(jnp.extract(c, a)), np.extract(c, a))
    got = pb.jit(lambda c, a: jnp.extract(c, a, size=6, fill_value=9.0))(c, a)
    assert got.tolist() == [0.0, 3.0, 6.0, 9.0, 9.0, 9.0]


def test_place_put_put_along_axis_fill_diagonal():
    a = np.arange(12.0).reshape(3, 4)
    mask = a % 5 == 1
    ref = a.copy()
    np.place(ref, mask, [-1.0, -2.0])
    np.testing.assert_array_equal(np.asarray(jnp.place(a, mask, np.array([-1.0, -2.0]),
                                                       inplace=False)), ref)
    for mode in ["clip", "wrap"]:
        ref = a.copy()
        np.put(ref, [1, 14, -1], [7.0, 8.0], mode=mode)
        got = jnp.put(a, np.array([1, 14, -1]), np.array([7.0, 8.0]), mode=mode, inplace=False)
        np.testing.assert_array_equal(np.asarray(got), ref)
    idx = np.array([[0], [2], [1]])
    ref = a.copy()
    np.put_along_axis(ref, idx, -3.0, axis=1)
    np.testing.assert_array_equal(
        np.asarray(jnp.put_along_axis(a, idx, -3.0, axis=1, inplace=False)), ref)
    for shape, wrap in [((3, 3), False), ((7, 3), True), ((7, 3), False), ((2, 2, 2), False)]:
        ref = np.zeros(shape)
        np.fill_diagonal(ref, [1.0, 2.0], wrap=wrap)
        got = jnp.fill_diagonal(np.zeros(shape), np.array([1.0, 2.0]), wrap=wrap,
                                inplace=False)
        np.testing.assert_array_equal(np.asarray(got), ref)
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.put(a, np.array([0]), 1.0)
    # differentiable in the written values
    g = pb.grad(lambda v: jnp.put_along_axis(a, idx, v, axis=1, inplace=False).sum())(
        np.ones((3, 1)))
    np.testing.assert_array_equal(np.asarray(g), np.ones((3, 1)))


@pytest.mark.parametrize("kth", [0, 2, -1])
@pytest.mark.parametrize("axis", [0, -1])
def test_partition_argpartition_as_jax(kth, axis):
    a = RNG.integers(0, 5, (6, 7)).astype(np.float32)
    p = np.asarray(jnp.partition(a, kth, axis=axis))
    ap = np.asarray(jnp.argpartition(a, kth, axis=axis))
    s = np.sort(a, axis=axis)
    n = a.shape[axis]
    k = kth % n
    take = lambda x, lo, hi: np.take(x, np.arange(lo, hi), axis=axis)  # noqa: E731
    # the partition property, JAX's layout: sorted up to kth, the rest descending
    np.testing.assert_array_equal(take(p, 0, k + 1), take(s, 0, k + 1))
    np.testing.assert_array_equal(take(p, k + 1, n), np.flip(take(s, k + 1, n), axis=axis))
    np.testing.assert_array_equal(take(np.take_along_axis(a, ap, axis=axis), 0, k + 1),
                                  take(s, 0, k + 1))
    # the rest of argpartition's indices are in increasing order (JAX's)
    rest = take(ap, k + 1, n)
    assert (np.diff(rest, axis=axis) > 0).all()
    jax = pytest.importorskip("jax")
    np.testing.assert_array_equal(p, np.asarray(jax.numpy.partition(a, kth, axis=axis)))
    np.testing.assert_array_equal(ap, np.asarray(jax.numpy.argpartition(a, kth, axis=axis)))


def test_partition_errors_and_grad():
    with pytest.raises(ValueError, match="partition: argument 'kth'"):
        jnp.partition(np.arange(3.0), 3)
    with pytest.raises(TypeError, match="argument 'kth' must be a static integer"):
        jnp.partition(np.arange(3.0), 1.5)
    check_grads(lambda x: jnp.partition(x, 2), (RNG.normal(size=5),), order=2)


def test_sort_complex():
    a = np.array([3 + 1j, 1 - 2j, 1 - 3j, 2 + 0j], np.complex64)
    np.testing.assert_array_equal(np.asarray(jnp.sort_complex(a)), np.sort_complex(a))
    got = jnp.sort_complex(np.array([3, 1, 2], np.int32))
    assert got.dtype == np.complex64 and got.tolist() == [1, 2, 3]
