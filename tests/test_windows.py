"""unfold (im2col) and fold (col2im), as seed 000 defines them.

Checked against loop oracles written here from the definition, the NumPy reference backend and
jit, over random window geometries (kernel, stride, dilation, padding), every dtype and several
layouts; plus the seed's round-trip properties: fold is unfold's transpose, and
fold(unfold(x)) is x times the number of windows covering each position.
"""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pullback as pb
from pullback.test_util import assert_bitwise_equal as assert_same
from pullback.test_util import check_backends as check
from pullback.test_util import LAYOUTS, layout, reference_backend
from pullback import lax
from pullback.tracer import dtypes

ALL_DTYPES = dtypes.SUPPORTED
FOLD_DTYPES = tuple(d for d in ALL_DTYPES if d not in dtypes.FLOAT8)


def rand(rng, shape, dtype):
    """Small values every dtype represents exactly, whose window sums stay exact."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        return np.asarray(rng.integers(0 if dtype.kind == "u" else -3, 4, shape), dtype)
    if dtype.kind == "c":
        return np.asarray(rng.integers(-3, 4, shape) + 1j * rng.integers(-3, 4, shape), dtype)
    return np.asarray(rng.integers(-4, 5, shape) / 2, dtype)


# ---- loop oracles, straight from the definition ----

def counts(size, g):
    return [(n + lo + hi - d * (k - 1) - 1) // s + 1
            for n, k, s, d, (lo, hi) in zip(size, g["kernel_size"], g["stride"], g["dilation"],
                                            g["padding"])]


def positions(size, g):
    """(kernel offset index, window index, image coordinate or None if in the padding)."""
    for ki, kpos in enumerate(itertools.product(*map(range, g["kernel_size"]))):
        for li, lpos in enumerate(itertools.product(*map(range, counts(size, g)))):
            coord = tuple(l * s + k * d - lo for l, k, s, d, (lo, _) in
                          zip(lpos, kpos, g["stride"], g["dilation"], g["padding"]))
            inside = all(0 <= c < n for c, n in zip(coord, size))
            yield ki, li, coord if inside else None


def unfold_loop(x, g):
    K = len(g["kernel_size"])
    lead, size = x.shape[:x.ndim - K], x.shape[x.ndim - K:]
    out = np.zeros(lead + (math.prod(g["kernel_size"]), math.prod(counts(size, g))), x.dtype)
    for ki, li, coord in positions(size, g):
        if coord is not None:
            out[..., ki, li] = x[(Ellipsis,) + coord]
    return out


def fold_loop(cols, size, g):
    out = np.zeros(cols.shape[:-2] + tuple(size), cols.dtype)
    with np.errstate(over="ignore"):
        for ki, li, coord in positions(size, g):
            if coord is not None:
                out[(Ellipsis,) + coord] += cols[..., ki, li]
    return out


@st.composite
def geometries(draw):
    K = draw(st.integers(1, 3))
    g = dict(kernel_size=[], stride=[], dilation=[], padding=[])
    size = []
    for _ in range(K):
        k, d = draw(st.integers(1, 3)), draw(st.integers(1, 2))
        lo, hi = draw(st.integers(0, 2)), draw(st.integers(0, 2))
        n = draw(st.integers(max(0, d * (k - 1) + 1 - lo - hi), 5))  # the kernel must fit
        g["kernel_size"].append(k), g["stride"].append(draw(st.integers(1, 3)))
        g["dilation"].append(d), g["padding"].append((lo, hi))
        size.append(n)
    lead = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    return lead, tuple(size), {k: tuple(v) for k, v in g.items()}


# ---- unfold / fold values ----

@given(geometries(), st.sampled_from(ALL_DTYPES), st.sampled_from(LAYOUTS),
       st.integers(0, 2 ** 32 - 1))
def test_unfold_against_the_loop_oracle(geom, dtype, kind, seed):
    lead, size, g = geom
    x = layout(rand(np.random.default_rng(seed), lead + size, dtype), kind)
    check(lambda a: lax.unfold(a, **g), unfold_loop(x, g), x)
    out = np.asarray(lax.unfold(pb.Array(x), **g))
    assert out.size == 0 or not np.shares_memory(out, x)


@given(geometries(), st.sampled_from(FOLD_DTYPES), st.sampled_from(LAYOUTS),
       st.integers(0, 2 ** 32 - 1))
def test_fold_against_the_loop_oracle(geom, dtype, kind, seed):
    lead, size, g = geom
    cols_shape = lead + (math.prod(g["kernel_size"]), math.prod(counts(size, g)))
    cols = layout(rand(np.random.default_rng(seed), cols_shape, dtype), kind)
    check(lambda c: lax.fold(c, size, **g), fold_loop(cols, size, g), cols)


# ---- the seed's round-trip properties ----

@given(geometries(), st.integers(0, 2 ** 32 - 1))
def test_fold_is_the_transpose_of_unfold(geom, seed):
    lead, size, g = geom
    rng = np.random.default_rng(seed)
    x = rand(rng, lead + size, np.float64)
    y = rand(rng, lead + (math.prod(g["kernel_size"]), math.prod(counts(size, g))), np.float64)
    ux = np.asarray(lax.unfold(pb.Array(x), **g))
    fy = np.asarray(lax.fold(pb.Array(y), size, **g))
    assert np.sum(ux * y) == np.sum(x * fy)  # small integers and halves: exact in float64


@given(geometries(), st.integers(0, 2 ** 32 - 1))
def test_fold_of_unfold_counts_the_covering_windows(geom, seed):
    lead, size, g = geom
    x = rand(np.random.default_rng(seed), lead + size, np.int32)
    roundtrip = lax.fold(lax.unfold(pb.Array(x), **g), size, **g)
    cover = lax.fold(lax.unfold(pb.Array(np.ones(size, np.int32)), **g), size, **g)
    assert_same(roundtrip, x * np.asarray(cover))


@pytest.mark.parametrize("size, kernel", [((6,), (2,)), ((4, 6), (2, 3)), ((2, 2, 4), (1, 2, 2))])
def test_non_overlapping_windows_round_trip_exactly(size, kernel):
    x = rand(np.random.default_rng(0), (2,) + size, np.float32)
    g = dict(kernel_size=kernel, stride=kernel)
    assert_same(lax.fold(lax.unfold(pb.Array(x), **g), size, **g), x)


def test_unfold_layout_matches_the_seed():
    # (lead..., prod(kernel), L): row = kernel offset, column = window position, zero padded
    x = np.arange(1, 10, dtype=np.int32).reshape(1, 3, 3)
    out = np.asarray(lax.unfold(pb.Array(x), (2, 2), padding=((0, 1), (0, 0))))
    assert out.shape == (1, 4, 6)
    assert out[0].tolist() == [[1, 2, 4, 5, 7, 8], [2, 3, 5, 6, 8, 9], [4, 5, 7, 8, 0, 0],
                               [5, 6, 8, 9, 0, 0]]
    d = np.asarray(lax.unfold(pb.Array(np.arange(7, dtype=np.int8)), (2,), (3,), (2,)))
    assert d.tolist() == [[0, 3], [2, 5]]


def test_unfold_writes_every_element():
    # the output is not pre-zeroed: poison the allocator with a freed block of the same size
    x = np.arange(1, 2 * 5 * 5 + 1, dtype=np.float64).reshape(2, 5, 5)
    g = dict(kernel_size=(3, 3), stride=(2, 1), dilation=(1, 2), padding=((2, 1), (3, 0)))
    want = unfold_loop(x, g)
    for _ in range(3):
        poison = np.full(want.shape, np.nan)
        del poison
        assert_same(lax.unfold(pb.Array(x), **g), want)


def test_convolution_as_unfold_and_dot_general():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 6, 5))  # N, C, H, W
    w = rng.standard_normal((4, 3, 3, 2))  # O, C, KH, KW
    cols = lax.unfold(pb.Array(x), (3, 2), stride=(1, 2), padding=((1, 1), (0, 1)))
    cols = lax.reshape(cols, (2, 3 * 6, cols.shape[-1]))
    y = lax.dot_general(pb.Array(w.reshape(4, 18)), cols, (((1,), (1,)), ((), ())))
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (0, 1)))
    ho, wo = 6, 3
    want = np.zeros((4, 2, ho, wo))
    for i, j in itertools.product(range(ho), range(wo)):
        patch = xp[:, :, i:i + 3, 2 * j:2 * j + 2]
        want[:, :, i, j] = np.einsum("nckl,ockl->on", patch, w)
    np.testing.assert_allclose(np.asarray(y).reshape(4, 2, ho, wo), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_every_dtype(dtype):
    rng = np.random.default_rng(4)
    g = dict(kernel_size=(2, 2), stride=(1, 2), dilation=(2, 1), padding=((1, 0), (1, 2)))
    for kind in LAYOUTS:
        x = layout(rand(rng, (2, 4, 5), dtype), kind)
        check(lambda a: lax.unfold(a, **g), unfold_loop(x, g), x)
        if dtype in FOLD_DTYPES:
            cols = layout(rand(rng, (2, 4, 12), dtype), kind)
            check(lambda c: lax.fold(c, (4, 5), **g), fold_loop(cols, (4, 5), g), cols)
    if dtype not in FOLD_DTYPES:
        with pytest.raises(TypeError, match="fold: argument 'operand' has dtype"):
            lax.fold(pb.Array(np.zeros((2, 4, 12), dtype)), (4, 5), **g)


def test_large_unfold_and_fold_thread():
    x = np.random.default_rng(6).standard_normal((8, 16, 64, 64)).astype(np.float32)
    g = dict(kernel_size=(3, 3), padding=((1, 1), (1, 1)))
    cols = lax.unfold(pb.Array(x), **g)
    assert_same(cols, lax.unfold(pb.Array(x), **g))
    with reference_backend():
        assert_same(lax.unfold(pb.Array(x), **g), cols)
        want = lax.fold(cols, (64, 64), **g)
    assert_same(lax.fold(cols, (64, 64), **g), want)


# ---- errors ----

@pytest.mark.parametrize("call, err, words", [
    (lambda x: lax.unfold(x, (2, 2, 2, 2)), TypeError, ["unfold", "'operand'", "at least 4"]),
    (lambda x: lax.unfold(x, (), ), ValueError, ["unfold", "'kernel_size'", "empty"]),
    (lambda x: lax.unfold(x, (0, 2)), ValueError, ["unfold", "'kernel_size'", "positive"]),
    (lambda x: lax.unfold(x, (2, 2), stride=(1,)), ValueError, ["unfold", "'stride'", "2"]),
    (lambda x: lax.unfold(x, (2, 2), dilation=(1, 0)), ValueError, ["unfold", "'dilation'"]),
    (lambda x: lax.unfold(x, (2, 2), padding=((0, -1), (0, 0))), ValueError,
     ["unfold", "'padding'"]),
    (lambda x: lax.unfold(x, (5, 2)), ValueError, ["unfold", "smaller than the dilated kernel"]),
    (lambda x: lax.fold(x, (4, 4), (2, 2)), TypeError, ["fold", "'operand'", "(..., 4, 9)"]),
    (lambda x: lax.fold(x, (4,), (2, 2)), ValueError, ["fold", "'output_size'"]),
    (lambda x: lax.fold(x, (-1, 4), (2, 2)), TypeError, ["fold", "'output_size'", "negative"]),
])
def test_errors_name_op_and_argument(call, err, words):
    x = pb.Array(np.zeros((2, 4, 4), np.float32))
    with pytest.raises(err) as info:
        call(x)
    for w in words:
        assert w in str(info.value), (w, str(info.value))


def test_kernels_validate_their_arguments():
    """The kernels never trust their params: a geometry that does not fit raises, never
    crashes (the user-facing errors come from abstract evaluation, tested above)."""
    from pullback.primitives.windows import _window_params
    k = pb.backends.cpu.kernels
    x = np.zeros((2, 4, 4), np.float32)

    def call(name, x, out, **geometry):
        return k.call(k.kernel(name), (x,), ((x.dtype, out),), _window_params(**geometry))

    def geo(ks, st=(1, 1), dil=(1, 1), pad=((0, 0), (0, 0))):
        return dict(kernel_size=ks, stride=st, dilation=dil, padding=pad)

    fits = "the geometry does not fit the operands"
    with pytest.raises(TypeError, match="unfold: " + fits):
        call("unfold", x, (2, 4, 9), **geo((2, 2), st=(0, 1)))
    with pytest.raises(TypeError, match="unfold: " + fits):
        call("unfold", x, (2, 81, 1), **geo((9, 2)))
    with pytest.raises(TypeError, match="unfold: " + fits):
        call("unfold", x, (4, 1), **geo((1, 1, 1, 1), (1,) * 4, (1,) * 4, ((0, 0),) * 4))
    with pytest.raises(TypeError, match="unfold: " + fits):  # the output is not (2, 4, 9)
        call("unfold", x, (2, 4, 10), **geo((2, 2)))
    with pytest.raises(TypeError, match="unfold: " + fits):
        call("unfold", x, (2, 1, 1), **geo((1, 1), pad=((2 ** 62, 0), (2 ** 62, 0))))
    with pytest.raises(TypeError, match="fold: " + fits):  # cols must end in (4, 9)
        call("fold", x, (2, 4, 4), **geo((2, 2)))
    with pytest.raises(TypeError, match="fold: " + fits):
        call("fold", np.zeros((4, 9), "V2"), (4, 4), **geo((2, 2)))
