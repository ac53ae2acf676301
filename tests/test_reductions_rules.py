"""Rules of the reductions and cumulative ops (jvp, transpose, batching): derivatives against
finite differences (both modes, second order, under jit, on the reference backend) and against
independent NumPy derivatives at the edge semantics (zeros in products, ties and NaN in
max/min and cummax/cummin, huge and infinite cumlogsumexp inputs); vmap against a Python loop
with the batch dimension before, between and after the reduced axes."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import pullback as pb
from pullback import lax
from pullback.primitives import reductions as R
from pullback.primitives.rules import UndefPrimal, Zero
from pullback.test_util import check_grads, check_vmap
from pullback.tracer import dtypes
from pullback.tracer.avals import ShapedArray
from pullback.tracer.core import NoRule

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

FAMILY = ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or",
          "reduce_xor", "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin",
          "cumlogsumexp")



def normal(shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def near_one(shape, seed=0):
    """Magnitudes in [0.5, 1.5] with random signs: products stay well conditioned."""
    rng = np.random.default_rng(seed)
    return rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)


# (id, function, operand): every differentiable primitive, its axis params on both sides
GRAD_CASES = [
    ("reduce_sum", lambda x: lax.reduce_sum(x, (1,)), normal((3, 4))),
    ("reduce_sum-2axes", lambda x: lax.reduce_sum(x, (2, 0)), normal((2, 3, 2))),
    ("reduce_sum-0d", lambda x: lax.reduce_sum(x, ()), normal(())),
    ("reduce_prod", lambda x: lax.reduce_prod(x, (1,)), near_one((3, 4))),
    ("reduce_prod-2axes", lambda x: lax.reduce_prod(x, (2, 0)), near_one((2, 3, 2))),
    ("reduce_prod-all", lambda x: lax.reduce_prod(x, (0, 1)), near_one((2, 3))),
    ("reduce_prod-none", lambda x: lax.reduce_prod(x, ()), near_one((2,))),
    ("reduce_max", lambda x: lax.reduce_max(x, (0,)), normal((3, 4))),
    ("reduce_max-2axes", lambda x: lax.reduce_max(x, (0, 2)), normal((2, 3, 2))),
    ("reduce_min", lambda x: lax.reduce_min(x, (1,)), normal((3, 4))),
    ("cumsum", lambda x: lax.cumsum(x, 1), normal((3, 4))),
    ("cumsum-reverse", lambda x: lax.cumsum(x, 0, reverse=True), normal((3, 4))),
    ("cumprod", lambda x: lax.cumprod(x, 1), near_one((2, 5))),
    ("cumprod-reverse", lambda x: lax.cumprod(x, 0, reverse=True), near_one((5, 2))),
    ("cummax", lambda x: lax.cummax(x, 1), normal((2, 5))),
    ("cummax-reverse", lambda x: lax.cummax(x, 0, reverse=True), normal((5, 2))),
    ("cummin", lambda x: lax.cummin(x, 0), normal((5, 2))),
    ("cummin-reverse", lambda x: lax.cummin(x, 1, reverse=True), normal((2, 5))),
    ("cumlogsumexp", lambda x: lax.cumlogsumexp(x, 1), normal((2, 5))),
    ("cumlogsumexp-reverse", lambda x: lax.cumlogsumexp(x, 0, reverse=True), normal((5, 2))),
]
GRAD_IDS = [c[0] for c in GRAD_CASES]


@pytest.mark.parametrize("name,f,x", GRAD_CASES, ids=GRAD_IDS)
def test_second_order_derivatives_match_finite_differences(name, f, x):
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("f,x", [
    (lambda x: lax.reduce_sum(x, (0,)), normal((3, 2)) + 1j * normal((3, 2), 1)),
    (lambda x: lax.reduce_prod(x, (1,)), near_one((2, 3)) + 0.5j * near_one((2, 3), 1)),
    (lambda x: lax.cumsum(x, 1), normal((2, 3)) + 1j * normal((2, 3), 1)),
    (lambda x: lax.cumprod(x, 0), near_one((3, 2)) + 0.5j * near_one((3, 2), 1)),
], ids=["reduce_sum", "reduce_prod", "cumsum", "cumprod"])
def test_complex_derivatives_are_holomorphic(f, x):
    check_grads(f, (x,), order=1)


@pytest.mark.parametrize("name,f,x", GRAD_CASES, ids=GRAD_IDS)
def test_float32_derivatives(name, f, x):
    check_grads(f, (x.astype(np.float32),), order=1, atol=5e-2, rtol=5e-2)


def _loss(f, x):
    w = normal(np.shape(f(x)), seed=7)
    return lambda x: lax.reduce_sum(f(x) * w, tuple(range(w.ndim)))


@pytest.mark.parametrize("name,f,x", GRAD_CASES, ids=GRAD_IDS)
def test_jit_of_grad_equals_grad(name, f, x):
    loss = _loss(f, x)
    want = np.asarray(pb.grad(loss)(x))
    np.testing.assert_allclose(np.asarray(pb.jit(pb.grad(loss))(x)), want, rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(np.asarray(pb.grad(pb.jit(loss))(x)), want, rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize("name,f,x", GRAD_CASES[::3], ids=GRAD_IDS[::3])
def test_reference_backend_derivatives_agree_with_cpu(name, f, x):
    loss = _loss(f, x)
    want = np.asarray(pb.grad(loss)(x))
    pb.config.update("backend", "reference")
    try:
        got = np.asarray(pb.grad(loss)(x))
    finally:
        pb.config.update("backend", "cpu")
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


# ---- the linear rules, called directly ----

@pytest.mark.parametrize("shape,axes", [((3, 4), (1,)), ((2, 3, 4), (0, 2)), ((), ()),
                                        ((2, 0), (0,))])
def test_reduce_sum_transposes_to_a_broadcast(shape, axes):
    aval = ShapedArray(shape, np.dtype(np.float64))
    out_shape = tuple(n for i, n in enumerate(shape) if i not in axes)
    ct = normal(out_shape, 3)
    (got,) = R.reduce_sum_p.transpose(pb.Array(ct), UndefPrimal(aval), axes=axes)
    want = np.broadcast_to(np.expand_dims(ct, axes), shape)
    np.testing.assert_array_equal(np.asarray(got), want)
    (zero,) = R.reduce_sum_p.transpose(Zero(ShapedArray(out_shape, aval.dtype)),
                                       UndefPrimal(aval), axes=axes)
    assert type(zero) is Zero and zero.aval.shape == shape


@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_transposes_to_the_opposite_cumsum(reverse):
    aval = ShapedArray((3, 5), np.dtype(np.float64))
    ct = normal((3, 5), 4)
    (got,) = R.cumsum_p.transpose(pb.Array(ct), UndefPrimal(aval), axis=1, reverse=reverse)
    # <ct, cumsum(t)> = <transpose(ct), t> for the unit tangents: row sums of the other order
    want = np.cumsum(ct, 1) if reverse else np.cumsum(ct[:, ::-1], 1)[:, ::-1]
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-14)
    (zero,) = R.cumsum_p.transpose(Zero(aval), UndefPrimal(aval), axis=1, reverse=reverse)
    assert type(zero) is Zero


def test_linear_vjps_need_no_other_rules():
    x = normal((3, 4))
    ct = normal((3,), 1)
    _, pull = pb.vjp(lambda x: lax.reduce_sum(x, (1,)), x)
    np.testing.assert_array_equal(np.asarray(pull(ct)[0]), np.broadcast_to(ct[:, None], (3, 4)))
    _, pull = pb.vjp(lambda x: lax.cumsum(x, 0), x)
    ct2 = normal((3, 4), 2)
    np.testing.assert_allclose(np.asarray(pull(ct2)[0]), np.cumsum(ct2[::-1], 0)[::-1])


# ---- independent NumPy derivatives at the edges ----

def _prod_of_others(x, axes):
    """For each element, the product of the rest of its reduced slice (by deleting it)."""
    kept = [i for i in range(x.ndim) if i not in axes]
    moved = np.transpose(x, kept + list(axes))
    flat = moved.reshape(moved.shape[:len(kept)] + (int(np.prod([x.shape[a] for a in axes])),))
    out = np.empty_like(flat)
    for j in range(flat.shape[-1]):
        out[..., j] = np.prod(np.delete(flat, j, axis=-1), axis=-1)
    return np.transpose(out.reshape(moved.shape), np.argsort(kept + list(axes)))


def _small_ints(draw_shape, seed):
    """Integer-valued floats in [-2, 2]: many zeros and ties, exact products."""
    return np.random.default_rng(seed).integers(-2, 3, draw_shape).astype(np.float64)


ranked = st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple)


@given(shape=ranked, data=st.data())
def test_reduce_prod_derivative_with_zeros(shape, data):
    axes = tuple(data.draw(st.permutations(range(len(shape))))[:data.draw(
        st.integers(1, len(shape)))])
    x = _small_ints(shape, data.draw(st.integers(0, 99)))
    t = normal(shape, 1)
    others = _prod_of_others(x, axes)
    _, got = pb.jvp(lambda x: lax.reduce_prod(x, axes), (x,), (t,))
    np.testing.assert_allclose(np.asarray(got), np.sum(t * others, axis=axes), atol=1e-12)
    out_shape = tuple(n for i, n in enumerate(shape) if i not in axes)
    ct = normal(out_shape, 2)
    _, pull = pb.vjp(lambda x: lax.reduce_prod(x, axes), x)
    np.testing.assert_allclose(np.asarray(pull(ct)[0]), np.expand_dims(ct, axes) * others,
                               atol=1e-12)


def _scan_jacobian(x, reverse, entry):
    """J[i, j] = entry(prefix x[:i+1] (scan order), j) for j in the prefix, else 0: 1-d ``x``."""
    n = x.size
    order = np.arange(n)[::-1] if reverse else np.arange(n)
    J = np.zeros((n, n))
    for k, i in enumerate(order):
        prefix = order[:k + 1]
        for j in prefix:
            J[i, j] = entry(x[prefix], x[j], j, prefix)
    return J


def _cumprod_entry(xs, xj, j, prefix):
    return np.prod([xs[m] for m, p in enumerate(prefix) if p != j])


def _chooser_entry(pick):
    def entry(xs, xj, j, prefix):
        best = pick(xs)
        return float(xj == best) / np.count_nonzero(xs == best)
    return entry


def _check_scan_jacobian(f, x, axis, reverse, entry):
    """jvp and vjp of the 2-d ``f`` along ``axis`` against the per-row Jacobians."""
    t, ct = normal(x.shape, 5), normal(x.shape, 6)
    _, jv = pb.jvp(f, (x,), (t,))
    _, pull = pb.vjp(f, x)
    vj = np.asarray(pull(ct)[0])
    xm, tm, ctm = (np.moveaxis(a, axis, -1) for a in (x, t, ct))
    jvm, vjm = np.moveaxis(np.asarray(jv), axis, -1), np.moveaxis(vj, axis, -1)
    for r in range(xm.shape[0]):
        J = _scan_jacobian(xm[r], reverse, entry)
        np.testing.assert_allclose(jvm[r], J @ tm[r], atol=1e-12, err_msg="jvp")
        np.testing.assert_allclose(vjm[r], J.T @ ctm[r], atol=1e-12, err_msg="vjp")


@given(n=st.integers(1, 6), axis=st.sampled_from([0, 1]), reverse=st.booleans(),
       seed=st.integers(0, 99))
def test_cumprod_derivative_with_zeros(n, axis, reverse, seed):
    x = _small_ints((3, n) if axis else (n, 3), seed)
    _check_scan_jacobian(lambda x: lax.cumprod(x, axis, reverse=reverse), x, axis, reverse,
                         _cumprod_entry)


@given(n=st.integers(1, 6), axis=st.sampled_from([0, 1]), reverse=st.booleans(),
       largest=st.booleans(), seed=st.integers(0, 99))
def test_cummax_and_cummin_share_ties_equally(n, axis, reverse, largest, seed):
    x = _small_ints((3, n) if axis else (n, 3), seed)
    op = lax.cummax if largest else lax.cummin
    _check_scan_jacobian(lambda x: op(x, axis, reverse=reverse), x, axis, reverse,
                         _chooser_entry(np.max if largest else np.min))


@given(shape=ranked, largest=st.booleans(), data=st.data())
def test_reduce_max_and_min_share_ties_equally(shape, largest, data):
    axes = tuple(sorted(data.draw(st.permutations(range(len(shape))))[:data.draw(
        st.integers(1, len(shape)))]))
    x = _small_ints(shape, data.draw(st.integers(0, 99)))
    if any(shape[a] == 0 for a in axes):
        return  # empty: no extreme to attain (NaN, as JAX; see the test below)
    prim = lax.reduce_max if largest else lax.reduce_min
    best = (np.max if largest else np.min)(x, axis=axes, keepdims=True)
    share = (x == best) / np.sum(x == best, axis=axes, keepdims=True)
    t = normal(shape, 1)
    _, got = pb.jvp(lambda x: prim(x, axes), (x,), (t,))
    np.testing.assert_allclose(np.asarray(got), np.sum(t * share, axis=axes), atol=1e-12)
    ct = normal(np.squeeze(best, axes).shape, 2)
    _, pull = pb.vjp(lambda x: prim(x, axes), x)
    np.testing.assert_allclose(np.asarray(pull(ct)[0]), np.expand_dims(ct, axes) * share,
                               atol=1e-12)


def test_max_derivative_is_nan_where_the_extreme_is_nan_or_missing():
    x = np.array([[1.0, np.nan, 2.0], [3.0, 1.0, 0.0]])
    t = np.ones_like(x)
    _, got = pb.jvp(lambda x: lax.reduce_max(x, (1,)), (x,), (t,))
    assert np.isnan(np.asarray(got)[0]) and np.asarray(got)[1] == 1.0
    _, got = pb.jvp(lambda x: lax.cummax(x, 1), (x,), (t,))
    np.testing.assert_array_equal(np.isnan(np.asarray(got)), [[0, 1, 1], [0, 0, 0]])
    _, got = pb.jvp(lambda x: lax.reduce_min(x, (1,)), (np.zeros((2, 0)),), (np.zeros((2, 0)),))
    assert np.isnan(np.asarray(got)).all() and np.asarray(got).shape == (2,)


def _softmax_jacobian_row_ok(x, reverse):
    """J[i, j] = exp(x[j] - logsumexp(prefix i)): the softmax of each prefix."""
    def entry(xs, xj, j, prefix):
        m = np.max(xs)
        return np.exp(xj - m) / np.sum(np.exp(xs - m))
    return _scan_jacobian(x, reverse, entry)


@pytest.mark.parametrize("reverse", [False, True])
def test_cumlogsumexp_derivative_is_stable_for_huge_inputs(reverse):
    x = np.array([[-1000.0, 0.0, 1000.0, 999.0, -1000.0],
                  [700.0, 710.0, -750.0, 705.0, 690.0]])
    t, ct = normal(x.shape, 1), normal(x.shape, 2)
    f = lambda x: lax.cumlogsumexp(x, 1, reverse=reverse)  # noqa: E731
    _, jv = pb.jvp(f, (x,), (t,))
    _, pull = pb.vjp(f, x)
    for r in range(2):
        J = _softmax_jacobian_row_ok(x[r], reverse)
        np.testing.assert_allclose(np.asarray(jv)[r], J @ t[r], rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(np.asarray(pull(ct)[0])[r], J.T @ ct[r], rtol=1e-12,
                                   atol=1e-300)


def test_cumlogsumexp_derivative_with_infinite_inputs_has_no_nan():
    x = np.array([-np.inf, -np.inf, 0.0, -np.inf, 1.0])
    J = np.asarray(pb.jacfwd(lambda x: lax.cumlogsumexp(x, 0))(x))
    Jr = np.asarray(pb.jacrev(lambda x: lax.cumlogsumexp(x, 0))(x))
    np.testing.assert_array_equal(J, Jr)
    assert np.isfinite(J).all()
    # from the first finite element on: the softmax of the prefix (-inf entries weigh 0)
    e = np.exp(1.0)
    np.testing.assert_allclose(J[2:], [[0, 0, 1, 0, 0], [0, 0, 1, 0, 0],
                                       [0, 0, 1 / (1 + e), 0, e / (1 + e)]], rtol=1e-14)
    # an all -inf prefix: each element counts fully, as for logaddexp(-inf, -inf)
    np.testing.assert_array_equal(J[:2, :2], [[1, 0], [1, 1]])


def test_empty_products_and_scans_have_zero_derivatives():
    x = np.zeros((2, 0))
    _, got = pb.jvp(lambda x: lax.reduce_prod(x, (1,)), (x,), (x,))
    np.testing.assert_array_equal(np.asarray(got), [0.0, 0.0])
    for op in (lax.cumprod, lax.cummax, lax.cumlogsumexp, lax.cumsum):
        _, got = pb.jvp(lambda x: op(x, 1), (x,), (x,))
        assert np.asarray(got).shape == (2, 0)


def test_integer_valued_results_get_float0_tangents():
    x = normal((3, 4))
    for f in (lambda x: lax.argmax(x, 1), lambda x: lax.argmin(x, 0),
              lambda x: lax.reduce_or(x > 0, (0,))):
        out, t = pb.jvp(f, (x,), (np.ones_like(x),))
        assert np.asarray(t).dtype == dtypes.float0 and np.shape(t) == np.shape(out)
    with pytest.raises(NotImplementedError, match="'argmax' has no jvp rule: integer-valued"):
        R.argmax_p.rule("jvp")


def test_every_rule_slot_is_filled_or_explained():
    for name in FAMILY:
        prim = getattr(R, f"{name}_p")
        for slot in ("jvp", "transpose", "batch"):
            rule = getattr(prim, slot)
            assert not (isinstance(rule, NoRule) and rule.kind == "pending"), (name, slot)
        assert callable(prim.batch)
    for name in ("reduce_sum", "cumsum"):
        assert callable(getattr(R, f"{name}_p").transpose)


# ---- batching ----

def ints(shape, dtype=np.int32, seed=0):
    return np.random.default_rng(seed).integers(-5, 6, shape).astype(dtype)


def bools(shape, seed=0):
    return np.random.default_rng(seed).random(shape) < 0.5


VMAP_CASES = [
    ("reduce_sum", lambda x: lax.reduce_sum(x, (0, 2)), normal((2, 3, 2))),
    ("reduce_sum-int", lambda x: lax.reduce_sum(x, (1,)), ints((2, 3))),
    ("reduce_sum-0d", lambda x: lax.reduce_sum(x, ()), normal(())),
    ("reduce_prod", lambda x: lax.reduce_prod(x, (1,)), near_one((2, 3, 2))),
    ("reduce_prod-all", lambda x: lax.reduce_prod(x, (0, 1)), near_one((3, 2))),
    ("reduce_max", lambda x: lax.reduce_max(x, (2,)), normal((2, 3, 2))),
    ("reduce_max-uint8", lambda x: lax.reduce_max(x, (0,)), ints((3, 2), np.uint8)),
    ("reduce_min", lambda x: lax.reduce_min(x, (0,)), normal((3, 2))),
    ("reduce_min-0d", lambda x: lax.reduce_min(x, ()), normal(())),
    ("reduce_and", lambda x: lax.reduce_and(x, (1,)), bools((3, 4))),
    ("reduce_or", lambda x: lax.reduce_or(x, (0,)), bools((3, 4))),
    ("reduce_xor-int", lambda x: lax.reduce_xor(x, (0, 1)), ints((3, 4))),
    ("argmax", lambda x: lax.argmax(x, 1), normal((2, 3, 2))),
    ("argmax-int64", lambda x: lax.argmax(x, 0, np.int64), ints((3, 2))),
    ("argmin", lambda x: lax.argmin(x, 2), normal((2, 3, 2))),
    ("cumsum", lambda x: lax.cumsum(x, 0), normal((3, 2))),
    ("cumsum-reverse-int", lambda x: lax.cumsum(x, 1, reverse=True), ints((3, 2))),
    ("cumprod", lambda x: lax.cumprod(x, 2), near_one((2, 2, 3))),
    ("cummax", lambda x: lax.cummax(x, 1, reverse=True), normal((2, 3, 2))),
    ("cummin-int", lambda x: lax.cummin(x, 0), ints((3, 2))),
    ("cumlogsumexp", lambda x: lax.cumlogsumexp(x, 1), normal((3, 4))),
]


@pytest.mark.parametrize("name,f,x", VMAP_CASES, ids=[c[0] for c in VMAP_CASES])
def test_vmap_matches_a_loop(name, f, x):
    check_vmap(f, (x,))


@pytest.mark.parametrize("name,f,x", GRAD_CASES[::2], ids=GRAD_IDS[::2])
def test_vmap_of_grad_matches_a_loop(name, f, x):
    check_vmap(pb.grad(_loss(f, x)), (x,), atol=1e-10, rtol=1e-10)


@given(shape=st.lists(st.integers(0, 3), min_size=1, max_size=3).map(tuple), data=st.data())
def test_vmap_moves_the_axes_around_any_batch_dim(shape, data):
    axes = tuple(data.draw(st.permutations(range(len(shape))))[:data.draw(
        st.integers(0, len(shape)))])
    bdim = data.draw(st.integers(0, len(shape)))
    size = data.draw(st.integers(1, 3))
    x = normal(shape[:bdim] + (size,) + shape[bdim:], 9)
    got = pb.vmap(lambda v: lax.reduce_sum(v, axes), in_axes=bdim)(x)
    want = np.stack([np.sum(np.take(x, i, bdim), axis=axes) for i in range(size)])
    np.testing.assert_allclose(np.asarray(got), want, atol=1e-12)
    axis = data.draw(st.integers(0, len(shape) - 1))
    got = pb.vmap(lambda v: lax.cummax(v, axis), in_axes=bdim, out_axes=bdim)(x)
    want = np.stack([np.maximum.accumulate(np.take(x, i, bdim), axis) for i in range(size)],
                    bdim)
    np.testing.assert_array_equal(np.asarray(got), want)
