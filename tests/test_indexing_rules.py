"""jvp, transpose and batching rules of the indexing primitives (primitives/indexing.py):
dynamic_slice, dynamic_update_slice, gather and the scatters. Derivatives against finite
differences (orders 1 and 2, both modes) in every out-of-bounds mode, with duplicate and
out-of-bounds indices; vmap against a loop with indices batched or not (and differing per
lane); exact cotangents of overwritten, losing and dropped updates; ties of scatter-min/max."""

import numpy as np
import pytest

import pullback as pb
from pullback import lax
from pullback.lax import GatherDimensionNumbers as GDN
from pullback.lax import ScatterDimensionNumbers as SDN
from pullback.primitives import indexing as ix
from pullback.test_util import check_grads, check_vmap
from pullback.tracer.core import NoRule



def _rand(*shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed + 10 * len(shape) + sum(shape)).standard_normal(
        shape).astype(dtype)


def _is_float(a):
    return np.asarray(a).dtype.kind in "fc"


def check_grads_floats(f, args, **kw):
    """check_grads over the floating arguments, the integer ones (indices) held fixed."""
    pos = [i for i, a in enumerate(args) if _is_float(a)]

    def g(*floats):
        full = list(args)
        for i, v in zip(pos, floats):
            full[i] = v
        return f(*full)
    check_grads(g, [args[i] for i in pos], order=2, modes=("fwd", "rev"), **kw)


# ---- the geometries (dimension numbers) every gather/scatter case runs through ----

ROWS = np.array([[1], [4], [1], [7], [-2]], np.int32)  # a duplicate and out-of-bounds rows
GEOMETRIES = {
    # take whole rows of a (5, 3) operand
    "rows": dict(operand=(5, 3), indices=ROWS, updates=(5, 3),
                 gather=GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)),
                 scatter=SDN(update_window_dims=(1,), inserted_window_dims=(0,),
                             scatter_dims_to_operand_dims=(0,)),
                 slice_sizes=(1, 3)),
    # single points of a (4, 5) operand, two index components, in reversed order
    "points": dict(operand=(4, 5), indices=np.array([[4, 3], [0, 0], [4, 3], [2, 1]], np.int64),
                   updates=(4,),
                   gather=GDN(offset_dims=(), collapsed_slice_dims=(0, 1),
                              start_index_map=(1, 0)),
                   scatter=SDN(update_window_dims=(), inserted_window_dims=(0, 1),
                               scatter_dims_to_operand_dims=(1, 0)),
                   slice_sizes=(1, 1)),
    # overlapping (2, 3) windows of a (4, 5) operand
    "windows": dict(operand=(4, 5), indices=np.array([[0, 1], [1, 2], [3, 0]], np.int32),
                    updates=(3, 2, 3),
                    gather=GDN(offset_dims=(1, 2), collapsed_slice_dims=(),
                               start_index_map=(0, 1)),
                    scatter=SDN(update_window_dims=(1, 2), inserted_window_dims=(),
                                scatter_dims_to_operand_dims=(0, 1)),
                    slice_sizes=(2, 3)),
    # operand dimension 0 paired with indices dimension 0 (explicit batching dims)
    "batching": dict(operand=(3, 4, 2), indices=np.array([[[1], [3]], [[0], [0]], [[2], [5]]],
                                                         np.int32),
                     updates=(3, 2, 2),
                     gather=GDN(offset_dims=(2,), collapsed_slice_dims=(1,),
                                start_index_map=(1,), operand_batching_dims=(0,),
                                start_indices_batching_dims=(0,)),
                     scatter=SDN(update_window_dims=(2,), inserted_window_dims=(1,),
                                 scatter_dims_to_operand_dims=(1,), operand_batching_dims=(0,),
                                 scatter_indices_batching_dims=(0,)),
                     slice_sizes=(1, 1, 2)),
    # a 0-d operand: empty index vectors
    "scalar": dict(operand=(), indices=np.zeros((2, 0), np.int32), updates=(2,),
                   gather=GDN(offset_dims=(), collapsed_slice_dims=(), start_index_map=()),
                   scatter=SDN(update_window_dims=(), inserted_window_dims=(),
                               scatter_dims_to_operand_dims=()),
                   slice_sizes=()),
}
MODES = ["clip", "fill", "promise_in_bounds"]
SCATTERS = {"scatter": lax.scatter, "scatter_add": lax.scatter_add,
            "scatter_mul": lax.scatter_mul, "scatter_min": lax.scatter_min,
            "scatter_max": lax.scatter_max}


def _gather_case(geo, mode, fill_value=None):
    g = GEOMETRIES[geo]
    f = lambda x, i: lax.gather(x, i, g["gather"], g["slice_sizes"], mode=mode,
                                fill_value=fill_value)
    return f, (_rand(*g["operand"]), g["indices"])


def _scatter_case(name, geo, mode):
    g = GEOMETRIES[geo]
    f = lambda x, i, u: SCATTERS[name](x, i, u, g["scatter"], mode=mode)
    return f, (_rand(*g["operand"]), g["indices"], _rand(*g["updates"], seed=1))


def _kept_promise(geo, args):
    """The indices clamped into bounds: PROMISE_IN_BOUNDS's gather clamps but its transpose
    drops (JAX's rules), so its derivatives are adjoint only where the promise holds (the
    out-of-bounds values are pinned in tests/test_jax_divergences.py)."""
    g = GEOMETRIES[geo]
    hi = np.array([g["operand"][d] - g["slice_sizes"][d] for d in g["gather"].start_index_map],
                  args[1].dtype)
    return (args[0], np.clip(args[1], 0, hi)) + tuple(args[2:])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("geo", list(GEOMETRIES))
def test_gather_derivatives_and_vmap(geo, mode):
    f, args = _gather_case(geo, mode, fill_value=2.5 if mode == "fill" else None)
    if mode == "promise_in_bounds":
        args = _kept_promise(geo, args)
    check_grads_floats(f, args)
    check_vmap(f, args)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("geo", list(GEOMETRIES))
@pytest.mark.parametrize("name", list(SCATTERS))
def test_scatter_derivatives_and_vmap(name, geo, mode):
    f, args = _scatter_case(name, geo, mode)
    if mode == "promise_in_bounds" and name == "scatter_add":  # see _kept_promise
        args = _kept_promise(geo, args)
    check_grads_floats(f, args)
    check_vmap(f, args)


@pytest.mark.parametrize("name", list(SCATTERS))
def test_scatter_float32_derivatives(name):
    f, (x, i, u) = _scatter_case(name, "rows", "fill")
    check_grads_floats(f, (x.astype(np.float32), i, u.astype(np.float32)))


def test_scatter_mul_derivatives_with_zero_updates_at_duplicates():
    # positions 1 and 2 each get two updates: one zero at 1, two zeros at 2
    i = np.array([[1], [1], [2], [2], [3]], np.int32)
    u = np.array([[0.0, 2.0], [3.0, 0.0], [0.0, 0.0], [0.0, 1.5], [-2.0, 4.0]])
    f = lambda x, u: lax.scatter_mul(x, i, u, GEOMETRIES["rows"]["scatter"])
    check_grads(f, (_rand(5, 2), u), order=2)
    # three zeros at one position: exact to first order
    i3 = np.array([[0], [0], [0], [0]], np.int32)
    u3 = np.array([[0.0, 1.0], [0.0, 2.0], [2.0, 0.0], [0.0, 3.0]])
    f3 = lambda x, u: lax.scatter_mul(x, i3, u, GEOMETRIES["rows"]["scatter"])
    check_grads(f3, (_rand(5, 2), u3), order=1)
    # and the promise of unique indices takes JAX's shortcut (exact for unique indices)
    j = np.array([[3], [0], [4]], np.int32)
    g = lambda x, u: lax.scatter_mul(x, j, u, GEOMETRIES["rows"]["scatter"], unique_indices=True)
    check_grads(g, (_rand(5, 2), np.array([[0.0, 2.0], [3.0, -1.0], [0.5, 0.0]])), order=2)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
@pytest.mark.parametrize("geo", ["rows", "windows", "batching"])
def test_gather_scatter_vmap_index_dtypes(geo, dtype):
    g = GEOMETRIES[geo]
    idx = np.abs(g["indices"]).astype(dtype)
    f, (x, _) = _gather_case(geo, "clip")
    check_vmap(f, (x, idx))
    f, (x, _, u) = _scatter_case("scatter", geo, "fill")
    check_vmap(f, (x, idx, u))


# ---- vmap with indices that differ per lane (check_vmap repeats integer arguments) ----

def _lanes(f, args, axes, n=3, seed=0):
    """vmap(f) against a loop, with integer arguments drawn per lane."""
    rng = np.random.default_rng(seed)
    lanes = []
    for a, ax in zip(args, axes):
        a = np.asarray(a)
        if ax is None:
            lanes.append([a] * n)
        elif a.dtype.kind in "iu":
            hi = 6
            lanes.append([rng.integers(-1 if a.dtype.kind == "i" else 0, hi, a.shape)
                          .astype(a.dtype) for _ in range(n)])
        else:
            lanes.append([a + k for k in range(n)])
    batched = [lanes[k][0] if ax is None else np.stack(lanes[k], axis=ax)
               for k, ax in enumerate(axes)]
    got = pb.vmap(f, in_axes=tuple(axes))(*batched)
    for b in range(n):
        want = f(*[lanes[k][b] for k in range(len(args))])
        for g, w in zip(pb.tree_util.tree_leaves(got), pb.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(np.take(np.asarray(g), b, axis=0), np.asarray(w),
                                       rtol=1e-12, atol=1e-12, err_msg=f"lane {b}")


@pytest.mark.parametrize("geo", ["rows", "points", "windows", "batching"])
def test_vmap_with_per_lane_indices(geo):
    f, args = _gather_case(geo, "fill", fill_value=-3.0)
    for axes in [(None, 0), (1, 0), (0, args[1].ndim)]:
        _lanes(f, args, axes)
    for name in SCATTERS:
        f, args = _scatter_case(name, geo, "clip")
        for axes in [(None, 0, None), (0, 1, 0), (None, 0, 1)]:
            _lanes(f, args, axes)


@pytest.mark.parametrize("name", ["scatter", "scatter_add", "scatter_mul", "scatter_max"])
def test_vmap_of_vjp_with_per_lane_duplicates(name):
    f, (x, i, u) = _scatter_case(name, "rows", "fill")
    ct = _rand(5, 3, seed=5)
    vjp_fn = lambda x, i, u: pb.vjp(lambda x, u: f(x, i, u), x, u)[1](ct)
    _lanes(vjp_fn, (x, i, u), (0, 0, 0), seed=3)
    _lanes(vjp_fn, (x, i, u), (None, 1, None), seed=4)


# ---- dynamic_slice and dynamic_update_slice ----

DYNAMIC = [
    ("slice", lambda x, a, b: lax.dynamic_slice(x, (a, b), (2, 3)),
     (_rand(4, 5), np.int32(1), np.int64(4))),  # the second start is clamped to 2
    ("slice_negative", lambda x, a: lax.dynamic_slice(x, (a, 0, 1), (1, 2, 0)),
     (_rand(3, 2, 2), np.int32(-1))),
    ("slice_0d", lambda x: lax.dynamic_slice(x, (), ()), (np.float64(2.0),)),
    ("update", lambda x, u, a, b: lax.dynamic_update_slice(x, u, (a, b)),
     (_rand(4, 5), _rand(2, 3, seed=1), np.int32(3), np.uint8(1))),
    ("update_empty", lambda x, u, a: lax.dynamic_update_slice(x, u, (a, 0)),
     (_rand(3, 2), _rand(0, 2, seed=1), np.int32(1))),
    ("update_0d", lambda x, u: lax.dynamic_update_slice(x, u, ()),
     (np.float64(1.0), np.float64(-1.0))),
]


@pytest.mark.parametrize("name,f,args", DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_dynamic_slices_derivatives_and_vmap(name, f, args):
    check_grads_floats(f, args)
    check_vmap(f, args)


def test_dynamic_slices_with_per_lane_starts():
    _, f, args = DYNAMIC[0]
    for axes in [(None, 0, None), (0, None, 0), (1, 0, 0)]:
        _lanes(f, args, axes)
    _, f, args = DYNAMIC[3]
    for axes in [(None, None, 0, None), (0, 1, None, 0), (1, None, 0, 0)]:
        _lanes(f, args, axes)


def test_dynamic_slice_vjp_values():
    x, ct = _rand(4, 5), _rand(2, 3, seed=2)
    (g,) = pb.vjp(lambda x: lax.dynamic_slice(x, (1, 4), (2, 3)), x)[1](ct)
    want = np.zeros((4, 5))
    want[1:3, 2:5] = ct  # the start 4 was clamped to 2
    np.testing.assert_array_equal(np.asarray(g), want)
    u = _rand(2, 3, seed=3)
    ct = _rand(4, 5, seed=4)
    gx, gu = pb.vjp(lambda x, u: lax.dynamic_update_slice(x, u, (3, 1)), x, u)[1](ct)
    want = ct.copy()
    want[2:4, 1:4] = 0
    np.testing.assert_array_equal(np.asarray(gx), want)
    np.testing.assert_array_equal(np.asarray(gu), ct[2:4, 1:4])


# ---- exact cotangents and tangents, computed independently ----

def test_scatter_vjp_overwritten_losing_and_dropped_updates():
    x, u = _rand(5, 3), _rand(5, 3, seed=1)
    ct = _rand(5, 3, seed=2)
    f = lambda x, u: lax.scatter(x, ROWS, u, GEOMETRIES["rows"]["scatter"], mode="fill")
    gx, gu = (np.asarray(c) for c in pb.vjp(f, x, u)[1](ct))
    # rows 1 (twice: the later update wins) and 4 are written; rows 7 and -2 are dropped
    want_x = ct.copy()
    want_x[[1, 4]] = 0
    want_u = np.zeros((5, 3))
    want_u[1], want_u[2] = ct[4], ct[1]
    np.testing.assert_array_equal(gx, want_x)
    np.testing.assert_array_equal(gu, want_u)
    # clip mode clamps instead: row 7 lands on row 4 after row 4's own update, -2 on row 0
    f = lambda x, u: lax.scatter(x, ROWS, u, GEOMETRIES["rows"]["scatter"], mode="clip")
    gx, gu = (np.asarray(c) for c in pb.vjp(f, x, u)[1](ct))
    want_x = ct.copy()
    want_x[[0, 1, 4]] = 0
    want_u = np.zeros((5, 3))
    want_u[2], want_u[3], want_u[4] = ct[1], ct[4], ct[0]
    np.testing.assert_array_equal(gx, want_x)
    np.testing.assert_array_equal(gu, want_u)


def test_scatter_add_and_gather_vjp_values():
    x, u = _rand(5, 3), _rand(5, 3, seed=1)
    ct = _rand(5, 3, seed=2)
    dn = GEOMETRIES["rows"]
    gx, gu = pb.vjp(lambda x, u: lax.scatter_add(x, ROWS, u, dn["scatter"]), x, u)[1](ct)
    np.testing.assert_array_equal(np.asarray(gx), ct)
    want_u = np.zeros((5, 3))
    want_u[[0, 1, 2]] = ct[[1, 4, 1]]  # the out-of-bounds updates are dropped
    np.testing.assert_array_equal(np.asarray(gu), want_u)
    # a gather in clip mode reads clamped rows 1, 4, 1, 4, 0: their cotangents add up there
    (g,) = pb.vjp(lambda x: lax.gather(x, ROWS, dn["gather"], (1, 3), mode="clip"), x)[1](ct)
    want = np.zeros((5, 3))
    np.add.at(want, [1, 4, 1, 4, 0], ct)
    np.testing.assert_allclose(np.asarray(g), want)


def test_gather_fill_value_has_no_tangent():
    dn = GEOMETRIES["rows"]
    x, t = _rand(5, 3), _rand(5, 3, seed=1)
    out, tan = pb.jvp(lambda x: lax.gather(x, ROWS, dn["gather"], (1, 3), mode="fill",
                                           fill_value=9.0), (x,), (t,))
    np.testing.assert_array_equal(np.asarray(out)[3:], 9.0)
    np.testing.assert_array_equal(np.asarray(tan), np.concatenate([t[[1, 4, 1]],
                                                                   np.zeros((2, 3))]))


@pytest.mark.parametrize("name", ["scatter_min", "scatter_max"])
def test_scatter_extremum_ties_average_the_tangents(name):
    i = np.array([[0], [0], [1], [1]], np.int32)
    x = np.array([1.0, 5.0, 2.0])
    u = np.array([1.0, 1.0, 7.0, 0.0]) if name == "scatter_max" else np.array([1.0, 1.0, 0.0, 7.])
    tx, tu = np.array([3.0, 6.0, 9.0]), np.array([6.0, 12.0, 100.0, 200.0])
    dn = SDN(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    f = lambda x, u: SCATTERS[name](x, i, u, dn)
    out, tan = pb.jvp(f, (x, u), (tx, tu))
    # position 0: a three-way tie (operand, two updates); position 1: one update wins;
    # position 2: untouched
    np.testing.assert_array_equal(np.asarray(out), [1.0, 7.0 if name == "scatter_max" else 0.0,
                                                    2.0])
    np.testing.assert_allclose(np.asarray(tan), [(3 + 6 + 12) / 3, 100.0, 9.0])


def test_jit_of_grad_matches_eager():
    dn = GEOMETRIES["windows"]

    def f(x, u):
        y = lax.scatter_max(x, dn["indices"], u, dn["scatter"])
        z = lax.gather(y, dn["indices"], dn["gather"], dn["slice_sizes"])
        return lax.reduce_sum(lax.mul(z, z), (0, 1, 2))
    args = (_rand(4, 5), _rand(3, 2, 3, seed=1))
    eager = pb.grad(f, argnums=(0, 1))(*args)
    jitted = pb.jit(pb.grad(f, argnums=(0, 1)))(*args)
    for e, j in zip(eager, jitted):
        np.testing.assert_allclose(np.asarray(j), np.asarray(e), rtol=1e-12)


def test_rules_on_the_reference_backend_match_cpu():
    f, args = _scatter_case("scatter", "windows", "clip")
    ct = _rand(4, 5, seed=3)
    run = lambda: [np.asarray(c) for c in
                   pb.vjp(lambda x, u: f(x, args[1], u), args[0], args[2])[1](ct)]
    cpu = run()
    pb.config.update("backend", "reference")
    try:
        ref = run()
    finally:
        pb.config.update("backend", "cpu")
    for c, r in zip(cpu, ref):
        np.testing.assert_allclose(r, c, rtol=1e-12)


# ---- every rule slot is filled, or says why it cannot be ----

def test_every_rule_is_filled_or_explained():
    for prim in (ix.dynamic_slice_p, ix.dynamic_update_slice_p, ix.gather_p, ix.scatter_p,
                 ix.scatter_add_p, ix.scatter_mul_p, ix.scatter_min_p, ix.scatter_max_p):
        for slot in ("jvp", "transpose", "batch"):
            rule = getattr(prim, slot)
            if prim in (ix.scatter_min_p, ix.scatter_max_p) and slot == "transpose":
                assert isinstance(rule, NoRule) and rule.kind == "not_applicable"
            else:
                assert callable(rule) and not isinstance(rule, NoRule), (prim, slot)
