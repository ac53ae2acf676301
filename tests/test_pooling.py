"""pullback.nn.max_pool / avg_pool / min_pool: Flax's functional pooling (channels-last).

Against NumPy loop references written here from Flax's definitions (windows over the spatial
dimensions between the batch dimensions and the features; padding never wins a max and
counts as zeros in an average), unbatched and with several batch dimensions, SAME and explicit
padding, count_include_pad both ways, integer inputs; derivatives to order 2 in both modes;
jit against eager; vmap against a loop; bad arguments named."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pullback as pb
from pullback.test_util import check_grads, check_vmap


def _pads(spatial, window, strides, padding):
    if isinstance(padding, str):
        if padding == "VALID":
            return [(0, 0)] * len(spatial)
        out = []
        for n, w, s in zip(spatial, window, strides):
            total = max((-(-n // s) - 1) * s + w - n, 0)
            out.append((total // 2, total - total // 2))
        return out
    return list(padding)


def pool_ref(x, window, strides, padding, kind, count_include_pad=True):
    """Loops over (batch..., spatial..., features)."""
    k = len(window)
    strides = strides or (1,) * k
    single = x.ndim == k + 1
    if single:
        x = x[None]
    lead, spatial, feats = x.shape[:x.ndim - k - 1], x.shape[x.ndim - k - 1:-1], x.shape[-1]
    pads = _pads(spatial, window, strides, padding)
    oshape = [max(0, (n + lo + hi - w) // s + 1) if n + lo + hi >= w else 0
              for n, w, s, (lo, hi) in zip(spatial, window, strides, pads)]
    out = np.zeros(lead + tuple(oshape) + (feats,), np.float64)
    for b in np.ndindex(*lead):
        for o in np.ndindex(*oshape):
            vals, covered = [], 0
            for off in itertools.product(*map(range, window)):
                p = tuple(oi * s + kk - lo for oi, s, kk, (lo, _) in zip(o, strides, off, pads))
                if all(0 <= pi < n for pi, n in zip(p, spatial)):
                    vals.append(x[b + p].astype(np.float64))
                    covered += 1
            v = np.stack(vals) if vals else np.zeros((0, feats))
            if kind == "max":
                out[b + o] = v.max(0) if len(vals) else -np.inf
            elif kind == "min":
                out[b + o] = v.min(0) if len(vals) else np.inf
            else:  # a window of padding only averages 0 / 0 = NaN without count_include_pad
                with np.errstate(invalid="ignore"):
                    out[b + o] = v.sum(0) / (math.prod(window) if count_include_pad else covered)
    return out[0] if single else out


POOLS = {"max": pb.nn.max_pool, "min": pb.nn.min_pool, "avg": pb.nn.avg_pool}


@given(st.sampled_from(["max", "min", "avg"]), st.integers(0, 2),
       st.lists(st.integers(1, 6), min_size=1, max_size=2), st.data())
def test_pools_match_the_reference(kind, nbatch, spatial, data):
    k = len(spatial)
    window = tuple(data.draw(st.lists(st.integers(1, 3), min_size=k, max_size=k)))
    strides = data.draw(st.none() | st.tuples(*[st.integers(1, 2)] * k))
    padding = data.draw(st.sampled_from(["VALID", "SAME"]) |
                        st.tuples(*[st.tuples(st.integers(0, 2), st.integers(0, 2))] * k))
    if padding == "VALID" and any(w > n for w, n in zip(window, spatial)):
        padding = "SAME"
    shape = tuple(data.draw(st.lists(st.integers(1, 2), min_size=nbatch, max_size=nbatch))) + \
        tuple(spatial) + (data.draw(st.integers(1, 3)),)
    x = np.random.default_rng(sum(shape)).integers(-4, 5, shape).astype(np.float32) / 2
    cip = data.draw(st.booleans())
    kw = dict(count_include_pad=cip) if kind == "avg" else {}
    got = np.asarray(POOLS[kind](x, window, strides, padding, **kw))
    want = pool_ref(x, window, strides, padding, kind, cip)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_integer_max_pool_and_avg_pool_dtypes():
    x = np.arange(24, dtype=np.int32).reshape(1, 4, 6, 1)
    got = pb.nn.max_pool(x, (2, 2), (2, 2))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(got)[0, :, :, 0], [[7, 9, 11], [19, 21, 23]])
    avg = pb.nn.avg_pool(x, (2, 2), (2, 2))
    assert np.asarray(avg).dtype.kind == "f"
    np.testing.assert_allclose(np.asarray(avg)[0, :, :, 0], [[3.5, 5.5, 7.5], [15.5, 17.5, 19.5]])


def test_count_include_pad_false_is_flaxs_example():
    # Flax: avg_pool(ones((1, 3, 3, 1)), (2, 2), padding='SAME', count_include_pad=False) == 1
    ones = np.ones((1, 3, 3, 1), np.float32)
    np.testing.assert_array_equal(np.asarray(pb.nn.avg_pool(
        ones, (2, 2), padding="SAME", count_include_pad=False)), np.ones((1, 3, 3, 1)))
    np.testing.assert_array_equal(np.asarray(pb.nn.avg_pool(ones, (2, 2), padding="SAME"))
                                  [0, :, :, 0], [[1, 1, 0.5], [1, 1, 0.5], [0.5, 0.5, 0.25]])


@pytest.mark.parametrize("kind", ["max", "min", "avg"])
def test_pool_derivatives_jit_vmap(kind):
    rng = np.random.default_rng(0)
    x = rng.permutation(2 * 5 * 4 * 3).reshape(2, 5, 4, 3).astype(np.float64) / 10
    f = lambda x: POOLS[kind](x, (2, 2), (2, 1), "SAME")
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))
    check_vmap(f, (x,))
    np.testing.assert_array_equal(np.asarray(pb.jit(f)(x)), np.asarray(f(x)))
    g = pb.grad(lambda x: (f(x) ** 2).sum())
    np.testing.assert_allclose(np.asarray(pb.jit(g)(x)), np.asarray(g(x)), rtol=1e-12)


def test_max_pool_gradient_matches_jax():
    jax = pytest.importorskip("jax")
    x = np.random.default_rng(1).integers(0, 3, (2, 6, 6, 3)).astype(np.float32)  # ties
    ct = np.random.default_rng(2).standard_normal((2, 3, 3, 3)).astype(np.float32)
    # Flax's max_pool is lax.reduce_window(x, -inf, max, (1, 2, 2, 1), (1, 2, 2, 1), padding)
    want = jax.vjp(lambda x: jax.lax.reduce_window(x, -np.inf, jax.lax.max, (1, 2, 2, 1),
                                                   (1, 2, 2, 1), "VALID"), x)[1](ct)[0]
    got = pb.vjp(lambda x: pb.nn.max_pool(x, (2, 2), (2, 2)), x)[1](ct)[0]
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("call,err,words", [
    (lambda x: pb.nn.max_pool(x, (2, 2, 2, 2)), ValueError, "inputs"),
    (lambda x: pb.nn.max_pool(x, (2, 2), (1,)), ValueError, "strides"),
    (lambda x: pb.nn.avg_pool(x, (2, 2), padding=((0, 0),)), ValueError, "padding"),
    (lambda x: pb.nn.min_pool(x, (2.0, 2)), TypeError, "window_shape"),
    (lambda x: pb.nn.max_pool(x, (2, 2), padding="FULL"), RuntimeError, "padding"),
])
def test_bad_arguments_are_named(call, err, words):
    with pytest.raises(err, match=words):
        call(np.zeros((4, 4, 3), np.float32))
