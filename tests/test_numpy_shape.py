"""pullback.numpy shape manipulation and creation against NumPy."""
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp

A = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

CASES = [
    ("reshape", lambda m: m.reshape(A, (4, -1))), ("ravel", lambda m: m.ravel(A)),
    ("transpose", lambda m: m.transpose(A, (2, 0, 1))), ("T", lambda m: m.transpose(A)),
    ("moveaxis", lambda m: m.moveaxis(A, 0, -1)), ("moveaxis2", lambda m: m.moveaxis(A, (0, 1), (2, 0))),
    ("swapaxes", lambda m: m.swapaxes(A, 0, 2)), ("expand_dims", lambda m: m.expand_dims(A, (0, 3))),
    ("squeeze", lambda m: m.squeeze(m.expand_dims(A, 1), 1)),
    ("stack", lambda m: m.stack([A, A], axis=1)), ("hstack", lambda m: m.hstack([A, A])),
    ("vstack", lambda m: m.vstack([A[0], A[1]])), ("dstack", lambda m: m.dstack([A[0], A[1]])),
    ("concatenate", lambda m: m.concatenate([A, A[:, :1]], axis=1)),
    ("concatenate_none", lambda m: m.concatenate([A, A], axis=None)),
    ("column_stack", lambda m: m.column_stack([A[0, 0], A[0, 1]])),
    ("tile", lambda m: m.tile(A[0], (2, 1, 2))), ("repeat", lambda m: m.repeat(A, 2, axis=1)),
    ("repeat_flat", lambda m: m.repeat(A[0, 0], 3)),
    ("repeat_array", lambda m: m.repeat(A[0, 0], np.array([1, 0, 2, 3]))),
    ("broadcast_to", lambda m: m.broadcast_to(A[0, 0], (3, 4))),
    ("flip", lambda m: m.flip(A, 1)), ("flip_all", lambda m: m.flip(A)),
    ("fliplr", lambda m: m.fliplr(A[0])), ("flipud", lambda m: m.flipud(A[0])),
    ("roll", lambda m: m.roll(A, 2, axis=2)), ("roll_flat", lambda m: m.roll(A, -5)),
    ("roll_multi", lambda m: m.roll(A, (1, -1), axis=(0, 2))),
    ("rot90", lambda m: m.rot90(A[0])), ("rot90_k3", lambda m: m.rot90(A, 3, axes=(1, 2))),
    ("atleast_3d", lambda m: m.atleast_3d(A[0, 0])),
    ("pad_constant", lambda m: m.pad(A, ((0, 1), (2, 0), (1, 1)), constant_values=7)),
    ("pad_edge", lambda m: m.pad(A[0], 2, mode="edge")),
    ("pad_reflect", lambda m: m.pad(A[0], ((3, 1), (1, 5)), mode="reflect")),
    ("pad_symmetric", lambda m: m.pad(A[0], 3, mode="symmetric")),
    ("pad_wrap", lambda m: m.pad(A[0], ((2, 5), (1, 0)), mode="wrap")),
    ("pad_max", lambda m: m.pad(A[0], 1, mode="maximum")),
    ("pad_mean", lambda m: m.pad(A[0], (1, 2), mode="mean")),
    ("pad_ramp", lambda m: m.pad(A[0, 0], (3, 2), mode="linear_ramp", end_values=(-4, 10))),
]


@pytest.mark.parametrize("name, f", CASES, ids=[c[0] for c in CASES])
def test_shape_ops_against_numpy(name, f):
    got, want = f(jnp), f(np)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    assert np.asarray(got).shape == np.shape(want)


@pytest.mark.parametrize("fn, args", [("split", (3, 2)), ("array_split", (3, 2)),
                                      ("split", ([1, 3], 2)), ("array_split", (4, 1)),
                                      ("hsplit", (3,)), ("vsplit", (2,)), ("dsplit", ([1],))])
def test_splits(fn, args):
    x = np.arange(2 * 3 * 6, dtype=np.float32).reshape(2, 3, 6)
    got, want = getattr(jnp, fn)(x, *args), getattr(np, fn)(x, *args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)


def test_views_are_zero_copy():
    x = pb.Array(np.arange(12, dtype=np.float32).reshape(3, 4))
    src = np.asarray(x)
    for view in (jnp.transpose(x), jnp.flip(x, 0), jnp.reshape(x, (4, 3)), jnp.ravel(x),
                 jnp.broadcast_to(x[0], (5, 4)), jnp.expand_dims(x, 0), x[1:, ::2]):
        assert np.shares_memory(np.asarray(view), src)


CREATION = [
    ("arange", lambda m: m.arange(10)), ("arange3", lambda m: m.arange(2, 11, 3)),
    ("arange_f", lambda m: m.arange(0.0, 1.0, 0.25)), ("arange_neg", lambda m: m.arange(5, -3, -2)),
    ("linspace", lambda m: m.linspace(0, 1, 7)), ("linspace_ne", lambda m: m.linspace(-2, 3, 5, endpoint=False)),
    ("logspace", lambda m: m.logspace(0, 2, 5)), ("eye", lambda m: m.eye(3, 4, 1)),
    ("identity", lambda m: m.identity(3)), ("tri", lambda m: m.tri(4, 3, -1)),
    ("tril", lambda m: m.tril(A, 1)), ("triu", lambda m: m.triu(A, -1)),
    ("diag1", lambda m: m.diag(np.array([1.0, 2.0, 3.0]), 1)), ("diag2", lambda m: m.diag(A[0], -1)),
    ("diagflat", lambda m: m.diagflat(np.array([[1.0, 2.0], [3.0, 4.0]]))),
    ("full", lambda m: m.full((2, 3), 4.5)), ("zeros_like", lambda m: m.zeros_like(A)),
    ("ones", lambda m: m.ones((2, 2), dtype=np.int32)), ("full_like", lambda m: m.full_like(A, 2)),
]


@pytest.mark.parametrize("name, f", CREATION, ids=[c[0] for c in CREATION])
def test_creation_against_numpy(name, f):
    got, want = np.asarray(f(jnp)), f(np)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    assert got.shape == want.shape


@pytest.mark.x32
def test_creation_dtypes_are_jax_defaults():
    assert jnp.arange(3).dtype == np.int32 and jnp.arange(3.0).dtype == np.float32
    assert jnp.zeros(2).dtype == np.float32 and jnp.eye(2).dtype == np.float32
    assert jnp.linspace(0, 1, 3).dtype == np.float32
    # JAX 0.10: full of a Python scalar keeps its weak type unless dtype= is given
    assert jnp.full((2,), 1.0).weak_type and not jnp.full((2,), 1.0, np.float32).weak_type
    assert not jnp.zeros(2).weak_type


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid(indexing, sparse):
    a, b, c = np.arange(3.0), np.arange(4.0), np.arange(2.0)
    got = jnp.meshgrid(a, b, c, indexing=indexing, sparse=sparse)
    want = np.meshgrid(a, b, c, indexing=indexing, sparse=sparse)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)


def test_errors_name_the_function_and_argument():
    with pytest.raises(TypeError, match="reshape"):
        jnp.reshape(jnp.ones(6), (4, -1))
    with pytest.raises(ValueError, match="squeeze"):
        jnp.squeeze(jnp.ones((2, 3)), 0)
    with pytest.raises(ValueError, match="transpose.*axes"):
        jnp.transpose(jnp.ones((2, 3)), (0, 0))
    with pytest.raises(ValueError, match="stack"):
        jnp.stack([jnp.ones(2), jnp.ones(3)])
    with pytest.raises(ValueError, match="split"):
        jnp.split(jnp.ones(5), 2)
