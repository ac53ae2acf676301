"""lax.reduce_window, its primitives (reduce_window_sum/max/min/mul, reduce_window_sum_transpose,
select_and_gather_add, select_and_scatter_add) and lax.reduce with arbitrary computations.

Forward values against loop oracles written here from XLA's definition (dilate, pad with the
init value, slide the dilated window) and against the primitives' NumPy references, over
hypothesis-drawn shapes (0-size and size-1 dims, windows larger than the input with padding),
windows, strides, paddings (negative too) and dilations, every dtype and several layouts;
derivatives against finite differences to order 2 in both modes; vmap against a loop; jit
against eager; ties in max/min sending the gradient to the window's first extreme (JAX's
values); bad inputs naming the argument."""
import contextlib
import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pullback as pb
import pullback.numpy as jnp
from pullback import lax
from pullback.primitives import reduce_window as rw
from pullback.test_util import LAYOUTS, check_grads, check_vmap, layout
from pullback.tracer import dtypes

FLOATS = (dtypes.float32, dtypes.float64, dtypes.float16, dtypes.bfloat16)
DTYPES = FLOATS + (dtypes.int32, dtypes.int8, dtypes.uint8, dtypes.int64)
COMP = {"sum": lax.add, "max": lax.max, "min": lax.min, "mul": lax.mul}


def rand(rng, shape, dtype, op="sum"):
    """Values every dtype holds exactly, whose window sums (or, for mul, products of powers of
    two) stay exact; integers repeat, so max/min windows have ties."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if op == "mul":
        vals = [1, 2, -1, 0.5] if dtype.kind == "f" else [1, 2, -1, 3]
        if dtype.kind == "u":
            vals = [1, 2, 3]
        return np.asarray(rng.choice(vals, shape), dtype)
    if dtype.kind in "iu":
        return np.asarray(rng.integers(0 if dtype.kind == "u" else -3, 4, shape), dtype)
    return np.asarray(rng.integers(-4, 5, shape) / 2, dtype)


# ---- the loop oracle ----

def window_elements(shape, pos, geo):
    """For output position ``pos``: the operand index of each window element in row-major
    window order, None for padding and the holes of base dilation."""
    for k in itertools.product(*map(range, geo["window_dimensions"])):
        idx = []
        for i, (o, kk) in enumerate(zip(pos, k)):
            p = o * geo["window_strides"][i] + kk * geo["window_dilation"][i] - geo["padding"][i][0]
            b = geo["base_dilation"][i]
            if p < 0 or p % b or p // b >= shape[i]:
                idx = None
                break
            idx.append(p // b)
        yield None if idx is None else tuple(idx)


def out_shape(shape, geo):
    out = []
    for i, n in enumerate(shape):
        padded = (max(n - 1, 0) * geo["base_dilation"][i] + (1 if n else 0)
                  + sum(geo["padding"][i]))
        ext = (geo["window_dimensions"][i] - 1) * geo["window_dilation"][i] + 1
        out.append(max(0, (padded - ext) // geo["window_strides"][i] + 1) if padded >= ext
                   else 0)
    return tuple(out)


def oracle(x, op, geo):
    """Window reductions by loops, in float64 (exact for rand's values) or Python ints
    (wrapped back by the cast)."""
    ident = rw.identity(op, x.dtype)
    wide = x.astype(np.float64) if x.dtype.kind == "f" or x.dtype == dtypes.bfloat16 else x
    out = np.empty(out_shape(x.shape, geo), object)
    f = {"sum": lambda a, b: a + b, "mul": lambda a, b: a * b,
         "max": lambda a, b: a if a >= b or a != a else b,
         "min": lambda a, b: a if a <= b or a != a else b}[op]
    for pos in np.ndindex(*out.shape):
        acc = ident.item() if hasattr(ident, "item") else ident
        for idx in window_elements(x.shape, pos, geo):
            v = wide[idx].item() if idx is not None else acc if op in ("max", "min") else (
                0 if op == "sum" else 1)
            acc = f(acc, v)
        out[pos] = acc
    if x.dtype.kind in "iu":
        return np.array([int(v) for v in out.reshape(-1)], dtype=object).astype(
            np.int64).astype(x.dtype).reshape(out.shape) if out.size else np.zeros(out.shape,
                                                                                  x.dtype)
    return out.astype(np.float64).astype(x.dtype) if out.size else np.zeros(out.shape, x.dtype)


def first_extreme(x, select, geo):
    """Per window, the operand index of its first max (min), NaN counting as the extreme;
    None when the window holds no operand element."""
    out = np.empty(out_shape(x.shape, geo), object)
    wide = x.astype(np.float64)
    for pos in np.ndindex(*out.shape):
        best, pick = None, None
        for idx in window_elements(x.shape, pos, geo):
            if idx is None:
                continue
            v = wide[idx]
            if pick is None or (v > best if select == "max" else v < best) or (
                    v != v and best == best):
                best, pick = v, idx
        out[pos] = pick
    return out


def gather_oracle(t, x, select, geo):
    picks = first_extreme(x, select, geo)
    return np.array([0.0 if p is None else float(t[p]) for p in picks.reshape(-1)]).reshape(
        picks.shape).astype(t.dtype)


def scatter_oracle(src, x, select, geo):
    picks = first_extreme(x, select, geo)
    out = np.zeros(x.shape, np.float64)
    for pos in np.ndindex(*picks.shape):
        if picks[pos] is not None:
            out[picks[pos]] += float(src[pos])
    return out.astype(src.dtype)


def sum_transpose_oracle(ct, shape, geo):
    out = np.zeros(shape, np.float64)
    for pos in np.ndindex(*ct.shape):
        for idx in window_elements(shape, pos, geo):
            if idx is not None:
                out[idx] += float(ct[pos])
    return out.astype(ct.dtype)


# ---- geometry strategy ----

@st.composite
def geometries(draw, max_nd=3, min_nd=0):
    nd = draw(st.integers(min_nd, max_nd))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=nd, max_size=nd)))
    ints = lambda lo, hi: tuple(draw(st.lists(st.integers(lo, hi), min_size=nd, max_size=nd)))
    geo = dict(window_dimensions=ints(1, 4), window_strides=ints(1, 3),
               padding=tuple(zip(ints(-1, 3), ints(-1, 3))), base_dilation=ints(1, 3),
               window_dilation=ints(1, 2))
    for i, n in enumerate(shape):  # negative padding may not crop past the dilated operand
        dil = (n - 1) * geo["base_dilation"][i] + 1 if n else 0
        lo, hi = geo["padding"][i]
        if dil + lo + hi < 0:
            geo["padding"] = geo["padding"][:i] + ((max(lo, 0), max(hi, 0)),) + \
                geo["padding"][i + 1:]
    return shape, geo


def _lax_reduce_window(x, op, geo):
    return lax.reduce_window(x, rw.identity(op, x.dtype), COMP[op],
                             geo["window_dimensions"], geo["window_strides"], geo["padding"],
                             geo["base_dilation"], geo["window_dilation"])


# ---- forward ----

@given(geometries(), st.sampled_from(["sum", "max", "min", "mul"]), st.sampled_from(DTYPES),
       st.sampled_from(LAYOUTS), st.integers(0, 2**16))
def test_monoids_match_the_loop_oracle(case, op, dtype, kind, seed):
    shape, geo = case
    x = layout(rand(np.random.default_rng(seed), shape, dtype, op), kind)
    got = np.asarray(_lax_reduce_window(x, op, geo))
    want = oracle(x, op, geo)
    assert got.dtype == dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(rw.MONOIDS[op].reference(x, **geo), want)


@given(geometries(), st.sampled_from(["max", "min"]), st.integers(0, 2**16))
def test_bool_max_is_or_min_is_and(case, op, seed):
    shape, geo = case
    x = rand(np.random.default_rng(seed), shape, np.bool_)
    got = np.asarray(_lax_reduce_window(x, op, geo))
    want = oracle(x.astype(np.int64), op, geo)
    ident = op == "min"  # windows of padding only give the identity: False for max, True for min
    want = np.where(want == rw.identity(op, np.int64), ident, want).astype(bool)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op", ["sum", "max", "min", "mul"])
def test_monoids_bind_their_primitive(op):
    jaxpr = pb.make_jaxpr(lambda x: _lax_reduce_window(x, op, dict(
        window_dimensions=(2,), window_strides=(1,), padding=((0, 0),), base_dilation=(1,),
        window_dilation=(1,))))(np.zeros(4, np.float32))
    assert f"reduce_window_{op}" in str(jaxpr)


def test_nan_propagates_and_float16_sums_round_once():
    x = np.array([1.0, np.nan, 2.0, 3.0], np.float32)
    np.testing.assert_array_equal(np.asarray(lax.reduce_window(x, -np.inf, lax.max, (2,))),
                                  [np.nan, np.nan, 3.0])
    np.testing.assert_array_equal(np.asarray(lax.reduce_window(x, np.inf, lax.min, (2,))),
                                  [np.nan, np.nan, 2.0])
    # 2048 + 1 + 1 in float16: rounding after each add gives 2048, float32 accumulation 2050
    h = np.array([2048, 1, 1], np.float16)
    assert float(lax.reduce_window(h, 0.0, lax.add, (3,))[0]) == 2050.0


@given(geometries(), st.sampled_from(["max", "min"]), st.sampled_from(FLOATS),
       st.sampled_from((dtypes.float32, dtypes.int32, dtypes.float16)), st.sampled_from(LAYOUTS),
       st.integers(0, 2**16))
def test_select_primitives_match_the_oracle(case, select, tdtype, xdtype, kind, seed):
    shape, geo = case
    rng = np.random.default_rng(seed)
    x = layout(rand(rng, shape, xdtype), kind)  # few distinct values: ties everywhere
    t = layout(rand(rng, shape, tdtype), kind)
    got = np.asarray(rw.select_and_gather_add_p.bind(jnp.asarray(t), jnp.asarray(x),
                                                     select=select, **geo))
    np.testing.assert_array_equal(got, gather_oracle(t, x, select, geo))
    np.testing.assert_array_equal(rw._gather_reference(t, x, select=select, **geo),
                                  gather_oracle(t, x, select, geo))
    src = rand(rng, out_shape(shape, geo), tdtype)
    got = np.asarray(rw.select_and_scatter_add_p.bind(jnp.asarray(src), jnp.asarray(x),
                                                      select=select, **geo))
    np.testing.assert_array_equal(got, scatter_oracle(src, x, select, geo))
    np.testing.assert_array_equal(rw._scatter_reference(src, x, select=select, **geo),
                                  scatter_oracle(src, x, select, geo))


@given(geometries(), st.sampled_from(FLOATS + (dtypes.int32,)), st.sampled_from(LAYOUTS),
       st.integers(0, 2**16))
def test_sum_transpose_matches_the_oracle(case, dtype, kind, seed):
    shape, geo = case
    ct = layout(rand(np.random.default_rng(seed), out_shape(shape, geo), dtype), kind)
    got = np.asarray(rw.reduce_window_sum_transpose_p.bind(jnp.asarray(ct),
                                                           operand_shape=shape, **geo))
    want = sum_transpose_oracle(ct, shape, geo)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(
        rw._sum_transpose_reference(ct, operand_shape=shape, **geo), want)


def test_pooling_shapes_nchw_and_nhwc_fast_paths():
    rng = np.random.default_rng(0)
    for shape, window, strides, pads in [((2, 3, 7, 9), (1, 1, 2, 2), (1, 1, 2, 2), "VALID"),
                                         ((2, 3, 7, 9), (1, 1, 2, 2), (1, 1, 2, 2), "SAME"),
                                         ((2, 7, 9, 5), (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
                                         ((2, 7, 9, 5), (1, 2, 2, 1), (1, 2, 2, 1), "VALID")]:
        x = rng.standard_normal(shape).astype(np.float32)
        for op in ("max", "min", "sum"):
            got = np.asarray(lax.reduce_window(x, rw.identity(op, np.float32), COMP[op], window,
                                               strides, pads))
            geo = dict(window_dimensions=window, window_strides=strides,
                       padding=_same(shape, window, strides, pads),
                       base_dilation=(1,) * 4, window_dilation=(1,) * 4)
            np.testing.assert_allclose(got, oracle(x, op, geo), rtol=1e-6, atol=1e-5)


def _same(shape, window, strides, kind):
    if kind == "VALID":
        return ((0, 0),) * len(shape)
    out = []
    for n, w, s in zip(shape, window, strides):
        total = max((-(-n // s) - 1) * s + w - n, 0)
        out.append((total // 2, total - total // 2))
    return tuple(out)


@pytest.mark.parametrize("padding,want", [
    ("SAME", ((1, 1), (0, 1))), ("SAME_LOWER", ((1, 1), (1, 0))), ("VALID", ((0, 0), (0, 0))),
    ("same", ((1, 1), (0, 1)))])
def test_string_padding_is_jaxs(padding, want):
    # JAX: padtype_to_pads((5, 6), (3, 3), (2, 2), padding): the window (3, 2) dilated (1, 2)
    x = np.arange(30.0).reshape(5, 6)
    got = lax.reduce_window(x, 0.0, lax.add, (3, 2), (2, 2), padding, window_dilation=(1, 2))
    ref = lax.reduce_window(x, 0.0, lax.add, (3, 2), (2, 2), want, window_dilation=(1, 2))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(ref))


def test_shape_tuple():
    assert lax.reduce_window_shape_tuple((5, 6), (2, 2), (1, 2), ((0, 0), (1, 1))) == (4, 4)
    assert lax.reduce_window_shape_tuple((5,), (7,), (1,), ((0, 0),)) == (0,)
    assert lax.reduce_window_shape_tuple((5,), (7,), (1,), ((1, 1),)) == (1,)
    assert lax.reduce_window_shape_tuple((3,), (2,), (1,), ((0, 0),), (2,), (2,)) == (3,)


def test_window_larger_than_input_and_empty_operands():
    x = np.arange(3.0)
    assert lax.reduce_window(x, 0.0, lax.add, (5,)).shape == (0,)
    np.testing.assert_array_equal(np.asarray(lax.reduce_window(x, 0.0, lax.add, (5,), (1,),
                                                               ((2, 2),))), [3.0, 3.0, 3.0])
    # an empty operand padded: windows of padding give the identity
    np.testing.assert_array_equal(np.asarray(lax.reduce_window(
        np.zeros((0,), np.float32), -np.inf, lax.max, (1,), (1,), ((1, 1),))), [-np.inf] * 2)
    g = pb.grad(lambda x: lax.reduce_window(x, -np.inf, lax.max, (1,), (1,), ((1, 1),)).sum())
    assert np.asarray(g(np.zeros((0,)))).shape == (0,)


# ---- derivatives ----

GEOS = [
    ("1d", (5,), dict(window_dimensions=(2,), window_strides=(1,), padding=((0, 0),),
                      base_dilation=(1,), window_dilation=(1,))),
    ("2d_pool", (2, 4, 5), dict(window_dimensions=(1, 2, 2), window_strides=(1, 2, 2),
                               padding=((0, 0), (0, 0), (0, 1)), base_dilation=(1, 1, 1),
                               window_dilation=(1, 1, 1))),
    ("overlap_pad", (3, 4), dict(window_dimensions=(2, 3), window_strides=(1, 2),
                                 padding=((1, 0), (1, 2)), base_dilation=(1, 1),
                                 window_dilation=(1, 1))),
    ("dilated", (4, 3), dict(window_dimensions=(2, 2), window_strides=(2, 1),
                             padding=((1, 1), (0, -1)), base_dilation=(2, 1),
                             window_dilation=(1, 2))),
    ("scalar", (), dict(window_dimensions=(), window_strides=(), padding=(),
                        base_dilation=(), window_dilation=())),
]
GIDS = [g[0] for g in GEOS]


def _distinct(shape, seed=0):
    """Distinct float64 values (no ties: finite differences see one selected element)."""
    n = math.prod(shape)
    v = np.random.default_rng(seed).permutation(n).astype(np.float64) / max(n, 1)
    return (v + 0.1 * np.random.default_rng(seed + 1).random(n)).reshape(shape)


@pytest.mark.parametrize("op", ["sum", "max", "min", "mul"])
@pytest.mark.parametrize("name,shape,geo", GEOS, ids=GIDS)
def test_derivatives_order_two_both_modes(op, name, shape, geo):
    x = _distinct(shape) + (0.5 if op == "mul" else 0.0)
    check_grads(lambda x: _lax_reduce_window(x, op, geo), (x,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("select", ["max", "min"])
@pytest.mark.parametrize("name,shape,geo", GEOS, ids=GIDS)
def test_select_primitives_derivatives(select, name, shape, geo):
    x = _distinct(shape)
    t = _distinct(shape, 3)
    src = _distinct(out_shape(shape, geo), 4)
    gather = lambda t: rw.select_and_gather_add_p.bind(t, jnp.asarray(x), select=select, **geo)
    scatter = lambda s: rw.select_and_scatter_add_p.bind(s, jnp.asarray(x), select=select, **geo)
    check_grads(gather, (t,), order=2, modes=("fwd", "rev"))
    check_grads(scatter, (src,), order=2, modes=("fwd", "rev"))
    # the operand only selects: its derivative is zero
    g = pb.grad(lambda x: rw.select_and_gather_add_p.bind(jnp.asarray(t), x, select=select,
                                                          **geo).sum())(x)
    np.testing.assert_array_equal(np.asarray(g), np.zeros(shape))


@pytest.mark.parametrize("name,shape,geo", GEOS, ids=GIDS)
def test_sum_transpose_derivatives(name, shape, geo):
    ct = _distinct(out_shape(shape, geo))
    f = lambda c: rw.reduce_window_sum_transpose_p.bind(c, operand_shape=shape, **geo)
    check_grads(f, (ct,), order=2, modes=("fwd", "rev"))
    # the two are adjoint: <sum(x), c> == <x, sum_transpose(c)>
    x = _distinct(shape, 7)
    lhs = np.vdot(np.asarray(rw.reduce_window_sum_p.bind(jnp.asarray(x), **geo)), ct)
    np.testing.assert_allclose(lhs, np.vdot(x, np.asarray(f(jnp.asarray(ct)))), rtol=1e-12)


@pytest.mark.parametrize("stride", [1, 2, 3])
@pytest.mark.parametrize("kind", ["contiguous", "strided", "transposed"])
def test_select_ties_every_row_loop(stride, kind):
    """Ties along the last dimension, in the contiguous stride-1 and stride-2 loops and the
    general strided one: the first position wins."""
    x = layout(np.array([[1.0, 1.0, 1.0, 2.0, 2.0, 0.0, 2.0]] * 2, np.float32), kind)
    t = np.arange(14, dtype=np.float32).reshape(2, 7)
    geo = dict(window_dimensions=(1, 3), window_strides=(1, stride), padding=((0, 0), (0, 0)),
               base_dilation=(1, 1), window_dilation=(1, 1))
    for select in ("max", "min"):
        got = np.asarray(rw.select_and_gather_add_p.bind(jnp.asarray(t), jnp.asarray(x),
                                                         select=select, **geo))
        np.testing.assert_array_equal(got, gather_oracle(t, np.asarray(x), select, geo))


def test_max_gradient_goes_to_the_first_maximum():
    # JAX 0.10: grad(sum(reduce_window(x, -inf, max, (2,), (1,), 'VALID')))([1, 1, 1, 2])
    g = pb.grad(lambda x: lax.reduce_window(x, -np.inf, lax.max, (2,), (1,)).sum())
    np.testing.assert_array_equal(np.asarray(g(np.array([1.0, 1.0, 1.0, 2.0]))),
                                  [1.0, 1.0, 0.0, 1.0])
    # 2x2 windows of equal values: the top-left element of each window
    x = np.ones((1, 4, 4, 1))
    g = np.asarray(pb.grad(lambda x: pb.nn.max_pool(x, (2, 2), (2, 2)).sum())(x))[0, :, :, 0]
    np.testing.assert_array_equal(g, np.kron(np.ones((2, 2)), [[1, 0], [0, 0]]))
    gmin = pb.grad(lambda x: lax.reduce_window(x, np.inf, lax.min, (3,), (1,)).sum())
    np.testing.assert_array_equal(np.asarray(gmin(np.array([2.0, 1.0, 1.0, 1.0]))),
                                  [0.0, 2.0, 0.0, 0.0])


# ---- vmap ----

VGEO = dict(window_dimensions=(2, 2), window_strides=(1, 2), padding=((1, 0), (0, 1)),
            base_dilation=(1, 2), window_dilation=(2, 1))


@pytest.mark.parametrize("op", ["sum", "max", "min", "mul"])
def test_vmap_monoids(op):
    check_vmap(lambda x: rw.MONOIDS[op].bind(x, **VGEO), (_distinct((3, 4)),))


def test_vmap_sum_transpose_and_select_primitives():
    shape = (3, 4)
    oshape = out_shape(shape, VGEO)
    check_vmap(lambda c: rw.reduce_window_sum_transpose_p.bind(c, operand_shape=shape, **VGEO),
               (_distinct(oshape),))
    for select in ("max", "min"):
        check_vmap(lambda t, x: rw.select_and_gather_add_p.bind(t, x, select=select, **VGEO),
                   (_distinct(shape, 1), _distinct(shape, 2)))
        check_vmap(lambda s, x: rw.select_and_scatter_add_p.bind(s, x, select=select, **VGEO),
                   (_distinct(oshape, 1), _distinct(shape, 2)))


def test_vmap_folds_the_axis_into_the_window():
    f = lambda x: rw.reduce_window_max_p.bind(x, **VGEO)
    jaxpr = str(pb.make_jaxpr(pb.vmap(f, in_axes=1))(np.zeros((3, 5, 4))))
    assert "window_dimensions=(2, 1, 2)" in jaxpr and "while" not in jaxpr


def test_vmap_of_grad_of_max_pool():
    x = _distinct((3, 4, 4, 2))
    f = pb.grad(lambda x: pb.nn.max_pool(x, (2, 2), (2, 2)).sum())
    got = np.asarray(pb.vmap(f)(x))
    want = np.stack([np.asarray(f(x[i])) for i in range(3)])
    np.testing.assert_array_equal(got, want)


# ---- jit ----

@pytest.mark.parametrize("op", ["sum", "max", "min", "mul"])
@pytest.mark.parametrize("name,shape,geo", GEOS, ids=GIDS)
def test_jit_equals_eager(op, name, shape, geo):
    x = _distinct(shape).astype(np.float32)
    f = lambda x: _lax_reduce_window(x, op, geo)
    np.testing.assert_array_equal(np.asarray(pb.jit(f)(x)), np.asarray(f(x)))
    g = pb.grad(lambda x: f(x).sum())
    np.testing.assert_array_equal(np.asarray(pb.jit(g)(x)), np.asarray(g(x)))


# ---- generic computations ----

def generic_oracle(x, init, f, geo):
    out = np.empty(out_shape(x.shape, geo))
    for pos in np.ndindex(*out.shape):
        acc = init
        for idx in window_elements(x.shape, pos, geo):
            if idx is not None:  # padding and holes are skipped, as XLA does
                acc = f(acc, float(x[idx]))
        out[pos] = acc
    return out


@given(geometries(max_nd=2), st.integers(0, 2**16))
def test_generic_computation_matches_the_oracle(case, seed):
    shape, geo = case
    x = rand(np.random.default_rng(seed), shape, np.float64)
    f = lambda a, b: a * 0.5 + b
    got = lax.reduce_window(x, 1.0, f, geo["window_dimensions"], geo["window_strides"],
                            geo["padding"], geo["base_dilation"], geo["window_dilation"])
    np.testing.assert_allclose(np.asarray(got), generic_oracle(x, 1.0, f, geo), rtol=1e-12)


def test_generic_pytree_jit_grad_vmap():
    x = _distinct((5, 4))
    geo = ((2, 2), (1, 1), ((1, 0), (0, 1)))

    def argmax_pairs(x):  # (value, index) pairs: a pytree reduction
        idx = jnp.arange(x.size, dtype=np.float64).reshape(x.shape)

        def comp(a, b):
            take = b[0] > a[0]
            return (lax.select(take, b[0], a[0]), lax.select(take, b[1], a[1]))
        return lax.reduce_window((x, idx), (-np.inf, -1.0), comp, *geo)

    v, i = argmax_pairs(x)
    np.testing.assert_array_equal(np.asarray(v), np.asarray(
        lax.reduce_window(x, -np.inf, lax.max, *geo)))
    flat = x.reshape(-1)
    np.testing.assert_array_equal(flat[np.asarray(i).astype(int)], np.asarray(v))
    jv, ji = pb.jit(argmax_pairs)(x)
    np.testing.assert_array_equal(np.asarray(jv), np.asarray(v))
    np.testing.assert_array_equal(np.asarray(ji), np.asarray(i))
    soft = lambda x: lax.reduce_window(x, 0.0, lambda a, b: a + lax.sin(b) * b, *geo)
    check_grads(soft, (x,), order=2, modes=("fwd", "rev"))
    check_vmap(soft, (x,))
    # a traced init value (under jit) takes the generic path with the same values
    f = pb.jit(lambda x, i: lax.reduce_window(x, i, lax.add, *geo))
    np.testing.assert_allclose(np.asarray(f(x, 0.0)),
                               np.asarray(lax.reduce_window(x, 0.0, lax.add, *geo)))
    # a non-identity init enters each window once; padding and holes are skipped (JAX 0.10)
    np.testing.assert_array_equal(np.asarray(lax.reduce_window(
        np.array([1.0, 2, 3, 4]), 5.0, lambda a, b: a * 10 + b, (3,), (1,), ((1, 0),))),
        [512.0, 5123.0, 5234.0])
    np.testing.assert_array_equal(np.asarray(lax.reduce_window(
        np.array([1.0, 2, 3, 4]), 5.0, lambda a, b: a * 10 + b, (2,), (1,), ((0, 0),), (2,))),
        [51.0, 52.0, 52.0, 53.0, 53.0, 54.0])


@contextlib.contextmanager
def _jax_x64(jax):
    """JAX's 64-bit mode for an oracle, restored after (later tests use its default)."""
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", old)


def test_generic_matches_jax():
    jax = pytest.importorskip("jax")
    x = _distinct((4, 5))
    f = lambda a, b: a * 0.5 + b * b
    with _jax_x64(jax):
        want = np.asarray(jax.lax.reduce_window(x, 1.0, f, (2, 3), (1, 2), ((1, 0), (1, 1)),
                                                (1, 2), (2, 1)))
    got = lax.reduce_window(x, 1.0, f, (2, 3), (1, 2), ((1, 0), (1, 1)), (1, 2), (2, 1))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12)


@given(geometries(min_nd=1), st.sampled_from(["sum", "max", "min"]), st.integers(0, 2**16))
def test_monoids_match_jax(case, op, seed):
    jax = pytest.importorskip("jax")
    shape, geo = case
    x = rand(np.random.default_rng(seed), shape, np.float64)
    jop = {"sum": jax.lax.add, "max": jax.lax.max, "min": jax.lax.min}[op]
    args = (geo["window_dimensions"], geo["window_strides"], geo["padding"],
            geo["base_dilation"], geo["window_dilation"])
    with _jax_x64(jax):
        want = np.asarray(jax.lax.reduce_window(x, float(rw.identity(op, np.float64)), jop,
                                                *args))
    np.testing.assert_array_equal(np.asarray(_lax_reduce_window(x, op, geo)), want)
    if op != "sum" and all(p >= 0 for pr in geo["padding"] for p in pr) and \
            set(geo["base_dilation"]) == {1} and set(geo["window_dilation"]) == {1}:
        ct = rand(np.random.default_rng(seed + 1), np.shape(want), np.float64)
        with _jax_x64(jax):
            g = np.asarray(jax.vjp(lambda x: jax.lax.reduce_window(
                x, float(rw.identity(op, np.float64)), jop, *args), x)[1](ct)[0])
        got = pb.vjp(lambda x: _lax_reduce_window(x, op, geo), x)[1](ct)[0]
        np.testing.assert_array_equal(np.asarray(got), g)


# ---- lax.reduce ----

def test_reduce_monoids_bind_reductions():
    x = np.arange(12.0).reshape(3, 4)
    for f, init, name in [(lax.add, 0.0, "reduce_sum"), (lax.mul, 1.0, "reduce_prod"),
                          (lax.max, -np.inf, "reduce_max"), (lax.min, np.inf, "reduce_min")]:
        assert name in str(pb.make_jaxpr(lambda x: lax.reduce(x, init, f, (0,)))(x))
    i = np.arange(12, dtype=np.int32).reshape(3, 4)
    assert "reduce_or" in str(pb.make_jaxpr(lambda x: lax.reduce(x, 0, lax.bitwise_or, (1,)))(i))
    np.testing.assert_array_equal(np.asarray(lax.reduce(i, 0, lax.bitwise_xor, (1,))),
                                  np.bitwise_xor.reduce(i, axis=1))


@given(st.lists(st.integers(0, 5), min_size=1, max_size=3), st.data())
def test_reduce_generic_matches_numpy(shape, data):
    x = rand(np.random.default_rng(sum(shape)), tuple(shape), np.float64)
    dims = tuple(sorted(data.draw(st.sets(st.integers(0, len(shape) - 1)))))
    got = lax.reduce(x, 0.0, lambda a, b: a + b * b, dims)
    np.testing.assert_allclose(np.asarray(got), np.sum(x * x, axis=dims), rtol=1e-12)
    got = lax.reduce(x, -np.inf, lambda a, b: lax.max(a, b), dims)  # not `lax.max` itself
    want = np.max(x, axis=dims, initial=-np.inf)
    np.testing.assert_array_equal(np.asarray(got), want)


def test_reduce_generic_pytree_jit_grad_vmap():
    x = _distinct((4, 5))
    idx = np.arange(20, dtype=np.int32).reshape(4, 5)

    def argmax(x, i):
        def comp(a, b):
            take = (b[0] > a[0]) | ((b[0] == a[0]) & (b[1] < a[1]))
            return (lax.select(take, b[0], a[0]), lax.select(take, b[1], a[1]))
        return lax.reduce((x, i), (-np.inf, np.int32(2**31 - 1)), comp, (1,))

    v, i = argmax(x, idx)
    np.testing.assert_array_equal(np.asarray(i), idx[np.arange(4), x.argmax(1)])
    jv, ji = pb.jit(argmax)(x, idx)
    np.testing.assert_array_equal(np.asarray(ji), np.asarray(i))
    prod = lambda x: lax.reduce(x, 1.0, lambda a, b: a * b + 0.0, (0,))
    check_grads(prod, (x,), order=2, modes=("fwd", "rev"))
    check_vmap(prod, (x,))
    np.testing.assert_array_equal(np.asarray(lax.reduce(np.zeros((0, 3)), 2.0,
                                                        lambda a, b: a + b, (0,))), [2.0] * 3)
    # short reductions fold in order from the init (JAX 0.10's values); long ones pairwise
    np.testing.assert_array_equal(np.asarray(lax.reduce(
        np.arange(1.0, 7).reshape(2, 3), 5.0, lambda a, b: a * 10 + b, (0,))), [514, 525, 536])
    long = np.arange(301.0)
    np.testing.assert_allclose(np.asarray(lax.reduce(long, 1.0, lambda a, b: a + b, (0,))),
                               long.sum() + 1)
    np.testing.assert_array_equal(np.asarray(lax.reduce(
        (long, -long), (0.0, 0.0), lambda a, b: (lax.max(a[0], b[0]), a[1] + b[1]), (0,))[0]),
        300.0)


# ---- errors ----

@pytest.mark.parametrize("call,err,words", [
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (2,)), TypeError, "window_dimensions"),
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (0, 1)), TypeError, "window_dimensions"),
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 1), (0, 1)), TypeError, "window_strides"),
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 1), (1,)), TypeError, "window_strides"),
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 1), None, ((0, 0),)), TypeError,
     "padding"),
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 1), None, "FULL"), RuntimeError,
     "padding"),
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 1), None, ((-9, 0), (0, 0))), ValueError,
     "padding"),
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 1), None, "VALID", (0, 1)), TypeError,
     "base_dilation"),
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 1), None, "VALID", None, (1, -1)),
     TypeError, "window_dilation"),
    (lambda x: lax.reduce_window(x, np.zeros(2, np.float32), lax.add, (1, 1)), TypeError,
     "init_value"),
    (lambda x: lax.reduce_window(x, np.int32(0), lambda a, b: a + b, (1, 1)), TypeError,
     "init_value"),
    (lambda x: lax.reduce_window((x, x), 0.0, lax.add, (1, 1)), ValueError, "init_value"),
    (lambda x: lax.reduce_window(x, 0.0, lambda a, b: (a, b), (1, 1)), ValueError,
     "computation"),
    (lambda x: lax.reduce_window(x > 0, False, lax.add, (1, 1)), TypeError, "operand"),
    (lambda x: rw.select_and_gather_add_p.bind(x[:1], x, select="max", **_G2), TypeError,
     "tangents"),
    (lambda x: rw.select_and_gather_add_p.bind(x, x, select="mean", **_G2), ValueError,
     "select"),
    (lambda x: rw.reduce_window_sum_transpose_p.bind(x, operand_shape=(9, 9), **_G2), TypeError,
     "cotangent"),
    (lambda x: lax.reduce(x, 0.0, lax.add, (2,)), ValueError, "dimensions"),
    (lambda x: lax.reduce((x, x), (0.0,), lax.add, (0,)), ValueError, "init_values"),
])
def test_bad_inputs_name_the_argument(call, err, words):
    with pytest.raises(err, match=words):
        call(np.zeros((3, 4), np.float32))


_G2 = dict(window_dimensions=(1, 1), window_strides=(1, 1), padding=((0, 0), (0, 0)),
           base_dilation=(1, 1), window_dilation=(1, 1))


@pytest.mark.parametrize("shape", [(2, 3, 7, 9), (1, 1, 4, 4), (2, 2, 5, 6), (3, 2, 2), (1, 0, 4, 4),
                                   (2, 1, 1, 5)])
@pytest.mark.parametrize("select", ["max", "min"])
def test_pool2x2_fast_paths_ties_nan_odd_sizes(shape, select):
    """float32 2x2/2 windows over the last two dims (csrc's one-pass NCHW paths): ties go to
    the first position, NaN wins, rows and columns past the last window get 0."""
    rng = np.random.default_rng(sum(shape))
    x = rng.integers(0, 3, shape).astype(np.float32)
    if x.size:
        x.reshape(-1)[rng.integers(0, x.size, 3)] = np.nan
    nd = len(shape)
    geo = dict(window_dimensions=(1,) * (nd - 2) + (2, 2), window_strides=(1,) * (nd - 2) + (2, 2),
               padding=((0, 0),) * nd, base_dilation=(1,) * nd, window_dilation=(1,) * nd)
    for op in ("max", "min", "sum", "mul"):
        got = np.asarray(rw.MONOIDS[op].bind(jnp.asarray(x), **geo))
        np.testing.assert_array_equal(got, oracle(x, op, geo))
    src = rng.standard_normal(out_shape(shape, geo)).astype(np.float32)
    got = np.asarray(rw.select_and_scatter_add_p.bind(jnp.asarray(src), jnp.asarray(x),
                                                      select=select, **geo))
    np.testing.assert_array_equal(got, scatter_oracle(src, x, select, geo))
    t = rng.standard_normal(shape).astype(np.float32)
    got = np.asarray(rw.select_and_gather_add_p.bind(jnp.asarray(t), jnp.asarray(x),
                                                     select=select, **geo))
    np.testing.assert_array_equal(got, gather_oracle(t, x, select, geo))
    got = np.asarray(rw.reduce_window_sum_transpose_p.bind(jnp.asarray(src), operand_shape=shape,
                                                           **geo))
    np.testing.assert_array_equal(got, sum_transpose_oracle(src, shape, geo))
    # a transposed (non-contiguous) source and operand take the general path: same values
    xt = np.asarray(jnp.asarray(x.T).T) if nd > 2 else x
    got_t = np.asarray(rw.select_and_scatter_add_p.bind(jnp.asarray(src.T).T, jnp.asarray(x.T).T,
                                                        select=select, **geo))
    np.testing.assert_array_equal(got_t, scatter_oracle(src, xt, select, geo))


@pytest.mark.parametrize("shape", [(2, 7, 9, 3), (1, 4, 4, 5), (3, 5, 6, 1), (2, 1, 5, 2),
                                   (6, 6, 4), (2, 0, 4, 3)])
@pytest.mark.parametrize("select", ["max", "min"])
def test_pool2x2_nhwc_paths_ties_nan_odd_sizes(shape, select):
    """float32 2x2/2 windows over dimensions -3 and -2 with the channels last (csrc's NHWC
    paths): the same values as the oracle, ties to the first position, NaN winning."""
    rng = np.random.default_rng(sum(shape) + 1)
    x = rng.integers(0, 3, shape).astype(np.float32)
    if x.size:
        x.reshape(-1)[rng.integers(0, x.size, 3)] = np.nan
    nd = len(shape)
    geo = dict(window_dimensions=(1,) * (nd - 3) + (2, 2, 1),
               window_strides=(1,) * (nd - 3) + (2, 2, 1), padding=((0, 0),) * nd,
               base_dilation=(1,) * nd, window_dilation=(1,) * nd)
    for op in ("max", "min", "sum", "mul"):
        got = np.asarray(rw.MONOIDS[op].bind(jnp.asarray(x), **geo))
        np.testing.assert_array_equal(got, oracle(x, op, geo))
    src = rng.standard_normal(out_shape(shape, geo)).astype(np.float32)
    got = np.asarray(rw.select_and_scatter_add_p.bind(jnp.asarray(src), jnp.asarray(x),
                                                      select=select, **geo))
    np.testing.assert_array_equal(got, scatter_oracle(src, x, select, geo))
    g = pb.grad(lambda x: (pb.nn.max_pool(x, (2, 2), (2, 2)) * src).sum())
    if select == "max" and nd == 4:
        np.testing.assert_array_equal(np.asarray(g(x)), scatter_oracle(src, x, "max", geo))


def test_monoid_init_of_another_dtype_is_jaxs():
    # JAX 0.10: a concrete init equal to the identity in the operand's dtype selects the
    # monoid whatever its own dtype; the generic path needs matching dtypes (TypeError)
    x = np.arange(6, dtype=np.float16)
    np.testing.assert_array_equal(
        np.asarray(lax.reduce_window(x, np.float32(-np.inf), lax.max, (2,))), x[1:])
    assert np.asarray(lax.reduce(x, np.float32(0), lax.add, (0,))).dtype == np.float16
    with pytest.raises(TypeError, match="init_value"):
        lax.reduce_window(x, np.float32(1), lambda a, b: a + b, (2,))


def test_generic_results_keep_the_operands_weak_type():
    # a Python-scalar init is weakly typed; an empty window grid must not hand it back as is
    # (under x64 a weak float32 + 1.5 would become float64)
    x = jnp.asarray(np.ones((2, 2), np.float32))
    for window in ((1, 3), (1, 2)):
        y = lax.reduce_window(x, 0.0, lambda a, b: a + b, window)
        assert y.dtype == np.float32 and not y.weak_type
    for z in (x, jnp.zeros((0, 2), np.float32)):
        y = lax.reduce(z, 0.0, lambda a, b: a + b, (0,))
        assert y.dtype == np.float32 and not y.weak_type
