"""vectorize (gufunc signatures), apply_along_axis, apply_over_axes, ufunc/frompyfunc; the
queries, printing, packbits/unpackbits, from* constructors, dtype names; the new keyword
arguments (promote_integers, mean=, quantile weights, reshape order/copy) and Array methods."""
import ml_dtypes
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback.test_util import check_grads

RNG = np.random.default_rng(36)


def test_vectorize_signature_broadcast_and_grad():
    f = jnp.vectorize(lambda a, b: jnp.dot(a, b), signature="(n),(n)->()")
    a, b = RNG.normal(size=(2, 1, 4)), RNG.normal(size=(3, 4))
    np.testing.assert_allclose(np.asarray(f(a, b)), np.einsum("...n,...n->...", a, b),
                               rtol=1e-12)
    check_grads(f, (a, b), order=2)
    g = jnp.vectorize(lambda m: (m.sum(0), m.T), signature="(n,m)->(m),(m,n)")
    s, t = g(RNG.normal(size=(5, 2, 3)))
    assert s.shape == (5, 3) and t.shape == (5, 3, 2)
    h = jnp.vectorize(lambda x, p: x ** p, excluded={1})
    assert h(np.arange(3.0), 2).tolist() == [0.0, 1.0, 4.0]
    k = jnp.vectorize(lambda x, *, scale: x * scale, excluded={"scale"})
    assert k(np.arange(3.0), scale=2.0).tolist() == [0.0, 2.0, 4.0]
    out = pb.jit(jnp.vectorize(lambda x, y: x * y))(np.arange(3.0)[:, None], np.arange(2.0))
    np.testing.assert_array_equal(np.asarray(out), np.arange(3.0)[:, None] * np.arange(2.0))


def test_vectorize_errors():
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        jnp.vectorize(lambda x: x, signature="(n->()")(np.ones(3))
    f = jnp.vectorize(lambda a, b: a + b, signature="(n),(n)->(n)")
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'n'"):
        f(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="does not have enough dimensions"):
        jnp.vectorize(lambda m: m, signature="(n,m)->(n,m)")(np.ones(3))
    with pytest.raises(TypeError, match="argument 'excluded'"):
        jnp.vectorize(lambda x: x, excluded={1.5})


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_apply_along_axis(axis):
    a = RNG.normal(size=(2, 3, 4))
    f = lambda v: v.sum() * v[0]  # noqa: E731
    np.testing.assert_allclose(np.asarray(jnp.apply_along_axis(f, axis, a)),
                               np.apply_along_axis(f, axis, a), rtol=1e-12)
    g = lambda v: jnp.stack([v.min(), v.max()])  # noqa: E731
    ref = np.apply_along_axis(lambda v: np.stack([v.min(), v.max()]), axis, a)
    np.testing.assert_allclose(np.asarray(jnp.apply_along_axis(g, axis, a)), ref)


def test_apply_over_axes():
    a = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(np.asarray(jnp.apply_over_axes(jnp.sum, a, [0, 2])),
                                  np.apply_over_axes(np.sum, a, [0, 2]))


def test_frompyfunc_ufunc_methods():
    u = jnp.frompyfunc(lambda a, b: a * b + 1, 2, 1)
    x = np.arange(1.0, 5.0)
    assert u(x, 2.0).tolist() == [3.0, 5.0, 7.0, 9.0]
    np.testing.assert_array_equal(np.asarray(u.outer(x[:2], x)), np.outer(x[:2], x) + 1)
    assert float(u.reduce(x)) == 41.0
    assert u.accumulate(x).tolist() == [1.0, 3.0, 10.0, 41.0]
    add = jnp.frompyfunc(jnp.add, 2, 1, identity=0)
    got = add.at(np.zeros(4), np.array([0, 0, 3]), 1.0, inplace=False)
    ref = np.zeros(4)
    np.add.at(ref, [0, 0, 3], 1.0)
    np.testing.assert_array_equal(np.asarray(got), ref)
    np.testing.assert_array_equal(np.asarray(add.reduceat(np.arange(8.0), [0, 4, 1, 5])),
                                  np.add.reduceat(np.arange(8.0), [0, 4, 1, 5]))
    m = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(np.asarray(add.reduce(m, axis=1)), m.sum(1))
    assert float(add.reduce(np.zeros(0))) == 0.0
    with pytest.raises(ValueError, match="zero-size array to reduction"):
        u.reduce(np.zeros(0))
    with pytest.raises(ValueError, match="only supported for binary ufuncs"):
        jnp.frompyfunc(jnp.sin, 1, 1).reduce(x)
    assert isinstance(u, jnp.ufunc) and u.nin == 2 and u.nout == 1


def test_queries():
    assert jnp.ndim([[1, 2]]) == 2 and jnp.shape(jnp.ones((2, 3))) == (2, 3)
    assert jnp.size(np.ones((2, 3)), 1) == 3 and jnp.size(jnp.ones((2, 3))) == 6
    assert jnp.isscalar(1.0) and jnp.isscalar(jnp.float32(1)) and jnp.isscalar(jnp.ones(()))
    assert not jnp.isscalar(jnp.ones(2)) and not jnp.isscalar([1]) and jnp.isscalar("x")
    assert jnp.iterable([1]) and not jnp.iterable(3)
    c = np.array([1 + 1j, 2.0, 3j])
    np.testing.assert_array_equal(np.asarray(jnp.iscomplex(c)), np.iscomplex(c))
    np.testing.assert_array_equal(np.asarray(jnp.isreal(c)), np.isreal(c))
    assert jnp.iscomplexobj(c) and not jnp.iscomplexobj(np.ones(2)) and jnp.isrealobj(1.0)
    assert not jnp.iscomplexobj(None)


def test_printing():
    a = jnp.asarray([1.123456, 2.0])
    with jnp.printoptions(precision=2):
        assert "1.12" in repr(a) and jnp.get_printoptions()["precision"] == 2
    assert "1.12" in jnp.array_repr(a, precision=2) and jnp.array_repr(a).startswith("Array(")
    assert jnp.array_str(jnp.asarray([1, 2])) == "[1 2]"


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits_unpackbits(axis, bitorder):
    a = RNG.integers(0, 2, (3, 11)).astype(np.uint8)
    np.testing.assert_array_equal(np.asarray(jnp.packbits(a, axis, bitorder)),
                                  np.packbits(a, axis, bitorder=bitorder))
    p = np.packbits(a, 1)
    for count in [None, 5, 20]:
        np.testing.assert_array_equal(np.asarray(jnp.unpackbits(p, axis, count, bitorder)),
                                      np.unpackbits(p, axis, count, bitorder=bitorder))
    assert jnp.packbits(np.array([True, False, True])).tolist() == [160]
    with pytest.raises(TypeError, match="unpackbits: argument 'a' must be of dtype uint8"):
        jnp.unpackbits(np.ones(2, np.int32))
    with pytest.raises(ValueError, match="argument 'bitorder'"):
        jnp.packbits(a, bitorder="middle")


def test_from_constructors_and_dtypes():
    out = jnp.fromfunction(lambda i, j: i + 2 * j, (2, 3), dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(out), np.fromfunction(lambda i, j: i + 2 * j,
                                                                   (2, 3)))
    assert jnp.frombuffer(b"\x01\x02", dtype=np.uint8).tolist() == [1, 2]
    assert jnp.fromstring("1 2 3", sep=" ").tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(NotImplementedError, match="non-pure"):
        jnp.fromiter(iter([1, 2]))
    assert np.dtype(jnp.single) == np.float32 and np.dtype(jnp.cdouble) == np.complex128
    assert jnp.iinfo(jnp.int4).max == 7 and jnp.iinfo(jnp.uint2).max == 3
    assert float(jnp.finfo(jnp.float4_e2m1fn).max) == 6.0
    assert jnp.issubdtype(jnp.int4, jnp.signedinteger)
    assert jnp.issubdtype(jnp.uint4, jnp.unsignedinteger)
    assert jnp.issubdtype(jnp.float8_e4m3, jnp.floating)
    assert not jnp.issubdtype(jnp.int4, jnp.floating)
    assert jnp.zeros(2, jnp.float8_e4m3fnuz).dtype == ml_dtypes.float8_e4m3fnuz
    assert issubclass(jnp.ComplexWarning, Warning)


def test_sum_prod_promote_integers():
    x = np.ones(3, np.int8)
    assert jnp.sum(x).dtype == np.int64 or jnp.sum(x).dtype == np.int32
    assert jnp.sum(x, promote_integers=False).dtype == np.int8
    assert jnp.prod(np.ones(3, np.uint8), promote_integers=False).dtype == np.uint8
    assert jnp.sum(np.ones(3, bool), promote_integers=False).dtype.kind == "i"
    assert int(jnp.sum(np.full(200, 2, np.int8), promote_integers=False)) == \
        int(np.sum(np.full(200, 2, np.int8), dtype=np.int8))


def test_var_std_mean_argument():
    a = RNG.normal(size=(3, 5))
    m = a.mean(1, keepdims=True) + 0.5
    np.testing.assert_allclose(np.asarray(jnp.var(a, axis=1, mean=m)),
                               np.var(a, axis=1, mean=m), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jnp.std(a, axis=1, ddof=1, mean=m)),
                               np.std(a, axis=1, ddof=1, mean=m), rtol=1e-12)
    a2 = a.copy()
    a2[0, 1] = np.nan
    np.testing.assert_allclose(np.asarray(jnp.nanvar(a2, axis=1, mean=m)),
                               np.nanvar(a2, axis=1, mean=m), rtol=1e-12)
    with pytest.raises(ValueError, match="var: argument 'mean' must have the keepdims=True"):
        jnp.var(a, axis=1, mean=np.zeros((5, 1)))


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_quantile_weights_inverted_cdf(axis):
    a = RNG.normal(size=(4, 7))
    w = RNG.random(size=(4, 7))
    q = np.array([0.0, 0.1, 0.5, 0.9, 1.0])
    np.testing.assert_array_equal(
        np.asarray(jnp.quantile(a, q, axis=axis, weights=w, method="inverted_cdf")),
        np.quantile(a, q, axis=axis, weights=w, method="inverted_cdf"))
    np.testing.assert_array_equal(
        np.asarray(jnp.percentile(a, 30, axis=axis, method="inverted_cdf", keepdims=True)),
        np.percentile(a, 30, axis=axis, method="inverted_cdf", keepdims=True))
    a[1, 2] = np.nan
    np.testing.assert_array_equal(
        np.asarray(jnp.nanquantile(a, q, axis=axis, weights=w, method="inverted_cdf")),
        np.nanquantile(a, q, axis=axis, weights=w, method="inverted_cdf"))
    with pytest.raises(NotImplementedError, match="only method='inverted_cdf'"):
        jnp.quantile(a, 0.5, weights=w)


def test_reshape_order_f_and_copy():
    a = np.arange(24).reshape(2, 3, 4)
    for shape in [(4, 6), (24,), (2, 12), (3, 2, 4)]:
        np.testing.assert_array_equal(np.asarray(jnp.reshape(a, shape, order="F")),
                                      np.reshape(a, shape, order="F"))
    np.testing.assert_array_equal(np.asarray(jnp.ravel(a, order="F")), np.ravel(a, order="F"))
    np.testing.assert_array_equal(np.asarray(jnp.asarray(a).reshape(6, 4, order="F")),
                                  a.reshape(6, 4, order="F"))
    np.testing.assert_array_equal(np.asarray(jnp.reshape(a, (6, 4), copy=True)),
                                  a.reshape(6, 4))
    check_grads(lambda x: jnp.reshape(x, (4, 6), order="F") * np.arange(24.0).reshape(4, 6),
                (RNG.normal(size=(2, 3, 4)),), order=2)
    with pytest.raises(ValueError, match="reshape: argument 'order' must be 'C' or 'F'"):
        jnp.reshape(a, (24,), order="A")


def test_array_methods():
    x = jnp.asarray([5, 1, 4, 2, 3])
    assert x.argpartition(2).tolist() == jnp.argpartition(x, 2).tolist()
    assert jnp.asarray([0, 1, 0]).choose([np.arange(3), 10 + np.arange(3)]).tolist() == \
        [0, 11, 2]
    assert jnp.arange(6).compress(np.array([1, 0, 1], bool)).tolist() == [0, 2]
    b = np.array([1, 256, -3], np.int32)
    np.testing.assert_array_equal(np.asarray(jnp.asarray(b).byteswap()), b.byteswap())
    np.testing.assert_array_equal(np.asarray(pb.jit(lambda v: v.byteswap())(b)), b.byteswap())
    f = np.array([1.5, -2.25], np.float64)
    np.testing.assert_array_equal(np.asarray(jnp.asarray(f).byteswap()), f.byteswap())
    assert jnp.asarray(f).tobytes() == f.tobytes()
    with pytest.raises(NotImplementedError, match="arr.flat"):
        jnp.ones(2).flat  # noqa: B018
