"""Rules of sort, argsort and top_k (jvp, batching): derivatives against finite differences
(both modes, second order, under jit) and against NumPy permutations of the tangents (ties, NaN
keys, several operands, integer keys); vmap against a Python loop, operands batched or not."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import pullback as pb
from pullback import lax
from pullback.primitives import sort as S
from pullback.test_util import check_grads, check_vmap
from pullback.tracer import dtypes
from pullback.tracer.core import NoRule

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")




def normal(shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def ints(shape, seed=0, lo=-2, hi=3, dtype=np.int32):
    return np.random.default_rng(seed).integers(lo, hi, shape).astype(dtype)


X, Y = normal((3, 4)), normal((3, 4), 1)

GRAD_CASES = [
    ("sort", lambda x: lax.sort(x, 1), (X,)),
    ("sort-dim0", lambda x: lax.sort(x, 0), (X,)),
    ("sort-descending", lambda x: lax.sort(x, 0, descending=True), (X,)),
    ("sort-1d", lambda x: lax.sort(x), (normal((5,), 2),)),
    ("sort-two-operands", lambda x, y: lax.sort((x, y), 1, num_keys=1), (X, Y)),
    ("sort-two-keys", lambda x, y: lax.sort((x, y), 0, num_keys=2), (X, Y)),
    ("sort_key_val", lambda x, y: lax.sort_key_val(x, y, 0), (X, Y)),
    ("top_k", lambda x: lax.top_k(x, 2)[0], (X,)),
    ("top_k-axis0", lambda x: lax.top_k(x, 3, axis=0)[0], (X,)),
    ("top_k-all", lambda x: lax.top_k(x, 4)[0], (X,)),
]
GRAD_IDS = [c[0] for c in GRAD_CASES]


@pytest.mark.parametrize("name,f,args", GRAD_CASES, ids=GRAD_IDS)
def test_second_order_derivatives_match_finite_differences(name, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name,f,args", GRAD_CASES, ids=GRAD_IDS)
def test_float32_derivatives(name, f, args):
    check_grads(f, tuple(a.astype(np.float32) for a in args), order=1, atol=5e-2, rtol=5e-2)


def test_complex_operands_carry_their_tangents():
    z = X + 1j * Y
    check_grads(lambda z: lax.sort(z, 1), (z,), order=1)
    check_grads(lambda x, z: lax.sort((x, z), 0)[1], (X, z), order=1)


def _loss(f, args):
    outs = f(*args)
    leaves = outs if isinstance(outs, tuple) else (outs,)
    ws = [normal(np.shape(o), 7 + i) for i, o in enumerate(leaves)]

    def loss(*a):
        res = f(*a)
        res = res if isinstance(res, tuple) else (res,)
        return sum(lax.reduce_sum(r * w, tuple(range(w.ndim))) for r, w in zip(res, ws))
    return loss


@pytest.mark.parametrize("name,f,args", GRAD_CASES, ids=GRAD_IDS)
def test_jit_of_grad_equals_grad(name, f, args):
    loss = _loss(f, args)
    argnums = tuple(range(len(args)))
    want = pb.grad(loss, argnums)(*args)
    for got in (pb.jit(pb.grad(loss, argnums))(*args), pb.grad(pb.jit(loss), argnums)(*args)):
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-12)


def test_reference_backend_derivatives_agree_with_cpu():
    loss = _loss(GRAD_CASES[4][1], (X, Y))
    want = pb.grad(loss, (0, 1))(X, Y)
    pb.config.update("backend", "reference")
    try:
        got = pb.grad(loss, (0, 1))(X, Y)
    finally:
        pb.config.update("backend", "cpu")
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-12)


# ---- tangents are permuted like the values ----

def _stable_perm(keys, axis, descending):
    """NumPy's stable lexicographic order along ``axis`` (first key primary): np.lexsort."""
    moved = [np.moveaxis(k, axis, -1) for k in keys]
    if descending:  # ties keep input order: reverse, sort ascending, map back, reverse
        rev = [k[..., ::-1] for k in moved]
        perm = np.lexsort(rev[::-1], axis=-1)
        perm = (moved[0].shape[-1] - 1 - perm)[..., ::-1]
    else:
        perm = np.lexsort(moved[::-1], axis=-1)
    return np.moveaxis(perm, -1, axis)


@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
       n_ops=st.integers(1, 3), data=st.data())
def test_sort_tangents_follow_the_sort_permutation(shape, n_ops, data):
    num_keys = data.draw(st.integers(1, n_ops))
    dim = data.draw(st.integers(0, len(shape) - 1))
    descending = data.draw(st.booleans())
    seed = data.draw(st.integers(0, 99))
    ops = [ints(shape, seed + i).astype(np.float64) for i in range(n_ops)]  # ties abound
    ts = [normal(shape, seed + 10 + i) for i in range(n_ops)]
    cts = [normal(shape, seed + 20 + i) for i in range(n_ops)]
    f = lambda *xs: lax.sort(xs, dim, num_keys=num_keys, descending=descending)  # noqa: E731
    perm = _stable_perm(ops[:num_keys], dim, descending)
    outs, touts = pb.jvp(f, tuple(ops), tuple(ts))
    _, pull = pb.vjp(f, *ops)
    ct_in = pull(tuple(cts))
    for x, o, t, to, ct, ci in zip(ops, outs, ts, touts, cts, ct_in):
        np.testing.assert_array_equal(np.asarray(o), np.take_along_axis(x, perm, dim))
        np.testing.assert_array_equal(np.asarray(to), np.take_along_axis(t, perm, dim))
        unsorted = np.empty_like(ct)
        np.put_along_axis(unsorted, perm, ct, dim)
        np.testing.assert_array_equal(np.asarray(ci), unsorted)


def test_nan_keys_carry_their_tangents_to_the_end():
    x = np.array([[2.0, np.nan, -1.0, 0.0, -0.0, np.nan]])
    t = np.arange(6.0)[None]
    _, got = pb.jvp(lambda x: lax.sort(x, 1), (x,), (t,))
    np.testing.assert_array_equal(np.asarray(got), [[2, 3, 4, 0, 1, 5]])


def test_integer_keys_get_float0_cotangents_and_values_get_theirs():
    k, v = ints((2, 5), 3), normal((2, 5), 4)
    ct = normal((2, 5), 5)
    _, pull = pb.vjp(lambda k, v: lax.sort_key_val(k, v, 1)[1], k, v)
    gk, gv = pull(ct)
    assert np.asarray(gk).dtype == dtypes.float0
    perm = np.argsort(k, axis=1, kind="stable")
    want = np.empty_like(ct)
    np.put_along_axis(want, perm, ct, 1)
    np.testing.assert_array_equal(np.asarray(gv), want)


def test_empty_sorts_and_top_k_have_empty_tangents():
    x = np.zeros((3, 0))
    _, got = pb.jvp(lambda x: lax.sort(x, 1), (x,), (x,))
    assert np.asarray(got).shape == (3, 0)
    y = normal((3, 4))
    (_, _), (tv, ti) = pb.jvp(lambda y: lax.top_k(y, 0), (y,), (y,))
    assert np.asarray(tv).shape == (3, 0) and np.asarray(ti).dtype == dtypes.float0


@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), data=st.data())
def test_top_k_tangents_are_taken_at_the_indices(shape, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    k = data.draw(st.integers(0, shape[axis]))
    seed = data.draw(st.integers(0, 99))
    x = ints(shape, seed).astype(np.float64)  # ties: equal values by lower index
    t = normal(shape, seed + 1)
    idx = np.take(_stable_perm([-x], axis, False), np.arange(k), axis)
    (vals, inds), (tv, ti) = pb.jvp(lambda x: lax.top_k(x, k, axis=axis), (x,), (t,))
    np.testing.assert_array_equal(np.asarray(inds), idx)
    np.testing.assert_array_equal(np.asarray(tv), np.take_along_axis(t, idx, axis))
    assert np.asarray(ti).dtype == dtypes.float0
    ct = normal(idx.shape, seed + 2)
    _, pull = pb.vjp(lambda x: lax.top_k(x, k, axis=axis)[0], x)
    want = np.zeros_like(x)
    np.put_along_axis(want, idx, ct, axis)
    np.testing.assert_array_equal(np.asarray(pull(ct)[0]), want)


def test_argsort_gets_float0_tangents():
    out, t = pb.jvp(lambda x: lax.argsort(x, 0), (X,), (Y,))
    assert np.asarray(t).dtype == dtypes.float0 and np.shape(t) == np.shape(out)


def test_every_rule_slot_is_filled_or_explained():
    for prim in (S.sort_p, S.argsort_p, S.top_k_p):
        for slot in ("jvp", "transpose", "batch"):
            rule = getattr(prim, slot)
            assert not (isinstance(rule, NoRule) and rule.kind == "pending"), (prim, slot)
        assert callable(prim.batch)
    assert callable(S.sort_p.jvp) and callable(S.top_k_p.jvp)


# ---- batching ----

VMAP_CASES = [
    ("sort", lambda x: lax.sort(x, 1), (normal((3, 4)),)),
    ("sort-dim0-descending", lambda x: lax.sort(x, 0, descending=True), (normal((3, 4)),)),
    ("sort-1d", lambda x: lax.sort(x), (normal((5,)),)),
    ("sort-int-keys", lambda k, v: lax.sort((k, v), 1), (ints((2, 5)), normal((2, 5)))),
    ("sort-two-keys-uint8", lambda k, j, v: lax.sort((k, j, v), 0, num_keys=2),
     (ints((4, 2), 1, 0, 3, np.uint8), ints((4, 2), 2), normal((4, 2)))),
    ("sort-bool", lambda x: lax.sort(x, 0), (ints((5, 2), 1, 0, 2).astype(bool),)),
    ("argsort", lambda x: lax.argsort(x, 0), (normal((3, 4)),)),
    ("argsort-int-descending", lambda x: lax.argsort(x, 1, descending=True), (ints((3, 4)),)),
    ("top_k", lambda x: lax.top_k(x, 2), (normal((3, 4)),)),
    ("top_k-axis0-int", lambda x: lax.top_k(x, 2, axis=0), (ints((3, 4)),)),
    ("top_k-1d", lambda x: lax.top_k(x, 3), (normal((5,)),)),
]


@pytest.mark.parametrize("name,f,args", VMAP_CASES, ids=[c[0] for c in VMAP_CASES])
def test_vmap_matches_a_loop(name, f, args):
    check_vmap(f, args)


@pytest.mark.parametrize("name,f,args", GRAD_CASES[::2], ids=GRAD_IDS[::2])
def test_vmap_of_grad_matches_a_loop(name, f, args):
    check_vmap(pb.grad(_loss(f, args), tuple(range(len(args)))), args, atol=1e-10, rtol=1e-10)
