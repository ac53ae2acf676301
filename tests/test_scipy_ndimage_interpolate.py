"""pullback.scipy.ndimage.map_coordinates, pullback.scipy.interpolate.RegularGridInterpolator
and pullback.scipy.cluster.vq.vq against SciPy over hypothesis-drawn inputs (f32 and f64, every
mode and order, grids of 1-3 axes with trailing value axes), JAX's values where JAX differs from
SciPy (map_coordinates' "constant"/"wrap" are SciPy's "grid-" modes, order-0 ties round away
from zero; hard-coded, and JAX as an optional oracle), derivatives to second order in both
modes, vmap against a loop, jit against eager, and errors naming the argument."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import pullback as pb
from pullback import numpy as jnp
from pullback.scipy import cluster, interpolate, ndimage
from pullback.scipy.cluster.vq import vq
from pullback.scipy.interpolate import RegularGridInterpolator
from pullback.scipy.ndimage import map_coordinates
from pullback.test_util import check_grads, check_vmap

snd = pytest.importorskip("scipy.ndimage")
sinterp = pytest.importorskip("scipy.interpolate")
svq = pytest.importorskip("scipy.cluster.vq")

MODES = ["constant", "nearest", "wrap", "mirror", "reflect"]
SCIPY_MODE = {"constant": "grid-constant", "wrap": "grid-wrap", "nearest": "nearest",
              "mirror": "mirror", "reflect": "reflect"}
DTYPES = [np.float32, np.float64]
TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float64: dict(rtol=1e-12, atol=1e-12)}

shapes = st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple)


def coords_for(rng, shape, npoints, order):
    """Points inside and well outside the array (SciPy's order-0 ties differ from JAX's
    round-half-away, so order 0 keeps off exact half-integers; tested separately)."""
    cs = []
    for n in shape:
        c = rng.uniform(-2 * n - 3, 2 * n + 3, npoints)
        c[: npoints // 4] = rng.integers(-2 * n - 2, 2 * n + 2, npoints // 4)  # grid points
        if order == 0:
            frac = c - np.floor(c)
            c = np.where(np.abs(frac - 0.5) < 1e-3, c + 0.01, c)
        cs.append(c)
    return cs


# ---- map_coordinates ----

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("order", [0, 1])
@given(st.integers(0, 2**32 - 1), shapes, st.sampled_from(DTYPES), st.sampled_from(DTYPES))
def test_map_coordinates_matches_scipy(mode, order, seed, shape, dtype, cdtype):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    cs = coords_for(rng, shape, 24, order)
    got = map_coordinates(x, [c.astype(cdtype) for c in cs], order, mode=mode, cval=0.7)
    # SciPy evaluates in f64: compare against it on the rounded coordinates
    want = snd.map_coordinates(x.astype(np.float64), [c.astype(cdtype).astype(np.float64)
                                                      for c in cs],
                               order=order, mode=SCIPY_MODE[mode], cval=0.7)
    assert got.shape == (24,) and got.dtype == dtype
    tol = TOL[np.float32 if np.float32 in (dtype, cdtype) else np.float64]
    np.testing.assert_allclose(np.asarray(got, np.float64), want, **tol)


@given(st.integers(0, 2**32 - 1), st.sampled_from(MODES), st.sampled_from([0, 1]))
def test_map_coordinates_shapes(seed, mode, order):
    """Coordinates of any (broadcast) shape, 0-size ones, and a size-1 axis."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((4, 1, 3))
    c = [rng.uniform(-3, 6, (2, 5)), rng.uniform(-2, 2, (1, 5)), rng.uniform(-3, 5, (2, 1))]
    got = map_coordinates(x, c, order, mode=mode)
    assert got.shape == (2, 5)
    bc = np.broadcast_arrays(*c)
    want = map_coordinates(x, [b.ravel() for b in bc], order, mode=mode)
    np.testing.assert_allclose(np.asarray(got).ravel(), np.asarray(want))
    empty = map_coordinates(x, [np.zeros((0,))] * 3, order, mode=mode)
    assert empty.shape == (0,)


# jax 0.10.2: map_coordinates(jnp.arange(1., 5.), [C], order, mode=mode) at half-integers and
# far outside: order 0 rounds ties away from zero (SciPy: differently for some of them)
C = [-5.5, -4.0, -3.2, -1.5, -1.0, -0.5, 0.0, 0.3, 0.5, 2.5, 3.0, 3.4, 3.5, 4.0, 4.5, 7.7]
JAX_VALUES = {
    ("constant", 1): [0, 0, 0, 0, 0, 0.5, 1, 1.3, 1.5, 3.5, 4, 2.4, 2, 0, 0, 0],
    ("constant", 0): [0, 0, 0, 0, 0, 0, 1, 1, 2, 4, 4, 4, 0, 0, 0, 0],
    ("nearest", 1): [1, 1, 1, 1, 1, 1, 1, 1.3, 1.5, 3.5, 4, 4, 4, 4, 4, 4],
    ("nearest", 0): [1, 1, 1, 1, 1, 1, 1, 1, 2, 4, 4, 4, 4, 4, 4, 4],
    ("wrap", 1): [3.5, 1, 1.8, 3.5, 4, 2.5, 1, 1.3, 1.5, 3.5, 4, 2.8, 2.5, 1, 1.5, 1.9],
    ("wrap", 0): [3, 1, 2, 3, 4, 4, 1, 1, 2, 4, 4, 4, 1, 1, 2, 1],
    ("mirror", 1): [1.5, 3, 3.8, 2.5, 2, 1.5, 1, 1.3, 1.5, 3.5, 4, 3.6, 3.5, 3, 2.5, 2.7],
    ("mirror", 0): [1, 3, 4, 3, 2, 2, 1, 1, 2, 4, 4, 4, 3, 3, 2, 3],
    ("reflect", 1): [3.5, 4, 3.2, 1.5, 1, 1, 1, 1.3, 1.5, 3.5, 4, 4, 4, 4, 3.5, 1],
    ("reflect", 0): [3, 4, 3, 2, 1, 1, 1, 1, 2, 4, 4, 4, 4, 4, 3, 1],
}


@pytest.mark.parametrize("mode,order", sorted(JAX_VALUES))
def test_map_coordinates_jax_values(mode, order):
    got = map_coordinates(np.arange(1.0, 5.0), [np.array(C)], order, mode=mode)
    np.testing.assert_allclose(np.asarray(got), JAX_VALUES[mode, order], atol=1e-12)


def test_map_coordinates_integer_input_and_single_element():
    # jax 0.10.2: integer input rounds the interpolated value half away from zero
    xi = np.arange(12).reshape(3, 4)
    got = map_coordinates(xi, [np.array([0.5, 1.5, -0.5]), np.array([0.5, 2.5, 1.0])], 1)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(np.asarray(got), [3, 9, 1])
    # a size-1 axis: every mode but "constant" reads its one element (JAX)
    for mode in MODES:
        got = np.asarray(map_coordinates(np.array([2.0]), [np.array([-1.5, -0.5, 0.3, 1.5])], 1,
                                         mode=mode))
        want = [0, 1, 1.4, 0] if mode == "constant" else [2, 2, 2, 2]
        np.testing.assert_allclose(got, want)


@pytest.mark.parametrize("mode", MODES)
def test_map_coordinates_grads(mode):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3))
    # off the integer points (where the linear weights have kinks), inside and outside
    c = [np.array([0.3, 2.6, -1.4, 4.7]), np.array([1.2, -0.6, 2.3, 3.8])]
    check_grads(lambda x, c0, c1: map_coordinates(x, [c0, c1], 1, mode=mode, cval=0.5),
                (x, *c), order=2)
    check_grads(lambda x: map_coordinates(x, c, 0, mode=mode), (x,), order=2)
    # order 0 is piecewise constant in the coordinates
    g = pb.grad(lambda c0: map_coordinates(x, [c0, c[1]], 0, mode=mode).sum())(c[0])
    np.testing.assert_array_equal(np.asarray(g), 0.0)


@pytest.mark.parametrize("order", [0, 1])
def test_map_coordinates_vmap_and_jit(order):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 4))
    c0, c1 = rng.uniform(-2, 6, 6), rng.uniform(-2, 5, 6)
    for mode in MODES:
        check_vmap(lambda x, c0, c1: map_coordinates(x, [c0, c1], order, mode=mode),
                   (x, c0, c1))
        f = lambda x, c0, c1: map_coordinates(x, [c0, c1], order, mode=mode, cval=-1.0)  # noqa
        np.testing.assert_allclose(np.asarray(pb.jit(f)(x, c0, c1)), np.asarray(f(x, c0, c1)),
                                   rtol=1e-14)


def test_map_coordinates_errors():
    x = np.ones((3, 3))
    c = [np.zeros(2), np.zeros(2)]
    with pytest.raises(NotImplementedError, match="mode.*'grid-wrap'"):
        map_coordinates(x, c, 1, mode="grid-wrap")
    with pytest.raises(NotImplementedError, match="order.*2"):
        map_coordinates(x, c, 2)
    with pytest.raises(NotImplementedError, match="order"):
        map_coordinates(x, c, 3, mode="nearest")
    with pytest.raises(ValueError, match="coordinates.*input.ndim"):
        map_coordinates(x, c[:1], 1)


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=5)
def test_map_coordinates_jax_oracle(seed):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    from jax.scipy.ndimage import map_coordinates as jmc
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((3, 1, 4))
    cs = [np.round(rng.uniform(-8, 8, 40) * 2) / 2 + d for d in (0.0, 0.0, 0.25)]  # ties too
    for mode in MODES:
        for order in (0, 1):
            np.testing.assert_allclose(np.asarray(map_coordinates(x, cs, order, mode=mode)),
                                       np.asarray(jmc(x, cs, order, mode=mode)), atol=1e-13)


# ---- RegularGridInterpolator ----

@st.composite
def grids(draw):
    ndim = draw(st.integers(1, 3))
    sizes = draw(st.lists(st.integers(2, 5), min_size=ndim, max_size=ndim))
    trailing = draw(st.sampled_from([(), (2,)]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    points = tuple(np.cumsum(rng.uniform(0.2, 2.0, n)) - 1.0 for n in sizes)
    values = rng.standard_normal(tuple(sizes) + trailing)
    lo = np.array([p[0] for p in points]) - 1.0
    hi = np.array([p[-1] for p in points]) + 1.0
    xi = rng.uniform(lo, hi, (7, ndim))
    xi[:2] = rng.uniform(lo + 1.0, hi - 1.0, (2, ndim))  # some surely inside
    return points, values, xi


@pytest.mark.parametrize("method", ["linear", "nearest"])
@pytest.mark.parametrize("fill", ["nan", "none", "number"])
@given(grids(), st.sampled_from(DTYPES))
def test_regular_grid_matches_scipy(method, fill, grid, dtype):
    points, values, xi = grid
    fill_value = {"nan": np.nan, "none": None, "number": -3.5}[fill]
    got = RegularGridInterpolator(tuple(p.astype(dtype) for p in points), values.astype(dtype),
                                  method=method, fill_value=fill_value)(xi.astype(dtype))
    want = sinterp.RegularGridInterpolator(points, values, method=method, bounds_error=False,
                                           fill_value=fill_value)(xi)
    assert got.shape == want.shape and got.dtype == dtype
    np.testing.assert_allclose(np.asarray(got, np.float64), want,
                               **(dict(rtol=2e-5, atol=2e-5) if dtype == np.float32
                                  else TOL[np.float64]))


def test_regular_grid_point_forms():
    """xi as (..., ndim), as a tuple of coordinate arrays (broadcast), and 1-D."""
    g = (np.array([0.0, 1.0, 3.0]), np.array([-1.0, 0.0, 2.0, 5.0]))
    vals = np.arange(12.0).reshape(3, 4)
    f = RegularGridInterpolator(g, vals)
    s = sinterp.RegularGridInterpolator(g, vals)
    xi = np.array([[[0.5, 1.0], [2.0, -0.5]]])
    np.testing.assert_allclose(np.asarray(f(xi)), s(xi))
    a, b = np.array([[0.5], [2.0]]), np.array([[1.0, 4.0, -0.5]])
    np.testing.assert_allclose(np.asarray(f((a, b))), s((a, b)))
    np.testing.assert_allclose(np.asarray(f(np.array([0.5, 1.0]))), s(np.array([0.5, 1.0])))
    # jax's docstring example (x32 values, exact here too)
    h = RegularGridInterpolator((jnp.array([1, 2, 3]), jnp.array([4, 5, 6])),
                                jnp.array([[10, 20, 30], [40, 50, 60], [70, 80, 90]]))
    np.testing.assert_allclose(np.asarray(h(jnp.array([[1.5, 4.5], [2.2, 5.8]]))), [30.0, 64.0])


def test_regular_grid_pytree_grads_vmap_jit():
    rng = np.random.default_rng(3)
    g = (np.array([0.0, 1.0, 3.0]), np.array([-1.0, 0.0, 2.0, 5.0]))
    vals = rng.standard_normal((3, 4))
    xi = np.array([[0.4, 1.3], [2.1, -0.7], [1.6, 3.9]])
    f = RegularGridInterpolator(g, vals)
    leaves, tree = pb.tree_util.tree_flatten(f)
    assert len(leaves) == 4  # two grid axes, values, fill value
    np.testing.assert_allclose(np.asarray(pb.jit(lambda f, x: f(x))(f, xi)), np.asarray(f(xi)),
                               rtol=1e-14)
    check_grads(lambda v, x: RegularGridInterpolator(g, v)(x), (vals, xi), order=2)
    check_grads(lambda v, x: RegularGridInterpolator(g, v, "nearest")(x), (vals, xi), order=2)
    check_vmap(lambda v, x: RegularGridInterpolator(g, v)(x), (vals, xi))
    # vmapped over the interpolator itself (its values leaf batched)
    batch = np.stack([vals, 2 * vals])
    fb = RegularGridInterpolator(g, batch[0])
    fb.values = jnp.asarray(batch)
    axes = pb.tree_util.tree_unflatten(tree, [None, None, 0, None])
    got = pb.vmap(lambda f, x: f(x), in_axes=(axes, None))(fb, xi)
    np.testing.assert_allclose(np.asarray(got), np.stack([f(xi), 2 * np.asarray(f(xi))]),
                               rtol=1e-13)


def test_regular_grid_errors():
    g = (np.array([0.0, 1.0, 3.0]), np.array([-1.0, 0.0, 2.0, 5.0]))
    vals = np.zeros((3, 4))
    with pytest.raises(ValueError, match="method.*'cubic'"):
        RegularGridInterpolator(g, vals, method="cubic")
    with pytest.raises(ValueError, match="method.*'spline'"):
        RegularGridInterpolator(g, vals)(np.zeros((1, 2)), method="spline")
    with pytest.raises(NotImplementedError, match="bounds_error"):
        RegularGridInterpolator(g, vals, bounds_error=True)
    with pytest.raises(ValueError, match="3 point arrays"):
        RegularGridInterpolator(g + (np.arange(2.0),), vals)
    with pytest.raises(ValueError, match="xi"):
        RegularGridInterpolator(g, vals)(np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"points\[1\]"):
        RegularGridInterpolator((g[0], g[1][:3]), vals)
    with pytest.raises(ValueError, match="fill_value"):
        RegularGridInterpolator(g, vals, fill_value=1j)


# ---- vq ----

@given(st.integers(0, 2**32 - 1), st.integers(0, 6), st.integers(1, 4), st.sampled_from([1, 3]),
       st.sampled_from(DTYPES))
def test_vq_matches_scipy(seed, m, k, n, dtype):
    rng = np.random.default_rng(seed)
    obs = rng.standard_normal((m, n)).astype(dtype)
    book = rng.standard_normal((k, n)).astype(dtype)
    if n == 1:
        obs, book = obs[:, 0], book[:, 0]
    code, dist = vq(obs, book)
    wcode, wdist = svq.vq(obs.astype(np.float64), book.astype(np.float64))
    assert code.shape == dist.shape == (m,) and dist.dtype == dtype
    np.testing.assert_array_equal(np.asarray(code), wcode)
    np.testing.assert_allclose(np.asarray(dist, np.float64), wdist, **TOL[dtype])


def test_vq_ties_integers_grads_vmap_jit():
    code, dist = vq(np.array([[0.0], [1.5]]), np.array([[1.0], [-1.0], [2.0]]))
    np.testing.assert_array_equal(np.asarray(code), [0, 0])  # the first of equal distances
    code, dist = vq(np.array([[1, 2]]), np.array([[0, 0], [1, 1]]))  # integers: as floats
    assert dist.dtype == np.float64
    np.testing.assert_allclose(np.asarray(dist), [1.0])
    rng = np.random.default_rng(4)
    obs, book = rng.standard_normal((5, 3)), rng.standard_normal((4, 3))
    check_grads(lambda o, b: vq(o, b)[1], (obs, book), order=2)
    check_vmap(lambda o, b: vq(o, b)[1], (obs, book))
    got = pb.jit(vq)(obs, book)
    for g, e in zip(got, vq(obs, book)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-14)


def test_vq_errors():
    with pytest.raises(ValueError, match="same rank"):
        vq(np.zeros((3, 2)), np.zeros(3))
    with pytest.raises(ValueError, match="ndim"):
        vq(np.zeros((3, 2, 1)), np.zeros((3, 2, 1)))
    with pytest.raises(ValueError, match="features"):
        vq(np.zeros((3, 2)), np.zeros((3, 4)))


def test_module_exports():
    assert pb.scipy.ndimage is ndimage and pb.scipy.interpolate is interpolate
    assert pb.scipy.cluster is cluster and cluster.vq.vq is vq
