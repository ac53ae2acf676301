"""dynamic_slice, dynamic_update_slice, gather and the scatter family.

gather/scatter are checked against a Python-loop oracle written here from XLA's definition
(one output element / one update element at a time), over random dimension numbers including
batching dimensions, every mode with out-of-bounds indices, every index dtype, and operands in
several memory layouts; plus the NumPy reference backend and jit.
"""
import itertools
import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pullback as pb
from pullback.test_util import assert_bitwise_equal as assert_same
from pullback.test_util import check_backends as check
from pullback.test_util import LAYOUTS, layout
from pullback import lax
from pullback.lax import GatherDimensionNumbers as GDN
from pullback.lax import GatherScatterMode as Mode
from pullback.lax import ScatterDimensionNumbers as SDN
from pullback.tracer import dtypes

ALL_DTYPES = dtypes.SUPPORTED
ARITH = tuple(d for d in ALL_DTYPES if d != dtypes.bool_ and d not in dtypes.FLOAT8)
INDEX_DTYPES = tuple(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8,
                                           np.uint16, np.uint32, np.uint64))
MODES = (Mode.CLIP, Mode.FILL_OR_DROP, Mode.PROMISE_IN_BOUNDS, "clip", "fill", "drop",
         "promise_in_bounds", None)
SCATTERS = {"scatter": lax.scatter, "scatter_add": lax.scatter_add,
            "scatter_mul": lax.scatter_mul, "scatter_min": lax.scatter_min,
            "scatter_max": lax.scatter_max}


def rand(rng, shape, dtype):
    """Small values every dtype represents exactly (float8 included)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        return np.asarray(rng.integers(0 if dtype.kind == "u" else -5, 6, shape), dtype)
    if dtype.kind == "c":
        return np.asarray(rng.integers(-3, 4, shape) + 1j * rng.integers(-3, 4, shape), dtype)
    return np.asarray(rng.integers(-6, 7, shape) / 2, dtype)


# ---- the Python-loop oracle (XLA's definition, element by element) ----

def resolve_start(operand_shape, index_vector, index_map, window, clamp):
    """Per operand dimension the window start, or None if the window does not fit (no clamp)."""
    start = [0] * len(operand_shape)
    for v, d in zip(index_vector, index_map):
        hi = operand_shape[d] - window[d]
        if not 0 <= v <= hi:
            if not clamp:
                return None
            v = min(max(v, 0), hi)
        start[d] = v
    return start


def clamps(mode, scatter):
    mode = Mode.from_any(mode if mode is not None or scatter else Mode.PROMISE_IN_BOUNDS)
    return mode is Mode.CLIP or (mode is Mode.PROMISE_IN_BOUNDS and not scatter)


def gather_loop(operand, indices, dn, slice_sizes, mode, fill):
    nb = indices.ndim - 1
    window_dims = [d for d in range(operand.ndim)
                   if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    out_ndim = len(dn.offset_dims) + nb
    batch_pos = [o for o in range(out_ndim) if o not in dn.offset_dims]
    shape = [0] * out_ndim
    for o, d in zip(dn.offset_dims, window_dims):
        shape[o] = slice_sizes[d]
    for o, n in zip(batch_pos, indices.shape[:-1]):
        shape[o] = n
    out = np.empty(shape, operand.dtype)
    for pos in itertools.product(*map(range, shape)):
        g = tuple(pos[o] for o in batch_pos)
        vec = [int(indices[g + (k,)]) for k in range(indices.shape[-1])]
        start = resolve_start(operand.shape, vec, dn.start_index_map, slice_sizes,
                              clamps(mode, scatter=False))
        if start is None:
            out[pos] = fill
            continue
        for od, bd in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
            start[od] = g[bd]
        for o, d in zip(dn.offset_dims, window_dims):
            start[d] += pos[o]
        out[pos] = operand[tuple(start)]
    return out


def combine(name, a, b):
    if name == "scatter":
        return b
    if name == "scatter_add":
        return a + b
    if name == "scatter_mul":
        return a * b
    if a != a or b != b:  # NaN propagates (a NaN in either part, for complex)
        return a if a != a else b
    if a.dtype == np.bool_:
        return (a and b) if name == "scatter_min" else (a or b)
    lt = (a.real, a.imag) > (b.real, b.imag) if a.dtype.kind == "c" else a > b
    return (b if lt else a) if name == "scatter_min" else (a if lt or a == b else b)


def scatter_loop(name, operand, indices, updates, dn, mode):
    out = np.array(operand, copy=True)
    window_dims = [d for d in range(operand.ndim)
                   if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
    window = [1] * operand.ndim
    for d, u in zip(window_dims, dn.update_window_dims):
        window[d] = updates.shape[u]
    scatter_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
    wshape = [updates.shape[u] for u in dn.update_window_dims]
    with np.errstate(all="ignore"):
        for g in itertools.product(*map(range, indices.shape[:-1])):
            vec = [int(indices[g + (k,)]) for k in range(indices.shape[-1])]
            start = resolve_start(operand.shape, vec, dn.scatter_dims_to_operand_dims, window,
                                  clamps(mode, scatter=True))
            if start is None or out.size == 0:
                continue
            for od, bd in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims):
                start[od] = g[bd]
            for w in itertools.product(*map(range, wshape)):
                u = [0] * updates.ndim
                for t, d in enumerate(scatter_dims):
                    u[d] = g[t]
                for j, d in enumerate(dn.update_window_dims):
                    u[d] = w[j]
                at = list(start)
                for j, d in enumerate(window_dims):
                    at[d] += w[j]
                out[tuple(at)] = combine(name, out[tuple(at)], updates[tuple(u)])
    return out


def default_fill(dtype):
    if dtypes.is_inexact(dtype):
        return np.asarray(np.nan, dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.asarray(info.min if dtype.kind == "i" else info.max, dtype)
    return np.asarray(True)


# ---- random dimension numbers ----

@st.composite
def index_values(draw, shape, dtype, bound):
    """Indices in [-2, bound + 2] (out of range both ways), any integer dtype."""
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    # a negative value cast to an unsigned dtype wraps to a huge (out of range) value
    return rng.integers(-2, bound + 3, shape).astype(dtype)


@st.composite
def batch_layout(draw, operand_shape, obd):
    """An index batch shape that holds the operand batching dimensions somewhere."""
    nb = draw(st.integers(len(obd), len(obd) + 2))
    shape = [draw(st.integers(0, 3)) for _ in range(nb)]
    ibd = draw(st.permutations(range(nb)))[:len(obd)]
    for o, b in zip(obd, ibd):
        shape[b] = operand_shape[o]
    return tuple(shape), tuple(ibd)


@st.composite
def gather_cases(draw):
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
    dims = range(len(shape))
    obd = tuple(sorted(draw(st.sets(st.sampled_from(dims), max_size=1)) if shape else ()))
    free = [d for d in dims if d not in obd]
    collapsed = tuple(sorted(draw(st.sets(st.sampled_from([d for d in free if shape[d]]))))
                      if any(shape[d] for d in free) else ())
    sim = tuple(draw(st.permutations(free))[:draw(st.integers(0, len(free)))])
    sizes = tuple(1 if d in collapsed else min(1, shape[d]) if d in obd
                  else draw(st.integers(0, shape[d])) for d in dims)
    batch, ibd = draw(batch_layout(shape, obd))
    nwin = len(shape) - len(collapsed) - len(obd)
    offset = tuple(sorted(draw(st.permutations(range(nwin + len(batch))))[:nwin]))
    idtype = draw(st.sampled_from(INDEX_DTYPES))
    indices = draw(index_values(batch + (len(sim),), idtype, max(shape, default=0)))
    dn = GDN(offset, collapsed, sim, obd, ibd)
    return shape, dn, sizes, indices


@st.composite
def scatter_cases(draw):
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
    dims = range(len(shape))
    obd = tuple(sorted(draw(st.sets(st.sampled_from(dims), max_size=1)) if shape else ()))
    free = [d for d in dims if d not in obd]
    inserted = tuple(sorted(draw(st.sets(st.sampled_from(free))) if free else ()))
    sdod = tuple(draw(st.permutations(free))[:draw(st.integers(0, len(free)))])
    window_dims = [d for d in dims if d not in inserted and d not in obd]
    wsizes = [draw(st.integers(0, shape[d])) for d in window_dims]
    batch, ibd = draw(batch_layout(shape, obd))
    nupd = len(batch) + len(window_dims)
    uwd = tuple(sorted(draw(st.permutations(range(nupd)))[:len(window_dims)]))
    upd_shape, b, w = [], iter(batch), iter(wsizes)
    for d in range(nupd):
        upd_shape.append(next(w) if d in uwd else next(b))
    idtype = draw(st.sampled_from(INDEX_DTYPES))
    indices = draw(index_values(batch + (len(sdod),), idtype, max(shape, default=0)))
    dn = SDN(uwd, inserted, sdod, obd, ibd)
    return shape, dn, tuple(upd_shape), indices


# ---- gather ----

@given(gather_cases(), st.sampled_from(ALL_DTYPES), st.sampled_from(MODES),
       st.sampled_from(LAYOUTS), st.integers(0, 2 ** 32 - 1))
def test_gather_against_the_loop_oracle(case, dtype, mode, kind, seed):
    shape, dn, sizes, indices = case
    x = layout(rand(np.random.default_rng(seed), shape, dtype), kind)
    want = gather_loop(x, indices, dn, sizes, mode, default_fill(x.dtype))
    check(lambda a, i: lax.gather(a, i, dn, sizes, mode=mode), want, x, indices)


def test_gather_modes_with_out_of_bounds_windows():
    x = np.arange(10, dtype=np.float32)
    dn = GDN(offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(0,))
    idx = pb.Array(np.array([[-1], [0], [7], [8], [100]], np.int32))
    a = pb.Array(x)
    windows = [[0, 1, 2], [0, 1, 2], [7, 8, 9], [7, 8, 9], [7, 8, 9]]
    for mode in (None, "clip", Mode.PROMISE_IN_BOUNDS):  # None: PROMISE_IN_BOUNDS, as in JAX
        assert np.asarray(lax.gather(a, idx, dn, (3,), mode=mode)).tolist() == windows
    out = np.asarray(lax.gather(a, idx, dn, (3,), mode="fill"))
    assert out[1].tolist() == [0, 1, 2] and out[2].tolist() == [7, 8, 9]
    assert np.isnan(out[[0, 3, 4]]).all()  # a window partly out of bounds is filled entirely
    out = lax.gather(a, idx, dn, (3,), mode="fill", fill_value=-1)
    assert np.asarray(out)[3].tolist() == [-1, -1, -1]


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint8, np.uint32, np.bool_, np.float16,
                                   ml_dtypes.bfloat16, np.complex64, ml_dtypes.float8_e4m3fn])
def test_gather_default_fill_values(dtype):
    x = pb.Array(np.zeros((3,), dtype))
    dn = GDN(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
    out = lax.gather(x, pb.Array(np.array([[5]], np.int32)), dn, (1,), mode="fill")
    assert_same(out, default_fill(np.dtype(dtype)).reshape(1))


@pytest.mark.parametrize("idtype", INDEX_DTYPES, ids=str)
def test_every_index_dtype(idtype):
    x = np.arange(12, dtype=np.int16).reshape(3, 4)
    dn = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    big = np.iinfo(idtype).max  # out of range; for uint64 past int64's range too
    idx = np.array([[2], [0], [big], [1]], idtype)
    out = lax.gather(pb.Array(x), pb.Array(idx), dn, (1, 4), mode="fill", fill_value=-7)
    assert np.asarray(out).tolist() == [x[2].tolist(), x[0].tolist(), [-7] * 4, x[1].tolist()]
    clipped = lax.gather(pb.Array(x), pb.Array(idx), dn, (1, 4), mode="clip")
    assert np.asarray(clipped)[2].tolist() == x[2].tolist()
    upd = np.ones((4, 4), np.int16)
    sdn = SDN(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    added = lax.scatter_add(pb.Array(x), pb.Array(idx), pb.Array(upd), sdn)
    assert_same(added, x + 1)  # rows 2, 0 and 1 once each; the huge index is dropped


def test_gather_with_batching_dims():
    # x[b, idx[b, j], :] for each batch b: operand dim 0 pairs with indices dim 0
    rng = np.random.default_rng(3)
    x = rng.integers(0, 100, (2, 5, 3)).astype(np.float64)
    idx = np.array([[[4], [0], [2]], [[1], [1], [3]]], np.int64)
    dn = GDN(offset_dims=(2,), collapsed_slice_dims=(1,), start_index_map=(1,),
             operand_batching_dims=(0,), start_indices_batching_dims=(0,))
    want = np.stack([x[b, idx[b, :, 0], :] for b in range(2)])
    check(lambda a, i: lax.gather(a, i, dn, (1, 1, 3)), want, x, idx)
    # the batching dimension of the indices need not come first
    dn_t = dn._replace(start_indices_batching_dims=(1,))
    check(lambda a, i: lax.gather(a, i, dn_t, (1, 1, 3)), want.transpose(1, 0, 2), x,
          idx.transpose(1, 0, 2))


def test_gather_is_numpy_take():
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    idx = np.array([[3, 0], [1, 4], [0, 0]])
    dn = GDN(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1))
    check(lambda a, i: lax.gather(a, i, dn, (1, 1)), x[idx[:, 0], idx[:, 1]], x, idx)
    dn = GDN(offset_dims=(0,), collapsed_slice_dims=(1,), start_index_map=(1,))
    check(lambda a, i: lax.gather(a, i, dn, (4, 1)), x[:, [3, 1]], x, np.array([[3], [1]]))


# ---- scatter ----

@given(scatter_cases(), st.sampled_from(sorted(SCATTERS)), st.sampled_from(ALL_DTYPES),
       st.sampled_from(MODES), st.sampled_from(LAYOUTS), st.integers(0, 2 ** 32 - 1))
def test_scatter_against_the_loop_oracle(case, name, dtype, mode, kind, seed):
    if (name in ("scatter_add", "scatter_mul") and dtype not in ARITH) or \
            (name != "scatter" and dtype in dtypes.FLOAT8):
        dtype = np.dtype(np.float32)
    shape, dn, upd_shape, indices = case
    rng = np.random.default_rng(seed)
    x = layout(rand(rng, shape, dtype), kind)
    u = layout(rand(rng, upd_shape, dtype), kind)
    want = scatter_loop(name, x, indices, u, dn, mode)
    check(lambda a, i, b: SCATTERS[name](a, i, b, dn, mode=mode), want, x, indices, u)


def test_scatter_duplicates_are_deterministic():
    x = np.zeros(5, np.float32)
    idx = np.array([[1], [3], [1], [1], [3]], np.int32)
    u = np.array([1, 2, 3, 4, 5], np.float32)
    dn = SDN(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    args = [pb.Array(x), pb.Array(idx), pb.Array(u)]
    assert np.asarray(lax.scatter(*args, dn)).tolist() == [0, 4, 0, 5, 0]  # last write wins
    assert np.asarray(lax.scatter_add(*args, dn)).tolist() == [0, 8, 0, 7, 0]
    assert np.asarray(lax.scatter_mul(pb.Array(np.ones(5, np.float32)), *args[1:], dn)
                      ).tolist() == [1, 12, 1, 10, 1]
    assert np.asarray(lax.scatter_max(*args, dn)).tolist() == [0, 4, 0, 5, 0]
    assert np.asarray(lax.scatter_min(*args, dn)).tolist() == [0, 0, 0, 0, 0]
    # overlapping windows: a later window overwrites the earlier one where they overlap
    dn2 = SDN(update_window_dims=(1,), inserted_window_dims=(), scatter_dims_to_operand_dims=(0,))
    out = lax.scatter(pb.Array(x), pb.Array(np.array([[0], [1]])), pb.Array(
        np.array([[1, 1, 1], [2, 2, 2]], np.float32)), dn2)
    assert np.asarray(out).tolist() == [1, 2, 2, 2, 0]


def test_scatter_modes_with_out_of_bounds_windows():
    x = pb.Array(np.zeros(6, np.int32))
    idx = pb.Array(np.array([[-1], [4], [5], [2]], np.int64))
    u = pb.Array(np.array([[1, 1], [2, 2], [3, 3], [4, 4]], np.int32))
    dn = SDN(update_window_dims=(1,), inserted_window_dims=(), scatter_dims_to_operand_dims=(0,))
    # start 5 with a window of 2 does not fit: dropped whole (not partially written)
    for mode in (None, "drop", "fill", Mode.PROMISE_IN_BOUNDS):
        assert np.asarray(lax.scatter_add(x, idx, u, dn, mode=mode)).tolist() == [0, 0, 4, 4, 2, 2]
    assert np.asarray(lax.scatter_add(x, idx, u, dn, mode="clip")).tolist() == [1, 1, 4, 4, 5, 5]


def test_scatter_nan_and_special_dtypes():
    nan = np.float32(np.nan)
    dn = SDN(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    idx = pb.Array(np.array([[0], [1], [1]]))
    x = pb.Array(np.array([1, nan, 3], np.float32))
    u = pb.Array(np.array([nan, 2, 5], np.float32))
    assert np.isnan(np.asarray(lax.scatter_max(x, idx, u, dn))[:2]).all()
    assert np.isnan(np.asarray(lax.scatter_min(x, idx, u, dn))[:2]).all()
    b = pb.Array(np.array([True, False, True]))
    bu = pb.Array(np.array([False, True, False]))
    assert np.asarray(lax.scatter_min(b, idx, bu, dn)).tolist() == [False, False, True]
    assert np.asarray(lax.scatter_max(b, idx, bu, dn)).tolist() == [True, True, True]
    c = pb.Array(np.array([1 + 5j, 2 - 1j, 0], np.complex64))
    cu = pb.Array(np.array([1 + 6j, 2 - 2j, 3], np.complex64))
    assert np.asarray(lax.scatter_max(c, idx, cu, dn)).tolist() == [1 + 6j, 3 + 0j, 0]
    assert np.asarray(lax.scatter_mul(c, idx, cu, dn))[0] == (1 + 5j) * (1 + 6j)


@pytest.mark.parametrize("name", sorted(SCATTERS))
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_every_scatter_dtype(name, dtype):
    supported = (name == "scatter" or (dtype not in dtypes.FLOAT8 and
                 (dtype != np.bool_ or name in ("scatter_min", "scatter_max"))))
    rng = np.random.default_rng(1)
    x, u = rand(rng, (4, 3), dtype), rand(rng, (5, 3), dtype)
    idx = np.array([[3], [0], [3], [9], [1]], np.uint16)
    dn = SDN(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    op = lambda a, i, b: SCATTERS[name](a, i, b, dn)  # noqa: E731
    if not supported:
        with pytest.raises(TypeError, match=f"scatter.*'operand' has dtype {np.dtype(dtype)}"):
            op(pb.Array(x), pb.Array(idx), pb.Array(u))
        return
    check(op, scatter_loop(name, x, idx, u, dn, None), x, idx, u)


# ---- dynamic_slice / dynamic_update_slice ----

@given(st.sampled_from(ALL_DTYPES), st.lists(st.integers(0, 4), max_size=4), st.data())
def test_dynamic_slice_clamps(dtype, shape, data):
    x = layout(rand(np.random.default_rng(0), tuple(shape), dtype),
               data.draw(st.sampled_from(LAYOUTS)))
    sizes = [data.draw(st.integers(0, n)) for n in shape]
    starts = [data.draw(st.integers(-2 * n - 2, 2 * n + 2)) for n in shape]
    # JAX: a negative start counts from the end, then the start is clamped so the slice fits
    fixed = [min(max(s + n if s < 0 else s, 0), n - z) for s, n, z in zip(starts, shape, sizes)]
    want = x[tuple(slice(s, s + z) for s, z in zip(fixed, sizes))]
    check(lambda a: lax.dynamic_slice(a, starts, sizes), want, x)
    idx = [np.asarray(s, np.int64) for s in starts]
    check(lambda a, *i: lax.dynamic_slice(a, [pb.Array(j) for j in idx], sizes), want, x)
    update = rand(np.random.default_rng(1), tuple(sizes), dtype)
    expect = np.array(x, copy=True)
    expect[tuple(slice(s, s + z) for s, z in zip(fixed, sizes))] = update
    check(lambda a, b: lax.dynamic_update_slice(a, b, starts), expect, x, update)


@pytest.mark.eager_only
def test_dynamic_slice_is_a_view_and_update_a_copy():
    x = np.arange(30, dtype=np.float32).reshape(5, 6)
    out = np.asarray(lax.dynamic_slice(pb.Array(x), (pb.Array(np.asarray(7, np.int32)), 2), (2, 3)))
    assert out.tolist() == x[3:5, 2:5].tolist() and np.shares_memory(out, x)
    upd = np.asarray(lax.dynamic_update_slice(pb.Array(x), pb.Array(np.zeros((2, 2), np.float32)),
                                              (-1, 100)))
    assert not np.shares_memory(upd, x)
    assert upd[3:, 4:].tolist() == [[0, 0], [0, 0]] and upd.sum() == x.sum() - x[3:, 4:].sum()


def test_traced_start_indices():
    x = pb.Array(np.arange(10, dtype=np.int32))
    f = pb.jit(lambda a, i: lax.dynamic_slice(a, (i,), (3,)))
    assert np.asarray(f(x, np.uint32(2))).tolist() == [2, 3, 4]
    assert np.asarray(f(x, np.uint32(9))).tolist() == [7, 8, 9]  # clamped inside jit
    g = pb.jit(lambda a, i: lax.dynamic_update_slice(a, pb.Array(np.zeros(2, np.int32)), (i,)))
    assert np.asarray(g(x, np.uint8(250))).tolist()[-3:] == [7, 0, 0]
    # signed traced starts count from the end when negative, which needs lt/select_n
    has_select = hasattr(lax, "lt") and (hasattr(lax, "select_n") or hasattr(lax, "select"))
    if has_select:
        assert np.asarray(f(x, np.int32(-2))).tolist() == [7, 8, 9]
        assert np.asarray(f(x, np.int32(-9))).tolist() == [1, 2, 3]
    else:
        with pytest.raises(NotImplementedError, match="needs lax.lt and lax.select_n"):
            f(x, np.int32(-2))
    # a 1-D array of starts
    y = pb.Array(np.arange(12, dtype=np.int32).reshape(3, 4))
    starts = pb.Array(np.array([2, 3], np.uint8))
    assert np.asarray(lax.dynamic_slice(y, starts, (1, 2))).tolist() == [[10, 11]]
    h = pb.jit(lambda a, s: lax.dynamic_slice(a, s, (1, 2)))
    assert np.asarray(h(y, starts)).tolist() == [[10, 11]]


def test_in_dim_conveniences():
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    a = pb.Array(x)
    assert_same(lax.dynamic_slice_in_dim(a, 1, 2, axis=2), x[:, :, 1:3])
    assert_same(lax.dynamic_slice_in_dim(a, 5, 2, axis=1), x[:, 1:3])
    assert_same(lax.dynamic_index_in_dim(a, -1, axis=1, keepdims=False), x[:, 2])
    assert_same(lax.dynamic_index_in_dim(a, 1, axis=0), x[1:])
    u = np.full((2, 1, 4), -1, np.int32)
    want = x.copy()
    want[:, 2:3] = u
    assert_same(lax.dynamic_update_slice_in_dim(a, pb.Array(u), 2, axis=1), want)
    assert_same(lax.dynamic_update_index_in_dim(a, pb.Array(u[:, 0]), 7, axis=1), want)


# ---- errors ----

G1 = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
S1 = SDN(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
I1 = pb.Array(np.array([[0], [1]], np.int32))


@pytest.mark.parametrize("call, err, words", [
    (lambda x: lax.dynamic_slice(x, (0,), (1, 1)), TypeError, ["dynamic_slice",
                                                              "'start_indices'"]),
    (lambda x: lax.dynamic_slice(x, (0, 0), (1, 9)), TypeError, ["dynamic_slice",
                                                                "'slice_sizes'"]),
    (lambda x: lax.dynamic_slice(x, (0, 0.5), (1, 1)), TypeError, ["dynamic_slice",
                                                                  "'start_indices'", "integer"]),
    (lambda x: lax.dynamic_update_slice(x, pb.Array(np.zeros((5, 1), np.float32)), (0, 0)),
     TypeError, ["dynamic_update_slice", "'update'"]),
    (lambda x: lax.dynamic_update_slice(x, pb.Array(np.zeros((1, 1), np.int32)), (0, 0)),
     TypeError, ["dynamic_update_slice", "'update'", "dtype"]),
    (lambda x: lax.gather(x, pb.Array(np.zeros((2, 1), np.float32)), G1, (1, 4)), TypeError,
     ["gather", "'start_indices'", "integer"]),
    (lambda x: lax.gather(x, I1, G1, (1, 5)), TypeError, ["gather", "'slice_sizes'"]),
    (lambda x: lax.gather(x, I1, G1, (2, 4)), TypeError, ["gather", "'collapsed_slice_dims'"]),
    (lambda x: lax.gather(x, I1, G1._replace(offset_dims=(2,)), (1, 4)), ValueError,
     ["gather", "'offset_dims'"]),
    (lambda x: lax.gather(x, I1, G1._replace(start_index_map=(0, 1)), (1, 4)), TypeError,
     ["gather", "'start_index_map'"]),
    (lambda x: lax.gather(x, I1, G1._replace(offset_dims=()), (1, 4)), TypeError,
     ["gather", "offset"]),
    (lambda x: lax.gather(x, I1, G1, (1, 4), mode="wrap"), ValueError, ["mode", "'wrap'"]),
    (lambda x: lax.gather(x, I1, G1, (1, 4), mode="fill", fill_value=1e40 + 0j), TypeError,
     ["gather", "'fill_value'"]),
    (lambda x: lax.gather(x, I1, ((1,), (0,), (0,)), (1, 4)), TypeError,
     ["gather", "'dimension_numbers'", "GatherDimensionNumbers"]),
    (lambda x: lax.gather(x, I1, G1._replace(operand_batching_dims=(0,),
                                             start_indices_batching_dims=(0,),
                                             collapsed_slice_dims=()), (1, 4)),
     TypeError, ["gather", "batching dimensions have sizes"]),
    (lambda x: lax.scatter(x, I1, pb.Array(np.zeros((2, 4), np.int32)), S1), TypeError,
     ["scatter", "'updates'", "dtype"]),
    (lambda x: lax.scatter_add(x, I1, pb.Array(np.zeros((3, 4), np.float32)), S1), TypeError,
     ["scatter-add", "scatter dimensions"]),
    (lambda x: lax.scatter_add(x, I1, pb.Array(np.zeros((2, 5), np.float32)), S1), TypeError,
     ["scatter-add", "update window dimension"]),
    (lambda x: lax.scatter_mul(x, I1, pb.Array(np.zeros((2,), np.float32)), S1), TypeError,
     ["scatter-mul", "'updates'", "rank"]),
    (lambda x: lax.scatter_min(x, I1, pb.Array(np.zeros((2, 4), np.float32)),
                               S1._replace(inserted_window_dims=(1, 0))), ValueError,
     ["scatter-min", "'inserted_window_dims'"]),
    (lambda x: lax.scatter_max(x, I1, pb.Array(np.zeros((2, 4), np.float32)),
                               S1._replace(scatter_dims_to_operand_dims=(0, 1))), TypeError,
     ["scatter-max", "'scatter_dims_to_operand_dims'"]),
    (lambda x: lax.scatter_add(pb.Array(np.zeros((3, 4), bool)), I1,
                               pb.Array(np.zeros((2, 4), bool)), S1), TypeError,
     ["scatter-add", "'operand'", "bool"]),
])
def test_errors_name_op_and_argument(call, err, words):
    x = pb.Array(np.zeros((3, 4), np.float32))
    with pytest.raises(err) as info:
        call(x)
    for w in words:
        assert w in str(info.value), (w, str(info.value))


def _gather_params(offs, coll, sim, obd, ibd, sizes, mode=0, fill=b""):
    from pullback.primitives import indexing as ix
    dims = (offs, coll, sim, obd, ibd)
    return ix._GATHER_PARAMS.pack(*ix._padded(sizes), mode, *map(len, dims), *ix._padded(*dims),
                                  fill)


def _scatter_params(uwd, iwd, sdod, obd, ibd, mode=0):
    from pullback.primitives import indexing as ix
    dims = (uwd, iwd, sdod, obd, ibd)
    return ix._SCATTER_PARAMS.pack(mode, *map(len, dims), *ix._padded(*dims))


def test_kernels_validate_everything_themselves():
    """The kernels never trust the params they get: bad dimension numbers raise, never crash
    (the user-facing errors come from the primitives' abstract evaluation, tested above)."""
    k = pb.backends.cpu.kernels
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    i = np.array([[0], [2]], np.int32)

    def g(*a, out=(2, 4), idx=i, **kw):
        return k.call(k.kernel("gather"), (x, idx), ((x.dtype, out),), _gather_params(*a, **kw))

    def s(u, *a, name="scatter-add", op=x, idx=i, **kw):
        return k.call(k.kernel(name), (op, idx, u), ((op.dtype, op.shape),),
                      _scatter_params(*a, **kw))

    fits = "gather: the dimension numbers do not fit the operands"
    for bad in [((1,), (5,), (0,), (), (), (1, 4)),        # collapsed dimension out of range
                ((1,), (0,), (0,), (), (), (1, 5)),        # slice larger than the operand
                ((1,), (0,), (0, 1), (), (), (1, 4)),      # start_index_map vs index vector
                ((), (0,), (0,), (), (), (1, 4)),          # offset_dims count
                ((1,), (0,), (0,), (), (), (2, 4)),        # collapsed dimension of size 2
                ((1,), (0, 0), (0,), (), (), (1, 4))]:     # repeated dimension
        with pytest.raises(TypeError, match=fits):
            g(*bad)
    with pytest.raises(TypeError, match=fits):
        g((1,), (0,), (0,), (), (), (1, 4), mode=3)
    with pytest.raises(TypeError, match="gather: the output shape does not fit"):
        g((1,), (0,), (0,), (), (), (1, 4), out=(2, 5))
    with pytest.raises(TypeError, match="gather: expected integer indices"):
        g((1,), (0,), (0,), (), (), (1, 4), idx=i.astype(np.float32))
    with pytest.raises(TypeError, match="gather: paired batching dimensions differ"):
        g((1,), (), (1,), (0,), (0,), (1, 1), idx=np.zeros((2, 1), np.int32), out=(2, 1))
    with pytest.raises(ValueError, match="gather: the kernel's params are 936 bytes, got 3"):
        k.call(k.kernel("gather"), (x, i), ((x.dtype, (2, 4)),), b"abc")
    u = np.ones((2, 4), np.float32)
    fits = "scatter-add: the dimension numbers do not fit the operands"
    with pytest.raises(TypeError, match=fits):  # update scatter dimension of size 3, indices 2
        s(np.ones((3, 4), np.float32), (1,), (0,), (0,), (), ())
    with pytest.raises(TypeError, match=fits):  # window larger than the operand
        s(np.ones((2, 5), np.float32), (1,), (0,), (0,), (), ())
    with pytest.raises(TypeError, match=fits):
        s(u, (1,), (0,), (0,), (), (), mode=3)
    with pytest.raises(TypeError, match="scatter-add: the operand's dtype has no such combiner"):
        s(u > 0, (1,), (0,), (0,), (), (), op=x > 0)
    with pytest.raises(TypeError, match="scatter: expected integer indices, updates"):
        s(u.astype(np.float64), (1,), (0,), (0,), (), (), name="scatter")


def test_large_gather_and_scatter_release_the_gil_and_thread():
    # big enough to take the threaded, GIL-released path; checked against NumPy take / add.at
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4000, 64)).astype(np.float32)
    idx = rng.integers(0, 4000, (30000, 1))
    dn = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    assert_same(lax.gather(pb.Array(x), pb.Array(idx), dn, (1, 64)), x[idx[:, 0]])
    sdn = SDN(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    u = rng.standard_normal((30000, 64)).astype(np.float32)
    want = x.copy()
    np.add.at(want, idx[:, 0], u)
    assert_same(lax.scatter_add(pb.Array(x), pb.Array(idx), pb.Array(u), sdn), want)
    assert math.isfinite(float(np.asarray(want).sum()))
